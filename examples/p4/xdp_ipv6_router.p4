/* IPv6 host routes: an exact table on the full 128-bit destination forwards a packet (new MACs, hop limit - 1, XDP_TX),
   bounces it to its sender (addresses swapped, for reachability probes) or drops it; misses go to the kernel. */
#include <core.p4>
#include <xdp_model.p4>

typedef bit<48>  MacAddress;
typedef bit<128> IPv6Address;

const bit<16> ETHERTYPE_IPV6 = 0x86dd;

header Ethernet {
    MacAddress dstAddr;
    MacAddress srcAddr;
    bit<16>    etherType;
}

header IPv6 {
    bit<4>      version;
    bit<8>      trafficClass;
    bit<20>     flowLabel;
    bit<16>     payloadLen;
    bit<8>      nextHdr;
    bit<8>      hopLimit;
    IPv6Address srcAddr;
    IPv6Address dstAddr;
}

struct Headers {
    Ethernet ethernet;
    IPv6     ipv6;
}

parser Parser(packet_in packet, out Headers hd) {
    state start {
        packet.extract(hd.ethernet);
        transition select(hd.ethernet.etherType) {
            ETHERTYPE_IPV6 : parse_ipv6;
            default : accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hd.ipv6);
        verify(hd.ipv6.version == 6, error.NoMatch);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    MacAddress  mac = 0;
    IPv6Address addr = 0;

    action forward(MacAddress dmac, MacAddress smac) {
        hd.ethernet.dstAddr = dmac;
        hd.ethernet.srcAddr = smac;
        // IPv6 has no header checksum.
        hd.ipv6.hopLimit = hd.ipv6.hopLimit - 1;
        xout.output_port = xin.input_port;
        xout.output_action = xdp_action.XDP_TX;
    }

    action reflect() {
        mac = hd.ethernet.dstAddr;
        hd.ethernet.dstAddr = hd.ethernet.srcAddr;
        hd.ethernet.srcAddr = mac;
        // A swap keeps the transport checksums, which cover both addresses.
        addr = hd.ipv6.dstAddr;
        hd.ipv6.dstAddr = hd.ipv6.srcAddr;
        hd.ipv6.srcAddr = addr;
        xout.output_port = xin.input_port;
        xout.output_action = xdp_action.XDP_TX;
    }

    action blackhole() {
        xout.output_action = xdp_action.XDP_DROP;
    }

    table ipv6_host {
        key = { hd.ipv6.dstAddr : exact; }
        actions = {
            forward;
            reflect;
            blackhole;
            NoAction;
        }
        default_action = NoAction();
        implementation = hash_table(1024);
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (hd.ipv6.isValid() && hd.ipv6.hopLimit > 1) {
            ipv6_host.apply();
        }
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.ipv6);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
