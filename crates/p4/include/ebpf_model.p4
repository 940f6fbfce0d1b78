/* hwxdp bundled eBPF packet filter architecture: a parser and a control that decides whether a packet passes. */
#ifndef HWXDP_EBPF_MODEL_P4
#define HWXDP_EBPF_MODEL_P4

#include <core.p4>

/* An array of packet counters kept in an eBPF map; sparse counters use a hash map. */
extern CounterArray {
    CounterArray(bit<32> max_index, bool sparse);
    void increment(in bit<32> index);
    void add(in bit<32> index, in bit<32> value);
}

/* Table implementation backed by an eBPF array map of the given size. */
extern array_table {
    array_table(bit<32> size);
}

/* Table implementation backed by an eBPF hash map of the given size. */
extern hash_table {
    hash_table(bit<32> size);
}

parser parse<H>(packet_in packet, out H headers);
control filter<H>(inout H headers, out bool accept);

package ebpfFilter<H>(parse<H> prs, filter<H> filt);

#endif
