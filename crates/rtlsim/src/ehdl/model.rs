//! The Verilator model of one generated pipeline: the module, the `rtl/ehdl/` primitives and the streaming testbench
//! (`sim/ehdl/ehdl_pipe_tb.cpp`), all embedded in the binary, written to a scratch directory and built through the
//! crate's cache.
//!
//! The layout is the one `crates/ehdl/tests/verilog_sim.rs` builds (top `ehdl_pipe`, primitives under `ehdl/`, the
//! module as `ehdl_pipe.sv`, [`VERILATOR_FLAGS`]), so a module those tests built is found in the cache and the other way
//! round.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hwxdp_ehdl::verilog::PRIMITIVES;

use super::EhdlRtlError;
use crate::hash::KeyHasher;
use crate::{build, rtl_files, BuildSpec, Model, RtlError};

/// The generated module's name in the build (the testbench instantiates `Vehdl_pipe`).
pub const TOP: &str = "ehdl_pipe";

/// Verilator flags of every eHDL build. Without gate optimisation Verilator keeps a bank's ports as the bank's own
/// signals instead of substituting each instance's drivers, so the map blocks' many bank instances share their
/// module's code instead of each getting a copy: a pipeline with two 1024-entry hash maps is 0.28M lines of C++ and
/// compiles in 79 s instead of 1.96M lines and 6.5 min, and simulates as fast. Clocked logic here never feeds a
/// clock, so the ordering Verilator warns about (`-Info` "may cause ordering problems") does not arise.
pub const VERILATOR_FLAGS: &[&str] = &["-fno-gate"];

/// The streaming testbench, embedded so that an installed binary needs no checkout.
const TESTBENCH: &str = include_str!("../../../../sim/ehdl/ehdl_pipe_tb.cpp");

/// Makes scratch directory names unique within this process.
static SCRATCH: AtomicU64 = AtomicU64::new(0);

/// Where models are cached and which Verilator builds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EhdlPaths {
    /// Cargo's target directory; models are cached under `rtlsim/`.
    pub target_dir: PathBuf,
    /// The Verilator program.
    pub verilator: PathBuf,
}

impl EhdlPaths {
    /// The cache and Verilator the hXDP backend uses ([`crate::hxdp::RtlPaths::from_env`]: `HWXDP_ROOT`,
    /// `CARGO_TARGET_DIR`, `HWXDP_VERILATOR`).
    pub fn from_env() -> EhdlPaths {
        let paths = crate::hxdp::RtlPaths::from_env();
        EhdlPaths {
            target_dir: paths.target_dir,
            verilator: paths.verilator,
        }
    }
}

/// Builds (or finds in the cache) the model of generated module `text`, whose module name is [`TOP`], with its top
/// parameters `params` set (`-G`).
pub(super) fn build_model(
    text: &str,
    paths: &EhdlPaths,
    params: &[(&str, u64)],
) -> Result<Model, EhdlRtlError> {
    let cache = paths.target_dir.join("rtlsim");
    let scratch = cache.join(format!(
        ".ehdl-src-{}-{}",
        std::process::id(),
        SCRATCH.fetch_add(1, Ordering::Relaxed)
    ));
    let built = fill(&scratch, text, paths).and_then(|mut spec| {
        spec.flags
            .extend(params.iter().map(|(name, v)| format!("-G{name}={v}")));
        locked_build(&spec, text)
    });
    let _ = std::fs::remove_dir_all(&scratch);
    built
}

/// Writes the sources into `dir` and returns the build of them.
fn fill(dir: &Path, text: &str, paths: &EhdlPaths) -> Result<BuildSpec, EhdlRtlError> {
    let files = rtl_files();
    let mut spec = BuildSpec::new(TOP, dir, dir.join("ehdl_pipe_tb.cpp"), &paths.target_dir)
        .flags(VERILATOR_FLAGS);
    spec.verilator = paths.verilator.clone();
    for &name in PRIMITIVES {
        let path = format!("ehdl/{name}");
        let file = files
            .iter()
            .find(|f| f.path == path)
            .ok_or(EhdlRtlError::Primitive(name))?;
        write(&dir.join(&path), file.text)?;
        spec = spec.source(path);
    }
    write(&dir.join("ehdl_pipe.sv"), text)?;
    write(&dir.join("ehdl_pipe_tb.cpp"), TESTBENCH)?;
    Ok(spec.source("ehdl_pipe.sv"))
}

fn write(path: &Path, text: &str) -> Result<(), RtlError> {
    let io = |action: &'static str| {
        let path = path.to_path_buf();
        move |source| RtlError::Io {
            action,
            path,
            source,
        }
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io("cannot create"))?;
    }
    std::fs::write(path, text).map_err(io("cannot write"))
}

/// [`build`] under an exclusive lock on a file in the cache directory named after the module's text: `build`
/// serialises builds within one process, this across processes (test suites start many `hwxdp` processes at once), so
/// a second process asking for the same module waits for the first's build and then finds it cached instead of
/// compiling it again, while other modules (and cached ones) go ahead.
fn locked_build(spec: &BuildSpec, text: &str) -> Result<Model, EhdlRtlError> {
    use std::os::fd::AsRawFd;
    let dir = spec.target_dir.join("rtlsim");
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| RtlError::Io {
            action,
            path,
            source,
        }
    };
    std::fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
    let mut key = KeyHasher::new();
    key.field(text.as_bytes());
    let path = dir.join(format!(".{TOP}-{}.lock", key.hex()));
    let file = std::fs::File::create(&path).map_err(io("cannot create", &path))?;
    // SAFETY: flock on a descriptor this function owns; it is released when `file` is closed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io("cannot lock", &path)(std::io::Error::last_os_error()).into());
    }
    let model = build(spec)?;
    drop(file);
    Ok(model)
}
