/* Fields of packet.lookahead<H>() in a select: a 4-bit field at bit 4 and a byte at bit 8 of a header the parser
 * has not extracted yet; a matching frame has its tag extracted and its mark rewritten, others pass untouched. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
header tag_h { bit<4> ver; bit<4> kind; bit<8> code; bit<16> mark; }
struct hdrs_t { eth_h eth; tag_h tag; }

parser prs(packet_in p, out hdrs_t h) {
    state start {
        p.extract(h.eth);
        transition select(p.lookahead<tag_h>().kind, p.lookahead<tag_h>().code) {
            (4w0x5, 8w0x2b): parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        p.extract(h.tag);
        transition accept;
    }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    apply {
        if (h.tag.isValid()) {
            h.tag.mark = 16w0xbeef;
        }
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_TX;
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); p.emit(h.tag); }
}

xdp(prs(), sw(), dep()) main;
