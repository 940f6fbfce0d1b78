/* TTL normaliser on a stick (xdp6 of the P4C-XDP tests): a table gives the TTL to set for an IPv4 destination, the
   header checksum is recomputed with ebpf_ipv4_checksum and the packet returns to the router (MACs swapped, XDP_TX). */
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
            16w0x0800 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hd.ipv4);
        transition select(hd.ipv4.version, hd.ipv4.ihl) {
            (4w4, 4w5) : accept;
            default : reject;
        }
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    MacAddress mac = 0;

    action set_ttl(bit<8> ttl) {
        hd.ipv4.ttl = ttl;
    }

    table ttl_map {
        key = { hd.ipv4.dstAddr : exact; }
        actions = {
            set_ttl;
            NoAction;
        }
        default_action = NoAction();
        implementation = hash_table(256);
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (!hd.ipv4.isValid()) {
            return;
        }
        if (ttl_map.apply().hit) {
            // A full recomputation: whatever the checksum was before, it is right afterwards.
            hd.ipv4.hdrChecksum = ebpf_ipv4_checksum(hd.ipv4.version, hd.ipv4.ihl, hd.ipv4.diffserv,
                                                     hd.ipv4.totalLen, hd.ipv4.identification, hd.ipv4.flags,
                                                     hd.ipv4.fragOffset, hd.ipv4.ttl, hd.ipv4.protocol,
                                                     hd.ipv4.srcAddr, hd.ipv4.dstAddr);
            mac = hd.ethernet.dstAddr;
            hd.ethernet.dstAddr = hd.ethernet.srcAddr;
            hd.ethernet.srcAddr = mac;
            xout.output_port = xin.input_port;
            xout.output_action = xdp_action.XDP_TX;
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
