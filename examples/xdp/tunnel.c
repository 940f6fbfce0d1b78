/* tunnel: IP-in-IP decapsulation and encapsulation, IPv4 and IPv6.
 *
 * Stands for the Tunnel workload of the program-warping paper. An IPv4 packet carrying IPv4 (protocol 4) or IPv6
 * (protocol 41), or an IPv6 packet carrying either (next header 4 or 41, no extension headers), is decapsulated:
 * `bpf_xdp_adjust_head` removes the outer header, the Ethernet header is rebuilt with the inner ethertype and the
 * packet passes to the stack. Any other IPv4 packet whose destination is in `tun4`, or IPv6 packet whose destination
 * is in `tun6`, is encapsulated in a new outer header of the same family toward the tunnel endpoint (`adjust_head`
 * with a negative delta, fresh IPv4 checksum) and sent back out with XDP_TX. Other destinations and non-IP frames pass;
 * truncated headers and IHL < 5 drop.
 *
 * Trace (crates/gen/src/examples/tunnel.rs): `tun4` and `tun6` are preloaded with endpoints; the trace sends the four
 * IP-in-IP combinations (decap), plain IPv4/IPv6 to tunnelled destinations (encap) and to others (miss), ARP, and
 * truncated outer or inner headers.
 */
#include "common.h"

struct tun4_endpoint {
	__u32 saddr;
	__u32 daddr;
	__u8 dmac[ETH_ALEN];
	__u8 smac[ETH_ALEN];
};

struct tun6_endpoint {
	struct in6_addr saddr;
	struct in6_addr daddr;
	__u8 dmac[ETH_ALEN];
	__u8 smac[ETH_ALEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct tun4_endpoint);
} tun4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct in6_addr);
	__type(value, struct tun6_endpoint);
} tun6 SEC(".maps");

/* Removes `outer_len` bytes after the Ethernet header and rewrites the ethertype for the inner packet. */
static __always_inline int decap(struct xdp_md *ctx, int outer_len, __u8 inner_proto)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct ethhdr saved;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(&saved, eth, sizeof(saved));
	saved.h_proto = inner_proto == IPPROTO_IPIP ? bpf_htons(ETH_P_IP) : bpf_htons(ETH_P_IPV6);
	if (bpf_xdp_adjust_head(ctx, outer_len))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	__builtin_memcpy(eth, &saved, sizeof(saved));
	return XDP_PASS;
}

static __always_inline int encap4(struct xdp_md *ctx, struct tun4_endpoint *tun, __u16 inner_len)
{
	struct ethhdr *eth = push_outer_header(ctx, sizeof(struct iphdr));

	if (!eth)
		return XDP_DROP;
	set_macs(eth, tun->dmac, tun->smac);
	eth->h_proto = bpf_htons(ETH_P_IP);
	ipv4_write_ipip((struct iphdr *)(eth + 1), inner_len, tun->saddr, tun->daddr);
	return XDP_TX;
}

static __always_inline int encap6(struct xdp_md *ctx, struct tun6_endpoint *tun, __u16 inner_len)
{
	struct ethhdr *eth = push_outer_header(ctx, sizeof(struct ipv6hdr));
	struct ipv6hdr *outer;

	if (!eth)
		return XDP_DROP;
	set_macs(eth, tun->dmac, tun->smac);
	eth->h_proto = bpf_htons(ETH_P_IPV6);
	outer = (void *)(eth + 1);
	outer->version = 6;
	outer->priority = 0;
	outer->flow_lbl[0] = 0;
	outer->flow_lbl[1] = 0;
	outer->flow_lbl[2] = 0;
	outer->payload_len = bpf_htons(inner_len);
	outer->nexthdr = IPPROTO_IPV6;
	outer->hop_limit = 64;
	outer->saddr = tun->saddr;
	outer->daddr = tun->daddr;
	return XDP_TX;
}

SEC("xdp")
int tunnel(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;

	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = ipv4_header(eth + 1, data_end);
		struct tun4_endpoint *tun;
		__u32 daddr;

		if (!ip)
			return XDP_DROP;
		if (ip->protocol == IPPROTO_IPIP || ip->protocol == IPPROTO_IPV6)
			return decap(ctx, ip->ihl * 4, ip->protocol);
		daddr = ip->daddr;
		tun = bpf_map_lookup_elem(&tun4, &daddr);
		if (!tun)
			return XDP_PASS;
		return encap4(ctx, tun, bpf_ntohs(ip->tot_len));
	}

	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = ipv6_header(eth + 1, data_end);
		struct tun6_endpoint *tun;
		struct in6_addr daddr;

		if (!ip6)
			return XDP_DROP;
		if (ip6->nexthdr == IPPROTO_IPIP || ip6->nexthdr == IPPROTO_IPV6)
			return decap(ctx, sizeof(struct ipv6hdr), ip6->nexthdr);
		daddr = ip6->daddr;
		tun = bpf_map_lookup_elem(&tun6, &daddr);
		if (!tun)
			return XDP_PASS;
		return encap6(ctx, tun, bpf_ntohs(ip6->payload_len) + sizeof(struct ipv6hdr));
	}

	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
