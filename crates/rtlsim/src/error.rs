//! The errors of building, linting and synthesizing RTL.

use std::io;
use std::path::PathBuf;

/// Why a Verilator or Yosys step failed.
#[derive(Debug, thiserror::Error)]
pub enum RtlError {
    /// The tool's binary is not on `PATH`.
    #[error(
        "{tool} not found: install the debian package `{package}` (scripts/install-deps.sh does)"
    )]
    ToolMissing {
        /// The program that could not be started.
        tool: String,
        /// The Debian package that provides it.
        package: &'static str,
    },
    /// The tool exists but could not be started or waited for.
    #[error("cannot run {tool}: {source}")]
    Spawn {
        /// The program that failed to run.
        tool: String,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A source, testbench or cache file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done, e.g. "cannot read".
        action: &'static str,
        /// The file or directory at fault.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A build was asked for with no Verilog sources.
    #[error("no verilog sources given for top module {top}")]
    NoSources {
        /// The top module named by the request.
        top: String,
    },
    /// A source path is absolute or climbs out of the RTL root, so it cannot be mirrored in the cache directory.
    #[error("source {path} is not a relative path inside the rtl root")]
    SourceOutsideRoot {
        /// The offending path as given.
        path: PathBuf,
    },
    /// `verilator --build` failed; `log` holds its first error lines.
    #[error("verilator build of {top} failed:\n{log}")]
    Build {
        /// The top module being built.
        top: String,
        /// The first error lines of the build output.
        log: String,
    },
    /// `verilator --lint-only -Wall` reported warnings or errors; `log` holds the first of them.
    #[error("verilator lint of {top} failed:\n{log}")]
    Lint {
        /// The top module being linted.
        top: String,
        /// The first warning and error lines.
        log: String,
    },
    /// Yosys could not read or synthesize the design; `log` holds its first error lines.
    #[error("yosys synthesis of {top} failed:\n{log}")]
    Synth {
        /// The top module being synthesized.
        top: String,
        /// The first error lines of Yosys' output.
        log: String,
    },
}
