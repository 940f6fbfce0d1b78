/* Externs implemented in C (feat_c_extern.c, given with --extern-c): one takes a header and a number and returns a
 * number, one takes the headers struct and keeps state in a map of its own, one is called as a statement. The C
 * sees fields as numbers in host order and each header's ebpf_valid, as p4c-ebpf's generated code gives them. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
header val_h { bit<8> a; bit<16> b; bit<32> c; }
struct hdrs_t { eth_h eth; val_h val; }

extern bit<16> mix(in val_h v, in bit<8> salt);
extern bool seen_before(in hdrs_t h);
extern void note(in bit<32> c);

parser prs(packet_in p, out hdrs_t h) {
    state start {
        p.extract(h.eth);
        transition select(h.eth.type_) {
            0x88b5: val;
            default: accept;
        }
    }
    state val { p.extract(h.val); transition accept; }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_TX;
        if (h.val.isValid()) {
            h.val.b = mix(h.val, 3);
            note(h.val.c);
        }
        if (seen_before(h)) {
            xout.output_action = xdp_action.XDP_DROP;
        }
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); p.emit(h.val); }
}

xdp(prs(), sw(), dep()) main;
