/* Calculator: a request header after Ethernet carries operands; the switch appends a result header with P4's
   arithmetic (wrapping, saturating, signed, shifts, slices, concatenation, casts) and sends the frame back. */
#include <core.p4>
#include <xdp_model.p4>

const bit<16> ETH_CALC = 0x88b5;

enum bit<8> Op {
    ADD = 1,
    SUB = 2
}

header Ethernet {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header Calc {
    Op      op;
    bit<8>  a;
    bit<8>  b;
    bit<8>  s;
    bit<16> c;
    bit<32> d;
}

header Result {
    bit<8>  sum;
    bit<8>  sat_sum;
    bit<8>  sat_diff;
    bit<8>  signed_shift;
    bit<16> joined;
    bit<16> shifted;
    bit<16> middle;
    bit<16> placed;
    bit<8>  larger;
    bit<16> product;
    bit<16> inverted;
    bit<8>  negated;
    bit<8>  equal;
    bit<4>  mixed;
    bit<4>  low_sum;
}

struct Headers {
    Ethernet eth;
    Calc     calc;
    Result   res;
}

parser Parser(packet_in packet, out Headers hd) {
    state start {
        packet.extract(hd.eth);
        transition select(hd.eth.etherType) {
            ETH_CALC : calc;
            default : reject;
        }
    }

    state calc {
        packet.extract(hd.calc);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_DROP;
        if (hd.calc.op != Op.ADD && hd.calc.op != Op.SUB) {
            return;
        }
        bit<8> a = hd.calc.a;
        bit<8> b = hd.calc.b;
        int<8> sa = (int<8>)a;
        int<16> wide_a = (int<16>)sa;
        int<16> wide_b = (int<16>)((int<8>)b);
        hd.res = {
            a + b, a |+| b, a |-| b, (bit<8>)(sa >> 2),
            a ++ b, hd.calc.c << hd.calc.s, hd.calc.d[23:8], 0,
            a > b ? a : b, (bit<16>)(wide_a * wide_b), ~hd.calc.c, -a,
            a == b ? 8w1 : 8w0, a[7:4] ^ b[3:0], (bit<4>)(a + b)
        };
        if (hd.calc.op == Op.SUB) {
            hd.res.sum = a - b;
        }
        hd.res.placed[11:4] = a;
        bit<48> tmp = hd.eth.dstAddr;
        hd.eth.dstAddr = hd.eth.srcAddr;
        hd.eth.srcAddr = tmp;
        xout.output_action = xdp_action.XDP_TX;
    }
}

control Deparser(in Headers hd, packet_out packet) {
    apply {
        packet.emit(hd.eth);
        packet.emit(hd.calc);
        packet.emit(hd.res);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
