/* xdp1_drop: parse and drop, counting packets per IP protocol.
 *
 * Stands for the kernel sample xdp1 (samples/bpf/xdp1_kern.c), the simplest program of the hXDP evaluation. The
 * Ethernet header and up to two 802.1Q/802.1ad tags are parsed, then the IPv4 protocol or IPv6 next header (0 for
 * anything else, including truncated IP headers) indexes the `rxcnt` per-CPU array, which is incremented; every packet
 * is dropped.
 *
 * Trace (crates/gen/src/examples/xdp1_drop.rs): no preload; TCP, UDP, ICMP and ICMPv6 over IPv4 and IPv6 with 0, 1
 * and 2 tags, ARP, unknown ethertypes, and truncated tags and IP headers.
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} rxcnt SEC(".maps");

SEC("xdp")
int xdp1_drop(struct xdp_md *ctx)
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
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
