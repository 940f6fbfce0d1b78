//! `hwxdp synth --target hxdp`: Yosys `synth_xilinx -family xcup` of the hXDP module (or any module of its unit) at
//! a chosen lane count and memory sizes; prints the LUT, FF, BRAM, URAM, DSP and carry counts and writes them as JSON.
//! `hwxdp synth --target ehdl prog.o`: the same for the eHDL pipeline generated from a program (with or without
//! state pruning), over the primitives of `rtl/ehdl/` built into the binary.
//!
//! A target turns the command line into a [`Design`] (sources, top, parameters); everything after that (running
//! Yosys, counting, printing) is shared, so a target that synthesizes generated sources (an eHDL pipeline built from
//! a program) only adds a [`Target`] variant and its `design` function.

use anyhow::{bail, Context, Result};
use hwxdp_rtlsim::{
    rtl_files, run_synthesis_with, scan, sources_of, Device, Flow, RtlModule, SynthJob,
    SynthReport, DELAYS, DEVICES,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The module `--target hxdp` synthesizes unless `--top` says otherwise: the whole hXDP module
/// (rtl/sephirot/hxdp.sv, docs/hxdp-module.md).
const HXDP_TOP: &str = "hxdp";

/// The directory under `rtl/` holding the hXDP module's units.
const HXDP_UNIT: &str = "sephirot";

/// The module `--target ebpflow` synthesizes unless `--top` says otherwise: one eBPFlow engine (DM_FIFO, processor,
/// FSM; the instruction memory and the helper unit are outside it, shared in the NIC).
const EBPFLOW_TOP: &str = "ebpflow_engine";

/// The module `--target ebpflow` synthesizes when `--ports` or `--engines-per-port` is given without `--top`: the
/// whole NIC (rtl/ebpflow/ebpflow_nic.sv, docs/ebpflow.md "The NIC").
const EBPFLOW_NIC_TOP: &str = "ebpflow_nic";

/// The directory under `rtl/` holding the eBPFlow engine's units.
const EBPFLOW_UNIT: &str = "ebpflow";

/// The module `--target warp` synthesizes unless `--top` says otherwise: the Warp Engine at its defaults (Table 5 of
/// the warping paper, a 512-bit data path; docs/warp.md, "The engine in Verilog").
const WARP_TOP: &str = "warp_engine";

/// The directory under `rtl/` holding the Warp Engine.
const WARP_UNIT: &str = "warp";

/// Lanes when `--lanes` is not given (the hXDP paper's configuration).
const DEFAULT_LANES: u64 = 4;

/// Arguments of `hwxdp synth`.
#[derive(clap::Args)]
#[command(after_help = crate::exit::AFTER_HELP)]
pub struct Args {
    /// What to synthesize: `hxdp` is the hXDP module of `rtl/sephirot/` (built into this binary); `ehdl` is the
    /// pipeline generated from OBJECT's program; `ebpflow` is one eBPFlow engine of `rtl/ebpflow/` (the NIC with
    /// `--ports`/`--engines-per-port`), `warp` the Warp
    /// Engine of `rtl/warp/` (both `--top` and `--param` only).
    #[arg(long, value_enum)]
    target: Target,
    /// `--target ehdl`: the BPF object (built with `clang -O2 -g -target bpf`) whose program becomes the pipeline.
    pub(crate) object: Option<PathBuf>,
    /// `--target ehdl`: the program, by function or section name (needed when the object has several).
    #[arg(long, short = 'p')]
    pub(crate) program: Option<String>,
    /// `--target ehdl`: packet bus width in bits (one frame per cycle).
    #[arg(long = "data-width")]
    pub(crate) data_width: Option<u32>,
    /// `--target ehdl`: no state pruning; every stage boundary carries r0-r9 and the whole 512-byte stack (the eHDL
    /// paper's baseline).
    #[arg(long = "no-prune")]
    pub(crate) no_prune: bool,
    /// `--target ehdl`: map hazards handled by `stall` checks or by `flush` evaluation and replay [default: stall].
    #[arg(long, value_enum)]
    pub(crate) hazards: Option<crate::backends::HazardsArg>,
    /// The module to synthesize, any module of the target's unit (e.g. sephirot, maps, pkt_buffer, alu); default:
    /// the target's top.
    #[arg(long)]
    pub(crate) top: Option<String>,
    /// Lanes per bundle (1 to 8; default 4), for a top that has lanes.
    #[arg(long)]
    pub(crate) lanes: Option<u64>,
    /// Instruction memory depth in bundles.
    #[arg(long = "imem-bundles")]
    pub(crate) imem_bundles: Option<u64>,
    /// 512-byte stack frames (call depth).
    #[arg(long = "stack-frames")]
    pub(crate) stack_frames: Option<u64>,
    /// CAM entries of the maps module (its LPM_TRIE maps together; a power of two, at least 2; LRU_HASH maps are in the
    /// hashed buckets, their lists sized by `--param LRU_NODES=N`).
    #[arg(long = "map-entries")]
    pub(crate) map_entries: Option<u64>,
    /// Slots of the maps module's HASH and PERCPU_HASH maps together (hashed buckets in block RAM; their bucket
    /// rows follow, as many as the slots).
    #[arg(long = "hash-slots")]
    pub(crate) hash_slots: Option<u64>,
    /// 8-byte value rows of the maps module (a power of two, at least --map-entries).
    #[arg(long = "map-words")]
    pub(crate) map_words: Option<u64>,
    /// 8-byte words of the packet buffer's difference buffer.
    #[arg(long = "diff-entries")]
    pub(crate) diff_entries: Option<u64>,
    /// `--target ebpflow`: the NIC's ports (its `PORTS`; the top is then `ebpflow_nic` unless `--top` says otherwise).
    #[arg(long)]
    pub(crate) ports: Option<u64>,
    /// `--target ebpflow`: the NIC's engines per port (its `ENGINES_PER_PORT`; the top as for `--ports`).
    #[arg(long = "engines-per-port")]
    pub(crate) engines_per_port: Option<u64>,
    /// Any other parameter of the top, NAME=VALUE (repeatable; wins over the options above).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub(crate) params: Vec<String>,
    /// Write the counts as JSON: into a directory (an existing one, or one written with a trailing `/`) as
    /// `<top>.json`, or into this file; Yosys' log goes next to it (`<name>.yosys.log`). Without it the log is kept
    /// only when Yosys fails.
    #[arg(short = 'o', long = "out", value_name = "DIR|FILE")]
    out: Option<PathBuf>,
    /// The device the counts are shares of, and whose family the netlist is mapped for: xcu50 (Alveo U50), xcu250,
    /// xcu280, vcu118 (XCVU9P) or xc7vx690t (NetFPGA SUME, 7 series).
    #[arg(long, default_value = "xcu50")]
    device: String,
    /// The target clock in MHz that the Fmax estimate is checked against.
    #[arg(long = "clock-mhz", default_value_t = 250.0)]
    clock_mhz: f64,
    /// The Yosys program.
    #[arg(long, default_value = "yosys")]
    yosys: PathBuf,
}

/// `--device`, looked up in the table of devices.
fn chosen_device(args: &Args) -> Result<&'static Device> {
    match hwxdp_rtlsim::device(&args.device) {
        Some(d) => Ok(d),
        None => {
            let names: Vec<&str> = DEVICES.iter().map(|d| d.name).collect();
            bail!(
                "--device {}: unknown device (known: {})",
                args.device,
                names.join(", ")
            )
        }
    }
}

/// What `hwxdp synth` can synthesize.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Target {
    /// The hXDP module (`rtl/sephirot/`).
    Hxdp,
    /// An eHDL pipeline generated from a program (`rtl/ehdl/` primitives).
    Ehdl,
    /// One eBPFlow engine (`rtl/ebpflow/`).
    Ebpflow,
    /// The Warp Engine (`rtl/warp/`).
    Warp,
}

impl Target {
    /// The name on the command line and in the JSON.
    fn name(self) -> &'static str {
        match self {
            Target::Hxdp => "hxdp",
            Target::Ehdl => "ehdl",
            Target::Ebpflow => "ebpflow",
            Target::Warp => "warp",
        }
    }

    /// What Yosys is to synthesize for this target.
    fn design(self, args: &Args) -> Result<Design> {
        match self {
            Target::Hxdp => {
                let ehdl_only = [
                    ("OBJECT", args.object.is_some()),
                    ("--program", args.program.is_some()),
                    ("--data-width", args.data_width.is_some()),
                    ("--no-prune", args.no_prune),
                    ("--hazards", args.hazards.is_some()),
                ];
                if let Some((flag, _)) = ehdl_only.iter().find(|(_, given)| *given) {
                    bail!(
                        "{flag} is for --target ehdl (--target hxdp synthesizes the hXDP module)"
                    );
                }
                refuse_nic(args, "hxdp")?;
                hxdp_design(args)
            }
            Target::Ehdl => {
                refuse_nic(args, "ehdl")?;
                crate::synth_ehdl::design(args)
            }
            Target::Ebpflow => {
                refuse_foreign(args, "ebpflow")?;
                let nic = nic_sizes(args)?;
                let top = if nic.is_empty() {
                    EBPFLOW_TOP
                } else {
                    EBPFLOW_NIC_TOP
                };
                unit_design(args, EBPFLOW_UNIT, top, &nic)
            }
            Target::Warp => {
                refuse_foreign(args, "warp")?;
                refuse_nic(args, "warp")?;
                unit_design(args, WARP_UNIT, WARP_TOP, &[])
            }
        }
    }
}

/// Refuses `--ports` and `--engines-per-port` (the eBPFlow NIC's) for another target.
fn refuse_nic(args: &Args, target: &str) -> Result<()> {
    for (flag, given) in [
        ("--ports", args.ports.is_some()),
        ("--engines-per-port", args.engines_per_port.is_some()),
    ] {
        if given {
            bail!("{flag} is for --target ebpflow (the NIC), not --target {target}");
        }
    }
    Ok(())
}

/// `--ports` and `--engines-per-port`, checked (1 to 16 each, as the NIC's harness and cycle model take).
fn nic_sizes(args: &Args) -> Result<Vec<Given>> {
    let mut given = Vec::new();
    for (size, value) in [
        (Size::Ports, args.ports),
        (Size::EnginesPerPort, args.engines_per_port),
    ] {
        if let Some(value) = value {
            if !(1..=16).contains(&value) {
                bail!("{} {value}: 1 to 16", size.flag());
            }
            given.push(Given {
                size,
                value,
                explicit: true,
            });
        }
    }
    Ok(given)
}

/// The hXDP module's size options, each with whether the command line gives it.
pub(crate) fn hxdp_sizes_given(args: &Args) -> [(&'static str, bool); 7] {
    [
        ("--lanes", args.lanes.is_some()),
        ("--imem-bundles", args.imem_bundles.is_some()),
        ("--stack-frames", args.stack_frames.is_some()),
        ("--map-entries", args.map_entries.is_some()),
        ("--hash-slots", args.hash_slots.is_some()),
        ("--map-words", args.map_words.is_some()),
        ("--diff-entries", args.diff_entries.is_some()),
    ]
}

/// Refuses the options of the other targets for a target that takes only `--top` and `--param NAME=VALUE`.
fn refuse_foreign(args: &Args, target: &str) -> Result<()> {
    let ehdl = [
        ("OBJECT", args.object.is_some()),
        ("--program", args.program.is_some()),
        ("--data-width", args.data_width.is_some()),
        ("--no-prune", args.no_prune),
        ("--hazards", args.hazards.is_some()),
    ];
    let mut foreign = ehdl.into_iter().chain(hxdp_sizes_given(args));
    if let Some((flag, _)) = foreign.find(|(_, given)| *given) {
        bail!("{flag} is not for --target {target} (it takes --top and --param NAME=VALUE)");
    }
    Ok(())
}

/// Sources, top and parameters handed to Yosys.
#[derive(Debug)]
pub(crate) struct Design {
    /// Verilog sources as (path shown in Yosys' messages, text).
    pub(crate) sources: Vec<(String, String)>,
    /// The top module.
    pub(crate) top: String,
    /// Parameters of the top to override, in order.
    pub(crate) params: Vec<(String, u64)>,
    /// For a generated design, what it was generated from (e.g. the eHDL pipeline's program and options).
    pub(crate) source: Option<BTreeMap<String, serde_json::Value>>,
}

/// The hXDP target: the embedded `rtl/sephirot/` sources the top needs, and the size options turned into the top's
/// parameters.
fn hxdp_design(args: &Args) -> Result<Design> {
    unit_design(args, HXDP_UNIT, HXDP_TOP, &sizes(args)?)
}

/// The embedded sources of `rtl/<unit>/` that the top (`--top`, else `default_top`) needs, with `sizes` and
/// `--param` turned into its parameters.
fn unit_design(args: &Args, unit: &str, default_top: &str, sizes: &[Given]) -> Result<Design> {
    let files: Vec<(&str, &str)> = rtl_files()
        .iter()
        .filter(|f| hwxdp_rtlsim::unit_owns(unit, f.path))
        .map(|f| (f.path, f.text))
        .collect();
    if files.is_empty() {
        // A build from outside the repository (a published crate) has no rtl/ to embed.
        bail!(
            "this hwxdp was built without the sources of rtl/{unit}: build it from the repository"
        );
    }
    let modules = scan(files.iter().copied());
    let top = args.top.clone().unwrap_or_else(|| default_top.to_string());
    let Some(module) = modules.iter().find(|m| m.name == top) else {
        let mut names: Vec<&str> = modules.iter().map(|m| m.name.as_str()).collect();
        names.sort_unstable();
        bail!(
            "--top {top}: no module {top} in rtl/{unit} (modules: {})",
            names.join(", ")
        );
    };
    let params = parameters(module, sizes, &args.params)?;
    let sources = sources_of(&files, &top)
        .context("the module vanished between two scans")?
        .into_iter()
        .map(|(path, text)| (format!("rtl/{path}"), text.to_string()))
        .collect();
    Ok(Design {
        sources,
        top,
        params,
        source: None,
    })
}

/// A size option of the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Size {
    Lanes,
    ImemBundles,
    StackFrames,
    MapEntries,
    HashSlots,
    MapWords,
    DiffEntries,
    Ports,
    EnginesPerPort,
}

impl Size {
    /// The option's spelling.
    fn flag(self) -> &'static str {
        match self {
            Size::Lanes => "--lanes",
            Size::ImemBundles => "--imem-bundles",
            Size::StackFrames => "--stack-frames",
            Size::MapEntries => "--map-entries",
            Size::HashSlots => "--hash-slots",
            Size::MapWords => "--map-words",
            Size::DiffEntries => "--diff-entries",
            Size::Ports => "--ports",
            Size::EnginesPerPort => "--engines-per-port",
        }
    }

    /// The parameters that carry this size into `module`, with their values. The units name their own memories
    /// (`maps.ENTRIES`, `imem.BUNDLES`, address widths that must follow a depth) and `hxdp` passes maps.sv's names
    /// through; otherwise (the core, the APS) the option's own name: `LANES`, `IMEM_BUNDLES`, `STACK_FRAMES`,
    /// `MAP_ENTRIES`, `MAP_WORDS`, `DIFF_ENTRIES`.
    fn parameters(self, module: &str, value: u64) -> Vec<(&'static str, u64)> {
        match (module, self) {
            ("imem", Size::ImemBundles) => vec![("BUNDLES", value), ("AW", clog2(value).max(1))],
            ("stack", Size::StackFrames) => vec![("FRAMES", value), ("AW", clog2(value * 512))],
            // The whole module passes maps.sv's parameters through under their own names.
            ("maps" | "hxdp", Size::MapEntries) => vec![("ENTRIES", value)],
            ("maps" | "hxdp", Size::HashSlots) => vec![("HASH_SLOTS", value)],
            ("maps" | "hxdp", Size::MapWords) => vec![("MEM_WORDS", value)],
            ("maps_values", Size::MapWords) => vec![("WORDS", value), ("AW", clog2(value))],
            ("pkt_buffer" | "diff_buffer", Size::DiffEntries) => vec![("ENTRIES", value)],
            (_, Size::Lanes) => vec![("LANES", value)],
            (_, Size::ImemBundles) => vec![("IMEM_BUNDLES", value)],
            (_, Size::StackFrames) => vec![("STACK_FRAMES", value)],
            (_, Size::MapEntries) => vec![("MAP_ENTRIES", value)],
            (_, Size::HashSlots) => vec![("HASH_SLOTS", value)],
            (_, Size::MapWords) => vec![("MAP_WORDS", value)],
            (_, Size::DiffEntries) => vec![("DIFF_ENTRIES", value)],
            (_, Size::Ports) => vec![("PORTS", value)],
            (_, Size::EnginesPerPort) => vec![("ENGINES_PER_PORT", value)],
        }
    }
}

/// Bits to address `n` things (`$clog2`).
fn clog2(n: u64) -> u64 {
    u64::from(64 - n.saturating_sub(1).leading_zeros())
}

/// A size given on the command line (`explicit`) or by default.
#[derive(Clone, Copy, Debug)]
struct Given {
    size: Size,
    value: u64,
    explicit: bool,
}

/// The size options, checked; `--lanes` defaults to 4.
fn sizes(args: &Args) -> Result<Vec<Given>> {
    let options = [
        (Size::Lanes, args.lanes),
        (Size::ImemBundles, args.imem_bundles),
        (Size::StackFrames, args.stack_frames),
        (Size::MapEntries, args.map_entries),
        (Size::HashSlots, args.hash_slots),
        (Size::MapWords, args.map_words),
        (Size::DiffEntries, args.diff_entries),
    ];
    let mut given = Vec::new();
    for (size, value) in options {
        match (size, value) {
            (Size::Lanes, Some(lanes)) if !(1..=8).contains(&lanes) => {
                bail!("--lanes {lanes}: a bundle has 1 to 8 lanes")
            }
            (_, Some(0)) => bail!("{} 0: must be at least 1", size.flag()),
            (_, Some(value)) => given.push(Given {
                size,
                value,
                explicit: true,
            }),
            (Size::Lanes, None) => given.push(Given {
                size,
                value: DEFAULT_LANES,
                explicit: false,
            }),
            (_, None) => {}
        }
    }
    Ok(given)
}

/// The parameters to override on `module`: those of the size options it has (an explicit option it has no parameter
/// for is an error; the default lane count is simply not applied), then `--param NAME=VALUE`s, each replacing an
/// earlier setting of the same name. Yosys' `chparam` refuses a parameter the module lacks, so none is passed.
fn parameters(module: &RtlModule, sizes: &[Given], raw: &[String]) -> Result<Vec<(String, u64)>> {
    let has = |name: &str| module.parameters.iter().any(|p| p == name);
    let mut params: Vec<(String, u64)> = Vec::new();
    let mut set = |name: &str, value: u64| match params.iter_mut().find(|(n, _)| n == name) {
        Some(slot) => slot.1 = value,
        None => params.push((name.to_string(), value)),
    };
    for given in sizes {
        let carried = given.size.parameters(&module.name, given.value);
        let present: Vec<_> = carried.iter().filter(|(name, _)| has(name)).collect();
        if present.is_empty() {
            if given.explicit {
                bail!(
                    "{} {}: module {} has no parameter for it ({})",
                    given.size.flag(),
                    given.value,
                    module.name,
                    parameter_list(module)
                );
            }
            continue;
        }
        for (name, value) in present {
            set(name, *value);
        }
    }
    for item in raw {
        let (name, value) = item
            .split_once('=')
            .with_context(|| format!("--param {item}: expected NAME=VALUE"))?;
        let value: u64 = value
            .trim()
            .parse()
            .with_context(|| format!("--param {item}: the value is not a non-negative integer"))?;
        let name = name.trim();
        if !has(name) {
            bail!(
                "--param {item}: module {} has no parameter {name} ({})",
                module.name,
                parameter_list(module)
            );
        }
        set(name, value);
    }
    Ok(params)
}

/// `module`'s parameters for an error message.
fn parameter_list(module: &RtlModule) -> String {
    if module.parameters.is_empty() {
        "it has no parameters".to_string()
    } else {
        format!("its parameters: {}", module.parameters.join(", "))
    }
}

/// What `hwxdp synth -o FILE` writes.
#[derive(Serialize)]
struct Summary<'a> {
    target: &'a str,
    top: &'a str,
    /// The parameters overridden; the others keep their defaults in the source.
    parameters: BTreeMap<&'a str, u64>,
    /// LUTs as logic (LUT1-LUT6).
    lut: u64,
    /// LUTs as memory (distributed RAM and shift registers), counted in LUTs.
    lutram: u64,
    ff: u64,
    /// Block RAM in RAMB36 equivalents (a RAMB18E2 is half of one).
    bram36: f64,
    ramb18: u64,
    ramb36: u64,
    uram: u64,
    dsp: u64,
    carry: u64,
    latch: u64,
    seconds: f64,
    yosys_version: &'a str,
    /// The device the shares are of, and the out-of-context flow (no I/O buffers).
    device: &'a str,
    out_of_context: bool,
    /// Percent of the device: lut (logic and LUTRAM), ff, bram, uram, dsp.
    share_percent: BTreeMap<&'a str, f64>,
    fits: bool,
    /// The longest register-to-register path: cells by kind and the estimate (see `estimate_assumes`).
    logic_levels: u64,
    path_luts: u64,
    path_muxes: u64,
    path_carries: u64,
    fmax_estimate_mhz: f64,
    estimate_assumes: String,
    target_clock_mhz: f64,
    meets_clock: bool,
    /// Every cell type of the netlist and its count.
    cells: &'a BTreeMap<String, u64>,
    /// For a generated design, what it was generated from (`--target ehdl`: object, program, data width, pruning,
    /// stages, state flip-flops).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    source: Option<&'a BTreeMap<String, serde_json::Value>>,
}

/// Runs `hwxdp synth`.
pub fn run(args: Args) -> Result<ExitCode> {
    let device = chosen_device(&args)?;
    if !(args.clock_mhz > 0.0 && args.clock_mhz.is_finite()) {
        bail!("--clock-mhz {}: must be a positive number", args.clock_mhz);
    }
    let design = args.target.design(&args)?;
    let out = match &args.out {
        Some(out) => Some(crate::output::file_or_dir(
            out,
            &format!("{}.json", design.top),
        )?),
        None => None,
    };
    if let Some(dir) = out
        .as_deref()
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty())
    {
        crate::common::create_dir(dir)?;
    }
    let log = log_path(out.as_deref(), &design.top);
    let what = describe(&design);
    let job = SynthJob {
        top: design.top.clone(),
        sources: design.sources.clone(),
        params: design.params.clone(),
        log: log.clone(),
        yosys: args.yosys.clone(),
    };
    let spinner = spinner(&what);
    let flow = Flow::for_device(device);
    let result = run_synthesis_with(&job, &flow, &mut |pass| {
        spinner.set_message(pass.to_string())
    });
    spinner.finish_and_clear();
    let report = result.with_context(|| format!("synthesizing {what}"))?;
    let path = report.path.unwrap_or_default();
    let shares = report.resources.shares(device);
    let summary = Summary {
        device: device.name,
        out_of_context: flow.out_of_context,
        share_percent: shares
            .iter()
            .map(|s| (s.resource, (s.percent() * 100.0).round() / 100.0))
            .collect(),
        fits: shares.iter().all(|s| s.fits()),
        logic_levels: path.levels(),
        path_luts: path.luts,
        path_muxes: path.muxes,
        path_carries: path.carries,
        fmax_estimate_mhz: (path.fmax_mhz(&DELAYS) * 10.0).round() / 10.0,
        estimate_assumes: assumptions(),
        target_clock_mhz: args.clock_mhz,
        meets_clock: path.fmax_mhz(&DELAYS) >= args.clock_mhz,
        target: args.target.name(),
        top: &design.top,
        parameters: design
            .params
            .iter()
            .map(|(n, v)| (n.as_str(), *v))
            .collect(),
        lut: report.resources.lut,
        lutram: report.resources.lutram,
        ff: report.resources.ff,
        bram36: report.resources.bram36(),
        ramb18: report.resources.ramb18,
        ramb36: report.resources.ramb36,
        uram: report.resources.uram,
        dsp: report.resources.dsp,
        carry: report.resources.carry,
        latch: report.resources.latch,
        seconds: (report.seconds * 10.0).round() / 10.0,
        yosys_version: &report.yosys_version,
        cells: &report.cells,
        source: design.source.as_ref(),
    };
    print!("{}", table(&what, &report, device, args.clock_mhz));
    match &out {
        Some(out) => {
            crate::common::write_json(out, &summary)?;
            println!("wrote {} (Yosys log: {})", out.display(), log.display());
        }
        // Nobody asked for the log of a run that succeeded.
        None => {
            let _ = std::fs::remove_file(&log);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `top (NAME=VALUE ...)` for messages.
fn describe(design: &Design) -> String {
    if design.params.is_empty() {
        return design.top.clone();
    }
    let params: Vec<String> = design
        .params
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    format!("{} ({})", design.top, params.join(" "))
}

/// What the Fmax estimate assumes, for the table and the JSON.
fn assumptions() -> String {
    format!(
        "{} ns per LUT level, {} ns per MUXF, {} ns per carry cell, {} ns for the registers \
         (this project's planning figures for UltraScale+ -2, docs/rtl.md \"Synthesis\"; not a timing analysis)",
        DELAYS.lut_ns, DELAYS.mux_ns, DELAYS.carry_ns, DELAYS.register_ns
    )
}

/// The resource table printed on standard output, with the shares of `device`, the longest path, the Fmax estimate
/// and the verdicts against the device and a target clock of `clock_mhz`.
fn table(what: &str, report: &SynthReport, device: &Device, clock_mhz: f64) -> String {
    let r = &report.resources;
    let mut out = format!(
        "{what}: Yosys synth_xilinx -family {} -noiopad (out of context), {:.1} s ({})\n",
        device.family, report.seconds, report.yosys_version
    );
    let shares = r.shares(device);
    let share = |i: usize| {
        let s = &shares[i];
        format!("{:>6.1}% of {} {}", s.percent(), s.capacity, device.name)
    };
    let rows = [
        (
            "LUT",
            r.lut.to_string(),
            format!("LUT1-LUT6, as logic; with LUTRAM {}", share(0)),
        ),
        (
            "LUTRAM",
            r.lutram.to_string(),
            "LUTs as distributed RAM and shift registers".to_string(),
        ),
        (
            "FF",
            r.ff.to_string(),
            format!("FDRE/FDSE/FDCE/FDPE {}", share(1)),
        ),
        (
            "BRAM",
            format!("{:.1}", r.bram36()),
            format!(
                "RAMB36 equivalents: {} RAMB36, {} RAMB18 {}",
                r.ramb36,
                r.ramb18,
                share(2)
            ),
        ),
        ("URAM", r.uram.to_string(), format!("URAM288 {}", share(3))),
        ("DSP", r.dsp.to_string(), format!("DSP48 {}", share(4))),
        ("CARRY", r.carry.to_string(), carry_cells(&report.cells)),
    ];
    for (name, value, note) in rows {
        out.push_str(&format!("  {name:<8}{value:>10}  {note}\n"));
    }
    if r.latch > 0 {
        out.push_str(&format!(
            "  {:<8}{:>10}  latches (docs/rtl.md: there should be none)\n",
            "LATCH", r.latch
        ));
    }
    if let Some(path) = &report.path {
        out.push_str(&format!(
            "  {:<8}{:>10}  logic levels on the longest path between registers, memories and ports ({} LUT, {} MUXF, {} carry)\n",
            "LEVELS",
            path.levels(),
            path.luts,
            path.muxes,
            path.carries
        ));
        out.push_str(&format!(
            "  {:<8}{:>10.0}  MHz, an ESTIMATE from the levels: {}\n",
            "FMAX~",
            path.fmax_mhz(&DELAYS),
            assumptions()
        ));
    }
    for line in hwxdp_rtlsim::verdicts(r, report.path.as_ref(), device, clock_mhz) {
        out.push_str(&format!("{line}\n"));
    }
    out
}

/// The carry cell types of a netlist and their counts (Yosys 0.23 maps UltraScale+ carry chains to CARRY4 cells).
fn carry_cells(cells: &BTreeMap<String, u64>) -> String {
    let present: Vec<String> = ["CARRY8", "CARRY4"]
        .iter()
        .filter_map(|cell| cells.get(*cell).map(|count| format!("{count} {cell}")))
        .collect();
    if present.is_empty() {
        "CARRY8/CARRY4".to_string()
    } else {
        present.join(", ")
    }
}

/// A spinner with the elapsed time and Yosys' current pass on a terminal; a single line otherwise.
fn spinner(what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        eprintln!("synthesizing {what} with Yosys");
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{spinner} synthesizing {prefix} [{elapsed_precise}] {wide_msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.set_prefix(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// Where Yosys' log goes: next to the JSON (`out.json` gives `out.yosys.log`), else in the temporary directory.
fn log_path(out: Option<&Path>, top: &str) -> PathBuf {
    match out {
        Some(out) => out.with_extension("yosys.log"),
        None => std::env::temp_dir().join(format!(
            "hwxdp-synth-{top}-{}.yosys.log",
            std::process::id()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(name: &str, parameters: &[&str]) -> RtlModule {
        let params: String = parameters
            .iter()
            .map(|p| format!("parameter integer {p} = 1,"))
            .collect::<String>();
        let header = if parameters.is_empty() {
            String::new()
        } else {
            format!("#({})", params.trim_end_matches(','))
        };
        let text = format!("module {name} {header} (input wire logic a_i);\nendmodule\n");
        scan([("x.sv", text.as_str())]).remove(0)
    }

    /// `hwxdp synth ARGS` as clap reads it.
    fn synth_args(args: &[&str]) -> Args {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        use clap::Parser as _;
        Cli::try_parse_from(std::iter::once("synth").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{e}"))
            .args
    }

    #[test]
    fn ports_and_engines_per_port_make_the_ebpflow_nic() {
        let args = synth_args(&[
            "--target",
            "ebpflow",
            "--ports",
            "4",
            "--engines-per-port",
            "2",
        ]);
        let design = args.target.design(&args).expect("design");
        assert_eq!(design.top, "ebpflow_nic");
        assert_eq!(
            design.params,
            [
                ("PORTS".to_string(), 4),
                ("ENGINES_PER_PORT".to_string(), 2)
            ]
        );
        assert!(design
            .sources
            .iter()
            .any(|(p, _)| p == "rtl/ebpflow/ebpflow_crossbar.sv"));
        let engine = synth_args(&["--target", "ebpflow"]);
        assert_eq!(
            engine.target.design(&engine).expect("engine").top,
            "ebpflow_engine"
        );
        let err = |a: &[&str]| {
            let args = synth_args(a);
            args.target.design(&args).expect_err("refused").to_string()
        };
        assert_eq!(
            err(&["--target", "hxdp", "--ports", "2"]),
            "--ports is for --target ebpflow (the NIC), not --target hxdp"
        );
        assert_eq!(
            err(&["--target", "ebpflow", "--ports", "0"]),
            "--ports 0: 1 to 16"
        );
        assert!(err(&[
            "--target",
            "ebpflow",
            "--top",
            "ebpflow_engine",
            "--ports",
            "2"
        ])
        .starts_with("--ports 2: module ebpflow_engine has no parameter for it"),);
    }

    fn given(size: Size, value: u64, explicit: bool) -> Given {
        Given {
            size,
            value,
            explicit,
        }
    }

    #[test]
    fn sizes_map_to_each_units_own_parameters() {
        let imem = module("imem", &["LANES", "BUNDLES", "AW"]);
        let params = parameters(
            &imem,
            &[
                given(Size::Lanes, 2, true),
                given(Size::ImemBundles, 512, true),
            ],
            &[],
        )
        .expect("imem has both");
        assert_eq!(
            params,
            [
                ("LANES".to_string(), 2),
                ("BUNDLES".into(), 512),
                ("AW".into(), 9)
            ]
        );
        let core = module("sephirot", &["LANES", "IMEM_BUNDLES", "STACK_FRAMES"]);
        let params = parameters(
            &core,
            &[
                given(Size::Lanes, 4, false),
                given(Size::StackFrames, 2, true),
            ],
            &["LANES=8".to_string()],
        )
        .expect("the core has both");
        assert_eq!(
            params,
            [("LANES".to_string(), 8), ("STACK_FRAMES".into(), 2)]
        );
        let top = module(
            "hxdp",
            &[
                "LANES",
                "IMEM_BUNDLES",
                "ENTRIES",
                "MEM_WORDS",
                "DIFF_ENTRIES",
            ],
        );
        let sizes = [
            given(Size::Lanes, 4, false),
            given(Size::MapEntries, 64, true),
            given(Size::MapWords, 1024, true),
            given(Size::DiffEntries, 16, true),
        ];
        assert_eq!(
            parameters(&top, &sizes, &[]).expect("hxdp has them all"),
            [
                ("LANES".to_string(), 4),
                ("ENTRIES".into(), 64),
                ("MEM_WORDS".into(), 1024),
                ("DIFF_ENTRIES".into(), 16)
            ]
        );
        let stack = module("stack", &["LANES", "FRAMES", "AW"]);
        let params = parameters(&stack, &[given(Size::StackFrames, 8, true)], &[]).expect("stack");
        assert_eq!(params, [("FRAMES".to_string(), 8), ("AW".into(), 12)]);
    }

    #[test]
    fn options_a_module_lacks_are_refused_unless_defaulted() {
        let alu = module("alu", &[]);
        assert_eq!(
            parameters(&alu, &[given(Size::Lanes, 4, false)], &[]).expect("default lanes skipped"),
            []
        );
        let err = parameters(&alu, &[given(Size::Lanes, 2, true)], &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--lanes 2: module alu has no parameter for it (it has no parameters)"
        );
        let maps = module("maps", &["MAPS", "ENTRIES"]);
        let err = parameters(&maps, &[], &["DEPTH=3".to_string()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--param DEPTH=3: module maps has no parameter DEPTH (its parameters: MAPS, ENTRIES)"
        );
        assert!(parameters(&maps, &[], &["MAPS".to_string()]).is_err());
        assert!(parameters(&maps, &[], &["MAPS=-1".to_string()]).is_err());
    }

    #[test]
    fn clog2_matches_verilog_and_the_log_sits_beside_the_json() {
        assert_eq!(
            [1, 2, 3, 4, 5, 512, 513, 4096].map(clog2),
            [0, 1, 2, 2, 3, 9, 10, 12]
        );
        assert_eq!(
            log_path(Some(Path::new("d/out.json")), "alu"),
            Path::new("d/out.yosys.log")
        );
        assert!(log_path(None, "alu").starts_with(std::env::temp_dir()));
    }
}
