/* hwxdp's extensions of the XDP architecture, beside P4C-XDP's declarations in <xdp_model.p4>. */
#ifndef HWXDP_XDP_P4
#define HWXDP_XDP_P4

#include <xdp_model.p4>

/* Incremental checksum update (RFC 1624) for a 32-bit field changing from old_value to new_value. */
extern bit<16> csum_replace4(in bit<16> csum, in bit<32> old_value, in bit<32> new_value);

/* bpf_ktime_get_ns(): nanoseconds since boot, all 64 bits. */
extern bit<64> hwxdp_ktime_get_ns();

/* One record holding data (a header, struct or number) on the program's event ring. */
extern void hwxdp_perf_event_output<T>(in T data);

#endif
