/* STF test ports: port 0 is valid, the program sees interface index port + 1, and a passed packet (XDP_PASS)
 * leaves on its input port like a transmitted one (XDP_TX). */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); transition accept; }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    apply {
        h.eth.src = (bit<48>) xin.input_port;
        xout.output_port = 0;
        if (h.eth.type_ == 0x0800) {
            xout.output_action = xdp_action.XDP_PASS;
        } else if (h.eth.type_ == 0x86dd) {
            xout.output_action = xdp_action.XDP_TX;
        } else {
            xout.output_action = xdp_action.XDP_DROP;
        }
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); }
}

xdp(prs(), sw(), dep()) main;
