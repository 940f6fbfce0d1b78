/* ddos: the eBPFlow thesis's DDoS mitigation (section 5.1, Table 5.1).
 *
 * Counts the UDP packets of every IPv4 source address in `udp_sources` and drops a source's packets once it has sent
 * DDOS_BUDGET of them; the rest of the traffic passes. What passes leaves by the paired port (nf.h), a bump in the
 * wire. The budget is per table lifetime: the controller clears `udp_sources` (the coprocessor's host port) at the
 * rate it wants to allow, so the program itself needs no clock.
 *
 * - UDP from a known source: its counter is incremented (an atomic fetch-and-add on the map value); dropped when the
 *   count before this packet had reached DDOS_BUDGET.
 * - UDP from a new source: an entry with count 1 is inserted and the packet passes (with a full table it passes
 *   uncounted: the filter fails open rather than cut off new sources).
 * - Other IPv4 protocols and non-IPv4 frames pass. Truncated frames and IHL < 5 are dropped.
 *
 * Trace: `hwxdp gen --flows N` (the generic mix's frames over N zipf-popular flows, so the popular sources run over
 * the budget), or tests/ebpflow_nfs.rs.
 */
#include "nf.h"

/* UDP packets a source may send. */
#define DDOS_BUDGET 16

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} udp_sources SEC(".maps");

/* Counts a UDP packet of source `saddr` (network order); its verdict. */
static __always_inline int ddos_count(struct xdp_md *ctx, __u32 saddr)
{
	__u64 first = 1;
	__u64 *count;

	count = bpf_map_lookup_elem(&udp_sources, &saddr);
	if (!count) {
		bpf_map_update_elem(&udp_sources, &saddr, &first, BPF_NOEXIST);
		return nf_to_peer(ctx);
	}
	if (__sync_fetch_and_add(count, 1) >= DDOS_BUDGET)
		return XDP_DROP;
	return nf_to_peer(ctx);
}

SEC("xdp")
int ddos(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct iphdr *ip;

	/* The fast path (nf.h): UDP with a 20-byte IPv4 header. */
	if (nf_fast_ipv4(data, data_end, NF_L4_PORTS) && *(__u8 *)(data + NF_IP_PROTO) == IPPROTO_UDP)
		return ddos_count(ctx, *(__u32 *)(data + NF_IP_ADDRS));
	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return nf_to_peer(ctx);
	ip = ipv4_header(eth + 1, data_end);
	if (!ip)
		return XDP_DROP;
	if (ip->protocol != IPPROTO_UDP)
		return nf_to_peer(ctx);
	return ddos_count(ctx, ip->saddr);
}

char _license[] SEC("license") = "GPL";
