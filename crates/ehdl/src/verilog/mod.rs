//! The eHDL Verilog back end: one module per program, instantiating the template primitives of `rtl/ehdl/` stage by
//! stage from the pipeline IR (the eHDL paper, section 4).
//!
//! The generated module takes packets on an AXI4-Stream slave port and gives them back, with their verdict in
//! `m_axis_tuser_o`, on an AXI4-Stream master port, one frame of `DataWidth` bits per beat and one new packet per clock:
//!
//! - **Frames.** A chain of `ehdl_frame_stage` registers `f0 .. fS` (S stages) moves every frame one register per
//!   clock. The packet's state (its *head*) enters boundary register `b0` with frame 0, so when the head is in stage k
//!   frame f is in frame register k - f: an op reading frame f taps that register (the bypass of section 4.2), and a
//!   store merges its bytes into the frame as it moves on, guarded by the frame index so that a short packet's
//!   missing frame (a later packet's frame sits there) is never written.
//! - **Stage registers.** Boundary k + 1 holds only what the IR says is live there: registers, stack bytes,
//!   predicates, condition outputs, the verdict once an exit may have run, and the packet length while a length check
//!   is still ahead.
//! - **Predication.** Every op's template has an enable, its predicate; a disabled op passes the old value on, so the
//!   writes of one stage to one register chain in program order (the later op wins, rule 1 of docs/ehdl.md).
//! - **Flow control.** The pipeline advances (`adv`) unless the two-entry output FIFO (`ehdl_axis_out`) is full or
//!   a packet's next beat has not arrived (frames of one packet must stay adjacent); between packets a missing beat
//!   becomes a bubble. With stall checks (see `verilog/maps.rs`) each stage register has its own advance (`go`).
//! - **Context.** `data` and `data_meta` are a constant; `data_end`, `ingress_ifindex` and `rx_queue_index` come from
//!   the sideband of the packet's first beat (`s_axis_tuser_i`: length in bits 15:0, ingress_ifindex in 47:16,
//!   rx_queue_index in 79:48) and are carried to the last stage that loads them. `bpf_ktime_get_ns` reads the
//!   packet's timestamp (bits 143:80, valid when bit 144 is set) or else the module's nanosecond counter.
//! - **Maps.** `bpf_map_lookup_elem` is an `ehdl_array_lookup` helper block (a value pointer `(map + 1) << 32 |
//!   byte`, or NULL), fed by a CAM (`ehdl_hash_map`) for HASH and LPM_TRIE maps; `bpf_map_update_elem` on a HASH map
//!   is a CAM update port. Each map is one shared `ehdl_map_mem` value block whose ports are the program's value
//!   loads, stores and atomics (add/or/and/xor, fetching or not, xchg), plus a host port (`host_*`) for userspace
//!   reads and writes while traffic runs. An access the region analysis could not place is taken as a value of any
//!   map with a block, selected at run time by the pointer's high half (none: the packet is aborted). See `verilog/maps.rs`
//!   for the order of accesses between packets and the stall checks that keep it where packets could reorder.
//! - **Redirects.** `bpf_redirect` and `bpf_redirect_map` (DEVMAP) set the packet's target, given out on
//!   `m_axis_tdest_o` beside the verdict.
//!
//! Not generated yet (each is a clear [`VerilogError`] naming the instruction): other helpers and map types,
//! compare-and-exchange, stack accesses at run-time offsets and metadata accesses.

mod access;
mod adjust;
mod alu;
mod boundary;
mod control;
mod csum;
mod derived;
mod fib;
mod flowkey;
mod flush;
mod head;
mod helpers;
mod load;
mod lru;
mod map_calls;
mod maps;
mod mem;
mod ports;
mod replace;
mod ringbuf;
mod stage;
mod stalls;
mod store;
mod tailcall;
mod xdp_bytes;

pub use flush::Hazards;
pub use maps::{
    block_maps, key_buckets, key_slots, KeyBuckets, BUCKET_MIN_ENTRIES, BUCKET_STASH, BUCKET_WAYS,
};

pub use fib::{
    DEVICES as FIB_DEVICES, FIB_BLOCK, NEIGHBORS as FIB_NEIGHBORS, ROUTES as FIB_ROUTES,
};

use crate::ir::Pipeline;
use hwxdp_object::MapSpec;
use std::fmt::Write as _;
use thiserror::Error;

/// The shared blocks (under `rtl/common/`) a generated module may instantiate: the RAMs of `ehdl_map_ram` and
/// `ehdl_hash_bkt`, and the latter's key hash.
pub const COMMON: &[&str] = &["hash32.sv", "ram_sdp.sv", "ram_tdp.sv"];

/// The primitive files (under `rtl/ehdl/`) a generated module instantiates; a build needs all of them and the
/// shared blocks of `rtl/common/` ([`COMMON`]).
pub const PRIMITIVES: &[&str] = &[
    "ehdl_alu.sv",
    "ehdl_array_lookup.sv",
    "ehdl_axis_out.sv",
    "ehdl_cam_bank.sv",
    "ehdl_cond.sv",
    "ehdl_exit.sv",
    "ehdl_fib.sv",
    "ehdl_frame_stage.sv",
    "ehdl_hash_map.sv",
    "ehdl_hash_bkt.sv",
    "ehdl_head_realign.sv",
    "ehdl_lru.sv",
    "ehdl_map_bank.sv",
    "ehdl_map_mem.sv",
    "ehdl_map_ram.sv",
    "ehdl_pkt_len.sv",
    "ehdl_pkt_load.sv",
    "ehdl_pkt_load_dyn.sv",
    "ehdl_pkt_store.sv",
    "ehdl_pkt_store_dyn.sv",
    "ehdl_replay.sv",
    "ehdl_ringbuf.sv",
    "ehdl_stack_load.sv",
    "ehdl_stack_store.sv",
];

/// The top parameter of a module with LRU blocks: the possible CPUs their eviction batches are sized for (the
/// kernel's `target_free`), 1 unless set.
pub const POSSIBLE_CPUS: &str = "PossibleCpus";

/// Frame index width: frames of one packet are numbered up to 255 (saturating).
const FIDX_BITS: u32 = 8;
/// Packet length width.
const LEN_BITS: u32 = 16;
/// The value of `data` (and `data_meta`) as the program sees it: any constant works, since programs only compare
/// and offset packet pointers; the reference machine uses its own.
const DATA_BASE: u64 = 0x100;

/// Why a pipeline has no Verilog.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum VerilogError {
    /// An operation the generator has no template for yet.
    #[error("program {program}: instruction {origin} ({text}): {what} is not supported by the eHDL Verilog generator yet")]
    Unsupported {
        /// The program's name.
        program: String,
        /// The instruction in the original program, by slot index (as `hwxdp disasm` numbers it).
        origin: u32,
        /// The op as the pipeline diagram prints it.
        text: String,
        /// What is missing.
        what: String,
    },
    /// A map the generator cannot build a block for.
    #[error("program {program}: map {map}: {why}")]
    Map {
        /// The program's name.
        program: String,
        /// The map's name.
        map: String,
        /// What does not fit.
        why: String,
    },
    /// A data width the frame templates cannot take.
    #[error("data width {0} bits: the Verilog generator needs a multiple of 64 bits")]
    DataWidth(u32),
    /// A module name that is not a Verilog identifier.
    #[error("module name {0:?} is not a Verilog identifier")]
    ModuleName(String),
}

/// The module name for a program: `ehdl_` and the name with anything but letters, digits and `_` replaced by `_`.
pub fn module_name(program: &str) -> String {
    let clean: String = program
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("ehdl_{clean}")
}

pub use mem::{MapStorage, Storage, REG_BYTES};

/// Figures of a generated module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figures {
    /// Stall checks between map accesses that packets could reorder (0: never stalls, one packet per clock).
    pub stall_checks: usize,
    /// With `Hazards::Flush`: the checks flush evaluation blocks watch instead.
    pub flush_checks: usize,
    /// Pipeline stages.
    pub stages: usize,
    /// Cycles from a packet's first beat accepted to its first beat offered on the output.
    pub latency: usize,
    /// Flip-flops of the stage registers (program state, predicates, conditions, verdicts, lengths).
    pub state_flops: u64,
    /// Flip-flops of the frame chain (data, keep, last, frame index and valid of every frame register).
    pub frame_flops: u64,
    /// The largest distance `L` in stages between the two accesses of a stall check (0: none): the eHDL paper's
    /// read-to-write distance of appendix A. A packet that follows one of its flow back to back waits up to `L - 1`
    /// cycles.
    pub hazard_distance: u32,
    /// The earliest stage holding a stall check's first access: what the paper's pipeline would flush and reload
    /// on a hazard is this many stages plus 4 cycles (its `K`).
    pub hazard_stage: u32,
    /// With flush and replay: the boundary of the elastic buffer a flush replays from, past the last effect beyond
    /// the packet that precedes the flush stage (0: none, the input buffer replays).
    pub elastic_boundary: u32,
    /// Where each map block's values live (registers or block RAM) and why, in block order.
    pub maps: Vec<MapStorage>,
}

/// Generates module `module` for pipeline `p` of a program whose object has `maps`, with stall checks; returns the
/// Verilog text and its figures.
pub fn generate(
    p: &Pipeline,
    maps: &[MapSpec],
    module: &str,
) -> Result<(String, Figures), VerilogError> {
    generate_with(p, maps, module, Hazards::Stall)
}

/// [`generate`] with the hazard handling `hazards` (stall checks, or flush and replay).
pub fn generate_with(
    p: &Pipeline,
    maps: &[MapSpec],
    module: &str,
    hazards: Hazards,
) -> Result<(String, Figures), VerilogError> {
    let dw = p.summary.data_width;
    if dw == 0 || !dw.is_multiple_of(64) {
        return Err(VerilogError::DataWidth(dw));
    }
    let ident = module
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && module
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(VerilogError::ModuleName(module.to_string()));
    }
    let arrays = maps::block_maps(p, maps);
    replace::check(p, maps)?;
    let checks = maps::check(p, maps, &arrays)?;
    let (stalls, flushes) = match hazards {
        Hazards::Stall => (checks, None),
        Hazards::Flush => (
            Vec::new(),
            flush::plan(p, maps, checks, head::moves_head(p))?,
        ),
    };
    let mut g = stage::Gen::new(p, maps, arrays, stalls);
    if let Some(plan) = flushes {
        g.flushes = plan.checks;
        g.flush_stage = Some(plan.late);
        g.flush_base = plan.base;
    }
    let body = g.stages()?;
    let n = p.stages.len();
    let frame_flops = (n as u64 + 1) * (dw as u64 + dw as u64 / 8 + 2 + FIDX_BITS as u64);
    // LRU operations' pseudo checks (early = late) hold the pipeline through the block's busy signal instead.
    let real = g.stalls.iter().chain(&g.flushes).filter(|s| s.l > s.e);
    let figures = Figures {
        flush_checks: g.flushes.len(),
        stall_checks: real.clone().count() - g.flushes.len(),
        stages: n,
        // The input buffer of flush and replay adds a cycle (an elastic buffer passes beats straight through).
        latency: n + 2 + usize::from(g.flush_stage.is_some() && g.elastic().is_none()),
        elastic_boundary: g.elastic().unwrap_or(0),
        state_flops: g.state_flops,
        frame_flops,
        hazard_distance: real.clone().map(|s| s.l - s.e).max().unwrap_or(0),
        hazard_stage: real.map(|s| s.e).min().unwrap_or(0),
        maps: g.storage.clone(),
    };
    Ok((
        header(p, maps, module, &figures) + &body + "\nendmodule\n",
        figures,
    ))
}

fn header(p: &Pipeline, maps: &[MapSpec], module: &str, f: &Figures) -> String {
    let lru = block_maps(p, maps)
        .iter()
        .any(|&m| maps.get(m as usize).is_some_and(lru::sized_by_cpus));
    let dw = p.summary.data_width;
    let ktime = p.ops.iter().any(|o| {
        matches!(
            o.kind,
            crate::ir::OpKind::Helper {
                id: helpers::KTIME_GET_NS,
                ..
            }
        )
    });
    let mut s = String::new();
    let _ = write!(
        s,
        "`default_nettype none\n\
         // eHDL pipeline of XDP program {prog}, generated by hwxdp (crates/ehdl/src/verilog) from its pipeline IR.\n\
         //\n\
         // {stages} stages ({nop} NOP), {ops} ops, one packet per clock{stall}; latency {lat} cycles from a packet's first\n\
         // beat in to its first beat out. Stage registers: {sf} flip-flops of live state; frame chain: {ff}.\n\
         // Packets in on s_axis (tkeep contiguous from byte 0, the frames of one packet back to back; tuser of the\n\
         // first beat {{time_valid, time_ns[63:0], rx_queue_index, ingress_ifindex, length[15:0]}}), out on m_axis\n\
         // with the XDP verdict on\n\
         // m_axis_tuser_o for every beat. host_*: read (one cycle after the address) and write 8 bytes at a byte address\n\
         // of a map's values. Needs the primitives in rtl/ehdl/.\n\
         module {module} {params}(\n\
         \x20 input  logic           clk_i,\n\
         \x20 input  logic           rst_ni,\n\
         \x20 input  logic [{dm}:0]   s_axis_tdata_i,\n\
         \x20 input  logic [{km}:0]    s_axis_tkeep_i,\n\
         \x20 input  logic           s_axis_tvalid_i,\n\
         \x20 input  logic           s_axis_tlast_i,\n\
         \x20 input  logic [144:0]   s_axis_tuser_i,\n\
         \x20 output logic           s_axis_tready_o,\n\
         \x20 output logic [{dm}:0]   m_axis_tdata_o,\n\
         \x20 output logic [{km}:0]    m_axis_tkeep_o,\n\
         \x20 output logic           m_axis_tvalid_o,\n\
         \x20 output logic           m_axis_tlast_o,\n\
         \x20 output logic [31:0]    m_axis_tuser_o,\n\
         \x20 output logic [41:0]    m_axis_tdest_o,\n\
         \x20 input  logic           m_axis_tready_i,\n\
         \x20 input  logic [7:0]     host_map_i,\n\
         \x20 input  logic [31:0]    host_addr_i,\n\
         \x20 input  logic [63:0]    host_wdata_i,\n\
         \x20 input  logic [7:0]     host_wmask_i,\n\
         \x20 input  logic           host_we_i,\n\
         \x20 output logic [63:0]    host_rdata_o,\n\
         \x20 output logic           flush_o\n\
         );\n\n\
         \x20 localparam integer DataWidth = {dw};\n\
         \x20 localparam integer FrameIdxBits = {fw};\n",
        prog = p.summary.program,
        stall = if f.flush_checks > 0 {
            format!(
                " unless a flush evaluation block ({}) drops the packets younger than a writer, which the input buffer\n\
                 // (ehdl_replay) feeds again; flush_o marks the cycles it does",
                f.flush_checks
            )
        } else if f.stall_checks == 0 {
            String::new()
        } else {
            format!(" unless a stall check ({}) holds", f.stall_checks)
        },
        stages = f.stages,
        nop = p.summary.nop_stages,
        ops = p.summary.ops,
        lat = f.latency,
        sf = f.state_flops,
        ff = f.frame_flops,
        dm = dw - 1,
        km = dw / 8 - 1,
        fw = FIDX_BITS,
        params = {
            let mut ps = Vec::new();
            if ktime {
                ps.push("  // Nanoseconds per clock of the counter bpf_ktime_get_ns reads (4: 250 MHz).\n  parameter [63:0] NsPerCycle = 64'd4".to_string());
            }
            if lru {
                ps.push(format!("  // Possible CPUs the LRU maps' eviction batches are sized for, as the kernel's.\n  parameter integer {POSSIBLE_CPUS} = 1"));
            }
            if ps.is_empty() {
                String::new()
            } else {
                format!("#(\n{}\n) ", ps.join(",\n"))
            }
        },
    );
    let len_checks = p
        .ops
        .iter()
        .any(|o| matches!(o.kind, crate::ir::OpKind::LenCheck { meta: false, .. }));
    if len_checks {
        let _ = writeln!(s, "  localparam integer LenBits = {LEN_BITS};");
    }
    s
}
