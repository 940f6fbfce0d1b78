/* ethertype_counter: counts packets per Ethernet type.
 *
 * Stands for Listing 1 of the eHDL paper (ASPLOS 2023): the ethertype is the key of the `stats` hash map; a known key
 * has its counter bumped with an atomic add, an unknown one is inserted with a count of one (BPF_NOEXIST, so a
 * concurrent insert is not overwritten). When the map is full the insert fails and the frame is dropped; frames too
 * short for an Ethernet header are dropped too; everything else passes.
 *
 * Trace (crates/gen/src/examples/ethertype_counter.rs): `stats` is preloaded with IPv4 and ARP counters (hit path from
 * the first packet); the trace mixes IPv4, IPv6, ARP, VLAN-tagged and then more distinct ethertypes than
 * `max_entries` so the insert fails, plus header-only and malformed frames.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32);
	__type(key, __u16);
	__type(value, __u64);
} stats SEC(".maps");

SEC("xdp")
int ethertype_counter(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u64 one = 1;
	__u64 *count;
	__u16 proto;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;

	proto = bpf_ntohs(eth->h_proto);
	count = bpf_map_lookup_elem(&stats, &proto);
	if (count) {
		__sync_fetch_and_add(count, 1);
	} else if (bpf_map_update_elem(&stats, &proto, &one, BPF_NOEXIST) != 0) {
		return XDP_DROP;
	}
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
