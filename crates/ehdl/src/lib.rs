//! eHDL front end: an XDP program's bytecode to a pipeline IR that a Verilog generator can instantiate stage by stage
//! (the eHDL paper, sections 3 and 4).
//!
//! The passes, in order:
//!
//! 1. [`flatten()`]: bpf-to-bpf calls inlined and bounded loops unrolled, so that the program is one function whose
//!    jumps all go forward (laid out in reverse post-order).
//!    [`tailcall`]: given the object's programs ([`compile_object`]), the programs a `bpf_tail_call` may reach are
//!    appended and the call becomes a PROG_ARRAY slot read and a dispatch.
//! 2. [`lower`]: every instruction labelled with its memory region (from [`hwxdp_analysis::Regions`]), control flow
//!    turned into predicates (if-conversion), and instructions fused (constant addresses, bounds checks to length
//!    compares, three-operand ALU operations, dead address arithmetic removed).
//! 3. [`sched`]: operations placed in the earliest stage their register, memory, predicate and packet-frame
//!    dependences allow; every helper call gets a stage of its own; NOP stages where a frame has not arrived.
//! 4. [`prune`]: the live registers, stack bytes and predicates at every stage boundary.
//! 5. [`render`]: the pipeline as text, as Graphviz and as a JSON summary.
//! 6. [`verilog`]: the pipeline as one Verilog module instantiating the primitives of `rtl/ehdl/`.
//!
//! [`compile`] runs them all and returns a [`Pipeline`].

pub mod flatten;
pub mod ir;
pub mod lower;
pub mod model;
pub mod prune;
pub mod render;
pub mod sched;
pub mod tailcall;
pub mod verilog;

pub use flatten::{flatten, Flat};
pub use ir::{ArgConst, Label, Op, OpKind, Pipeline, PredDef, Stage, Summary};
pub use render::{dot, json_summary, text};

use hwxdp_analysis::AnalysisError;
use hwxdp_object::{MapSpec, ProgramSpec};
use thiserror::Error;

/// Options of the front end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Data width of the packet bus in bits (a multiple of 8); the packet arrives one frame of this width per cycle.
    pub data_width: u32,
    /// Most instructions the flattened (inlined and unrolled) program may have.
    pub max_insns: usize,
    /// State pruning (section 4.3): every boundary carries only its live registers and stack bytes. Off, every
    /// boundary carries r0-r9 and all 512 stack bytes, the paper's baseline for its resource comparison (r10 is the
    /// stack's constant base either way).
    pub prune: bool,
    /// How the Verilog keeps the map accesses of packets in flight in order: stall checks or flush and replay.
    pub hazards: verilog::Hazards,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            data_width: 512,
            max_insns: 16384,
            prune: true,
            hazards: verilog::Hazards::Stall,
        }
    }
}

/// Why a program cannot become a pipeline.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EhdlError {
    /// The analysis rejected the program.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    /// A loop whose trip count the front end cannot bound.
    #[error("program {program}: instruction {insn}: loop back to instruction {header} has no bound the analysis can prove ({why})")]
    UnboundedLoop {
        /// The program's name.
        program: String,
        /// The jump closing the loop (slot index in the original program).
        insn: usize,
        /// The loop's first instruction (slot index in the original program).
        header: usize,
        /// What is missing.
        why: String,
    },
    /// A loop that is not a natural loop (entered other than through its header).
    #[error("program {program}: instruction {insn}: irreducible loop")]
    Irreducible {
        /// The program's name.
        program: String,
        /// The jump closing the loop (slot index in the original program).
        insn: usize,
    },
    /// A bpf-to-bpf call the inliner cannot handle.
    #[error("program {program}: instruction {insn}: cannot inline the call to {callee}: {why}")]
    Inline {
        /// The program's name.
        program: String,
        /// The call (slot index in the original program).
        insn: usize,
        /// The callee's name.
        callee: String,
        /// What prevents inlining.
        why: String,
    },
    /// Unrolling or inlining made the program too large.
    #[error("program {program}: {insns} instructions after inlining and unrolling, more than the limit of {limit}")]
    TooLarge {
        /// The program's name.
        program: String,
        /// Instructions so far.
        insns: usize,
        /// The limit.
        limit: usize,
    },
    /// A `bpf_tail_call` the front end cannot inline.
    #[error("program {program}: instruction {insn}: cannot inline the tail call: {why}")]
    TailCall {
        /// The program's name.
        program: String,
        /// The call (slot index in the original program).
        insn: usize,
        /// What prevents inlining.
        why: String,
    },
    /// The data width is not a positive multiple of 8 bits.
    #[error("data width {0} bits is not a positive multiple of 8")]
    DataWidth(u32),
}

/// Compiles one program of an object (its maps give key and value sizes) into a pipeline. A program with tail calls
/// needs the object's other programs: see [`compile_object`].
pub fn compile(
    spec: &ProgramSpec,
    maps: &[MapSpec],
    options: &Options,
) -> Result<Pipeline, EhdlError> {
    compile_object(spec, &[], maps, options)
}

/// Compiles one program of an object whose program list is `programs` (the indices PROG_ARRAY values name): the
/// programs its tail calls may reach are inlined ([`tailcall`]).
pub fn compile_object(
    spec: &ProgramSpec,
    programs: &[ProgramSpec],
    maps: &[MapSpec],
    options: &Options,
) -> Result<Pipeline, EhdlError> {
    if options.data_width == 0 || options.data_width & 7 != 0 {
        return Err(EhdlError::DataWidth(options.data_width));
    }
    let flat = flatten(spec, maps, options.max_insns)?;
    let flat = tailcall::inline(spec, flat, programs, maps, options.max_insns)?;
    let lowered = lower::lower(&flat, maps, options.data_width / 8)?;
    let scheduled = sched::schedule(&lowered);
    // Debug builds check the schedule pair by pair (quadratic: only up to 2,048 ops, so large programs stay quick).
    if cfg!(debug_assertions) && lowered.ops.len() <= 2048 {
        assert_eq!(
            sched::violations(&lowered, &scheduled),
            Vec::<String>::new()
        );
    }
    Ok(prune::finish(spec, &flat, lowered, scheduled, options))
}
