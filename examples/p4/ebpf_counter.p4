/* Packet filter for the eBPF model: counts IPv4 packets per destination in a CounterArray and passes only IPv4. */
#include <core.p4>
#include <ebpf_model.p4>

typedef bit<48> EthernetAddress;
typedef bit<32> IPv4Address;

header Ethernet_h {
    EthernetAddress dstAddr;
    EthernetAddress srcAddr;
    bit<16>         etherType;
}

header IPv4_h {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      diffserv;
    bit<16>     totalLen;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     fragOffset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdrChecksum;
    IPv4Address srcAddr;
    IPv4Address dstAddr;
}

struct Headers_t {
    Ethernet_h ethernet;
    IPv4_h     ipv4;
}

parser prs(packet_in p, out Headers_t headers) {
    state start {
        p.extract(headers.ethernet);
        transition select(headers.ethernet.etherType) {
            0x800 : ip;
            default : reject;
        }
    }

    state ip {
        p.extract(headers.ipv4);
        transition accept;
    }
}

control pipe(inout Headers_t headers, out bool pass) {
    CounterArray(32w10, true) counters;
    CounterArray(max_index = 32w256, sparse = false) bytes;

    apply {
        if (headers.ipv4.isValid()) {
            counters.increment(headers.ipv4.dstAddr);
            bytes.add((bit<32>)headers.ipv4.protocol, (bit<32>)headers.ipv4.totalLen);
            pass = true;
        } else
            pass = false;
    }
}

ebpfFilter(prs(), pipe()) main;
