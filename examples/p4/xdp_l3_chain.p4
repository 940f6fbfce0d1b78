/* Router with virtual routing tables, three tables chained: the input port selects a VRF, a per-VRF longest-prefix
   FIB selects a next hop, and an array of next hops rewrites the MACs, decrements the TTL and sends (XDP_TX). */
#include <core.p4>
#include <xdp_model.p4>

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
            0x0800 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hd.ipv4);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    bit<16> vrf = 0;
    bit<32> nhop = 0;

    action set_vrf(bit<16> id) {
        vrf = id;
    }

    table port_vrf {
        key = { xin.input_port : exact; }
        actions = {
            set_vrf;
            NoAction;
        }
        default_action = NoAction();
        size = 64;
    }

    action set_nhop(bit<32> id) {
        nhop = id;
    }

    table fib {
        key = {
            vrf             : exact;
            hd.ipv4.dstAddr : lpm;
        }
        actions = {
            set_nhop;
            NoAction;
        }
        default_action = NoAction();
        size = 4096;
    }

    // Action 0 with zero parameters is what an unset slot of an array table holds, so it must be the harmless one.
    action nh_drop() {
        xout.output_action = xdp_action.XDP_DROP;
    }

    action nh_rewrite(MacAddress dmac, MacAddress smac) {
        hd.ethernet.dstAddr = dmac;
        hd.ethernet.srcAddr = smac;
        hd.ipv4.hdrChecksum = csum_replace2(hd.ipv4.hdrChecksum, hd.ipv4.ttl ++ hd.ipv4.protocol,
                                            (hd.ipv4.ttl - 1) ++ hd.ipv4.protocol);
        hd.ipv4.ttl = hd.ipv4.ttl - 1;
        xout.output_port = xin.input_port;
        xout.output_action = xdp_action.XDP_TX;
    }

    table nexthop {
        key = { nhop : exact; }
        actions = {
            nh_drop;
            nh_rewrite;
        }
        default_action = nh_drop();
        implementation = array_table(64);
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (!hd.ipv4.isValid() || hd.ipv4.ttl <= 1) {
            return;
        }
        if (!port_vrf.apply().hit) {
            return;
        }
        if (fib.apply().hit) {
            nexthop.apply();
        }
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.ipv4);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
