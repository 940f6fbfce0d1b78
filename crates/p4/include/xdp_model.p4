/* hwxdp bundled XDP switch architecture, declared as P4C-XDP declares it: parse, decide an XDP action, deparse
 * the possibly rewritten headers. hwxdp's own additions live in <hwxdp_xdp.p4>. */
#ifndef _XDP_MODEL_P4
#define _XDP_MODEL_P4
#define HWXDP_XDP_MODEL_P4

#include <core.p4>
#include <ebpf_model.p4>

/* The verdicts of an XDP program, in the kernel's numbering. XDP_REDIRECT is hwxdp's (an enum cannot be extended
 * from another file); programs written for P4C-XDP never name it. */
enum xdp_action {
    XDP_ABORTED,
    XDP_DROP,
    XDP_PASS,
    XDP_TX,
    XDP_REDIRECT
}

/* What the switch control is told about the packet: the interface it arrived on. */
struct xdp_input {
    bit<32> input_port;
}

/* What the switch control decides: the verdict, and the interface of a redirect. */
struct xdp_output {
    xdp_action output_action;
    bit<32> output_port;
}

/* The IPv4 header checksum of the given fields. */
extern bit<16> ebpf_ipv4_checksum(in bit<4> version, in bit<4> ihl, in bit<8> diffserv,
                                  in bit<16> totalLen, in bit<16> identification, in bit<3> flags,
                                  in bit<13> fragOffset, in bit<8> ttl, in bit<8> protocol,
                                  in bit<32> srcAddr, in bit<32> dstAddr);

/* Incremental checksum update (RFC 1624) for a 16-bit field changing from old to new. */
extern bit<16> csum_replace2(in bit<16> csum, in bit<16> old, in bit<16> new);

/* P4C-XDP's perf event output: one sample on the perf event array `perf_event`, the packet's length (4 bytes,
 * host order) followed by the whole packet, as P4C-XDP generates it. <hwxdp_xdp.p4>'s hwxdp_perf_event_output(data)
 * sends data of the program's choosing. */
extern bit<32> BPF_PERF_EVENT_OUTPUT();

/* bpf_ktime_get_ns(), truncated to its low 32 bits as P4C-XDP declares it; <hwxdp_xdp.p4> has all 64. */
extern bit<32> BPF_KTIME_GET_NS();

parser xdp_parse<H>(packet_in packet, out H headers);
control xdp_switch<H>(inout H headers, in xdp_input imd, out xdp_output omd);
control xdp_deparse<H>(in H headers, packet_out packet);

package xdp<H>(xdp_parse<H> p, xdp_switch<H> s, xdp_deparse<H> d);

#endif
