//! BPF maps with the Linux kernel's semantics, and the JSON shape `bpftool map dump -j` prints.
//!
//! [`Maps`] holds every map of one program. Programs reach values through slots ([`Maps::lookup_slot`],
//! [`Maps::value`]); userspace goes through [`MapStore`], with the `bpf()` syscall's view of per-CPU values.

pub mod abi;
mod array;
mod create;
mod devices;
mod hash;
pub mod json;
mod keyindex;
mod lpm;
mod lru;
mod lru_hash;
mod outer;
pub mod perf;
mod ringbuf;
mod store;
mod userspace;
mod values;

pub use array::HUGE_ARRAY_ENTRIES;
pub use store::*;

use abi::{errno, is_percpu, map_type, Fail};
use create::MapImpl;
use hwxdp_object::MapSpec;

/// All maps of one program, indexed like [`hwxdp_object::ObjectSpec::maps`].
#[derive(Clone, Debug)]
pub struct Maps {
    specs: Vec<MapSpec>,
    maps: Vec<MapImpl>,
    possible_cpus: usize,
    cpu: usize,
    /// Bytes the maps took when made (sparse arrays' chunks come on top, as they are written).
    used: u64,
}

fn neg(f: Fail) -> i64 {
    -i64::from(f.errno)
}

/// Memory all maps of one program may take: preallocated maps cost their whole size up front, as in the kernel, huge
/// arrays what their written chunks take, and a corrupt or careless `max_entries` must be an error rather than an
/// exhausted machine.
pub const MEMORY_LIMIT: u64 = 1 << 30;

/// Bytes a map preallocates, roughly: every entry's key and value (one value per CPU for per-CPU maps) plus bookkeeping.
fn memory_estimate(s: &MapSpec, possible_cpus: usize) -> u64 {
    let entries = u64::from(s.max_entries);
    if s.map_type == map_type::RINGBUF {
        return 2 * entries;
    }
    let copies = if is_percpu(s.map_type) {
        possible_cpus as u64
    } else {
        1
    };
    let value = u64::from(s.value_size).next_multiple_of(8) * copies;
    let array = matches!(s.map_type, map_type::ARRAY | map_type::PERCPU_ARRAY);
    if array && array::ArrayMap::is_sparse(s.max_entries, s.value_size as usize, copies as usize) {
        // Chunks are counted as they are written; this is the chunk directory.
        return entries.saturating_mul(u64::from(s.value_size) * copies) / (8 << 10);
    }
    entries.saturating_mul(u64::from(s.key_size) + value + 64)
}

impl Maps {
    /// Creates empty maps, validating each definition as `BPF_MAP_CREATE` does; global-data maps get their initial
    /// value at key 0.
    pub fn new(specs: &[MapSpec], possible_cpus: usize) -> Result<Maps, MapError> {
        let mut maps = Vec::with_capacity(specs.len());
        let mut budget = MEMORY_LIMIT;
        let mut used = 0;
        for s in specs {
            let need = memory_estimate(s, possible_cpus);
            if need > budget {
                return Err(MapError {
                    map: s.name.clone(),
                    errno: errno::ENOMEM,
                    message: format!(
                        "needs about {} MiB, more than the {} MiB hwxdp allows all maps of a program",
                        need >> 20,
                        MEMORY_LIMIT >> 20
                    ),
                });
            }
            budget -= need;
            used += need;
            if possible_cpus == 0 {
                return Err(MapError {
                    map: s.name.clone(),
                    errno: errno::EINVAL,
                    message: "no possible cpus".into(),
                });
            }
            let m = create::create(s, possible_cpus).map_err(|f| MapError {
                map: s.name.clone(),
                errno: f.errno,
                message: if f.why == "map type not supported by hwxdp" {
                    format!(
                        "map type {} is not supported by hwxdp",
                        hwxdp_ebpf::map_type_label(s.map_type)
                    )
                } else {
                    f.why.to_string()
                },
            })?;
            maps.push(m);
        }
        let mut maps = Maps {
            specs: specs.to_vec(),
            maps,
            possible_cpus,
            cpu: 0,
            used,
        };
        for (i, s) in specs.iter().enumerate() {
            if let (Some(init), MapImpl::Array(a)) = (&s.initial_value, &mut maps.maps[i]) {
                a.values.set(0, init);
            }
        }
        maps.put_inner_initializers()?;
        Ok(maps)
    }

    /// Puts the `.values` initializers of outer maps in, as libbpf does after creating the maps.
    fn put_inner_initializers(&mut self) -> Result<(), MapError> {
        for outer in 0..self.specs.len() {
            let init = self.specs[outer]
                .outer
                .as_ref()
                .map(|o| o.init.clone())
                .unwrap_or_default();
            for (slot, inner) in init {
                self.set_inner(outer, &slot.to_le_bytes(), inner as u32, 0)?;
            }
        }
        Ok(())
    }

    /// Puts map `inner` at `key` of outer map `outer`, checked against its template as `BPF_MAP_UPDATE_ELEM` checks.
    pub(crate) fn set_inner(
        &mut self,
        outer: usize,
        key: &[u8],
        inner: u32,
        flags: u64,
    ) -> Result<(), MapError> {
        let name = self.specs[outer].name.clone();
        let error = |errno: i32, message: String| MapError {
            map: name.clone(),
            errno,
            message,
        };
        let Some(inner_spec) = self.specs.get(inner as usize) else {
            return Err(error(
                errno::EBADF,
                format!("no map with index {inner} to put in it"),
            ));
        };
        let inner_name = inner_spec.name.clone();
        let Some(MapImpl::Outer(o)) = self.maps.get_mut(outer) else {
            return Err(error(errno::EINVAL, "not a map of maps".to_string()));
        };
        if !o.fits(inner_spec) {
            return Err(error(
                errno::EINVAL,
                format!("map {inner_name} does not match the inner map template"),
            ));
        }
        o.update(key, inner, flags)
            .map_err(|f| error(f.errno, f.why.to_string()))
    }

    /// `bpf_map_lookup_elem` from a program on ARRAY_OF_MAPS or HASH_OF_MAPS `map`: the inner map's index.
    pub fn inner_map(&self, map: usize, key: &[u8]) -> Option<usize> {
        match self.maps.get(map)? {
            MapImpl::Outer(o) => o.lookup(key).map(|i| i as usize),
            _ => None,
        }
    }

    /// Whether listings of map `spec` show only the entries holding a non-zero value: arrays of more than
    /// [`HUGE_ARRAY_ENTRIES`] entries, whose dumps would otherwise be millions of zeros. Every [`MapStore`] lists such
    /// maps this way, the kernel's included, so that comparisons agree; [`Maps::entries_all`] lists every entry.
    pub fn lists_nonzero_only(spec: &MapSpec) -> bool {
        matches!(spec.map_type, map_type::ARRAY | map_type::PERCPU_ARRAY)
            && spec.max_entries > HUGE_ARRAY_ENTRIES
    }

    /// Bytes the maps take now: what was preallocated plus the written chunks of sparse arrays.
    pub fn memory_used(&self) -> u64 {
        let chunks: u64 = self
            .maps
            .iter()
            .map(|m| match m {
                MapImpl::Array(a) => a.sparse_allocated(),
                _ => 0,
            })
            .sum();
        self.used + chunks
    }

    /// Whether `cost` more bytes for map `map` fit under [`MEMORY_LIMIT`]; the error names the map.
    fn admit(&self, map: usize, cost: u64) -> Result<(), MapError> {
        if cost == 0 || self.memory_used() + cost <= MEMORY_LIMIT {
            return Ok(());
        }
        Err(MapError {
            map: self.specs.get(map).map_or_else(|| format!("#{map}"), |s| s.name.clone()),
            errno: errno::ENOMEM,
            message: format!(
                "writing it needs {} KiB more, beyond the {} MiB hwxdp allows all maps of a program ({} MiB in use)",
                cost.div_ceil(1024),
                MEMORY_LIMIT >> 20,
                self.memory_used() >> 20
            ),
        })
    }

    /// Whether a program's `bpf_map_update_elem` of `key` in map `map` fits under [`MEMORY_LIMIT`] (only a huge
    /// array's first write into a chunk can need memory).
    pub fn check_prog_write(&self, map: usize, key: &[u8]) -> Result<(), MapError> {
        match self.maps.get(map) {
            Some(MapImpl::Array(a)) => self.admit(map, a.cost_of_writing(key, Some(self.cpu))),
            _ => Ok(()),
        }
    }

    /// Whether a store into `slot` of map `map` fits under [`MEMORY_LIMIT`].
    pub fn check_slot_write(&self, map: usize, slot: u32) -> Result<(), MapError> {
        match self.maps.get(map) {
            Some(MapImpl::Array(a)) => self.admit(map, a.values.cost_of_writing(slot as usize)),
            _ => Ok(()),
        }
    }

    /// Whether a userspace update of `key` in map `map` fits under [`MEMORY_LIMIT`].
    fn check_user_write(&self, map: usize, key: &[u8]) -> Result<(), MapError> {
        match self.maps.get(map) {
            Some(MapImpl::Array(a)) => self.admit(map, a.cost_of_writing(key, None)),
            _ => Ok(()),
        }
    }

    /// Sets the CPU the program runs on: per-CPU maps read and write its copy, LRU maps use its local lists.
    pub fn set_cpu(&mut self, cpu: usize) {
        self.cpu = cpu.min(self.possible_cpus - 1);
    }

    /// The CPU the program runs on.
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// `bpf_map_lookup_elem` from a program: the slot of the value (this CPU's copy for per-CPU maps). LRU lookups
    /// mark the entry referenced; LPM lookups find the longest matching prefix.
    pub fn lookup_slot(&mut self, map: usize, key: &[u8]) -> Option<u32> {
        let cpu = self.cpu;
        match self.maps.get_mut(map)? {
            MapImpl::Array(a) => a.lookup_slot(key, cpu),
            MapImpl::Hash(h) => h.lookup_slot(key, cpu),
            MapImpl::Lru(l) => l.lookup_slot(key, cpu),
            MapImpl::Lpm(t) => t.lookup_slot(key),
            MapImpl::Slots(s) => s.lookup_slot(key),
            MapImpl::DevHash(d) => d.lookup_slot(key),
            MapImpl::RingBuf(_) | MapImpl::Perf(_) | MapImpl::Outer(_) => None,
        }
    }

    /// The bytes of a slot (a ring buffer record for RINGBUF); empty when the map or slot does not exist.
    pub fn value(&self, map: usize, slot: u32) -> &[u8] {
        self.try_value(map, slot).unwrap_or(&[])
    }

    /// The bytes of a slot, writable; empty when the map or slot does not exist.
    pub fn value_mut(&mut self, map: usize, slot: u32) -> &mut [u8] {
        self.try_value_mut(map, slot).unwrap_or(&mut [])
    }

    /// The bytes of a slot, if the map and slot exist.
    pub fn try_value(&self, map: usize, slot: u32) -> Option<&[u8]> {
        let s = slot as usize;
        match self.maps.get(map)? {
            MapImpl::Array(a) => a.values.get(s),
            MapImpl::Hash(h) => h.values.get(s),
            MapImpl::Lru(l) => l.values.get(s),
            MapImpl::Lpm(t) => t.values.get(s),
            MapImpl::Slots(x) => x.values.get(s),
            MapImpl::DevHash(d) => d.values.get(s),
            MapImpl::RingBuf(r) => Some(r.record(slot)),
            MapImpl::Perf(_) | MapImpl::Outer(_) => None,
        }
    }

    /// The bytes of a slot, writable, if the map and slot exist (and, for a huge array's first write into a chunk, the
    /// chunk fits under [`MEMORY_LIMIT`]: [`Maps::check_slot_write`] says why not).
    pub fn try_value_mut(&mut self, map: usize, slot: u32) -> Option<&mut [u8]> {
        let s = slot as usize;
        if self.check_slot_write(map, slot).is_err() {
            return None;
        }
        match self.maps.get_mut(map)? {
            MapImpl::Array(a) => a.values.get_mut(s),
            MapImpl::Hash(h) => h.values.get_mut(s),
            MapImpl::Lru(l) => l.values.get_mut(s),
            MapImpl::Lpm(t) => t.values.get_mut(s),
            MapImpl::Slots(x) => x.values.get_mut(s),
            MapImpl::DevHash(d) => d.values.get_mut(s),
            MapImpl::RingBuf(r) => Some(r.record_mut(slot)),
            MapImpl::Perf(_) | MapImpl::Outer(_) => None,
        }
    }

    /// `bpf_map_update_elem` from a program: 0 or a negative errno. Per-CPU maps write this CPU's copy only (a new
    /// element's other copies are zeroed).
    pub fn prog_update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) -> i64 {
        let cpu = self.cpu;
        if let Err(e) = self.check_prog_write(map, key) {
            return -i64::from(e.errno);
        }
        let Some(m) = self.maps.get_mut(map) else {
            return -i64::from(errno::EINVAL);
        };
        let r = match m {
            MapImpl::Array(a) => a.prog_update(key, value, flags, cpu),
            MapImpl::Hash(h) => h.update(key, value, flags, cpu, false),
            MapImpl::Lru(l) => l.update(key, value, flags, cpu, false),
            MapImpl::Lpm(t) => t.update(key, value, flags),
            // The verifier only lets programs look these up or redirect to them.
            MapImpl::Slots(_)
            | MapImpl::DevHash(_)
            | MapImpl::RingBuf(_)
            | MapImpl::Perf(_)
            | MapImpl::Outer(_) => Err(Fail::new(
                errno::EINVAL,
                "programs cannot update this map type",
            )),
        };
        r.map_or_else(neg, |()| 0)
    }

    /// `bpf_map_delete_elem` from a program: 0 or a negative errno.
    pub fn prog_delete(&mut self, map: usize, key: &[u8]) -> i64 {
        let Some(m) = self.maps.get_mut(map) else {
            return -i64::from(errno::EINVAL);
        };
        let r = match m {
            MapImpl::Array(_) => Err(Fail::new(errno::EINVAL, "array elements cannot be deleted")),
            MapImpl::Hash(h) => h.delete(key),
            MapImpl::Lru(l) => l.delete(key),
            MapImpl::Lpm(t) => t.delete(key),
            MapImpl::Slots(_)
            | MapImpl::DevHash(_)
            | MapImpl::RingBuf(_)
            | MapImpl::Perf(_)
            | MapImpl::Outer(_) => Err(Fail::new(
                errno::EINVAL,
                "programs cannot delete from this map type",
            )),
        };
        r.map_or_else(neg, |()| 0)
    }

    /// For `bpf_redirect_map`: whether DEVMAP, DEVMAP_HASH, CPUMAP or XSKMAP `map` has an entry at `key`.
    pub fn redirect_lookup(&mut self, map: usize, key: u32) -> bool {
        match self.maps.get(map) {
            Some(MapImpl::Slots(s)) => s.contains(key),
            Some(MapImpl::DevHash(d)) => d.lookup_slot(&key.to_le_bytes()).is_some(),
            _ => false,
        }
    }

    /// For `bpf_tail_call`: the program index stored at `index` of PROG_ARRAY `map`.
    pub fn prog_array_get(&self, map: usize, index: u32) -> Option<u32> {
        match (self.maps.get(map)?, self.specs.get(map)?.map_type) {
            (MapImpl::Slots(s), map_type::PROG_ARRAY) => s.get_u32(index),
            _ => None,
        }
    }

    fn ringbuf(&mut self, map: usize) -> Option<&mut ringbuf::RingBuf> {
        match self.maps.get_mut(map)? {
            MapImpl::RingBuf(r) => Some(r),
            _ => None,
        }
    }

    /// `bpf_ringbuf_reserve`: the slot of a new record of `size` bytes, None when it does not fit or `flags` is not 0.
    pub fn ringbuf_reserve(&mut self, map: usize, size: u64, flags: u64) -> Option<u32> {
        if flags != 0 {
            return None;
        }
        self.ringbuf(map)?.reserve(size)
    }

    /// `bpf_ringbuf_submit` (or `bpf_ringbuf_discard` with `discard`) of the record in `slot`.
    pub fn ringbuf_commit(&mut self, map: usize, slot: u32, discard: bool) {
        if let Some(r) = self.ringbuf(map) {
            r.commit(slot, discard);
        }
    }

    /// `bpf_ringbuf_output`: 0, -EINVAL for unknown flags, -EAGAIN when the record does not fit.
    pub fn ringbuf_output(&mut self, map: usize, data: &[u8], flags: u64) -> i64 {
        const WAKEUP_FLAGS: u64 = 1 | 2;
        if flags & !WAKEUP_FLAGS != 0 {
            return -i64::from(errno::EINVAL);
        }
        match self.ringbuf(map).map(|r| r.output(data)) {
            Some(true) => 0,
            Some(false) => -i64::from(errno::EAGAIN),
            None => -i64::from(errno::EINVAL),
        }
    }

    /// The consumer side: submitted records in order up to the first one still reserved; frees their space.
    pub fn ringbuf_drain(&mut self, map: usize) -> Vec<Vec<u8>> {
        self.ringbuf(map)
            .map(ringbuf::RingBuf::drain)
            .unwrap_or_default()
    }

    /// `bpf_perf_event_output` into PERF_EVENT_ARRAY `map`: `index` is the low 32 bits of the flags
    /// (`BPF_F_CURRENT_CPU` is this CPU), `data` the sample (the program's bytes, then any packet bytes). 0 or the
    /// kernel's negative errno; -EINVAL when `map` is not a perf event array. The last `packet_bytes` of `data` are
    /// packet bytes (the `BPF_F_CTXLEN_MASK` part).
    pub fn perf_output(&mut self, map: usize, index: u32, data: &[u8], packet_bytes: usize) -> i64 {
        const CURRENT_CPU: u32 = u32::MAX;
        let cpu = self.cpu;
        let index = if index == CURRENT_CPU {
            cpu as u32
        } else {
            index
        };
        match self.maps.get_mut(map) {
            Some(MapImpl::Perf(p)) => p
                .output(cpu, index, data, packet_bytes)
                .map_or_else(|f| f.errno(), |()| 0),
            _ => -i64::from(errno::EINVAL),
        }
    }

    /// The consumer of PERF_EVENT_ARRAY `map`: the samples not read yet, CPU by CPU.
    pub fn perf_drain(&mut self, map: usize) -> Vec<perf::Sample> {
        match self.maps.get_mut(map) {
            Some(MapImpl::Perf(p)) => p.drain(),
            _ => Vec::new(),
        }
    }
}
