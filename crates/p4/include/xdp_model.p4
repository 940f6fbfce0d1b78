/* hwxdp bundled XDP switch architecture: parse, decide an XDP action, deparse the possibly rewritten headers. */
#ifndef HWXDP_XDP_MODEL_P4
#define HWXDP_XDP_MODEL_P4

#include <ebpf_model.p4>

/* The verdicts of an XDP program, in the kernel's numbering. */
enum xdp_action {
    XDP_ABORTED,
    XDP_DROP,
    XDP_PASS,
    XDP_TX,
    XDP_REDIRECT
}

struct xdp_input {
    bit<32> input_port;
}

struct xdp_output {
    xdp_action output_action;
    bit<32> output_port;
}

/* The IPv4 header checksum of the given fields. */
extern bit<16> ebpf_ipv4_checksum(in bit<4> version, in bit<4> ihl, in bit<8> diffserv,
                                  in bit<16> totalLen, in bit<16> identification, in bit<3> flags,
                                  in bit<13> fragOffset, in bit<8> ttl, in bit<8> protocol,
                                  in bit<32> srcAddr, in bit<32> dstAddr);

/* Incremental checksum update (RFC 1624) for a 16-bit field changing from old_value to new_value. */
extern bit<16> csum_replace2(in bit<16> csum, in bit<16> old_value, in bit<16> new_value);

/* Incremental checksum update (RFC 1624) for a 32-bit field changing from old_value to new_value. */
extern bit<16> csum_replace4(in bit<16> csum, in bit<32> old_value, in bit<32> new_value);

/* bpf_ktime_get_ns(): nanoseconds since boot. */
extern bit<64> BPF_KTIME_GET_NS();

/* bpf_perf_event_output() of the given data to the program's perf event array. */
extern void BPF_PERF_EVENT_OUTPUT<T>(in T data);

parser xdp_parse<H>(packet_in packet, out H headers);
control xdp_switch<H>(inout H headers, in xdp_input imd, out xdp_output omd);
control xdp_deparse<H>(in H headers, packet_out packet);

package xdp<H>(xdp_parse<H> p, xdp_switch<H> s, xdp_deparse<H> d);

#endif
