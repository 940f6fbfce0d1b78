//! `hwxdp verify`: the kernel and one or more backends side by side on the same trace, packet by packet (verdict,
//! fault, packet bytes, ring buffer records), then their maps, for every XDP program of the object in turn.
//!
//! Packets go to every side in lockstep, one at a time, so a difference is shown with the maps as they were right
//! after it; with a backend that takes the whole trace as one batch (a pipeline), the whole trace is one step and
//! the maps shown are those after the last packet.

use crate::backends::{self, BackendArgs, Session};
use crate::common::{self, Loaded, ProgramArgs, TraceArgs};
use crate::compare::{compare_maps, packet_problems, ring_problems};
use crate::tally::{self, Tally};
use crate::{progress, trace};
use anyhow::{bail, Context, Result};
use hwxdp_backend::{Backend, Packet, Ran, Record};
use hwxdp_xdp::{Clock, Config, XdpBuff};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hwxdp verify`.
#[derive(clap::Args)]
#[command(mut_arg("program", |a| a.help("The XDP program to verify, by function or section name (default: every XDP program of the object, in turn)")))]
#[command(after_help = format!("{}\n\n{}", backends::backends_help(), crate::exit::AFTER_HELP_CHECK))]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    trace: TraceArgs,
    /// Print one JSON report (an entry per program and backend) instead of text.
    #[arg(long)]
    json: bool,
    /// Report every differing packet, not just the first.
    #[arg(long)]
    keep_going: bool,
    /// Write the input packets that differ on some backend to this pcap, to run them again.
    #[arg(long, value_name = "FILE")]
    diff_pcap: Option<PathBuf>,
    /// The backends compared with the kernel (`--backend` more than once, or `all`) [default: interp].
    #[command(flatten)]
    backend: BackendArgs,
}

/// One differing packet.
#[derive(Serialize)]
struct Difference {
    packet: usize,
    problems: Vec<String>,
    /// The maps' differences right after it.
    maps: Vec<String>,
}

/// What one backend's comparison with the kernel found for one program.
#[derive(Serialize)]
struct Verdict {
    program: String,
    backend: &'static str,
    compared: usize,
    skipped: usize,
    identical: bool,
    differences: Vec<Difference>,
    /// Ring buffer differences found after the trace.
    records: Vec<String>,
    ring_records: usize,
    /// Map differences after the trace.
    maps: Vec<String>,
    map_count: usize,
    figures: serde_json::Map<String, serde_json::Value>,
    /// What the records are called in the report line ("ring buffer records", "perf samples"); empty without any.
    #[serde(skip)]
    record_label: &'static str,
    #[serde(skip)]
    line: String,
}

/// The packets a program is verified on: each with its index in the pcap.
struct Trace<'a> {
    indices: &'a [usize],
    packets: &'a [Packet],
}

/// One backend beside the kernel.
struct Side {
    backend: Box<dyn Backend>,
    per_packet_records: bool,
    verdict: Verdict,
    tally: Tally,
    stopped: bool,
}

/// Runs `hwxdp verify`.
pub fn run(args: Args) -> Result<ExitCode> {
    let loaded = common::load_object(&args.program.object)?;
    let programs = backends::xdp_programs(&loaded.spec, &args.program)?;
    let entries = args.backend.entries(&["interp"], false)?;
    if entries.iter().any(|e| e.needs_kernel) {
        bail!("verify compares backends with the kernel: --backend kernel would compare it with itself");
    }
    let all: Vec<trace::TracePacket> = common::load_trace(&args.trace)?;
    let ports = trace::interfaces(&args.trace.pcap)?;
    let skipped = all
        .iter()
        .filter(|p| XdpBuff::new(&p.data).is_err())
        .count();
    let (indices, packets): (Vec<usize>, Vec<Packet>) = all
        .iter()
        .enumerate()
        .filter(|(_, p)| XdpBuff::new(&p.data).is_ok())
        .map(|(i, p)| {
            let mut md = common::metadata(&args.trace, &p.data);
            md.ingress_ifindex += ports.get(i).copied().unwrap_or(0);
            let packet = Packet {
                bytes: p.data.clone(),
                md,
                time_ns: p.time_ns,
            };
            (i, packet)
        })
        .unzip();
    let trace = Trace {
        indices: &indices,
        packets: &packets,
    };
    hwxdp_kernel::bpf_available().context(
        "the kernel cannot run BPF programs here, so there is nothing to verify against",
    )?;
    let config = Config {
        possible_cpus: hwxdp_kernel::possible_cpus()?,
        clock: Clock::Monotonic,
        ..Config::default()
    };
    let session = Session::new(
        &loaded,
        &args.program,
        &args.trace,
        &args.backend,
        config,
        &entries,
        false,
    )?;
    let mut verdicts = Vec::new();
    let mut differing = std::collections::BTreeSet::new();
    for program in &programs {
        let found = verify_program(&args, &session, &loaded, program, &entries, &trace)?;
        for mut v in found {
            v.skipped = skipped;
            differing.extend(v.differences.iter().map(|d| d.packet));
            verdicts.push(v);
        }
    }
    if let Some(path) = &args.diff_pcap {
        let mut w = trace::Writer::create(path)?;
        for &i in &differing {
            w.write(all[i].time_ns, &all[i].data)?;
        }
        w.finish()?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&verdicts)?);
    } else {
        for v in &verdicts {
            println!("{}", v.line);
        }
        if let Some(path) = &args.diff_pcap {
            println!(
                "wrote {} differing packets to {}",
                differing.len(),
                path.display()
            );
        }
    }
    Ok(if verdicts.iter().all(|v| v.identical) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What verify's report calls the records of an object's ring buffers and perf event arrays.
fn record_label(maps: &[hwxdp_object::MapSpec]) -> &'static str {
    let rings = !hwxdp_backend::ring_buffers(maps).is_empty();
    let perf = !hwxdp_backend::perf_event_arrays(maps).is_empty();
    match (rings, perf) {
        (true, true) => "ring buffer records and perf samples",
        (true, false) => "ring buffer records",
        (false, true) => "perf samples",
        (false, false) => "",
    }
}

/// Every backend of `entries` beside the kernel on `program`.
fn verify_program(
    args: &Args,
    session: &Session,
    loaded: &Loaded,
    program: &str,
    entries: &[&'static hwxdp_backend::Entry],
    trace: &Trace,
) -> Result<Vec<Verdict>> {
    let rings: Vec<(usize, String)> = hwxdp_backend::record_maps(&loaded.spec.maps)
        .into_iter()
        .map(|m| (m, loaded.spec.maps[m].name.clone()))
        .collect();
    let mut kernel = kernel_side(session, program)?;
    let mut sides = Vec::new();
    for entry in entries {
        let backend = session.create(entry, program)?;
        let caps = backend.capabilities();
        sides.push(Side {
            per_packet_records: caps.records_per_packet,
            backend,
            verdict: Verdict {
                program: program.to_string(),
                backend: entry.name,
                compared: 0,
                skipped: 0,
                identical: true,
                differences: Vec::new(),
                records: Vec::new(),
                ring_records: 0,
                maps: Vec::new(),
                map_count: loaded.spec.maps.len(),
                figures: Default::default(),
                record_label: record_label(&loaded.spec.maps),
                line: String::new(),
            },
            tally: Tally::default(),
            stopped: false,
        });
    }
    let whole = sides.iter().any(|s| s.backend.capabilities().whole_trace);
    let step = if whole { trace.packets.len().max(1) } else { 1 };
    let bar = progress::packets(trace.packets.len(), &format!("verify {program}"));
    // Every record the kernel's program emitted, for the backends that give theirs after the trace.
    let mut kernel_records = Vec::new();
    for (input, indices) in trace.packets.chunks(step).zip(trace.indices.chunks(step)) {
        let theirs = kernel.run(input).context("kernel")?;
        kernel_records.extend(theirs.iter().flat_map(|r| r.records.iter().cloned()));
        for side in sides.iter_mut().filter(|s| !s.stopped) {
            let ours = side.backend.run(input)?;
            compare_step(args, side, &mut *kernel, &rings, indices, &theirs, &ours)?;
        }
        bar.inc(input.len() as u64);
        if sides.iter().all(|s| s.stopped) {
            break;
        }
    }
    bar.finish_and_clear();
    kernel_records.extend(kernel.drain_records()?);
    for side in &mut sides {
        finish_side(args, side, &mut *kernel, &kernel_records, &rings)?;
    }
    Ok(sides.into_iter().map(|s| s.verdict).collect())
}

/// Compares one step's packets on one backend with the kernel's.
fn compare_step(
    args: &Args,
    side: &mut Side,
    kernel: &mut dyn Backend,
    rings: &[(usize, String)],
    indices: &[usize],
    theirs: &[Ran],
    ours: &[Ran],
) -> Result<()> {
    let name = side.verdict.backend;
    for ((index, k), o) in indices.iter().zip(theirs).zip(ours) {
        side.verdict.compared += 1;
        side.tally.add(*index, o);
        let mut problems = packet_problems(name, k, o);
        if side.per_packet_records {
            problems.extend(ring_problems(name, rings, &k.records, &o.records));
        }
        if problems.is_empty() {
            continue;
        }
        side.verdict.identical = false;
        let maps = compare_maps(name, kernel.maps(), side.backend.maps())?;
        side.verdict.differences.push(Difference {
            packet: *index,
            problems,
            maps,
        });
        if !args.keep_going {
            side.stopped = true;
            break;
        }
    }
    Ok(())
}

/// The after-trace checks (a batch backend's records, every map) and the report line.
fn finish_side(
    args: &Args,
    side: &mut Side,
    kernel: &mut dyn Backend,
    kernel_records: &[Record],
    rings: &[(usize, String)],
) -> Result<()> {
    let name = side.verdict.backend;
    if !side.stopped {
        side.verdict.ring_records = kernel_records.len();
        if !side.per_packet_records {
            let ours = side.backend.drain_records()?;
            side.verdict.records = ring_problems(name, rings, kernel_records, &ours);
        }
        side.verdict.maps = compare_maps(name, kernel.maps(), side.backend.maps())?;
        if !side.verdict.records.is_empty() || !side.verdict.maps.is_empty() {
            side.verdict.identical = false;
        }
    }
    side.backend.finish()?;
    let summary = side.backend.summary();
    side.verdict.figures = tally::figures_json(&summary);
    side.verdict.line = report_line(args, side, &summary);
    Ok(())
}

/// The text `verify` prints for one program on one backend.
fn report_line(args: &Args, side: &Side, summary: &hwxdp_backend::Summary) -> String {
    let v = &side.verdict;
    let head = format!("{} on {}", v.program, v.backend);
    let mut text = String::new();
    for d in &v.differences {
        text.push_str(&format!("{head}: packet {} differs\n", d.packet));
        for p in d.problems.iter().chain(&d.maps) {
            text.push_str(&format!("  {p}\n"));
        }
    }
    if let Some(first) = v.differences.first() {
        text.push_str(&format!(
            "{head}: {} of {} packets compared differ (the first is packet {}){}",
            v.differences.len(),
            v.compared,
            first.packet,
            if args.keep_going {
                ""
            } else {
                "; --keep-going reports them all"
            }
        ));
        return text;
    }
    if !v.records.is_empty() || !v.maps.is_empty() {
        text.push_str(&format!(
            "{head}: {} packets identical, but after the run:",
            v.compared
        ));
        for p in v.records.iter().chain(&v.maps) {
            text.push_str(&format!("\n  {p}"));
        }
        return text;
    }
    let rings = if v.record_label.is_empty() {
        String::new()
    } else {
        format!(", {} {}", v.ring_records, v.record_label)
    };
    let mut figures = tally::figures_text(summary);
    if let Some(i) = side.tally.insns() {
        figures = join(
            &figures,
            &format!("mean {:.1} instructions per packet", i.mean),
        );
    }
    if let Some(c) = side.tally.cycles() {
        figures = join(&figures, &format!("mean {:.1} cycles per packet", c.mean));
    }
    if let Some(ppc) = summary.packets_per_cycle {
        figures = join(&figures, &format!("{ppc:.3} packets per cycle"));
    }
    let rates = tally::mpps(
        &args.backend.clocks(),
        side.tally.cycles().as_ref(),
        summary,
    );
    if !rates.is_empty() {
        figures = join(&figures, &tally::mpps_text(&rates));
    }
    if let Some(ports) = crate::compare::port_rates(summary, &args.backend.clocks()) {
        figures = join(&figures, &ports);
    }
    format!(
        "{}: {} packets identical (verdicts, packet bytes{rings}), {} maps identical{}; {}: {figures}",
        v.program,
        v.compared,
        v.map_count,
        if v.skipped > 0 {
            format!("; {} frames too short or long for XDP skipped", v.skipped)
        } else {
            String::new()
        },
        v.backend,
    )
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}, {b}")
    }
}

/// The kernel's side: with `--swap-at`, a kernel program per object, each packet run by the one its position says,
/// so that every packet is checked against the program it was meant to run.
fn kernel_side(session: &Session, program: &str) -> Result<Box<dyn Backend>> {
    let entry = hwxdp_backend::find("kernel")?;
    let first = session.create(entry, program)?;
    if session.swaps.is_empty() {
        return Ok(first);
    }
    let mut objects = vec![session.args.object.clone()];
    let mut backends = vec![first];
    let mut schedule = vec![(0u64, 0usize)];
    for (at, loaded, path) in &session.swaps {
        let v = match objects.iter().position(|o| o == path) {
            Some(v) => v,
            None => {
                let name = backends::swap_program(loaded, path, program)?;
                backends.push(session.create_swapped(entry, loaded, path, &name)?);
                objects.push(path.clone());
                backends.len() - 1
            }
        };
        schedule.push((*at, v));
    }
    Ok(Box::new(Swapped {
        backends,
        schedule,
        handed: 0,
    }))
}

/// Backends of the programs of a run with `--swap-at`, each packet handed to the one that runs it.
struct Swapped {
    backends: Vec<Box<dyn Backend>>,
    /// From which packet on each backend runs.
    schedule: Vec<(u64, usize)>,
    handed: u64,
}

impl Swapped {
    fn of(&self, k: u64) -> usize {
        self.schedule
            .iter()
            .rev()
            .find(|(from, _)| *from <= k)
            .map_or(0, |&(_, v)| v)
    }
}

impl Backend for Swapped {
    fn name(&self) -> &'static str {
        self.backends[0].name()
    }

    fn capabilities(&self) -> hwxdp_backend::Capabilities {
        self.backends[0].capabilities()
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, hwxdp_backend::BackendError> {
        let mut out = Vec::with_capacity(packets.len());
        let mut start = 0;
        while start < packets.len() {
            let v = self.of(self.handed + start as u64);
            let mut end = start + 1;
            while end < packets.len() && self.of(self.handed + end as u64) == v {
                end += 1;
            }
            out.extend(self.backends[v].run(&packets[start..end])?);
            start = end;
        }
        self.handed += packets.len() as u64;
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn hwxdp_maps::MapStore {
        let last = self.schedule.last().map_or(0, |&(_, v)| v);
        self.backends[last].maps()
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, hwxdp_backend::BackendError> {
        let mut records = Vec::new();
        for b in &mut self.backends {
            records.extend(b.drain_records()?);
        }
        Ok(records)
    }

    fn finish(&mut self) -> Result<(), hwxdp_backend::BackendError> {
        for b in &mut self.backends {
            b.finish()?;
        }
        Ok(())
    }
}
