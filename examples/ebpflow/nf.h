/* What the network functions of examples/ebpflow share: the NIC's ports as the programs see them.
 *
 * The eBPFlow NIC's port p arrives with ingress_ifindex NF_FIRST_IFINDEX + p (`hwxdp run/verify --ifindex`, default 1,
 * plus the trace's interface: `hwxdp gen --ports N`). Ports work in pairs, as the thesis's wire connects them:
 * 0 with 1, 2 with 3, ...; the even port of a pair faces the inside (the protected network), the odd one the outside.
 */
#ifndef HWXDP_EBPFLOW_NF_H
#define HWXDP_EBPFLOW_NF_H

#include "common.h"

/* The ingress_ifindex of the NIC's port 0. */
#define NF_FIRST_IFINDEX 1

/* The ifindex of the port paired with the one of `ifindex`: the port number's least significant bit inverted. */
static __always_inline __u32 nf_peer_ifindex(__u32 ifindex)
{
	return ((ifindex - NF_FIRST_IFINDEX) ^ 1) + NF_FIRST_IFINDEX;
}

/* True when the port of `ifindex` faces the inside (an even port number). */
static __always_inline int nf_inside(__u32 ifindex)
{
	return ((ifindex - NF_FIRST_IFINDEX) & 1) == 0;
}

/* The fast path's fixed offsets: an untagged frame with a 20-byte IPv4 header (no options). */
#define NF_ETH_PROTO 12 /* ethertype, network order */
#define NF_IP_VER_IHL 14 /* version and IHL: 0x45 */
#define NF_IP_PROTO 23 /* protocol */
#define NF_IP_ADDRS 26 /* source then destination address, 8 bytes */
#define NF_L4_PORTS 34 /* TCP or UDP source then destination port, 4 bytes */
#define NF_TCP_END 54 /* the end of a 20-byte TCP header */

/* Bytes 12..14 of such a frame (ethertype 0x0800, then 0x45) as the word at NF_ETH_PROTO holds them, and the mask
 * that keeps those three bytes. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NF_FAST_WORD 0x00450008u
#define NF_FAST_MASK 0x00ffffffu
#else
#define NF_FAST_WORD 0x08004500u
#define NF_FAST_MASK 0xffffff00u
#endif

/* True when the frame at `data` has at least `bytes` bytes and is untagged IPv4 with a 20-byte header, so that the
 * fields above lie at their offsets. The functions take a fast path with word loads at fixed offsets for such frames
 * (most of them) and parse every other frame with common.h; both give the same result. Packet words are read
 * unaligned, which the verifier allows where unaligned access is efficient (x86, eBPFlow's DM_FIFO).
 */
static __always_inline int nf_fast_ipv4(void *data, void *data_end, int bytes)
{
	/* The ethertype and the version/IHL byte are bytes 12..14: one word load and one compare. */
	return data + bytes <= data_end && (*(__u32 *)(data + NF_ETH_PROTO) & NF_FAST_MASK) == NF_FAST_WORD;
}

/* Sends the frame out of the port paired with its input port. */
static __always_inline int nf_to_peer(struct xdp_md *ctx)
{
	return bpf_redirect(nf_peer_ifindex(ctx->ingress_ifindex), 0);
}

#endif
