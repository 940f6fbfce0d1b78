/* firewall: stateful UDP/TCP firewall.
 *
 * Stands for hXDP's firewall (OSDI 2020). The protected network is 10.0.0.0/8: a TCP or UDP packet from inside is
 * outbound, creates (or refreshes) the state of its 5-tuple in `flows` and passes; a packet from outside passes only
 * when the reversed 5-tuple has state, otherwise it is logged into the `drop_log` ring buffer and dropped (when the
 * ring buffer is full, the loss is counted in `fw_stats`). Non-IPv4 frames and other IPv4 protocols pass; truncated
 * or malformed headers (IHL < 5, short L4 header) are dropped.
 *
 * Trace (crates/gen/src/examples/firewall.rs): `flows` is preloaded with one established flow; the trace sends
 * outbound flows and then their replies (state creation then use), replies to the preloaded flow, unsolicited inbound
 * packets (enough to fill the 4 KiB ring buffer), ICMP, ARP, IPv6, IPv4 with options, and truncated frames.
 */
#include "common.h"

#define INSIDE_NET 0x0a000000 /* 10.0.0.0 */
#define INSIDE_MASK 0xff000000

enum fw_counter { FW_PASSED = 0, FW_DROPPED = 1, FW_LOG_LOST = 2, FW_COUNTERS = 3 };

/* Keys always in outbound orientation: src is the inside host. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct ipv4_flow);
	__type(value, __u64);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} drop_log SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FW_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} fw_stats SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&fw_stats, &which);

	if (c)
		__sync_fetch_and_add(c, 1);
}

SEC("xdp")
int firewall(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ipv4_flow key = {};
	struct iphdr *ip;
	__u64 one = 1;
	__u64 *state;
	int verdict;

	verdict = parse_eth_ipv4(data, data_end, &ip);
	if (verdict != PARSE_OK)
		return verdict;
	if (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	if (ipv4_flow_read(ip, data_end, &key))
		return XDP_DROP;

	if ((bpf_ntohl(ip->saddr) & INSIDE_MASK) == INSIDE_NET) {
		state = bpf_map_lookup_elem(&flows, &key);
		if (state)
			__sync_fetch_and_add(state, 1);
		else
			bpf_map_update_elem(&flows, &key, &one, BPF_ANY);
		count(FW_PASSED);
		return XDP_PASS;
	}

	/* Inbound: look the flow up as the inside host sent it. */
	key.src = ip->daddr;
	key.dst = ip->saddr;
	key.sport ^= key.dport;
	key.dport ^= key.sport;
	key.sport ^= key.dport;
	state = bpf_map_lookup_elem(&flows, &key);
	if (state) {
		__sync_fetch_and_add(state, 1);
		count(FW_PASSED);
		return XDP_PASS;
	}
	if (bpf_ringbuf_output(&drop_log, &key, sizeof(key), 0) != 0)
		count(FW_LOG_LOST);
	count(FW_DROPPED);
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
