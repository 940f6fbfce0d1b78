/* value_set in a parser select: a set of (EtherType, tag) pairs the control plane fills (the STF's `add` lines),
 * checked after a constant case and before the default; a second, one-field set of the tag alone, named by its
 * @name annotation. A packet whose keys are in a set goes to that case's state. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
header tag_h { bit<8> tag; bit<8> mark; }
struct hdrs_t { eth_h eth; tag_h tag; }

parser prs(packet_in p, out hdrs_t h) {
    value_set<tuple<bit<16>, bit<8>>>(8) pairs;
    @name("prs.solo") value_set<bit<8>>(4) tags_only;
    state start {
        p.extract(h.eth);
        p.extract(h.tag);
        transition select(h.eth.type_, h.tag.tag) {
            (0x88b5, 0x01): marked_const;
            pairs: marked_set;
            default: by_tag;
        }
    }
    state by_tag {
        transition select(h.tag.tag) {
            tags_only: marked_solo;
            default: accept;
        }
    }
    state marked_const { h.tag.mark = 0xc0; transition accept; }
    state marked_set { h.tag.mark = 0x5e; transition accept; }
    state marked_solo { h.tag.mark = 0x50; transition accept; }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    apply {
        xout.output_port = 0;
        xout.output_action = h.tag.mark == 0 ? xdp_action.XDP_DROP : xdp_action.XDP_TX;
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); p.emit(h.tag); }
}

xdp(prs(), sw(), dep()) main;
