// A Katran QUIC/GUE-style server-id table of 2^24 entries, as tests/large_maps.rs runs it: the kernel preallocates
// 64 MiB for it; hwxdp keeps only the chunks the trace writes.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define SERVER_IDS (1 << 24)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SERVER_IDS);
	__type(key, __u32);
	__type(value, __u32);
} server_id_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1 << 21);
	__type(key, __u32);
	__type(value, __u64);
} dst_hits SEC(".maps");

SEC("xdp")
int huge_array(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	__u32 idx = bpf_ntohl(ip->saddr) & (SERVER_IDS - 1);
	__u32 *id = bpf_map_lookup_elem(&server_id_map, &idx);
	if (!id)
		return XDP_ABORTED;
	__u32 dst = bpf_ntohl(ip->daddr) & ((1 << 21) - 1);
	__u64 *hits = bpf_map_lookup_elem(&dst_hits, &dst);
	if (hits)
		*hits += 1;
	if (*id == 0) {
		__u32 fresh = (idx * 2654435761u) | 1;
		bpf_map_update_elem(&server_id_map, &idx, &fresh, BPF_ANY);
		return XDP_PASS;
	}
	*id += 1;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
