/* Nested parser instances: the top parser applies an instance of `tags_p`, whose parser applies an instance of
 * `tag_p` of its own twice (out and inout arguments at each level); the innermost reject rejects the packet, each
 * accept continues the state that applied it. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
header tag_h { bit<16> id; bit<16> type_; }
struct hdrs_t { eth_h eth; tag_h t0; tag_h t1; }

parser tag_p(packet_in p, out tag_h t, inout bit<8> count) {
    state start {
        p.extract(t);
        count = count + 1;
        transition select(t.id) {
            0: reject;
            default: accept;
        }
    }
}

parser tags_p(packet_in p, out tag_h first, out tag_h second, inout bit<8> count) {
    tag_p() one;
    state start {
        one.apply(p, first, count);
        count = count + 0x10;
        transition select(first.type_) {
            0x88b5: again;
            default: accept;
        }
    }
    state again {
        one.apply(p, second, count);
        transition accept;
    }
}

parser prs(packet_in p, out hdrs_t h) {
    tags_p() tags;
    bit<8> count = 0;
    state start {
        p.extract(h.eth);
        transition select(h.eth.type_) {
            0x88b5: tagged;
            default: accept;
        }
    }
    state tagged {
        tags.apply(p, h.t0, h.t1, count);
        h.eth.src = (bit<48>) count;
        transition accept;
    }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_TX;
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); p.emit(h.t0); p.emit(h.t1); }
}

xdp(prs(), sw(), dep()) main;
