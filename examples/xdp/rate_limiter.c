/* rate_limiter: per-source-address token bucket.
 *
 * Stands for the rate-limiting workloads of the hXDP and eHDL papers. Each IPv4 source address owns a bucket in
 * `buckets` (a hash map whose value holds a `bpf_spin_lock`): the bucket is refilled to BUCKET_TOKENS at the start of
 * every time window and each packet takes one token; a packet finding the bucket empty is dropped. A new source gets a
 * bucket inserted with BPF_NOEXIST (already charged for its first packet). Non-IPv4 frames pass; truncated IPv4
 * headers drop.
 *
 * Time: windows are `bpf_ktime_get_ns() >> 36`, about 68.7 s. The kernel's clock cannot be mocked, and hwxdp verify
 * runs the kernel and the reference machine on the same packet microseconds apart, so decisions only depend on time
 * at this coarse granularity and both agree except in the rare run that straddles a window boundary.
 *
 * Trace (crates/gen/src/examples/rate_limiter.rs): `buckets` is preloaded with one bucket from a past window (refill
 * path) and one current-looking bucket whose window can never match (also refilled); the trace sends bursts from a
 * few sources, one of them well beyond BUCKET_TOKENS (exceed path, drops), single packets from many new sources
 * (insert path), IPv6, ARP and truncated frames.
 */
#include "common.h"

#define BUCKET_TOKENS 8
#define WINDOW_SHIFT 36

struct bucket {
	struct bpf_spin_lock lock;
	__u32 tokens;
	__u64 window;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct bucket);
} buckets SEC(".maps");

SEC("xdp")
int rate_limiter(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct bucket fresh = {};
	struct bucket *b;
	struct iphdr *ip;
	__u64 window;
	__u32 saddr;
	int allowed;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = ipv4_fixed_header(eth + 1, data_end);
	if (!ip)
		return XDP_DROP;

	saddr = ip->saddr;
	window = bpf_ktime_get_ns() >> WINDOW_SHIFT;
	b = bpf_map_lookup_elem(&buckets, &saddr);
	if (!b) {
		fresh.tokens = BUCKET_TOKENS - 1;
		fresh.window = window;
		if (bpf_map_update_elem(&buckets, &saddr, &fresh, BPF_NOEXIST) != 0)
			return XDP_DROP;
		return XDP_PASS;
	}

	bpf_spin_lock(&b->lock);
	if (b->window != window) {
		b->window = window;
		b->tokens = BUCKET_TOKENS;
	}
	allowed = b->tokens > 0;
	if (allowed)
		b->tokens--;
	bpf_spin_unlock(&b->lock);

	return allowed ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
