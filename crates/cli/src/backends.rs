//! `--backend` and the backends' own options, shared by `run`, `verify` and `bench`, and the set-up every command
//! does before its first packet: the program chosen, the interfaces the kernel needs, the backends created from the
//! registry and preloaded with `--maps`. No command names a backend: they all go through `hwxdp_backend`.

use crate::common::{self, Loaded, ProgramArgs, TraceArgs};
use anyhow::{bail, Context, Result};
use hwxdp_backend::registry::{self, Entry};
use hwxdp_backend::{Backend, Options, Setup, Vcd};
use hwxdp_maps::json::MapsFile;
use hwxdp_object::ObjectSpec;
use hwxdp_rtlsim::hxdp::parse_packet_range;
use hwxdp_xdp::Config;
use std::ops::Range;
use std::path::PathBuf;

/// `BPF_MAP_TYPE_DEVMAP` and `BPF_MAP_TYPE_DEVMAP_HASH`: their values name interfaces that must exist.
pub const DEVMAP_TYPES: [u32; 2] = [14, 25];

/// The clocks figures are given at when `--clock-mhz` is not: the hXDP paper's and Corundum's 100G datapath.
pub const DEFAULT_CLOCKS_MHZ: [f64; 2] = [156.25, 250.0];

/// `--backend` (repeatable) and the backends' own options.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct BackendArgs {
    /// Where the program runs (repeatable, or `all`). See the list of backends below.
    #[arg(long = "backend", value_name = "NAME")]
    pub backend: Vec<String>,
    /// hxdp, hxdp-rtl: lanes per bundle (1 to 8) [default: 4].
    #[arg(long)]
    pub lanes: Option<usize>,
    /// hxdp, hxdp-rtl: compiler passes to switch off (bounds, zeroing, three-operand, six-byte, exit, rename,
    /// code-motion, parallel-branches).
    #[arg(long = "disable", value_delimiter = ',')]
    pub disable: Vec<String>,
    /// hxdp-rtl, ehdl-rtl: write a VCD waveform of the hardware's signals to FILE (its directory is created).
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<PathBuf>,
    /// The packets `--vcd` records: `A..B` (B excluded), `A..=B` or `A`, counted from 0 in the order they run
    /// [default: 0..1].
    #[arg(long, value_parser = parse_packet_range)]
    pub vcd_packets: Option<Range<u64>>,
    /// ehdl-rtl: the pipeline's data width in bits (128 to 512, a multiple of 64) [default: 512].
    #[arg(long)]
    pub data_width: Option<u32>,
    /// ehdl-rtl: how the pipeline keeps map accesses of packets in flight in order: `stall` (a packet waits while
    /// an older one may conflict) or `flush` (the eHDL paper's flush evaluation and replay, from the input or from
    /// an elastic buffer after the last map write before the flush stage) [default: stall].
    #[arg(long, value_enum)]
    pub hazards: Option<HazardsArg>,
    /// Clock frequency in MHz that hardware figures (packets per second) are given at (repeatable)
    /// [default: 156.25 and 250].
    #[arg(long = "clock-mhz", value_name = "F", value_parser = parse_clock)]
    pub clock_mhz: Vec<f64>,
    /// When the ring buffers' consumer reads them: after every `packet` (records are attributed to packets, rings
    /// never fill) or once after the whole `trace` (rings fill up and programs take their ring-full paths) [default:
    /// run and bench: trace; verify: packet, or trace when a backend runs the trace as one batch].
    #[arg(long, value_enum)]
    pub rings: Option<RingsArg>,
    /// ebpflow: the NIC's ports (1 to 16); a packet arriving on ifindex I comes in on port I - --ifindex [default: 4].
    #[arg(long)]
    pub ports: Option<usize>,
    /// ebpflow: engines per port [default: 4].
    #[arg(long)]
    pub engines_per_port: Option<usize>,
    /// ebpflow: from the N-th packet on (counted from 0 in the order they run), run OBJECT's program instead,
    /// swapped into the instruction memory's idle bank under traffic (repeatable, N increasing).
    #[arg(long = "swap-at", value_name = "N:OBJECT", value_parser = parse_swap)]
    pub swap_at: Vec<(u64, PathBuf)>,
    /// warp: hXDP cores behind the one Warp Engine, sharing the maps (1 to 64) [default: 1].
    #[arg(long)]
    pub cores: Option<usize>,
    /// warp, warp-interp: fit the rules to this trace's traffic (TCAM entries spent on its frequent paths first, as
    /// `compile --target warp --pcap` does) [default: no profile].
    #[arg(long, value_name = "PCAP")]
    pub warp_profile: Option<PathBuf>,
    /// warp, warp-interp, warp-rtl: the engine's parameters as `compile --target warp` takes them (NAME=VALUE,...)
    /// [default: Table 5's].
    #[arg(long = "warp-param", value_delimiter = ',', value_name = "NAME=VALUE")]
    pub warp_param: Vec<String>,
}

fn parse_swap(text: &str) -> Result<(u64, PathBuf), String> {
    let (n, path) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?} is not N:OBJECT"))?;
    let n = n
        .parse::<u64>()
        .map_err(|_| format!("{text:?}: {n:?} is not a packet number"))?;
    if path.is_empty() {
        return Err(format!("{text:?}: no object after the colon"));
    }
    Ok((n, PathBuf::from(path)))
}

/// `--rings`: when ring buffers are read.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingsArg {
    /// After every packet.
    Packet,
    /// Once after the trace.
    Trace,
}

/// `--hazards`: the eHDL pipeline's handling of map hazards.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HazardsArg {
    /// Stall checks.
    Stall,
    /// Flush evaluation and replay.
    Flush,
}

impl From<HazardsArg> for hwxdp_ehdl::verilog::Hazards {
    fn from(h: HazardsArg) -> Self {
        match h {
            HazardsArg::Stall => hwxdp_ehdl::verilog::Hazards::Stall,
            HazardsArg::Flush => hwxdp_ehdl::verilog::Hazards::Flush,
        }
    }
}

fn parse_clock(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!("{text:?} is not a clock frequency in MHz")),
    }
}

/// The list of backends and the environment variables they read, for `--help`.
pub fn backends_help() -> String {
    let width = hwxdp_rtlsim::ENVIRONMENT
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0);
    let environment: Vec<String> = hwxdp_rtlsim::ENVIRONMENT
        .iter()
        .map(|(name, meaning)| format!("  {name:width$}  {meaning}"))
        .collect();
    format!(
        "Backends (--backend NAME):\n{}\n\nEnvironment (the RTL backends):\n{}",
        registry::help(),
        environment.join("\n")
    )
}

impl BackendArgs {
    /// The chosen backends: `--backend` in order (`all`: every backend, without the kernel unless `kernel_in_all`),
    /// else `default`; an option no chosen backend takes is refused.
    pub fn entries(&self, default: &[&str], kernel_in_all: bool) -> Result<Vec<&'static Entry>> {
        let mut chosen: Vec<&'static Entry> = Vec::new();
        let names: Vec<&str> = if self.backend.is_empty() {
            default.to_vec()
        } else {
            self.backend.iter().map(String::as_str).collect()
        };
        for name in names {
            let add: Vec<&'static Entry> = if name == "all" {
                registry::REGISTRY
                    .iter()
                    .filter(|e| kernel_in_all || !e.needs_kernel)
                    .collect()
            } else {
                vec![registry::find(name)?]
            };
            for e in add {
                if !chosen.iter().any(|c| c.name == e.name) {
                    chosen.push(e);
                }
            }
        }
        registry::check_options(&chosen, &self.given())?;
        Ok(chosen)
    }

    /// The backends' options, as spelled on the command line, that were given.
    fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        let flags = [
            (self.lanes.is_some(), "--lanes"),
            (!self.disable.is_empty(), "--disable"),
            (self.vcd.is_some(), "--vcd"),
            (self.vcd_packets.is_some(), "--vcd-packets"),
            (self.data_width.is_some(), "--data-width"),
            (self.hazards.is_some(), "--hazards"),
            (self.ports.is_some(), "--ports"),
            (self.engines_per_port.is_some(), "--engines-per-port"),
            (!self.swap_at.is_empty(), "--swap-at"),
            (self.cores.is_some(), "--cores"),
            (self.warp_profile.is_some(), "--warp-profile"),
            (!self.warp_param.is_empty(), "--warp-param"),
        ];
        for (set, flag) in flags {
            if set {
                given.push(flag);
            }
        }
        given
    }

    /// The clocks of `--clock-mhz`, or the defaults.
    pub fn clocks(&self) -> Vec<f64> {
        if self.clock_mhz.is_empty() {
            DEFAULT_CLOCKS_MHZ.to_vec()
        } else {
            self.clock_mhz.clone()
        }
    }

    /// Whether the chosen backends read their ring buffers after the trace: `--rings`, else after the trace when
    /// `after_by_default` or when one of them runs the trace as one batch; every side alike, so that rings fill up
    /// (or not) the same way everywhere.
    pub fn rings_after_trace(
        &self,
        entries: &[&'static Entry],
        after_by_default: bool,
    ) -> Result<bool> {
        let batch = entries.iter().find(|e| e.whole_trace);
        match (self.rings, batch) {
            (Some(RingsArg::Packet), Some(e)) => bail!(
                "--rings packet: --backend {} runs the trace as one batch and reads its ring buffers after it",
                e.name
            ),
            (Some(r), _) => Ok(r == RingsArg::Trace),
            (None, batch) => Ok(after_by_default || batch.is_some()),
        }
    }

    /// The options the backends are created with.
    pub fn options(&self) -> Options {
        Options {
            lanes: self.lanes.unwrap_or(4),
            disable: self.disable.clone(),
            data_width: self.data_width,
            hazards: self.hazards.map(Into::into),
            vcd: self.vcd.as_ref().map(|path| Vcd {
                path: path.clone(),
                packets: self.vcd_packets.clone().unwrap_or(0..1),
                clock_mhz: self.clocks()[0],
            }),
            rings_after_trace: false,
            ebpflow: hwxdp_backend::NicOptions {
                ports: self.ports.unwrap_or(4),
                engines_per_port: self.engines_per_port.unwrap_or(4),
                ..hwxdp_backend::NicOptions::default()
            },
            warp_cores: self.cores.unwrap_or(1),
            warp_profile: Vec::new(),
            warp_params: None,
        }
    }

    /// The objects of `--swap-at`, loaded, with the packet each takes over from; refused unless N increases.
    pub fn swaps(&self) -> Result<Vec<(u64, Loaded)>> {
        let mut out: Vec<(u64, Loaded)> = Vec::new();
        for (at, path) in &self.swap_at {
            if out.last().is_some_and(|(prev, _)| prev >= at) {
                bail!(
                    "--swap-at {at}:{}: swap points must increase",
                    path.display()
                );
            }
            out.push((*at, common::load_object(path)?));
        }
        Ok(out)
    }
}

/// The program of a swapped-in object that takes over from `program`: the one of the same name, else its only XDP
/// program.
pub fn swap_program(loaded: &Loaded, path: &std::path::Path, program: &str) -> Result<String> {
    let xdp: Vec<&str> = loaded
        .spec
        .programs
        .iter()
        .filter(|p| is_xdp(&p.section))
        .map(|p| p.name.as_str())
        .collect();
    if xdp.contains(&program) {
        return Ok(program.to_string());
    }
    match xdp.as_slice() {
        [only] => Ok(only.to_string()),
        _ => bail!(
            "--swap-at {}: no XDP program {program:?} and not just one XDP program (XDP programs: {})",
            path.display(),
            xdp.join(", ")
        ),
    }
}

/// Whether a program is an XDP program (its section is `xdp` or `xdp/...`, `xdp.frags`, ...).
pub fn is_xdp(section: &str) -> bool {
    section == "xdp" || section.starts_with("xdp/") || section.starts_with("xdp.")
}

/// The object's XDP programs, as `name in section`, for messages.
fn xdp_list(spec: &ObjectSpec) -> String {
    let list: Vec<String> = spec
        .programs
        .iter()
        .filter(|p| is_xdp(&p.section))
        .map(|p| format!("{} in {}", p.name, p.section))
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

/// The XDP programs a command runs: the one `--program` names (refused, listing the XDP programs, when it is not
/// one), else every XDP program of the object in order.
pub fn xdp_programs(spec: &ObjectSpec, args: &ProgramArgs) -> Result<Vec<String>> {
    let object = args.object.display();
    if let Some(name) = &args.program {
        let Some(p) = spec.program(Some(name)) else {
            bail!(
                "{object}: no program {name:?} in the object (XDP programs: {})",
                xdp_list(spec)
            );
        };
        if !is_xdp(&p.section) {
            bail!(
                "{object}: {} is a {} program, not an XDP program (XDP programs: {})",
                p.name,
                p.section,
                xdp_list(spec)
            );
        }
        return Ok(vec![p.name.clone()]);
    }
    let all: Vec<String> = spec
        .programs
        .iter()
        .filter(|p| is_xdp(&p.section))
        .map(|p| p.name.clone())
        .collect();
    if all.is_empty() {
        let others: Vec<String> = spec
            .programs
            .iter()
            .map(|p| format!("{} in {}", p.name, p.section))
            .collect();
        bail!(
            "{object}: no XDP program in the object (programs: {})",
            if others.is_empty() {
                "none".into()
            } else {
                others.join(", ")
            }
        );
    }
    Ok(all)
}

/// The one XDP program `run` runs: `--program`, the object's only XDP program, or the one named like the file
/// (`tail_dispatch.o` runs `tail_dispatch`); otherwise an error naming the choices.
pub fn one_xdp_program(spec: &ObjectSpec, args: &ProgramArgs) -> Result<String> {
    let all = xdp_programs(spec, args)?;
    if let [only] = all.as_slice() {
        return Ok(only.clone());
    }
    let stem = args.object.file_stem().and_then(|s| s.to_str());
    if let Some(p) = all.iter().find(|p| Some(p.as_str()) == stem) {
        return Ok(p.clone());
    }
    bail!(
        "{}: the object has several programs, choose one with --program (XDP programs: {})",
        args.object.display(),
        xdp_list(spec)
    )
}

/// Interfaces (ifindex, receive queues) packets arrive on, preloaded device maps name and routes point to: the
/// kernel needs them to exist.
pub fn devices(
    trace: &TraceArgs,
    spec: &ObjectSpec,
    preload: Option<&MapsFile>,
) -> Result<Vec<(u32, u32)>> {
    if trace.ifindex == 1 && trace.rx_queues > 1 {
        bail!("ifindex 1 is the loopback device, which has one receive queue: give --ifindex N with --rx-queues");
    }
    let mut devices = vec![(trace.ifindex, trace.rx_queues)];
    // A trace over several ports (pcapng interfaces) arrives on ifindex --ifindex + port.
    let ports = crate::trace::interfaces(&trace.pcap)
        .map(|i| i.into_iter().max().unwrap_or(0))
        .unwrap_or(0);
    devices.extend((1..=ports).map(|p| (trace.ifindex + p, trace.rx_queues)));
    if let Some(file) = preload {
        for (m, map) in spec.maps.iter().enumerate() {
            if !DEVMAP_TYPES.contains(&map.map_type) {
                continue;
            }
            for value in file.values_of(&spec.maps[m].name) {
                if let Some(b) = value.get(..4) {
                    let ifindex = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    if ifindex > 1 {
                        devices.push((ifindex, 1));
                    }
                }
            }
        }
    }
    let routes = common::load_routes(trace)?;
    devices.extend(
        crate::routes::interfaces(&routes)
            .into_iter()
            .map(|i| (i, 1)),
    );
    devices.sort();
    devices.dedup_by_key(|d| d.0);
    Ok(devices)
}

/// What every backend of one command is created from.
pub struct Session<'a> {
    /// The object.
    pub loaded: &'a Loaded,
    /// Its path.
    pub args: &'a ProgramArgs,
    /// The trace's options (interfaces, routes, maps).
    pub trace: &'a TraceArgs,
    /// How programs run.
    pub config: Config,
    /// The `--maps` preload.
    pub preload: Option<MapsFile>,
    /// The interfaces the kernel needs.
    pub devices: Vec<(u32, u32)>,
    /// The backends' options.
    pub options: Options,
    /// `--swap-at`: the objects swapped in, with the packet each takes over from.
    pub swaps: Vec<(u64, Loaded, PathBuf)>,
}

impl<'a> Session<'a> {
    /// Reads the `--maps` and `--routes` files, works out the interfaces, and sets the backends' options for
    /// `entries`: ring buffers read as [`BackendArgs::rings_after_trace`] decides, after the trace when
    /// `rings_after_by_default`.
    pub fn new(
        loaded: &'a Loaded,
        args: &'a ProgramArgs,
        trace: &'a TraceArgs,
        backend: &BackendArgs,
        config: Config,
        entries: &[&'static Entry],
        rings_after_by_default: bool,
    ) -> Result<Session<'a>> {
        let preload = trace.maps.as_deref().map(common::load_maps).transpose()?;
        let devices = devices(trace, &loaded.spec, preload.as_ref())?;
        let mut options = Options {
            rings_after_trace: backend.rings_after_trace(entries, rings_after_by_default)?,
            ..backend.options()
        };
        options.ebpflow.first_ifindex = trace.ifindex;
        if let Some(path) = &backend.warp_profile {
            let frames = crate::trace::read(path)?;
            options.warp_profile = frames.into_iter().map(|p| p.data).collect();
        }
        if !backend.warp_param.is_empty() {
            options.warp_params = Some(crate::cmd_compile::warp_params(&backend.warp_param)?);
        }
        let swaps = backend
            .swaps()?
            .into_iter()
            .zip(&backend.swap_at)
            .map(|((at, loaded), (_, path))| (at, loaded, path.clone()))
            .collect();
        Ok(Session {
            loaded,
            args,
            trace,
            config: Config {
                routes: common::load_routes(trace)?,
                ..config
            },
            preload,
            devices,
            options,
            swaps,
        })
    }

    /// Creates `entry`'s backend for `program` and preloads its maps.
    pub fn create(&self, entry: &Entry, program: &str) -> Result<Box<dyn Backend>> {
        let object = self.args.object.display().to_string();
        let mut options = self.options.clone();
        for (at, loaded, path) in &self.swaps {
            options.ebpflow.swaps.push(hwxdp_backend::Swap {
                at: *at,
                spec: std::sync::Arc::new(loaded.spec.clone()),
                object: path.clone(),
                program: swap_program(loaded, path, program)?,
            });
        }
        let options = if entry.options.contains(&"--swap-at") {
            options
        } else {
            self.options.clone()
        };
        let setup = Setup {
            object: &self.args.object,
            elf: &self.loaded.elf,
            spec: &self.loaded.spec,
            program,
            config: &self.config,
            devices: &self.devices,
            options: &options,
            notify: Some(crate::progress::note),
        };
        let mut backend = (entry.create)(&setup).with_context(|| object.clone())?;
        if let (Some(file), Some(path)) = (&self.preload, &self.trace.maps) {
            hwxdp_maps::json::preload(backend.maps(), file)
                .with_context(|| format!("{} ({})", path.display(), entry.name))?;
        }
        Ok(backend)
    }

    /// Creates `entry`'s backend for `program` of the swapped-in object `loaded` (at `path`), with no `--maps`
    /// preload (the preload names the run's object's maps).
    pub fn create_swapped(
        &self,
        entry: &Entry,
        loaded: &Loaded,
        path: &std::path::Path,
        program: &str,
    ) -> Result<Box<dyn Backend>> {
        let setup = Setup {
            object: path,
            elf: &loaded.elf,
            spec: &loaded.spec,
            program,
            config: &self.config,
            devices: &self.devices,
            options: &self.options,
            notify: Some(crate::progress::note),
        };
        (entry.create)(&setup).with_context(|| path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(names: &[&str]) -> Vec<&'static Entry> {
        names
            .iter()
            .map(|n| registry::find(n).expect("registered"))
            .collect()
    }

    #[test]
    fn every_side_reads_its_rings_alike_and_a_batch_backend_after_the_trace() {
        let args = BackendArgs::default();
        assert!(!args
            .rings_after_trace(&entries(&["interp", "hxdp"]), false)
            .unwrap());
        assert!(args.rings_after_trace(&entries(&["interp"]), true).unwrap());
        assert!(args
            .rings_after_trace(&entries(&["interp", "ehdl-rtl"]), false)
            .unwrap());
        let per_packet = BackendArgs {
            rings: Some(RingsArg::Packet),
            ..BackendArgs::default()
        };
        assert!(!per_packet
            .rings_after_trace(&entries(&["interp"]), true)
            .unwrap());
        let err = per_packet
            .rings_after_trace(&entries(&["interp", "ehdl-rtl"]), false)
            .expect_err("a batch backend cannot read per packet")
            .to_string();
        assert!(
            err.contains("--backend ehdl-rtl runs the trace as one batch"),
            "{err}"
        );
    }

    #[test]
    fn all_means_every_backend_and_the_kernel_only_where_asked() {
        let all = BackendArgs {
            backend: vec!["all".into()],
            ..BackendArgs::default()
        };
        let names = |kernel| -> Vec<&str> {
            all.entries(&[], kernel)
                .unwrap()
                .iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(
            names(false),
            [
                "interp",
                "hxdp",
                "hxdp-rtl",
                "ehdl-rtl",
                "warp",
                "warp-interp",
                "warp-rtl",
                "ebpflow",
                "ebpflow-rtl"
            ]
        );
        assert_eq!(
            names(true),
            [
                "kernel",
                "interp",
                "hxdp",
                "hxdp-rtl",
                "ehdl-rtl",
                "warp",
                "warp-interp",
                "warp-rtl",
                "ebpflow",
                "ebpflow-rtl"
            ]
        );
    }
}
