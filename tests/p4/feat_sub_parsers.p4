/* Parser instances: a sub-parser with states of its own and a select, applied twice from different states with
 * out and inout arguments (copy-in, copy-out); its reject rejects the packet. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
header tag_h { bit<16> id; bit<16> next; }
struct hdrs_t { eth_h eth; tag_h outer; tag_h inner; }

parser tag_parser(packet_in p, out tag_h t, inout bit<8> depth) {
    state start {
        p.extract(t);
        depth = depth + 1;
        transition select(t.id) {
            0xffff: reject;
            default: check;
        }
    }
    state check {
        verify(t.next != 0, error.NoMatch);
        transition accept;
    }
}

parser prs(packet_in p, out hdrs_t h) {
    tag_parser() tags;
    bit<8> depth = 0;
    state start {
        p.extract(h.eth);
        transition select(h.eth.type_) {
            0x88b5: one_tag;
            default: accept;
        }
    }
    state one_tag {
        tags.apply(p, h.outer, depth);
        transition select(h.outer.next) {
            0x88b5: two_tags;
            default: accept;
        }
    }
    state two_tags {
        tags.apply(p, h.inner, depth);
        h.eth.src = (bit<48>) depth;
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
    apply { p.emit(h.eth); p.emit(h.outer); p.emit(h.inner); }
}

xdp(prs(), sw(), dep()) main;
