//! The Warp Engine hooked into the hXDP module (`rtl/warp/warp_hxdp.sv`) under Verilator: `--backend warp-rtl` in
//! `hwxdp_backend`.
//!
//! [`start`] builds (or takes from the cache) the combined top with the image's hXDP parameters ([`HxdpRtl`]'s) and
//! the rules' engine parameters, starts the hXDP harness built for it (`sim/hxdp/hxdp_harness.cpp` with
//! `HWXDP_WARP_TOP`: the same protocol plus `wcfg` and `entry`), loads the image and the maps as `hxdp-rtl` does,
//! then the rules through the engine's configuration port ([`crate::warp::config_writes`]) and the entry table
//! (slot -> bundle of the image's entry points). Packets then run as on [`HxdpRtl`]: per packet the engine decides
//! (a verdict without the processor, a restore at an entry bundle, or a miss from the program's start) and the
//! module's result comes back with the processor's cycles (0 for the engine's own verdict).

use std::path::{Path, PathBuf};

use hwxdp_hxdp::isa::Image;
use hwxdp_hxdp::EntryPoint;
use hwxdp_object::ObjectSpec;
use hwxdp_warp::Warp;
use hwxdp_xdp::Config;

use crate::build::locked_build;
use crate::embedded::{in_dir, rtl_files};
use crate::hxdp::{Answer, HxdpRtl, HxdpRtlError, Params, RtlPaths};
use crate::warp::{config_writes, WarpRtlError};
use crate::{BuildSpec, Model};

/// The combined top (its executable is `warp_hxdp_sim`).
pub const TOP: &str = "warp_hxdp";

/// The directory of `rtl/` holding the engine and the top.
const WARP_DIR: &str = "warp";

/// Slots the entry table holds (`warp_hxdp`'s `ENTRY_SLOTS`): a restore slot must be below it.
pub const ENTRY_SLOTS: u32 = 4096;

/// Registers the engine's record restores (r1-r9): `warp_hxdp` builds the engine with 9 register extractors.
const REG_EXTRACTORS: u16 = 9;

/// Why the combined top could not be built, loaded or configured.
#[derive(Debug, thiserror::Error)]
pub enum WarpHxdpError {
    /// The hXDP side: the build, the image, the maps, the harness.
    #[error(transparent)]
    Hxdp(#[from] HxdpRtlError),
    /// The rules do not fit the engine's configuration.
    #[error(transparent)]
    Warp(#[from] WarpRtlError),
    /// The rules' engine differs from the one the top builds.
    #[error("the Warp Engine of warp_hxdp has {want}, the rules ask for {got}")]
    Engine {
        /// What the top has.
        want: String,
        /// What the rules' parameters say.
        got: String,
    },
    /// A restore slot beyond the entry table.
    #[error("restore slot {slot} is beyond the entry table's {ENTRY_SLOTS} slots")]
    Slot {
        /// The slot.
        slot: u32,
    },
}

/// The Verilator build of the combined top: the hXDP module's build ([`RtlPaths::build_spec`], with `params`)
/// plus every file of `rtl/warp/`, the engine's parameters from `warp` as `-G` overrides of `warp_hxdp`, and the
/// harness built for this top.
pub fn build_spec(
    paths: &RtlPaths,
    params: &Params,
    warp: &hwxdp_warp::Params,
) -> Result<BuildSpec, WarpHxdpError> {
    if warp.reg_extractors != REG_EXTRACTORS {
        return Err(WarpHxdpError::Engine {
            want: format!("{REG_EXTRACTORS} register extractors"),
            got: warp.reg_extractors.to_string(),
        });
    }
    let mut spec = paths.build_spec(params)?;
    spec.top = TOP.to_string();
    match &paths.source_root {
        None => spec.texts.extend(
            rtl_files()
                .iter()
                .filter(|f| in_dir(WARP_DIR, f.path))
                .map(|f| (PathBuf::from(f.path), std::borrow::Cow::Borrowed(f.text))),
        ),
        Some(root) => spec.sources.extend(warp_sources(root)?),
    }
    let sizes = [
        ("W_CHUNK", warp.chunk),
        ("W_KEY_BYTES", warp.key_bytes),
        ("W_KEY_EXTRACTORS", warp.key_extractors),
        ("W_KEY_READ", warp.key_read),
        ("W_TCAM_ENTRIES", warp.tcam_entries),
        ("W_STACK_EXTRACTORS", warp.stack_extractors),
    ];
    spec.flags
        .extend(sizes.iter().map(|(n, v)| format!("-G{n}={v}")));
    spec.flags
        .extend(["-CFLAGS".to_string(), "-DHWXDP_WARP_TOP".to_string()]);
    Ok(spec)
}

/// The `.sv` files of the checkout's `rtl/warp/`, relative to `rtl/`, sorted.
fn warp_sources(root: &Path) -> Result<Vec<PathBuf>, WarpHxdpError> {
    let dir = root.join("rtl").join(WARP_DIR);
    let listing = std::fs::read_dir(&dir).map_err(|source| {
        HxdpRtlError::Build(crate::RtlError::Io {
            action: "cannot list",
            path: dir.clone(),
            source,
        })
    })?;
    let mut files: Vec<PathBuf> = listing
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sv"))
        .filter_map(|p| p.file_name().map(|n| Path::new(WARP_DIR).join(n)))
        .collect();
    files.sort();
    Ok(files)
}

/// Builds (or takes from the cache) the combined top for `image` and `warp`, starts it and loads the image, the
/// maps, the rules and the entry table `entries` (every restore slot's bundle).
pub fn start(
    image: Image,
    spec: &ObjectSpec,
    program: Option<&str>,
    config: &Config,
    paths: &RtlPaths,
    warp: &Warp,
    entries: &[EntryPoint],
) -> Result<HxdpRtl, WarpHxdpError> {
    // Checked before the (long) build: the rules must fit the engine's configuration, the slots the entry table.
    let writes = config_writes(warp)?;
    if let Some(e) = entries.iter().find(|e| e.slot >= ENTRY_SLOTS) {
        return Err(WarpHxdpError::Slot { slot: e.slot });
    }
    let model = |params: &Params| -> Result<Model, HxdpRtlError> {
        let spec = build_spec(paths, params, &warp.params).map_err(|e| match e {
            WarpHxdpError::Hxdp(e) => e,
            other => HxdpRtlError::Image(other.to_string()),
        })?;
        let notify = paths.notify;
        let mut announce = || {
            if let Some(notify) = notify {
                notify("building the Warp Engine + hXDP model (first time, ~4 min)");
            }
        };
        Ok(locked_build(&spec, TOP, &mut announce)?)
    };
    let mut rtl = HxdpRtl::new_on(image, spec, program, config, model)?;
    let mut lines: Vec<String> = writes
        .iter()
        .map(|w| format!("wcfg {:x} {:x} {:x} {:x}", w.sel, w.addr, w.word, w.data))
        .collect();
    lines.extend(
        entries
            .iter()
            .map(|e| format!("entry {:x} {:x}", e.slot, e.bundle)),
    );
    rtl.raw_batch(&lines, "warp configuration")?;
    Ok(rtl)
}

/// The cycles from the last packet's last beat into the engine to Sephirot's start for it (the engine's latency, the
/// input queue's and the APS's, a restore's stack writes), or `None` when Sephirot did not start (the engine's
/// verdict). Only meaningful on a model [`start`] started.
pub fn start_latency(rtl: &mut HxdpRtl) -> Result<Option<u64>, WarpHxdpError> {
    match rtl.raw_call("latency")? {
        Answer::Ret(0) => Ok(None),
        Answer::Ret(n) => Ok(Some(n as u64)),
        other => Err(WarpHxdpError::Hxdp(HxdpRtlError::Image(format!(
            "latency: unexpected answer {other:?}"
        )))),
    }
}

/// The module's interval for `frame` back to back: `count` copies queued one after the other (each as soon as the
/// input takes it), then the cycles from the first copy's last output beat to the last one's over `count - 1`.
/// Works on [`HxdpRtl`] alone too (the `done_at` command is the hXDP harness's).
pub fn interval(rtl: &mut HxdpRtl, frame: &[u8], count: usize) -> Result<f64, WarpHxdpError> {
    let unexpected = |what: &str, a: Answer| {
        WarpHxdpError::Hxdp(HxdpRtlError::Image(format!(
            "{what}: unexpected answer {a:?}"
        )))
    };
    let line = format!("queue 0 0 0 {}", crate::line_harness::hex(frame));
    for _ in 0..count {
        match rtl.raw_call(&line)? {
            Answer::Ok => {}
            other => return Err(unexpected("queue", other)),
        }
    }
    let mut stamps = Vec::with_capacity(count);
    for _ in 0..count {
        match rtl.raw_call("result")? {
            Answer::Out(_) => {}
            other => return Err(unexpected("result", other)),
        }
        match rtl.raw_call("done_at")? {
            Answer::Ret(at) => stamps.push(at as u64),
            other => return Err(unexpected("done_at", other)),
        }
    }
    match (stamps.first(), stamps.last()) {
        (Some(a), Some(b)) if count > 1 => Ok((b - a) as f64 / (count - 1) as f64),
        _ => Ok(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_adds_the_engine_and_its_parameters_to_the_module() {
        let params = Params::for_lanes(4);
        let spec = build_spec(
            &RtlPaths::embedded("/cache"),
            &params,
            &hwxdp_warp::Params::default(),
        )
        .expect("spec");
        assert_eq!(spec.top, TOP);
        let names: Vec<String> = spec
            .texts
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        for f in [
            "warp/warp_hxdp.sv",
            "warp/warp_engine.sv",
            "sephirot/hxdp.sv",
            "common/ram_sdp.sv",
        ] {
            assert!(names.iter().any(|n| n == f), "{f} in {names:?}");
        }
        assert!(spec.flags.contains(&"-GW_TCAM_ENTRIES=64".to_string()));
        assert!(spec.flags.contains(&"-DHWXDP_WARP_TOP".to_string()));
        assert!(spec.flags.contains(&"-GLANES=4".to_string()));
    }

    #[test]
    fn an_engine_without_nine_register_extractors_is_refused() {
        let warp = hwxdp_warp::Params {
            reg_extractors: 8,
            ..hwxdp_warp::Params::default()
        };
        let err = build_spec(&RtlPaths::embedded("/c"), &Params::for_lanes(4), &warp)
            .expect_err("8 registers");
        assert_eq!(
            err.to_string(),
            "the Warp Engine of warp_hxdp has 9 register extractors, the rules ask for 8"
        );
    }
}
