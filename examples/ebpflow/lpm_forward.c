/* lpm_forward: the eBPFlow thesis's LPM forwarding (LPMF, section 5.1, Table 5.1).
 *
 * Forwards IPv4 by the longest prefix that matches the destination address: `routes` (an LPM_TRIE, the NIC's TCAM;
 * up to 32 routes, as the thesis's loader takes) gives the next hop's MAC address, our own MAC address on that link
 * and the output port; the frame's MAC addresses are rewritten and it leaves through `out_ports` (a DEVMAP from port
 * number to ifindex: 0 -> 1, 1 -> 2, ... as lpm_forward.maps.json loads it). No route, or a port `out_ports` does not
 * hold: dropped. Non-IPv4 frames go to the host (XDP_PASS); truncated frames and IHL < 5 are dropped. The TTL is
 * left alone, as the thesis's forwarding does.
 *
 * The next hop is read from the coprocessor's value memory as two words (each access is a coprocessor request on
 * eBPFlow) and written into the frame as two.
 *
 * Maps: lpm_forward.maps.json (routes for the addresses `hwxdp gen` writes: 10.0.0.0/8 nested with /9 and /10,
 * 203.0.0.0/17; 203.0.128.0/17 unrouted). Trace: `hwxdp gen` (its generic mix) or tests/ebpflow_nfs.rs.
 */
#include "nf.h"

struct lpm_key {
	__u32 prefixlen;
	__u32 addr;
};

/* 16 bytes: the two MAC addresses as the frame starts with them, then the output port. */
struct next_hop {
	__u8 dmac[ETH_ALEN];
	__u8 smac[ETH_ALEN];
	__u32 port;
} __attribute__((aligned(8)));

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lpm_key);
	__type(value, struct next_hop);
} routes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u32);
} out_ports SEC(".maps");

SEC("xdp")
int lpm_forward(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct lpm_key key;
	struct next_hop *hop;
	struct iphdr *ip;
	__u64 macs;
	__u64 rest;
	int verdict;

	key.prefixlen = 32;
	if (nf_fast_ipv4(data, data_end, NF_L4_PORTS)) {
		/* The fast path (nf.h): a 20-byte IPv4 header. */
		key.addr = *(__u32 *)(data + NF_IP_ADDRS + 4);
	} else {
		verdict = parse_eth_ipv4(data, data_end, &ip);
		if (verdict != PARSE_OK)
			return verdict;
		key.addr = ip->daddr;
	}
	hop = bpf_map_lookup_elem(&routes, &key);
	if (!hop)
		return XDP_DROP;
	/* Bytes 0..7 of the frame: dmac and the first two bytes of smac; bytes 8..11 the rest of smac. */
	macs = *(__u64 *)hop;
	rest = *((__u64 *)hop + 1);
	*(__u64 *)data = macs;
	*(__u32 *)(data + 8) = (__u32)rest;
	return bpf_redirect_map(&out_ports, rest >> 32, XDP_DROP);
}

char _license[] SEC("license") = "GPL";
