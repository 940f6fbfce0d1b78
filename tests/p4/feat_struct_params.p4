/* Struct-typed action parameters: action data holding a struct of structs (flattened to its leaf fields in the map
 * value, in order), a table default with a struct value, and a direct call with a struct argument. */
#include <xdp_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

struct port_md_t { bit<32> port; }
struct rewrite_md_t { bit<16> type_; bit<8> tx; }
struct plan_t { port_md_t egress; rewrite_md_t rw; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); transition accept; }
}

control sw(inout hdrs_t h, in xdp_input xin, out xdp_output xout) {
    plan_t plan;
    bit<8> flags = 0;

    action apply_rewrite(rewrite_md_t rw) {
        h.eth.type_ = rw.type_;
        xout.output_action = rw.tx == 1 ? xdp_action.XDP_TX : xdp_action.XDP_DROP;
    }
    action set_plan(bit<8> f, plan_t p) {
        flags = f;
        plan = p;
    }
    table plans {
        key = { h.eth.dst : exact; }
        actions = { set_plan; }
        default_action = set_plan(0, { { 7 }, { 0xdead, 0 } });
    }
    apply {
        xout.output_action = xdp_action.XDP_DROP;
        plans.apply();
        xout.output_port = plan.egress.port;
        if (flags == 1) {
            apply_rewrite(plan.rw);
        } else if (flags == 2) {
            apply_rewrite({ plan.rw.type_ + 1, 1 });
        }
    }
}

control dep(in hdrs_t h, packet_out p) {
    apply { p.emit(h.eth); }
}

xdp(prs(), sw(), dep()) main;
