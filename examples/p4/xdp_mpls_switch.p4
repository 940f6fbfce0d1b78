/* MPLS label stack: the parser fills a header stack with .next until the bottom-of-stack bit, the control pops the
   top label or pushes a new one chosen by a table, and switches on the action that ran. */
#include <core.p4>
#include <xdp_model.p4>

#define MAX_LABELS 4

header Ethernet {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header Mpls {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
}

struct Headers {
    Ethernet       ethernet;
    Mpls[MAX_LABELS] mpls;
}

parser Parser(packet_in packet, out Headers hd) {
    state start {
        packet.extract(hd.ethernet);
        transition select(hd.ethernet.etherType) {
            0x8847 : parse_mpls;
            default : accept;
        }
    }

    state parse_mpls {
        packet.extract(hd.mpls.next);
        transition select(hd.mpls.last.bos) {
            1w0 : parse_mpls;
            1w1 : accept;
        }
    }
}

control Ingress(inout Headers hd, in xdp_input xin, out xdp_output xout) {
    action pop() {
        hd.mpls.pop_front(1);
    }

    action push(bit<20> label) {
        hd.mpls.push_front(1);
        hd.mpls[0].setValid();
        hd.mpls[0] = { label, 3w0, 1w0, hd.mpls[1].ttl - 1 };
    }

    action discard() {
        xout.output_action = xdp_action.XDP_DROP;
    }

    table label_op {
        key = { hd.mpls[0].label : exact; }
        actions = {
            pop;
            push;
            discard;
            @defaultonly NoAction;
        }
        default_action = NoAction();
    }

    apply {
        xout.output_port = xin.input_port;
        xout.output_action = xdp_action.XDP_TX;
        if (!hd.mpls[0].isValid()) {
            xout.output_action = xdp_action.XDP_PASS;
            exit;
        }
        switch (label_op.apply().action_run) {
            pop: {
                if (!hd.mpls[0].isValid())
                    hd.ethernet.etherType = 16w0x0800;
            }
            push:
            discard: {
                hd.ethernet.srcAddr[7:0] = 8w0;
            }
            default: {
                xout.output_action = xdp_action.XDP_PASS;
            }
        }
    }
}

control Deparser(in Headers hdrs, packet_out packet) {
    apply {
        packet.emit(hdrs.ethernet);
        packet.emit(hdrs.mpls);
    }
}

xdp(Parser(), Ingress(), Deparser()) main;
