//! The Verilator model of one generated pipeline: the module, the `rtl/ehdl/` primitives and the streaming testbench
//! (`sim/ehdl/ehdl_pipe_tb.cpp`), all embedded in the binary, built through the crate's cache.
//!
//! The layout is the one `crates/ehdl/tests/verilog_sim.rs` builds (top `ehdl_pipe`, primitives under `ehdl/`, the
//! module as `ehdl_pipe.sv`, [`VERILATOR_FLAGS`]), so a module those tests built in the same cache directory is found
//! there and the other way round.

use std::borrow::Cow;
use std::path::PathBuf;

use hwxdp_ehdl::verilog::PRIMITIVES;

use super::EhdlRtlError;
use crate::build::locked_build;
use crate::hash::KeyHasher;
use crate::{rtl_files, BuildSpec, Model};

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

/// The testbench's file name, in `sim/ehdl/` and in the build.
const TESTBENCH_NAME: &str = "ehdl_pipe_tb.cpp";

/// Bytes of generated Verilog per estimated minute of a first build, for the notification: the module's text grows
/// with what makes Verilator and the C++ compiler slow (stages, frame registers, map blocks). Measured on the shared
/// two-core machine (with ccache): xdp1_drop 64 kB in 17 s, firewall 124 kB in 45 s, router 114 kB in 2 min (its
/// CAMs), nat 448 kB in 2.4 min; the estimate is right within a factor of two or so.
const BYTES_PER_MINUTE: usize = 150_000;

/// Where models are cached, which Verilator builds them and who hears of a build.
// No `PartialEq`: `notify` is a function pointer, whose comparison means nothing.
#[derive(Clone, Debug)]
pub struct EhdlPaths {
    /// The directory models are cached in ([`crate::cache_dir`] by default).
    pub cache_dir: PathBuf,
    /// The Verilator program.
    pub verilator: PathBuf,
    /// Called with one line, "building the eHDL pipeline model for PROGRAM (first time, ~N min)", right before
    /// Verilator builds a model that is not in the cache (never for a cached one). The library prints nothing itself.
    pub notify: Option<fn(&str)>,
}

impl EhdlPaths {
    /// What the environment asks for ([`crate::ENVIRONMENT`]): the cache [`crate::cache_dir`] (`HWXDP_CACHE_DIR`,
    /// `XDG_CACHE_HOME`) and Verilator from `HWXDP_VERILATOR` or `PATH`, as the hXDP backend's
    /// ([`crate::hxdp::RtlPaths::from_env`]); no notification.
    pub fn from_env() -> EhdlPaths {
        EhdlPaths {
            cache_dir: crate::cache_dir(),
            verilator: crate::env::verilator(),
            notify: None,
        }
    }
}

/// How a model is built: its top parameters (`-G`) and whether it records waveforms (`--trace`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Variant {
    pub(super) params: Vec<(&'static str, u64)>,
    pub(super) trace: bool,
}

/// Whether `path` (relative to `rtl/`) is a block of `rtl/common/`, which every generated pipeline may use.
fn is_common(path: &str) -> bool {
    crate::embedded::in_dir(crate::embedded::COMMON, path)
}

/// The build of generated module `text` (whose module name is [`TOP`]) as `variant`.
pub(super) fn spec(
    text: &str,
    paths: &EhdlPaths,
    variant: &Variant,
) -> Result<BuildSpec, EhdlRtlError> {
    let files = rtl_files();
    let mut spec =
        BuildSpec::new(TOP, PathBuf::new(), TESTBENCH_NAME, PathBuf::new()).flags(VERILATOR_FLAGS);
    spec.cache_dir = paths.cache_dir.clone();
    spec.verilator = paths.verilator.clone();
    spec.testbench_text = Some(Cow::Borrowed(TESTBENCH));
    for file in files.iter().filter(|f| is_common(f.path)) {
        spec = spec.text(file.path.to_string(), file.text);
    }
    for &name in PRIMITIVES {
        let path = format!("ehdl/{name}");
        let file = files
            .iter()
            .find(|f| f.path == path)
            .ok_or(EhdlRtlError::Primitive(name))?;
        spec = spec.text(path, file.text);
    }
    spec = spec.text("ehdl_pipe.sv", text.to_string());
    spec.flags.extend(
        variant
            .params
            .iter()
            .map(|(name, v)| format!("-G{name}={v}")),
    );
    if variant.trace {
        spec.flags.push("--trace".into());
    }
    Ok(spec)
}

/// Builds (or finds in the cache) the model of generated module `text` of `program` as `variant`, under a lock
/// file named after the module's text, so that a second process asking for the same module waits for the first's
/// build and then finds it cached instead of compiling it again, while other modules (and cached ones) go ahead.
pub(super) fn build_model(
    text: &str,
    program: &str,
    paths: &EhdlPaths,
    variant: &Variant,
) -> Result<Model, EhdlRtlError> {
    let spec = spec(text, paths, variant)?;
    let mut key = KeyHasher::new();
    key.field(text.as_bytes());
    if variant.trace {
        key.field(b"--trace");
    }
    let notify = paths.notify;
    let mut announce = || {
        if let Some(notify) = notify {
            notify(&notice(program, text.len(), variant.trace));
        }
    };
    Ok(locked_build(
        &spec,
        &format!("{TOP}-{}", key.hex()),
        &mut announce,
    )?)
}

/// The line a build is announced with: the program, the estimated minutes (from the module's size) and waveforms.
fn notice(program: &str, verilog_bytes: usize, trace: bool) -> String {
    let minutes = verilog_bytes.div_ceil(BYTES_PER_MINUTE).max(1);
    let waves = if trace { " with waveforms" } else { "" };
    format!("building the eHDL pipeline model for {program}{waves} (first time, ~{minutes} min)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_names_the_program_and_the_estimate() {
        assert_eq!(
            notice("router", 10, false),
            "building the eHDL pipeline model for router (first time, ~1 min)"
        );
        assert_eq!(
            notice("nat", 3 * BYTES_PER_MINUTE + 1, true),
            "building the eHDL pipeline model for nat with waveforms (first time, ~4 min)"
        );
    }

    #[test]
    fn the_build_is_the_layout_of_the_ehdl_tests_and_the_variant() {
        let paths = EhdlPaths {
            cache_dir: PathBuf::from("/cache"),
            verilator: PathBuf::from("/usr/bin/verilator"),
            notify: None,
        };
        let variant = Variant {
            params: vec![("PossibleCpus", 2)],
            trace: true,
        };
        let spec = spec("module ehdl_pipe; endmodule\n", &paths, &variant).expect("spec");
        let names: Vec<String> = spec
            .texts
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        let mut expected: Vec<String> = rtl_files()
            .iter()
            .filter(|f| is_common(f.path))
            .map(|f| f.path.to_string())
            .collect();
        expected.extend(PRIMITIVES.iter().map(|p| format!("ehdl/{p}")));
        expected.push("ehdl_pipe.sv".into());
        assert_eq!(names, expected);
        assert_eq!(spec.flags, ["-fno-gate", "-GPossibleCpus=2", "--trace"]);
        assert_eq!(spec.cache_dir, PathBuf::from("/cache"));
        assert_eq!(
            spec.testbench.file_name().and_then(|n| n.to_str()),
            Some(TESTBENCH_NAME)
        );
        assert!(spec
            .testbench_text
            .is_some_and(|t| t.contains("Vehdl_pipe")));
    }

    static HEARD: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

    fn hear(line: &str) {
        HEARD.lock().expect("notices").push(line.to_string());
    }

    #[test]
    fn a_build_is_announced_before_verilator_runs() {
        let verilator = crate::testing::fake_verilator("ehdl-rtl-notify");
        let paths = EhdlPaths {
            cache_dir: verilator.with_file_name("cache"),
            verilator,
            notify: Some(hear),
        };
        let err = build_model(
            "module ehdl_pipe;\nendmodule\n",
            "prog",
            &paths,
            &Variant::default(),
        )
        .expect_err("the fake builds nothing");
        assert!(
            matches!(err, EhdlRtlError::Build(crate::RtlError::Build { .. })),
            "{err}"
        );
        assert_eq!(
            *HEARD.lock().expect("notices"),
            ["building the eHDL pipeline model for prog (first time, ~1 min)"]
        );
    }
}
