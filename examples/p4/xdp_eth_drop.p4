/* Drops IPv4 packets from listed source addresses and bounces the other IPv4 packets unchanged out of their input
   port (XDP_TX, a loopback responder for link tests); everything else goes to the kernel. */
#include <core.p4>
#include <xdp_model.p4>

typedef bit<48> MacAddress;
typedef bit<32> IPv4Address;

const bit<16> ETHERTYPE_IPV4 = 16w0x0800;

header Ethernet {
    MacAddress dstAddr;
    MacAddress srcAddr;
    bit<16>    etherType;
}

// IPv4 header without options
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
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hd.ipv4);
        verify(hd.ipv4.ihl == 5, error.HeaderTooShort);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    bool drop = false;

    action Drop_action() {
        drop = true;
    }

    action Fallback_action() {
        drop = false;
    }

    // The control-plane name and the P4 name agree, so the control plane may use either.
    @name("blocklist")
    table blocklist {
        key = { hd.ipv4.srcAddr : exact; }
        actions = {
            Fallback_action;
            Drop_action;
        }
        default_action = Fallback_action;
        implementation = hash_table(64);
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (hd.ipv4.isValid()) {
            blocklist.apply();
            xout.output_port = xin.input_port;
            xout.output_action = drop ? xdp_action.XDP_DROP : xdp_action.XDP_TX;
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
