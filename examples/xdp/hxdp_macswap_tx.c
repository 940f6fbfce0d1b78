/* hxdp_macswap_tx: the MAC-swap-and-TX microbenchmark of the hXDP paper (OSDI 2020, section 5.2.2), written from its
 * description: the Ethernet header is parsed, its source and destination addresses swapped, and the frame sent back
 * out of the port it came in on (XDP_TX).
 *
 * A frame too short for an Ethernet header is dropped.
 *
 * Trace (crates/gen/src/examples/hxdp_macswap_tx.rs): IPv4, IPv6, VLAN-tagged and other ethertypes, ARP, malformed
 * frames, all bounced.
 */
#include "common.h"

SEC("xdp")
int hxdp_macswap_tx(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u32 dst_hi, src_hi;
	__u16 dst_lo, src_lo;

	if (data + sizeof(struct ethhdr) > data_end)
		return XDP_DROP;
	/* Each address as a 4-byte and a 2-byte word, the way the paper's 6-byte load/store fusion finds it. */
	dst_hi = *(__u32 *)data;
	dst_lo = *(__u16 *)(data + 4);
	src_hi = *(__u32 *)(data + 6);
	src_lo = *(__u16 *)(data + 10);
	*(__u32 *)data = src_hi;
	*(__u16 *)(data + 4) = src_lo;
	*(__u32 *)(data + 6) = dst_hi;
	*(__u16 *)(data + 10) = dst_lo;
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
