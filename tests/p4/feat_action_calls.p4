/* Actions calling actions: a table's action runs another action with constant and forwarded arguments. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); transition accept; }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    action verdict(bool tx) { xout.output_action = tx ? xdp_action.XDP_TX : xdp_action.XDP_DROP; }
    action tag(bit<16> t) { h.eth.type_ = t; }
    action bounce(bit<16> t) {
        tag(t + 1);
        verdict(true);
    }
    action drop() { verdict(false); }
    table fwd {
        key = { h.eth.dst : exact; }
        actions = { bounce; drop; }
        default_action = drop;
    }
    apply {
        xout.output_port = 0;
        fwd.apply();
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); }
}

xdp(prs(), sw(), dep()) main;
