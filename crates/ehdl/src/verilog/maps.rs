//! ARRAY maps: which maps get a shared `ehdl_map_mem` block, the hazard check that decides whether the pipeline can
//! keep the program's sequential order without flush and replay, and the blocks with their host port.
//!
//! Every access to a map is one port of its block. Ports act in one cycle in the order later stage first, then
//! program order, so two packets' accesses in the same cycle happen in packet order. Packets enter one per clock, so
//! an access at stage `s` of a packet and one at stage `t` of a packet `d >= 1` clocks later meet in the same cycle
//! when `s - t == d`, and happen in the wrong order when `s - t > d`: accesses to common bytes at stages 2 or more
//! apart can be reordered. That is harmless between non-fetching atomics of one operation (they commute and return
//! nothing), and a hazard otherwise. For each such pair (early stage `e`, late stage `l`) the generator adds a stall
//! check instead of the paper's flush and replay: a packet whose early access is enabled at `e` waits there (with
//! every younger packet; older ones move on and a bubble enters stage `e + 1`) while an older packet in stages
//! `e + 1 .. l - 1` may make the late access to the same 8 bytes (its address from its own copy of the late access's
//! base register, or any older packet when that register is not carried yet). A stall costs throughput only when
//! such packets follow each other closely.

use super::lru::{cam_access, is_lru, pseudo_stalls};
use super::ringbuf::is_ringbuf;
use super::stage::Gen;
use super::VerilogError;
use crate::ir::{Label, OpKind, Pipeline};
use hwxdp_ebpf::{AtomicOp, InsnKind};
use hwxdp_object::MapSpec;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// `BPF_MAP_TYPE_HASH`.
pub(super) const MAP_TYPE_HASH: u32 = 1;
/// `BPF_MAP_TYPE_ARRAY`.
const MAP_TYPE_ARRAY: u32 = 2;
/// `BPF_MAP_TYPE_PERCPU_HASH`.
const MAP_TYPE_PERCPU_HASH: u32 = 5;
/// `BPF_MAP_TYPE_PERCPU_ARRAY`.
const MAP_TYPE_PERCPU_ARRAY: u32 = 6;

/// A map with ARRAY semantics. The pipeline is one CPU, so a per-CPU map is its one copy.
pub(super) fn is_array(spec: &MapSpec) -> bool {
    spec.map_type == MAP_TYPE_ARRAY || spec.map_type == MAP_TYPE_PERCPU_ARRAY
}

/// `BPF_MAP_TYPE_DEVMAP`.
const MAP_TYPE_DEVMAP: u32 = 14;

/// A DEVMAP: `bpf_redirect_map` reads its values (ifindexes, nonzero when present) like an ARRAY's.
pub(super) fn is_devmap(spec: &MapSpec) -> bool {
    spec.map_type == MAP_TYPE_DEVMAP
}

/// `BPF_MAP_TYPE_LPM_TRIE`.
const MAP_TYPE_LPM_TRIE: u32 = 11;

/// An LPM_TRIE map (a CAM block matching the longest prefix).
pub(super) fn is_lpm(spec: &MapSpec) -> bool {
    spec.map_type == MAP_TYPE_LPM_TRIE
}

/// A map whose keys live in a CAM block: HASH (per-CPU too), LRU_HASH and LPM_TRIE.
pub(super) fn is_cam(spec: &MapSpec) -> bool {
    is_hash(spec) || is_lpm(spec) || is_lru(spec)
}

/// A map with HASH semantics (per-CPU ones included, as for [`is_array`]).
pub(super) fn is_hash(spec: &MapSpec) -> bool {
    spec.map_type == MAP_TYPE_HASH || spec.map_type == MAP_TYPE_PERCPU_HASH
}
/// The most entries of a HASH block (a CAM compares them all).
const MAX_HASH_ENTRIES: u32 = 1024;
/// The widest HASH key.
const MAX_KEY_BYTES: u32 = 64;

/// One port of a map block, as the stage that uses it emitted it.
pub(super) struct MapPort {
    /// Its stage and instruction: the port order.
    pub(super) stage: u32,
    pub(super) insn: u32,
    /// Write enable (already gated by the advance), operation code, address, data and byte mask expressions.
    pub(super) we: String,
    pub(super) op: u8,
    pub(super) addr: String,
    pub(super) wdata: String,
    pub(super) wmask: String,
    /// The wire (64 bits) that receives the port's read data.
    pub(super) rdata: String,
    /// Whether the port reads (a load, an atomic, a slot read); a store's read data is unused.
    pub(super) reads: bool,
    /// For a RAM block (`verilog/mem.rs`): the next cycle's 64-bit base (from the boundary's next values) and the
    /// address expression over it (`@` stands for the wire that holds the base); `None` when not known early.
    pub(super) early: Option<(String, String)>,
}

/// The maps the program looks up, updates, deletes from, redirects to or outputs records to, which get blocks:
/// ARRAY, HASH, LRU_HASH and LPM_TRIE maps (lookups; updates and deletes of CAM maps), DEVMAP (redirects), RINGBUF
/// (`bpf_ringbuf_output`), PROG_ARRAY (inlined tail calls, `verilog/tailcall.rs`) and writable global data. A map
/// without a block cannot change in the pipeline; the host port loads and reads back exactly these.
pub fn block_maps(p: &Pipeline, maps: &[MapSpec]) -> BTreeSet<u32> {
    let mut blocks: BTreeSet<u32> = super::tailcall::slot_maps(p, maps).collect();
    // Writable global data (`.bss`, `.data`): an ARRAY map of one value the program addresses directly.
    const BPF_F_RDONLY_PROG: u32 = 0x80;
    blocks.extend(p.ops.iter().filter_map(|o| {
        match hwxdp_ebpf::kind(p.insns.get(o.insn as usize)?) {
            Ok(hwxdp_ebpf::InsnKind::LoadImm64 {
                pseudo: hwxdp_ebpf::PSEUDO_MAP_VALUE,
                imm,
                ..
            }) => {
                let m = (imm as u64 & 0xffff_ffff) as u32;
                let spec = maps.get(m as usize)?;
                (is_array(spec) && spec.map_flags & BPF_F_RDONLY_PROG == 0).then_some(m)
            }
            _ => None,
        }
    }));
    blocks.extend(
        p.ops
            .iter()
            .filter_map(|o| match &o.kind {
                OpKind::Helper {
                    id: id @ (1 | 2 | 3 | 51 | 130),
                    consts,
                    ..
                } => consts.iter().find_map(|(r, c)| match (r, c) {
                    (1, crate::ArgConst::Map(m)) => Some((*id, *m)),
                    _ => None,
                }),
                _ => None,
            })
            .filter(|&(id, m)| {
                maps.get(m as usize).is_some_and(|s| match id {
                    51 => is_devmap(s),
                    130 => is_ringbuf(s),
                    2 | 3 => is_cam(s),
                    _ => is_array(s) || is_cam(s),
                })
            })
            .map(|(_, m)| m),
    );
    blocks
}

/// Ways per bucket of a HASH map whose keys are in hashed buckets (`ehdl_hash_bkt`). With twice as many slots as
/// entries (see [`key_buckets`]) a full map averages 2 keys per 8-way bucket: more than 8 in one is rare enough for
/// the stash. (4 ways would need 4 slots per entry, and rate_limiter's value block, sized by slots, would outgrow
/// a RAM block's live value table.)
pub const BUCKET_WAYS: u32 = 8;
/// Overflow slots (flip-flops) of such a map.
pub const BUCKET_STASH: u32 = 4;
/// Entries from which a plain HASH or PERCPU_HASH map keeps its keys in hashed buckets in block RAM rather than a CAM
/// of registers: the four examples' 512- and 1024-entry maps, whose CAMs were most of their LUTs; smaller CAMs stay
/// registers (a 64-entry CAM of 16-byte keys is 8,192 flip-flops, under the copies of one bucket RAM per reader).
pub const BUCKET_MIN_ENTRIES: u32 = 512;

/// The layout of a HASH map's keys in hashed buckets (`rtl/ehdl/ehdl_hash_bkt.sv`): `buckets` (a power of two, at
/// least 2 x max_entries slots in all) of `ways` ways, then `stash` overflow slots. Slot `b * ways + w` is way
/// `w` of bucket `b`, slot `buckets * ways + i` stash slot `i`; a key's bucket is `hash32(key) % buckets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyBuckets {
    /// Buckets, a power of two.
    pub buckets: u32,
    /// Ways per bucket.
    pub ways: u32,
    /// Overflow slots after the buckets.
    pub stash: u32,
}

impl KeyBuckets {
    /// Slots in all: the buckets' ways, then the stash.
    pub fn slots(&self) -> u32 {
        self.buckets * self.ways + self.stash
    }
}

/// Where `spec`'s keys live when in hashed buckets: plain HASH and PERCPU_HASH maps of [`BUCKET_MIN_ENTRIES`] or
/// more (not LRU or LPM maps, whose blocks need the CAM); `None` for a CAM or a map without keys.
pub fn key_buckets(spec: &MapSpec) -> Option<KeyBuckets> {
    (is_hash(spec) && spec.max_entries >= BUCKET_MIN_ENTRIES).then(|| KeyBuckets {
        buckets: (2 * spec.max_entries)
            .div_ceil(BUCKET_WAYS)
            .next_power_of_two()
            .max(2),
        ways: BUCKET_WAYS,
        stash: BUCKET_STASH,
    })
}

/// Key slots of a HASH, LRU or LPM map's block: `max_entries` for a CAM, more for hashed buckets.
pub fn key_slots(spec: &MapSpec) -> u32 {
    key_buckets(spec).map_or(spec.max_entries, |b| b.slots())
}

/// Bytes of map `m`'s values, and the address width of its block.
pub(super) fn geometry(spec: &MapSpec) -> (u64, u32) {
    let slots = if is_cam(spec) {
        key_slots(spec)
    } else {
        spec.max_entries
    };
    let bytes = slots as u64 * spec.value_size as u64;
    let aw = 64 - bytes.max(1).leading_zeros() + 1;
    (bytes, aw)
}

/// A pair of accesses that packets could reorder: the younger packet's `early` op (stage `e`) must wait while an
/// older packet between `e` and `l` may still perform `late` (stage `l`) on the same bytes.
pub(super) struct Stall {
    pub(super) early: u32,
    pub(super) late: u32,
    pub(super) e: u32,
    pub(super) l: u32,
}

/// One access to a map value, for the hazard check.
struct Access {
    id: u32,
    stage: u32,
    maps: Vec<u32>,
    /// Bytes of the value, `None` when the offset is not known (an access through a value pointer reaches some of
    /// `[0, value_size)`). The CAM and a ring buffer's records are the pseudo-range `[-1, 0)`, which only helpers
    /// touch.
    range: Option<(i64, i64)>,
    writes: bool,
    /// For an atomic that returns nothing: its operation (such atomics commute with each other).
    commutes: Option<AtomicOp>,
}

/// Refuses maps the blocks cannot hold; returns the pairs of accesses that need a stall check (see the module
/// comment).
pub(super) fn check(
    p: &Pipeline,
    maps: &[MapSpec],
    arrays: &BTreeSet<u32>,
) -> Result<Vec<Stall>, VerilogError> {
    for &m in arrays {
        let spec = &maps[m as usize];
        // Value bytes are limited where the block is chosen (`map_blocks`, `verilog/mem.rs`).
        let why = if let Some(why) = super::lru::misfit(spec).or_else(|| {
            is_ringbuf(spec)
                .then(|| super::ringbuf::misfit(spec))
                .flatten()
        }) {
            Some(why)
        } else if is_array(spec) && spec.key_size != 4 {
            Some(format!("an ARRAY map with {}-byte keys", spec.key_size))
        } else if is_cam(spec)
            && (spec.key_size > MAX_KEY_BYTES
                || (key_buckets(spec).is_none() && spec.max_entries > MAX_HASH_ENTRIES))
        {
            Some(format!(
                "{} entries of {}-byte keys; the CAM takes up to {MAX_HASH_ENTRIES} entries (hashed buckets any \
                 number of a HASH map's) of up to {MAX_KEY_BYTES} bytes",
                spec.max_entries, spec.key_size
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(VerilogError::Map {
                program: p.summary.program.clone(),
                map: spec.name.clone(),
                why,
            });
        }
    }
    let mut accesses = Vec::new();
    for op in &p.ops {
        let Ok(kind) = hwxdp_ebpf::kind(&p.insns[op.insn as usize]) else {
            continue;
        };
        // CAM helpers: the CAM is a pseudo-range [-1, 0) of the map (written by updates, deletes and LRU lookups);
        // an update also writes the whole value. A ring buffer's records are its pseudo-range, written in order.
        if let OpKind::Helper { id, .. } = &op.kind {
            let map = op.map_arg();
            let ring = map.filter(|m| *id == 130 && maps.get(*m as usize).is_some_and(is_ringbuf));
            if let Some(m) = ring {
                accesses.push(Access {
                    id: op.id,
                    stage: op.stage,
                    maps: vec![m],
                    range: Some((-1, 0)),
                    writes: true,
                    commutes: None,
                });
            }
            if let Some((m, writes)) = cam_access(maps, op) {
                let update = *id == 2;
                accesses.push(Access {
                    id: op.id,
                    stage: op.stage,
                    maps: vec![m],
                    range: Some((-1, 0)),
                    writes,
                    commutes: None,
                });
                if update {
                    let v = maps[m as usize].value_size as i64;
                    accesses.push(Access {
                        id: op.id,
                        stage: op.stage,
                        maps: vec![m],
                        range: Some((0, v)),
                        writes: true,
                        commutes: None,
                    });
                }
            }
            continue;
        }
        let (size, writes, commutes) = match (&op.kind, kind) {
            (OpKind::Load, InsnKind::Load { size, .. }) => (size.bytes(), false, None),
            (OpKind::Store, InsnKind::Store { size, .. }) => (size.bytes(), true, None),
            (OpKind::Atomic, InsnKind::Atomic { size, op: a, .. }) => {
                let plain = matches!(
                    a,
                    AtomicOp::Add | AtomicOp::Or | AtomicOp::And | AtomicOp::Xor
                );
                (size.bytes(), true, plain.then_some(a))
            }
            _ => continue,
        };
        let (maps_of, range) = match op.label {
            Label::MapValue { map, offset } => (vec![map], offset.map(|o| (o, o + size as i64))),
            Label::Unknown => (arrays.iter().copied().collect(), None),
            _ => continue,
        };
        accesses.push(Access {
            id: op.id,
            stage: op.stage,
            maps: maps_of,
            range,
            writes,
            commutes,
        });
    }
    let mut stalls = Vec::new();
    for (i, a) in accesses.iter().enumerate() {
        for b in &accesses[i + 1..] {
            let common = a.maps.iter().any(|m| b.maps.contains(m));
            let overlap = match (a.range, b.range) {
                (Some((a0, a1)), Some((b0, b1))) => a0 < b1 && b0 < a1,
                // A value pointer never reaches the pseudo-range: a store through one cannot change a lookup.
                (None, Some((_, end))) | (Some((_, end)), None) => end > 0,
                (None, None) => true,
            };
            let apart = a.stage.abs_diff(b.stage) >= 2;
            let commute = a.commutes.is_some() && a.commutes == b.commutes;
            if common && overlap && (a.writes || b.writes) && apart && !commute {
                let (early, late) = if a.stage < b.stage { (a, b) } else { (b, a) };
                stalls.push(Stall {
                    early: early.id,
                    late: late.id,
                    e: early.stage,
                    l: late.stage,
                });
            }
        }
    }
    stalls.extend(pseudo_stalls(p, maps));
    Ok(stalls)
}

impl Gen<'_> {
    /// The map blocks with their ports in order, and the host port that reads and writes them (its read data one
    /// cycle after the address: RAM blocks read registered, register blocks' reads are registered to match).
    pub(super) fn map_blocks(&mut self) -> Result<(), VerilogError> {
        let mut s = String::new();
        // Reads of register blocks (combinational, registered below) and of RAM blocks (already registered).
        let mut host_reads = Vec::new();
        let mut host_reads_q = Vec::new();
        let arrays: Vec<u32> = self.arrays.iter().copied().collect();
        for m in arrays {
            let spec = &self.maps[m as usize];
            if is_ringbuf(spec) {
                let rd = self.ring_block(&mut s, m);
                host_reads.push(format!("((host_map_i == 8'd{m}) ? {rd} : 64'd0)"));
                continue;
            }
            let mut ports = self.map_ports.remove(&m).unwrap_or_default();
            ports.sort_by_key(|p| (std::cmp::Reverse(p.stage), p.insn));
            let storage = self.placed(m, &ports)?;
            let ram = storage.storage != super::mem::Storage::Regs;
            self.storage.push(storage);
            let name = format!("map{m}");
            self.value_block(&mut s, m, &ports, ram);
            let values = format!("{name}_host_rdata");
            if ram {
                host_reads_q.push(format!(
                    "(((host_map_q == 8'd{m}) & host_val_q) ? {values} : 64'd0)"
                ));
            }
            let spec = &self.maps[m as usize];
            let mut host_read = if ram { "64'd0".to_string() } else { values };
            if is_cam(spec) && key_buckets(spec).is_some() {
                // Hashed buckets read the host's key words registered, like a RAM value block.
                self.bucket_block(&mut s, m)?;
                host_reads_q.push(format!(
                    "(((host_map_q == 8'd{m}) & host_key_q) ? {name}_key_rdata : 64'd0)"
                ));
            } else if is_cam(spec) {
                self.hash_block(&mut s, m);
                host_read =
                    format!("(host_addr_i[31:30] == 2'b00) ? {host_read} : {name}_key_rdata");
            }
            host_reads.push(format!("((host_map_i == 8'd{m}) ? ({host_read}) : 64'd0)"));
        }
        self.unused_ports.push("host_addr_i".into());
        self.host_read(&mut s, host_reads, host_reads_q);
        self.body += &s;
        Ok(())
    }

    /// Where map `m`'s values go (`verilog/mem.rs`), refusing a register block over its limit and RAM copies over
    /// the device's memory.
    fn placed(&self, m: u32, ports: &[MapPort]) -> Result<super::mem::MapStorage, VerilogError> {
        use super::mem::{Storage, DEVICE_RAM_BYTES, MAX_REG_BYTES};
        let spec = &self.maps[m as usize];
        let (bytes, _) = geometry(spec);
        let st = self.choose_storage(m, ports);
        let why = if st.storage == Storage::Regs && bytes > MAX_REG_BYTES {
            Some(format!(
                "{bytes} value bytes in registers ({}); the register block takes up to {MAX_REG_BYTES}",
                st.why
            ))
        } else if st.ram_bytes > DEVICE_RAM_BYTES {
            Some(format!(
                "{} bytes of RAM in {} copies ({}); an Alveo U50 has {DEVICE_RAM_BYTES}",
                st.ram_bytes, st.rams, st.why
            ))
        } else {
            None
        };
        match why {
            Some(why) => Err(VerilogError::Map {
                program: self.p.summary.program.clone(),
                map: spec.name.clone(),
                why,
            }),
            None => Ok(st),
        }
    }

    /// The host port's read data: register blocks' reads registered, RAM blocks' (registered in the block, selected
    /// by the registered map index and "values" address bits) ORed in.
    fn host_read(&mut self, s: &mut String, comb: Vec<String>, regd: Vec<String>) {
        if comb.is_empty() && regd.is_empty() {
            *s += "\n  // No map blocks: the host port reads 0.\n  assign host_rdata_o = 64'd0;\n";
            self.unused_ports.extend(
                [
                    "host_we_i",
                    "host_map_i",
                    "host_addr_i",
                    "host_wdata_i",
                    "host_wmask_i",
                ]
                .map(String::from),
            );
            return;
        }
        let _ = writeln!(
            self.decls,
            "  logic [63:0] host_comb;\n  logic [63:0] host_comb_q;"
        );
        let _ = writeln!(
            s,
            "  // The host reads one cycle after its address.\n  assign host_comb = {};\n  \
             always_ff @(posedge clk_i) host_comb_q <= host_comb;",
            if comb.is_empty() {
                "64'd0".to_string()
            } else {
                comb.join(" | ")
            }
        );
        if regd.is_empty() {
            let _ = writeln!(s, "  assign host_rdata_o = host_comb_q;");
            return;
        }
        let _ = writeln!(
            self.decls,
            "  logic [7:0] host_map_q;\n  logic host_val_q;\n  logic host_key_q;"
        );
        let _ = writeln!(
            s,
            "  always_ff @(posedge clk_i) begin\n    host_map_q <= host_map_i;\n    \
             host_val_q <= (host_addr_i[31:30] == 2'b00);\n    host_key_q <= (host_addr_i[31:30] != 2'b00);\n  \
             end\n  assign host_rdata_o = host_comb_q | {};",
            regd.join(" | ")
        );
        if !regd.iter().any(|r| r.contains("host_key_q")) {
            self.unused_ports.push("host_key_q".into());
        }
    }

    /// The value block of map `m` (`ehdl_map_mem` in registers, or `ehdl_map_ram` when `ram`) with its ports
    /// (sorted) and its host port.
    fn value_block(&mut self, s: &mut String, m: u32, ports: &[MapPort], ram: bool) {
        let spec = &self.maps[m as usize];
        let (bytes, aw) = geometry(spec);
        let np = ports.len().max(1);
        let name = format!("map{m}");
        for (sig, w) in [
            ("we", np),
            ("op", 3 * np),
            ("addr", aw as usize * np),
            ("wdata", 64 * np),
            ("wmask", 8 * np),
            ("rdata", 64 * np),
        ] {
            let _ = writeln!(self.decls, "  logic [{}:0] {name}_{sig};", w - 1);
        }
        let _ = writeln!(self.decls, "  logic [63:0] {name}_host_rdata;");
        let join = |f: &dyn Fn(&MapPort) -> String, tie: &str| -> String {
            if ports.is_empty() {
                tie.to_string()
            } else {
                let parts: Vec<String> = ports.iter().rev().map(f).collect();
                format!("{{{}}}", parts.join(", "))
            }
        };
        let we = join(&|p| p.we.clone(), "1'b0");
        let op = join(&|p| format!("3'd{}", p.op), "3'd0");
        let addr = join(&|p| p.addr.clone(), &format!("{aw}'d0"));
        let wdata = join(&|p| p.wdata.clone(), "64'd0");
        let wmask = join(&|p| p.wmask.clone(), "8'd0");
        // The ports that may write, highest first as in the vectors: a port whose enable is the constant 0
        // (a load) gets no write or forwarding logic in the block.
        let bits = |f: &dyn Fn(&MapPort) -> bool| -> String {
            if ports.is_empty() {
                "0".into()
            } else {
                ports
                    .iter()
                    .rev()
                    .map(|p| if f(p) { '1' } else { '0' })
                    .collect()
            }
        };
        let writes = bits(&|p| p.we != "1'b0");
        for e in [&we, &addr, &wdata, &wmask] {
            self.read(e);
        }
        let _ = write!(
            s,
            "\n  // Map {m} ({map}): ARRAY of {n} x {v} bytes in {kind}; ports later stage first, then program order.\n\
             \x20 assign {name}_we = {we};\n  assign {name}_op = {op};\n  assign {name}_addr = {addr};\n\
             \x20 assign {name}_wdata = {wdata};\n  assign {name}_wmask = {wmask};\n",
            map = spec.name,
            n = spec.max_entries,
            v = spec.value_size,
            kind = if ram { "block RAM" } else { "registers" },
        );
        for (i, p) in ports.iter().enumerate() {
            let _ = writeln!(s, "  assign {} = {name}_rdata[{} +: 64];", p.rdata, 64 * i);
        }
        let host = format!(
            ".host_we_i(host_we_i & (host_map_i == 8'd{m}) & (host_addr_i[31:30] == 2'b00)),\n    \
             .host_addr_i(host_addr_i[{}:0]), .host_wdata_i(host_wdata_i), .host_wmask_i(host_wmask_i),\n    \
             .host_rdata_o({name}_host_rdata)",
            aw - 1
        );
        if ram {
            let raddr = self.early_addresses(s, &name, ports, aw);
            let reads = bits(&|p| p.reads);
            // Only atomics read-modify-write: a plain store gets no adder in front of the later ports' reads.
            let atomic = bits(&|p| p.op != 0);
            // Writers whose next address is on raddr: their forwarding is decided a cycle early.
            let early = bits(&|p| p.we != "1'b0" && p.early.is_some());
            let _ = writeln!(
                self.decls,
                "  logic [{}:0] {name}_raddr;\n  logic {name}_host_drop;",
                aw as usize * np - 1
            );
            let _ = writeln!(
                s,
                "  assign {name}_raddr = {raddr};\n  \
                 ehdl_map_ram #(.BYTES({bytes}), .NP({np}), .AW({aw}), .WRITES({np}'b{writes}), .READS({np}'b{reads}),\n    \
                 .ATOMIC({np}'b{atomic}), .EARLY({np}'b{early})) u_{name} (\n    \
                 .clk_i(clk_i), .rst_ni(rst_ni), .raddr_i({name}_raddr), .we_i({name}_we), .op_i({name}_op),\n    \
                 .addr_i({name}_addr), .wdata_i({name}_wdata), .wmask_i({name}_wmask), .rdata_o({name}_rdata),\n    \
                 {host}, .host_drop_o({name}_host_drop)\n  );"
            );
            // The host loads maps before traffic: a write a pipeline write displaces never happens there.
            self.unused_ports.push(format!("{name}_host_drop"));
        } else {
            let _ = writeln!(
                s,
                "  ehdl_map_mem #(.BYTES({bytes}), .NP({np}), .AW({aw}), .WRITES({np}'b{writes})) u_{name} (\n    \
                 .clk_i(clk_i), .rst_ni(rst_ni), .we_i({name}_we), .op_i({name}_op), .addr_i({name}_addr), \
                 .wdata_i({name}_wdata),\n    .wmask_i({name}_wmask), .rdata_o({name}_rdata),\n    {host}\n  );"
            );
        }
        if ports.is_empty() {
            self.unused_ports.push(format!("{name}_rdata"));
        }
    }

    /// The next cycle's address of each port of a RAM block, as the concatenation `raddr_i` takes (a wire per
    /// reading port, and per writing port whose address is known early, holding its early base: the block decides
    /// a write's forwarding into later reads from it a cycle early; other ports present 0).
    fn early_addresses(
        &mut self,
        s: &mut String,
        name: &str,
        ports: &[MapPort],
        aw: u32,
    ) -> String {
        let mut parts = Vec::new();
        for (i, p) in ports.iter().enumerate() {
            match (&p.early, p.reads || p.we != "1'b0") {
                (Some((base, addr)), true) => {
                    let w = format!("{name}_ea{i}");
                    self.declare(&w, 64);
                    let base = self.read(base);
                    let _ = writeln!(
                        s,
                        "  assign {w} = {base};  // port {i}'s base in the next cycle"
                    );
                    let a = addr.replace('@', &w);
                    self.read(&a);
                    self.unused_ports.push(w);
                    parts.push(a);
                }
                _ => parts.push(format!("{aw}'d0")),
            }
        }
        if parts.is_empty() {
            return format!("{aw}'d0");
        }
        parts.reverse();
        format!("{{{}}}", parts.join(", "))
    }
}

impl Gen<'_> {
    /// The CAM of HASH map `m`: its lookup ports (from the lookup helper blocks) and its host port, key space at
    /// host addresses `0x4000_0000 + byte` and valid bits at `0x8000_0000 + slot`.
    fn hash_block(&mut self, s: &mut String, m: u32) {
        let spec = &self.maps[m as usize];
        let (entries, kb) = (spec.max_entries, spec.key_size);
        let sw = slot_width(key_slots(spec));
        let ks: u64 = [8u64, 16, 32, 64]
            .into_iter()
            .find(|&k| k >= kb as u64)
            .unwrap_or(64);
        let aw = 64 - (entries as u64 * ks).leading_zeros() + 1;
        let mut ports = self.hash_ports.remove(&m).unwrap_or_default();
        ports.sort_by_key(|p| (std::cmp::Reverse(p.stage), p.insn));
        let np = ports.len().max(1);
        let name = format!("map{m}");
        for (sig, w) in [
            ("kind", np),
            ("en", np),
            ("key", np * 8 * kb as usize),
            ("flags", 2 * np),
            ("hit", np),
            ("slot", np * sw as usize),
            ("err", 8 * np),
            ("busy", np),
            ("del", np),
            ("req", np),
        ] {
            let _ = writeln!(self.decls, "  logic [{}:0] {name}_cam_{sig};", w - 1);
        }
        let _ = writeln!(self.decls, "  logic [63:0] {name}_key_rdata;");
        let join = |f: &dyn Fn(&HashPort) -> String, tie: String| -> String {
            if ports.is_empty() {
                tie
            } else {
                let parts: Vec<String> = ports.iter().rev().map(f).collect();
                format!("{{{}}}", parts.join(", "))
            }
        };
        let kind = join(&|p| format!("1'b{}", p.update as u8), "1'b0".into());
        let del = join(&|p| format!("1'b{}", p.del as u8), "1'b0".into());
        let req = join(&|p| p.req.clone(), "1'b0".into());
        let en = join(&|p| p.en.clone(), "1'b0".into());
        let keys = join(&|p| p.key.clone(), format!("{}'d0", 8 * kb));
        let flags = join(&|p| format!("2'd{}", p.flags), "2'd0".into());
        for e in [&en, &keys, &req] {
            self.read(e);
        }
        let _ = writeln!(
            s,
            "  assign {name}_cam_kind = {kind};\n  assign {name}_cam_del = {del};\n  assign {name}_cam_req = {req};\n  \
             assign {name}_cam_en = {en};\n  assign {name}_cam_key = {keys};\n  assign {name}_cam_flags = {flags};"
        );
        for (i, p) in ports.iter().enumerate() {
            let _ = writeln!(
                s,
                "  assign {} = {name}_cam_hit[{i}];\n  assign {} = {name}_cam_slot[{} +: {sw}];\n  assign {} = {name}_cam_err[{} +: 8];",
                p.hit,
                p.slot,
                sw as usize * i,
                p.err,
                8 * i
            );
            if let Some(b) = &p.busy {
                let _ = writeln!(s, "  assign {b} = {name}_cam_busy[{i}];");
            }
        }
        if ports.is_empty() {
            for sig in ["hit", "slot", "err"] {
                self.unused_ports.push(format!("{name}_cam_{sig}"));
            }
        }
        self.unused_ports.push(format!("{name}_cam_busy"));
        // Probe ports for the stall checks that compare slots (`flowkey`), or one tied off.
        let probes: Vec<(String, String, String)> = self
            .probes
            .values()
            .filter(|q| q.map == m)
            .map(|q| (q.key.clone(), q.hit.clone(), q.slot.clone()))
            .collect();
        let nq = probes.len().max(1);
        let _ = writeln!(
            self.decls,
            "  logic [{}:0] {name}_probe_key;\n  logic [{}:0] {name}_probe_hit;\n  logic [{}:0] {name}_probe_slot;",
            nq * 8 * kb as usize - 1,
            nq - 1,
            nq * sw as usize - 1
        );
        if probes.is_empty() {
            let _ = writeln!(s, "  assign {name}_probe_key = '0;");
            self.unused_ports.push(format!("{name}_probe_hit"));
            self.unused_ports.push(format!("{name}_probe_slot"));
        } else {
            let keys: Vec<&str> = probes.iter().rev().map(|q| q.0.as_str()).collect();
            let _ = writeln!(s, "  assign {name}_probe_key = {{{}}};", keys.join(", "));
            for (q, (_, hit, slot)) in probes.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "  assign {hit} = {name}_probe_hit[{q}];\n  assign {slot} = {name}_probe_slot[{} +: {sw}];",
                    sw as usize * q
                );
            }
        }
        let _ = writeln!(
            s,
            "  ehdl_hash_map #(.ENTRIES({entries}), .KEY_BYTES({kb}), .NP({np}), .SW({sw}), .AW({aw}), .LPM({lpm}), .LRU({lru}), .PERCPU({percpu}), .NQ({nq}){cpus}) \
             u_{name}_keys (\n    \
             .clk_i(clk_i), .rst_ni(rst_ni), .kind_i({name}_cam_kind), .del_i({name}_cam_del), .en_i({name}_cam_en),\n    \
             .req_i({name}_cam_req),\n    \
             .key_i({name}_cam_key), .flags_i({name}_cam_flags), .hit_o({name}_cam_hit), .slot_o({name}_cam_slot),\n    \
             .err_o({name}_cam_err), .busy_o({name}_cam_busy),\n    \
             .probe_key_i({name}_probe_key), .probe_hit_o({name}_probe_hit), .probe_slot_o({name}_probe_slot),\n    \
             .host_we_i(host_we_i & (host_map_i == 8'd{m}) & (host_addr_i[31:30] != 2'b00)),\n    \
             .host_valid_i(host_addr_i[31]), .host_addr_i(host_addr_i[{}:0]), .host_wdata_i(host_wdata_i),\n    \
             .host_wmask_i(host_wmask_i), .host_rdata_o({name}_key_rdata)\n  );",
            aw - 1,
            lpm = is_lpm(spec) as u8,
            lru = is_lru(spec) as u8,
            percpu = super::lru::is_lru_percpu(spec) as u8,
            // A per-CPU LRU's values are one copy per CPU in the kernel; the block keeps one (a one-CPU pipeline).
            cpus = if super::lru::sized_by_cpus(spec) {
                format!(", .CPUS({})", super::POSSIBLE_CPUS)
            } else {
                String::new()
            },
        );
    }
}

impl Gen<'_> {
    /// The hashed buckets of HASH map `m` (`ehdl_hash_bkt`, see [`key_buckets`]): its ports with their keys a cycle
    /// early, its probes likewise, and its host port (key words and valid bits as for a CAM, read one cycle late).
    fn bucket_block(&mut self, s: &mut String, m: u32) -> Result<(), VerilogError> {
        let spec = &self.maps[m as usize];
        let layout = key_buckets(spec).expect("a bucketed map");
        let (kb, entries, slots) = (spec.key_size, spec.max_entries, layout.slots());
        let map_name = spec.name.clone();
        let sw = slot_width(slots);
        let ks: u64 = [8u64, 16, 32, 64]
            .into_iter()
            .find(|&k| k >= kb as u64)
            .unwrap_or(64);
        let aw = 64 - (slots as u64 * ks).leading_zeros() + 1;
        if self.flush_stage.is_some() {
            return Err(VerilogError::Map {
                program: self.p.summary.program.clone(),
                map: map_name,
                why: "hashed buckets with flush and replay: a replay reloads boundaries, which the keys presented \
                      a cycle early do not follow"
                    .into(),
            });
        }
        let mut ports = self.hash_ports.remove(&m).unwrap_or_default();
        ports.sort_by_key(|p| (std::cmp::Reverse(p.stage), p.insn));
        let np = ports.len().max(1);
        let name = format!("map{m}");
        for (sig, w) in [
            ("kind", np),
            ("en", np),
            ("key", np * 8 * kb as usize),
            ("rkey", np * 8 * kb as usize),
            ("flags", 2 * np),
            ("hit", np),
            ("slot", np * sw as usize),
            ("err", 8 * np),
            ("del", np),
        ] {
            let _ = writeln!(self.decls, "  logic [{}:0] {name}_cam_{sig};", w - 1);
        }
        let _ = writeln!(
            self.decls,
            "  logic [63:0] {name}_key_rdata;\n  logic {name}_overflow;\n  logic {name}_key_drop;"
        );
        let mut early = Vec::new();
        for p in &ports {
            match self.early_of(&p.key) {
                Some(e) => early.push(e),
                None => {
                    return Err(VerilogError::Map {
                        program: self.p.summary.program.clone(),
                        map: map_name,
                        why: format!(
                            "a key ({}) that is not a function of the boundary registers",
                            p.key
                        ),
                    })
                }
            }
        }
        let join = |parts: Vec<String>, tie: String| -> String {
            if parts.is_empty() {
                tie
            } else {
                format!(
                    "{{{}}}",
                    parts.into_iter().rev().collect::<Vec<_>>().join(", ")
                )
            }
        };
        let each =
            |f: &dyn Fn(&HashPort) -> String| -> Vec<String> { ports.iter().map(f).collect() };
        let kind = join(each(&|p| format!("1'b{}", p.update as u8)), "1'b0".into());
        let del = join(each(&|p| format!("1'b{}", p.del as u8)), "1'b0".into());
        let en = join(each(&|p| p.en.clone()), "1'b0".into());
        let keys = join(each(&|p| p.key.clone()), format!("{}'d0", 8 * kb));
        let rkeys = join(early, format!("{}'d0", 8 * kb));
        let flags = join(each(&|p| format!("2'd{}", p.flags)), "2'd0".into());
        let writes: String = if ports.is_empty() {
            "0".into()
        } else {
            ports
                .iter()
                .rev()
                .map(|p| if p.update && !p.del { '1' } else { '0' })
                .collect()
        };
        for e in [&en, &keys, &rkeys] {
            self.read(e);
        }
        let _ = writeln!(
            s,
            "\n  // Map {m} ({map_name}): HASH keys in hashed buckets in block RAM ({} buckets of {} ways and {} stash \
             slots for {entries} entries; keys a cycle early).\n  \
             assign {name}_cam_kind = {kind};\n  assign {name}_cam_del = {del};\n  assign {name}_cam_en = {en};\n  \
             assign {name}_cam_key = {keys};\n  assign {name}_cam_rkey = {rkeys};\n  assign {name}_cam_flags = {flags};",
            layout.buckets, layout.ways, layout.stash
        );
        for (i, p) in ports.iter().enumerate() {
            let _ = writeln!(
                s,
                "  assign {} = {name}_cam_hit[{i}];\n  assign {} = {name}_cam_slot[{} +: {sw}];\n  assign {} = {name}_cam_err[{} +: 8];",
                p.hit,
                p.slot,
                sw as usize * i,
                p.err,
                8 * i
            );
        }
        if ports.is_empty() {
            for sig in ["hit", "slot", "err"] {
                self.unused_ports.push(format!("{name}_cam_{sig}"));
            }
        }
        let nq = self.bucket_probes(s, m, sw, kb)?;
        let _ = writeln!(
            s,
            "  ehdl_hash_bkt #(.ENTRIES({entries}), .KEY_BYTES({kb}), .NP({np}), .BUCKETS({}), .WAYS({}), .STASH({}), \
             .SW({sw}), .AW({aw}), .WRITES({np}'b{writes}), .NQ({nq})) u_{name}_keys (\n    \
             .clk_i(clk_i), .rst_ni(rst_ni), .kind_i({name}_cam_kind), .del_i({name}_cam_del), .en_i({name}_cam_en),\n    \
             .rkey_i({name}_cam_rkey), .key_i({name}_cam_key), .flags_i({name}_cam_flags), .hit_o({name}_cam_hit),\n    \
             .slot_o({name}_cam_slot), .err_o({name}_cam_err), .rprobe_key_i({name}_probe_rkey),\n    \
             .probe_key_i({name}_probe_key), .probe_hit_o({name}_probe_hit), .probe_slot_o({name}_probe_slot),\n    \
             .overflow_o({name}_overflow),\n    \
             .host_we_i(host_we_i & (host_map_i == 8'd{m}) & (host_addr_i[31:30] != 2'b00)),\n    \
             .host_valid_i(host_addr_i[31]), .host_addr_i(host_addr_i[{}:0]), .host_wdata_i(host_wdata_i),\n    \
             .host_wmask_i(host_wmask_i), .host_rdata_o({name}_key_rdata), .host_drop_o({name}_key_drop)\n  );",
            layout.buckets,
            layout.ways,
            layout.stash,
            aw - 1,
        );
        // An overflow (bucket and stash full below max_entries) makes that insert fail with E2BIG where the kernel
        // would succeed; the differential tests would show it. The host loads maps before traffic.
        self.unused_ports.push(format!("{name}_overflow"));
        self.unused_ports.push(format!("{name}_key_drop"));
        self.storage.push(super::mem::MapStorage {
            map: format!("{map_name} keys"),
            storage: super::mem::Storage::Bram,
            why: format!(
                "{entries} HASH entries, at least {BUCKET_MIN_ENTRIES}: {} buckets of {} ways and {} stash slots in \
                 block RAM instead of a CAM of registers",
                layout.buckets, layout.ways, layout.stash
            ),
            rams: ((np + nq + 1) * BUCKET_WAYS as usize * writes.matches('1').count().max(1)) as u32,
            ram_bytes: (np + nq + 1) as u64
                * writes.matches('1').count().max(1) as u64
                * (layout.buckets as u64 * layout.ways as u64)
                * kb as u64,
        });
        Ok(())
    }

    /// The probe ports of bucketed map `m` (the stall checks' slot compares, or one tied off), their keys also a
    /// cycle early; returns how many the block has.
    fn bucket_probes(
        &mut self,
        s: &mut String,
        m: u32,
        sw: u32,
        kb: u32,
    ) -> Result<usize, VerilogError> {
        let name = format!("map{m}");
        let map_name = self.maps[m as usize].name.clone();
        let probes: Vec<(String, String, String)> = self
            .probes
            .values()
            .filter(|q| q.map == m)
            .map(|q| (q.key.clone(), q.hit.clone(), q.slot.clone()))
            .collect();
        let nq = probes.len().max(1);
        let kw = nq * 8 * kb as usize;
        let _ = writeln!(
            self.decls,
            "  logic [{}:0] {name}_probe_key;\n  logic [{}:0] {name}_probe_rkey;\n  logic [{}:0] {name}_probe_hit;\n  \
             logic [{}:0] {name}_probe_slot;",
            kw - 1,
            kw - 1,
            nq - 1,
            nq * sw as usize - 1
        );
        if probes.is_empty() {
            let _ = writeln!(
                s,
                "  assign {name}_probe_key = '0;\n  assign {name}_probe_rkey = '0;"
            );
            self.unused_ports.push(format!("{name}_probe_hit"));
            self.unused_ports.push(format!("{name}_probe_slot"));
        } else {
            let mut rk = Vec::new();
            for q in probes.iter().rev() {
                let Some(e) = self.early_of(&q.0) else {
                    return Err(VerilogError::Map {
                        program: self.p.summary.program.clone(),
                        map: map_name,
                        why: format!(
                            "a probe key ({}) that is not a function of the boundary registers",
                            q.0
                        ),
                    });
                };
                rk.push(e);
            }
            let rk = rk.join(", ");
            self.read(&rk);
            let ks: Vec<&str> = probes.iter().rev().map(|q| q.0.as_str()).collect();
            let _ = writeln!(
                s,
                "  assign {name}_probe_key = {{{}}};\n  assign {name}_probe_rkey = {{{rk}}};",
                ks.join(", ")
            );
            for (q, (_, hit, slot)) in probes.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "  assign {hit} = {name}_probe_hit[{q}];\n  assign {slot} = {name}_probe_slot[{} +: {sw}];",
                    sw as usize * q
                );
            }
        }
        Ok(nq)
    }
}

/// One port of a HASH block's CAM: a lookup, or an update or delete (with its enable and flags), ordered like the
/// value ports; the wires that receive hit (found, or "write the value"), slot and errno. LRU updates and deletes
/// also have a request and a busy wire (see `verilog/lru.rs`).
pub(super) struct HashPort {
    pub(super) stage: u32,
    pub(super) insn: u32,
    pub(super) update: bool,
    pub(super) del: bool,
    pub(super) req: String,
    pub(super) busy: Option<String>,
    pub(super) en: String,
    pub(super) key: String,
    pub(super) flags: u8,
    pub(super) hit: String,
    pub(super) slot: String,
    pub(super) err: String,
}

/// Bits of a slot index of a map with `entries` entries.
pub(super) fn slot_width(entries: u32) -> u32 {
    (32 - entries.saturating_sub(1).leading_zeros()).max(1)
}
