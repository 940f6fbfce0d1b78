/* rxq_counter: counts packets and bytes per receive queue and per ingress interface.
 *
 * Stands for the per-queue statistics programs used to check multi-queue dispatch in eBPFlow and hXDP. `rxq_stats`
 * is indexed by `rx_queue_index` and `ifindex_stats` by `ingress_ifindex` (both ARRAY maps of MAX_SLOTS entries); an
 * index beyond the array is counted in the `overflow` array instead. Runt frames (under the 60-byte Ethernet minimum)
 * are counted in `overflow` too and dropped; everything else passes.
 *
 * Trace (crates/gen/src/examples/rxq_counter.rs): `rxq_stats` is preloaded with a non-zero slot 0 (counters
 * accumulate on preloaded values); the trace mixes frames of many sizes around the 60-byte minimum, header-only
 * frames and the generic malformed frames. Queue and interface come from the run's metadata, not the packets.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define MAX_SLOTS 64
#define ETH_MIN_FRAME 60

enum overflow_slot { OVERFLOW_QUEUE = 0, OVERFLOW_IFINDEX = 1, OVERFLOW_RUNT = 2, OVERFLOW_SLOTS = 3 };

struct counters {
	__u64 packets;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct counters);
} rxq_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct counters);
} ifindex_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, OVERFLOW_SLOTS);
	__type(key, __u32);
	__type(value, struct counters);
} overflow SEC(".maps");

static __always_inline void add(void *map, __u32 index, __u32 overflow_slot, __u64 bytes)
{
	struct counters *c = bpf_map_lookup_elem(map, &index);

	if (!c)
		c = bpf_map_lookup_elem(&overflow, &overflow_slot);
	if (!c)
		return;
	__sync_fetch_and_add(&c->packets, 1);
	__sync_fetch_and_add(&c->bytes, bytes);
}

SEC("xdp")
int rxq_counter(struct xdp_md *ctx)
{
	__u64 bytes = ctx->data_end - ctx->data;

	if (bytes < ETH_MIN_FRAME) {
		add(&overflow, OVERFLOW_RUNT, OVERFLOW_RUNT, bytes);
		return XDP_DROP;
	}
	add(&rxq_stats, ctx->rx_queue_index, OVERFLOW_QUEUE, bytes);
	add(&ifindex_stats, ctx->ingress_ifindex, OVERFLOW_IFINDEX, bytes);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
