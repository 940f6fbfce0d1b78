/* Parser features: select on a tuple with masks, lookahead, advance, verify, a serializable enum and typed
   literals; the control marks UDP flows listed in constant entries and sends them back out (XDP_TX), decrements the
   TTL with csum_replace2 and samples with a timestamp. Unlisted traffic goes to the kernel. */
#include <core.p4>
#include <hwxdp_xdp.p4>

enum bit<8> IpProto {
    TCP = 6,
    UDP = 17
}

header Ethernet {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header IPv4 {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    IpProto protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
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
        transition select(hd.ethernet.etherType, packet.lookahead<bit<8>>()) {
            (16w0x0800, 8w0x45) : parse_ipv4;
            (16w0x0800, 8w0x40 &&& 8w0xf0) : parse_options;
            default : accept;
        }
    }

    state parse_options {
        packet.extract(hd.ipv4);
        // Options are skipped: 32 bits per word beyond the five of the fixed header.
        packet.advance((bit<32>)(hd.ipv4.ihl - 5) << 5);
        transition select(hd.ipv4.protocol) {
            IpProto.UDP : parse_udp;
            default : accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hd.ipv4);
        verify(hd.ipv4.version == 4w4, error.NoMatch);
        transition select(hd.ipv4.fragOffset, hd.ipv4.protocol) {
            (13w0, IpProto.UDP) : parse_udp;
            (_, _) : accept;
        }
    }

    state parse_udp {
        packet.extract(hd.udp);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    bit<64> stamp;

    action mark(bit<8> tos) {
        hd.ipv4.hdrChecksum = csum_replace2(hd.ipv4.hdrChecksum, hd.ipv4.version ++ hd.ipv4.ihl ++ hd.ipv4.diffserv,
                                            hd.ipv4.version ++ hd.ipv4.ihl ++ tos);
        hd.ipv4.diffserv = tos;
    }

    table udp_ports {
        key = {
            hd.udp.dstPort : exact;
            hd.ipv4.srcAddr : lpm;
        }
        actions = {
            mark;
            NoAction;
        }
        const entries = {
            (16w53, 32w0x0a000000 &&& 32w0xff000000) : mark(8w0xb8);
            (16w4789, _) : mark(0x20);
        }
        default_action = NoAction;
    }

    apply {
        stamp = hwxdp_ktime_get_ns();
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (hd.udp.isValid()) {
            if (udp_ports.apply().hit) {
                xout.output_port = xin.input_port;
                xout.output_action = xdp_action.XDP_TX;
            }
            if (stamp[0:0] == 1 && hd.udp.srcPort >= 16w1024)
                hwxdp_perf_event_output(hd.udp);
        }
        if (hd.ipv4.isValid()) {
            int<16> delta = 16s-1;
            bit<8> ttl = (hd.ipv4.ttl > 1 ? hd.ipv4.ttl + (bit<8>)delta : 8w0);
            // The TTL is the high byte of its checksum word; the protocol byte beside it does not change.
            hd.ipv4.hdrChecksum = csum_replace2(hd.ipv4.hdrChecksum, hd.ipv4.ttl ++ 8w0, ttl ++ 8w0);
            hd.ipv4.ttl = ttl;
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
