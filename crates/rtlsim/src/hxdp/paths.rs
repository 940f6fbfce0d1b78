//! Where the module's sources, the build cache and Verilator are, and the cached build itself.

use std::path::{Path, PathBuf};

use super::{HxdpRtlError, Params, TOP};
use crate::{build, BuildSpec, Model, RtlError};

/// Where the module's sources, the build cache and Verilator are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtlPaths {
    /// The repository's `rtl/` directory.
    pub rtl_root: PathBuf,
    /// The harness, `sim/hxdp/hxdp_harness.cpp`.
    pub harness: PathBuf,
    /// Cargo's target directory; the built module is cached under `rtlsim/`.
    pub target_dir: PathBuf,
    /// The Verilator program.
    pub verilator: PathBuf,
}

impl RtlPaths {
    /// The paths under repository root `root`, with `target/` as the cache and `verilator` from `PATH`.
    pub fn under(root: &Path) -> RtlPaths {
        RtlPaths {
            rtl_root: root.join("rtl"),
            harness: root.join("sim/hxdp/hxdp_harness.cpp"),
            target_dir: root.join("target"),
            verilator: PathBuf::from("verilator"),
        }
    }

    /// The paths of this checkout: the repository this crate was built from (or `HWXDP_ROOT`), the target directory
    /// `CARGO_TARGET_DIR` (relative to the root) or `target/`, and Verilator from `HWXDP_VERILATOR` or `PATH`.
    pub fn from_env() -> RtlPaths {
        let root = std::env::var_os("HWXDP_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
        let mut paths = RtlPaths::under(&root);
        if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
            paths.target_dir = root.join(dir);
        }
        if let Some(v) = std::env::var_os("HWXDP_VERILATOR") {
            paths.verilator = PathBuf::from(v);
        }
        paths
    }

    /// The Verilator build of the module with `params`: every Verilog file of `rtl/sephirot/` (the module's units),
    /// the harness, the parameters and waveform support.
    pub fn build_spec(&self, params: &Params) -> Result<BuildSpec, HxdpRtlError> {
        let dir = self.rtl_root.join("sephirot");
        for needed in [dir.join(format!("{TOP}.sv")), self.harness.clone()] {
            if !needed.is_file() {
                return Err(HxdpRtlError::Missing { path: needed });
            }
        }
        let listing = std::fs::read_dir(&dir).map_err(|source| RtlError::Io {
            action: "cannot list",
            path: dir.clone(),
            source,
        })?;
        let mut files: Vec<PathBuf> = listing
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("sv" | "vlt")))
            .filter_map(|p| p.file_name().map(|n| Path::new("sephirot").join(n)))
            .collect();
        // Waiver files first, then the units in a stable order (the cache key depends on it).
        files.sort_by_key(|p| (p.extension().is_some_and(|e| e != "vlt"), p.clone()));
        let mut spec = BuildSpec::new(TOP, &self.rtl_root, &self.harness, &self.target_dir);
        spec.sources = files;
        spec.verilator = self.verilator.clone();
        spec.flags = params.flags();
        // Waveforms are compiled in always, so one build serves runs with and without `--vcd`.
        spec.flags.push("--trace".into());
        Ok(spec)
    }
}

/// [`build`] under an exclusive lock on a file in the cache directory: `build` serialises builds within one process,
/// this across processes (test suites start many `hwxdp` processes at once), so the second waits for the first's build
/// and then finds it cached instead of building the same module again.
pub(super) fn locked_build(spec: &BuildSpec) -> Result<Model, HxdpRtlError> {
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
    let path = dir.join(format!(".{TOP}.lock"));
    let file = std::fs::File::create(&path).map_err(io("cannot create", &path))?;
    // SAFETY: flock on a descriptor this function owns; it is released when `file` is closed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io("cannot lock", &path)(std::io::Error::last_os_error()).into());
    }
    let model = build(spec)?;
    drop(file);
    Ok(model)
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
}
