/* 802.1Q tagging on a hairpin port: a table gives each input port its VLAN; untagged frames get the tag pushed, frames
   tagged with it get the tag popped, and both go back out (XDP_TX); other tags are dropped, unknown ports passed. */
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
    bit<12> port_vid = 0;
    bit<3>  port_pcp = 0;

    action set_vlan(bit<12> vid, bit<3> pcp) {
        port_vid = vid;
        port_pcp = pcp;
    }

    table port_vlan {
        key = { xin.input_port : exact; }
        actions = {
            set_vlan;
            NoAction;
        }
        default_action = NoAction();
        implementation = hash_table(64);
    }

    action push_tag() {
        hd.vlan.setValid();
        hd.vlan.pcp = port_pcp;
        hd.vlan.cfi = 0;
        hd.vlan.vid = port_vid;
        hd.vlan.etherType = hd.ethernet.etherType;
        hd.ethernet.etherType = ETHERTYPE_VLAN;
    }

    action pop_tag() {
        hd.ethernet.etherType = hd.vlan.etherType;
        hd.vlan.setInvalid();
    }

    apply {
        xout.output_port = 0;
        xout.output_action = xdp_action.XDP_PASS;
        if (!port_vlan.apply().hit) {
            return;
        }
        if (!hd.vlan.isValid()) {
            push_tag();
        } else if (hd.vlan.vid == port_vid) {
            pop_tag();
        } else {
            xout.output_action = xdp_action.XDP_DROP;
            return;
        }
        xout.output_port = xin.input_port;
        xout.output_action = xdp_action.XDP_TX;
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.vlan);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
