//! `hwxdp compile --target hxdp`: an object to an hXDP image and listing, with a report of what each pass did.
//! `hwxdp compile --target ehdl`: an object to an eHDL pipeline (text diagram, Graphviz, JSON, Verilog).
//! `hwxdp compile --target warp`: an object to Warp Engine rules and their configuration ([`warp`]).
//! `hwxdp compile --target ebpflow`: the eBPFlow loader's image, map table and report ([`ebpflow`]).

mod ebpflow;
mod warp;
pub use warp::params as warp_params;

use crate::common::{self, ProgramArgs};
use anyhow::{bail, Context, Result};
use hwxdp_hxdp::{compile_object, isa, Options};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `hwxdp compile`.
#[derive(clap::Args)]
#[command(after_help = crate::exit::AFTER_HELP)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    /// What to compile for.
    #[arg(long, value_parser = ["hxdp", "ehdl", "warp", "ebpflow"])]
    target: String,
    /// Directory for `<program>.hxdp` (the image) and `<program>.lst` (the listing); for ehdl,
    /// `<program>.pipeline.txt`, `<program>.pipeline.dot`, `<program>.ehdl.json` and the Verilog module
    /// `ehdl_<program>.sv` (a program the generator has no Verilog for is an error, after the diagrams are written);
    /// for warp, `<program>.warp.json` (rules, key extractors, restores, report), `<program>.rules.txt` (the same as
    /// tables), `<program>.report.json`, the hXDP image with an entry bundle at every restore slot (`<program>.hxdp`,
    /// `<program>.lst`, `<program>.entries.json`: slot -> bundle) and, with `--pcap`, `<program>.paths.json`.
    #[arg(short = 'o', long = "out")]
    out: PathBuf,
    /// Lanes per bundle (1 to 8).
    #[arg(long, default_value_t = 4)]
    lanes: usize,
    /// Passes to switch off: bounds, zeroing, three-operand, six-byte, exit, rename, code-motion, parallel-branches.
    #[arg(long = "disable", value_delimiter = ',')]
    disable: Vec<String>,
    /// eHDL: packet bus width in bits (one frame per cycle).
    #[arg(long = "data-width", default_value_t = 512)]
    data_width: u32,
    /// eHDL: no state pruning; every stage boundary carries r0-r9 and the whole 512-byte stack (the eHDL paper's
    /// baseline).
    #[arg(long = "no-prune")]
    no_prune: bool,
    /// eHDL: map hazards handled by `stall` checks or by `flush` evaluation and replay (the eHDL paper's design:
    /// replayed from the input, or from an elastic buffer after the last map write before the flush stage; refused,
    /// naming the instruction, when the checks end at several stages or a map write falls inside a check).
    #[arg(long, value_enum, default_value = "stall")]
    hazards: crate::backends::HazardsArg,
    /// warp: an engine parameter (Table 5 of the warping paper) as NAME=VALUE, comma-separated or repeated: chunk
    /// (128), key-bytes (16), key-extractors (12), key-read (2), tcam-entries (64), stack-extractors (10),
    /// stack-read (8), stack-buffer (136), reg-extractors (9), reg-read (8), range-entries (16).
    #[arg(long = "warp-param", value_delimiter = ',', help_heading = "Warp")]
    warp_param: Vec<String>,
    /// warp: run this trace on the reference machine plainly and warped, fail on the first packet whose verdict,
    /// bytes or maps differ, and report the processor's instructions per path without and with warping.
    #[arg(long, help_heading = "Warp")]
    pcap: Option<PathBuf>,
    /// warp: map entries to load before the trace (`--maps` of `hwxdp run`).
    #[arg(long, requires = "pcap", help_heading = "Warp")]
    maps: Option<PathBuf>,
    /// warp: the route table of `bpf_fib_lookup` for the trace (`--routes` of `hwxdp run`).
    #[arg(long, requires = "pcap", help_heading = "Warp")]
    routes: Option<PathBuf>,
    /// warp: `ingress_ifindex` of the trace's packets.
    #[arg(long, default_value_t = 1, help_heading = "Warp")]
    ifindex: u32,
    /// warp: receive queues the trace's packets are spread over by RSS.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256), help_heading = "Warp")]
    rx_queues: u32,
}

/// Compile options from `--lanes` and `--disable`.
pub fn options(lanes: usize, disable: &[String]) -> Result<Options> {
    Options::with_disabled(lanes, disable).map_err(anyhow::Error::msg)
}

/// Compiles `object`'s programs into an image; returns it with the entry program's index.
pub fn build(
    program: &ProgramArgs,
    spec: &hwxdp_object::ObjectSpec,
    options: &Options,
) -> Result<(hwxdp_hxdp::Compiled, usize)> {
    let name = common::find_program(spec, program.chosen(spec).as_deref(), &program.object)?
        .name
        .clone();
    let entry = spec
        .programs
        .iter()
        .position(|p| p.name == name)
        .context("program vanished")?;
    let compiled = compile_object(spec, entry, options)
        .with_context(|| program.object.display().to_string())?;
    Ok((compiled, entry))
}

/// Runs `hwxdp compile`: every program [`programs`] picks, in turn. A program that gets no artifact for the target
/// (no image for hxdp, no Verilog module for ehdl) is an error; with several programs the others are still compiled,
/// each error is printed as it comes, and the exit code is 2.
pub fn run(args: Args) -> Result<ExitCode> {
    if args.target != "ehdl" && args.no_prune {
        bail!("--no-prune turns off the eHDL front end's state pruning: it needs --target ehdl");
    }
    if args.target != "warp" && (!args.warp_param.is_empty() || args.pcap.is_some()) {
        bail!("--warp-param and --pcap configure and check the Warp Engine's rules: they need --target warp");
    }
    let loaded = common::load_object(&args.program.object)?;
    let spec = &loaded.spec;
    let chosen = programs(&args.program, spec)?;
    let hxdp_options = match args.target.as_str() {
        "ehdl" | "warp" | "ebpflow" => None,
        _ => Some(options(args.lanes, &args.disable)?),
    };
    let mut failed = Vec::new();
    for &index in &chosen {
        let program = &spec.programs[index];
        let done = match &hxdp_options {
            Some(options) => run_hxdp(&args, spec, &program.name, options),
            None if args.target == "warp" => warp::run(&args, spec, program),
            None if args.target == "ebpflow" => ebpflow::run(&args, spec, program),
            None => run_ehdl(&args, spec, program),
        };
        match done {
            Ok(()) => {}
            Err(e) if chosen.len() == 1 => return Err(e),
            Err(e) => {
                eprintln!("hwxdp: {}", common::one_line(&e));
                failed.push(program.name.as_str());
            }
        }
    }
    if failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "hwxdp: {}: {} of {} programs got no {} ({})",
        args.program.object.display(),
        failed.len(),
        chosen.len(),
        artifact(&args.target),
        failed.join(", ")
    );
    Ok(ExitCode::from(crate::exit::ERROR))
}

/// What `compile --target` must write for a program to count as compiled.
fn artifact(target: &str) -> &'static str {
    match target {
        "ehdl" => "Verilog module",
        "warp" => "rule set",
        "ebpflow" => "eBPFlow image",
        _ => "hXDP image",
    }
}

/// The programs `compile` handles, by index into the object's programs: the one `--program` names; else every XDP
/// program (section `xdp*`) in the object's order; else, in an object without XDP sections, the one program
/// [`ProgramArgs::chosen`] and [`common::find_program`] pick, as the other commands do.
fn programs(program: &ProgramArgs, spec: &hwxdp_object::ObjectSpec) -> Result<Vec<usize>> {
    let position = |name: &str| {
        spec.programs
            .iter()
            .position(|p| p.name == name)
            .context("program vanished")
    };
    if let Some(name) = &program.program {
        let found = common::find_program(spec, Some(name), &program.object)?;
        return Ok(vec![position(&found.name)?]);
    }
    let xdp: Vec<usize> = (0..spec.programs.len())
        .filter(|&i| spec.programs[i].section.starts_with("xdp"))
        .collect();
    if !xdp.is_empty() {
        return Ok(xdp);
    }
    let found = common::find_program(spec, program.chosen(spec).as_deref(), &program.object)?;
    Ok(vec![position(&found.name)?])
}

/// `compile --target hxdp` for the program called `name`: the image (every program of the object that compiles, so
/// that tail calls find theirs, entered at `name`) and its listing; prints `name`'s report.
fn run_hxdp(
    args: &Args,
    spec: &hwxdp_object::ObjectSpec,
    name: &str,
    options: &Options,
) -> Result<()> {
    let entry_args = ProgramArgs {
        object: args.program.object.clone(),
        program: Some(name.to_string()),
    };
    let (compiled, entry) = build(&entry_args, spec, options)?;
    common::create_dir(&args.out)?;
    let name = &compiled.names[entry];
    let image_path = args.out.join(format!("{name}.hxdp"));
    write(&image_path, &compiled.image.encode())?;
    let listing = isa::listing(&compiled.image, &compiled.names);
    write(&args.out.join(format!("{name}.lst")), listing.as_bytes())?;
    let report = compiled
        .reports
        .iter()
        .find(|r| &r.name == name)
        .context("the entry program has no report")?;
    let passes: Vec<String> = report
        .after_pass
        .iter()
        .map(|(p, n)| format!("{p} {n}"))
        .collect();
    println!(
        "{}: {} eBPF instructions; after passes: {}; {} bundles of {} lanes; static IPC {:.2}",
        report.name,
        report.ebpf_insns,
        if passes.is_empty() {
            "none".to_string()
        } else {
            passes.join(", ")
        },
        report.bundles,
        options.lanes,
        report.static_ipc()
    );
    // A pass that works on part of a large program says so (the bundles may be more than the whole pass would give).
    for note in &report.degraded {
        println!("{}: large program: {note}", report.name);
    }
    let others: Vec<&str> = compiled
        .reports
        .iter()
        .filter(|r| &r.name != name)
        .map(|r| r.name.as_str())
        .collect();
    if others.is_empty() {
        println!("wrote {}", image_path.display());
    } else {
        println!(
            "wrote {} (the image also holds {}, for tail calls)",
            image_path.display(),
            others.join(", ")
        );
    }
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("{}: cannot write", path.display()))
}

/// `compile --target ehdl` for `program`: the pipeline diagrams, then the Verilog module (the artifact; an error when
/// the generator has no template for an op, after the diagrams are written) and the hazard model.
fn run_ehdl(
    args: &Args,
    spec: &hwxdp_object::ObjectSpec,
    program: &hwxdp_object::ProgramSpec,
) -> Result<()> {
    let options = hwxdp_ehdl::Options {
        data_width: args.data_width,
        prune: !args.no_prune,
        hazards: args.hazards.into(),
        ..hwxdp_ehdl::Options::default()
    };
    let pipeline = hwxdp_ehdl::compile_object(program, &spec.programs, &spec.maps, &options)
        // The front end's errors name the program themselves.
        .with_context(|| args.program.object.display().to_string())?;
    common::create_dir(&args.out)?;
    let name = &program.name;
    let base = |ext: &str| args.out.join(format!("{name}.{ext}"));
    write(
        &base("pipeline.txt"),
        hwxdp_ehdl::text(&pipeline).as_bytes(),
    )?;
    write(&base("pipeline.dot"), hwxdp_ehdl::dot(&pipeline).as_bytes())?;
    write(
        &base("ehdl.json"),
        hwxdp_ehdl::json_summary(&pipeline).as_bytes(),
    )?;
    let s = &pipeline.summary;
    println!(
        "{}: {} eBPF instructions; {} ops in {} stages ({} NOP, {} helper); ILP max {} mean {:.2}; \
         state {} bits pruned vs {} unpruned; wrote {}",
        s.program,
        s.ebpf_insns,
        s.ops,
        s.stages,
        s.nop_stages,
        s.helper_stages,
        s.max_ilp,
        s.mean_ilp,
        s.state_bits_pruned,
        s.state_bits_unpruned,
        base("pipeline.txt").display()
    );
    // The Verilog module needs a template for every op; without one the diagrams stay (they show where the op is)
    // and the error names the instruction and what is missing.
    let module = hwxdp_ehdl::verilog::module_name(name);
    let (text, f) =
        hwxdp_ehdl::verilog::generate_with(&pipeline, &spec.maps, &module, options.hazards)
            .with_context(|| {
                format!(
                    "{}: program {}: no Verilog module (the pipeline diagrams are in {})",
                    args.program.object.display(),
                    s.program,
                    args.out.display()
                )
            })?;
    let path = args.out.join(format!("{module}.sv"));
    write(&path, text.as_bytes())?;
    println!(
        "{}: module {module}: {} stages, latency {} cycles, one packet per clock{}; {} state and {} frame \
         flip-flops; wrote {} (instantiates rtl/ehdl/*.sv)",
        s.program,
        f.stages,
        f.latency,
        match (f.stall_checks, f.flush_checks, f.elastic_boundary) {
            (0, 0, _) => String::new(),
            (0, n, 0) => format!(" but for flushes on {n} map hazard check(s), replayed from the input"),
            (0, n, b) => format!(
                " but for flushes on {n} map hazard check(s), replayed from the elastic buffer at boundary {b}"
            ),
            (n, _, _) => format!(" except where {n} map hazard check(s) stall"),
        },
        f.state_flops,
        f.frame_flops,
        path.display()
    );
    for m in &f.maps {
        println!("{}: map {m}", s.program);
    }
    if f.hazard_distance > 0 {
        let model = hazard_model(&f);
        write(
            &base("hazards.json"),
            serde_json::to_string_pretty(&model)?.as_bytes(),
        )?;
        println!(
            "{}: hazards: L = {} stages, first read at stage {}; with {MODEL_FLOWS} Zipf flows P_f = {:.2}%: \
             the paper's flush (K = {}) {:.0} Mpps, our stall checks {:.0} Mpps at 250 MHz; wrote {}",
            s.program,
            f.hazard_distance,
            f.hazard_stage,
            model["zipf"]["flush_probability"].as_f64().unwrap_or(0.0) * 100.0,
            model["paper_flushed_stages"],
            model["zipf"]["flush_mpps"].as_f64().unwrap_or(0.0),
            model["zipf"]["stall_mpps"].as_f64().unwrap_or(0.0),
            base("hazards.json").display()
        );
    }
    Ok(())
}

/// Flows of the appendix-A model figures (the paper's "at least 50K flows").
const MODEL_FLOWS: u64 = 50_000;
/// The pipeline clock of the model figures, MHz.
const MODEL_CLOCK_MHZ: f64 = 250.0;

/// The eHDL paper's appendix-A model for a pipeline with stall checks: the flush probability with [`MODEL_FLOWS`]
/// Zipf (s = 1) and uniform flows at its largest read-to-write distance `L`, the throughput the paper's flush and
/// replay would give (`K` = the first checked read's stage + 4), and the throughput our stall checks give, one flow
/// included (every packet waits `L - 1` cycles).
fn hazard_model(f: &hwxdp_ehdl::verilog::Figures) -> serde_json::Value {
    use hwxdp_ehdl::model::*;
    let l = f.hazard_distance;
    let k = (f.hazard_stage + FLUSH_RELOAD_CYCLES) as f64;
    let case = |pf: f64, stall_cycles: f64| {
        serde_json::json!({
            "flush_probability": pf,
            "flush_mpps": pipeline_throughput(MODEL_CLOCK_MHZ, k, pf),
            "stall_cycles_per_packet": stall_cycles,
            "stall_mpps": MODEL_CLOCK_MHZ / stall_cycles,
        })
    };
    let uniform = std::iter::repeat_n(1.0 / MODEL_FLOWS as f64, MODEL_FLOWS as usize);
    serde_json::json!({
        "hazard_distance": l,
        "hazard_stage": f.hazard_stage,
        "paper_flushed_stages": k,
        "flows": MODEL_FLOWS,
        "clock_mhz": MODEL_CLOCK_MHZ,
        "zipf": case(
            flush_probability_zipf(MODEL_FLOWS, 1.0, l),
            stall_cycles_per_packet(zipf_probabilities(MODEL_FLOWS, 1.0), l),
        ),
        "uniform": case(
            flush_probability_uniform(MODEL_FLOWS, l),
            stall_cycles_per_packet(uniform, l),
        ),
        "single_flow": case(1.0, stall_cycles_per_packet([1.0], l)),
    })
}
