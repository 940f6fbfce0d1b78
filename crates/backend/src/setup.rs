//! What a backend is created from: the object, the chosen program, the run configuration and its own options.

use hwxdp_object::ObjectSpec;
use hwxdp_xdp::Config;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A waveform request (`--vcd`, `--vcd-packets`).
#[derive(Clone, Debug, PartialEq)]
pub struct Vcd {
    /// The waveform file.
    pub path: PathBuf,
    /// The packets recorded, counted from 0 in the order they run.
    pub packets: Range<u64>,
    /// The clock the waveform's time follows, in MHz.
    pub clock_mhz: f64,
}

/// The backends' own options. Each [`crate::Entry`] names the ones it takes ([`crate::Entry::options`]), so a
/// command can refuse an option no chosen backend would use.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// `--lanes`: hXDP lanes per bundle.
    pub lanes: usize,
    /// `--disable`: hXDP compiler passes switched off, by name.
    pub disable: Vec<String>,
    /// `--data-width`: the eHDL pipeline's bus width in bits.
    pub data_width: Option<u32>,
    /// `--hazards flush`: the eHDL pipeline's flush evaluation instead of stall checks.
    pub hazards: Option<hwxdp_ehdl::verilog::Hazards>,
    /// `--vcd`.
    pub vcd: Option<Vcd>,
    /// Ring buffers are read once after the trace instead of after every packet.
    pub rings_after_trace: bool,
    /// `--ports`, `--engines-per-port`, `--swap-at`: the eBPFlow NIC's shape and its program swaps.
    pub ebpflow: crate::ebpflow::NicOptions,
    /// `--cores`: hXDP cores behind one Warp Engine (`--backend warp`).
    pub warp_cores: usize,
    /// `--warp-profile`: frames the Warp Optimizer fits its rules to (`warp`, `warp-interp`); none: unprofiled.
    pub warp_profile: Vec<Vec<u8>>,
    /// `--warp-param`: the engine's parameters (`warp`, `warp-interp`, `warp-rtl`); `None`: the backend's default.
    pub warp_params: Option<hwxdp_warp::Params>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lanes: 4,
            disable: Vec::new(),
            data_width: None,
            hazards: None,
            vcd: None,
            rings_after_trace: false,
            ebpflow: crate::ebpflow::NicOptions::default(),
            warp_cores: 1,
            warp_profile: Vec::new(),
            warp_params: None,
        }
    }
}

/// Everything a backend is created from.
pub struct Setup<'a> {
    /// The object's path, for messages.
    pub object: &'a Path,
    /// The object's ELF bytes (the kernel loads them).
    pub elf: &'a [u8],
    /// The parsed object.
    pub spec: &'a ObjectSpec,
    /// The XDP program to run, by function name.
    pub program: &'a str,
    /// How programs run: CPUs, clock, seed, routes, instruction traces.
    pub config: &'a Config,
    /// Interfaces (ifindex, receive queues) packets arrive on and redirects and routes name: the kernel needs them to
    /// exist.
    pub devices: &'a [(u32, u32)],
    /// The backends' own options.
    pub options: &'a Options,
    /// Told one line before long set-up work (a Verilator build that is not cached yet).
    pub notify: Option<fn(&str)>,
}

impl Setup<'_> {
    /// The chosen program's index in the object.
    pub fn entry(&self) -> usize {
        self.spec
            .programs
            .iter()
            .position(|p| p.name == self.program)
            .unwrap_or(0)
    }
}
