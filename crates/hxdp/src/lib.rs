//! hXDP on hwxdp: the extended eBPF ISA ([`isa`]), the VLIW compiler ([`compile`]: passes, list scheduling, layout)
//! and a cycle-level model of the Sephirot core ([`core`]) that executes the compiled image.

pub mod compile;
pub mod core;
pub mod ir;
pub mod isa;
pub mod motion;
pub mod passes;
pub mod ports;
pub mod rename;
pub mod rows;
pub mod sched;
pub mod speculate;
pub mod timing;

pub use compile::{
    compile_object, compile_object_with_entries, Compiled, EntryPoint, Options, Pass, ProgramReport,
};
pub use core::{CoreStats, HxdpCore};
pub use isa::{Bundle, Image, IsaError, MapConfig, Op};
pub use ports::{
    check_divider, check_value_ports, DividerError, PortConflict, PortError, ValuePort,
};

use thiserror::Error;

/// Why a program cannot be compiled for hXDP or its image cannot be run.
#[derive(Debug, Error)]
pub enum CompileError {
    /// The analysis refused the program.
    #[error("{source}")]
    Analysis {
        /// What the analysis found.
        #[from]
        source: hwxdp_analysis::AnalysisError,
    },
    /// An instruction hXDP does not implement.
    #[error("program {program}: instruction {insn}: {what} not supported by hxdp")]
    Unsupported {
        /// The program.
        program: String,
        /// The instruction's slot index (as `hwxdp disasm` and the kernel number it: a `lddw` takes two).
        insn: usize,
        /// What it is.
        what: String,
    },
    /// A lane count out of range.
    #[error("{lanes} lanes: hxdp bundles have 1 to 8")]
    Lanes {
        /// The lanes asked for.
        lanes: usize,
    },
    /// More bundles than a 16-bit branch target reaches.
    #[error("{bundles} bundles: more than a 16-bit bundle index reaches")]
    TooLong {
        /// The bundle count.
        bundles: usize,
    },
    /// More blocks that each take a bundle of their own than a 16-bit branch target reaches, found before the
    /// passes run.
    #[error(
        "program {program}: at least {blocks} bundles (blocks ending in a conditional jump that two ways join, each \
         a bundle of its own): more than the 65535 a 16-bit bundle index reaches"
    )]
    TooManyJoins {
        /// The program.
        program: String,
        /// The blocks counted, a lower bound on the bundles.
        blocks: usize,
    },
    /// An entry slot that is not an instruction of the program's own code.
    #[error("program {program}: slot {slot} is not an instruction of the program's own code: no entry point there")]
    Entry {
        /// The program.
        program: String,
        /// The slot asked for.
        slot: u32,
    },
    /// The image cannot be decoded.
    #[error("{0}")]
    Isa(#[from] IsaError),
    /// The image does not match the object it is run with.
    #[error("image: {0}")]
    Mismatch(String),
    /// The reference machine refused the object.
    #[error("{0}")]
    Load(#[from] hwxdp_xdp::LoadError),
}
