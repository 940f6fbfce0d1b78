/* STF compatibility: tables, actions and keys named as p4c-ebpf's generated tests name them (CONTROL_TABLE,
 * CONTROL_ACTION, key.fieldN, _NoAction), @name annotations (also after a match kind), a key expression. */
#include <core.p4>
#include <ebpf_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); transition accept; }
}

control pipe(inout hdrs_t h, out bool pass) {
    action Allow(bit<8> why, bit<8> unused) { pass = why == 0; }
    @name("Deny") action refuse() { pass = false; }
    table t {
        key = {
            h.eth.type_ : exact;
            h.eth.src + 1 : exact @name("src_plus");
        }
        actions = { Allow; refuse; NoAction; }
        default_action = refuse;
        implementation = hash_table(16);
    }
    @name("by_dst") table d {
        key = { h.eth.dst : exact; }
        actions = { Allow; refuse; }
        default_action = Allow(0, 0);
    }
    apply {
        pass = false;
        switch (t.apply().action_run) {
            refuse: { d.apply(); }
            default: {}
        }
    }
}

ebpfFilter(prs(), pipe()) main;
