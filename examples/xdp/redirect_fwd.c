/* redirect_fwd: port forwarding through a DEVMAP.
 *
 * Stands for the redirect/forwarding micro-benchmarks of hXDP and eBPFlow (per-port output crossbar). IPv4 packets are
 * redirected through the `tx_ports` DEVMAP keyed by the last byte of their destination address, falling back to
 * XDP_PASS when that slot is empty or out of range (the fallback action in the flags of `bpf_redirect_map`); IPv6
 * packets use the ingress interface index as the key and fall back to XDP_DROP. ARP is sent to a fixed interface
 * with `bpf_redirect` (`arp_ifindex`, a `const volatile` global). Other ethertypes pass; truncated frames drop.
 *
 * Trace (crates/gen/src/examples/redirect_fwd.rs): `tx_ports` is preloaded with slots 1 (the ingress interface in a
 * test run, the loopback device) and a few destination bytes, all pointing at interface 1; the trace sends IPv4 to
 * populated, empty and out-of-range slots, IPv6, ARP, other ethertypes and truncated frames.
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} tx_ports SEC(".maps");

/* Interface ARP frames are sent to. */
const volatile __u32 arp_ifindex = 1;

SEC("xdp")
int redirect_fwd(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;

	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = ipv4_fixed_header(eth + 1, data_end);
		__u32 port;

		if (!ip)
			return XDP_DROP;
		port = bpf_ntohl(ip->daddr) & 0xff;
		return bpf_redirect_map(&tx_ports, port, XDP_PASS);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6))
		return bpf_redirect_map(&tx_ports, ctx->ingress_ifindex, XDP_DROP);
	if (eth->h_proto == bpf_htons(ETH_P_ARP))
		return bpf_redirect(arp_ifindex, 0);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
