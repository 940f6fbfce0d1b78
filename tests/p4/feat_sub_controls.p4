/* Control instances: a sub-control with its own table, action and counter, applied with in, inout and out
 * arguments (copy-in, copy-out). Its table's map is named after the instance: acl_rules. */
#include <core.p4>
#include <ebpf_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); transition accept; }
}

control filter_by_type(in bit<16> type_, inout bit<8> seen, out bool allowed) {
    CounterArray(4, false) hits;
    action allow() { allowed = true; hits.increment(0); }
    action deny() { allowed = false; hits.increment(1); }
    table rules {
        key = { type_ : exact; }
        actions = { allow; deny; }
        default_action = deny;
    }
    apply {
        seen = seen + 1;
        rules.apply();
    }
}

control pipe(inout hdrs_t h, out bool pass) {
    filter_by_type() acl;
    bit<8> count = 0;
    apply {
        acl.apply(h.eth.type_, count, pass);
        if (count != 1) {
            pass = false;
        }
    }
}

ebpfFilter(prs(), pipe()) main;
