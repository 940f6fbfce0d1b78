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

static __always_inline __u32 ipv4_proto(void *data, __u64 off, void *data_end)
{
	struct iphdr *ip = data + off;

	if ((void *)(ip + 1) > data_end)
		return 0;
	return ip->protocol;
}

static __always_inline __u32 ipv6_proto(void *data, __u64 off, void *data_end)
{
	struct ipv6hdr *ip6 = data + off;

	if ((void *)(ip6 + 1) > data_end)
		return 0;
	return ip6->nexthdr;
}

SEC("xdp")
int xdp1_drop(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u64 off = sizeof(*eth);
	__u32 ipproto;
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

	if (proto == bpf_htons(ETH_P_IP))
		ipproto = ipv4_proto(data, off, data_end);
	else if (proto == bpf_htons(ETH_P_IPV6))
		ipproto = ipv6_proto(data, off, data_end);
	else
		ipproto = 0;

	value = bpf_map_lookup_elem(&rxcnt, &ipproto);
	if (value)
		*value += 1;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
