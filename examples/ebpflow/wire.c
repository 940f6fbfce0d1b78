/* wire: the eBPFlow thesis's baseline network function (section 5.1, Table 5.1).
 *
 * Connects adjacent ports in pairs, as a cable would: every frame, whatever it holds, leaves by the port whose number
 * is its input port's with the least significant bit inverted (0 <-> 1, 2 <-> 3), through bpf_redirect; the frame is
 * not read or changed.
 *
 * Trace: any (`hwxdp gen` writes the generic mix for it; `--ports N` spreads it over the ports).
 */
#include "nf.h"

SEC("xdp")
int wire(struct xdp_md *ctx)
{
	return nf_to_peer(ctx);
}

char _license[] SEC("license") = "GPL";
