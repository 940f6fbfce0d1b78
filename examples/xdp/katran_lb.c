/* katran_lb: L4 load balancer with IP-in-IP forwarding, after Facebook's Katran.
 *
 * Stands for the Katran workload of the hXDP and program-warping papers. An IPv4 TCP/UDP packet whose (destination,
 * port, protocol) is in `vip_map` is sent to a backend: the flow is looked up in the `conn_table` LRU hash, and on a
 * miss a backend slot is chosen by a flow hash (a `static __noinline` bpf-to-bpf call) among the VIP's
 * BACKENDS_PER_VIP entries of the `reals` array and remembered in `conn_table` (misses counted in `.bss`). The packet
 * is then encapsulated in an outer IPv4 header from the balancer's address (a `const volatile` global in `.rodata`)
 * to the backend, Ethernet addresses rewritten toward the gateway, and sent with XDP_TX. A backend with address 0 drops.
 * ICMP echo requests to a VIP address (key with port 0) are answered in place (XDP_TX). Non-VIP traffic and non-IPv4
 * pass; truncated headers and IHL < 5 drop.
 *
 * Trace (crates/gen/src/examples/katran_lb.rs): `vip_map` holds two TCP/UDP VIPs and an ICMP-enabled VIP, `reals`
 * holds their backends with one empty slot; the trace sends many distinct flows (more than `conn_table`'s
 * max_entries, so the LRU evicts), repeats flows (connection hits), flows that hash to the empty slot, ICMP echo
 * requests and replies to the VIP, non-VIP traffic, IPv6, ARP and truncated or malformed frames.
 */
#include "common.h"

#define BACKENDS_PER_VIP 4
#define MAX_REALS 64

struct vip_key {
	__u32 addr;
	__u16 port;
	__u8 proto;
	__u8 pad;
};

struct vip_meta {
	__u32 flags;
	__u32 vip_num;
};

struct real_pos {
	__u32 pos;
	__u32 pad;
};

struct real {
	__u32 addr;
	__u32 flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct vip_key);
	__type(value, struct vip_meta);
} vip_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 64);
	__type(key, struct ipv4_flow);
	__type(value, struct real_pos);
} conn_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_REALS);
	__type(key, __u32);
	__type(value, struct real);
} reals SEC(".maps");

/* Balancer configuration, fixed at load time. */
const volatile __u32 lb_src_addr = 0x010010ac; /* 172.16.0.1 in network order */
const volatile __u8 gateway_mac[ETH_ALEN] = { 0x02, 0x00, 0x00, 0x00, 0xfe, 0x01 };

/* Connection-table misses, for the operator. */
__u64 conn_misses;

/* Chooses a backend slot; kept out of line as Katran keeps its hashing. */
static __noinline __u32 flow_slot(struct ipv4_flow *flow)
{
	__u32 h = flow->src ^ flow->dst ^ ((__u32)flow->sport | ((__u32)flow->dport << 16)) ^ flow->proto;

	h *= 0x9e3779b1;
	h ^= h >> 16;
	return h % BACKENDS_PER_VIP;
}

static __always_inline int echo_reply(struct ethhdr *eth, struct iphdr *ip, void *data_end)
{
	struct icmphdr *icmp = ipv4_payload(ip);

	if ((void *)(icmp + 1) > data_end)
		return XDP_DROP;
	if (icmp->type != ICMP_ECHO)
		return XDP_PASS;
	icmp_echo_to_reply(icmp);
	swap_ipv4_addrs(ip);
	swap_macs(eth);
	return XDP_TX;
}

SEC("xdp")
int katran_lb(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct ipv4_flow flow = {};
	struct vip_key vip = {};
	struct real_pos *cached;
	struct real_pos pos = {};
	struct vip_meta *meta;
	struct real *backend;
	struct iphdr *ip;
	__u8 front_mac[ETH_ALEN];
	__u16 inner_len;
	__u32 real_addr;
	int verdict;

	verdict = parse_eth_ipv4(data, data_end, &ip);
	if (verdict != PARSE_OK)
		return verdict;

	vip.addr = ip->daddr;
	vip.proto = ip->protocol;
	if (ip->protocol == IPPROTO_ICMP) {
		if (!bpf_map_lookup_elem(&vip_map, &vip))
			return XDP_PASS;
		return echo_reply(eth, ip, data_end);
	}
	if (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	if (ipv4_flow_read(ip, data_end, &flow))
		return XDP_DROP;
	vip.port = flow.dport;
	meta = bpf_map_lookup_elem(&vip_map, &vip);
	if (!meta)
		return XDP_PASS;
	cached = bpf_map_lookup_elem(&conn_table, &flow);
	if (cached) {
		pos.pos = cached->pos;
	} else {
		pos.pos = meta->vip_num * BACKENDS_PER_VIP + flow_slot(&flow);
		bpf_map_update_elem(&conn_table, &flow, &pos, BPF_ANY);
		__sync_fetch_and_add(&conn_misses, 1);
	}
	backend = bpf_map_lookup_elem(&reals, &pos.pos);
	if (!backend || backend->addr == 0)
		return XDP_DROP;
	real_addr = backend->addr;

	inner_len = bpf_ntohs(ip->tot_len);
	__builtin_memcpy(front_mac, eth->h_dest, ETH_ALEN);
	eth = push_outer_header(ctx, sizeof(struct iphdr));
	if (!eth)
		return XDP_DROP;
	set_macs(eth, (const __u8 *)gateway_mac, front_mac);
	eth->h_proto = bpf_htons(ETH_P_IP);
	ipv4_write_ipip((struct iphdr *)(eth + 1), inner_len, lb_src_addr, real_addr);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
