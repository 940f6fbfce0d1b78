/* ICMP echo responder: answers IPv4 echo requests by swapping the MAC and IPv4 addresses, turning type 8 into an echo
   reply (type 0) with an incrementally patched ICMP checksum and sending the packet back (XDP_TX). */
#include <core.p4>
#include <xdp_model.p4>

typedef bit<48> MacAddress;
typedef bit<32> IPv4Address;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTO_ICMP = 1;
const bit<8>  ICMP_ECHO_REPLY = 0;
const bit<8>  ICMP_ECHO_REQUEST = 8;

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

header Icmp {
    bit<8>  icmpType;
    bit<8>  icmpCode;
    bit<16> checksum;
    bit<16> identifier;
    bit<16> seqNo;
}

struct Headers {
    Ethernet ethernet;
    IPv4     ipv4;
    Icmp     icmp;
}

parser Parser(packet_in packet, out Headers hd) {
    state start {
        packet.extract(hd.ethernet);
        transition select(hd.ethernet.etherType) {
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hd.ipv4);
        // Only unfragmented packets without options: the ICMP header follows the 20-byte IPv4 header.
        transition select(hd.ipv4.ihl, hd.ipv4.fragOffset, hd.ipv4.protocol) {
            (4w5, 13w0, IP_PROTO_ICMP) : parse_icmp;
            default : accept;
        }
    }

    state parse_icmp {
        packet.extract(hd.icmp);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    MacAddress  mac = 0;
    IPv4Address addr = 0;

    action echo_reply() {
        mac = hd.ethernet.dstAddr;
        hd.ethernet.dstAddr = hd.ethernet.srcAddr;
        hd.ethernet.srcAddr = mac;
        // Swapping the addresses leaves the IPv4 header checksum as it is.
        addr = hd.ipv4.dstAddr;
        hd.ipv4.dstAddr = hd.ipv4.srcAddr;
        hd.ipv4.srcAddr = addr;
        hd.icmp.checksum = csum_replace2(hd.icmp.checksum, hd.icmp.icmpType ++ hd.icmp.icmpCode,
                                         ICMP_ECHO_REPLY ++ hd.icmp.icmpCode);
        hd.icmp.icmpType = ICMP_ECHO_REPLY;
        xout.output_port = xin.input_port;
        xout.output_action = xdp_action.XDP_TX;
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (hd.icmp.isValid() && hd.icmp.icmpType == ICMP_ECHO_REQUEST && hd.icmp.icmpCode == 0) {
            echo_reply();
        }
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.ipv4);
        packet.emit(hdrs.icmp);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
