/* Ingress stamping (xdp15 of the P4C-XDP tests): puts an 8-byte tag carrying a magic number, a version and the input
   port in front of the Ethernet header of IPv4 and IPv6 frames and sends them back (XDP_TX): the packet grows by 8. */
#include <core.p4>
#include <xdp_model.p4>

const bit<32> STAMP_MAGIC = 0x68777870;
const bit<8>  STAMP_VERSION = 1;

header Stamp {
    bit<32> magic;
    bit<8>  version;
    bit<8>  reserved;
    bit<16> ingressPort;
}

header Ethernet {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct Headers {
    Stamp    stamp;
    Ethernet ethernet;
}

parser Parser(packet_in packet, out Headers hd) {
    state start {
        packet.extract(hd.ethernet);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (hd.ethernet.etherType == 0x0800 || hd.ethernet.etherType == 0x86dd) {
            hd.stamp.setValid();
            hd.stamp = { STAMP_MAGIC, STAMP_VERSION, 8w0, xin.input_port[15:0] };
            xout.output_port = xin.input_port;
            xout.output_action = xdp_action.XDP_TX;
        }
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.stamp);
        packet.emit(hdrs.ethernet);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
