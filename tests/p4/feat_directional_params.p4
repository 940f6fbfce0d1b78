/* Directional action parameters: an action with `in`, `inout` and `out` parameters before its action data, called
 * from the control's apply block and from another action with arguments; the `out` and `inout` arguments are
 * written back after the call, `in` is read-only inside. A table runs an action that calls it, and another table
 * binds the directional arguments in its `actions` list, the control plane giving the action data. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
header val_h { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct hdrs_t { eth_h eth; val_h val; }

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    bit<8> spare = 0;
    /* sum = x + acc (acc then doubled), plus the action data k */
    action combine(in bit<8> x, inout bit<8> acc, out bit<8> sum, bit<8> k) {
        sum = x + acc + k;
        acc = acc + acc;
    }
    action from_table(bit<8> k) {
        combine(h.val.a, spare, h.val.d, k);
        h.val.c = spare;
    }
    table t {
        key = { h.eth.type_ : exact; }
        actions = { from_table; NoAction; }
        default_action = NoAction();
    }
    table bound {
        key = { h.eth.type_ : exact; }
        actions = { combine(h.val.b, h.val.c, h.val.d); NoAction; }
        default_action = NoAction();
    }
    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_TX;
        if (h.val.isValid()) {
            combine(h.val.a, h.val.b, h.val.c, 1);
            spare = h.val.b;
            t.apply();
            bound.apply();
        }
    }
}

parser prs(packet_in p, out hdrs_t h) {
    state start {
        p.extract(h.eth);
        transition select(h.eth.type_) {
            0x88b5: val;
            0x88b6: val;
            0x88b7: val;
            default: accept;
        }
    }
    state val { p.extract(h.val); transition accept; }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); p.emit(h.val); }
}

xdp(prs(), sw(), dep()) main;
