/* hxdp_firewall: the simple stateful firewall of the hXDP paper (OSDI 2020, section 2), written from its description.
 *
 * The Ethernet, IPv4 and TCP/UDP headers are parsed into the flow's 5-tuple. The hashmap key orders the tuple
 * absolutely (the lower address, with its port, first), so that both directions of a flow map to the same entry.
 * A packet from the internal side creates (or refreshes) its flow's entry and is forwarded; a packet from the
 * external side is forwarded only when the lookup finds an entry, otherwise it is dropped. Non-IPv4 frames and other
 * IPv4 protocols pass; truncated headers and IPv4 with options (IHL != 5) are dropped.
 *
 * The paper decides the side by the input port. hwxdp's traces arrive on one interface (`ingress_ifindex` 1 on every
 * packet, which is also what the kernel's test runs give), so the side here is the source address: the internal
 * network is 10.0.0.0/8, the hosts behind the internal port. `flows` holds the packets seen per flow.
 *
 * Trace (crates/gen/src/examples/hxdp_firewall.rs): one preloaded established flow and its packets both ways,
 * internal flows then their replies, unsolicited external packets, ICMP, ARP, IPv6, IP options, malformed frames.
 */
#include "common.h"

#define INSIDE_NET 0x0a000000 /* 10.0.0.0 */
#define INSIDE_MASK 0xff000000

/* A flow in absolute order: (addr_lo, port_lo) is the endpoint with the lower address (the lower port when the
 * addresses are equal), network byte order throughout.
 */
struct fw_key {
	__u32 addr_lo;
	__u32 addr_hi;
	__u16 port_lo;
	__u16 port_hi;
	__u8 proto;
	__u8 pad[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct fw_key);
	__type(value, __u64);
} fw_flows SEC(".maps");

SEC("xdp")
int hxdp_firewall(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct fw_key key = {};
	struct udphdr *l4;
	struct iphdr *ip;
	__u64 one = 1;
	__u32 saddr, daddr;
	__u16 sport, dport;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return XDP_DROP;
	if (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	if (ip->ihl != 5)
		return XDP_DROP;
	/* TCP and UDP both start with the two ports; 8 bytes is the shorter (UDP) header. */
	l4 = (void *)(ip + 1);
	if ((void *)(l4 + 1) > data_end)
		return XDP_DROP;
	saddr = ip->saddr;
	daddr = ip->daddr;
	sport = l4->source;
	dport = l4->dest;
	if (saddr < daddr || (saddr == daddr && sport < dport)) {
		key.addr_lo = saddr;
		key.addr_hi = daddr;
		key.port_lo = sport;
		key.port_hi = dport;
	} else {
		key.addr_lo = daddr;
		key.addr_hi = saddr;
		key.port_lo = dport;
		key.port_hi = sport;
	}
	key.proto = ip->protocol;

	if ((bpf_ntohl(saddr) & INSIDE_MASK) == INSIDE_NET) {
		bpf_map_update_elem(&fw_flows, &key, &one, BPF_ANY);
		return XDP_PASS;
	}
	if (bpf_map_lookup_elem(&fw_flows, &key))
		return XDP_PASS;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
