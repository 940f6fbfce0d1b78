/* packet_in.length(): the parser rejects frames shorter than 20 bytes and writes the length into the EtherType. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

parser prs(packet_in p, out hdrs_t h) {
    state start {
        verify(p.length() >= 20, error.PacketTooShort);
        p.extract(h.eth);
        h.eth.type_ = (bit<16>) p.length();
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
    apply { p.emit(h.eth); }
}

xdp(prs(), sw(), dep()) main;
