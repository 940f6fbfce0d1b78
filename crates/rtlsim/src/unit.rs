//! Where a unit's Verilator build takes its sources from: the `rtl/` files embedded in the binary (the default, so an
//! installed `hwxdp` needs no checkout), or a checkout's `rtl/` and `sim/` (`HWXDP_ROOT`).

use crate::embedded::COMMON;
use crate::{rtl_files, rtl_waivers, BuildSpec, RtlError};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// A directory of `rtl/` built into one model with its C++ harness.
pub(crate) struct Unit {
    /// The directory under `rtl/` (`sephirot`, `ebpflow`): every `.sv` and `.vlt` file directly in it is a source.
    pub dir: &'static str,
    /// The top module, defined in `<dir>/<top>.sv`.
    pub top: &'static str,
    /// The harness's file name, under `sim/<sim_dir>/` in a checkout.
    pub harness_name: &'static str,
    /// The harness's text, as embedded.
    pub harness_text: &'static str,
    /// The harness's directory under `sim/`.
    pub sim_dir: &'static str,
}

/// Why a unit's build cannot be set up.
#[derive(Debug)]
pub(crate) enum SpecError {
    /// A file the build needs is not there.
    Missing(PathBuf),
    /// The checkout's unit directory cannot be listed.
    Io(RtlError),
}

impl Unit {
    /// Whether `path` (relative to `rtl/`) is one of the unit's sources: a file directly in its directory or in
    /// `rtl/common/`, the blocks every unit shares.
    fn owns(&self, path: &str) -> bool {
        crate::embedded::unit_owns(self.dir, path)
    }

    /// The build of the embedded sources: waiver files first, then the unit's files in path order (the cache key
    /// depends on the order).
    fn embedded_spec(&self) -> Result<BuildSpec, SpecError> {
        let texts: Vec<(PathBuf, Cow<'static, str>)> = rtl_waivers()
            .iter()
            .chain(rtl_files())
            .filter(|f| self.owns(f.path))
            .map(|f| (PathBuf::from(f.path), Cow::Borrowed(f.text)))
            .collect();
        let top = format!("{}/{}.sv", self.dir, self.top);
        if !texts.iter().any(|(p, _)| p == Path::new(&top)) {
            return Err(SpecError::Missing(Path::new("rtl").join(top)));
        }
        let mut spec = BuildSpec::new(self.top, PathBuf::new(), self.harness_name, PathBuf::new());
        spec.texts = texts;
        spec.testbench_text = Some(Cow::Borrowed(self.harness_text));
        Ok(spec)
    }

    /// The build of the embedded sources, or of the checkout at `source_root`, cached in `cache_dir` and built with
    /// `verilator`.
    pub(crate) fn spec(
        &self,
        source_root: Option<&Path>,
        cache_dir: &Path,
        verilator: &Path,
    ) -> Result<BuildSpec, SpecError> {
        let mut spec = match source_root {
            None => self.embedded_spec()?,
            Some(root) => self.checkout_spec(root)?,
        };
        spec.cache_dir = cache_dir.to_path_buf();
        spec.verilator = verilator.to_path_buf();
        Ok(spec)
    }

    /// The build of the sources of the checkout at `root`, ordered as [`Unit::embedded_spec`] orders them.
    fn checkout_spec(&self, root: &Path) -> Result<BuildSpec, SpecError> {
        let rtl_root = root.join("rtl");
        let harness = root.join("sim").join(self.sim_dir).join(self.harness_name);
        let dir = rtl_root.join(self.dir);
        for needed in [dir.join(format!("{}.sv", self.top)), harness.clone()] {
            if !needed.is_file() {
                return Err(SpecError::Missing(needed));
            }
        }
        let mut files = unit_files(&rtl_root, self.dir)?;
        if rtl_root.join(COMMON).is_dir() {
            files.extend(unit_files(&rtl_root, COMMON)?);
        }
        files.sort_by_key(|p| (p.extension().is_some_and(|e| e != "vlt"), p.clone()));
        let mut spec = BuildSpec::new(self.top, rtl_root, harness, PathBuf::new());
        spec.sources = files;
        Ok(spec)
    }
}

/// The `.sv` and `.vlt` files directly in `rtl_root/<dir>`, as paths relative to `rtl_root`.
fn unit_files(rtl_root: &Path, dir: &str) -> Result<Vec<PathBuf>, SpecError> {
    let path = rtl_root.join(dir);
    let listing = std::fs::read_dir(&path).map_err(|source| {
        SpecError::Io(RtlError::Io {
            action: "cannot list",
            path: path.clone(),
            source,
        })
    })?;
    Ok(listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("sv" | "vlt")))
        .filter_map(|p| p.file_name().map(|n| Path::new(dir).join(n)))
        .collect())
}
