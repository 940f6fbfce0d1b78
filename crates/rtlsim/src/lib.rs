//! Verilator and Yosys for hwxdp's hand-written RTL.
//!
//! [`build`] turns Verilog sources from the repository's `rtl/` tree and a C++ testbench into a simulation
//! executable, cached under the Cargo target directory by a hash of every input, so an unchanged model is built
//! once. [`lint`] runs `verilator --lint-only -Wall`, and [`synth`] checks that a top synthesizes with Yosys for
//! Xilinx UltraScale+. Nothing here prints; failures are [`RtlError`]s carrying the tools' first error lines.

mod build;
mod check;
mod error;
mod hash;
mod tool;

pub use build::{build, BuildSpec, Model};
pub use check::{lint, synth, synth_with};
pub use error::RtlError;
