//! `hwxdp bench`: backends timed on the same trace in one run, side by side (the kernel's JIT and the reference
//! machine by default), for every XDP program of the object in turn. Each backend runs the trace once for its
//! figures (instructions, cycles, a pipeline's throughput), then again and again for the wall-clock time.

use crate::backends::{self, BackendArgs, Session};
use crate::common::{self, ProgramArgs, TraceArgs};
use crate::tally::{self, Mpps, Tally};
use anyhow::{bail, Result};
use hwxdp_backend::{Packet, Timing};
use hwxdp_xdp::{Clock, Config, XdpBuff};
use serde::Serialize;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `hwxdp bench`.
#[derive(clap::Args)]
#[command(mut_arg("program", |a| a.help("The XDP program to time, by function or section name (default: every XDP program of the object, in turn)")))]
#[command(after_help = format!("{}\n\n{}", backends::backends_help(), crate::exit::AFTER_HELP))]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    trace: TraceArgs,
    /// BPF_PROG_TEST_RUN repetitions of each sampled packet in the kernel.
    #[arg(long, default_value_t = 2000)]
    repeat: u32,
    /// Distinct packets of the trace timed in the kernel (spread evenly over the trace).
    #[arg(long, default_value_t = 200)]
    kernel_samples: usize,
    /// Least time spent running the trace on each of the other backends (it is repeated until then), in
    /// milliseconds.
    #[arg(long, default_value_t = 1000)]
    min_ms: u64,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// The backends timed beside the kernel and the reference machine (`--backend` more than once, or `all`).
    #[command(flatten)]
    backend: BackendArgs,
}

/// The figures of one backend.
#[derive(Serialize)]
struct Column {
    ns_per_packet: f64,
    packets_per_second: f64,
    /// This backend's time over the kernel's, when the kernel ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    over_kernel: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    insns_per_packet: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ns_per_insn: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cycles_per_packet: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    packets_per_cycle: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mpps: Vec<Mpps>,
    #[serde(flatten)]
    figures: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize)]
struct Report {
    program: String,
    packets: usize,
    backends: BTreeMap<&'static str, Column>,
    /// Backends that could not run, and why.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    missing: BTreeMap<&'static str, String>,
    #[serde(skip)]
    order: Vec<&'static str>,
}

/// Runs `hwxdp bench`.
pub fn run(args: Args) -> Result<ExitCode> {
    let loaded = common::load_object(&args.program.object)?;
    let programs = backends::xdp_programs(&loaded.spec, &args.program)?;
    // The kernel and the reference machine are the baselines every other backend is timed beside.
    let mut chosen = args.backend.clone();
    chosen
        .backend
        .splice(0..0, ["kernel".to_string(), "interp".to_string()]);
    let entries = chosen.entries(&[], true)?;
    let packets: Vec<Packet> = common::load_trace(&args.trace)?
        .into_iter()
        .filter(|p| XdpBuff::new(&p.data).is_ok())
        .map(|p| Packet {
            md: common::metadata(&args.trace, &p.data),
            bytes: p.data,
            time_ns: p.time_ns,
        })
        .collect();
    if packets.is_empty() {
        bail!(
            "{}: no packet an XDP program can run on",
            args.trace.pcap.display()
        );
    }
    // Virtual time keeps every pass of the trace the same work.
    let config = Config {
        possible_cpus: hwxdp_kernel::possible_cpus().unwrap_or(1),
        clock: Clock::Virtual,
        ..Config::default()
    };
    // Ring buffers read after the trace, as run reads them, so that both give the same figures for a trace.
    let session = Session::new(
        &loaded,
        &args.program,
        &args.trace,
        &args.backend,
        config,
        &entries,
        true,
    )?;
    let timing = Timing {
        min: Duration::from_millis(args.min_ms),
        repeat: args.repeat,
        samples: args.kernel_samples,
    };
    let mut reports = Vec::new();
    for program in &programs {
        let mut report = Report {
            program: program.clone(),
            packets: packets.len(),
            backends: BTreeMap::new(),
            missing: BTreeMap::new(),
            order: Vec::new(),
        };
        for entry in &entries {
            match column(&session, entry, program, &packets, &timing, &args.backend) {
                Ok(c) => {
                    report.backends.insert(entry.name, c);
                    report.order.push(entry.name);
                }
                // Without root the kernel cannot run; the other columns still can, and the table says why one is
                // missing. Any other backend's failure is the user's to see as an error.
                Err(e) if entry.needs_kernel => {
                    report.missing.insert(entry.name, common::one_line(&e));
                }
                Err(e) => return Err(e),
            }
        }
        if let Some(kernel) = report.backends.get("kernel").map(|k| k.ns_per_packet) {
            for c in report.backends.values_mut() {
                c.over_kernel = Some(c.ns_per_packet / kernel);
            }
        }
        reports.push(report);
    }
    if args.json {
        let json = if reports.len() == 1 {
            serde_json::to_string_pretty(&reports[0])?
        } else {
            serde_json::to_string_pretty(&reports)?
        };
        println!("{json}");
    } else {
        print_table(&reports);
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs the trace on `entry` once for its figures, then times it.
fn column(
    session: &Session,
    entry: &hwxdp_backend::Entry,
    program: &str,
    packets: &[Packet],
    timing: &Timing,
    args: &BackendArgs,
) -> Result<Column> {
    let mut backend = session.create(entry, program)?;
    let mut tally = Tally::default();
    let bar = crate::progress::packets(packets.len(), &format!("{program} on {}", entry.name));
    crate::drive::run_all(
        &mut *backend,
        packets.iter().cloned().enumerate(),
        bar.clone(),
        |i, _, ran| {
            tally.add(i, &ran);
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    let summary = backend.summary();
    let ns = backend.time(packets, timing)?;
    backend.finish()?;
    let insns = tally.insns().map(|s| s.mean);
    let cycles = tally.cycles();
    Ok(Column {
        ns_per_packet: ns,
        packets_per_second: 1e9 / ns,
        over_kernel: None,
        insns_per_packet: insns,
        ns_per_insn: insns.map(|i| ns / i.max(1.0)),
        mpps: tally::mpps(&args.clocks(), cycles.as_ref(), &summary),
        cycles_per_packet: cycles.map(|c| c.mean),
        packets_per_cycle: summary.packets_per_cycle,
        figures: tally::figures_json(&summary),
    })
}

/// One row per program and backend: the same columns for every backend, blank where it has no such figure.
fn print_table(reports: &[Report]) {
    let clocks: Vec<f64> = reports
        .iter()
        .flat_map(|r| r.backends.values())
        .flat_map(|c| c.mpps.iter().map(|m| m.clock_mhz))
        .fold(Vec::new(), |mut v, c| {
            if !v.contains(&c) {
                v.push(c);
            }
            v
        });
    let mut head = format!(
        "{:<20} {:<12} {:>8} {:>10} {:>10} {:>9} {:>10} {:>9} {:>10}",
        "program",
        "backend",
        "packets",
        "ns/pkt",
        "x kernel",
        "insns/pkt",
        "ns/insn",
        "cyc/pkt",
        "pkt/cycle"
    );
    for c in &clocks {
        head.push_str(&format!(" {:>15}", format!("Mpps@{c}MHz")));
    }
    println!("{head}");
    let cell = |v: Option<f64>, prec: usize| v.map_or(String::new(), |v| format!("{v:.prec$}"));
    for r in reports {
        for name in &r.order {
            let c = &r.backends[name];
            let mut row = format!(
                "{:<20} {:<12} {:>8} {:>10.1} {:>10} {:>9} {:>10} {:>9} {:>10}",
                r.program,
                name,
                r.packets,
                c.ns_per_packet,
                cell(c.over_kernel, 1),
                cell(c.insns_per_packet, 1),
                cell(c.ns_per_insn, 2),
                cell(c.cycles_per_packet, 1),
                cell(c.packets_per_cycle, 3),
            );
            for clock in &clocks {
                let m = c
                    .mpps
                    .iter()
                    .find(|m| m.clock_mhz == *clock)
                    .map(|m| m.mpps);
                row.push_str(&format!(" {:>15}", cell(m, 2)));
            }
            println!("{row}");
        }
        for (name, why) in &r.missing {
            println!("{:<20} {:<12} not run: {why}", r.program, name);
        }
    }
}
