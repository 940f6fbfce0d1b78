/* The XDP architecture as P4C-XDP declares it: "xdp_model.p4" included by quotes, `table t()`, a 32-bit
 * BPF_KTIME_GET_NS(), csum_replace2 with its parameter names, an empty deparser statement. */
#include "xdp_model.p4"

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
header sum_h { bit<16> csum; bit<16> field; }
struct hdrs_t { eth_h eth; sum_h sum; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); p.extract(h.sum); transition accept; }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    xdp_action verdict = xdp_action.XDP_PASS;
    action bounce() { verdict = xdp_action.XDP_TX; }
    action drop() { verdict = xdp_action.XDP_DROP; }
    table by_type() {
        key = { h.eth.type_ : exact; }
        actions = { bounce; drop; }
        default_action = drop;
        implementation = hash_table(64);
    }
    apply {
        bit<32> now = BPF_KTIME_GET_NS();
        by_type.apply();
        if (verdict == xdp_action.XDP_TX) {
            h.sum.csum = csum_replace2(csum = h.sum.csum, old = h.sum.field, new = 16w0x0102);
            h.sum.field = 0x0102;
        }
        xout.output_port = now & 0;
        xout.output_action = verdict;
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply {
        ;
        p.emit(h.eth);
        p.emit(h.sum);
    }
}

xdp(prs(), sw(), dep()) main;
