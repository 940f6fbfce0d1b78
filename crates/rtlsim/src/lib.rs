//! Verilator and Yosys for hwxdp's hand-written RTL.
//!
//! [`build`] turns Verilog sources from the repository's `rtl/` tree and a C++ testbench into a simulation
//! executable, cached under the Cargo target directory by a hash of every input, so an unchanged model is built
//! once. [`lint`] runs `verilator --lint-only -Wall`, and [`synth`] checks that a top synthesizes with Yosys for
//! Xilinx UltraScale+; [`run_synthesis`] synthesizes the sources embedded in the binary ([`rtl_files`]) and counts
//! the resources. Nothing here prints; failures are [`RtlError`]s carrying the tools' first error lines.

mod build;
mod check;
pub mod ehdl;
mod embedded;
mod error;
mod hash;
pub mod hxdp;
mod synth;
mod tool;

pub use build::{build, BuildSpec, Model};
pub use check::lint;
pub use embedded::{rtl_files, scan, sources_of, RtlFile, RtlModule};
pub use error::RtlError;
pub use synth::{
    parse_stat_json, run_synthesis, synth, synth_with, Resources, Stat, SynthJob, SynthReport,
};
