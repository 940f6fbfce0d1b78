/* Table implementations as p4c-ebpf compiles them: lpm and ternary keys in a hash_table, a keyless array_table,
 * and a one-element list keyset in const entries. */
#include <core.p4>
#include <ebpf_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); transition accept; }
}

control pipe(inout hdrs_t h, out bool pass) {
    action allow() { pass = true; }
    action deny() { pass = false; }
    table by_prefix {
        key = { h.eth.dst : lpm; }
        actions = { allow; deny; NoAction; }
        default_action = NoAction;
        implementation = hash_table(64);
    }
    table by_mask {
        key = { h.eth.src : ternary; }
        actions = { allow; deny; NoAction; }
        default_action = NoAction;
        implementation = hash_table(8);
    }
    table always {
        actions = { allow; deny; }
        default_action = deny;
        implementation = array_table(1);
    }
    table by_type {
        key = { h.eth.type_ : exact; }
        actions = { allow; deny; NoAction; }
        const entries = {
            { 0x88cc } : allow();
        }
    }
    apply {
        pass = false;
        if (h.eth.type_ == 0x0800) {
            by_prefix.apply();
        } else if (h.eth.type_ == 0x86dd) {
            by_mask.apply();
        } else if (h.eth.type_ == 0x0806) {
            always.apply();
        } else {
            by_type.apply();
        }
    }
}

ebpfFilter(prs(), pipe()) main;
