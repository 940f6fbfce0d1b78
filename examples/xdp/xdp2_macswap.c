/* xdp2_macswap: swap Ethernet addresses and bounce the frame, counting packets per IP protocol.
 *
 * Stands for the kernel sample xdp2 (samples/bpf/xdp2_kern.c), used by hXDP as its XDP_TX micro-benchmark. Parsing is
 * xdp1's (up to two VLAN tags, IPv4 protocol or IPv6 next header, 0 otherwise) into the `rxcnt` per-CPU array; the
 * source and destination MACs are swapped and the frame goes back out with XDP_TX. Frames truncated inside a VLAN tag
 * drop.
 *
 * Trace (crates/gen/src/examples/xdp2_macswap.rs): no preload; TCP, UDP and ICMP over IPv4 and IPv6 with 0, 1 and 2
 * tags, ARP, unknown ethertypes, and truncated tags and IP headers.
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} rxcnt SEC(".maps");

SEC("xdp")
int xdp2_macswap(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u32 ipproto;
	__be16 proto;
	__u64 *value;
	void *l3;

	l3 = skip_eth_vlan(data, data_end, &proto);
	if (!l3)
		return XDP_DROP;
	ipproto = ip_protocol(l3, data_end, proto);
	value = bpf_map_lookup_elem(&rxcnt, &ipproto);
	if (value)
		*value += 1;
	swap_macs(data);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
