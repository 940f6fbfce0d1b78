//! `hwxdp compile --target hxdp`: an object to an hXDP image and listing, with a report of what each pass did.
//! `hwxdp compile --target ehdl`: an object to an eHDL pipeline (text diagram, Graphviz, JSON, Verilog).

use crate::common::{self, ProgramArgs};
use anyhow::{bail, Context, Result};
use hwxdp_hxdp::{compile_object, isa, Options, Pass};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `hwxdp compile`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    /// What to compile for.
    #[arg(long, value_parser = ["hxdp", "ehdl"])]
    target: String,
    /// Directory for `<program>.hxdp` (the image) and `<program>.lst` (the listing); for ehdl,
    /// `<program>.pipeline.txt`, `<program>.pipeline.dot`, `<program>.ehdl.json` and, when every op has a
    /// template, the Verilog module `ehdl_<program>.sv`.
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
    hazards: crate::under_test::HazardsArg,
}

/// Compile options from `--lanes` and `--disable`.
pub fn options(lanes: usize, disable: &[String]) -> Result<Options> {
    let mut disabled = Vec::new();
    for name in disable {
        match Pass::from_name(name) {
            Some(p) => disabled.push(p),
            None => {
                let known: Vec<&str> = Pass::ALL.iter().map(|p| p.name()).collect();
                bail!(
                    "--disable {name}: no such pass (passes: {})",
                    known.join(", ")
                );
            }
        }
    }
    Ok(Options { lanes, disabled })
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

/// Runs `hwxdp compile`.
pub fn run(args: Args) -> Result<ExitCode> {
    if args.target == "ehdl" {
        return run_ehdl(args);
    }
    if args.no_prune {
        bail!("--no-prune turns off the eHDL front end's state pruning: it needs --target ehdl");
    }
    let loaded = common::load_object(&args.program.object)?;
    let options = options(args.lanes, &args.disable)?;
    let (compiled, entry) = build(&args.program, &loaded.spec, &options)?;
    common::create_dir(&args.out)?;
    let name = &compiled.names[entry];
    let image_path = args.out.join(format!("{name}.hxdp"));
    write(&image_path, &compiled.image.encode())?;
    let listing = isa::listing(&compiled.image, &compiled.names);
    write(&args.out.join(format!("{name}.lst")), listing.as_bytes())?;
    for r in &compiled.reports {
        let passes: Vec<String> = r
            .after_pass
            .iter()
            .map(|(p, n)| format!("{p} {n}"))
            .collect();
        println!(
            "{}: {} eBPF instructions; after passes: {}; {} bundles of {} lanes; static IPC {:.2}",
            r.name,
            r.ebpf_insns,
            if passes.is_empty() {
                "none".to_string()
            } else {
                passes.join(", ")
            },
            r.bundles,
            options.lanes,
            r.static_ipc()
        );
    }
    println!("wrote {}", image_path.display());
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("{}: cannot write", path.display()))
}

/// Runs `hwxdp compile --target ehdl`.
fn run_ehdl(args: Args) -> Result<ExitCode> {
    let loaded = common::load_object(&args.program.object)?;
    let spec = &loaded.spec;
    let program = common::find_program(
        spec,
        args.program.chosen(spec).as_deref(),
        &args.program.object,
    )?;
    let options = hwxdp_ehdl::Options {
        data_width: args.data_width,
        prune: !args.no_prune,
        hazards: args.hazards.into(),
        ..hwxdp_ehdl::Options::default()
    };
    let pipeline = hwxdp_ehdl::compile_object(program, &spec.programs, &spec.maps, &options)
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
    // The Verilog module, when the generator has templates for every op; otherwise the diagrams stand alone and the
    // reason (the instruction and what is missing) goes to stderr.
    let module = hwxdp_ehdl::verilog::module_name(name);
    match hwxdp_ehdl::verilog::generate_with(&pipeline, &spec.maps, &module, options.hazards) {
        Ok((text, f)) => {
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
        }
        Err(e) => eprintln!("warning: no Verilog for {}: {e}", s.program),
    }
    Ok(ExitCode::SUCCESS)
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
