// An xdpdump-style packet sampler, as tests/perf_event.rs runs it: bpf_perf_event_output of a small header and the
// first bytes of the packet (BPF_F_CTXLEN_MASK), on this CPU (BPF_F_CURRENT_CPU) or a named one, and the helper's
// failures (other CPU, index beyond the array, unknown flags, more packet bytes than the packet has) counted by result.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} samples SEC(".maps");

/* Results of bpf_perf_event_output by case: [case * 2] the last result, [case * 2 + 1] how many calls; [14] how many
 * samples were lost to a full ring (-ENOSPC). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __s64);
} results SEC(".maps");

struct sample_head {
	__u16 cookie;
	__u16 pkt_len;
	__u8 which;
} __attribute__((packed));

static __always_inline void count(__u32 which, long r)
{
	__u32 last = which * 2, calls = which * 2 + 1;
	__s64 *v = bpf_map_lookup_elem(&results, &last);
	if (v)
		*v = r;
	v = bpf_map_lookup_elem(&results, &calls);
	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("xdp")
int perf_sampler(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 len = data_end - data;
	__u32 which = len % 7;
	struct sample_head head = { .cookie = 0xdead, .pkt_len = len, .which = which };
	__u64 grab = len < 64 ? len : 64;
	__u64 flags;
	long r;

	switch (which) {
	case 0: /* a header alone, on this CPU */
		flags = BPF_F_CURRENT_CPU;
		break;
	case 1: /* the sample form: the header, then the whole packet */
		flags = BPF_F_CURRENT_CPU | (len << 32);
		break;
	case 2: /* CPU 0 by index (the program runs there), the packet's first bytes */
		flags = 0 | (grab << 32);
		break;
	case 3: /* CPU 1's event: not this CPU's */
		flags = 1;
		break;
	case 4: /* beyond max_entries (one per possible CPU) */
		flags = 4096;
		break;
	case 5: /* more packet bytes than the packet has */
		flags = BPF_F_CURRENT_CPU | ((len + 1) << 32);
		break;
	default: /* a flag bpf_perf_event_output does not know */
		flags = BPF_F_CURRENT_CPU | (1ULL << 60);
		break;
	}
	r = bpf_perf_event_output(ctx, &samples, flags, &head, which == 0 ? 3 : sizeof(head));
	count(which, r);
	if (r == -28)
		count(7, r);
	return r == 0 ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
