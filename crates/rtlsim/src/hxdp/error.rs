//! Why the hXDP module could not be built, loaded or run.

use std::path::PathBuf;

use hwxdp_maps::MapError;

use super::ParseError;
use crate::{RtlError, VcdError};

/// Why the hXDP module could not be built, loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum HxdpRtlError {
    /// Verilator could not build the module (or is missing).
    #[error(transparent)]
    Build(#[from] RtlError),
    /// A source file the module needs is missing.
    #[error("{path} is missing: the hXDP module needs it")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The image needs more of something than the module is built with.
    #[error(
        "program too big for the hardware: it needs {need} {what}, the hXDP module is built with {param} = {have}"
    )]
    TooBig {
        /// The `hxdp.sv` parameter.
        param: &'static str,
        /// What it counts.
        what: &'static str,
        /// What the image needs.
        need: u64,
        /// What the module has.
        have: u64,
    },
    /// The image does not belong to the object, or the module cannot run it.
    #[error("image: {0}")]
    Image(String),
    /// The image has a bundle with two map-value loads or two stores: the maps module has one port of each.
    #[error(transparent)]
    Ports(#[from] hwxdp_hxdp::PortError),
    /// The image puts two divisions in one bundle: the core has one divider.
    #[error(transparent)]
    Divider(#[from] hwxdp_hxdp::DividerError),
    /// The maps could not be created as `BPF_MAP_CREATE` would.
    #[error(transparent)]
    Map(#[from] MapError),
    /// The harness executable could not be started.
    #[error("cannot start the hXDP harness {executable}: {source}")]
    Start {
        /// The executable.
        executable: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The harness answered `error ...`.
    #[error("hXDP harness refused {command:?}: {what}")]
    Refused {
        /// The command line.
        command: String,
        /// The harness's reason.
        what: String,
    },
    /// The harness printed something the protocol does not allow.
    #[error("hXDP harness, after {command:?}: {source}")]
    Protocol {
        /// The command line.
        command: String,
        /// What was wrong with the answer.
        source: ParseError,
    },
    /// The harness did not answer in time and was killed.
    #[error("hXDP harness gave no answer to {command:?} within {seconds} s (killed)")]
    Timeout {
        /// The command line.
        command: String,
        /// The time allowed.
        seconds: u64,
    },
    /// The harness exited (or crashed) while a command was outstanding.
    #[error("hXDP harness exited during {command:?}: {story}")]
    Exited {
        /// The command line.
        command: String,
        /// Exit status and last stderr lines.
        story: String,
    },
    /// A command after the harness had already failed.
    #[error("hXDP harness cannot run {command:?}: it failed earlier ({story})")]
    Dead {
        /// The command line.
        command: String,
        /// What happened then.
        story: String,
    },
    /// The waveform cannot be recorded as asked.
    #[error(transparent)]
    Vcd(#[from] VcdError),
}
