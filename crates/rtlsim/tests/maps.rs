//! rtl/sephirot/maps.sv against the reference maps (`hwxdp_maps::Maps`), operation by operation: seeded random
//! sequences of program lookups, updates and deletes, host (syscall-side) operations and value loads and stores, each
//! compared for return code, hit, slot and bytes, then a dump of every slot through the host port compared with the
//! reference's entries and slot values.

mod common;

use common::{hex_or_dash as hex, unhex, Rng};
use hwxdp_maps::{MapStore, Maps};
use hwxdp_object::MapSpec;
use hwxdp_rtlsim::synth;

/// The parameters a session's model is built with (`-G` overrides of maps.sv's), and the possible CPUs of the
/// reference maps.
#[derive(Clone, Copy, Debug)]
struct Params {
    key_bytes: usize,
    value_bytes: usize,
    entries: usize,
    mem_words: usize,
    possible_cpus: usize,
}

/// maps.sv's defaults.
const DEFAULTS: Params = Params {
    key_bytes: 16,
    value_bytes: 64,
    entries: 32,
    mem_words: 512,
    possible_cpus: 1,
};

impl Params {
    fn flags(&self) -> Vec<String> {
        vec![
            format!("-GKEY_BYTES={}", self.key_bytes),
            format!("-GVALUE_BYTES={}", self.value_bytes),
            format!("-GENTRIES={}", self.entries),
            format!("-GMEM_WORDS={}", self.mem_words),
            format!("-GPOSSIBLE_CPUS={}", self.possible_cpus),
        ]
    }
}

const HASH: u32 = 1;
const ARRAY: u32 = 2;
const PROG_ARRAY: u32 = 3;
const PERCPU_HASH: u32 = 5;
const PERCPU_ARRAY: u32 = 6;
const LRU_HASH: u32 = 9;
const LPM_TRIE: u32 = 11;
const DEVMAP: u32 = 14;
const RINGBUF: u32 = 27;
const NUMA_NODE: u32 = 1 << 2;
const RDONLY_PROG: u32 = 1 << 7;
const MMAPABLE: u32 = 1 << 10;
const NO_PREALLOC: u32 = 1;
const NO_COMMON_LRU: u32 = 1 << 1;
const RDONLY: u32 = 1 << 3;
const WRONLY: u32 = 1 << 4;

/// What one command must print; `None` fields are not compared.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    Ok,
    Config {
        error: bool,
    },
    Request {
        ret: i64,
        hit: bool,
        slot: u32,
    },
    /// A get (request op 3): hit, slot and the value's first 8 bytes.
    Get {
        hit: bool,
        slot: u32,
        value: u64,
    },
    Host {
        ret: i64,
        hit: bool,
        key: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
    },
    /// One cycle of the value ports: the load's data and fault, the store's fault.
    Value {
        rdata: u64,
        rfault: bool,
        wfault: bool,
    },
    /// A slot read for the final dump: checked against the reference afterwards.
    Dump {
        map: usize,
        slot: u32,
    },
}

/// A command line for the testbench and what the reference machine says it must print.
struct Step {
    line: String,
    what: String,
    expect: Expect,
}

/// One output line, parsed.
#[derive(Debug, Clone)]
struct Output {
    fields: Vec<String>,
}

/// Sends every line through a fresh model built with `params` and returns its output lines.
fn simulate(lines: &[String], params: &Params) -> Vec<Output> {
    let mut spec = common::unit_spec("maps")
        .source("common/ram_sdp.sv")
        .source("common/ram_tdp.sv")
        .source("common/hash32.sv")
        .source("sephirot/maps_values.sv")
        .source("sephirot/maps.sv");
    spec.flags.extend(params.flags());
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    common::run_testbench(&spec, input)
        .iter()
        .map(|line| Output {
            fields: line.split_whitespace().map(str::to_string).collect(),
        })
        .collect()
}

fn field_u64(out: &Output, i: usize) -> u64 {
    u64::from_str_radix(&out.fields[i], 16).expect("hex field")
}

/// A test bench session: the reference maps and the commands with their expected results.
struct Session {
    params: Params,
    specs: Vec<MapSpec>,
    maps: Maps,
    steps: Vec<Step>,
    /// Slots lookups have returned, per map (stale ones included, as programs may keep pointers).
    seen: Vec<Vec<u32>>,
    /// Slots each map has in the RTL layout.
    slot_counts: Vec<u32>,
}

fn slot_count(spec: &MapSpec) -> u32 {
    match spec.map_type {
        HASH | PERCPU_HASH | LPM_TRIE => spec.max_entries + 1,
        RINGBUF => 0,
        _ => spec.max_entries,
    }
}

/// Bytes of a value as the syscall shows it: per-CPU maps show one CPU's value padded to 8 bytes.
fn syscall_value_size(spec: &MapSpec) -> usize {
    match spec.map_type {
        PERCPU_HASH | PERCPU_ARRAY => (spec.value_size as usize).next_multiple_of(8),
        _ => spec.value_size as usize,
    }
}

impl Session {
    fn new(specs: Vec<MapSpec>) -> Session {
        Session::with_params(specs, DEFAULTS)
    }

    /// A session on a model built with `params`, against reference maps with `params.possible_cpus` CPUs.
    fn with_params(specs: Vec<MapSpec>, params: Params) -> Session {
        let maps = Maps::new(&specs, params.possible_cpus).expect("valid maps");
        let mut steps = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            steps.push(Step {
                line: format!(
                    "c {i:x} {:x} {:x} {:x} {:x} {:x}",
                    s.map_type, s.key_size, s.value_size, s.max_entries, s.map_flags
                ),
                what: format!("configure map {i}"),
                expect: Expect::Ok,
            });
        }
        steps.push(Step {
            line: "d".into(),
            what: "configuration done".into(),
            expect: Expect::Config { error: false },
        });
        Session {
            params,
            seen: vec![Vec::new(); specs.len()],
            slot_counts: specs.iter().map(slot_count).collect(),
            specs,
            maps,
            steps,
        }
    }

    fn push(&mut self, line: String, what: String, expect: Expect) {
        self.steps.push(Step { line, what, expect });
    }

    fn prog_lookup(&mut self, map: usize, key: &[u8], stall: bool) {
        let slot = self.maps.lookup_slot(map, key);
        if let (Some(s), Some(seen)) = (slot, self.seen.get_mut(map)) {
            if !seen.contains(&s) {
                seen.push(s);
            }
        }
        self.push(
            format!("o 0 0 {map:x} 0 0 {} - {}", hex(key), u8::from(stall)),
            format!("prog lookup map {map} key {}", hex(key)),
            Expect::Request {
                ret: 0,
                hit: slot.is_some(),
                slot: slot.unwrap_or(0),
            },
        );
    }

    /// Request op 3 at `index`: what `bpf_tail_call` (PROG_ARRAY: `prog_array_get`) and `bpf_redirect_map`
    /// (DEVMAP: `redirect_lookup`) ask; other map types miss.
    fn prog_get(&mut self, map: usize, index: u32, stall: bool) {
        let map_type = self.specs.get(map).map_or(0, |s| s.map_type);
        let (hit, value) = match map_type {
            PROG_ARRAY => match self.maps.prog_array_get(map, index) {
                Some(w) => (true, u64::from(w)),
                None => (false, 0),
            },
            DEVMAP if self.maps.redirect_lookup(map, index) => {
                let mut b = [0u8; 8];
                let v = self.maps.value(map, index);
                b[..v.len()].copy_from_slice(v);
                (true, u64::from_le_bytes(b))
            }
            _ => (false, 0),
        };
        self.push(
            format!(
                "o 0 3 {map:x} 0 0 {} - {}",
                hex(&index.to_le_bytes()),
                u8::from(stall)
            ),
            format!("prog get map {map} index {index}"),
            Expect::Get {
                hit,
                slot: if hit { index } else { 0 },
                value,
            },
        );
    }

    fn prog_update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64, stall: bool) {
        let ret = self.maps.prog_update(map, key, value, flags);
        self.push(
            format!(
                "o 0 1 {map:x} {flags:x} 0 {} {} {}",
                hex(key),
                hex(value),
                u8::from(stall)
            ),
            format!("prog update map {map} key {} flags {flags}", hex(key)),
            Expect::Request {
                ret,
                hit: false,
                slot: 0,
            },
        );
    }

    fn prog_delete(&mut self, map: usize, key: &[u8], stall: bool) {
        let ret = self.maps.prog_delete(map, key);
        self.push(
            format!("o 0 2 {map:x} 0 0 {} - {}", hex(key), u8::from(stall)),
            format!("prog delete map {map} key {}", hex(key)),
            Expect::Request {
                ret,
                hit: false,
                slot: 0,
            },
        );
    }

    fn host_lookup(&mut self, map: usize, key: &[u8]) {
        let (ret, found) = match self.maps.lookup(map, key) {
            Ok(v) => (0, v),
            Err(e) => (-i64::from(e.errno), None),
        };
        let value = found.as_ref().map(|v| {
            let mut v = v.clone();
            v.resize(self.params.value_bytes, 0);
            v
        });
        self.push(
            format!("o 1 0 {map:x} 0 0 {} - 0", hex(key)),
            format!("host lookup map {map} key {}", hex(key)),
            Expect::Host {
                ret,
                hit: found.is_some(),
                key: None,
                value: Some(value.unwrap_or_else(|| vec![0; self.params.value_bytes])),
            },
        );
    }

    fn host_update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) {
        let ret = match self.maps.update(map, key, value, flags) {
            Ok(()) => 0,
            Err(e) => -i64::from(e.errno),
        };
        self.push(
            format!("o 1 1 {map:x} {flags:x} 0 {} {} 0", hex(key), hex(value)),
            format!("host update map {map} key {} flags {flags}", hex(key)),
            Expect::Host {
                ret,
                hit: false,
                key: None,
                value: None,
            },
        );
    }

    fn host_delete(&mut self, map: usize, key: &[u8]) {
        let ret = match self.maps.delete(map, key) {
            Ok(()) => 0,
            Err(e) => -i64::from(e.errno),
        };
        self.push(
            format!("o 1 2 {map:x} 0 0 {} - 0", hex(key)),
            format!("host delete map {map} key {}", hex(key)),
            Expect::Host {
                ret,
                hit: false,
                key: None,
                value: None,
            },
        );
    }

    /// Whether an access of `bytes` at `off` in `slot` of `map` faults: exactly when the bytes leave the value.
    fn faults(&self, a: &Access) -> bool {
        let Some(spec) = self.specs.get(a.map) else {
            return true;
        };
        !(1..=8).contains(&a.bytes)
            || a.off + a.bytes > spec.value_size as usize
            || a.slot >= self.slot_counts[a.map]
    }

    /// One cycle of the value ports: a load and a store, either or both. The load sees the memory as it was before
    /// the cycle (the core never loads bytes it stores in the same cycle; sessions keep them apart).
    fn value_cycle(&mut self, load: Option<Access>, store: Option<(Access, u64)>) {
        let mut rdata = 0;
        let rfault = load.as_ref().is_some_and(|a| self.faults(a));
        let wfault = store.as_ref().is_some_and(|(a, _)| self.faults(a));
        if let (Some(a), false) = (&load, rfault) {
            let value = self.maps.value(a.map, a.slot);
            let mut b = [0u8; 8];
            b[..a.bytes].copy_from_slice(&value[a.off..a.off + a.bytes]);
            rdata = u64::from_le_bytes(b);
        }
        if let (Some((a, data)), false) = (&store, wfault) {
            let value = self.maps.value_mut(a.map, a.slot);
            let size = self.specs[a.map].value_size as usize;
            assert_eq!(
                value.len(),
                size,
                "slot {} of map {} exists in the reference",
                a.slot,
                a.map
            );
            value[a.off..a.off + a.bytes].copy_from_slice(&data.to_le_bytes()[..a.bytes]);
        }
        let field = |a: Option<&Access>| match a {
            Some(a) => format!("1 {:x} {:x} {:x} {:x}", a.map, a.slot, a.off, a.bytes),
            None => "0 0 0 0 0".to_string(),
        };
        let describe = |a: &Access| {
            format!(
                "map {} slot {} off {} bytes {}",
                a.map, a.slot, a.off, a.bytes
            )
        };
        let what = match (&load, &store) {
            (Some(l), Some((w, _))) => {
                format!("value load {} with store {}", describe(l), describe(w))
            }
            (Some(l), None) => format!("value load {}", describe(l)),
            (None, Some((w, _))) => format!("value store {}", describe(w)),
            (None, None) => "idle value ports".to_string(),
        };
        self.push(
            format!(
                "v {} {} {:x}",
                field(load.as_ref()),
                field(store.as_ref().map(|(a, _)| a)),
                store.as_ref().map_or(0, |(_, d)| *d)
            ),
            what,
            Expect::Value {
                rdata,
                rfault,
                wfault,
            },
        );
    }

    /// Checks that a random session exercised what it is meant to: successful updates, errors and lookup hits.
    fn assert_coverage(&self, want_errno: &[i64]) {
        let count = |pred: &dyn Fn(&Step) -> bool| self.steps.iter().filter(|s| pred(s)).count();
        let updates = count(&|s| {
            s.what.starts_with("prog update") && matches!(s.expect, Expect::Request { ret: 0, .. })
        });
        let hits = count(&|s| matches!(s.expect, Expect::Request { hit: true, .. }));
        assert!(
            updates >= 20 && hits >= 20,
            "{updates} successful updates, {hits} hits"
        );
        let pairs = count(&|s| {
            s.what.contains(" with store ")
                && matches!(
                    s.expect,
                    Expect::Value {
                        rfault: false,
                        wfault: false,
                        ..
                    }
                )
        });
        assert!(
            pairs >= 10,
            "only {pairs} cycles load and store map values together"
        );
        for errno in want_errno {
            let n = count(&|s| matches!(s.expect, Expect::Request { ret, .. } if ret == -errno));
            assert!(n >= 3, "only {n} program operations return -{errno}");
        }
    }

    /// Reads every slot of every map through the host port.
    fn dump(&mut self) {
        for map in 0..self.specs.len() {
            for slot in 0..self.slot_counts[map] {
                self.push(
                    format!("o 1 3 {map:x} 0 {slot:x} - - 0"),
                    format!("dump map {map} slot {slot}"),
                    Expect::Dump { map, slot },
                );
            }
        }
    }

    /// Runs the session through the model and checks every line, then the dump against the reference's entries.
    fn check(mut self) {
        let lines: Vec<String> = self.steps.iter().map(|s| s.line.clone()).collect();
        let out = simulate(&lines, &self.params);
        assert_eq!(out.len(), self.steps.len(), "one output line per command");
        let mut mismatches = Vec::new();
        let mut dumped: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); self.specs.len()];
        for (step, o) in self.steps.iter().zip(&out) {
            let got = match &step.expect {
                Expect::Ok => (o.fields == ["ok"]).then_some(Expect::Ok),
                Expect::Config { .. } => Some(Expect::Config {
                    error: o.fields[0] == "1",
                }),
                Expect::Request { .. } => Some(Expect::Request {
                    ret: field_u64(o, 0) as i64,
                    hit: o.fields[1] == "1",
                    slot: field_u64(o, 2) as u32,
                }),
                Expect::Get { .. } => {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&unhex(&o.fields[4])[..8]);
                    Some(Expect::Get {
                        hit: o.fields[1] == "1" && field_u64(o, 0) == 0,
                        slot: field_u64(o, 2) as u32,
                        value: u64::from_le_bytes(b),
                    })
                }
                Expect::Host { key, value, .. } => Some(Expect::Host {
                    ret: field_u64(o, 0) as i64,
                    hit: o.fields[1] == "1",
                    key: key.as_ref().map(|_| unhex(&o.fields[3])),
                    value: value.as_ref().map(|_| unhex(&o.fields[4])),
                }),
                Expect::Value { .. } => Some(Expect::Value {
                    rdata: field_u64(o, 0),
                    rfault: o.fields[1] == "1",
                    wfault: o.fields[2] == "1",
                }),
                Expect::Dump { map, slot } => {
                    let spec = &self.specs[*map];
                    if field_u64(o, 0) != 0 {
                        mismatches.push(format!("{}: return {}", step.what, o.fields[0]));
                    }
                    if o.fields[1] == "1" {
                        assert_eq!(
                            o.fields[3].len(),
                            2 * self.params.key_bytes,
                            "host_rsp_key_o width"
                        );
                        let key = unhex(&o.fields[3])[..spec.key_size as usize].to_vec();
                        let value = unhex(&o.fields[4])[..spec.value_size as usize].to_vec();
                        let reference = self.maps.value(*map, *slot);
                        if reference != value.as_slice() {
                            mismatches.push(format!(
                                "{}: value {}, reference slot holds {}",
                                step.what,
                                hex(&value),
                                hex(reference)
                            ));
                        }
                        dumped[*map].push((key, value));
                    }
                    Some(step.expect.clone())
                }
            };
            if got.as_ref() != Some(&step.expect) {
                mismatches.push(format!(
                    "{} ({}): rtl {:?}, reference {:?}",
                    step.what, step.line, o.fields, step.expect
                ));
            }
        }
        for (map, mut entries) in dumped.into_iter().enumerate() {
            entries.sort();
            // A write-only map has no syscall listing; its slots were compared one by one above.
            let Ok(reference) = self.maps.entries(map) else {
                continue;
            };
            if entries != reference {
                mismatches.push(format!(
                    "map {map}: dump {entries:x?}, reference entries {reference:x?}"
                ));
            }
        }
        assert!(
            mismatches.is_empty(),
            "{} mismatches, first ones:\n{}",
            mismatches.len(),
            mismatches
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn spec(
    name: &str,
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    flags: u32,
) -> MapSpec {
    MapSpec::new(name, map_type, key_size, value_size, max_entries).with_flags(flags)
}

/// Update flags: mostly the three meaningful ones, sometimes BPF_F_LOCK combinations and unknown bits.
fn flags(rng: &mut Rng) -> u64 {
    match rng.below(16) {
        0 => 4,
        1 => 5,
        2 => 6,
        3 => 3 + rng.below(64),
        n => n % 3,
    }
}

/// One lane access of the value ports.
#[derive(Clone, Debug)]
struct Access {
    map: usize,
    slot: u32,
    off: usize,
    bytes: usize,
}

/// An access at a random place of a slot lookups have returned, sometimes past the value's end.
fn random_place(s: &Session, rng: &mut Rng, map: usize) -> Option<Access> {
    let slot = match s.seen.get(map).map_or(0, Vec::len) {
        0 => return None,
        n => s.seen[map][rng.below(n as u64) as usize],
    };
    let size = s.specs[map].value_size as usize;
    let bytes = match rng.below(8) {
        0 => 1,
        1 => 2,
        2 => 4,
        3 => 6,
        4 => rng.below(10) as usize,
        _ => 8,
    };
    let off = rng.below(size as u64 + 2) as usize;
    Some(Access {
        map,
        slot,
        off,
        bytes,
    })
}

/// Whether two accesses may touch a common byte.
fn overlap(a: &Access, b: &Access) -> bool {
    a.map == b.map && a.slot == b.slot && a.off < b.off + b.bytes && b.off < a.off + a.bytes
}

/// A load, a store, or both in one cycle (then of different bytes), at random places of slots lookups returned.
fn random_access(s: &mut Session, rng: &mut Rng, map: usize) {
    let nmaps = s.specs.len();
    let first = random_place(s, rng, map);
    let other = rng.below(nmaps as u64) as usize;
    let second =
        random_place(s, rng, other).filter(|b| first.as_ref().is_none_or(|a| !overlap(a, b)));
    match rng.below(3) {
        0 => {
            if first.is_some() {
                s.value_cycle(first, None);
            }
        }
        1 => {
            if let Some(a) = first {
                s.value_cycle(None, Some((a, rng.next())));
            }
        }
        _ => {
            if let (Some(a), Some(b)) = (first.clone(), second) {
                if rng.below(2) == 0 {
                    s.value_cycle(Some(a), Some((b, rng.next())));
                } else {
                    s.value_cycle(Some(b), Some((a, rng.next())));
                }
            } else if first.is_some() {
                s.value_cycle(first, None);
            }
        }
    }
}

/// Random operations on the maps of `s`, keys drawn from `key_of(map, rng)`.
fn random_ops(
    s: &mut Session,
    rng: &mut Rng,
    ops: usize,
    key_of: &dyn Fn(usize, &mut Rng) -> Vec<u8>,
) {
    let nmaps = s.specs.len();
    for _ in 0..ops {
        // now and then a map index that does not exist
        let map = if rng.below(40) == 0 {
            nmaps + rng.below(4) as usize
        } else {
            rng.below(nmaps as u64) as usize
        };
        let (key_size, value_size, host_size) = s.specs.get(map).map_or((4, 8, 8), |sp| {
            (
                sp.key_size as usize,
                sp.value_size as usize,
                syscall_value_size(sp),
            )
        });
        let key = if map < nmaps {
            key_of(map, rng)
        } else {
            rng.bytes(key_size)
        };
        let stall = rng.below(8) == 0;
        match rng.below(20) {
            0..=5 => s.prog_lookup(map, &key, stall),
            6..=9 => {
                let value = rng.bytes(value_size);
                s.prog_update(map, &key, &value, flags(rng), stall);
            }
            10..=11 => s.prog_delete(map, &key, stall),
            12 => s.host_lookup(map, &key),
            13 => {
                let value = rng.bytes(host_size);
                s.host_update(map, &key, &value, flags(rng));
            }
            14 => s.host_delete(map, &key),
            _ if map < nmaps => random_access(s, rng, map),
            _ => s.prog_lookup(map, &key, stall),
        }
    }
}

/// A key of `size` bytes from a pool of `pool` keys (so that keys repeat and maps fill up).
fn pooled_key(rng: &mut Rng, size: usize, pool: u64, salt: u64) -> Vec<u8> {
    let mut r = Rng((rng.below(pool) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt);
    r.bytes(size)
}

#[test]
fn array_maps_match_the_reference() {
    let specs = vec![
        spec("a", ARRAY, 4, 12, 10, 0),
        spec("b", ARRAY, 4, 64, 3, 0),
        spec("ro", ARRAY, 4, 8, 4, RDONLY),
        spec("wo", ARRAY, 4, 5, 4, WRONLY),
    ];
    let mut s = Session::new(specs);
    let mut rng = Rng(0x6172_7261_7931);
    let key_of = |map: usize, rng: &mut Rng| -> Vec<u8> {
        let max = [10u64, 3, 4, 4][map];
        let index = if rng.below(10) == 0 {
            rng.next() as u32
        } else {
            rng.below(max + 2) as u32
        };
        index.to_le_bytes().to_vec()
    };
    random_ops(&mut s, &mut rng, 1500, &key_of);
    s.assert_coverage(&[7, 17, 22]);
    s.dump();
    s.check();
}

#[test]
fn hash_maps_match_the_reference() {
    let specs = vec![
        spec("small", HASH, 6, 20, 8, 0),
        spec("wide", HASH, 16, 64, 4, 0),
        spec("one", HASH, 1, 1, 1, 0),
        spec("ro", HASH, 4, 8, 3, RDONLY),
    ];
    let mut s = Session::new(specs);
    let mut rng = Rng(0x6861_7368_2121);
    let key_of = |map: usize, rng: &mut Rng| -> Vec<u8> {
        let (size, pool) = [(6, 12), (16, 7), (1, 3), (4, 5)][map];
        pooled_key(rng, size, pool, map as u64)
    };
    random_ops(&mut s, &mut rng, 3000, &key_of);
    s.assert_coverage(&[2, 7, 17, 22]);
    s.dump();
    s.check();
}

#[test]
fn lru_hash_maps_match_the_reference() {
    let specs = vec![
        spec("four", LRU_HASH, 4, 8, 4, 0),
        spec("seven", LRU_HASH, 6, 20, 7, 0),
        spec("wide", LRU_HASH, 16, 64, 2, 0),
        spec("one", LRU_HASH, 2, 3, 1, 0),
        spec("big", LRU_HASH, 4, 4, 12, 0),
    ];
    let mut s = Session::new(specs);
    let mut rng = Rng(0x6c72_755f_6861);
    let key_of = |map: usize, rng: &mut Rng| -> Vec<u8> {
        let (size, pool) = [(4, 9), (6, 12), (16, 4), (2, 3), (4, 20)][map];
        pooled_key(rng, size, pool, map as u64)
    };
    random_ops(&mut s, &mut rng, 4000, &key_of);
    s.assert_coverage(&[2, 17, 22]);
    s.dump();
    s.check();
}

/// Eviction order of a small LRU map: referenced entries survive a round of new keys, unreferenced ones go.
#[test]
fn lru_eviction_follows_the_kernel_lists() {
    let mut s = Session::new(vec![spec("l", LRU_HASH, 4, 8, 6, 0)]);
    let key = |k: u32| k.to_le_bytes().to_vec();
    for round in 0..4u32 {
        for k in 0..8 {
            let k = round * 3 + k;
            s.prog_update(0, &key(k), &[k as u8; 8], 0, false);
            if k % 3 == 0 {
                s.prog_lookup(0, &key(k), false);
            }
            s.prog_lookup(0, &key(k / 2), false);
        }
        for k in 0..20 {
            s.host_lookup(0, &key(k));
        }
        s.prog_delete(0, &key(round * 5), false);
        s.prog_update(0, &key(round * 7), &[0x77; 8], 2, false);
        s.prog_update(0, &key(round * 7 + 1), &[0x78; 8], 1, false);
    }
    s.dump();
    s.check();
}

/// The hXDP driver's key and value widths (crates/rtlsim/src/hxdp/params.rs), with CAM and value memory small enough
/// for a unit test.
const WIDE: Params = Params {
    key_bytes: 40,
    value_bytes: 72,
    entries: 64,
    mem_words: 512,
    possible_cpus: 1,
};

/// Values wider than 64 bytes (fib_forward's 72-byte fib_results): every row of the value, the ninth one included,
/// goes to its own place on updates, lane stores and reads (the engine once indexed its value register by the row
/// number modulo 8, so row 8 landed on row 0).
#[test]
fn values_wider_than_64_bytes_keep_every_row() {
    let specs = vec![
        spec("results", ARRAY, 4, 72, 16, 0),
        spec("wide", HASH, 40, 72, 6, 0),
        spec("lru", LRU_HASH, 8, 71, 5, 0),
    ];
    let mut s = Session::with_params(specs, WIDE);
    let mut rng = Rng(0x7769_6465_3732);
    // fib_forward's pattern first: bump the counter at offset 0, then store the last row
    for slot in 0..16u32 {
        s.prog_lookup(0, &slot.to_le_bytes(), false);
        let at = |off| Access {
            map: 0,
            slot,
            off,
            bytes: 8,
        };
        s.value_cycle(None, Some((at(0), u64::from(slot) + 1)));
        s.value_cycle(
            None,
            Some((at(64), 0x6464_6464_0000_0000 | u64::from(slot))),
        );
        s.value_cycle(Some(at(0)), Some((at(56), 0x3838)));
        s.value_cycle(Some(at(64)), None);
    }
    let key_of = |map: usize, rng: &mut Rng| -> Vec<u8> {
        match map {
            0 => (rng.below(18) as u32).to_le_bytes().to_vec(),
            1 => pooled_key(rng, 40, 9, 1),
            _ => pooled_key(rng, 8, 8, 2),
        }
    };
    random_ops(&mut s, &mut rng, 2500, &key_of);
    s.assert_coverage(&[2, 7, 17, 22]);
    s.dump();
    s.check();
}

/// katran_lb's maps on a host with two possible CPUs: the kernel sizes the common LRU's target_free by the possible
/// CPUs (64 / 2 / 2 = 16 nodes per refill, not 32), so the flows a full conn_table evicts depend on it. Flows come
/// as katran's packets use them: a lookup, and on a miss an update with BPF_ANY.
#[test]
fn lru_target_free_follows_the_possible_cpus() {
    for possible_cpus in [1, 2, 3] {
        let specs = vec![
            spec("vip_map", HASH, 8, 8, 64, 0),
            spec("conn_table", LRU_HASH, 16, 8, 64, 0),
            spec("reals", ARRAY, 4, 8, 64, 0),
            spec(".bss", ARRAY, 4, 8, 1, 0),
        ];
        let params = Params {
            key_bytes: 16,
            value_bytes: 64,
            entries: 256,
            mem_words: 512,
            possible_cpus,
        };
        let mut s = Session::with_params(specs, params);
        let mut rng = Rng(0x6b61_7472_616e ^ possible_cpus as u64);
        let mut misses = 0;
        for _ in 0..600 {
            let flow = pooled_key(&mut rng, 16, 110, 7);
            s.prog_lookup(1, &flow, false);
            let hit = matches!(
                s.steps.last().map(|st| &st.expect),
                Some(Expect::Request { hit: true, .. })
            );
            if !hit {
                misses += 1;
                let pos = rng.below(64).to_le_bytes();
                s.prog_update(1, &flow, &pos, 0, false);
            }
            if rng.below(50) == 0 {
                s.host_delete(1, &flow);
            }
        }
        // the table overflowed many times over, so refills and evictions happened
        assert!(misses > 200, "{possible_cpus} CPUs: only {misses} misses");
        s.dump();
        s.check();
    }
}

#[test]
fn lpm_tries_match_the_reference() {
    let specs = vec![
        spec("v4", LPM_TRIE, 8, 8, 6, NO_PREALLOC),
        spec("v6ish", LPM_TRIE, 16, 16, 10, NO_PREALLOC),
        spec("tiny", LPM_TRIE, 5, 3, 2, NO_PREALLOC),
    ];
    let mut s = Session::new(specs);
    let mut rng = Rng(0x6c70_6d5f_7472);
    let key_of = |map: usize, rng: &mut Rng| -> Vec<u8> {
        let data_size = [4usize, 12, 1][map];
        let bits = data_size as u64 * 8;
        if rng.below(2) == 0 {
            // one of a few whole keys, so that updates replace and deletes find prefixes
            let mut pick = Rng(rng.below(8) + 1 + 100 * map as u64);
            let mut key = ((pick.next() % (bits + 1)) as u32).to_le_bytes().to_vec();
            key.extend(pick.bytes(data_size));
            return key;
        }
        let plen = match rng.below(6) {
            0 => bits,
            1 => bits + 1 + rng.below(40),
            _ => rng.below(bits + 1),
        } as u32;
        // a few base prefixes with random low bits, so that prefixes nest and share bits
        let mut data = pooled_key(rng, data_size, 4, map as u64);
        let tail = rng.bytes(data_size);
        let keep = rng.below(bits + 1) as usize;
        for bit in keep..data_size * 8 {
            let mask = 0x80u8 >> (bit % 8);
            data[bit / 8] = (data[bit / 8] & !mask) | (tail[bit / 8] & mask);
        }
        let mut key = plen.to_le_bytes().to_vec();
        key.extend_from_slice(&data);
        key
    };
    random_ops(&mut s, &mut rng, 3000, &key_of);
    s.assert_coverage(&[2, 17, 22, 28]);
    s.dump();
    s.check();
}

#[test]
fn maps_of_every_type_share_the_memories() {
    let specs = vec![
        spec("arr", ARRAY, 4, 12, 10, 0),
        spec("hash", HASH, 6, 20, 8, 0),
        spec("lpm", LPM_TRIE, 8, 8, 6, NO_PREALLOC),
        spec("wide", HASH, 16, 64, 4, 0),
        spec("lru", LRU_HASH, 4, 12, 5, 0),
    ];
    let mut s = Session::new(specs);
    let mut rng = Rng(0x6d69_7865_6421);
    let key_of = |map: usize, rng: &mut Rng| -> Vec<u8> {
        match map {
            0 => (rng.below(12) as u32).to_le_bytes().to_vec(),
            1 => pooled_key(rng, 6, 12, 1),
            2 => {
                let mut key = (rng.below(33) as u32).to_le_bytes().to_vec();
                key.extend(pooled_key(rng, 4, 5, 2));
                key
            }
            3 => pooled_key(rng, 16, 7, 3),
            _ => pooled_key(rng, 4, 8, 4),
        }
    };
    random_ops(&mut s, &mut rng, 2000, &key_of);
    s.assert_coverage(&[2, 7, 17, 22, 28]);
    s.dump();
    s.check();
}

/// Fills a hash map to the brim: E2BIG for one more key, replacing values moves keys to the spare element, deletes
/// free slots last in, first out.
#[test]
fn a_full_hash_map_refuses_new_keys_and_recycles_slots() {
    let mut s = Session::new(vec![spec("h", HASH, 4, 8, 4, 0)]);
    let key = |k: u32| k.to_le_bytes().to_vec();
    for k in 0..5 {
        s.prog_update(0, &key(k), &[k as u8; 8], 1, false);
    }
    for k in 0..5 {
        s.prog_lookup(0, &key(k), false);
    }
    s.prog_update(0, &key(2), &[0x22; 8], 2, false);
    s.prog_update(0, &key(3), &[0x33; 8], 0, false);
    s.prog_update(0, &key(9), &[0x99; 8], 2, false);
    s.prog_delete(0, &key(1), false);
    s.prog_delete(0, &key(0), false);
    s.prog_delete(0, &key(0), false);
    s.host_update(0, &key(7), &[0x77; 8], 1);
    s.prog_update(0, &key(8), &[0x88; 8], 0, false);
    s.prog_update(0, &key(6), &[0x66; 8], 0, false);
    for k in 0..10 {
        s.prog_lookup(0, &key(k), false);
    }
    s.dump();
    s.check();
}

/// PERCPU_ARRAY and PERCPU_HASH are their one-CPU equivalents: the slots and values of CPU 0, the syscall's value
/// padded to 8 bytes.
#[test]
fn per_cpu_maps_match_the_one_cpu_reference() {
    let specs = vec![
        spec("pa", PERCPU_ARRAY, 4, 12, 10, 0),
        spec("ph", PERCPU_HASH, 6, 20, 8, 0),
        spec("counters", PERCPU_ARRAY, 4, 8, 4, 0),
        spec("flows", PERCPU_HASH, 16, 13, 4, 0),
    ];
    let mut s = Session::new(specs);
    let mut rng = Rng(0x7065_7263_7075);
    let key_of = |map: usize, rng: &mut Rng| -> Vec<u8> {
        match map {
            0 => (rng.below(12) as u32).to_le_bytes().to_vec(),
            1 => pooled_key(rng, 6, 12, 1),
            2 => (rng.below(6) as u32).to_le_bytes().to_vec(),
            _ => pooled_key(rng, 16, 7, 3),
        }
    };
    random_ops(&mut s, &mut rng, 2500, &key_of);
    s.assert_coverage(&[2, 7, 17, 22]);
    s.dump();
    s.check();
}

/// A host value for a PROG_ARRAY or DEVMAP entry: often an ifindex or program index of 0 (which removes a DEVMAP
/// entry), and for 8-byte DEVMAP values program fds of every sign.
fn slot_value(rng: &mut Rng, size: usize) -> Vec<u8> {
    let mut v = rng.bytes(size);
    if rng.below(3) == 0 {
        v[..4].fill(0);
    }
    if size == 8 {
        match rng.below(3) {
            0 => v[4..].fill(0),
            1 => v[7] |= 0x80,
            _ => v[7] &= 0x7f,
        }
    }
    v
}

/// PROG_ARRAY and DEVMAP (entries present or absent), with a RINGBUF defined beside them: gets, program lookups,
/// updates and deletes, host operations and value accesses, against hwxdp_maps.
#[test]
fn program_and_device_maps_match_the_reference() {
    let specs = vec![
        spec("jump", PROG_ARRAY, 4, 4, 4, 0),
        spec("tx", DEVMAP, 4, 4, 64, 0),
        spec("tx8", DEVMAP, 4, 8, 6, 0),
        spec("events", RINGBUF, 0, 0, 4096, 0),
        spec("ro", DEVMAP, 4, 4, 3, RDONLY),
        spec("wo", PROG_ARRAY, 4, 4, 3, WRONLY),
    ];
    let mut s = Session::new(specs);
    let mut rng = Rng(0x736c_6f74_7321);
    for _ in 0..3000 {
        let map = rng.below(7) as usize;
        let spec = s.specs.get(map).cloned();
        let max = spec.as_ref().map_or(4, |sp| sp.max_entries.min(64)) as u64;
        let index = if rng.below(12) == 0 {
            rng.next() as u32
        } else {
            rng.below(max + 2) as u32
        };
        let key = if spec.as_ref().is_some_and(|sp| sp.key_size == 0) {
            Vec::new()
        } else {
            index.to_le_bytes().to_vec()
        };
        let host_size = spec.as_ref().map_or(4, syscall_value_size);
        let stall = rng.below(8) == 0;
        match rng.below(16) {
            0..=2 => s.prog_get(map, index, stall),
            3..=4 => s.prog_lookup(map, &key, stall),
            5 => {
                let value = slot_value(&mut rng, host_size.max(4));
                s.prog_update(map, &key, &value, flags(&mut rng), stall);
            }
            6 => s.prog_delete(map, &key, stall),
            7 => s.host_lookup(map, &key),
            8..=10 => {
                let value = slot_value(&mut rng, host_size.max(4));
                let flags = if rng.below(2) == 0 {
                    0
                } else {
                    flags(&mut rng)
                };
                s.host_update(map, &key, &value, flags);
            }
            11..=12 => s.host_delete(map, &key),
            13 => {
                // anywhere, seen or not: faults for absent slots, the ring buffer, maps that do not exist
                let a = Access {
                    map,
                    slot: index,
                    off: rng.below(10) as usize,
                    bytes: 1 + rng.below(8) as usize,
                };
                if map < s.specs.len() && !s.faults(&a) && rng.below(2) == 0 {
                    s.value_cycle(None, Some((a, rng.next())));
                } else {
                    s.value_cycle(Some(a), None);
                }
            }
            _ if map < s.specs.len() => random_access(&mut s, &mut rng, map),
            _ => s.prog_get(map, index, stall),
        }
    }
    let count = |pred: &dyn Fn(&Step) -> bool| s.steps.iter().filter(|st| pred(st)).count();
    let get_hits = count(&|st| matches!(st.expect, Expect::Get { hit: true, .. }));
    let get_misses = count(&|st| matches!(st.expect, Expect::Get { hit: false, .. }));
    let lookup_hits = count(&|st| matches!(st.expect, Expect::Request { hit: true, .. }));
    let host_ok = count(&|st| {
        st.what.starts_with("host update") && matches!(st.expect, Expect::Host { ret: 0, .. })
    });
    let ret = |errno: i64| {
        count(
            &|st| matches!(st.expect, Expect::Host { ret, .. } | Expect::Request { ret, .. } if ret == -errno),
        )
    };
    assert!(
        get_hits >= 50 && get_misses >= 50 && lookup_hits >= 20 && host_ok >= 50,
        "{get_hits} get hits, {get_misses} misses, {lookup_hits} lookup hits, {host_ok} host updates"
    );
    for errno in [1, 2, 7, 17, 22, 524] {
        assert!(
            ret(errno) >= 3,
            "only {} operations return -{errno}",
            ret(errno)
        );
    }
    s.dump();
    s.check();
}

/// Configurations the hardware cannot hold, or the kernel would refuse, raise cfg_error_o.
#[test]
fn bad_configurations_raise_cfg_error() {
    /// type, key_size, value_size, max_entries, map_flags
    type Def = (u32, u32, u32, u32, u32);
    let cases: Vec<(Vec<Def>, bool)> = vec![
        (vec![(HASH, 4, 8, 4, 0)], false),
        (vec![(HASH, 17, 8, 4, 0)], true),
        (vec![(HASH, 4, 65, 4, 0)], true),
        (vec![(16, 4, 4, 4, 0)], true),
        (vec![(ARRAY, 8, 8, 4, 0)], true),
        (vec![(ARRAY, 4, 8, 0, 0)], true),
        (vec![(LPM_TRIE, 8, 8, 4, 0)], true),
        (vec![(LPM_TRIE, 4, 8, 4, NO_PREALLOC)], true),
        (vec![(HASH, 4, 8, 31, 0)], false),
        (vec![(HASH, 4, 8, 32, 0)], true),
        // bucket slots (HASH_SLOTS: HASH and LRU_HASH maps) and the LPM CAM (ENTRIES) are separate budgets
        (
            vec![(HASH, 4, 8, 16, 0), (LPM_TRIE, 8, 8, 15, NO_PREALLOC)],
            false,
        ),
        (vec![(HASH, 4, 8, 16, 0), (HASH, 4, 8, 15, 0)], true),
        (
            vec![(LRU_HASH, 4, 8, 17, 0), (LPM_TRIE, 8, 8, 15, NO_PREALLOC)],
            false,
        ),
        (vec![(HASH, 4, 8, 16, 0), (LRU_HASH, 4, 8, 15, 0)], false),
        (vec![(HASH, 4, 8, 16, 0), (LRU_HASH, 4, 8, 16, 0)], true),
        (vec![(LRU_HASH, 4, 8, 32, 0)], false),
        (vec![(LRU_HASH, 4, 8, 33, 0)], true),
        (vec![(ARRAY, 4, 64, 64, 0)], false),
        (vec![(ARRAY, 4, 64, 65, 0)], true),
        (vec![(ARRAY, 4, 8, 4, RDONLY | WRONLY)], true),
        (vec![(LRU_HASH, 4, 8, 4, 0)], false),
        (vec![(LRU_HASH, 4, 8, 4, NO_COMMON_LRU)], true),
        (vec![(LRU_HASH, 4, 8, 4, NO_PREALLOC)], true),
        (vec![(PERCPU_ARRAY, 4, 8, 4, 0)], false),
        (vec![(PERCPU_ARRAY, 4, 8, 4, NUMA_NODE)], true),
        (vec![(PERCPU_ARRAY, 4, 8, 4, MMAPABLE)], true),
        (vec![(ARRAY, 4, 8, 4, MMAPABLE)], false),
        (vec![(PERCPU_HASH, 4, 8, 4, NO_PREALLOC)], false),
        (vec![(PERCPU_HASH, 4, 8, 4, NUMA_NODE)], true),
        (vec![(PERCPU_HASH, 4, 8, 4, NO_COMMON_LRU)], true),
        (vec![(PROG_ARRAY, 4, 4, 4, 0)], false),
        (vec![(PROG_ARRAY, 4, 8, 4, 0)], true),
        (vec![(PROG_ARRAY, 4, 4, 4, RDONLY_PROG)], true),
        (vec![(PROG_ARRAY, 4, 4, 4, RDONLY)], false),
        (vec![(DEVMAP, 4, 4, 64, 0)], false),
        (vec![(DEVMAP, 4, 8, 4, WRONLY)], false),
        (vec![(DEVMAP, 4, 12, 4, 0)], true),
        (vec![(DEVMAP, 8, 4, 4, 0)], true),
        (vec![(DEVMAP, 4, 4, 4, NO_PREALLOC)], true),
        (vec![(DEVMAP, 4, 4, 0, 0)], true),
        (vec![(RINGBUF, 0, 0, 4096, 0)], false),
        (vec![(RINGBUF, 0, 0, 1 << 30, NUMA_NODE)], false),
        (vec![(RINGBUF, 0, 0, 6144, 0)], true),
        (vec![(RINGBUF, 0, 0, 2048, 0)], true),
        (vec![(RINGBUF, 4, 0, 4096, 0)], true),
        (vec![(RINGBUF, 0, 0, 1 << 31, 0)], true),
        (vec![(RINGBUF, 0, 0, 4096, RDONLY)], true),
        (
            vec![(RINGBUF, 0, 0, 1 << 20, 0), (HASH, 4, 8, 31, 0)],
            false,
        ),
    ];
    let mut lines = Vec::new();
    for (maps, _) in &cases {
        lines.push("r".to_string());
        for (i, (t, k, v, m, f)) in maps.iter().enumerate() {
            lines.push(format!("c {i:x} {t:x} {k:x} {v:x} {m:x} {f:x}"));
        }
        lines.push("d".to_string());
    }
    let out = simulate(&lines, &DEFAULTS);
    let mut at = 0;
    for (maps, error) in &cases {
        at += 1 + maps.len();
        assert_eq!(
            out[at].fields[0] == "1",
            *error,
            "configuration {maps:?}: cfg_error_o"
        );
        at += 1;
    }
}

/// Response latencies as documented in maps.sv: 2 cycles for lookups and deletes, 2 + rows for updates.
#[test]
fn latencies_are_as_documented() {
    let lines = [
        "c 0 1 4 14 4 0",
        "d",
        "o 0 0 0 0 0 01000000 - 0",
        "o 0 1 0 0 0 01000000 - 0",
        "o 0 0 0 0 0 01000000 - 0",
        "o 0 2 0 0 0 01000000 - 0",
        "o 1 1 0 0 0 01000000 - 0",
        "o 1 0 0 0 0 01000000 - 0",
        "r",
        "c 0 9 4 14 4 0",
        "d",
        "o 0 1 0 0 0 01000000 - 0",
        "o 0 1 0 0 0 02000000 - 0",
        "o 0 1 0 1 0 02000000 - 0",
        "o 0 2 0 0 0 02000000 - 0",
        "r",
        "c 0 e 4 4 8 0",
        "c 1 3 4 4 4 0",
        "d",
        "o 1 1 0 0 0 01000000 05000000 0",
        "o 0 3 0 0 0 01000000 - 0",
        "o 0 0 0 0 0 01000000 - 0",
        "o 1 2 0 0 0 01000000 - 0",
        "o 1 2 1 0 0 01000000 - 0",
        "o 1 1 1 0 0 01000000 07000000 0",
        "o 1 2 1 0 0 01000000 - 0",
        "o 0 3 1 0 0 01000000 - 0",
        "o 0 0 1 0 0 01000000 - 0",
    ]
    .map(String::from);
    let out = simulate(&lines, &DEFAULTS);
    let cycles: Vec<u64> = out[2..8].iter().map(|o| field_u64(o, 5)).collect();
    // The testbench counts clock edges after the accepting one until the response pulse: a response in cycle t + 2
    // counts 1.
    assert_eq!(cycles, [1, 1 + 3, 1, 1, 1 + 3, 1 + 2 * 3]);
    // LRU_HASH, max_entries 4 (target_free 2), two cycles an LRU step (the node row's fetch, then the step): an
    // update takes LStart and LDecide (2 steps), probes its key's home row (a cycle: the rows are not full) and
    // writes its 3 value rows. The first refills the local free list (4 + 2 steps more), the second takes the node
    // left there; the third (-EEXIST, no value written) refills again: 4 steps, 2 pending nodes flushed, the inactive
    // rotation steps over its head and 2 nodes, 2 free nodes moved; a delete takes one step.
    let lru: Vec<u64> = out[11..15].iter().map(|o| field_u64(o, 5)).collect();
    let step = 2;
    assert_eq!(
        lru,
        [
            1 + 2 * step + 1 + 3 + (4 + 2) * step,
            1 + 2 * step + 1 + 3,
            1 + 2 * step + 1 + (4 + 2 + 3 + 2) * step,
            1 + step
        ]
    );
    // DEVMAP and PROG_ARRAY with 4-byte values (one row each, the presence byte after the value): a host update
    // writes the row (1 + 1); a get and a DEVMAP lookup read it (1 + 2); a DEVMAP delete writes the presence byte
    // (1 + 1); a PROG_ARRAY delete reads the presence first (1 + 2, -ENOENT) and then clears it (1 + 2 + 1); a get
    // of an absent entry still reads it; a PROG_ARRAY lookup from a program misses at once.
    let slots: Vec<u64> = out[19..].iter().map(|o| field_u64(o, 5)).collect();
    assert_eq!(slots, [2, 3, 3, 2, 3, 2, 4, 3, 1]);
    let fields = |i: usize| out[i].fields[..3].join(" ");
    assert_eq!(fields(20), "0 1 1", "get of a present DEVMAP entry");
    assert_eq!(out[20].fields[4], "0500000000000000", "its value");
    assert_eq!(fields(23), "fffffffffffffffe 0 0", "-ENOENT");
    assert_eq!(fields(26), "0 0 0", "get after the delete");
}

/// The module synthesizes for UltraScale+ at small parameters.
#[test]
fn maps_synthesizes_for_ultrascale_plus() {
    let root = common::workspace_root();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rtlsim-maps-synth");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let wrapper = dir.join("maps_small.sv");
    let ports = [
        "clk_i",
        "rst_ni",
        "cfg_we_i",
        "cfg_map_i",
        "cfg_type_i",
        "cfg_key_size_i",
        "cfg_value_size_i",
        "cfg_max_entries_i",
        "cfg_flags_i",
        "cfg_done_i",
        "cfg_error_o",
        "req_valid_i",
        "req_ready_o",
        "req_op_i",
        "req_map_i",
        "req_key_i",
        "req_value_i",
        "req_flags_i",
        "rsp_valid_o",
        "rsp_ret_o",
        "rsp_hit_o",
        "rsp_slot_o",
        "rsp_value_o",
        "vrd_en_i",
        "vrd_map_i",
        "vrd_slot_i",
        "vrd_off_i",
        "vrd_bytes_i",
        "vrd_rdata_o",
        "vrd_fault_o",
        "vwr_en_i",
        "vwr_map_i",
        "vwr_slot_i",
        "vwr_off_i",
        "vwr_bytes_i",
        "vwr_wdata_i",
        "vwr_fault_o",
        "host_valid_i",
        "host_ready_o",
        "host_op_i",
        "host_map_i",
        "host_key_i",
        "host_value_i",
        "host_flags_i",
        "host_slot_i",
        "host_rsp_valid_o",
        "host_rsp_ret_o",
        "host_rsp_hit_o",
        "host_rsp_key_o",
        "host_rsp_value_o",
    ];
    let connections: Vec<String> = ports.iter().map(|p| format!(".{p}({p})")).collect();
    let text = SMALL_WRAPPER.replace("CONNECTIONS", &connections.join(", "));
    std::fs::write(&wrapper, text).expect("write wrapper");
    let sources = [
        root.join("rtl/common/ram_sdp.sv"),
        root.join("rtl/common/ram_tdp.sv"),
        root.join("rtl/common/hash32.sv"),
        root.join("rtl/sephirot/maps_values.sv"),
        root.join("rtl/sephirot/maps.sv"),
        wrapper,
    ];
    synth(&sources, "maps_small").unwrap_or_else(|err| panic!("{err}"));
}

/// `maps` at synthesis-test parameters: 4 maps, 8-byte keys, 16-byte values, 8 CAM entries, 64 value rows.
const SMALL_WRAPPER: &str = "`default_nettype none
// maps at small parameters, for the synthesis test.
module maps_small (
  input  logic clk_i, input logic rst_ni,
  input  logic cfg_we_i, input logic [7:0] cfg_map_i, input logic [31:0] cfg_type_i, input logic [31:0] cfg_key_size_i,
  input  logic [31:0] cfg_value_size_i, input logic [31:0] cfg_max_entries_i, input logic [31:0] cfg_flags_i,
  input  logic cfg_done_i, output logic cfg_error_o,
  input  logic req_valid_i, output logic req_ready_o, input logic [1:0] req_op_i, input logic [7:0] req_map_i,
  input  logic [63:0] req_key_i, input logic [127:0] req_value_i, input logic [63:0] req_flags_i,
  output logic rsp_valid_o, output logic [63:0] rsp_ret_o, output logic rsp_hit_o, output logic [27:0] rsp_slot_o,
  output logic [63:0] rsp_value_o,
  input  logic vrd_en_i, input logic [7:0] vrd_map_i, input logic [27:0] vrd_slot_i, input logic [11:0] vrd_off_i,
  input  logic [3:0] vrd_bytes_i, output logic [63:0] vrd_rdata_o, output logic vrd_fault_o,
  input  logic vwr_en_i, input logic [7:0] vwr_map_i, input logic [27:0] vwr_slot_i, input logic [11:0] vwr_off_i,
  input  logic [3:0] vwr_bytes_i, input logic [63:0] vwr_wdata_i, output logic vwr_fault_o,
  input  logic host_valid_i, output logic host_ready_o, input logic [1:0] host_op_i, input logic [7:0] host_map_i,
  input  logic [63:0] host_key_i, input logic [127:0] host_value_i, input logic [63:0] host_flags_i,
  input  logic [27:0] host_slot_i, output logic host_rsp_valid_o, output logic [63:0] host_rsp_ret_o,
  output logic host_rsp_hit_o, output logic [63:0] host_rsp_key_o, output logic [127:0] host_rsp_value_o
);
  maps #(.MAPS(4), .KEY_BYTES(8), .VALUE_BYTES(16), .ENTRIES(8), .MEM_WORDS(64)) u_maps (CONNECTIONS);
endmodule
";

/// Keys of `key_size` bytes (a u32 counter, little-endian, zero-padded) whose home bucket in a map of
/// `max_entries` is `home` (the maps module's CRC-32, `hwxdp_hxdp::timing::crc32`).
fn keys_homed_at(max_entries: u32, home: u32, count: usize, key_size: usize) -> Vec<Vec<u8>> {
    let b = hwxdp_hxdp::timing::Buckets::new(max_entries);
    (0u32..)
        .map(|i| {
            let mut k = i.to_le_bytes().to_vec();
            k.resize(key_size, 0);
            k
        })
        .filter(|k| b.home(k) == home)
        .take(count)
        .collect()
}

/// A HASH map takes max_entries keys that all share one home bucket (they spill over the following rows) and refuses
/// the next with E2BIG, as the kernel does whatever the hashes; deletes from the middle of the run (backward shift)
/// keep every other key found; freed slots are taken again. PERCPU_HASH likewise.
#[test]
fn a_hash_map_of_colliding_keys_fills_to_max_entries() {
    for map_type in [HASH, PERCPU_HASH] {
        let mut s = Session::new(vec![spec("h", map_type, 4, 8, 24, 0)]);
        let keys = keys_homed_at(24, 3, 30, 4);
        for (i, k) in keys.iter().enumerate().take(25) {
            s.prog_update(0, k, &[i as u8; 8], 1, false);
        }
        for k in &keys {
            s.prog_lookup(0, k, false);
        }
        for i in [0, 5, 6, 13, 22] {
            s.prog_delete(0, &keys[i], false);
        }
        for k in &keys {
            s.prog_lookup(0, k, false);
        }
        for (i, k) in keys.iter().enumerate().skip(24) {
            s.prog_update(0, k, &[0x40 + i as u8; 8], 0, false);
        }
        s.prog_update(0, &keys[7], &[0x77; 8], 2, false);
        s.host_delete(0, &keys[1]);
        s.host_update(0, &keys[0], &[0x55; 8], 1);
        for k in &keys {
            s.prog_lookup(0, k, false);
        }
        s.dump();
        s.check();
    }
}

/// An LRU_HASH map of keys that share two home buckets (so they spill over the following rows): updates beyond
/// max_entries evict as the kernel's lists say (each eviction deletes its key from the buckets, with the backward
/// shift), never E2BIG; lookups, deletes and the final dump find every key left where the reference has it.
#[test]
fn an_lru_map_of_colliding_keys_evicts_as_the_kernel() {
    let mut keys = keys_homed_at(12, 1, 14, 4);
    keys.extend(keys_homed_at(12, 2, 6, 4));
    let mut s = Session::new(vec![spec("l", LRU_HASH, 4, 8, 12, 0)]);
    let mut rng = Rng(0x636f_6c6c_6964);
    for round in 0..3 {
        for (i, k) in keys.iter().enumerate() {
            s.prog_update(0, k, &[(i + round) as u8; 8], 0, false);
            if i % 3 == round {
                s.prog_lookup(0, &keys[(i * 5) % keys.len()], false);
            }
        }
        for _ in 0..12 {
            let k = &keys[rng.below(keys.len() as u64) as usize];
            match rng.below(4) {
                0 => s.prog_delete(0, k, false),
                1 => s.host_lookup(0, k),
                _ => s.prog_lookup(0, k, false),
            }
        }
    }
    s.dump();
    s.check();
}

/// The latency of every HASH operation on a run of colliding keys is the cycle model's
/// (`hwxdp_hxdp::timing::maps_latency` with the rows `Buckets` says the probe reads): one cycle more per full row
/// after the home, and a delete beyond the home row reads the rows again to shift.
#[test]
fn hash_latencies_follow_the_probed_rows() {
    use hwxdp_hxdp::timing::{maps_latency, Buckets, MapShape};
    let shape = MapShape {
        map_type: HASH,
        key_size: 4,
        value_size: 8,
        max_entries: 24,
    };
    let mut keys = keys_homed_at(24, 6, 14, 4);
    keys.extend(keys_homed_at(24, 7, 6, 4));
    keys.extend(keys_homed_at(24, 9, 3, 4));
    let mut ops: Vec<(u8, usize)> = Vec::new();
    for i in 0..keys.len() {
        ops.push((1, i));
        ops.push((0, (i * 7) % keys.len()));
    }
    for i in [2, 15, 0, 20, 9, 9, 3] {
        ops.push((2, i));
        ops.push((0, (i + 1) % keys.len()));
        ops.push((0, keys.len() - 1));
    }
    for i in [2, 0] {
        ops.push((1, i));
    }
    let mut lines = vec!["c 0 1 4 8 18 0".to_string(), "d".to_string()];
    for &(op, i) in &ops {
        let value = if op == 1 { "0102030405060708" } else { "-" };
        lines.push(format!("o 0 {op} 0 0 0 {} {value} 0", hex(&keys[i])));
    }
    let out = simulate(&lines, &DEFAULTS);
    let mut b = Buckets::new(24);
    let mut rows_seen = Vec::new();
    for (n, &(op, i)) in ops.iter().enumerate() {
        let o = &out[2 + n];
        let r0 = field_u64(o, 0);
        let rows = b.rows(&keys[i]);
        rows_seen.push(rows);
        let want = maps_latency(op, &shape, r0, None, Some(rows), None) - 1;
        assert_eq!(
            field_u64(o, 5),
            want,
            "op {n} ({op} of key {i}, {rows} rows): {:?}",
            o.fields
        );
        if r0 == 0 && op == 1 {
            b.insert(&keys[i]);
        }
        if r0 == 0 && op == 2 {
            b.remove(&keys[i]);
        }
    }
    assert!(
        rows_seen.iter().any(|&r| r >= 4),
        "the keys must spill over several rows: {rows_seen:?}"
    );
}

/// One operation of `lru_latencies_follow_the_reference_steps`: map, op (3: a userspace update), r0, the reference's
/// steps of an update, the key, and the keys the update evicted.
type LruOp = (usize, u8, u64, Option<u64>, Vec<u8>, Vec<Vec<u8>>);

/// The latency of every LRU_HASH operation is the cycle model's (`hwxdp_hxdp::timing::maps_latency` with the rows
/// `Buckets` says a lookup's or delete's probe reads, and for an update `lru_update_cycles` of the steps
/// `hwxdp_maps::Maps::lru_pop_steps` reports and the keys `Maps::lru_evicted` names): the local free list's refill
/// (flush, rotations, fill, shrink and forced eviction, one node or list end a cycle) and each eviction's bucket
/// delete included, on maps small and katran-sized and one of keys that share two home buckets (probes over several
/// rows, evictions that shift), with lookups that set reference bits, updates of every flag, deletes and userspace
/// updates between them, over more keys than the maps hold.
#[test]
fn lru_latencies_follow_the_reference_steps() {
    use hwxdp_hxdp::timing::{lru_update_cycles, maps_latency, Buckets, MapShape};
    let specs = vec![
        spec("four", LRU_HASH, 4, 8, 4, 0),
        spec("seven", LRU_HASH, 4, 20, 7, 0),
        spec("conn", LRU_HASH, 16, 8, 64, 0),
        spec("collide", LRU_HASH, 4, 8, 16, 0),
    ];
    let params = Params {
        key_bytes: 16,
        value_bytes: 64,
        entries: 128,
        mem_words: 512,
        possible_cpus: 2,
    };
    let mut colliding = keys_homed_at(16, 3, 20, 4);
    colliding.extend(keys_homed_at(16, 4, 8, 4));
    let mut maps = Maps::new(&specs, params.possible_cpus).expect("valid maps");
    let mut lines: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "c {i:x} {:x} {:x} {:x} {:x} 0",
                s.map_type, s.key_size, s.value_size, s.max_entries
            )
        })
        .collect();
    lines.push("d".into());
    let mut rng = Rng(0x6c72_755f_7374_6570);
    let mut ops: Vec<LruOp> = Vec::new();
    for _ in 0..900 {
        let map = rng.below(4) as usize;
        let s = &specs[map];
        let pool = u64::from(s.max_entries) * 2 + 3;
        let key = if map == 3 {
            colliding[rng.below(colliding.len() as u64) as usize].clone()
        } else {
            pooled_key(&mut rng, s.key_size as usize, pool, 5)
        };
        let (op, r0, steps) = match rng.below(9) {
            // userspace writes go through the same LRU (their latency is not the program's, so not compared)
            8 => {
                let value: Vec<u8> = (0..s.value_size).map(|_| rng.next() as u8).collect();
                let ret = match maps.update(map, &key, &value, 0) {
                    Ok(()) => 0,
                    Err(e) => -i64::from(e.errno),
                };
                lines.push(format!("o 1 1 {map:x} 0 0 {} {} 0", hex(&key), hex(&value)));
                (3, ret as u64, maps.lru_pop_steps(map))
            }
            0..=2 => {
                let hit = maps.lookup_slot(map, &key).is_some();
                lines.push(format!("o 0 0 {map:x} 0 0 {} - 0", hex(&key)));
                (0, u64::from(!hit), None)
            }
            3..=6 => {
                let flags = [0, 0, 1, 2][rng.below(4) as usize];
                let value: Vec<u8> = (0..s.value_size).map(|_| rng.next() as u8).collect();
                let ret = maps.prog_update(map, &key, &value, flags);
                lines.push(format!(
                    "o 0 1 {map:x} {flags:x} 0 {} {} 0",
                    hex(&key),
                    hex(&value)
                ));
                (1, ret as u64, maps.lru_pop_steps(map))
            }
            _ => {
                let ret = maps.prog_delete(map, &key);
                lines.push(format!("o 0 2 {map:x} 0 0 {} - 0", hex(&key)));
                (2, ret as u64, None)
            }
        };
        let evicted = match op {
            1 | 3 => maps.lru_evicted(map).unwrap_or(&[]).to_vec(),
            _ => Vec::new(),
        };
        ops.push((map, op, r0, steps, key, evicted));
    }
    let out = simulate(&lines, &params);
    let mut buckets: Vec<Buckets> = specs.iter().map(|s| Buckets::new(s.max_entries)).collect();
    let (mut refills, mut evictions, mut long_probes) = (0, 0, 0);
    for (n, (map, op, r0, steps, key, evicted)) in ops.iter().enumerate() {
        let (map, op, r0) = (*map, *op, *r0);
        let o = &out[specs.len() + 1 + n];
        let s = &specs[map];
        let shape = MapShape {
            map_type: LRU_HASH,
            key_size: s.key_size,
            value_size: s.value_size,
            max_entries: s.max_entries,
        };
        if op != 0 {
            assert_eq!(
                field_u64(o, 0),
                r0,
                "op {n} ({op} on map {map}): {:?}",
                o.fields
            );
        }
        let b = &mut buckets[map];
        let rows = b.rows(key);
        long_probes += usize::from(rows > 2);
        let (want, lru_cycles) = match op {
            1 | 3 => {
                let steps = steps.unwrap_or(0);
                let taken = steps > 0 && r0 != (-12i64) as u64;
                let cycles = lru_update_cycles(b, steps, evicted, key, taken, r0 == 0);
                (
                    maps_latency(1, &shape, r0, None, None, Some(cycles)),
                    Some(cycles),
                )
            }
            _ => {
                let r0 = if op == 0 { 0 } else { r0 };
                if op == 2 && r0 == 0 {
                    b.remove(key);
                }
                (maps_latency(op, &shape, r0, None, Some(rows), None), None)
            }
        };
        evictions += evicted.len();
        if op == 3 {
            continue;
        }
        assert_eq!(
            field_u64(o, 5),
            want - 1,
            "op {n} ({op} on map {map}, steps {steps:?}, engine cycles {lru_cycles:?}, rows {rows}, evicted {}): {:?}",
            evicted.len(),
            o.fields
        );
        refills += usize::from(steps.is_some_and(|s| s > 2));
    }
    assert!(
        refills > 30 && evictions > 30 && long_probes > 20,
        "only {refills} updates refilled the local free list, {evictions} keys evicted, {long_probes} probes of 3 rows or more"
    );
}
