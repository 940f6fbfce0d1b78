//! `ebpflow-rtl`: the eBPFlow NIC's RTL (`rtl/ebpflow/ebpflow_nic.sv`) under Verilator. The loader's image goes into
//! the double-buffered instruction memory and its map table into the coprocessor; the trace is streamed into the
//! input ports (packet i on the port of its `ingress_ifindex`, all ports in parallel) and what each packet does comes
//! from the RTL: r0, the fault flag and the cycles of its run, its bytes as it left its TX queue (or, dropped, as it
//! left its engine), the queue it left by. Maps are the coprocessor's, read and written through its host port.
//!
//! `--swap-at N:other.o` swaps under traffic through the double-buffered instruction memory: while the packets
//! before the N-th run, the other program is written into the idle bank; the banks swap once every packet before
//! the N-th has entered its engine, and the N-th enters after. The coprocessor keeps one map table across swaps, so
//! every program swapped in must have the same maps (by name, type and sizes) as the first, or none; they share
//! them. [`Backend::maps`] are the coprocessor's, or none when the program that runs last has none.

use crate::ebpflow::{NicOptions, Swap};
use crate::registry::Entry;
use crate::{Backend, BackendError, Capabilities, Packet, Ran, Record, Redirect, Setup, Summary};
use hwxdp_ebpflow::Image;
use hwxdp_maps::{Entries, MapError, MapStore};
use hwxdp_object::{MapSpec, ObjectSpec};
use hwxdp_rtlsim::ebpflow::EbpflowPaths;
use hwxdp_rtlsim::ebpflow_nic::{
    CoprocSizes, HostRequest, NicConfig, NicMap, NicPacket, NicRtl, Observed, Offered, TxQueue,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The registry's line.
pub const ENTRY: Entry = Entry {
    name: "ebpflow-rtl",
    about: "the eBPFlow NIC's RTL under Verilator: P ports of G engines, the coprocessor's maps, TX queues",
    options: &["--ports", "--engines-per-port", "--swap-at"],
    needs_kernel: false,
    whole_trace: true,
    create,
};

/// The coprocessor's sizes in the NIC the backend builds (`ebpflow_nic`'s parameters).
pub mod limits {
    /// Map-table entries (`MAPS`).
    pub const MAPS: usize = 8;
    /// Longest key a model is built with (`KEY_BYTES`: the maps' longest rounded up to 8, at least 16; every map
    /// helper gathers that many bytes at r2).
    pub const KEY_BYTES: u32 = hwxdp_ebpflow::jobs::Shape::MAX_KEY_BYTES;
    /// Longest value a map update carries in a model (`VAL_BYTES`: as the keys, at least 32). Only an ARRAY's
    /// values may be longer (up to its 1 MiB window): the program reads them through the map-value window, the host
    /// writes them a word at a time, and a program's update of such a map faults.
    pub const VAL_BYTES: u32 = hwxdp_ebpflow::jobs::Shape::MAX_VAL_BYTES;
    /// The most entries of the flip-flop CAM, shared by the LRU_HASH maps, a model is built with (`CAM_ENTRIES`:
    /// the maps' total rounded up to a power of two, at least 64).
    pub const CAM_ENTRIES: u64 = 4096;
    /// The most buckets (4 slots each, block RAM) the HASH maps take together (`HB_BUCKETS`: the maps' total
    /// rounded up to a power of two, at least 64); a map takes the first power of two with twice its entries' slots.
    pub const HASH_BUCKETS: u64 = 8192;
    /// The most entries of the HASH maps together (`HB_ENTRIES`, as the buckets, at least 128); a map's value
    /// indices are 15 bits.
    pub const HASH_ENTRIES: u64 = 16384;
    /// The most LPM entries, shared by the LPM_TRIE maps (`TCAM_ENTRIES`: as the CAM, at least 32).
    pub const TCAM_ENTRIES: u64 = 1024;
    /// The most 64-bit words of value memory (block RAM) shared by every map a model is built with (`VM_WORDS`: the
    /// maps' total rounded up to a power of two, at least 4096).
    pub const VM_WORDS: u64 = 1 << 16;
    /// Helpers the coprocessor answers: map lookup, update, delete, `bpf_redirect`, `bpf_redirect_map`.
    pub const HELPERS: [i64; 5] = [1, 2, 3, 23, 51];
}

/// `BPF_MAP_TYPE_*` the backend maps onto the coprocessor's stores: (the object's type, the coprocessor's, per CPU).
/// A per-CPU map is one map on the NIC (every engine shares it); it shows its value on the run's CPU
/// ([`hwxdp_xdp::Config::cpu`], where the kernel's `BPF_PROG_TEST_RUN` runs too) and zeros on the others.
const TYPES: [(u32, u32, bool); 8] = [
    (1, 1, false),   // HASH
    (2, 2, false),   // ARRAY
    (5, 1, true),    // PERCPU_HASH
    (6, 2, true),    // PERCPU_ARRAY
    (9, 9, false),   // LRU_HASH
    (10, 9, true),   // LRU_PERCPU_HASH
    (11, 11, false), // LPM_TRIE
    (14, 14, false), // DEVMAP
];

/// The map-value window's base (the coprocessor contract).
const MAPV_BASE: u64 = 0x0100_0000;

/// XDP verdicts.
const XDP_PASS: u64 = 2;
const XDP_TX: u64 = 3;
const XDP_REDIRECT: u64 = 4;

fn setup_error(why: impl Into<String>) -> BackendError {
    BackendError::setup(ENTRY.name, why.into())
}

fn run_error(why: impl Into<String>) -> BackendError {
    BackendError::run(ENTRY.name, why.into())
}

/// The coprocessor's type of `spec`, and whether it is per CPU; an error naming the map when the NIC cannot hold it.
fn nic_type(spec: &MapSpec) -> Result<(u32, bool), BackendError> {
    TYPES
        .iter()
        .find(|t| t.0 == spec.map_type)
        .map(|t| (t.1, t.2))
        .ok_or_else(|| {
            setup_error(format!(
                "map {}: type {} is not one the eBPFlow coprocessor has (HASH, ARRAY, LRU_HASH, LPM_TRIE, DEVMAP \
                 and their per-CPU forms)",
                spec.name, spec.map_type
            ))
        })
}

/// The coprocessor's map table for `maps` on a NIC of `engines` engines, or an error naming the first map it cannot
/// hold and the limit. A per-CPU map needs a NIC of one engine: the engines share the coprocessor's one copy, and a
/// program that updates a per-CPU value without an atomic (as it may, the kernel's copy being its CPU's alone) would
/// lose updates when two engines race.
fn map_table(maps: &[MapSpec], engines: usize) -> Result<(Vec<NicMap>, CoprocSizes), BackendError> {
    use limits::*;
    if maps.len() > MAPS {
        return Err(setup_error(format!(
            "{} maps: the eBPFlow coprocessor's map table holds {MAPS}",
            maps.len()
        )));
    }
    let (mut cam, mut tcam, mut words) = (0u64, 0u64, 0u64);
    let (mut buckets, mut hashed) = (0u64, 0u64);
    let mut table = Vec::new();
    for m in maps {
        let (map_type, per_cpu) = nic_type(m)?;
        let name = &m.name;
        if per_cpu && engines > 1 {
            return Err(setup_error(format!(
                "map {name}: a per-CPU map on a NIC of {engines} engines: they would share the coprocessor's one \
                 copy and race on its non-atomic updates (--ports 1 --engines-per-port 1 holds it)"
            )));
        }
        let fixed_key = matches!(map_type, 2 | 14);
        if fixed_key && m.key_size != 4 {
            return Err(setup_error(format!(
                "map {name}: an array's key is 4 bytes, not {}",
                m.key_size
            )));
        }
        if m.key_size > KEY_BYTES || (map_type == 11 && m.key_size <= 4) {
            return Err(setup_error(format!(
                "map {name}: {}-byte keys, the eBPFlow coprocessor takes keys of at most {KEY_BYTES} bytes (an \
                 LPM_TRIE's more than 4)",
                m.key_size
            )));
        }
        if m.value_size == 0 || (m.value_size > VAL_BYTES && map_type != 2) {
            return Err(setup_error(format!(
                "map {name}: {}-byte values, the eBPFlow coprocessor takes values of 1 to {VAL_BYTES} bytes (an \
                 ARRAY's up to its 1 MiB window)",
                m.value_size
            )));
        }
        let entries = u64::from(m.max_entries);
        match map_type {
            1 => {
                buckets += hwxdp_rtlsim::ebpflow_nic::hash_buckets(entries);
                hashed += entries;
            }
            9 => cam += entries,
            11 => tcam += entries,
            _ => {}
        }
        if map_type == 1 && entries >= 1 << 15 {
            return Err(setup_error(format!(
                "map {name}: {entries} entries, a HASH map of the eBPFlow coprocessor holds at most 32767"
            )));
        }
        words += entries * u64::from(m.value_size.div_ceil(8));
        for (used, limit, what) in [
            (cam, CAM_ENTRIES, "CAM entries (LRU_HASH maps together)"),
            (
                buckets,
                HASH_BUCKETS,
                "buckets of 4 slots (HASH maps together)",
            ),
            (hashed, HASH_ENTRIES, "HASH entries (HASH maps together)"),
            (tcam, TCAM_ENTRIES, "TCAM entries (LPM_TRIE maps together)"),
            (
                words,
                VM_WORDS,
                "value-memory words of 8 bytes (every map together)",
            ),
        ] {
            if used > limit {
                return Err(setup_error(format!(
                    "map {name}: {} entries need {used} {what}, the eBPFlow coprocessor has at most {limit}",
                    m.max_entries
                )));
            }
        }
        table.push(NicMap {
            name: name.clone(),
            map_type,
            key_size: m.key_size,
            value_size: m.value_size,
            max_entries: m.max_entries,
        });
    }
    let default = CoprocSizes::default();
    let sizes = CoprocSizes {
        cam_entries: (cam as usize).next_power_of_two().max(default.cam_entries),
        tcam_entries: (tcam as usize)
            .next_power_of_two()
            .max(default.tcam_entries),
        hash_buckets: (buckets as usize)
            .next_power_of_two()
            .max(default.hash_buckets),
        hash_entries: (hashed as usize)
            .next_power_of_two()
            .max(default.hash_entries),
        vm_words: (words as usize).next_power_of_two().max(default.vm_words),
        // set from the loader's map table by `create` (the rule the cycle model times by)
        key_bytes: default.key_bytes,
        val_bytes: default.val_bytes,
    };
    Ok((table, sizes))
}

/// One program the NIC runs.
struct Version {
    object: PathBuf,
    program: String,
    image: Image,
}

/// The loader's image of `program`, checked against what the coprocessor answers (the NIC's `ifindex_base_i`, the
/// run's `--ifindex`, gives the programs their `ingress_ifindex`).
fn version(object: &Path, spec: &ObjectSpec, program: &str) -> Result<Version, BackendError> {
    let image = hwxdp_ebpflow::load(spec, program).map_err(|e| setup_error(e.to_string()))?;
    if let Some(&h) = image.helpers.iter().find(|h| !limits::HELPERS.contains(h)) {
        let name = i32::try_from(h)
            .ok()
            .and_then(hwxdp_xdp::helpers::helper_name)
            .unwrap_or("unknown");
        return Err(setup_error(format!(
            "{program} calls helper {h} ({name}): the eBPFlow coprocessor answers only map lookup, update and \
             delete, bpf_redirect and bpf_redirect_map"
        )));
    }
    Ok(Version {
        object: object.to_path_buf(),
        program: program.to_string(),
        image,
    })
}

/// From which packet on each version runs, by increasing packet.
type Schedule = Vec<(u64, usize)>;

/// The versions (the run's program first) and the schedule: from which packet on each runs.
fn versions(setup: &Setup, o: &NicOptions) -> Result<(Vec<Version>, Schedule), BackendError> {
    let same_maps = |s: &Swap| {
        let key = |m: &MapSpec| {
            (
                m.name.clone(),
                m.map_type,
                m.key_size,
                m.value_size,
                m.max_entries,
            )
        };
        s.spec
            .maps
            .iter()
            .map(key)
            .eq(setup.spec.maps.iter().map(key))
    };
    let mut versions = vec![version(setup.object, setup.spec, setup.program)?];
    let mut schedule = vec![(0, 0)];
    for s in &o.swaps {
        if !same_maps(s) && !s.spec.maps.is_empty() {
            return Err(setup_error(format!(
                "--swap-at {}:{}: its maps are not those of {} (the eBPFlow coprocessor keeps one map table \
                 across swaps: a program swapped in has the same maps, by name, type and sizes, or none)",
                s.at,
                s.object.display(),
                setup.object.display()
            )));
        }
        let known = versions
            .iter()
            .position(|v| v.object == s.object && v.program == s.program);
        let v = match known {
            Some(v) => v,
            None => {
                versions.push(version(&s.object, &s.spec, &s.program)?);
                versions.len() - 1
            }
        };
        schedule.push((s.at, v));
    }
    Ok((versions, schedule))
}

fn create(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let o = &setup.options.ebpflow;
    let config = NicConfig {
        ports: o.ports,
        engines_per_port: o.engines_per_port,
    };
    if !(1..=crate::ebpflow::MAX_PORTS).contains(&o.ports) || o.engines_per_port == 0 {
        return Err(setup_error(format!(
            "--ports must be 1 to {} and --engines-per-port at least 1 (given {} and {})",
            crate::ebpflow::MAX_PORTS,
            o.ports,
            o.engines_per_port
        )));
    }
    let (table, mut sizes) = map_table(&setup.spec.maps, o.ports * o.engines_per_port)?;
    let (versions, schedule) = versions(setup, o)?;
    let shape = hwxdp_ebpflow::jobs::Shape::of(&versions[0].image.maps);
    sizes.key_bytes = shape.key_bytes as usize;
    sizes.val_bytes = shape.val_bytes as usize;
    let mut paths = EbpflowPaths::from_env();
    paths.notify = setup.notify;
    let nic = NicRtl::with_sizes(&paths, config, sizes).map_err(|e| setup_error(e.to_string()))?;
    let last_has_none = o.swaps.last().is_some_and(|s| s.spec.maps.is_empty());
    let mut maps = RtlMaps {
        nic,
        specs: setup.spec.maps.clone(),
        hidden: last_has_none,
        table,
        possible_cpus: setup.config.possible_cpus.max(1),
        cpu: setup.config.cpu,
        val_bytes: shape.val_bytes,
    };
    maps.start(&versions, o.first_ifindex)
        .map_err(|e| setup_error(e.to_string()))?;
    maps.preset(&setup.spec.maps)?;
    Ok(Box::new(EbpflowRtl {
        maps,
        versions,
        schedule,
        applied: 0,
        first_ifindex: o.first_ifindex,
        handed: 0,
        stats: Stats {
            packets: vec![0; o.ports],
            ..Stats::default()
        },
    }))
}

/// Figures over everything run.
#[derive(Default)]
struct Stats {
    packets: Vec<u64>,
    cycles: u64,
    reordered: u64,
    swaps: u64,
}

/// The NIC, seen through its coprocessor's host port as the object's maps.
struct RtlMaps {
    nic: NicRtl,
    specs: Vec<MapSpec>,
    /// The program that runs last has no maps: none are shown.
    hidden: bool,
    table: Vec<NicMap>,
    possible_cpus: usize,
    cpu: usize,
    /// The longest value an update carries on this model (`VAL_BYTES`): longer ones are written a word at a time.
    val_bytes: u32,
}

impl RtlMaps {
    /// The map table, the action modules in XDP mode, port 0's ifindex, the first program active and every version
    /// kept for the swaps.
    fn start(
        &mut self,
        versions: &[Version],
        first_ifindex: u32,
    ) -> Result<(), hwxdp_rtlsim::ebpflow_nic::NicRtlError> {
        self.nic.map_table(&self.table)?;
        self.nic
            .set_mode(hwxdp_rtlsim::ebpflow_nic::ResultMode::Xdp)?;
        self.nic.set_ifindex_base(first_ifindex)?;
        self.nic.load(&versions[0].image.slots)?;
        for (i, v) in versions.iter().enumerate() {
            self.nic.keep_program(i, &v.image.slots)?;
        }
        Ok(())
    }

    /// The globals' initial contents (`.rodata`, `.data`: entry 0 of their arrays).
    fn preset(&mut self, maps: &[MapSpec]) -> Result<(), BackendError> {
        for (m, spec) in maps.iter().enumerate() {
            if let Some(init) = &spec.initial_value {
                let mut value = init.clone();
                value.resize(spec.value_size as usize, 0);
                self.write(m, &0u32.to_le_bytes(), &value, 0)
                    .map_err(|e| setup_error(e.to_string()))?;
            }
        }
        Ok(())
    }

    fn error(&self, map: usize, errno: i32, message: impl Into<String>) -> MapError {
        MapError {
            map: self
                .specs
                .get(map)
                .map_or_else(|| format!("#{map}"), |s| s.name.clone()),
            errno,
            message: message.into(),
        }
    }

    fn rtl(&self, map: usize, e: impl std::fmt::Display) -> MapError {
        self.error(map, 5, format!("the eBPFlow NIC's host port: {e}"))
    }

    fn spec(&self, map: usize) -> Result<&MapSpec, MapError> {
        self.specs
            .get(map)
            .ok_or_else(|| self.error(map, 22, "no such map"))
    }

    fn per_cpu(&self, map: usize) -> bool {
        self.specs
            .get(map)
            .and_then(|s| nic_type(s).ok())
            .is_some_and(|t| t.1)
    }

    fn request(&mut self, map: usize, r: HostRequest) -> Result<(u64, Vec<u8>), MapError> {
        let answer = self.nic.host(&r);
        answer.map_err(|e| self.rtl(map, e))
    }

    /// The value as the syscall shows it: once per possible CPU for a per-CPU map, the run's CPU's the NIC's.
    fn shown(&self, map: usize, value: Vec<u8>) -> Vec<u8> {
        if !self.per_cpu(map) {
            return value;
        }
        let round = value.len().div_ceil(8) * 8;
        let mut out = vec![0; round * self.possible_cpus];
        let at = round * self.cpu.min(self.possible_cpus - 1);
        out[at..at + value.len()].copy_from_slice(&value);
        out
    }

    /// Update `key` with `value` (the NIC's view: one value) with `flags`.
    fn write(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) -> Result<(), MapError> {
        if value.len() > self.val_bytes as usize {
            return self.write_words(map, key, value, flags);
        }
        let (r0, _) = self.request(
            map,
            HostRequest {
                id: 2,
                r1: map as u64,
                r4: flags,
                key: key.to_vec(),
                value: value.to_vec(),
                ..HostRequest::default()
            },
        )?;
        errno(r0).map_or(Ok(()), |e| {
            Err(self.error(map, e, "the coprocessor refused the update"))
        })
    }
}

impl RtlMaps {
    /// An ARRAY's value longer than an update carries: `array_map_update_elem`'s checks, then the value a word at a
    /// time through the host port's window writes (host id 257).
    fn write_words(
        &mut self,
        map: usize,
        key: &[u8],
        value: &[u8],
        flags: u64,
    ) -> Result<(), MapError> {
        let spec = self.spec(map)?.clone();
        let index = key
            .get(..4)
            .map(|k| u32::from_le_bytes(k.try_into().expect("4 bytes")));
        if flags & !4 > 2 {
            return Err(self.error(map, 22, "unknown update flags"));
        }
        let index = match index {
            Some(i) if i < spec.max_entries => u64::from(i),
            _ => return Err(self.error(map, 7, "index out of the array")),
        };
        if flags & 1 != 0 {
            return Err(self.error(map, 17, "an array's entries always exist (BPF_NOEXIST)"));
        }
        if flags & 4 != 0 {
            return Err(self.error(map, 22, "BPF_F_LOCK: the map has no spin lock"));
        }
        let stride = u64::from(spec.value_size.div_ceil(8));
        let value = value.get(..spec.value_size as usize).unwrap_or(value);
        let words: Vec<(u64, u64)> = value
            .chunks(8)
            .enumerate()
            .map(|(w, chunk)| {
                let mut word = [0u8; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                let at = ((map as u64) << 20) + (index * stride + w as u64) * 8;
                (at, u64::from_le_bytes(word))
            })
            .collect();
        self.nic.write_words(&words).map_err(|e| self.rtl(map, e))
    }
}

/// The errno of a helper's negative r0.
fn errno(r0: u64) -> Option<i32> {
    let r = r0 as i64;
    (r < 0).then(|| (-r) as i32)
}

impl MapStore for RtlMaps {
    fn specs(&self) -> &[MapSpec] {
        if self.hidden {
            &[]
        } else {
            &self.specs
        }
    }

    fn possible_cpus(&self) -> usize {
        self.possible_cpus
    }

    fn lookup(&mut self, map: usize, key: &[u8]) -> Result<Option<Vec<u8>>, MapError> {
        let size = self.spec(map)?.value_size as usize;
        let (addr, _) = self.request(
            map,
            HostRequest {
                id: 1,
                r1: map as u64,
                key: key.to_vec(),
                ..HostRequest::default()
            },
        )?;
        if addr == 0 {
            return Ok(None);
        }
        let mut value = Vec::new();
        for w in 0..size.div_ceil(8) as u64 {
            let (word, _) = self.request(
                map,
                HostRequest {
                    id: 256,
                    r1: (addr - MAPV_BASE + 8 * w) & 0xff_ffff,
                    ..HostRequest::default()
                },
            )?;
            value.extend(word.to_le_bytes());
        }
        value.truncate(size);
        Ok(Some(self.shown(map, value)))
    }

    fn update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) -> Result<(), MapError> {
        let size = self.spec(map)?.value_size as usize;
        let mine = if self.per_cpu(map) {
            let round = size.div_ceil(8) * 8;
            let at = round * self.cpu.min(self.possible_cpus - 1);
            value.get(at..at + size).unwrap_or(value).to_vec()
        } else {
            value.to_vec()
        };
        self.write(map, key, &mine, flags)
    }

    fn delete(&mut self, map: usize, key: &[u8]) -> Result<(), MapError> {
        self.spec(map)?;
        let (r0, _) = self.request(
            map,
            HostRequest {
                id: 3,
                r1: map as u64,
                key: key.to_vec(),
                ..HostRequest::default()
            },
        )?;
        errno(r0).map_or(Ok(()), |e| {
            Err(self.error(map, e, "the coprocessor refused the delete"))
        })
    }

    fn entries(&mut self, map: usize) -> Result<Entries, MapError> {
        let spec = self.spec(map)?.clone();
        let words = spec.value_size.div_ceil(8);
        let got = self
            .nic
            .entries(map, spec.max_entries, spec.key_size, words);
        let got = got.map_err(|e| self.rtl(map, e))?;
        let mut out: Entries = Vec::new();
        for (key, mut value) in got {
            value.truncate(spec.value_size as usize);
            if spec.map_type == 14 && value.iter().take(4).all(|&b| b == 0) {
                continue; // an empty device-map slot
            }
            out.push((key, self.shown(map, value)));
        }
        out.sort();
        Ok(out)
    }
}

struct EbpflowRtl {
    maps: RtlMaps,
    versions: Vec<Version>,
    schedule: Schedule,
    /// Swaps of the schedule made so far.
    applied: usize,
    first_ifindex: u32,
    /// Packets handed to the NIC so far.
    handed: u64,
    stats: Stats,
}

impl EbpflowRtl {
    fn port_of(&self, packet: &Packet) -> Result<usize, BackendError> {
        let ports = self.maps.nic.config().ports;
        let p = packet.md.ingress_ifindex.wrapping_sub(self.first_ifindex) as usize;
        if p < ports {
            return Ok(p);
        }
        Err(run_error(format!(
            "a packet arrives on ifindex {}, the NIC's {ports} ports are ifindex {} to {}",
            packet.md.ingress_ifindex,
            self.first_ifindex,
            self.first_ifindex + ports as u32 - 1
        )))
    }

    /// The packets as the NIC is offered them, each with its epoch, and the versions of the epochs after the first.
    fn offer(&mut self, packets: &[Packet]) -> Result<(Vec<Offered>, Vec<usize>), BackendError> {
        let mut offered = Vec::with_capacity(packets.len());
        let mut epochs = Vec::new();
        for (i, packet) in packets.iter().enumerate() {
            let k = self.handed + i as u64;
            while let Some(&(at, v)) = self.schedule.get(self.applied + epochs.len() + 1) {
                if at > k {
                    break;
                }
                epochs.push(v);
            }
            let rx_queue = u8::try_from(packet.md.rx_queue_index).map_err(|_| {
                run_error(format!(
                    "rx_queue_index {}: the eBPFlow header's source queue is one byte",
                    packet.md.rx_queue_index
                ))
            })?;
            offered.push(Offered {
                packet: NicPacket {
                    port: self.port_of(packet)?,
                    id: k as u32,
                    gap: 0,
                    frame: packet.bytes.clone(),
                },
                rx_queue,
                epoch: epochs.len() as u32,
            });
        }
        Ok((offered, epochs))
    }

    /// Each packet's result from what the NIC did, in packet order.
    fn results(&mut self, offered: &[Offered], seen: &Observed) -> Result<Vec<Ran>, BackendError> {
        let ports = self.maps.nic.config().ports;
        let mut runs = HashMap::new();
        for r in &seen.results {
            runs.insert(r.id, r);
        }
        let mut left: HashMap<u32, (TxQueue, u64, &Vec<u8>)> = HashMap::new();
        for o in &seen.outputs {
            left.entry(o.id).or_insert((o.queue, o.out_cycle, &o.frame));
        }
        let dropped: HashMap<u32, &Vec<u8>> =
            seen.dropped.iter().map(|d| (d.id, &d.frame)).collect();
        let mut out = Vec::with_capacity(offered.len());
        let mut latest: HashMap<(usize, TxQueue), u64> = HashMap::new();
        for o in offered {
            let id = o.packet.id;
            let lost = || {
                run_error(format!(
                    "packet {id} was lost in the NIC: no result or no copy left"
                ))
            };
            let run = runs.get(&id).ok_or_else(lost)?;
            let (queue, frame) = match (left.get(&id), dropped.get(&id)) {
                (Some(&(q, at, f)), _) => {
                    let last = latest.entry((o.packet.port, q)).or_insert(0);
                    if at < *last {
                        self.stats.reordered += 1;
                    } else {
                        *last = at;
                    }
                    (Some(q), f.clone())
                }
                (None, Some(f)) => (None, (*f).clone()),
                (None, None) => return Err(lost()),
            };
            check_queue(id, run.r0, run.fault, o.packet.port, queue, ports)?;
            self.stats.packets[o.packet.port] += 1;
            out.push(Ran {
                retval: run.r0 as u32,
                output: frame,
                redirect: match queue {
                    Some(TxQueue::Port(p)) if run.r0 == XDP_REDIRECT => Some(Redirect {
                        map: None,
                        key: u64::from(self.first_ifindex) + p as u64,
                    }),
                    Some(_) if run.r0 == XDP_REDIRECT => Some(Redirect { map: None, key: 0 }),
                    _ => None,
                },
                fault: run.fault.then(|| {
                    format!(
                        "the eBPFlow engine {} faulted (r0 {:#x})",
                        run.engine, run.r0
                    )
                }),
                cycles: Some(run.cycles),
                ..Ran::default()
            });
        }
        Ok(out)
    }
}

/// The queue a packet left by must be the one Table 4.2 gives its verdict (XDP_PASS the host, XDP_TX its port,
/// XDP_REDIRECT a port or the host, the rest none).
fn check_queue(
    id: u32,
    r0: u64,
    fault: bool,
    port: usize,
    queue: Option<TxQueue>,
    ports: usize,
) -> Result<(), BackendError> {
    let fits = match (fault, r0, queue) {
        (true, _, q) => q.is_none(),
        (false, XDP_PASS, q) => q == Some(TxQueue::Host),
        (false, XDP_TX, q) => q == Some(TxQueue::Port(port)),
        (false, XDP_REDIRECT, Some(TxQueue::Port(p))) => p < ports,
        (false, XDP_REDIRECT, q) => q.is_none() || q == Some(TxQueue::Host),
        (false, _, q) => q.is_none(),
    };
    if fits {
        return Ok(());
    }
    Err(run_error(format!(
        "packet {id}: r0 {r0} (fault {fault}) left by {queue:?}, not the queue Table 4.2 gives it"
    )))
}

impl Backend for EbpflowRtl {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            cycles: true,
            whole_trace: true,
            redirects: true,
            ..Capabilities::default()
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let (offered, epochs) = self.offer(packets)?;
        let seen = self
            .maps
            .nic
            .observe(&offered, &epochs)
            .map_err(|e| run_error(e.to_string()))?;
        if seen.swaps as usize != epochs.len() {
            return Err(run_error(format!(
                "{} program swaps asked for, the NIC made {}",
                epochs.len(),
                seen.swaps
            )));
        }
        let out = self.results(&offered, &seen)?;
        self.handed += packets.len() as u64;
        self.applied += epochs.len();
        self.stats.swaps += u64::from(seen.swaps);
        self.stats.cycles += seen.cycles;
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        &mut self.maps
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        Ok(Vec::new())
    }

    fn summary(&self) -> Summary {
        let c = self.maps.nic.config();
        let s = &self.stats;
        let run = crate::ebpflow::NicRun {
            ports: c.ports,
            engines_per_port: c.engines_per_port,
            image_slots: self.versions[0].image.slots.len(),
            cycles: s.cycles,
            reordered: s.reordered,
            packets: &s.packets,
            swaps: (self.schedule.len() > 1).then_some(s.swaps),
        };
        crate::ebpflow::nic_summary(&run, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(maps: &[MapSpec], engines: usize) -> String {
        map_table(maps, engines).expect_err("refused").to_string()
    }

    #[test]
    fn the_stores_are_sized_to_the_maps_and_their_limits_name_the_map() {
        let hash = |name: &str, n| MapSpec::new(name, 1, 8, 8, n);
        let lru = |name: &str, n| MapSpec::new(name, 9, 8, 8, n);
        let (table, sizes) = map_table(&[hash("a", 100), hash("b", 200)], 4).expect("fits");
        assert_eq!(table.len(), 2);
        // 64 + 128 buckets (twice the entries' slots, 4 a bucket), 300 entries; the CAM is the LRU maps' only
        assert_eq!(sizes.hash_buckets, 256);
        assert_eq!(sizes.hash_entries, 512);
        assert_eq!(sizes.cam_entries, 64);
        assert_eq!(sizes.tcam_entries, 32);
        let (_, lrus) = map_table(&[lru("a", 100), lru("b", 200)], 4).expect("fits");
        assert_eq!(lrus.cam_entries, 512);
        let (_, small) = map_table(&[hash("a", 3)], 4).expect("fits");
        assert_eq!(small, CoprocSizes::default());
        let lpm = MapSpec::new("routes", 11, 8, 16, 300);
        assert_eq!(map_table(&[lpm], 1).expect("fits").1.tcam_entries, 512);
        let err = refusal(&[lru("a", 4000), lru("big", 200)], 1);
        assert!(
            err.contains("map big: 200 entries need 4200 CAM entries")
                && err.contains("has at most 4096"),
            "{err}"
        );
        let err = refusal(&[MapSpec::new("words", 2, 4, 32, 20000)], 1);
        assert!(
            err.contains("map words") && err.contains("value-memory words"),
            "{err}"
        );
        // 64-byte keys, 128-byte values, an ARRAY's longer values (a DPI table): value memory sized to them
        let (_, wide) = map_table(&[MapSpec::new("k", 1, 64, 128, 4)], 1).expect("fits");
        assert_eq!(wide.vm_words, 4096);
        let (_, table) = map_table(&[MapSpec::new(".rodata", 2, 4, 133_120, 1)], 1).expect("fits");
        assert_eq!(table.vm_words, 32768);
        let err = refusal(&[MapSpec::new("k", 1, 72, 8, 4)], 1);
        assert!(err.contains("map k: 72-byte keys"), "{err}");
        let err = refusal(&[MapSpec::new("v", 1, 8, 136, 4)], 1);
        assert!(
            err.contains("map v: 136-byte values") && err.contains("1 to 128 bytes"),
            "{err}"
        );
        let err = refusal(&[MapSpec::new("p", 6, 4, 8, 4)], 2);
        assert!(
            err.contains("map p: a per-CPU map on a NIC of 2 engines"),
            "{err}"
        );
        map_table(&[MapSpec::new("p", 6, 4, 8, 4)], 1).expect("one engine holds it");
        let nine: Vec<MapSpec> = (0..9).map(|i| hash(&format!("m{i}"), 1)).collect();
        assert!(refusal(&nine, 1).contains("9 maps"));
    }

    #[test]
    fn a_verdict_must_leave_by_its_queue() {
        check_queue(0, XDP_PASS, false, 0, Some(TxQueue::Host), 2).expect("pass");
        check_queue(0, XDP_TX, false, 1, Some(TxQueue::Port(1)), 2).expect("tx");
        check_queue(0, XDP_REDIRECT, false, 1, Some(TxQueue::Port(0)), 2).expect("redirect");
        check_queue(0, 1, false, 1, None, 2).expect("drop");
        check_queue(0, XDP_PASS, true, 1, None, 2).expect("a fault drops");
        let err = check_queue(7, XDP_TX, false, 1, Some(TxQueue::Port(0)), 2)
            .expect_err("wrong port")
            .to_string();
        assert!(err.contains("packet 7"), "{err}");
    }
}
