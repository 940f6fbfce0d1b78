/* The empty program (SimpleDrop of the P4C-XDP paper): parses nothing, emits nothing and drops every packet. */
#include <core.p4>
#include <xdp_model.p4>

struct Headers {
}

parser Parser(packet_in packet, out Headers hd) {
    state start {
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_DROP;
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
