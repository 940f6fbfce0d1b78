//! rtl/sephirot/helpers.sv against the reference machine's helpers (`hwxdp_xdp::Hosted::call_helper`), call by call:
//! seeded random arguments (pointers into the stack, the packet, map values, and outside them; sizes and flags at
//! and around their limits) through `sim/unit/helpers_tb.cpp`, whose C++ memory stands behind the module's memory
//! port, whose maps stand-in answers with what the reference maps did, and whose APS stand-in adjusts as `XdpBuff`.
//! The fib stand-in answers with what `RouteTable::lookup` did; the program table holds the object's programs.
//! Compared per call: r0, the fault, the tail call and its entry, the maps request (op, map, key and value bytes,
//! flags), the fib request (flags, struct), the packet offsets after adjusts; per packet: the redirect record and every
//! byte of the packet, the stack and the map values; every few packets, the ring buffer's records as the reference
//! drains them.

mod common;

use common::{hex_or_dash as hex, unhex, Rng};
use hwxdp_ebpf::opcode::*;
use hwxdp_ebpf::Insn;
use hwxdp_maps::MapStore;
use hwxdp_object::{MapSpec, ObjectSpec, ProgramSpec};
use hwxdp_xdp::region::{self, Region};
use hwxdp_xdp::{Config, Hosted, Machine, XdpBuff, XdpMd};

const HASH: u32 = 1;
const ARRAY: u32 = 2;
const LRU_HASH: u32 = 9;
const PROG_ARRAY: u32 = 3;
const DEVMAP: u32 = 14;
const RINGBUF: u32 = 27;
/// The module's MAPS in this build (`-GMAPS`, the testbench's TB_MAPS): room for handles of unconfigured maps.
const TB_MAPS: usize = 12;
/// Maps of the test object, by index.
const PROGS_MAP: usize = 5;
const DEV_MAP: usize = 6;
const RING_MAP: usize = 7;
/// Programs of the test object (tail-call targets) and the entry bundles the program table gives them.
const PROGRAMS: usize = 3;
fn entry_of(prog: usize) -> u16 {
    0x100 + 7 * prog as u16
}
/// The module's KEY_BYTES and VALUE_BYTES: its defaults, and the hxdp-rtl backend's (crates/rtlsim/src/hxdp.rs).
const WIDTHS: [(usize, usize); 2] = [(16, 64), (40, 72)];

/// The helpers the module serves in this test, with the weight of each in the random mix.
const MIX: &[(i32, u64)] = &[
    (1, 6),
    (2, 6),
    (3, 3),
    (5, 2),
    (23, 2),
    (28, 6),
    (44, 2),
    (54, 3),
    (65, 2),
    (93, 2),
    (94, 1),
    (188, 1),
    (189, 5),
    (190, 5),
    (12, 4),
    (51, 4),
    (69, 4),
    (130, 6),
];

fn map_specs() -> Vec<MapSpec> {
    vec![
        MapSpec::new("hash", HASH, 8, 16, 6),
        MapSpec::new("array", ARRAY, 4, 24, 4),
        MapSpec::new("lru", LRU_HASH, 16, 8, 4),
        MapSpec::new("wide", ARRAY, 4, 64, 2),
        MapSpec::new("odd", HASH, 6, 7, 4),
        MapSpec::new("progs", PROG_ARRAY, 4, 4, 8),
        MapSpec::new("devs", DEVMAP, 4, 4, 8),
        MapSpec::new("events", RINGBUF, 0, 0, 4096),
    ]
}

/// What one testbench line must print.
#[derive(Debug, Clone)]
enum Expect {
    Ok,
    /// A helper call: r0 (`None`: not compared, the reference faulted), the fault, the maps request, and the cycle
    /// count when it is fixed.
    Call {
        r0: Option<u64>,
        fault: bool,
        mreq: Option<MapsRequest>,
        cycles: Option<u64>,
        /// The entry bundle of a tail call taken.
        tail: Option<u16>,
        /// The fib request: flags and the struct.
        fib: Option<(u32, Vec<u8>)>,
    },
    /// The ring buffer's drain: "PRESENT MAP CFG_ERROR OVERFLOW" and the records.
    Ring(String, Vec<Vec<u8>>),
    Outcome(String),
    Offsets(String),
    Bytes(Vec<u8>),
}

/// A maps request as the module must make it.
#[derive(Debug, Clone)]
struct MapsRequest {
    op: u8,
    map: usize,
    flags: Option<u64>,
    key: Vec<u8>,
    value: Vec<u8>,
}

struct Step {
    line: String,
    what: String,
    expect: Expect,
    /// For calls: the helper id and the length of the buffer it moves (0 when none).
    call: Option<(i32, u64)>,
}

/// The whole test: the reference machine, the testbench script and what each line must print.
struct Script {
    steps: Vec<Step>,
    /// Slots of each map in the reference (the testbench's value memory has as many).
    slots: Vec<u32>,
    specs: Vec<MapSpec>,
    /// The model's KEY_BYTES and VALUE_BYTES.
    widths: (usize, usize),
}

impl Script {
    fn push(&mut self, line: String, what: impl Into<String>, expect: Expect) {
        self.steps.push(Step {
            line,
            what: what.into(),
            expect,
            call: None,
        });
    }

    fn ok(&mut self, line: String) {
        self.push(line.clone(), line, Expect::Ok);
    }
}

/// The reference's bytes at `addr`, if the reference can read them.
fn peek(h: &mut Hosted, addr: u64, len: usize) -> Option<Vec<u8>> {
    if len == 0 {
        return Some(Vec::new());
    }
    h.bytes(addr, len, "load").ok().map(|b| b.to_vec())
}

/// Writes `bytes` at `addr` in the reference and the testbench when the reference accepts the store.
fn poke(h: &mut Hosted, s: &mut Script, addr: u64, bytes: &[u8]) {
    if let Ok(dst) = h.bytes(addr, bytes.len(), "store") {
        dst.copy_from_slice(bytes);
        let line = format!("w {addr:x} {}", hex(bytes));
        s.ok(line);
    }
}

/// Page offsets of the packet, through the context as a program reads them.
fn offsets(h: &mut Hosted) -> (u64, u64, u64) {
    let field =
        |h: &mut Hosted, off: u64| region::offset(h.load(region::context() + off, 4).expect("ctx"));
    (field(h, 8), field(h, 0), field(h, 4))
}

/// The testbench's copy of every map slot, from the reference (whose hash maps allocate slots as they fill).
fn sync_maps(h: &mut Hosted, s: &mut Script) {
    for map in 0..s.specs.len() {
        let vs = s.specs[map].value_size as usize;
        let slots = (0..4096u32)
            .take_while(|&slot| peek(h, region::map_value(map, slot, 0), 1).is_some())
            .count() as u32;
        if slots != s.slots[map] {
            s.slots[map] = slots;
            s.ok(format!("v {map:x} {slots:x}"));
        }
        for slot in 0..s.slots[map] {
            let addr = region::map_value(map, slot, 0);
            let bytes = peek(h, addr, vs).expect("slot exists");
            s.ok(format!("w {addr:x} {}", hex(&bytes)));
        }
    }
}

/// Every byte a helper may have changed: the packet, the stack below its top, every map slot.
fn compare_memory(h: &mut Hosted, s: &mut Script, top: usize, tag: &str) {
    let (meta, _, end) = offsets(h);
    let mut regions = vec![
        (
            region::packet(meta as usize),
            (end - meta) as usize,
            "packet",
        ),
        (region::stack(0), top, "stack"),
    ];
    for map in 0..s.specs.len() {
        for slot in 0..s.slots[map] {
            regions.push((
                region::map_value(map, slot, 0),
                s.specs[map].value_size as usize,
                "map value",
            ));
        }
    }
    for (addr, len, name) in regions {
        let bytes = peek(h, addr, len).expect("region readable");
        s.push(
            format!("d {addr:x} {len:x}"),
            format!("{tag}: {name} {}", region::describe(addr)),
            Expect::Bytes(bytes),
        );
    }
}

/// Generates pointers and sizes around the regions' bounds.
struct Gen {
    rng: Rng,
    top: usize,
    meta: usize,
    end: usize,
    /// Keys each map's lookups should sometimes find.
    pool: Vec<Vec<Vec<u8>>>,
    /// The PROG_ARRAY's entries (index -> program) and the DEVMAP's present indices, as loaded.
    progs: Vec<Option<u32>>,
    devs: Vec<bool>,
    /// Tail calls taken in this packet.
    tails: u32,
    /// The packet's timestamp (`Machine::set_time`), which bpf_ktime_get_ns adds the cycle count to.
    time: u64,
}

impl Gen {
    /// A pointer for an access of `len` bytes: mostly inside a region, often just past one of its ends.
    fn ptr(&mut self, len: usize, slots: &[u32], specs: &[MapSpec]) -> u64 {
        let r = &mut self.rng;
        let jitter = |r: &mut Rng| r.below(9) as i64 - 4;
        match r.below(20) {
            0..=8 => {
                let inside = self.top.saturating_sub(len);
                let off = match r.below(4) {
                    0 => inside as i64 + jitter(r),
                    1 => jitter(r).abs(),
                    _ => r.below(inside as u64 + 1) as i64,
                };
                region::stack(off.max(0) as usize)
            }
            9..=13 => {
                let span = (self.end - self.meta) as u64;
                let off = match r.below(4) {
                    0 => self.meta as i64 + jitter(r),
                    1 => (self.end as i64 - len as i64) + jitter(r),
                    _ => (self.meta as u64 + r.below(span.saturating_sub(len as u64) + 1)) as i64,
                };
                region::packet(off.max(0) as usize)
            }
            14..=17 => {
                let map = if r.below(8) == 0 {
                    r.below_usize(TB_MAPS)
                } else {
                    r.below_usize(specs.len())
                };
                // Ring buffer records are map values only after bpf_ringbuf_reserve, which the module does not
                // serve (the reference lets a 0-byte access at any record address through; the module faults).
                let map = if map == RING_MAP { 0 } else { map };
                let (vs, n) = specs
                    .get(map)
                    .map_or((8, 1), |m| (m.value_size as i64, slots[map]));
                let slot = r.below(u64::from(n) + 1) as u32;
                let voff = match r.below(3) {
                    0 => vs - len as i64 + jitter(r),
                    _ => r.below((vs - len as i64).max(0) as u64 + 1) as i64,
                };
                region::map_value(map, slot, voff.clamp(0, 0xff_ffff) as u32)
            }
            _ => match r.below(6) {
                0 => 0,
                1 => region::context(),
                2 => region::map_handle(0),
                3 => region::stack(5000),
                4 => r.next(),
                _ => region::packet(self.end + r.below_usize(8)),
            },
        }
    }

    /// A stack pointer with `len` bytes below the frame's top: where programs keep keys and values.
    fn stack_ptr(&mut self, len: usize) -> u64 {
        region::stack(self.rng.below_usize(self.top.saturating_sub(len) + 1))
    }

    /// A map handle: mostly one of the maps, sometimes an unconfigured index or not a handle at all.
    fn map_handle(&mut self, maps: usize) -> u64 {
        match self.rng.below(12) {
            0 => region::map_handle(maps + self.rng.below_usize(TB_MAPS - maps + 2)),
            1 => region::stack(0),
            2 => region::map_handle(0) | (1 << 40),
            _ => region::map_handle(self.rng.below_usize(maps)),
        }
    }

    /// A size for csum_diff or the copies: multiples of 4 and other values around `max`.
    fn size(&mut self, max: u64) -> u64 {
        match self.rng.below(10) {
            0 => 0,
            1 => max + self.rng.below(8),
            2 => self.rng.below(max + 1),
            3 => self.rng.next(),
            _ => self.rng.below(max / 4 + 1) * 4,
        }
    }
}

/// Random helper calls on `packets` packets; returns the script.
fn build_script(seed: u64, packets: usize, calls: usize, widths: (usize, usize)) -> Script {
    let specs = map_specs();
    let insns = vec![Insn::new(CLASS_JMP | JMP_EXIT, 0, 0, 0, 0)];
    let mut object = ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns.clone()));
    for p in 1..PROGRAMS {
        object.programs.push(ProgramSpec::standalone(
            &format!("t{p}"),
            &format!("xdp/t{p}"),
            insns.clone(),
        ));
    }
    object.maps = specs.clone();
    let mut machine = Machine::new(&object, Some("t"), &Config::default()).expect("machine");
    let mut rng = Rng(seed);
    // program 5 does not exist: a tail call to it faults
    let progs: Vec<Option<u32>> = (0..8)
        .map(|_| [None, Some(0), Some(1), Some(2), Some(5)][rng.below_usize(5)])
        .collect();
    let devs: Vec<bool> = (0..8).map(|_| rng.below(2) == 0).collect();
    for (i, p) in progs.iter().enumerate() {
        if let Some(p) = p {
            let key = (i as u32).to_le_bytes();
            machine
                .maps_mut()
                .update(PROGS_MAP, &key, &p.to_le_bytes(), 0)
                .expect("prog array entry");
        }
    }
    for (i, &d) in devs.iter().enumerate() {
        if d {
            let key = (i as u32).to_le_bytes();
            machine
                .maps_mut()
                .update(DEV_MAP, &key, &(10 + i as u32).to_le_bytes(), 0)
                .expect("devmap entry");
        }
    }
    let slots: Vec<u32> = (0..specs.len())
        .map(|m| {
            (0..4096)
                .take_while(|&s| {
                    machine
                        .maps_mut()
                        .try_value_mut(m, s)
                        .is_some_and(|v| !v.is_empty())
                })
                .count() as u32
        })
        .collect();
    let mut s = Script {
        steps: Vec::new(),
        slots,
        specs: specs.clone(),
        widths,
    };
    for (i, m) in specs.iter().enumerate() {
        s.ok(format!(
            "c {i:x} {:x} {:x} {:x} {:x} {:x}",
            m.map_type, m.key_size, m.value_size, m.max_entries, s.slots[i]
        ));
    }
    for p in 0..PROGRAMS {
        s.ok(format!("g {p:x} {:x}", entry_of(p)));
    }
    let pool = specs
        .iter()
        .map(|m| (0..4).map(|_| rng.bytes(m.key_size as usize)).collect())
        .collect();
    let mut g = Gen {
        rng,
        top: 512,
        meta: 256,
        end: 256,
        pool,
        time: 0,
        progs,
        devs,
        tails: 0,
    };

    for packet in 0..packets {
        let len = 14 + g.rng.below_usize(200);
        let frame = g.rng.bytes(len);
        let mut buff = XdpBuff::new(&frame).expect("frame");
        let page = buff.frame().to_vec();
        g.time = match g.rng.below(3) {
            0 => u64::MAX - g.rng.below(1000),
            _ => g.rng.next(),
        };
        machine.set_time(g.time);
        let md = XdpMd {
            ingress_ifindex: 3,
            rx_queue_index: 0,
        };
        let mut h = machine.hosted(&mut buff, &md);
        g.tails = 0;
        g.top = 512 * (1 + g.rng.below_usize(8));
        h.regs()[10] = region::stack(g.top);
        s.ok("n".into());
        s.ok(format!("s {:x}", g.top));
        s.ok(format!("p 100 100 {:x}", 256 + len));
        // the packet still arriving, 32 bytes a cycle, in half of the packets
        let ready = match g.rng.below(2) {
            0 => format!("k {:x} 20", 256 + 32 * g.rng.below(8)),
            _ => "k 1000 0".to_string(),
        };
        s.ok(ready);
        s.ok(format!("w {:x} {}", region::packet(0), hex(&page)));
        let stack = g.rng.bytes(g.top);
        poke(&mut h, &mut s, region::stack(0), &stack);
        sync_maps(&mut h, &mut s);
        let mut now = 10 + g.rng.below(100);
        for call in 0..calls {
            (g.meta, _, g.end) = {
                let (a, b, c) = offsets(&mut h);
                (a as usize, b as usize, c as usize)
            };
            now += 1 + g.rng.below(20);
            one_call(
                &mut h,
                &mut s,
                &mut g,
                now,
                &format!("packet {packet} call {call}"),
            );
        }
        compare_memory(&mut h, &mut s, g.top, &format!("packet {packet} end"));
        let outcome = h.finish();
        let record = match outcome.redirect {
            None => "0 0 0 0".to_string(),
            Some((None, key)) => format!("1 0 0 {key:x}"),
            Some((Some(map), key)) => format!("1 1 {map:x} {key:x}"),
        };
        s.push(
            "o".into(),
            format!("packet {packet} redirect record"),
            Expect::Outcome(record),
        );
        // drained now and then, so that the ring fills up (-EAGAIN) in between
        if packet % 20 == 19 || packet + 1 == packets {
            let records = machine.maps_mut().ringbuf_drain(RING_MAP);
            s.push(
                "R".into(),
                format!("packet {packet}: ring buffer"),
                Expect::Ring(format!("1 {RING_MAP:x} 0 0"), records),
            );
        }
    }
    s
}

/// One random helper call on both sides.
fn one_call(h: &mut Hosted, s: &mut Script, g: &mut Gen, now: u64, tag: &str) {
    let total: u64 = MIX.iter().map(|&(_, w)| w).sum();
    let mut pick = g.rng.below(total);
    let mut id = MIX[0].0;
    for &(i, w) in MIX {
        if pick < w {
            id = i;
            break;
        }
        pick -= w;
    }
    if g.rng.below(40) == 0 {
        // helpers the module does not serve fault (the reference machine has 6, 7, 8 and 131-133 as well)
        id = [0, 6, 7, 8, 131, 200, 0x1_0000][g.rng.below_usize(7)];
    }
    let nmaps = s.specs.len();
    let mut a = [0u64; 5];
    let mut mreq = None;
    let mut fib_req = None;
    // a handle of `want` mostly, else of any map or none
    let handle = |g: &mut Gen, want: usize| {
        if g.rng.below(4) != 0 {
            region::map_handle(want)
        } else {
            g.map_handle(nmaps)
        }
    };
    let index = |g: &mut Gen| match g.rng.below(8) {
        0 => g.rng.next(),
        1 => 8 + g.rng.below(3),
        _ => g.rng.below(8),
    };
    match id {
        1..=3 => {
            // mostly the data maps; sometimes the program, device and ring maps, or no map
            a[0] = if g.rng.below(4) != 0 {
                region::map_handle(g.rng.below_usize(PROGS_MAP))
            } else {
                g.map_handle(nmaps)
            };
            let map = region::offset(a[0]) as usize;
            let spec = s.specs.get(map).cloned();
            let ks = spec.as_ref().map_or(8, |m| m.key_size as usize);
            let vs = spec.as_ref().map_or(8, |m| m.value_size as usize);
            a[1] = if g.rng.below(3) != 0 {
                g.stack_ptr(ks)
            } else {
                g.ptr(ks, &s.slots, &s.specs)
            };
            if let Some(spec) = &spec {
                if g.rng.below(6) != 0 && map < g.pool.len() {
                    let key = g.pool[map][g.rng.below_usize(4)].clone();
                    let key = if spec.map_type == ARRAY {
                        (g.rng.below(u64::from(spec.max_entries) + 1) as u32)
                            .to_le_bytes()
                            .to_vec()
                    } else {
                        key
                    };
                    poke(h, s, a[1], &key);
                }
            }
            if id == 2 {
                a[2] = if g.rng.below(3) != 0 {
                    g.stack_ptr(vs)
                } else {
                    g.ptr(vs, &s.slots, &s.specs)
                };
                // BPF_ANY mostly, then NOEXIST, EXIST, F_LOCK and junk
                a[3] = match g.rng.below(10) {
                    0 => g.rng.next(),
                    r => [0, 0, 0, 0, 0, 1, 2, 4, 3][r as usize - 1],
                };
            }
            if region::region(a[0]) == Region::MapHandle
                && map < nmaps
                && region::offset(a[0]) < 256
            {
                let key = peek(h, a[1], ks);
                let value = if id == 2 {
                    peek(h, a[2], vs)
                } else {
                    Some(Vec::new())
                };
                if let (Some(key), Some(value)) = (key, value) {
                    mreq = Some(MapsRequest {
                        op: (id - 1) as u8,
                        map,
                        flags: (id == 2).then_some(a[3]),
                        key,
                        value,
                    });
                }
            }
        }
        5 | 23 | 188 => {
            a[0] = g.rng.next();
            a[1] = if g.rng.below(2) == 0 { 0 } else { g.rng.next() };
        }
        28 => {
            let from = g.size(256);
            let to = g.size(256);
            a = [
                g.ptr(from as usize, &s.slots, &s.specs),
                from,
                g.ptr(to as usize, &s.slots, &s.specs),
                to,
                g.rng.next(),
            ];
        }
        44 | 54 | 65 => {
            let delta: i64 = match g.rng.below(5) {
                0 => g.rng.next() as i64,
                1 => -(g.rng.below(300) as i64),
                2 => g.rng.below(300) as i64,
                _ => g.rng.below(17) as i64 * 4 - 32,
            };
            a[1] = delta as u64;
        }
        93 | 94 => {
            // mostly a lock word inside an existing value, so both outcomes come up
            let map = g.rng.below_usize(nmaps);
            let vs = s.specs[map].value_size;
            a[0] = if g.rng.below(3) != 0 && s.slots[map] > 0 && vs >= 4 {
                let slot = g.rng.below(u64::from(s.slots[map])) as u32;
                region::map_value(map, slot, g.rng.below(u64::from(vs) - 3) as u32)
            } else {
                g.ptr(4, &s.slots, &s.specs)
            };
        }
        189 | 190 => {
            let room = (g.end - g.end.min(g.meta)) as u64;
            let len = match g.rng.below(8) {
                0 => g.size(0xffff),
                1 => 0,
                _ => g.rng.below(room.min(96) + 1),
            };
            let off = match g.rng.below(8) {
                0 => g.rng.next(),
                1 => 0x1_0000 + g.rng.below(4),
                _ => g.rng.below(room.saturating_sub(len) + 3),
            };
            a[1] = off;
            a[3] = len;
            a[2] = if g.rng.below(3) == 0 {
                // near the packet bytes being copied: overlapping copies both ways
                let base = g.meta as u64 + (off & 0xff);
                region::packet((base as i64 + g.rng.below(17) as i64 - 8).max(0) as usize)
            } else {
                g.ptr(len as usize, &s.slots, &s.specs)
            };
        }
        12 => {
            a[1] = handle(g, PROGS_MAP);
            a[2] = index(g);
            if a[1] == region::map_handle(PROGS_MAP) && g.tails < 33 {
                let key = a[2] as u32;
                // the value as it is now: map-value stores (load_bytes) may have changed it since it was loaded
                let entry = g.progs.get(key as usize).copied().flatten().map(|_| {
                    let v = peek(h, region::map_value(PROGS_MAP, key, 0), 4).expect("slot");
                    u32::from_le_bytes([v[0], v[1], v[2], v[3]])
                });
                mreq = Some(MapsRequest {
                    op: 3,
                    map: PROGS_MAP,
                    flags: None,
                    key: key.to_le_bytes().to_vec(),
                    value: Vec::new(),
                });
                s.ok(format!(
                    "m 0 {:x} {:x} {:x} {:x}",
                    u8::from(entry.is_some()),
                    if entry.is_some() { key } else { 0 },
                    g.rng.below(3),
                    entry.unwrap_or(0)
                ));
            }
        }
        51 => {
            a[0] = handle(g, DEV_MAP);
            a[1] = index(g);
            a[2] = match g.rng.below(6) {
                0 => g.rng.next(),
                1 => 8 | g.rng.below(4),
                2 => 16 | g.rng.below(4),
                3 => 4,
                _ => g.rng.below(4),
            };
            let flags_ok = a[2] & !(3 | 0x18) == 0;
            if a[0] == region::map_handle(DEV_MAP) && flags_ok {
                let key = a[1] as u32;
                let present = g.devs.get(key as usize).copied().unwrap_or(false);
                mreq = Some(MapsRequest {
                    op: 3,
                    map: DEV_MAP,
                    flags: None,
                    key: key.to_le_bytes().to_vec(),
                    value: Vec::new(),
                });
                s.ok(format!(
                    "m 0 {:x} {:x} {:x} {:x}",
                    u8::from(present),
                    if present { key } else { 0 },
                    g.rng.below(3),
                    if present { 10 + key } else { 0 }
                ));
            }
        }
        69 => {
            a[1] = g.ptr(64, &s.slots, &s.specs);
            a[2] = match g.rng.below(6) {
                0 => g.rng.next(),
                1 => 63,
                2 => (-1i64) as u64,
                _ => 64 + g.rng.below(3) * 16,
            };
            a[3] = match g.rng.below(8) {
                0 => g.rng.next(),
                1 => 8 << g.rng.below(4),
                _ => g.rng.below(8),
            };
            let einval = (a[2] as i32) < 64 || (a[3] as u32) & !0x3f != 0;
            let unsupported = (a[3] as u32) & 0x38 != 0;
            if !einval && !unsupported {
                if let Some(params) = peek(h, a[1], 64) {
                    fib_req = Some((a[3] as u32, params));
                }
            }
        }
        130 => {
            a[0] = handle(g, RING_MAP);
            let len = match g.rng.below(10) {
                0 => 0x1_0000 + g.rng.below(3),
                1 => g.rng.next(),
                2 => 0,
                3 | 4 => g.rng.below(1200),
                _ => g.rng.below(300),
            };
            a[1] = if g.rng.below(3) != 0 {
                g.stack_ptr(len.min(4096) as usize)
            } else {
                g.ptr(len.min(4096) as usize, &s.slots, &s.specs)
            };
            a[2] = len;
            a[3] = match g.rng.below(8) {
                0 => 4,
                1 => g.rng.next(),
                _ => g.rng.below(4),
            };
        }
        _ => a = [g.rng.next(), g.rng.next(), 0, 0, 0],
    }
    h.regs()[0] = 0;
    h.regs()[1..6].copy_from_slice(&a);
    if id == 5 {
        s.ok(format!("t {:x} {now:x}", g.time));
    }
    let served = MIX.iter().any(|&(i, _)| i == id);
    let (r0, fault) = if served {
        match h.call_helper(id, now) {
            Ok(r0) => (Some(r0), false),
            Err(_) => (None, true),
        }
    } else {
        (None, true)
    };
    let tail = h.take_tail_call().map(|prog| {
        g.tails += 1;
        entry_of(prog)
    });
    // the tail call's get goes out even when the program it names then faults
    let mreq = if fault && id != 12 { None } else { mreq };
    // programs may change the program and device maps too (the reference lets them): keep the tables current
    let changes_tables = |m: &MapsRequest| matches!((m.op, m.map), (1 | 2, PROGS_MAP | DEV_MAP));
    if let (Some(m), Some(0)) = (mreq.as_ref().filter(|m| changes_tables(m)), r0) {
        let key = u32::from_le_bytes([m.key[0], m.key[1], m.key[2], m.key[3]]) as usize;
        let word = |v: &[u8]| u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
        match (m.op, m.map) {
            (1, PROGS_MAP) if key < g.progs.len() => g.progs[key] = Some(word(&m.value)),
            (2, PROGS_MAP) if key < g.progs.len() => g.progs[key] = None,
            (1, DEV_MAP) if key < g.devs.len() => g.devs[key] = true,
            (2, DEV_MAP) if key < g.devs.len() => g.devs[key] = false,
            _ => {}
        }
    }
    if fib_req.is_some() {
        let after = peek(h, a[1], 64).expect("the struct is still there");
        s.ok(format!(
            "f {:x} {:x} {}",
            r0.expect("no fault"),
            g.rng.below(3),
            hex(&after)
        ));
    }
    // the maps stand-in answers as the reference maps did
    if let Some(m) = &mreq {
        if m.op != 3 {
            let r = r0.expect("no fault");
            let line = if m.op == 0 {
                let slot = if r == 0 {
                    0
                } else {
                    region::split_map_value(r).1
                };
                format!("m 0 {:x} {slot:x} {:x} 0", u8::from(r != 0), g.rng.below(3))
            } else {
                format!("m {r:x} 0 0 {:x} 0", g.rng.below(3))
            };
            s.ok(line);
        }
    }
    let fixed = matches!(id, 5 | 23 | 188).then_some(1);
    s.push(
        format!(
            "h {:x} {:x} {:x} {:x} {:x} {:x}",
            id as u32, a[0], a[1], a[2], a[3], a[4]
        ),
        format!(
            "{tag}: helper {id} ({:#x} {:#x} {:#x} {:#x} {:#x})",
            a[0], a[1], a[2], a[3], a[4]
        ),
        Expect::Call {
            r0,
            fault,
            mreq,
            cycles: fixed,
            tail,
            fib: fib_req,
        },
    );
    let moved = match id {
        28 => a[1] | a[3],
        189 | 190 => a[3],
        _ => 0,
    };
    if let Some(last) = s.steps.last_mut() {
        last.call = Some((id, moved));
    }
    if matches!(id, 44 | 54 | 65) {
        let (m, d, e) = offsets(h);
        s.push(
            "P".into(),
            format!("{tag}: offsets after helper {id}"),
            Expect::Offsets(format!("{m:x} {d:x} {e:x}")),
        );
    }
    if id == 2 || id == 3 {
        sync_maps(h, s);
    }
}

fn field(line: &str, i: usize) -> &str {
    line.split_whitespace().nth(i).unwrap_or("")
}

fn check(s: &Script, out: &[String]) -> Vec<String> {
    assert_eq!(out.len(), s.steps.len(), "one output line per command");
    let mut problems = Vec::new();
    for (step, got) in s.steps.iter().zip(out) {
        let bad =
            |why: String| format!("{}: {why}\n  line: {}\n  got:  {got}", step.what, step.line);
        match &step.expect {
            Expect::Ok => {
                if got != "ok" {
                    problems.push(bad("not ok".into()));
                }
            }
            Expect::Outcome(want) | Expect::Offsets(want) => {
                if got != want {
                    problems.push(bad(format!("want {want}")));
                }
            }
            Expect::Bytes(want) => {
                if got != &hex(want) {
                    problems.push(bad(format!("want {}", hex(want))));
                }
            }
            Expect::Ring(flags, records) => {
                let want = if records.is_empty() {
                    "-".to_string()
                } else {
                    records.iter().map(|r| hex(r)).collect::<Vec<_>>().join(",")
                };
                let want = format!("{flags} {want}");
                if got != &want {
                    problems.push(bad(format!("want {want}")));
                }
            }
            Expect::Call {
                r0,
                fault,
                mreq,
                cycles,
                tail,
                fib,
            } => {
                if got == "timeout" {
                    problems.push(bad("no answer".into()));
                    continue;
                }
                let got_r0 = u64::from_str_radix(field(got, 0), 16).expect("r0");
                let got_fault = field(got, 1) == "1";
                let got_cycles = u64::from_str_radix(field(got, 4), 16).expect("cycles");
                if got_fault != *fault {
                    problems.push(bad(format!("fault {got_fault}, the reference {fault}")));
                    continue;
                }
                if let Some(r0) = r0 {
                    if got_r0 != *r0 {
                        problems.push(bad(format!("r0 {got_r0:#x}, the reference {r0:#x}")));
                    }
                }
                let got_tail = (field(got, 2) == "1")
                    .then(|| u16::from_str_radix(field(got, 3), 16).expect("entry"));
                if got_tail != *tail {
                    problems.push(bad(format!(
                        "tail call {got_tail:?}, the reference {tail:?}"
                    )));
                }
                let want_fib = fib
                    .as_ref()
                    .map_or("-".to_string(), |(f, p)| format!("{f:x}:{}", hex(p)));
                if field(got, 7) != want_fib {
                    problems.push(bad(format!("fib request, want {want_fib}")));
                }
                if let Some(c) = cycles {
                    if got_cycles != *c {
                        problems.push(bad(format!("{got_cycles} cycles, want {c}")));
                    }
                }
                let got_mreq = field(got, 5);
                match mreq {
                    None => {
                        if got_mreq != "-" {
                            problems.push(bad("a maps request the reference did not make".into()));
                        }
                    }
                    Some(m) => {
                        let parts: Vec<&str> = got_mreq.split(':').collect();
                        if parts.len() != 5 {
                            problems.push(bad("no maps request".into()));
                            continue;
                        }
                        let mut key = m.key.clone();
                        key.resize(s.widths.0, 0);
                        let mut value = m.value.clone();
                        value.resize(s.widths.1, 0);
                        let flags_ok = m
                            .flags
                            .is_none_or(|f| u64::from_str_radix(parts[2], 16) == Ok(f));
                        if parts[0] != format!("{:x}", m.op)
                            || parts[1] != format!("{:x}", m.map)
                            || !flags_ok
                            || unhex(parts[3]) != key
                            || unhex(parts[4]) != value
                        {
                            problems.push(bad(format!(
                                "maps request, want op {} map {} flags {:?} key {} value {}",
                                m.op,
                                m.map,
                                m.flags,
                                hex(&key),
                                hex(&value)
                            )));
                        }
                    }
                }
            }
        }
    }
    problems
}

/// Runs the script on the model built with MAPS = TB_MAPS and `extra` parameter overrides.
fn simulate(s: &Script, extra: &[String]) -> Vec<String> {
    let mut spec = common::unit_spec("helpers")
        .source("sephirot/ringbuf.sv")
        .source("sephirot/helpers.sv");
    let (key, value) = s.widths;
    spec.flags = vec![
        format!("-GMAPS={TB_MAPS}"),
        format!("-GKEY_BYTES={key}"),
        format!("-GVALUE_BYTES={value}"),
        "-CFLAGS".into(),
        format!("-DTB_MAPS={TB_MAPS} -DTB_KEY_BYTES={key} -DTB_VALUE_BYTES={value}"),
    ];
    spec.flags.extend(extra.iter().cloned());
    let input: String = s.steps.iter().map(|st| format!("{}\n", st.line)).collect();
    // HELPERS_SCRIPT=<file> keeps the testbench input for running the model by hand.
    if let Some(path) = std::env::var_os("HELPERS_SCRIPT") {
        std::fs::write(&path, &input).expect("write HELPERS_SCRIPT");
    }
    common::run_testbench(&spec, input)
}

/// What the coverage check looks at in a call the reference did not fault on.
#[derive(Clone, Copy)]
struct Seen {
    r0: u64,
    moved: u64,
    tail: bool,
    fib: bool,
}

/// The random mix must reach every helper's successful path, not only its error returns.
fn assert_coverage(s: &Script) {
    for &(id, _) in MIX {
        let ok: Vec<Seen> = s
            .steps
            .iter()
            .filter_map(|st| match (&st.expect, st.call) {
                (
                    Expect::Call {
                        r0: Some(r0),
                        tail,
                        fib,
                        ..
                    },
                    Some((i, moved)),
                ) if i == id => Some(Seen {
                    r0: *r0,
                    moved,
                    tail: tail.is_some(),
                    fib: fib.is_some(),
                }),
                _ => None,
            })
            .collect();
        let count = |f: &dyn Fn(&Seen) -> bool| ok.iter().filter(|c| f(c)).count();
        let useful = match id {
            1 => count(&|c| c.r0 != 0),
            2 | 3 | 44 | 54 | 65 => count(&|c| c.r0 == 0),
            12 => count(&|c| c.tail),
            28 => count(&|c| c.r0 >> 16 == 0 && c.moved != 0),
            51 => count(&|c| c.r0 == 4),
            69 => count(&|c| c.fib),
            130 => count(&|c| c.r0 == 0).min(count(&|c| c.r0 == (-11i64) as u64)),
            189 | 190 => count(&|c| c.r0 == 0 && c.moved != 0),
            _ => ok.len(),
        };
        assert!(
            useful >= 3,
            "helper {id}: only {useful} of {} calls took the successful path (130: and -EAGAIN)",
            ok.len()
        );
    }
}

/// Cycles from the call to the answer, per helper, over the calls the reference did not fault on.
type Latencies = std::collections::BTreeMap<i32, (u64, u64, usize)>;

fn run(seed: u64, widths: (usize, usize), latencies: &mut Latencies) {
    let script = build_script(seed, 40, 32, widths);
    assert_coverage(&script);
    let out = simulate(&script, &[]);
    let problems = check(&script, &out);
    let calls_made = script
        .steps
        .iter()
        .filter(|st| matches!(st.expect, Expect::Call { .. }))
        .count();
    assert!(
        problems.is_empty(),
        "{} of {calls_made} calls or checks differ (seed {seed:#x}):\n{}",
        problems.len(),
        problems[..problems.len().min(12)].join("\n")
    );
    for (step, got) in script.steps.iter().zip(&out) {
        if let (Expect::Call { fault: false, .. }, Some((id, _))) = (&step.expect, step.call) {
            let cycles = u64::from_str_radix(field(got, 4), 16).expect("cycles");
            let e = latencies.entry(id).or_insert((u64::MAX, 0, 0));
            *e = (e.0.min(cycles), e.1.max(cycles), e.2 + 1);
        }
    }
}

#[test]
fn helpers_match_the_reference_machine_on_random_arguments() {
    let mut latencies = Latencies::new();
    // two seeds on each of the two builds
    for seed in 1..=4u64 {
        let widths = WIDTHS[(seed as usize - 1) / 2];
        run(
            seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            widths,
            &mut latencies,
        );
    }
    println!("helper latency (cycles from hcall to hret, calls that did not fault):");
    for (id, (lo, hi, n)) in &latencies {
        println!("  {id:>3}: {lo:>3} ..{hi:>4}  ({n} calls)");
    }
}

/// A script of hand-made calls on one packet of the test object, each checked against the reference.
struct Hand {
    s: Script,
    machine: Machine,
}

impl Hand {
    fn new(specs: Vec<MapSpec>) -> Hand {
        let insns = vec![Insn::new(CLASS_JMP | JMP_EXIT, 0, 0, 0, 0)];
        let mut object = ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns.clone()));
        object
            .programs
            .push(ProgramSpec::standalone("t1", "xdp/t1", insns));
        object.maps = specs.clone();
        let machine = Machine::new(&object, Some("t"), &Config::default()).expect("machine");
        let mut s = Script {
            steps: Vec::new(),
            slots: vec![0; specs.len()],
            specs: specs.clone(),
            widths: WIDTHS[0],
        };
        for (i, m) in specs.iter().enumerate() {
            let slots = if m.map_type == RINGBUF {
                0
            } else {
                m.max_entries
            };
            s.slots[i] = slots;
            s.ok(format!(
                "c {i:x} {:x} {:x} {:x} {:x} {slots:x}",
                m.map_type, m.key_size, m.value_size, m.max_entries
            ));
        }
        for p in 0..2 {
            s.ok(format!("g {p:x} {:x}", entry_of(p)));
        }
        Hand { s, machine }
    }
}

#[test]
fn tail_calls_stop_after_33_per_packet() {
    let mut hand = Hand::new(vec![MapSpec::new("progs", PROG_ARRAY, 4, 4, 4)]);
    hand.machine
        .maps_mut()
        .update(0, &2u32.to_le_bytes(), &1u32.to_le_bytes(), 0)
        .expect("entry");
    let Hand { mut s, mut machine } = hand;
    for packet in 0..2 {
        let mut buff = XdpBuff::new(&[0u8; 64]).expect("frame");
        let md = XdpMd {
            ingress_ifindex: 1,
            rx_queue_index: 0,
        };
        let mut h = machine.hosted(&mut buff, &md);
        s.ok("n".into());
        for call in 0..45u64 {
            // index 2 holds program 1; index 3 is empty (a call that falls through does not count)
            let index = if call % 5 == 4 { 3 } else { 2 };
            let a = [0, region::map_handle(0), index, 0, 0];
            h.regs()[0] = 0;
            h.regs()[1..6].copy_from_slice(&a);
            let r0 = h.call_helper(12, 1).expect("no fault");
            let tail = h.take_tail_call().map(entry_of);
            let taken_before = s
                .steps
                .iter()
                .rev()
                .take_while(|st| st.line != "n")
                .filter(|st| matches!(st.expect, Expect::Call { tail: Some(_), .. }))
                .count();
            let mreq = (taken_before < 33).then(|| MapsRequest {
                op: 3,
                map: 0,
                flags: None,
                key: (index as u32).to_le_bytes().to_vec(),
                value: Vec::new(),
            });
            if mreq.is_some() {
                let hit = index == 2;
                s.ok(format!(
                    "m 0 {:x} {:x} 0 {:x}",
                    u8::from(hit),
                    if hit { 2 } else { 0 },
                    u8::from(hit)
                ));
            }
            s.push(
                format!("h c 0 {:x} {index:x} 0 0", a[1]),
                format!("packet {packet} tail call {call}"),
                Expect::Call {
                    r0: Some(r0),
                    fault: false,
                    mreq,
                    cycles: None,
                    tail,
                    fib: None,
                },
            );
        }
        let taken = s
            .steps
            .iter()
            .rev()
            .take_while(|st| st.line != "n")
            .filter(|st| matches!(st.expect, Expect::Call { tail: Some(_), .. }))
            .count();
        assert_eq!(taken, 33, "the reference stops at 33 tail calls a packet");
        h.finish();
    }
    let out = simulate(&s, &[]);
    let problems = check(&s, &out);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn one_ring_buffer_is_served_and_overflowing_storage_is_flagged() {
    // 1024 bytes of storage for a 4096-byte map: the fifth 200-byte record (208 bytes each) does not fit here,
    // where the reference keeps it: r0 is the reference's 0, the record is dropped and rb_overflow_o rises.
    let specs = vec![
        MapSpec::new("events", RINGBUF, 0, 0, 4096),
        MapSpec::new("more", RINGBUF, 0, 0, 4096),
    ];
    let hand = Hand::new(specs);
    let Hand { mut s, mut machine } = hand;
    let mut buff = XdpBuff::new(&[0u8; 64]).expect("frame");
    let md = XdpMd {
        ingress_ifindex: 1,
        rx_queue_index: 0,
    };
    let mut h = machine.hosted(&mut buff, &md);
    s.ok("n".into());
    s.ok("s 200".into());
    let mut rng = Rng(0x21ab);
    let mut kept = Vec::new();
    for i in 0..6u64 {
        let data = rng.bytes(200);
        poke(&mut h, &mut s, region::stack(0), &data);
        let a = [region::map_handle(0), region::stack(0), 200, 0, 0];
        h.regs()[1..6].copy_from_slice(&a);
        let r0 = h.call_helper(130, 1).expect("no fault");
        assert_eq!(r0, 0, "the map has room for all six");
        if i < 4 {
            kept.push(data);
        }
        s.push(
            format!("h 82 {:x} {:x} c8 0 0", a[0], a[1]),
            format!("record {i}"),
            Expect::Call {
                r0: Some(0),
                fault: false,
                mreq: None,
                cycles: None,
                tail: None,
                fib: None,
            },
        );
    }
    // the second RINGBUF map is not served: its calls fault (the reference would serve it)
    s.push(
        format!(
            "h 82 {:x} {:x} 8 0 0",
            region::map_handle(1),
            region::stack(0)
        ),
        "a record for the second ring",
        Expect::Call {
            r0: None,
            fault: true,
            mreq: None,
            cycles: None,
            tail: None,
            fib: None,
        },
    );
    s.push("R".into(), "drain", Expect::Ring("1 0 1 1".into(), kept));
    let out = simulate(&s, &["-GRB_BYTES=1024".to_string()]);
    let problems = check(&s, &out);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
