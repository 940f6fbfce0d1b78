//! Verilator and Yosys for hwxdp's hand-written RTL.
//!
//! [`build`] turns Verilog sources (from a directory, or embedded in the binary) and a C++ testbench into a
//! simulation executable, cached by a hash of every input, so an unchanged model is built once. The backends
//! ([`hxdp::HxdpRtl`], [`ehdl::EhdlRtl`]) and the eBPFlow engine ([`ebpflow::EbpflowRtl`]) build from the sources
//! embedded in the binary into the user's cache ([`cache_dir`]); [`ENVIRONMENT`] lists the variables that change
//! where and how.
//! [`lint`] runs `verilator --lint-only -Wall`, and [`synth`] checks that a top synthesizes with Yosys for Xilinx
//! UltraScale+; [`run_synthesis`] synthesizes the sources embedded in the binary ([`rtl_files`]) and counts the
//! resources. Nothing here prints; failures are [`RtlError`]s carrying the tools' first error lines.

mod build;
mod check;
pub mod ebpflow;
pub mod ebpflow_nic;
pub mod ehdl;
mod embedded;
mod env;
mod error;
mod hash;
pub mod hxdp;
mod line_harness;
mod synth;
mod tool;
mod unit;
mod vcd;
pub mod warp;
pub mod warp_hxdp;

pub use build::{build, BuildSpec, Model};
pub use check::lint;
pub use embedded::{
    in_dir, rtl_files, rtl_waivers, scan, sources_of, unit_owns, RtlFile, RtlModule, COMMON,
};
pub use env::{cache_dir, ENVIRONMENT};
pub use error::RtlError;
pub use synth::{
    device, parse_ltp, parse_stat_json, run_synthesis, run_synthesis_with, synth, synth_with,
    verdicts, Delays, Device, Flow, LogicPath, Resources, Share, Stat, SynthJob, SynthReport,
    DELAYS, DEVICES,
};
pub use vcd::{parse_packet_range, VcdError, VcdRequest};

/// What the unit tests of several modules share.
#[cfg(test)]
pub(crate) mod testing {
    /// A stand-in Verilator in a fresh directory `name`: it answers `--version` and fails every build.
    pub(crate) fn fake_verilator(name: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        let path = dir.join("verilator");
        std::fs::write(
            &path,
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Verilator 0.0 fake'; exit 0; fi\n\
             echo '%Error: a fake verilator builds nothing' >&2\nexit 1\n",
        )
        .expect("write the fake");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }
}
