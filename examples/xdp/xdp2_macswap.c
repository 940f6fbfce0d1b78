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
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct vlan_hdr {
	__be16 tci;
	__be16 next_proto;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} rxcnt SEC(".maps");

static __always_inline void swap_src_dst_mac(struct ethhdr *eth)
{
	__u8 tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, tmp, ETH_ALEN);
}

SEC("xdp")
int xdp2_macswap(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u64 off = sizeof(*eth);
	__u32 ipproto = 0;
	__u16 proto;
	__u64 *value;

	if (data + off > data_end)
		return XDP_DROP;
	proto = eth->h_proto;

#pragma clang loop unroll(full)
	for (int i = 0; i < 2; i++) {
		struct vlan_hdr *vh = data + off;

		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		off += sizeof(*vh);
		if (data + off > data_end)
			return XDP_DROP;
		proto = vh->next_proto;
	}

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = data + off;

		if ((void *)(ip + 1) <= data_end)
			ipproto = ip->protocol;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data + off;

		if ((void *)(ip6 + 1) <= data_end)
			ipproto = ip6->nexthdr;
	}

	value = bpf_map_lookup_elem(&rxcnt, &ipproto);
	if (value)
		*value += 1;
	swap_src_dst_mac(eth);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
