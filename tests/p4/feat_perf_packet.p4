/* P4C-XDP's BPF_PERF_EVENT_OUTPUT(): frames of EtherType 0x88b5 are sent to user space (a perf sample: their
 * length, then the frame) and dropped; other frames go back out unchanged. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); transition accept; }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    action report() {
        BPF_PERF_EVENT_OUTPUT();
        xout.output_action = xdp_action.XDP_DROP;
    }
    action forward() {
        xout.output_action = xdp_action.XDP_TX;
    }
    table by_type {
        key = { h.eth.type_ : exact; }
        actions = { report; forward; }
        const entries = { 16w0x88b5 : report(); }
        default_action = forward;
    }
    apply {
        xout.output_port = 0;
        by_type.apply();
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); }
}

xdp(prs(), sw(), dep()) main;
