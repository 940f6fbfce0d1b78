//! The XDP helpers the analyses know: argument counts, and which arguments point at memory the helper reads.

/// Memory a helper reads through one of its arguments (registers are numbered as in the ISA, r1-r5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemArg {
    /// A key of the map in r1, `key_size` bytes.
    MapKey(u8),
    /// A value of the map in r1, `value_size` bytes.
    MapValue(u8),
    /// A buffer whose size in bytes is in another argument register.
    Sized {
        /// The pointer's register.
        ptr: u8,
        /// The size's register.
        size: u8,
    },
}

/// One helper, by kernel id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Helper {
    /// `enum bpf_func_id` value.
    pub id: i32,
    /// The kernel's name.
    pub name: &'static str,
    /// How many of r1-r5 it reads.
    pub args: u8,
    /// The memory it reads through pointer arguments.
    pub reads: &'static [MemArg],
    /// The memory it writes through pointer arguments.
    pub writes: &'static [MemArg],
}

const fn h(id: i32, name: &'static str, args: u8, reads: &'static [MemArg]) -> Helper {
    Helper {
        id,
        name,
        args,
        reads,
        writes: &[],
    }
}

const fn writing(helper: Helper, writes: &'static [MemArg]) -> Helper {
    Helper { writes, ..helper }
}

use MemArg::{MapKey, MapValue, Sized};

/// Helpers XDP programs call, by id.
pub const HELPERS: &[Helper] = &[
    h(1, "bpf_map_lookup_elem", 2, &[MapKey(2)]),
    h(2, "bpf_map_update_elem", 4, &[MapKey(2), MapValue(3)]),
    h(3, "bpf_map_delete_elem", 2, &[MapKey(2)]),
    h(5, "bpf_ktime_get_ns", 0, &[]),
    h(6, "bpf_trace_printk", 5, &[Sized { ptr: 1, size: 2 }]),
    h(7, "bpf_get_prandom_u32", 0, &[]),
    h(8, "bpf_get_smp_processor_id", 0, &[]),
    h(12, "bpf_tail_call", 3, &[]),
    h(23, "bpf_redirect", 2, &[]),
    h(25, "bpf_perf_event_output", 5, &[Sized { ptr: 4, size: 5 }]),
    h(
        28,
        "bpf_csum_diff",
        5,
        &[Sized { ptr: 1, size: 2 }, Sized { ptr: 3, size: 4 }],
    ),
    h(44, "bpf_xdp_adjust_head", 2, &[]),
    h(51, "bpf_redirect_map", 3, &[]),
    h(54, "bpf_xdp_adjust_meta", 2, &[]),
    h(65, "bpf_xdp_adjust_tail", 2, &[]),
    writing(
        h(69, "bpf_fib_lookup", 4, &[Sized { ptr: 2, size: 3 }]),
        &[Sized { ptr: 2, size: 3 }],
    ),
    h(87, "bpf_map_push_elem", 3, &[MapValue(2)]),
    writing(h(88, "bpf_map_pop_elem", 2, &[]), &[MapValue(2)]),
    writing(h(89, "bpf_map_peek_elem", 2, &[]), &[MapValue(2)]),
    h(93, "bpf_spin_lock", 1, &[]),
    h(94, "bpf_spin_unlock", 1, &[]),
    h(130, "bpf_ringbuf_output", 4, &[Sized { ptr: 2, size: 3 }]),
    h(131, "bpf_ringbuf_reserve", 3, &[]),
    h(132, "bpf_ringbuf_submit", 2, &[]),
    h(133, "bpf_ringbuf_discard", 2, &[]),
    h(188, "bpf_xdp_get_buff_len", 1, &[]),
    writing(
        h(189, "bpf_xdp_load_bytes", 4, &[]),
        &[Sized { ptr: 3, size: 4 }],
    ),
    h(190, "bpf_xdp_store_bytes", 4, &[Sized { ptr: 3, size: 4 }]),
];

/// The `bpf_map_lookup_elem` id, whose result the region analysis types.
pub const MAP_LOOKUP_ELEM: i32 = 1;

/// The helper with kernel id `id`.
pub fn helper(id: i32) -> Option<&'static Helper> {
    HELPERS.iter().find(|h| h.id == id)
}

/// How many of r1-r5 helper `id` reads: all five for a helper not in [`HELPERS`].
pub fn arity(id: i32) -> u8 {
    helper(id).map_or(5, |h| h.args)
}
