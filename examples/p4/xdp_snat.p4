/* Static source NAT on a one-armed gateway: a table maps inside IPv4 sources to public addresses, csum_replace4 patches
   the IPv4 and the TCP/UDP checksums (a zero UDP checksum stays zero) and the packet goes to the upstream router. */
#include <core.p4>
#include <hwxdp_xdp.p4>

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

header Tcp {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<32> seqNo;
    bit<32> ackNo;
    bit<4>  dataOffset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgentPtr;
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
    Tcp      tcp;
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
        verify(hd.ipv4.ihl == 5, error.HeaderTooShort);
        // Later fragments carry no transport header.
        transition select(hd.ipv4.fragOffset, hd.ipv4.protocol) {
            (13w0, 8w6) : parse_tcp;
            (13w0, 8w17) : parse_udp;
            default : accept;
        }
    }

    state parse_tcp {
        packet.extract(hd.tcp);
        transition accept;
    }

    state parse_udp {
        packet.extract(hd.udp);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    IPv4Address inside = 0;

    action translate(IPv4Address public_addr, MacAddress router_mac) {
        hd.ipv4.hdrChecksum = csum_replace4(hd.ipv4.hdrChecksum, hd.ipv4.srcAddr, public_addr);
        hd.ipv4.srcAddr = public_addr;
        hd.ethernet.srcAddr = hd.ethernet.dstAddr;
        hd.ethernet.dstAddr = router_mac;
    }

    table snat {
        key = { hd.ipv4.srcAddr : exact; }
        actions = {
            translate;
            NoAction;
        }
        default_action = NoAction();
        size = 1024;
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (!hd.ipv4.isValid()) {
            return;
        }
        inside = hd.ipv4.srcAddr;
        if (snat.apply().hit) {
            // The transport checksums cover the addresses through the pseudo-header.
            if (hd.tcp.isValid()) {
                hd.tcp.checksum = csum_replace4(hd.tcp.checksum, inside, hd.ipv4.srcAddr);
            } else if (hd.udp.isValid() && hd.udp.checksum != 0) {
                hd.udp.checksum = csum_replace4(hd.udp.checksum, inside, hd.ipv4.srcAddr);
            }
            xout.output_port = xin.input_port;
            xout.output_action = xdp_action.XDP_TX;
        }
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.ipv4);
        packet.emit(hdrs.tcp);
        packet.emit(hdrs.udp);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
