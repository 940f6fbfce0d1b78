//! `hwxdp bench`: the kernel's JIT and the reference machine (and with `--backend hxdp` the hXDP core model, with
//! `hxdp-rtl` the hXDP module's RTL under Verilator, with `ehdl-rtl` the program's eHDL pipeline under Verilator) on
//! the same trace, timed in one run, side by side.

use crate::common::{self, ProgramArgs, TraceArgs};
use crate::pair::Pair;
use crate::trace::TracePacket;
use crate::under_test::{BackendArgs, Hardware};
use anyhow::{bail, Context, Result};
use hwxdp_hxdp::{timing, CoreStats};
use hwxdp_xdp::XdpMd;
use hwxdp_xdp::{Clock, XdpBuff};
use serde::Serialize;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Arguments of `hwxdp bench`.
#[derive(clap::Args)]
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
    /// Least time spent running the trace on the reference machine (it is repeated until then), in milliseconds.
    #[arg(long, default_value_t = 1000)]
    min_ms: u64,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// `--backend hxdp` (or `hxdp-rtl`) also runs the trace on the hXDP core model (or RTL), timed like the reference
    /// machine.
    #[command(flatten)]
    backend: BackendArgs,
}

/// The figures of one backend.
#[derive(Serialize)]
struct BackendFigures {
    ns_per_packet: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ns_per_insn: Option<f64>,
    packets_per_second: f64,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    hxdp: Option<HxdpFigures>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    ehdl: Option<EhdlFigures>,
}

/// What the eHDL pipeline adds: the simulated hardware's figures for the trace streamed back to back (first pass).
#[derive(Serialize)]
struct EhdlFigures {
    stages: usize,
    latency_cycles: u64,
    packets_per_cycle: f64,
    cycles: u64,
    stall_cycles: u64,
}

/// What the hXDP core model adds to its wall-clock figures: the simulated hardware's.
#[derive(Serialize)]
struct HxdpFigures {
    cycles_per_packet: f64,
    mpps_156_25_mhz: f64,
    mpps_250_mhz: f64,
    lanes: usize,
    bundles: usize,
}

#[derive(Serialize)]
struct Report {
    program: String,
    packets: usize,
    insns_per_packet: f64,
    kernel_ns_per_packet: f64,
    interp_ns_per_packet: f64,
    interp_ns_per_insn: f64,
    interp_over_kernel: f64,
    backends: std::collections::BTreeMap<&'static str, BackendFigures>,
}

/// Runs `hwxdp bench`.
pub fn run(args: Args) -> Result<ExitCode> {
    let loaded = common::load_object(&args.program.object)?;
    let packets: Vec<TracePacket> = common::load_trace(&args.trace)?
        .into_iter()
        .filter(|p| XdpBuff::new(&p.data).is_ok())
        .collect();
    if packets.is_empty() {
        bail!(
            "{}: no packet an XDP program can run on",
            args.trace.pcap.display()
        );
    }
    // Virtual time keeps the reference machine's runs identical to each other, so every repetition does the same work.
    let mut pair = Pair::setup(
        &args.program,
        &args.trace,
        &args.backend,
        &loaded,
        Clock::Virtual,
    )?;

    let step = (packets.len() / args.kernel_samples.max(1)).max(1);
    let mut kernel_total = 0.0;
    let mut sampled = 0usize;
    for packet in packets.iter().step_by(step) {
        let md = common::metadata(&args.trace, &packet.data);
        kernel_total += pair
            .kernel
            .bench(&packet.data, &md, args.repeat)
            .context("kernel test run")?;
        sampled += 1;
    }
    let kernel_ns = kernel_total / sampled as f64;

    let metadata: Vec<_> = packets
        .iter()
        .map(|p| common::metadata(&args.trace, &p.data))
        .collect();
    let mut buff = XdpBuff::new(&packets[0].data).context("first packet")?;
    let (mut runs, mut insns, mut elapsed) = (0u64, 0u64, Duration::ZERO);
    while elapsed < Duration::from_millis(args.min_ms) || runs == 0 {
        let start = Instant::now();
        for (packet, md) in packets.iter().zip(&metadata) {
            buff.reset(&packet.data).context("packet")?;
            pair.machine.set_time(packet.time_ns);
            insns += pair.machine.run_packet(&mut buff, md).insns;
        }
        elapsed += start.elapsed();
        runs += 1;
    }
    let total_packets = runs as f64 * packets.len() as f64;
    let interp_ns = elapsed.as_nanos() as f64 / total_packets;
    let interp_ns_insn = elapsed.as_nanos() as f64 / insns.max(1) as f64;
    let mut backends = std::collections::BTreeMap::new();
    backends.insert(
        "kernel",
        BackendFigures {
            ns_per_packet: kernel_ns,
            ns_per_insn: None,
            packets_per_second: 1e9 / kernel_ns,
            hxdp: None,
            ehdl: None,
        },
    );
    backends.insert(
        "interp",
        BackendFigures {
            ns_per_packet: interp_ns,
            ns_per_insn: Some(interp_ns_insn),
            packets_per_second: 1e9 / interp_ns,
            hxdp: None,
            ehdl: None,
        },
    );
    if let Some(Hardware::Ehdl(e)) = pair.core.as_deref_mut() {
        let (ns, first) = time_ehdl(e, &packets, &metadata, args.min_ms)?;
        backends.insert(
            "ehdl-rtl",
            BackendFigures {
                ns_per_packet: ns,
                ns_per_insn: None,
                packets_per_second: 1e9 / ns,
                hxdp: None,
                ehdl: Some(EhdlFigures {
                    stages: e.figures().stages,
                    latency_cycles: first.latency,
                    packets_per_cycle: packets.len() as f64 / first.cycles.max(1) as f64,
                    cycles: first.cycles,
                    stall_cycles: first.stall_cycles,
                }),
            },
        );
    } else if let Some(core) = pair.core.as_deref_mut() {
        let (ns, cycles) = time_core(core, &packets, &metadata, args.min_ms)?;
        backends.insert(
            core.name(),
            BackendFigures {
                ns_per_packet: ns,
                ns_per_insn: None,
                packets_per_second: 1e9 / ns,
                hxdp: Some(HxdpFigures {
                    cycles_per_packet: cycles.mean(),
                    mpps_156_25_mhz: timing::mpps(timing::CLOCK_PAPER_MHZ, cycles.mean()),
                    mpps_250_mhz: timing::mpps(timing::CLOCK_FAST_MHZ, cycles.mean()),
                    lanes: args.backend.lanes,
                    bundles: core.image().map_or(0, |i| i.bundles.len()),
                }),
                ehdl: None,
            },
        );
    }
    let report = Report {
        program: pair.name.clone(),
        packets: packets.len(),
        insns_per_packet: insns as f64 / total_packets,
        kernel_ns_per_packet: kernel_ns,
        interp_ns_per_packet: interp_ns,
        interp_ns_per_insn: interp_ns_insn,
        interp_over_kernel: interp_ns / kernel_ns,
        backends,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs the trace on the core until `min_ms` have passed; returns the wall-clock nanoseconds per packet and the cycle
/// figures of the first pass. Later passes start from the maps the first left behind; the first equals what `run
/// --backend hxdp` reports for the trace (unless the program draws random numbers, which bench seeds differently).
fn time_core(
    core: &mut Hardware,
    packets: &[TracePacket],
    metadata: &[XdpMd],
    min_ms: u64,
) -> Result<(f64, CoreStats)> {
    let mut buff = XdpBuff::new(&packets[0].data).context("first packet")?;
    let (mut runs, mut elapsed, mut first_pass) = (0u64, Duration::ZERO, None);
    while elapsed < Duration::from_millis(min_ms) || runs == 0 {
        let start = Instant::now();
        for (packet, md) in packets.iter().zip(metadata) {
            buff.reset(&packet.data).context("packet")?;
            core.set_time(packet.time_ns);
            core.run_packet(&mut buff, md)?;
        }
        elapsed += start.elapsed();
        runs += 1;
        first_pass.get_or_insert_with(|| core.stats().cloned().unwrap_or_default());
    }
    let ns = elapsed.as_nanos() as f64 / (runs as f64 * packets.len() as f64);
    Ok((ns, first_pass.unwrap_or_default()))
}

/// Streams the trace through the eHDL pipeline, as whole batches, until `min_ms` have passed; returns the wall-clock
/// nanoseconds per packet (Verilator's, the generated module simulated cycle by cycle) and the first batch. Later
/// batches start from the maps the one before left behind.
fn time_ehdl(
    e: &mut hwxdp_rtlsim::ehdl::EhdlRtl,
    packets: &[TracePacket],
    metadata: &[XdpMd],
    min_ms: u64,
) -> Result<(f64, hwxdp_rtlsim::ehdl::Batch)> {
    let batch: Vec<hwxdp_rtlsim::ehdl::PacketIn> = packets
        .iter()
        .zip(metadata)
        .map(|(p, md)| hwxdp_rtlsim::ehdl::PacketIn {
            bytes: p.data.clone(),
            md: *md,
            time_ns: p.time_ns,
        })
        .collect();
    let (mut runs, mut elapsed, mut first) = (0u64, Duration::ZERO, None);
    while elapsed < Duration::from_millis(min_ms) || runs == 0 {
        let start = Instant::now();
        let b = e.run_batch(&batch)?;
        elapsed += start.elapsed();
        runs += 1;
        first.get_or_insert(b);
    }
    let ns = elapsed.as_nanos() as f64 / (runs as f64 * packets.len() as f64);
    Ok((ns, first.unwrap_or_default()))
}

fn print_table(r: &Report) {
    let hxdp = ["hxdp", "hxdp-rtl"].iter().find_map(|name| {
        let b = r.backends.get(name)?;
        b.hxdp.as_ref().map(|h| (*name, b, h))
    });
    let mut head = format!(
        "{:<20} {:>8} {:>10} {:>14} {:>14} {:>15} {:>14}",
        "program",
        "packets",
        "insns/pkt",
        "kernel ns/pkt",
        "interp ns/pkt",
        "interp ns/insn",
        "interp/kernel"
    );
    let mut row = format!(
        "{:<20} {:>8} {:>10.1} {:>14.1} {:>14.1} {:>15.2} {:>13.1}x",
        r.program,
        r.packets,
        r.insns_per_packet,
        r.kernel_ns_per_packet,
        r.interp_ns_per_packet,
        r.interp_ns_per_insn,
        r.interp_over_kernel
    );
    if let Some((name, b, h)) = hxdp {
        head.push_str(&format!(
            " {:>12} {:>12} {:>15} {:>12}",
            format!("{name} ns/pkt"),
            format!("{name} cyc/pkt"),
            "Mpps@156.25MHz",
            "Mpps@250MHz"
        ));
        row.push_str(&format!(
            " {:>12.1} {:>12.1} {:>15.2} {:>12.2}",
            b.ns_per_packet, h.cycles_per_packet, h.mpps_156_25_mhz, h.mpps_250_mhz
        ));
    }
    if let Some((b, e)) = r
        .backends
        .get("ehdl-rtl")
        .and_then(|b| b.ehdl.as_ref().map(|e| (b, e)))
    {
        head.push_str(&format!(
            " {:>16} {:>8} {:>8} {:>10} {:>8}",
            "ehdl-rtl ns/pkt", "stages", "latency", "pkt/cycle", "stalls"
        ));
        row.push_str(&format!(
            " {:>16.1} {:>8} {:>8} {:>10.3} {:>8}",
            b.ns_per_packet, e.stages, e.latency_cycles, e.packets_per_cycle, e.stall_cycles
        ));
    }
    println!("{head}");
    println!("{row}");
}
