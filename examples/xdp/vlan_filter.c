/* vlan_filter: Suricata-like flow bypass behind stacked VLAN tags.
 *
 * Stands for the Suricata bypass filter of the program-warping paper. Up to two 802.1Q (0x8100) or 802.1ad (0x88a8)
 * tags are skipped (a third tag passes the frame untouched), then IPv4 or IPv6 TCP/UDP 5-tuples are looked up in the
 * `flow_table_v4`/`flow_table_v6` per-CPU hash maps: a bypassed flow has its packet and byte counters bumped and is
 * dropped (Suricata no longer needs to see it), any other packet passes to Suricata. Non-IP frames, IPv6 with
 * extension headers and other protocols pass; truncated headers and IHL < 5 drop.
 *
 * Trace (crates/gen/src/examples/vlan_filter.rs): both flow tables are preloaded with bypassed flows; the trace sends
 * those flows and others with 0, 1 and 2 tags of both kinds, three tags, ICMP, ARP, and truncated tags, IP headers
 * and L4 headers.
 */
#include "common.h"

struct flow_v6 {
	__u8 src[16];
	__u8 dst[16];
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
};

struct flow_counters {
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 512);
	__type(key, struct ipv4_flow);
	__type(value, struct flow_counters);
} flow_table_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 512);
	__type(key, struct flow_v6);
	__type(value, struct flow_counters);
} flow_table_v6 SEC(".maps");

static __always_inline int bypass(struct flow_counters *c, void *data, void *data_end)
{
	c->packets++;
	c->bytes += data_end - data;
	return XDP_DROP;
}

SEC("xdp")
int vlan_filter(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct flow_counters *counters;
	void *l3;
	__be16 proto;

	l3 = skip_eth_vlan(data, data_end, &proto);
	if (!l3)
		return XDP_DROP;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = ipv4_header(l3, data_end);
		struct ipv4_flow key = {};

		if (!ip)
			return XDP_DROP;
		if (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP)
			return XDP_PASS;
		if (ipv4_flow_read(ip, data_end, &key))
			return XDP_DROP;
		counters = bpf_map_lookup_elem(&flow_table_v4, &key);
		if (counters)
			return bypass(counters, data, data_end);
		return XDP_PASS;
	}

	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = ipv6_header(l3, data_end);
		struct flow_v6 key = {};

		if (!ip6)
			return XDP_DROP;
		if (ip6->nexthdr != IPPROTO_TCP && ip6->nexthdr != IPPROTO_UDP)
			return XDP_PASS;
		if (l4_ports(ip6 + 1, data_end, ip6->nexthdr, &key.sport, &key.dport))
			return XDP_DROP;
		__builtin_memcpy(key.src, &ip6->saddr, 16);
		__builtin_memcpy(key.dst, &ip6->daddr, 16);
		key.proto = ip6->nexthdr;
		counters = bpf_map_lookup_elem(&flow_table_v6, &key);
		if (counters)
			return bypass(counters, data, data_end);
		return XDP_PASS;
	}

	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
