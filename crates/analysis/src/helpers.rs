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
    /// `enum bpf_func_id` value ([`Helper::name`] gives its name).
    pub id: i32,
    /// How many of r1-r5 it reads.
    pub args: u8,
    /// The memory it reads through pointer arguments.
    pub reads: &'static [MemArg],
    /// The memory it writes through pointer arguments.
    pub writes: &'static [MemArg],
}

const fn h(id: i32, args: u8, reads: &'static [MemArg]) -> Helper {
    Helper {
        id,
        args,
        reads,
        writes: &[],
    }
}

impl Helper {
    /// The kernel's name, from the one helper-name table ([`hwxdp_ebpf::abi::HELPER_NAMES`]).
    pub fn name(&self) -> &'static str {
        hwxdp_ebpf::helper_name(self.id).unwrap_or("unknown")
    }
}

const fn writing(helper: Helper, writes: &'static [MemArg]) -> Helper {
    Helper { writes, ..helper }
}

use MemArg::{MapKey, MapValue, Sized};

/// Helpers XDP programs call, by id.
pub const HELPERS: &[Helper] = &[
    // bpf_map_lookup_elem
    h(1, 2, &[MapKey(2)]),
    // bpf_map_update_elem
    h(2, 4, &[MapKey(2), MapValue(3)]),
    // bpf_map_delete_elem
    h(3, 2, &[MapKey(2)]),
    // bpf_ktime_get_ns
    h(5, 0, &[]),
    // bpf_trace_printk
    h(6, 5, &[Sized { ptr: 1, size: 2 }]),
    // bpf_get_prandom_u32
    h(7, 0, &[]),
    // bpf_get_smp_processor_id
    h(8, 0, &[]),
    // bpf_tail_call
    h(12, 3, &[]),
    // bpf_redirect
    h(23, 2, &[]),
    // bpf_perf_event_output
    h(25, 5, &[Sized { ptr: 4, size: 5 }]),
    // bpf_csum_diff
    h(
        28,
        5,
        &[Sized { ptr: 1, size: 2 }, Sized { ptr: 3, size: 4 }],
    ),
    // bpf_xdp_adjust_head
    h(44, 2, &[]),
    // bpf_redirect_map
    h(51, 3, &[]),
    // bpf_xdp_adjust_meta
    h(54, 2, &[]),
    // bpf_xdp_adjust_tail
    h(65, 2, &[]),
    // bpf_fib_lookup
    writing(
        h(69, 4, &[Sized { ptr: 2, size: 3 }]),
        &[Sized { ptr: 2, size: 3 }],
    ),
    // bpf_map_push_elem
    h(87, 3, &[MapValue(2)]),
    // bpf_map_pop_elem
    writing(h(88, 2, &[]), &[MapValue(2)]),
    // bpf_map_peek_elem
    writing(h(89, 2, &[]), &[MapValue(2)]),
    // bpf_spin_lock
    h(93, 1, &[]),
    // bpf_spin_unlock
    h(94, 1, &[]),
    // bpf_ringbuf_output
    h(130, 4, &[Sized { ptr: 2, size: 3 }]),
    // bpf_ringbuf_reserve
    h(131, 3, &[]),
    // bpf_ringbuf_submit
    h(132, 2, &[]),
    // bpf_ringbuf_discard
    h(133, 2, &[]),
    // bpf_xdp_get_buff_len
    h(188, 1, &[]),
    // bpf_xdp_load_bytes
    writing(h(189, 4, &[]), &[Sized { ptr: 3, size: 4 }]),
    // bpf_xdp_store_bytes
    h(190, 4, &[Sized { ptr: 3, size: 4 }]),
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
