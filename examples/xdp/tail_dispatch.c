/* tail_dispatch: protocol dispatch through tail calls.
 *
 * Stands for the chained-program deployments (Katran, Cilium) the hXDP and eBPFlow papers must run. `tail_dispatch`
 * picks a slot of the `jump_table` PROG_ARRAY by ethertype and tail-calls it: slot 0 holds `tail_ipv4` (swaps MACs
 * and bounces IPv4 with a TTL above 1 via XDP_TX, passes the rest, drops truncated headers), slot 1 holds `tail_ipv6`
 * (drops IPv6 with hop limit 0 or 1, passes the rest). ARP asks for slot 2, which is empty, and 802.1Q for slot 9,
 * beyond the table: both tail calls fail and fall through (ARP passes, VLAN drops; a failed IPv4 or IPv6 tail call,
 * with an empty table, aborts). Other ethertypes pass without a tail call; frames shorter than an Ethernet header
 * drop. The loader fills the table: hwxdp preloads PROG_ARRAY values as indices into the object's program list.
 *
 * Trace (crates/gen/src/examples/tail_dispatch.rs): `jump_table` is preloaded with slot 0 = `tail_ipv4` and slot
 * 1 = `tail_ipv6`; the trace sends IPv4 with TTL 64, 2, 1 and 0, IPv6 with the same hop limits, truncated IP headers,
 * ARP, 802.1Q and 802.1ad tagged frames, other ethertypes, and the generic malformed frames.
 */
#include "common.h"

enum jump_slot { SLOT_IPV4 = 0, SLOT_IPV6 = 1, SLOT_ARP = 2, SLOT_VLAN = 9 };

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} jump_table SEC(".maps");

SEC("xdp")
int tail_ipv4(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *ip = ipv4_fixed_header(eth + 1, data_end);

	if (!ip)
		return XDP_DROP;
	if (ip->ttl <= 1)
		return XDP_PASS;
	swap_macs(eth);
	return XDP_TX;
}

SEC("xdp")
int tail_ipv6(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6 = ipv6_header(eth + 1, data_end);

	if (!ip6)
		return XDP_DROP;
	if (ip6->hop_limit <= 1)
		return XDP_DROP;
	return XDP_PASS;
}

SEC("xdp")
int tail_dispatch(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	switch (eth->h_proto) {
	case bpf_htons(ETH_P_IP):
		bpf_tail_call(ctx, &jump_table, SLOT_IPV4);
		return XDP_ABORTED;
	case bpf_htons(ETH_P_IPV6):
		bpf_tail_call(ctx, &jump_table, SLOT_IPV6);
		return XDP_ABORTED;
	case bpf_htons(ETH_P_ARP):
		bpf_tail_call(ctx, &jump_table, SLOT_ARP);
		return XDP_PASS;
	case bpf_htons(ETH_P_8021Q):
		bpf_tail_call(ctx, &jump_table, SLOT_VLAN);
		return XDP_DROP;
	default:
		return XDP_PASS;
	}
}

char _license[] SEC("license") = "GPL";
