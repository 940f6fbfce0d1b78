/* UDP echo service (RFC 862) in XDP: a table keyed on (IPv4 destination, UDP port) answers datagrams by swapping the
   MAC and IPv4 addresses and the ports (no checksum changes) and sending them back, or drops them (discard, RFC 863). */
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

header Udp {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> length;
    bit<16> checksum;
}

struct Headers {
    Ethernet ethernet;
    IPv4     ipv4;
    Udp      udp;
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
            (5, 0, 17) : parse_udp;
            default : accept;
        }
    }

    state parse_udp {
        packet.extract(hd.udp);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    MacAddress  mac = 0;
    IPv4Address addr = 0;
    bit<16>     port = 0;

    action echo() {
        mac = hd.ethernet.dstAddr;
        hd.ethernet.dstAddr = hd.ethernet.srcAddr;
        hd.ethernet.srcAddr = mac;
        addr = hd.ipv4.dstAddr;
        hd.ipv4.dstAddr = hd.ipv4.srcAddr;
        hd.ipv4.srcAddr = addr;
        port = hd.udp.dstPort;
        hd.udp.dstPort = hd.udp.srcPort;
        hd.udp.srcPort = port;
        xout.output_port = xin.input_port;
        xout.output_action = xdp_action.XDP_TX;
    }

    action discard() {
        xout.output_action = xdp_action.XDP_DROP;
    }

    table services {
        key = {
            hd.ipv4.dstAddr : exact;
            hd.udp.dstPort  : exact;
        }
        actions = {
            echo;
            discard;
            NoAction;
        }
        default_action = NoAction();
        implementation = hash_table(64);
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (hd.udp.isValid()) {
            services.apply();
        }
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.ipv4);
        packet.emit(hdrs.udp);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
