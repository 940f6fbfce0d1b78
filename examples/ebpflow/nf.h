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

/* Sends the frame out of the port paired with its input port. */
static __always_inline int nf_to_peer(struct xdp_md *ctx)
{
	return bpf_redirect(nf_peer_ifindex(ctx->ingress_ifindex), 0);
}

#endif
