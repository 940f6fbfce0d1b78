/* Parsing, rewriting and checksum code the examples share, so that each example's own file shows what is particular
 * to it. Header structs come from uapi. Every function is `static __always_inline`: once inlined, the verifier sees
 * the same bounds checks as code written in place. A header pointer returned here has been checked against
 * `data_end` for the whole header it points at; NULL means that header is truncated.
 */
#ifndef HWXDP_EXAMPLES_COMMON_H
#define HWXDP_EXAMPLES_COMMON_H

#include <linux/bpf.h>
#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/icmp.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* ---- Checksums ---- */

/* Folds a 32-bit one's-complement sum to 16 bits and complements it, as stored in a header. */
static __always_inline __u16 csum_fold32(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* RFC 1624 incremental update of a stored checksum when one 16-bit word changes from old to new. */
static __always_inline __u16 csum_replace16(__u16 check, __u16 old, __u16 new)
{
	__u32 sum = (__u16)~check;
	sum += (__u16)~old;
	sum += new;
	return csum_fold32(sum);
}

/* Checksum of a 20-byte IPv4 header without options, read as ten 16-bit words. */
static __always_inline __u16 ipv4_header_csum(const __u16 *words)
{
	__u32 sum = 0;
#pragma clang loop unroll(full)
	for (int i = 0; i < 10; i++)
		sum += words[i];
	return csum_fold32(sum);
}

/* ---- Ethernet and VLAN tags ---- */

/* An 802.1Q or 802.1ad tag as it follows the Ethernet addresses: tag control word, then the next ethertype. */
struct vlan_hdr {
	__be16 tci;
	__be16 next_proto;
};

/* How many stacked tags skip_eth_vlan() walks past; a deeper tag is left for the caller to see. */
#define VLAN_MAX_TAGS 2

/* True for the 802.1Q and 802.1ad ethertypes (network order). */
static __always_inline int is_vlan(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD);
}

/* Checks the Ethernet header at `data` and skips up to VLAN_MAX_TAGS tags after it. Returns the header that follows,
 * with *proto set to its ethertype (network order; still a VLAN type when more tags follow), or NULL when the
 * Ethernet header or a tag is truncated.
 */
static __always_inline void *skip_eth_vlan(void *data, void *data_end, __be16 *proto)
{
	struct ethhdr *eth = data;
	void *cursor = eth + 1;
	__be16 next;

	if (cursor > data_end)
		return NULL;
	next = eth->h_proto;
#pragma clang loop unroll(full)
	for (int i = 0; i < VLAN_MAX_TAGS; i++) {
		struct vlan_hdr *tag = cursor;

		if (!is_vlan(next))
			break;
		if ((void *)(tag + 1) > data_end)
			return NULL;
		next = tag->next_proto;
		cursor = tag + 1;
	}
	*proto = next;
	return cursor;
}

/* Swaps the Ethernet source and destination addresses, to send a frame back where it came from. */
static __always_inline void swap_macs(struct ethhdr *eth)
{
	__u8 tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, tmp, ETH_ALEN);
}

/* Writes both Ethernet addresses of an outgoing frame (the ethertype is left alone). */
static __always_inline void set_macs(struct ethhdr *eth, const __u8 *dest, const __u8 *source)
{
	__builtin_memcpy(eth->h_dest, dest, ETH_ALEN);
	__builtin_memcpy(eth->h_source, source, ETH_ALEN);
}

/* ---- IPv4 and IPv6 ---- */

/* The IPv4 header at `l3` when its fixed 20 bytes fit (IHL and options unchecked), otherwise NULL. */
static __always_inline struct iphdr *ipv4_fixed_header(void *l3, void *data_end)
{
	struct iphdr *ip = l3;

	if ((void *)(ip + 1) > data_end)
		return NULL;
	return ip;
}

/* The IPv4 header at `l3` when its fixed 20 bytes fit and IHL >= 5, so that ipv4_payload() lies past the fixed
 * header; otherwise NULL. Options are not bounds-checked.
 */
static __always_inline struct iphdr *ipv4_header(void *l3, void *data_end)
{
	struct iphdr *ip = ipv4_fixed_header(l3, data_end);

	if (!ip || ip->ihl < 5)
		return NULL;
	return ip;
}

/* Where the IPv4 payload starts: IHL 32-bit words after the header (options included); not bounds-checked. */
static __always_inline void *ipv4_payload(struct iphdr *ip)
{
	return (void *)ip + ip->ihl * 4;
}

/* The fixed IPv6 header at `l3` when it fits, otherwise NULL; extension headers are not walked. */
static __always_inline struct ipv6hdr *ipv6_header(void *l3, void *data_end)
{
	struct ipv6hdr *ip6 = l3;

	if ((void *)(ip6 + 1) > data_end)
		return NULL;
	return ip6;
}

/* What parse_eth_ipv4() returns when the caller goes on with the packet; any other value is an XDP verdict. */
#define PARSE_OK (-1)

/* Finds the IPv4 header of an untagged frame. Returns PARSE_OK with *ip set when the frame is IPv4 with a fixed
 * header that fits and IHL >= 5; XDP_PASS when it is not IPv4; XDP_DROP when the Ethernet or IPv4 header is
 * truncated or IHL < 5.
 */
static __always_inline int parse_eth_ipv4(void *data, void *data_end, struct iphdr **ip)
{
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	*ip = ipv4_header(eth + 1, data_end);
	if (!*ip)
		return XDP_DROP;
	return PARSE_OK;
}

/* The IPv4 protocol or IPv6 next header of the header at `l3`, whose ethertype is `proto` (network order); 0 for
 * any other ethertype and for an IP header that does not fit.
 */
static __always_inline __u32 ip_protocol(void *l3, void *data_end, __be16 proto)
{
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = ipv4_fixed_header(l3, data_end);

		return ip ? ip->protocol : 0;
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = ipv6_header(l3, data_end);

		return ip6 ? ip6->nexthdr : 0;
	}
	return 0;
}

/* Swaps the IPv4 source and destination addresses; the header checksum stays valid (same words, other order). */
static __always_inline void swap_ipv4_addrs(struct iphdr *ip)
{
	__u32 addr = ip->saddr;

	ip->saddr = ip->daddr;
	ip->daddr = addr;
}

/* Decrements the TTL (the caller checked it is above 1) and updates the header checksum incrementally for the
 * 16-bit word TTL shares with the protocol field.
 */
static __always_inline void ipv4_decrement_ttl(struct iphdr *ip)
{
	__u16 old_word = *(__u16 *)&ip->ttl;

	ip->ttl--;
	ip->check = csum_replace16(ip->check, old_word, *(__u16 *)&ip->ttl);
}

/* Writes a complete 20-byte IP-in-IP outer header (no options, TTL 64, id and fragment fields zero, checksum
 * computed) for an inner IPv4 packet of `inner_len` bytes; addresses in network order.
 */
static __always_inline void ipv4_write_ipip(struct iphdr *outer, __u16 inner_len, __be32 saddr, __be32 daddr)
{
	outer->version = 4;
	outer->ihl = 5;
	outer->tos = 0;
	outer->tot_len = bpf_htons(inner_len + sizeof(struct iphdr));
	outer->id = 0;
	outer->frag_off = 0;
	outer->ttl = 64;
	outer->protocol = IPPROTO_IPIP;
	outer->check = 0;
	outer->saddr = saddr;
	outer->daddr = daddr;
	outer->check = ipv4_header_csum((__u16 *)outer);
}

/* Grows the frame at the front by `outer_len` bytes with bpf_xdp_adjust_head, for an outer header to go between a
 * new Ethernet header and the original L3 packet: the caller writes the whole new Ethernet header and the outer
 * header, which cover the old Ethernet header. Returns the new Ethernet header, with `outer_len` bytes after it
 * checked, or NULL when the helper fails or they do not fit. Packet pointers taken before the call are invalid.
 */
static __always_inline struct ethhdr *push_outer_header(struct xdp_md *ctx, int outer_len)
{
	void *data, *data_end;
	struct ethhdr *eth;

	if (bpf_xdp_adjust_head(ctx, -outer_len))
		return NULL;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) + outer_len > data_end)
		return NULL;
	return eth;
}

/* ---- ICMP, TCP and UDP ---- */

/* An IPv4 TCP/UDP 5-tuple as the examples key their flow maps with: addresses and ports in network order, padded to
 * 16 bytes. Declare it zeroed (`= {}`) so that the padding is part of a map key as zeros.
 */
struct ipv4_flow {
	__u32 src;
	__u32 dst;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
};

/* Turns the ICMP echo request at `icmp` into an echo reply, updating its checksum incrementally. */
static __always_inline void icmp_echo_to_reply(struct icmphdr *icmp)
{
	icmp->type = ICMP_ECHOREPLY;
	icmp->checksum = csum_replace16(icmp->checksum, bpf_htons(ICMP_ECHO << 8), bpf_htons(ICMP_ECHOREPLY << 8));
}

/* Reads the source and destination ports (network order) of the TCP header at `l4` when `proto` is IPPROTO_TCP, of
 * the UDP header otherwise. Returns 0, or -1 when that header is truncated.
 */
static __always_inline int l4_ports(void *l4, void *data_end, __u8 proto, __be16 *sport, __be16 *dport)
{
	if (proto == IPPROTO_TCP) {
		struct tcphdr *tcp = l4;

		if ((void *)(tcp + 1) > data_end)
			return -1;
		*sport = tcp->source;
		*dport = tcp->dest;
		return 0;
	}
	struct udphdr *udp = l4;

	if ((void *)(udp + 1) > data_end)
		return -1;
	*sport = udp->source;
	*dport = udp->dest;
	return 0;
}

/* Fills `flow` from the IPv4 header `ip` (IHL >= 5, see ipv4_header()) and, as l4_ports() reads them, the ports of
 * its TCP or UDP header; the caller has checked that the protocol is one of the two. Returns 0, or -1 when the L4
 * header is truncated (ports and the rest of `flow` then unset).
 */
static __always_inline int ipv4_flow_read(struct iphdr *ip, void *data_end, struct ipv4_flow *flow)
{
	if (l4_ports(ipv4_payload(ip), data_end, ip->protocol, &flow->sport, &flow->dport))
		return -1;
	flow->src = ip->saddr;
	flow->dst = ip->daddr;
	flow->proto = ip->protocol;
	return 0;
}

#endif
