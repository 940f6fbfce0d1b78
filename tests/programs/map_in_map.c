// Maps of maps, as tests/maps_of_maps.rs runs them: an ARRAY_OF_MAPS of per-CPU-style LRU tables (Katran's
// lru_mapping) and a HASH_OF_MAPS of arrays, filled by .values initializers; bpf_map_lookup_elem on the outer map
// gives the inner map the next helper call uses.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct flow_table {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
};

struct flow_table lru_0 SEC(".maps");
struct flow_table lru_1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 4);
	__type(key, __u32);
	__array(values, struct flow_table);
} lru_mapping SEC(".maps") = {
	.values = { [0] = &lru_0, [2] = &lru_1 },
};

struct counters {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
};

struct counters tcp_counts SEC(".maps");
struct counters udp_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 8);
	__type(key, __u32);
	__array(values, struct counters);
} by_proto SEC(".maps") = {
	/* libbpf puts initializers in at 4-byte keys 0..n: TCP is 6, UDP 17 */
	.values = { [6] = &tcp_counts, [17] = &udp_counts },
};

SEC("xdp")
int map_in_map(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	__u32 proto = ip->protocol;
	void *counts = bpf_map_lookup_elem(&by_proto, &proto);
	if (counts) {
		__u32 slot = ip->ttl & 7;
		__u64 *n = bpf_map_lookup_elem(counts, &slot);
		if (n)
			__sync_fetch_and_add(n, 1);
	}
	__u32 table = bpf_ntohl(ip->saddr) & 3;
	void *lru = bpf_map_lookup_elem(&lru_mapping, &table);
	if (!lru)
		return XDP_DROP; /* tables 1 and 3 are empty */
	__u32 flow = ip->daddr;
	__u64 *seen = bpf_map_lookup_elem(lru, &flow);
	if (seen) {
		*seen += 1;
		return XDP_TX;
	}
	__u64 one = 1;
	bpf_map_update_elem(lru, &flow, &one, BPF_ANY);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
