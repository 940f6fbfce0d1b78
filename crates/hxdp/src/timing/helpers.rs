//! The cycles of a helper call: the latency of the helper module (rtl/sephirot/helpers.sv) from the core's call
//! (`hcall_o`) to its answer (`hret_valid`), which the core waits out in execute (an answer in the cycle after the
//! call costs one cycle). Each figure follows the helper module's state machine, the maps module's latencies (the
//! header of rtl/sephirot/maps.sv), `fib.sv`'s and the APS's adjust port (rtl/sephirot/aps.sv).
//!
//! The helper module moves buffers through one memory port with an answer in the next cycle, in chunks of 8 bytes
//! while 8 remain, then 4, 2 and 1 ([`chunk_sizes`]): a read pass issues one chunk per cycle, a copy two (read, then
//! write). A pass started at the call issues its first access in the cycle after the call; a pass started by the
//! previous one's end issues in that very cycle. Packet reads of bytes the APS has not stored yet wait, as the core's
//! loads do (`ready`).

/// Cycles from the core's call to the helper module's: the top (rtl/sephirot/hxdp.sv) registers the call, so the
/// module may use the core's stack port from the cycle it sees the call (in the core's call cycle lane 0's stack
/// read belongs to the calling bundle, and taking it would close a combinational loop through the core). The core
/// waits this plus [`helper_latency`].
pub const HELPER_REGISTER_CYCLES: u64 = 1;
/// Cycles of a helper that answers without memory traffic (`bpf_ktime_get_ns`, `bpf_redirect`,
/// `bpf_xdp_get_buff_len`, every check that fails before memory is touched, unknown helpers): the answer is
/// registered in the cycle of the call and seen in the next.
pub const HELPER_CYCLES: u64 = 1;
/// The maps module's latency from a request's acceptance to its response for lookups, deletes and errors found
/// before a value is written (one cycle to hash or index, one to read the CAM or slot table).
pub const MAPS_CYCLES: u64 = 2;
/// `fib.sv`'s latency from an accepted request to its response.
pub const FIB_CYCLES: u64 = 5;
/// Bytes of the `struct bpf_fib_lookup` that `bpf_fib_lookup` reads and writes back.
pub const FIB_STRUCT_BYTES: u64 = 64;
/// Tail calls one packet may make (the kernel's MAX_TAIL_CALL_CNT); beyond, `bpf_tail_call` answers at once.
pub const MAX_TAIL_CALLS: u64 = 33;

/// `BPF_MAP_TYPE_*` values the latencies depend on.
mod map_type {
    pub const HASH: u32 = 1;
    pub const ARRAY: u32 = 2;
    pub const PROG_ARRAY: u32 = 3;
    pub const PERCPU_HASH: u32 = 5;
    pub const PERCPU_ARRAY: u32 = 6;
    pub const LRU_HASH: u32 = 9;
    pub const LRU_PERCPU_HASH: u32 = 10;
    pub const LPM_TRIE: u32 = 11;
    pub const DEVMAP: u32 = 14;
    pub const CPUMAP: u32 = 16;
    pub const XSKMAP: u32 = 17;
    pub const DEVMAP_HASH: u32 = 25;
    pub const RINGBUF: u32 = 27;
}

const EINVAL: u64 = -22i64 as u64;
const EEXIST: u64 = -17i64 as u64;
const ENOENT: u64 = -2i64 as u64;

/// A map as the helper and maps modules know it from the configuration port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapShape {
    /// `BPF_MAP_TYPE_*`.
    pub map_type: u32,
    /// Key bytes.
    pub key_size: u32,
    /// Value bytes.
    pub value_size: u32,
    /// Entries.
    pub max_entries: u32,
}

/// The packet's page offsets as the APS holds them when the helper is called.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketBounds {
    /// `data_meta`.
    pub meta: u64,
    /// `data`.
    pub data: u64,
    /// `data_end`.
    pub end: u64,
    /// The highest `data_end` of the packet so far: a grown tail below it must be zeroed, above it the page reads 0.
    pub high: u64,
}

/// What the latency of one helper call depends on.
pub struct HelperCall<'a> {
    /// Helper id.
    pub id: i32,
    /// r1..r5 at the call.
    pub args: [u64; 5],
    /// r0 as the helper left it; `None` when it faulted.
    pub r0: Option<u64>,
    /// The map the call's handle names (r2 for `bpf_tail_call`, else r1), when it is a configured map.
    pub map: Option<MapShape>,
    /// The first four key bytes (little-endian) of a map lookup, when readable: a DEVMAP's index.
    pub key_index: Option<u32>,
    /// Bucket rows the maps module reads for a lookup, update or delete of a HASH or PERCPU_HASH map, or a lookup or
    /// delete of an LRU_HASH map ([`crate::timing::Buckets::rows`] before the operation), when the key is readable;
    /// `None` for other maps.
    pub hash_rows: Option<u64>,
    /// Cycles the maps module's LRU engine took for an update of an LRU_HASH map
    /// ([`crate::timing::lru_update_cycles`]: the steps `hwxdp_maps::Maps::lru_pop_steps` reports, one a cycle, the
    /// evictions' bucket deletes and the key's probe; 3 when the local free list had a node and the key's home row
    /// was not full); `None` for other calls, and then such an update is timed as if that were so.
    pub lru_steps: Option<u64>,
    /// Successful tail calls this packet before this call.
    pub tail_calls: u64,
    /// The cycle the helper module sees the call in (the core's `run_cycles_o` then: its call's cycle plus
    /// [`HELPER_REGISTER_CYCLES`]).
    pub cycle: u64,
    /// Lanes of the core (the APS zeroes a grown tail 8 bytes per lane per cycle).
    pub lanes: usize,
    /// The packet's bounds before the call.
    pub bounds: PacketBounds,
    /// `ready(addr, bytes)`: the first cycle a read of `bytes` bytes at tagged `addr` may go out (0 when it never
    /// waits: stack, map values and stored packet bytes).
    pub ready: &'a dyn Fn(u64, u64) -> u64,
}

/// The chunks of a pass over `len` bytes as (position, bytes), in the order they are accessed: forward 8 while 8
/// remain, then 4, 2, 1; backward (a copy to a higher address) from the end, 1, 2, 4 first so that the rest is 8s.
pub fn chunk_sizes(len: u64, backward: bool) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut rem = len;
    let mut pos = 0;
    while rem > 0 {
        if backward {
            let size = if rem & 1 != 0 {
                1
            } else if rem & 2 != 0 {
                2
            } else if rem & 4 != 0 {
                4
            } else {
                8
            };
            rem -= size;
            out.push((rem, size));
        } else {
            let size = [8, 4, 2, 1].into_iter().find(|&s| rem >= s).unwrap_or(1);
            out.push((pos, size));
            pos += size;
            rem -= size;
        }
    }
    out
}

/// The cycle in which a read pass over `len` bytes at `base` ends (its last answer arrives), its first access
/// going out no earlier than `first`; with nothing to read it ends in `first`.
pub fn read_pass(first: u64, base: u64, len: u64, ready: &dyn Fn(u64, u64) -> u64) -> u64 {
    let mut next = first;
    let mut end = first;
    for (pos, size) in chunk_sizes(len, false) {
        let issue = next.max(ready(base.wrapping_add(pos), size));
        end = issue + 1;
        next = issue + 1;
    }
    end
}

/// The cycle in which a copy of `len` bytes from `src` ends (its last write answers), its first read going out no
/// earlier than `first`: each chunk is read, then written in the next cycle; only reads wait.
pub fn copy_pass(
    first: u64,
    src: u64,
    len: u64,
    backward: bool,
    ready: &dyn Fn(u64, u64) -> u64,
) -> u64 {
    let mut next = first;
    let mut end = first;
    for (pos, size) in chunk_sizes(len, backward) {
        let read = next.max(ready(src.wrapping_add(pos), size));
        end = read + 2;
        next = read + 2;
    }
    end
}

fn rows(bytes: u64) -> u64 {
    bytes.div_ceil(8)
}

fn is_lru(t: u32) -> bool {
    matches!(t, map_type::LRU_HASH | map_type::LRU_PERCPU_HASH)
}

/// Rows of a PROG_ARRAY or DEVMAP slot: the value and its presence byte.
fn slot_rows(m: &MapShape) -> u64 {
    rows(m.value_size as u64 + 1)
}

/// The maps module's latency (request accepted to response) for request `op` (0 lookup, 1 update, 2 delete) on
/// `m` that answered `r0`; see the header of rtl/sephirot/maps.sv. A HASH or PERCPU_HASH operation that reads
/// `hash_rows` bucket rows takes one cycle more per row after the first, and a delete of a key beyond its home row
/// (more than one row read) shifts: the rows after the home read again, then the hole cleared.
pub fn maps_latency(
    op: u8,
    m: &MapShape,
    r0: u64,
    key_index: Option<u32>,
    hash_rows: Option<u64>,
    lru_steps: Option<u64>,
) -> u64 {
    if op == 1 && is_lru(m.map_type) {
        if let Some(steps) = lru_steps.filter(|&s| s > 0) {
            return lru_update_latency(m, r0, steps);
        }
    }
    let probe = match hash_rows {
        Some(rows) if in_buckets(m.map_type) && op <= 2 && !(op == 1 && is_lru(m.map_type)) => {
            let shift = if op == 2 && r0 == 0 && rows > 1 {
                rows
            } else {
                0
            };
            rows.saturating_sub(1) + shift
        }
        _ => 0,
    };
    probe + maps_base_latency(op, m, r0, key_index)
}

/// An LRU_HASH update whose node was taken and settled in `steps` cycles of the LRU engine (rtl/sephirot/maps.sv:
/// `LStart`, on a refill the flush, rotations, fill and shrink one node or list end a step with each eviction's
/// bucket delete, then `LPop`, the key's probe and `LDecide`: [`crate::timing::lru_update_cycles`]): a success
/// writes the value a row a cycle, -EEXIST and -ENOENT give the node back at once, and -ENOMEM (no node at all)
/// answers from the last step.
fn lru_update_latency(m: &MapShape, r0: u64, steps: u64) -> u64 {
    match r0 {
        0 => MAPS_CYCLES + steps + rows(m.value_size as u64),
        _ => MAPS_CYCLES + steps,
    }
}

/// Whether `t` is a HASH or PERCPU_HASH map.
pub fn is_hash(t: u32) -> bool {
    matches!(t, map_type::HASH | map_type::PERCPU_HASH)
}

/// Whether the maps module keeps `t`'s keys in hashed buckets (HASH, PERCPU_HASH and LRU_HASH).
pub fn in_buckets(t: u32) -> bool {
    is_hash(t) || t == map_type::LRU_HASH
}

/// [`maps_latency`] with the home row read alone.
fn maps_base_latency(op: u8, m: &MapShape, r0: u64, key_index: Option<u32>) -> u64 {
    let t = m.map_type;
    let r = rows(m.value_size as u64);
    match op {
        // DEVMAP lookups read the slot with its presence byte, one row per two cycles; others hash or index.
        0 if t == map_type::DEVMAP && key_index.is_some_and(|i| i < m.max_entries) => {
            MAPS_CYCLES + 2 * slot_rows(m)
        }
        0 => MAPS_CYCLES,
        // Successful updates write the value one row per cycle; LRU maps first take a node from the local free
        // list and probe the key's home row (two LRU steps and the probe's cycle; a refill of that list and fuller
        // rows cost more, `lru_update_latency`).
        1 if is_lru(t) => match r0 {
            0 => MAPS_CYCLES + 2 * crate::timing::LRU_STEP_CYCLES + 1 + r,
            EEXIST | ENOENT => MAPS_CYCLES + 2 * crate::timing::LRU_STEP_CYCLES + 1,
            _ => MAPS_CYCLES,
        },
        1 if matches!(
            t,
            map_type::HASH | map_type::ARRAY | map_type::PERCPU_HASH | map_type::PERCPU_ARRAY
        ) && r0 == 0 =>
        {
            MAPS_CYCLES + r
        }
        1 if t == map_type::LPM_TRIE && r0 != EINVAL => MAPS_CYCLES + r,
        // A delete that found its LRU element gives the node back (an LRU step, after the bucket's shift); a
        // DEVMAP delete writes the presence byte (a cycle); -ENOENT answers at once.
        2 if is_lru(t) && r0 == 0 => MAPS_CYCLES + crate::timing::LRU_STEP_CYCLES,
        2 if t == map_type::DEVMAP && r0 == 0 => MAPS_CYCLES + 1,
        _ => MAPS_CYCLES,
    }
}

/// The maps module's latency for a get (op 3, `bpf_tail_call` and `bpf_redirect_map`) of entry `index`: PROG_ARRAY
/// and DEVMAP slots below max_entries are read with their presence byte, one row per two cycles; else a miss.
pub fn get_latency(m: &MapShape, index: u32) -> u64 {
    if matches!(m.map_type, map_type::PROG_ARRAY | map_type::DEVMAP) && index < m.max_entries {
        MAPS_CYCLES + 2 * slot_rows(m)
    } else {
        MAPS_CYCLES
    }
}

/// Cycles from the helper module's sight of `call` to its answer (the core waits [`HELPER_REGISTER_CYCLES`] more).
pub fn helper_latency(call: &HelperCall) -> u64 {
    let c = call.cycle;
    let [a1, a2, a3, a4, _] = call.args;
    let ready = call.ready;
    // The cycle the answer is decided in; the core sees it in the next.
    let decided = match call.id {
        1..=3 => match call.map {
            None => return HELPER_CYCLES,
            Some(m) => {
                // The key (and an update's value) read into registers; the request goes out with the last chunk.
                let mut t = read_pass(c + 1, a2, m.key_size as u64, ready);
                if call.id == 2 {
                    t = read_pass(t, a3, m.value_size as u64, ready);
                }
                let op = (call.id - 1) as u8;
                t + maps_latency(
                    op,
                    &m,
                    call.r0.unwrap_or(0),
                    call.key_index,
                    call.hash_rows,
                    call.lru_steps,
                )
            }
        },
        12 => match call.map {
            Some(m) if m.map_type == map_type::PROG_ARRAY && call.tail_calls < MAX_TAIL_CALLS => {
                // The get request is offered in the cycle after the call.
                c + 1 + get_latency(&m, a3 as u32)
            }
            _ => return HELPER_CYCLES,
        },
        51 => match call.map {
            Some(m)
                if matches!(
                    m.map_type,
                    map_type::DEVMAP | map_type::DEVMAP_HASH | map_type::CPUMAP | map_type::XSKMAP
                ) =>
            {
                // The action in bits 1:0; BROADCAST and EXCLUDE_INGRESS for DEVMAPs only.
                let dev = matches!(m.map_type, map_type::DEVMAP | map_type::DEVMAP_HASH);
                let allowed = if dev { 0x1b } else { 3 };
                if a3 & !allowed != 0 {
                    return HELPER_CYCLES;
                }
                c + 1 + get_latency(&m, a2 as u32)
            }
            _ => return HELPER_CYCLES,
        },
        28 => {
            let (from, to) = (a2 as u32 as u64, a4 as u32 as u64);
            if from % 4 != 0 || to % 4 != 0 || from + to > 512 {
                return HELPER_CYCLES;
            }
            // `from` summed, one cycle to fold it and start `to` (whose first read goes out then), one for the
            // result.
            let f = read_pass(c + 1, a1, from, ready);
            let t = if to == 0 {
                f + 2
            } else {
                read_pass(f + 1, a3, to, ready)
            };
            t + 1
        }
        44 | 54 | 65 => adjust_answer(call),
        69 => {
            let (plen, flags) = (a3 as i32, a4 as u32);
            if plen < 64 || flags & !0x3f != 0 || flags & 0x38 != 0 {
                return HELPER_CYCLES;
            }
            // The struct read, the request offered in the next cycle, fib's answer, then the 64 bytes written back
            // from the cycle after the answer.
            let read = read_pass(c + 1, a2, FIB_STRUCT_BYTES, ready);
            let answer = read + 1 + FIB_CYCLES;
            answer + chunk_sizes(FIB_STRUCT_BYTES, false).len() as u64 + 1
        }
        93 | 94 => {
            if a1 >> 60 != 4 {
                return HELPER_CYCLES;
            }
            read_pass(c + 1, a1, 4, ready)
        }
        189 | 190 => {
            let (off, len) = (a2 as u32 as u64, a4 as u32 as u64);
            if off > 0xffff || len > 0xffff || off + len > call.bounds.end - call.bounds.data {
                return HELPER_CYCLES;
            }
            if len == 0 {
                if call.id == 190 {
                    return HELPER_CYCLES;
                }
                // The 0-byte load still reads the byte at r3.
                read_pass(c + 1, a3, 1, ready)
            } else {
                // One cycle to work out the copy's geometry, a read of the far byte of r3's range, then the copy
                // (backward when the destination lies above the source, as memmove).
                let pkt = (2u64 << 60) | (call.bounds.data + off);
                let (src, dst) = if call.id == 189 { (pkt, a3) } else { (a3, pkt) };
                let back = dst > src;
                let far = if back {
                    a3
                } else {
                    a3.wrapping_add(len).wrapping_sub(1)
                };
                let probe = read_pass(c + 1, far, 1, ready);
                copy_pass(probe, src, len, back, ready)
            }
        }
        130 => match call.map {
            Some(m) if m.map_type == map_type::RINGBUF && a4 <= 3 && a3 >> 16 == 0 => {
                // The data read (into the ring), one cycle to commit.
                read_pass(c + 1, a2, a3, ready) + 1
            }
            _ => return HELPER_CYCLES,
        },
        _ => return HELPER_CYCLES,
    };
    decided + 1 - c
}

/// The cycle the helper module sees the APS's answer to an adjust call (`bpf_xdp_adjust_head` 44, `_meta` 54,
/// `_tail` 65): the request goes out in the cycle after the call and the APS decides it in the cycle it arrives
/// (a head move with metadata waits until the bytes below `data` are stored), answering in the next cycle; a head
/// move with metadata copies it first (one cycle more), a grown tail below the packet's highest end is zeroed
/// 8 bytes per lane per cycle.
fn adjust_answer(call: &HelperCall) -> u64 {
    let b = call.bounds;
    let delta = call.args[1] as u32 as i32 as i64;
    let ok = call.r0 == Some(0);
    let request = call.cycle + 1;
    match call.id {
        44 if ok && b.data > b.meta => {
            let decide = request.max((call.ready)((2u64 << 60) | b.data, 0));
            decide + 2
        }
        65 if ok => {
            let new_end = (b.end as i64 + delta) as u64;
            if new_end > b.end && b.end < b.high {
                let zero_end = new_end.min(b.high);
                let per_cycle = 8 * call.lanes.max(1) as u64;
                request + 1 + (zero_end - b.end).div_ceil(per_cycle)
            } else {
                request + 1
            }
        }
        _ => request + 1,
    }
}
