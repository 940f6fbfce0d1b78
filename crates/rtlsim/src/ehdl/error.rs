//! Why a program's eHDL pipeline could not be generated, built or run.

use std::path::PathBuf;

use hwxdp_ehdl::verilog::VerilogError;
use hwxdp_ehdl::EhdlError;
use hwxdp_maps::MapError;

use crate::{RtlError, VcdError};

/// Why a program's eHDL pipeline could not be generated, built or run.
#[derive(Debug, thiserror::Error)]
pub enum EhdlRtlError {
    /// The object has no such program (or several and none was chosen).
    #[error("{0}")]
    Program(String),
    /// The front end could not turn the program into a pipeline.
    #[error(transparent)]
    Compile(#[from] EhdlError),
    /// The Verilog generator has no template for an instruction or no block for a map.
    #[error(transparent)]
    Verilog(#[from] VerilogError),
    /// A data width the simulation's testbench cannot drive.
    #[error("--data-width {0}: the eHDL simulation takes a multiple of 64 bits from 128 to 512")]
    DataWidth(u32),
    /// A primitive the generated module instantiates is not embedded in this binary.
    #[error(
        "rtl/ehdl/{0} is not embedded in this binary (rebuild hwxdp from a complete checkout)"
    )]
    Primitive(&'static str),
    /// Verilator could not build the module (or is missing), or a cache file could not be written.
    #[error(transparent)]
    Build(#[from] RtlError),
    /// The maps could not be created or filled as `bpf()` would.
    #[error(transparent)]
    Map(#[from] MapError),
    /// The simulation executable could not be started or talked to.
    #[error("cannot run the eHDL simulation {executable}: {source}")]
    Start {
        /// The executable.
        executable: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The simulation stopped with an error (its status and the first lines of its standard error).
    #[error("the eHDL simulation of {program} failed ({status}): {stderr}")]
    Failed {
        /// The program simulated.
        program: String,
        /// How the process ended.
        status: String,
        /// What it printed on standard error.
        stderr: String,
    },
    /// The simulation printed something the driver does not understand, or too few packets.
    #[error("the eHDL simulation of {program}: {why}")]
    Output {
        /// The program simulated.
        program: String,
        /// What is wrong.
        why: String,
    },
    /// A packet the pipeline cannot take.
    #[error("packet {index}: {why}")]
    Packet {
        /// The packet's position in the batch.
        index: usize,
        /// Why.
        why: String,
    },
    /// `run_packet` was given a packet other than the next one of the batch run beforehand.
    #[error("packet {index}: not the packet queued for the eHDL pipeline ({why})")]
    Queue {
        /// The packet's position.
        index: usize,
        /// What differs (or that nothing was queued).
        why: String,
    },
    /// The waveform cannot be recorded as asked.
    #[error(transparent)]
    Vcd(#[from] VcdError),
}
