/* Reflector (xdp11 of the P4C-XDP tests): parses Ethernet and IPv4, swaps the MAC addresses and sends the frame back
   out of its port (XDP_TX); frames that are not IPv4, or too short for the IPv4 header, are dropped. */
#include <core.p4>
#include <xdp_model.p4>

typedef bit<48> MacAddress;

header Ethernet {
    MacAddress dstAddr;
    MacAddress srcAddr;
    bit<16>    etherType;
}

header IPv4 {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct Headers {
    Ethernet ethernet;
    IPv4     ipv4;
}

parser Parser(packet_in packet, out Headers hd) {
    state start {
        packet.extract(hd.ethernet);
        transition select(hd.ethernet.etherType) {
            0x0800 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hd.ipv4);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    MacAddress tmp = 0;

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_DROP;
        if (hd.ipv4.isValid()) {
            tmp = hd.ethernet.dstAddr;
            hd.ethernet.dstAddr = hd.ethernet.srcAddr;
            hd.ethernet.srcAddr = tmp;
            xout.output_port = xin.input_port;
            xout.output_action = xdp_action.XDP_TX;
        }
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.ipv4);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
