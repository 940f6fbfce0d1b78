/* The C externs of feat_c_extern.p4, written against the interface p4c-ebpf's generated code gives them. */
#include "test.h"

REGISTER_START()
REGISTER_TABLE(sources_seen, BPF_MAP_TYPE_HASH, sizeof(u64), sizeof(u32), 64)
REGISTER_TABLE(last_note, BPF_MAP_TYPE_ARRAY, sizeof(u32), sizeof(u32), 1)
REGISTER_END()

/* Host-order numbers: a is the high byte of the result before the XOR, salt the low one. */
inline __attribute__((always_inline)) u16 mix(const struct val_h v, u8 salt)
{
    return (u16)(((u16)v.a << 8) | salt) ^ v.b ^ (u16)(v.c >> 16);
}

/* A frame with a val header counts as seen from the second one of its source address on. */
inline __attribute__((always_inline)) u8 seen_before(const struct hdrs_t h)
{
    u64 src = h.eth.src;
    u32 one = 1;
    if (!h.val.ebpf_valid)
        return 0;
    if (BPF_MAP_LOOKUP_ELEM(sources_seen, &src))
        return 1;
    BPF_MAP_UPDATE_ELEM(sources_seen, &src, &one, BPF_ANY);
    return 0;
}

inline __attribute__((always_inline)) void note(u32 c)
{
    u32 zero = 0;
    BPF_MAP_UPDATE_ELEM(last_note, &zero, &c, BPF_ANY);
}
