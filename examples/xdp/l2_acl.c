/* l2_acl: MAC-based access control list.
 *
 * Stands for Listing 1 of the program-warping paper (ATC 2022): IPv4 frames pass only when their source MAC is in the
 * `acl` hash map, IPv6 frames are dropped, every other ethertype passes, and frames too short for an Ethernet header
 * are dropped.
 *
 * Trace (crates/gen/src/examples/l2_acl.rs): `acl` is preloaded with a few allowed MACs; the trace sends IPv4 from
 * allowed MACs (PASS) and from unknown MACs (DROP), IPv6 (DROP), ARP and other ethertypes (PASS), and header-only or
 * malformed frames.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct mac_key {
	__u8 addr[ETH_ALEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct mac_key);
	__type(value, __u32);
} acl SEC(".maps");

SEC("xdp")
int l2_acl(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct mac_key key = {};

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;

	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		__builtin_memcpy(key.addr, eth->h_source, ETH_ALEN);
		if (bpf_map_lookup_elem(&acl, &key))
			return XDP_PASS;
		return XDP_DROP;
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return XDP_DROP;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
