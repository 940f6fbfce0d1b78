/* router: IPv4 forwarding with an exact-match host table and a longest-prefix-match route table.
 *
 * Stands for the Router workload of the program-warping paper and hXDP's router examples. The destination address is
 * looked up first in `hosts` (HASH, /32 entries) and then in `routes` (LPM_TRIE); a hit gives the next hop's and our
 * own MAC addresses: the TTL is decremented with an incremental checksum update, the MACs are rewritten and the frame
 * goes back out with XDP_TX. A miss drops; TTL <= 1 passes to the stack (which sends time-exceeded); non-IPv4 passes;
 * truncated frames and IHL < 5 drop. IPv4 options are allowed.
 *
 * Trace (crates/gen/src/examples/router.rs): `hosts` is preloaded with a few /32 next hops and `routes` with /8, /16
 * and /24 prefixes (some nested, so the longest match matters); the trace sends packets to hosts, to each prefix, to
 * unrouted addresses, with TTL 1 and 0, with options, IPv6, ARP and truncated or malformed frames.
 */
#include "common.h"

struct next_hop {
	__u8 dmac[ETH_ALEN];
	__u8 smac[ETH_ALEN];
};

struct route_key {
	__u32 prefixlen;
	__u32 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct next_hop);
} hosts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 256);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct route_key);
	__type(value, struct next_hop);
} routes SEC(".maps");

SEC("xdp")
int router(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct route_key lpm = {};
	struct next_hop *hop;
	struct iphdr *ip;
	__u32 daddr;
	int verdict;

	verdict = parse_eth_ipv4(data, data_end, &ip);
	if (verdict != PARSE_OK)
		return verdict;
	if (ip->ttl <= 1)
		return XDP_PASS;

	daddr = ip->daddr;
	hop = bpf_map_lookup_elem(&hosts, &daddr);
	if (!hop) {
		lpm.prefixlen = 32;
		lpm.addr = daddr;
		hop = bpf_map_lookup_elem(&routes, &lpm);
		if (!hop)
			return XDP_DROP;
	}
	ipv4_decrement_ttl(ip);
	set_macs(eth, hop->dmac, hop->smac);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
