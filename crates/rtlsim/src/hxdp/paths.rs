//! Where the module's sources come from (the binary, or a checkout named by `HWXDP_ROOT`), where its model is
//! cached and which Verilator builds it, and the cached build itself.

use std::path::{Path, PathBuf};

use super::{HxdpRtlError, Params, TOP};
use crate::build::locked_build;
use crate::unit::{SpecError, Unit};
use crate::{BuildSpec, Model};

/// The harness, embedded so that an installed binary needs no checkout.
const HARNESS: &str = include_str!("../../../../sim/hxdp/hxdp_harness.cpp");

/// The harness's file name, in a checkout's `sim/hxdp/` and in the build.
const HARNESS_NAME: &str = "hxdp_harness.cpp";

/// The module's units: the files of this directory of `rtl/` (not of its subdirectories).
const UNITS: &str = "sephirot";

/// Roughly how long a first build of the module takes on a loaded two-core machine, for the notification.
const BUILD_MINUTES: u32 = 2;

/// Where the module's sources come from, where its model is cached and which Verilator builds it.
// No `PartialEq`: `notify` is a function pointer, whose comparison means nothing.
#[derive(Clone, Debug)]
pub struct RtlPaths {
    /// A checkout whose `rtl/sephirot/` and `sim/hxdp/hxdp_harness.cpp` the module is built from instead of the
    /// sources embedded in the binary (`None`, the default).
    pub source_root: Option<PathBuf>,
    /// The directory models are cached in ([`crate::cache_dir`] by default).
    pub cache_dir: PathBuf,
    /// The Verilator program.
    pub verilator: PathBuf,
    /// Called with one line, "building the hXDP model (first time, ~2 min)", right before Verilator builds a model
    /// that is not in the cache (never for a cached one). The library prints nothing itself.
    pub notify: Option<fn(&str)>,
}

impl RtlPaths {
    /// The sources embedded in the binary, cached in `cache_dir`, `verilator` from `PATH`, no notification.
    pub fn embedded(cache_dir: impl Into<PathBuf>) -> RtlPaths {
        RtlPaths {
            source_root: None,
            cache_dir: cache_dir.into(),
            verilator: PathBuf::from("verilator"),
            notify: None,
        }
    }

    /// The sources of the checkout at `root` (its `rtl/sephirot/` and `sim/hxdp/hxdp_harness.cpp`), cached in
    /// [`crate::cache_dir`], `verilator` from `PATH`.
    pub fn under(root: &Path) -> RtlPaths {
        RtlPaths {
            source_root: Some(root.to_path_buf()),
            ..RtlPaths::embedded(crate::cache_dir())
        }
    }

    /// What the environment asks for ([`crate::ENVIRONMENT`]): the embedded sources unless `HWXDP_ROOT` names a
    /// checkout to build instead, the cache [`crate::cache_dir`] (`HWXDP_CACHE_DIR`, `XDG_CACHE_HOME`), Verilator
    /// from `HWXDP_VERILATOR` or `PATH`; no notification.
    pub fn from_env() -> RtlPaths {
        RtlPaths {
            source_root: std::env::var_os("HWXDP_ROOT")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            cache_dir: crate::cache_dir(),
            verilator: crate::env::verilator(),
            notify: None,
        }
    }

    /// The Verilator build of the module with `params`: every Verilog file of `rtl/sephirot/` (the module's units,
    /// after its `.vlt` waivers), the harness, the parameters and waveform support.
    pub fn build_spec(&self, params: &Params) -> Result<BuildSpec, HxdpRtlError> {
        let mut spec = SEPHIROT.spec(
            self.source_root.as_deref(),
            &self.cache_dir,
            &self.verilator,
        )?;
        spec.flags = params.flags();
        // Waveforms are compiled in always, so one build serves runs with and without `--vcd`.
        spec.flags.push("--trace".into());
        Ok(spec)
    }

    /// Builds the module with `params`, or finds it in the cache, under a lock that makes concurrent processes build
    /// it once; [`RtlPaths::notify`] hears of a build before it starts.
    pub fn model(&self, params: &Params) -> Result<Model, HxdpRtlError> {
        let spec = self.build_spec(params)?;
        let notify = self.notify;
        let mut announce = || {
            if let Some(notify) = notify {
                notify(&format!(
                    "building the hXDP model (first time, ~{BUILD_MINUTES} min)"
                ));
            }
        };
        Ok(locked_build(&spec, TOP, &mut announce)?)
    }
}

/// The hXDP module and its harness.
const SEPHIROT: Unit = Unit {
    dir: UNITS,
    top: TOP,
    harness_name: HARNESS_NAME,
    harness_text: HARNESS,
    sim_dir: "hxdp",
};

impl From<SpecError> for HxdpRtlError {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::Missing(path) => HxdpRtlError::Missing { path },
            SpecError::Io(e) => HxdpRtlError::Build(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_needs_the_module_and_the_harness() {
        let dir = std::env::temp_dir().join(format!("hxdp-rtl-paths-{}", std::process::id()));
        let paths = RtlPaths::under(&dir);
        let err = paths
            .build_spec(&Params::for_lanes(4))
            .expect_err("nothing there");
        assert_eq!(
            err.to_string(),
            format!(
                "{}/rtl/sephirot/hxdp.sv is missing: the hXDP module needs it",
                dir.display()
            )
        );
    }

    #[test]
    fn the_build_takes_every_unit_with_the_parameters_and_tracing() {
        let dir = std::env::temp_dir().join(format!("hxdp-rtl-spec-{}", std::process::id()));
        let units = dir.join("rtl/sephirot");
        std::fs::create_dir_all(&units).expect("scratch");
        std::fs::create_dir_all(dir.join("sim/hxdp")).expect("scratch");
        for f in [
            "rtl/sephirot/hxdp.sv",
            "rtl/sephirot/alu.sv",
            "rtl/sephirot/w.vlt",
            "sim/hxdp/hxdp_harness.cpp",
        ] {
            std::fs::write(dir.join(f), "").expect("write");
        }
        std::fs::write(units.join("notes.txt"), "").expect("write");
        let spec = RtlPaths::under(&dir)
            .build_spec(&Params::for_lanes(2))
            .expect("spec");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            spec.sources,
            vec![
                PathBuf::from("sephirot/w.vlt"),
                PathBuf::from("sephirot/alu.sv"),
                PathBuf::from("sephirot/hxdp.sv")
            ]
        );
        assert!(spec.flags.contains(&"-GLANES=2".to_string()));
        assert!(spec.flags.contains(&"--trace".to_string()));
        assert_eq!(spec.top, "hxdp");
    }

    #[test]
    fn the_embedded_sources_are_the_checkouts() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let params = Params::for_lanes(4);
        let embedded = RtlPaths::embedded("/cache")
            .build_spec(&params)
            .expect("embedded");
        let checkout = RtlPaths {
            source_root: Some(root.clone()),
            ..RtlPaths::embedded("/cache")
        }
        .build_spec(&params)
        .expect("checkout");
        assert!(embedded.sources.is_empty());
        let names: Vec<&Path> = embedded.texts.iter().map(|(p, _)| p.as_path()).collect();
        assert_eq!(names, checkout.sources);
        for (path, text) in &embedded.texts {
            let file = std::fs::read_to_string(root.join("rtl").join(path)).expect("source");
            assert!(
                file == *text,
                "{} differs from the checkout",
                path.display()
            );
        }
        let harness = std::fs::read_to_string(&checkout.testbench).expect("harness");
        assert_eq!(embedded.testbench_text.as_deref(), Some(harness.as_str()));
        assert_eq!(
            embedded.testbench.file_name(),
            checkout.testbench.file_name()
        );
        assert_eq!(embedded.cache_dir, Path::new("/cache"));
        assert_eq!(embedded.flags, checkout.flags);
    }

    static NOTICES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

    fn notice(line: &str) {
        NOTICES.lock().expect("notices").push(line.to_string());
    }

    #[test]
    fn a_build_is_announced_before_verilator_runs() {
        let verilator = crate::testing::fake_verilator("hxdp-rtl-notify");
        let paths = RtlPaths {
            cache_dir: verilator.with_file_name("cache"),
            verilator,
            notify: Some(notice),
            ..RtlPaths::embedded("")
        };
        let err = paths
            .model(&Params::for_lanes(4))
            .expect_err("the fake builds nothing");
        assert!(
            matches!(err, HxdpRtlError::Build(crate::RtlError::Build { .. })),
            "{err}"
        );
        assert_eq!(
            *NOTICES.lock().expect("notices"),
            ["building the hXDP model (first time, ~2 min)"]
        );
    }
}
