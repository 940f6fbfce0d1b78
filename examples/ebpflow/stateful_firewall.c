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
 * A lookup before the update keeps established connections at one coprocessor lookup a packet. TCP and UDP frames
 * with a 20-byte IPv4 header take a fast path (nf.h) that copies the key out of the frame as three words; the
 * reversed key of an inbound packet is the same words rotated.
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
	__type(key, struct ipv4_flow); /* the same bytes as struct fw_key */
	__type(value, __u32);
} connections SEC(".maps");

/* The key of `connections`: the bytes of struct ipv4_flow (common.h) as three words. */
struct fw_key {
	__u64 addrs; /* src, dst as in the frame */
	__u32 ports; /* sport, dport as in the frame */
	__u32 proto; /* the protocol in the low byte, then the zero padding */
};

/* A TCP or UDP packet's verdict from its input port's `ifindex` and its source and destination addresses and ports
 * as they lie in the frame (in the frame's byte order, source first). */
static __always_inline int fw_track(__u32 ifindex, __u64 addrs, __u32 ports, __u32 proto)
{
	struct fw_key key = { .addrs = addrs, .ports = ports, .proto = proto };
	/* The output port, computed once before the map calls (it survives them in a callee-saved register). */
	__u32 peer = nf_peer_ifindex(ifindex);

	if (nf_inside(ifindex)) {
		/* Most outbound packets belong to a connection already open: that path falls through. */
		if (__builtin_expect(!bpf_map_lookup_elem(&connections, &key), 0)) {
			__u32 open = CONN_OPEN;

			if (bpf_map_update_elem(&connections, &key, &open, BPF_ANY) != 0)
				return XDP_DROP;
		}
		return bpf_redirect(peer, 0);
	}
	key.addrs = (addrs >> 32) | (addrs << 32);
	key.ports = (ports >> 16) | (ports << 16);
	if (!bpf_map_lookup_elem(&connections, &key))
		return XDP_DROP;
	return bpf_redirect(peer, 0);
}

SEC("xdp")
int stateful_firewall(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u32 ifindex = ctx->ingress_ifindex;
	__be16 sport, dport;
	struct iphdr *ip;
	int verdict;

	if (nf_fast_ipv4(data, data_end, NF_TCP_END)) {
		__u8 proto = *(__u8 *)(data + NF_IP_PROTO);

		if (proto == IPPROTO_TCP || proto == IPPROTO_UDP)
			return fw_track(ifindex, *(__u64 *)(data + NF_IP_ADDRS), *(__u32 *)(data + NF_L4_PORTS), proto);
	}
	/* Everything else: parsed in full, then the same words as the fast path reads. */
	verdict = parse_eth_ipv4(data, data_end, &ip);
	if (verdict != PARSE_OK)
		return verdict;
	if (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP)
		return nf_inside(ctx->ingress_ifindex) ? nf_to_peer(ctx) : XDP_DROP;
	if (l4_ports(ipv4_payload(ip), data_end, ip->protocol, &sport, &dport))
		return XDP_DROP;
	return fw_track(ifindex, ((__u64)ip->daddr << 32) | ip->saddr, ((__u32)dport << 16) | sport, ip->protocol);
}

char _license[] SEC("license") = "GPL";
