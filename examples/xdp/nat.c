/* nat: dynamic source NAT for TCP and UDP.
 *
 * Stands for the DNAT/NAT workloads of the program-warping and hXDP papers. Outbound packets (source in 10.0.0.0/8)
 * are rewritten to the external address 198.51.100.1 and an external port bound to their (address, port, protocol):
 * the first packet of a flow allocates the binding from the data path, trying up to four candidate ports derived from
 * the flow and inserting each into `nat_in` with BPF_NOEXIST until one is free (a collision moves on to the next
 * candidate; four collisions drop), then records it in `nat_out` with BPF_NOEXIST. Inbound packets to the external
 * address are rewritten back when `nat_in` holds their port, dropped otherwise. Checksums are updated with
 * `bpf_csum_diff` (UDP checksum 0 stays 0); ports are read with `bpf_xdp_load_bytes` and written with
 * `bpf_xdp_store_bytes`. Other traffic passes; truncated headers and IHL < 5 drop.
 *
 * Trace (crates/gen/src/examples/nat.rs): `nat_in` is preloaded with bindings that occupy the candidate ports of some
 * trace flows (NOEXIST collisions, including one flow whose four candidates are all taken) and `nat_out` with one
 * existing binding; the trace sends new outbound flows, repeats them (binding reuse), their replies (inbound hit),
 * unknown inbound ports (miss), UDP with and without checksum, ICMP, IPv6, ARP and truncated or malformed frames.
 */
#include "common.h"

#define INSIDE_NET 0x0a000000 /* 10.0.0.0/8 */
#define INSIDE_MASK 0xff000000
#define EXTERNAL_ADDR 0xc6336401 /* 198.51.100.1 */
#define PORT_BASE 40000
#define PORT_TRIES 4

struct endpoint {
	__u32 addr;
	__u16 port;
	__u8 proto;
	__u8 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct endpoint);   /* inside address, port, protocol */
	__type(value, struct endpoint); /* external address, port, protocol */
} nat_out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct endpoint);   /* external address, port, protocol */
	__type(value, struct endpoint); /* inside address, port, protocol */
} nat_in SEC(".maps");

/* Updates the L4 checksum at `check` for an address and a port that changed (both in network order). */
static __always_inline __u16 l4_csum_update(__u16 check, __u32 old_addr, __u16 old_port, __u32 new_addr,
					    __u16 new_port)
{
	__u32 from[2] = { old_addr, old_port };
	__u32 to[2] = { new_addr, new_port };

	return csum_fold32(bpf_csum_diff(from, sizeof(from), to, sizeof(to), (__u16)~check));
}

/* Binds a new external port for `inside`, or returns 0 when all candidates collide. */
static __always_inline __u16 allocate_port(struct endpoint *inside)
{
	__u32 host = bpf_ntohl(inside->addr);
	__u16 base = PORT_BASE + ((host ^ (host >> 16) ^ bpf_ntohs(inside->port)) & 0xff);
	struct endpoint outside = { .addr = bpf_htonl(EXTERNAL_ADDR), .proto = inside->proto };

#pragma clang loop unroll(full)
	for (int i = 0; i < PORT_TRIES; i++) {
		outside.port = bpf_htons(base + i);
		if (bpf_map_update_elem(&nat_in, &outside, inside, BPF_NOEXIST) == 0) {
			if (bpf_map_update_elem(&nat_out, inside, &outside, BPF_NOEXIST) != 0)
				return 0;
			return outside.port;
		}
	}
	return 0;
}

SEC("xdp")
int nat(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct endpoint key = {};
	struct endpoint *bound;
	__u16 ports[2];
	__u16 *l4_check;
	__u32 l4_off, old_addr, new_addr;
	__u16 old_port, new_port;
	int outbound, verdict;
	struct iphdr *ip;

	verdict = parse_eth_ipv4(data, data_end, &ip);
	if (verdict != PARSE_OK)
		return verdict;
	l4_off = sizeof(struct ethhdr) + ip->ihl * 4;

	if (ip->protocol == IPPROTO_TCP) {
		struct tcphdr *tcp = ipv4_payload(ip);

		if ((void *)(tcp + 1) > data_end)
			return XDP_DROP;
	} else if (ip->protocol == IPPROTO_UDP) {
		struct udphdr *udp = ipv4_payload(ip);

		if ((void *)(udp + 1) > data_end)
			return XDP_DROP;
	} else {
		return XDP_PASS;
	}
	if (bpf_xdp_load_bytes(ctx, l4_off, ports, sizeof(ports)))
		return XDP_DROP;

	key.proto = ip->protocol;
	outbound = (bpf_ntohl(ip->saddr) & INSIDE_MASK) == INSIDE_NET;
	if (outbound) {
		key.addr = ip->saddr;
		key.port = ports[0];
		bound = bpf_map_lookup_elem(&nat_out, &key);
		new_port = bound ? bound->port : allocate_port(&key);
		if (!new_port)
			return XDP_DROP;
		old_addr = ip->saddr;
		old_port = ports[0];
		new_addr = bpf_htonl(EXTERNAL_ADDR);
		ports[0] = new_port;
	} else if (ip->daddr == bpf_htonl(EXTERNAL_ADDR)) {
		key.addr = ip->daddr;
		key.port = ports[1];
		bound = bpf_map_lookup_elem(&nat_in, &key);
		if (!bound)
			return XDP_DROP;
		old_addr = ip->daddr;
		old_port = ports[1];
		new_addr = bound->addr;
		new_port = bound->port;
		ports[1] = new_port;
	} else {
		return XDP_PASS;
	}

	/* The helper calls above invalidated packet pointers: find the headers again. */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	ip = ipv4_fixed_header(data + sizeof(struct ethhdr), data_end);
	if (!ip)
		return XDP_DROP;
	ip->check = csum_fold32(bpf_csum_diff(&old_addr, 4, &new_addr, 4, (__u16)~ip->check));
	if (outbound)
		ip->saddr = new_addr;
	else
		ip->daddr = new_addr;

	if (key.proto == IPPROTO_TCP) {
		struct tcphdr *tcp = ipv4_payload(ip);

		if ((void *)(tcp + 1) > data_end)
			return XDP_DROP;
		l4_check = &tcp->check;
	} else {
		struct udphdr *udp = ipv4_payload(ip);

		if ((void *)(udp + 1) > data_end)
			return XDP_DROP;
		l4_check = &udp->check;
	}
	if (key.proto == IPPROTO_TCP || *l4_check != 0)
		*l4_check = l4_csum_update(*l4_check, old_addr, old_port, new_addr, new_port);

	if (bpf_xdp_store_bytes(ctx, l4_off, ports, sizeof(ports)))
		return XDP_DROP;
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
