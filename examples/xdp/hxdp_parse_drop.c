/* hxdp_parse_drop: the parse-and-drop microbenchmark of the hXDP paper (OSDI 2020, section 5.2.2), written from its
 * description: the Ethernet header is parsed and the packet dropped as soon as that is done.
 *
 * A frame too short for an Ethernet header is aborted; ARP passes (so that a link under test keeps resolving
 * addresses); every other frame is dropped.
 *
 * Trace (crates/gen/src/examples/hxdp_parse_drop.rs): IPv4, IPv6, VLAN-tagged and other ethertypes, ARP, malformed
 * frames.
 */
#include "common.h"

SEC("xdp")
int hxdp_parse_drop(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_ABORTED;
	if (eth->h_proto == bpf_htons(ETH_P_ARP))
		return XDP_PASS;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
