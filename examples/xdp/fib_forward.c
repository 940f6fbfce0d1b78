/* fib_forward: IPv4 and IPv6 forwarding through the kernel's own routing table with bpf_fib_lookup.
 *
 * Stands for the kernel's xdp_fwd sample (and every XDP router that asks the FIB rather than a map of its own). For
 * each IPv4 or IPv6 packet the program fills a `struct bpf_fib_lookup` (family, TOS or flow info, L4 protocol, L3
 * length, ingress interface, source and destination, and the frame's own MACs, which the helper overwrites only when
 * it resolves a neighbour) and calls `bpf_fib_lookup`: with BPF_FIB_LOOKUP_SKIP_NEIGH when the last byte of the
 * destination address is SKIP_NEIGH_FROM or above, with no flags otherwise. On success the TTL or hop limit is
 * decremented (IPv4 checksum updated incrementally), the MACs are rewritten and the frame is redirected to the egress
 * interface; blackhole, unreachable and prohibit routes drop; every other answer (no route, local destination, no
 * neighbour, fragmentation needed) passes to the stack. TTL or hop limit <= 1 passes; non-IP passes; truncated
 * frames drop. Each answer is also recorded in `fib_results` (indexed by return code, negative codes in the last
 * slot): how often it came and the whole struct as the last such call left it, so every output field of the helper
 * is compared.
 *
 * Trace (crates/gen/src/examples/fib_forward.rs): it comes with a route table (`routes.json`, see docs/routes.md) of
 * two devices, direct and gateway routes with and without neighbours, blackhole/unreachable/prohibit routes,
 * overlapping prefixes and equal prefixes with different metrics, for both families; the trace sends packets to each
 * of them with both flag settings, to unrouted, loopback, link-local and multicast destinations, packets larger than
 * the egress MTU, expiring TTLs, ARP and truncated or malformed frames.
 */
#include <sys/socket.h>
#include "common.h"

/* Flow label and traffic class: the first word of the IPv6 header without the version. */
#define IPV6_FLOWINFO_MASK bpf_htonl(0x0fffffff)
/* Destinations whose last byte is at least this are looked up without resolving the neighbour. */
#define SKIP_NEIGH_FROM 200
#define RESULT_SLOTS 16

struct fib_record {
	__u64 count;
	struct bpf_fib_lookup params;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RESULT_SLOTS);
	__type(key, __u32);
	__type(value, struct fib_record);
} fib_results SEC(".maps");

static __always_inline void record(long rc, const struct bpf_fib_lookup *params)
{
	__u32 slot = rc < 0 || rc >= RESULT_SLOTS ? RESULT_SLOTS - 1 : (__u32)rc;
	struct fib_record *rec = bpf_map_lookup_elem(&fib_results, &slot);

	if (!rec)
		return;
	rec->count++;
	__builtin_memcpy(&rec->params, params, sizeof(*params));
}

SEC("xdp")
int fib_forward(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct bpf_fib_lookup p;
	struct ipv6hdr *ip6 = 0;
	struct iphdr *ip = 0;
	__u32 flags = 0;
	long rc;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	__builtin_memset(&p, 0, sizeof(p));
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip = ipv4_fixed_header(eth + 1, data_end);
		if (!ip)
			return XDP_DROP;
		if (ip->ttl <= 1)
			return XDP_PASS;
		p.family = AF_INET;
		p.tos = ip->tos;
		p.l4_protocol = ip->protocol;
		p.tot_len = bpf_ntohs(ip->tot_len);
		p.ipv4_src = ip->saddr;
		p.ipv4_dst = ip->daddr;
		if ((bpf_ntohl(ip->daddr) & 0xff) >= SKIP_NEIGH_FROM)
			flags = BPF_FIB_LOOKUP_SKIP_NEIGH;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		ip6 = ipv6_header(eth + 1, data_end);
		if (!ip6)
			return XDP_DROP;
		if (ip6->hop_limit <= 1)
			return XDP_PASS;
		p.family = AF_INET6;
		p.flowinfo = *(__be32 *)ip6 & IPV6_FLOWINFO_MASK;
		p.l4_protocol = ip6->nexthdr;
		p.tot_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		__builtin_memcpy(p.ipv6_src, &ip6->saddr, sizeof(p.ipv6_src));
		__builtin_memcpy(p.ipv6_dst, &ip6->daddr, sizeof(p.ipv6_dst));
		if (ip6->daddr.in6_u.u6_addr8[15] >= SKIP_NEIGH_FROM)
			flags = BPF_FIB_LOOKUP_SKIP_NEIGH;
	} else {
		return XDP_PASS;
	}
	p.ifindex = ctx->ingress_ifindex;
	__builtin_memcpy(p.smac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(p.dmac, eth->h_dest, ETH_ALEN);

	rc = bpf_fib_lookup(ctx, &p, sizeof(p), flags);
	record(rc, &p);

	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		break;
	case BPF_FIB_LKUP_RET_BLACKHOLE:
	case BPF_FIB_LKUP_RET_UNREACHABLE:
	case BPF_FIB_LKUP_RET_PROHIBIT:
		return XDP_DROP;
	default:
		return XDP_PASS;
	}

	if (ip)
		ipv4_decrement_ttl(ip);
	else if (ip6)
		ip6->hop_limit--;
	set_macs(eth, p.dmac, p.smac);
	return bpf_redirect(p.ifindex, 0);
}

char _license[] SEC("license") = "GPL";
