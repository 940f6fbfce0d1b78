/* icmp_reply: answers ICMP echo requests in place, trimming oversized ones.
 *
 * Stands for the ICMP responder used as a micro-benchmark by hXDP and eHDL. An IPv4 (no options, not fragmented)
 * ICMP echo request whose IP total length matches the frame is turned into an echo reply: addresses swapped, type 0,
 * and sent back with XDP_TX. A frame longer than MAX_FRAME bytes is first trimmed to MAX_FRAME with
 * `bpf_xdp_adjust_tail` (the reply carries a truncated payload, like a rate-limited responder), which rewrites the IP
 * total length and needs a full ICMP checksum; shorter requests get an incremental checksum update. Other ICMP types,
 * other protocols, fragments, IP options and frames whose length disagrees with the IP header pass; truncated headers
 * drop.
 *
 * Trace (crates/gen/src/examples/icmp_reply.rs): no map; the trace sends echo requests of many sizes below and above
 * MAX_FRAME (odd and even payload lengths), echo replies, TCP/UDP, fragments, options, padded frames, IPv6, ARP and
 * truncated frames.
 */
#include "common.h"

#define MAX_FRAME 98 /* Ethernet + IPv4 + ICMP + 56 bytes: a default ping */
#define IP_FRAGMENT_MASK 0x3fff
#define ICMP_MAX_LEN (MAX_FRAME - sizeof(struct ethhdr) - sizeof(struct iphdr))

/* Checksum of the ICMP message filling a frame of exactly MAX_FRAME bytes (the caller checked the bounds), with the
 * checksum field zero.
 */
static __always_inline __u16 icmp_full_csum(const __u16 *words)
{
	__u32 sum = 0;

#pragma clang loop unroll(full)
	for (int i = 0; i < ICMP_MAX_LEN / 2; i++)
		sum += words[i];
	return csum_fold32(sum);
}

SEC("xdp")
int icmp_reply(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct icmphdr *icmp;
	struct iphdr *ip;
	__u32 frame_len;
	__u16 old_word;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	icmp = (void *)(ip + 1);
	if ((void *)(icmp + 1) > data_end)
		return XDP_DROP;
	if (ip->ihl != 5 || ip->protocol != IPPROTO_ICMP || (ip->frag_off & bpf_htons(IP_FRAGMENT_MASK)))
		return XDP_PASS;
	if (icmp->type != ICMP_ECHO)
		return XDP_PASS;
	frame_len = data_end - data;
	if (bpf_ntohs(ip->tot_len) + sizeof(*eth) != frame_len)
		return XDP_PASS;

	if (frame_len > MAX_FRAME) {
		if (bpf_xdp_adjust_tail(ctx, MAX_FRAME - (int)frame_len))
			return XDP_DROP;
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		eth = data;
		ip = (void *)(eth + 1);
		icmp = (void *)(ip + 1);
		if (data + MAX_FRAME > data_end)
			return XDP_DROP;
		old_word = ip->tot_len;
		ip->tot_len = bpf_htons(MAX_FRAME - sizeof(*eth));
		ip->check = csum_replace16(ip->check, old_word, ip->tot_len);
		icmp->type = ICMP_ECHOREPLY;
		icmp->checksum = 0;
		icmp->checksum = icmp_full_csum((__u16 *)icmp);
	} else {
		icmp_echo_to_reply(icmp);
	}
	swap_ipv4_addrs(ip);
	swap_macs(eth);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
