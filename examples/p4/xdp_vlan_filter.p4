/* VLAN filter on a hairpin (reflective relay) port: a ternary table on (VLAN id, priority) with constant entries
   drops a tagged frame or sends it back out of its port (XDP_TX); untagged frames go to the kernel. */
#include <core.p4>
#include <xdp_model.p4>

const bit<16> ETHERTYPE_VLAN = 0x8100;

header Ethernet {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header Vlan {
    bit<3>  pcp;
    bit<1>  cfi;
    bit<12> vid;
    bit<16> etherType;
}

struct Headers {
    Ethernet ethernet;
    Vlan     vlan;
}

parser Parser(packet_in packet, out Headers hd) {
    state start {
        packet.extract(hd.ethernet);
        transition select(hd.ethernet.etherType) {
            ETHERTYPE_VLAN : parse_vlan;
            default : accept;
        }
    }

    state parse_vlan {
        packet.extract(hd.vlan);
        transition accept;
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    action allow() {
        xout.output_port = xin.input_port;
        xout.output_action = xdp_action.XDP_TX;
    }

    action deny() {
        xout.output_action = xdp_action.XDP_DROP;
    }

    table vlan_acl {
        key = {
            hd.vlan.vid : ternary;
            hd.vlan.pcp : ternary;
        }
        actions = {
            allow;
            deny;
        }
        const default_action = allow();
        const entries = {
            (12w10, _) : deny();
            (12w0x100 &&& 12w0xf00, 3w7) : deny();
            (_, 3w0 &&& 3w6) : allow();
        }
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (hd.vlan.isValid()) {
            vlan_acl.apply();
        } else if (hd.ethernet.etherType == ETHERTYPE_VLAN) {
            xout.output_action = xdp_action.XDP_ABORTED;
        }
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.vlan);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
