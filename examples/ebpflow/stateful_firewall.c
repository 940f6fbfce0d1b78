/* stateful_firewall: the eBPFlow thesis's stateful firewall (SFW, section 5.1, Table 5.1).
 *
 * Tracks connections by their IPv4 5-tuple and lets in from the outside only packets of a connection the inside
 * opened. Ports work in pairs (nf.h): traffic entering an even (inside) port is outbound, an odd (outside) port's is
 * inbound; what passes leaves by the paired port.
 *
 * - Outbound TCP or UDP: the 5-tuple, as the inside host sent it, gets an entry in `connections` when it has none yet
 *   (a table full of other connections drops the packet, failing closed), and the packet is forwarded.
 * - Inbound TCP or UDP: forwarded when the reversed 5-tuple is in `connections` (a reply), dropped otherwise.
 * - Other IPv4 protocols: forwarded outbound, dropped inbound. Non-IPv4 frames (ARP, IPv6) go to the host
 *   (XDP_PASS). Truncated frames, IHL < 5 and short TCP/UDP headers are dropped.
 *
 * A lookup before the update keeps established connections at one coprocessor lookup a packet.
 *
 * Trace (tests/ebpflow_nfs.rs): outbound connections and their replies on a pair of ports, unsolicited inbound
 * packets, ICMP both ways, ARP and truncated frames.
 */
#include "nf.h"

/* The value of an entry: the connection was opened from the inside. */
#define CONN_OPEN 1

/* Keys in outbound orientation: src is the inside host. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ipv4_flow);
	__type(value, __u32);
} connections SEC(".maps");

SEC("xdp")
int stateful_firewall(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	int inside = nf_inside(ctx->ingress_ifindex);
	struct ipv4_flow key = {};
	__u32 open = CONN_OPEN;
	struct iphdr *ip;
	__u16 port;
	int verdict;

	verdict = parse_eth_ipv4(data, data_end, &ip);
	if (verdict != PARSE_OK)
		return verdict;
	if (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP)
		return inside ? nf_to_peer(ctx) : XDP_DROP;
	if (ipv4_flow_read(ip, data_end, &key))
		return XDP_DROP;

	if (inside) {
		if (!bpf_map_lookup_elem(&connections, &key) &&
		    bpf_map_update_elem(&connections, &key, &open, BPF_ANY) != 0)
			return XDP_DROP;
		return nf_to_peer(ctx);
	}
	/* Inbound: a reply travels the connection's 5-tuple reversed. */
	key.src = ip->daddr;
	key.dst = ip->saddr;
	port = key.sport;
	key.sport = key.dport;
	key.dport = port;
	if (!bpf_map_lookup_elem(&connections, &key))
		return XDP_DROP;
	return nf_to_peer(ctx);
}

char _license[] SEC("license") = "GPL";
