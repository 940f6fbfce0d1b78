//! `hwxdp bench`: the kernel's JIT and the reference machine on the same trace, timed in one run, side by side.

use crate::common::{self, ProgramArgs, TraceArgs};
use crate::pair::Pair;
use crate::trace::TracePacket;
use anyhow::{bail, Context, Result};
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
}

/// The figures of one backend.
#[derive(Serialize)]
struct BackendFigures {
    ns_per_packet: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ns_per_insn: Option<f64>,
    packets_per_second: f64,
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
    let mut pair = Pair::setup(&args.program, &args.trace, &loaded, Clock::Virtual)?;

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
        },
    );
    backends.insert(
        "interp",
        BackendFigures {
            ns_per_packet: interp_ns,
            ns_per_insn: Some(interp_ns_insn),
            packets_per_second: 1e9 / interp_ns,
        },
    );
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

fn print_table(r: &Report) {
    println!(
        "{:<20} {:>8} {:>10} {:>14} {:>14} {:>15} {:>14}",
        "program",
        "packets",
        "insns/pkt",
        "kernel ns/pkt",
        "interp ns/pkt",
        "interp ns/insn",
        "interp/kernel"
    );
    println!(
        "{:<20} {:>8} {:>10.1} {:>14.1} {:>14.1} {:>15.2} {:>13.1}x",
        r.program,
        r.packets,
        r.insns_per_packet,
        r.kernel_ns_per_packet,
        r.interp_ns_per_packet,
        r.interp_ns_per_insn,
        r.interp_over_kernel
    );
}
