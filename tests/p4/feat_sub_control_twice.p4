/* A control instance applied twice (as p4c's two_ebpf applies one to the source and then the destination address):
 * both applications share the instance's table, action and counter, and each sees its own arguments. A frame
 * passes when neither MAC address is listed; the counter counts every lookup and every listed address. */
#include <core.p4>
#include <ebpf_model.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> type_; }
struct hdrs_t { eth_h eth; }

parser prs(packet_in p, out hdrs_t h) {
    state start { p.extract(h.eth); transition accept; }
}

control check_mac(in bit<48> mac, inout bool pass, inout bit<8> lookups) {
    CounterArray(2, false) seen;
    bit<8> step = 1;
    action block() { pass = false; seen.increment(1); }
    table blocked {
        key = { mac : exact; }
        actions = { block; NoAction; }
        default_action = NoAction;
    }
    apply {
        lookups = lookups + step;
        seen.increment(0);
        blocked.apply();
    }
}

control pipe(inout hdrs_t h, out bool pass) {
    check_mac() chk;
    bit<8> lookups = 0;
    apply {
        pass = true;
        chk.apply(h.eth.src, pass, lookups);
        chk.apply(h.eth.dst, pass, lookups);
        if (lookups != 2) {
            pass = false;
        }
    }
}

ebpfFilter(prs(), pipe()) main;
