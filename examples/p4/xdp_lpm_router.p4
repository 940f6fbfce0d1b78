/* Longest-prefix-match IPv4 router: rewrites the MAC addresses, decrements the TTL, patches the checksum with
   csum_replace2 and sends the packet back out (XDP_TX). Expired or unrouted packets go to the kernel stack. */
#include <core.p4>
#include <xdp_model.p4>

#define TABLE_SIZE 1024

typedef bit<48> MacAddress;
typedef bit<32> IPv4Address;

header Ethernet {
    MacAddress dstAddr;
    MacAddress srcAddr;
    bit<16>    etherType;
}

header IPv4 {
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

struct Headers {
    Ethernet ethernet;
    IPv4     ipv4;
}

parser Parser(packet_in packet, out Headers hd) {
    state start {
        packet.extract(hd.ethernet);
        transition select(hd.ethernet.etherType) {
            16w0x800 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hd.ipv4);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    bit<16> old_ttl_proto = 0;

    action set_nhop(MacAddress dmac, MacAddress smac, bit<32> port) {
        hd.ethernet.srcAddr = smac;
        hd.ethernet.dstAddr = dmac;
        // The TTL shares a 16-bit checksum word with the protocol field.
        old_ttl_proto = hd.ipv4.ttl ++ hd.ipv4.protocol;
        hd.ipv4.ttl = hd.ipv4.ttl - 1;
        hd.ipv4.hdrChecksum = csum_replace2(hd.ipv4.hdrChecksum, old_ttl_proto, hd.ipv4.ttl ++ hd.ipv4.protocol);
        xout.output_port = port;
        xout.output_action = xdp_action.XDP_TX;
    }

    action to_kernel() {
        xout.output_action = xdp_action.XDP_PASS;
    }

    table ipv4_lpm {
        key = { hd.ipv4.dstAddr : lpm; }
        actions = {
            set_nhop;
            to_kernel;
        }
        default_action = to_kernel();
        size = TABLE_SIZE;
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (!hd.ipv4.isValid() || hd.ipv4.ttl <= 1) {
            return;
        }
        ipv4_lpm.apply();
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.ipv4);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
