/* Stateless firewall on a stick: a ternary ACL with priorities on (source, destination, protocol, destination port)
   returns permitted packets to the router (MACs swapped, XDP_TX) and drops denied ones; misses go to the kernel. */
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

// The ports of TCP and UDP, which both start with them.
header L4Ports {
    bit<16> srcPort;
    bit<16> dstPort;
}

struct Headers {
    Ethernet ethernet;
    IPv4     ipv4;
    L4Ports  ports;
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
        transition select(hd.ipv4.ihl, hd.ipv4.fragOffset, hd.ipv4.protocol) {
            (5, 0, 6) : parse_ports;
            (5, 0, 17) : parse_ports;
            default : accept;
        }
    }

    state parse_ports {
        packet.extract(hd.ports);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    bit<16>    l4_dport = 0;
    MacAddress mac = 0;

    action permit() {
        mac = hd.ethernet.dstAddr;
        hd.ethernet.dstAddr = hd.ethernet.srcAddr;
        hd.ethernet.srcAddr = mac;
        xout.output_port = xin.input_port;
        xout.output_action = xdp_action.XDP_TX;
    }

    action deny() {
        xout.output_action = xdp_action.XDP_DROP;
    }

    action to_kernel() {
        xout.output_action = xdp_action.XDP_PASS;
    }

    table acl {
        key = {
            hd.ipv4.srcAddr  : ternary;
            hd.ipv4.dstAddr  : ternary;
            hd.ipv4.protocol : ternary;
            l4_dport         : ternary;
        }
        actions = {
            permit;
            deny;
            to_kernel;
        }
        default_action = to_kernel();
        size = 256;
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (!hd.ipv4.isValid()) {
            return;
        }
        // Packets without ports (ICMP, later fragments) match with port 0.
        if (hd.ports.isValid()) {
            l4_dport = hd.ports.dstPort;
        }
        acl.apply();
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.ipv4);
        packet.emit(hdrs.ports);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
