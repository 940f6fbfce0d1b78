//! `BPF_MAP_CREATE`'s checks of each map type's attributes, and the map objects they produce.

use crate::abi::{errno::*, map_flags as mf, map_type as mt, Fail, Res};
use crate::array::ArrayMap;
use crate::devices::{DevHash, SlotArray, SlotKind};
use crate::hash::HashMap;
use crate::lpm::LpmTrie;
use crate::lru_hash::LruHash;
use crate::outer::{check_template, OuterMap};
use crate::perf::PerfEventArray;
use crate::ringbuf::RingBuf;
use hwxdp_object::MapSpec;

/// `KMALLOC_MAX_SIZE` on x86-64 (order-10 pages): the kernel's bound on a hash element.
const KMALLOC_MAX_SIZE: u64 = 4 << 20;
/// `sizeof(struct htab_elem)` before the key.
const HTAB_ELEM_SIZE: u64 = 48;
/// `PCPU_MIN_UNIT_SIZE`: bound on a per-CPU value.
const PCPU_MIN_UNIT_SIZE: u64 = 32 << 10;
/// `LPM_DATA_SIZE_MAX`.
const LPM_DATA_SIZE_MAX: u32 = 256;
/// `sizeof(struct lpm_trie_node)` before the data.
const LPM_NODE_SIZE: u64 = 40;
/// `NR_CPUS` of distribution kernels: the largest CPUMAP.
const NR_CPUS: u32 = 8192;
const PAGE_SIZE: u32 = 4096;
/// hwxdp's map-value addresses hold a slot in 28 bits and an offset in 24 bits.
const MAX_SLOTS: u64 = 1 << 28;
const MAX_VALUE_SIZE: u64 = 1 << 24;

/// One map's contents and semantics.
#[derive(Clone, Debug)]
pub(crate) enum MapImpl {
    Array(ArrayMap),
    Hash(HashMap),
    Lru(LruHash),
    Lpm(LpmTrie),
    Slots(SlotArray),
    DevHash(DevHash),
    RingBuf(RingBuf),
    Perf(PerfEventArray),
    Outer(OuterMap),
}

fn inval(why: &'static str) -> Fail {
    Fail::new(EINVAL, why)
}

/// `bpf_map_flags_access_ok` and the RDONLY/WRONLY check of `bpf_get_file_flag`.
fn check_access(flags: u32) -> Res {
    if flags & mf::RDONLY_PROG != 0 && flags & mf::WRONLY_PROG != 0 {
        return Err(inval("both bpf_f_rdonly_prog and bpf_f_wronly_prog"));
    }
    if flags & mf::RDONLY != 0 && flags & mf::WRONLY != 0 {
        return Err(inval("both bpf_f_rdonly and bpf_f_wronly"));
    }
    Ok(())
}

/// Bounds of hwxdp's value addresses: every slot and offset must be expressible.
fn check_addressable(slots: u64, value_size: u32) -> Res {
    if slots > MAX_SLOTS || u64::from(value_size) > MAX_VALUE_SIZE {
        return Err(Fail::new(
            E2BIG,
            "too large for hwxdp's map value addresses",
        ));
    }
    Ok(())
}

/// `array_map_alloc_check`.
fn check_array(s: &MapSpec, percpu: bool) -> Res {
    const MASK: u32 =
        mf::NUMA_NODE | mf::MMAPABLE | mf::ACCESS_MASK | mf::PRESERVE_ELEMS | mf::INNER_MAP;
    if s.max_entries == 0 || s.key_size != 4 || s.value_size == 0 || s.map_flags & !MASK != 0 {
        return Err(inval("array needs 4-byte keys, a value and max_entries"));
    }
    if percpu && s.map_flags & mf::NUMA_NODE != 0 {
        return Err(inval("per-cpu array with a numa node"));
    }
    if s.map_type != mt::ARRAY && s.map_flags & (mf::MMAPABLE | mf::INNER_MAP) != 0 {
        return Err(inval("only plain arrays are mmapable"));
    }
    if s.map_flags & mf::PRESERVE_ELEMS != 0 {
        return Err(inval("bpf_f_preserve_elems is for perf event arrays"));
    }
    if s.value_size > i32::MAX as u32 {
        return Err(Fail::new(E2BIG, "value too large"));
    }
    if percpu && crate::abi::round8(s.value_size as usize) as u64 > PCPU_MIN_UNIT_SIZE {
        return Err(Fail::new(E2BIG, "per-cpu value above 32 kib"));
    }
    Ok(())
}

/// `htab_map_alloc_check` and the size checks of `htab_map_alloc`.
fn check_hash(s: &MapSpec, percpu: bool, lru: bool) -> Res {
    const MASK: u32 =
        mf::NO_PREALLOC | mf::NO_COMMON_LRU | mf::NUMA_NODE | mf::ACCESS_MASK | mf::ZERO_SEED;
    if s.map_flags & !MASK != 0 {
        return Err(inval("unknown hash map flags"));
    }
    let percpu_lru = s.map_flags & mf::NO_COMMON_LRU != 0;
    if !lru && percpu_lru {
        return Err(inval("bpf_f_no_common_lru without an lru map"));
    }
    if lru && s.map_flags & mf::NO_PREALLOC != 0 {
        return Err(Fail::new(ENOTSUPP, "lru maps are always preallocated"));
    }
    if s.map_flags & mf::NUMA_NODE != 0 && (percpu || percpu_lru) {
        return Err(inval("per-cpu map with a numa node"));
    }
    if s.max_entries == 0 || s.key_size == 0 || s.value_size == 0 {
        return Err(inval("hash needs a key, a value and max_entries"));
    }
    if u64::from(s.key_size) + u64::from(s.value_size) >= KMALLOC_MAX_SIZE - HTAB_ELEM_SIZE {
        return Err(Fail::new(E2BIG, "key and value too large"));
    }
    if percpu && crate::abi::round8(s.value_size as usize) as u64 > PCPU_MIN_UNIT_SIZE {
        return Err(Fail::new(E2BIG, "per-cpu value above 32 kib"));
    }
    if s.max_entries > 1 << 31 {
        return Err(Fail::new(E2BIG, "more than 2^31 entries"));
    }
    Ok(())
}

/// `trie_alloc`'s checks.
fn check_lpm(s: &MapSpec) -> Res {
    const MASK: u32 = mf::NO_PREALLOC | mf::NUMA_NODE | mf::ACCESS_MASK;
    let max_value = KMALLOC_MAX_SIZE - u64::from(LPM_DATA_SIZE_MAX) - LPM_NODE_SIZE;
    if s.max_entries == 0
        || s.map_flags & mf::NO_PREALLOC == 0
        || s.map_flags & !MASK != 0
        || s.key_size < 5
        || s.key_size > 4 + LPM_DATA_SIZE_MAX
        || s.value_size < 1
        || u64::from(s.value_size) > max_value
    {
        return Err(inval(
            "lpm trie needs bpf_f_no_prealloc, keys of 5 to 260 bytes and a value",
        ));
    }
    Ok(())
}

/// `fd_array_map_alloc_check`.
fn check_prog_array(s: &MapSpec) -> Res {
    if s.value_size != 4 {
        return Err(inval("program array values are 4-byte fds"));
    }
    if s.map_flags & (mf::RDONLY_PROG | mf::WRONLY_PROG) != 0 {
        return Err(inval("program arrays take no program access flags"));
    }
    check_array(s, false)
}

/// `dev_map_alloc_check` and the bucket count of DEVMAP_HASH.
fn check_devmap(s: &MapSpec) -> Res {
    const MASK: u32 = mf::NUMA_NODE | mf::RDONLY | mf::WRONLY;
    if s.max_entries == 0
        || s.key_size != 4
        || (s.value_size != 4 && s.value_size != 8)
        || s.map_flags & !MASK != 0
    {
        return Err(inval(
            "device map needs 4-byte keys and 4- or 8-byte values",
        ));
    }
    if s.map_type == mt::DEVMAP_HASH && s.max_entries > 1 << 31 {
        return Err(inval("more than 2^31 entries"));
    }
    Ok(())
}

/// `cpu_map_alloc`'s checks.
fn check_cpumap(s: &MapSpec) -> Res {
    if s.max_entries == 0
        || s.key_size != 4
        || (s.value_size != 4 && s.value_size != 8)
        || s.map_flags & !mf::NUMA_NODE != 0
    {
        return Err(inval("cpu map needs 4-byte keys and 4- or 8-byte values"));
    }
    if s.max_entries > NR_CPUS {
        return Err(Fail::new(E2BIG, "more entries than nr_cpus"));
    }
    Ok(())
}

/// `xsk_map_alloc_check`.
fn check_xskmap(s: &MapSpec) -> Res {
    const MASK: u32 = mf::NUMA_NODE | mf::RDONLY | mf::WRONLY;
    if s.max_entries == 0 || s.key_size != 4 || s.value_size != 4 || s.map_flags & !MASK != 0 {
        return Err(inval("xsk map needs 4-byte keys and values"));
    }
    Ok(())
}

/// `fd_array_map_alloc_check` for PERF_EVENT_ARRAY, after libbpf made a `max_entries` of 0 one per possible CPU.
fn check_perf_event_array(s: &MapSpec) -> Res {
    const MASK: u32 = mf::NUMA_NODE | mf::ACCESS_MASK | mf::PRESERVE_ELEMS;
    if s.key_size != 4 || s.value_size != 4 || s.map_flags & !MASK != 0 {
        return Err(inval(
            "perf event array needs 4-byte keys and 4-byte values (event fds)",
        ));
    }
    if s.map_flags & (mf::RDONLY_PROG | mf::WRONLY_PROG) != 0 {
        return Err(inval("perf event arrays take no program access flags"));
    }
    Ok(())
}

/// `ringbuf_map_alloc`'s checks.
fn check_ringbuf(s: &MapSpec) -> Res {
    if s.map_flags & !mf::NUMA_NODE != 0
        || s.key_size != 0
        || s.value_size != 0
        || !s.max_entries.is_power_of_two()
        || !s.max_entries.is_multiple_of(PAGE_SIZE)
    {
        return Err(inval(
            "ring buffer needs no key or value and a power-of-2 multiple of the page size",
        ));
    }
    if s.max_entries > 1 << 30 {
        return Err(Fail::new(
            E2BIG,
            "ring buffer above 1 gib is too large for hwxdp",
        ));
    }
    Ok(())
}

/// Validates `s` as the kernel would and builds the empty map.
pub(crate) fn create(s: &MapSpec, cpus: usize) -> Res<MapImpl> {
    check_access(s.map_flags)?;
    let vs = s.value_size as usize;
    let max = u64::from(s.max_entries);
    Ok(match s.map_type {
        mt::ARRAY | mt::PERCPU_ARRAY => {
            let percpu = s.map_type == mt::PERCPU_ARRAY;
            check_array(s, percpu)?;
            let copies = if percpu { cpus } else { 1 };
            check_addressable(max * copies as u64, s.value_size)?;
            MapImpl::Array(ArrayMap::new(s.max_entries, vs, copies))
        }
        mt::HASH | mt::PERCPU_HASH => {
            let percpu = s.map_type == mt::PERCPU_HASH;
            check_hash(s, percpu, false)?;
            let copies = if percpu { cpus } else { 1 };
            check_addressable(
                HashMap::capacity(s.max_entries, percpu, cpus) * copies as u64,
                s.value_size,
            )?;
            MapImpl::Hash(HashMap::new(s.max_entries, vs, copies, cpus, percpu))
        }
        mt::LRU_HASH | mt::LRU_PERCPU_HASH => {
            let percpu = s.map_type == mt::LRU_PERCPU_HASH;
            check_hash(s, percpu, true)?;
            let percpu_lru = s.map_flags & mf::NO_COMMON_LRU != 0;
            let nodes = LruHash::nodes(s.max_entries, cpus, percpu_lru);
            let copies = if percpu { cpus } else { 1 };
            check_addressable(u64::from(nodes) * copies as u64, s.value_size)?;
            MapImpl::Lru(LruHash::new(
                nodes,
                s.key_size as usize,
                vs,
                copies,
                cpus,
                percpu_lru,
                percpu,
            ))
        }
        mt::LPM_TRIE => {
            check_lpm(s)?;
            check_addressable(max + 1, s.value_size)?;
            MapImpl::Lpm(LpmTrie::new(s.key_size as usize, vs, s.max_entries))
        }
        mt::PROG_ARRAY => {
            check_prog_array(s)?;
            check_addressable(max, s.value_size)?;
            MapImpl::Slots(SlotArray::new(SlotKind::ProgArray, s.max_entries, vs, cpus))
        }
        mt::DEVMAP => {
            check_devmap(s)?;
            check_addressable(max, s.value_size)?;
            MapImpl::Slots(SlotArray::new(SlotKind::Devmap, s.max_entries, vs, cpus))
        }
        mt::DEVMAP_HASH => {
            check_devmap(s)?;
            check_addressable(max + 1, s.value_size)?;
            MapImpl::DevHash(DevHash::new(s.max_entries, vs))
        }
        mt::CPUMAP => {
            check_cpumap(s)?;
            MapImpl::Slots(SlotArray::new(SlotKind::Cpumap, s.max_entries, vs, cpus))
        }
        mt::XSKMAP => {
            check_xskmap(s)?;
            check_addressable(max, s.value_size)?;
            MapImpl::Slots(SlotArray::new(SlotKind::Xskmap, s.max_entries, vs, cpus))
        }
        mt::ARRAY_OF_MAPS | mt::HASH_OF_MAPS => {
            let template = &s
                .outer
                .as_ref()
                .ok_or(inval(
                    "a map of maps needs an inner map template (__array(values, struct ...))",
                ))?
                .template;
            if s.value_size != 4 {
                return Err(inval("a map of maps holds 4-byte map fds"));
            }
            if s.map_type == mt::ARRAY_OF_MAPS {
                check_array(s, false)?;
            } else {
                check_hash(s, false, false)?;
            }
            check_template(template)?;
            create(template, cpus)?;
            MapImpl::Outer(OuterMap::new(s, template))
        }
        mt::PERF_EVENT_ARRAY => {
            check_perf_event_array(s)?;
            MapImpl::Perf(PerfEventArray::new(s.max_entries, cpus))
        }
        mt::RINGBUF => {
            check_ringbuf(s)?;
            MapImpl::RingBuf(RingBuf::new(s.max_entries))
        }
        _ => return Err(inval("map type not supported by hwxdp")),
    })
}
