//! `hwxdp verify`: the kernel and the reference machine side by side, packet by packet, then their maps.

use crate::common::{self, ProgramArgs, TraceArgs};
use crate::pair::Pair;
use crate::progress;
use anyhow::{Context, Result};
use hwxdp_maps::MapStore;
use hwxdp_xdp::{Clock, XdpBuff};
use std::process::ExitCode;

/// Arguments of `hwxdp verify`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    trace: TraceArgs,
}

const RINGBUF: u32 = 27;

/// Runs `hwxdp verify`.
pub fn run(args: Args) -> Result<ExitCode> {
    let loaded = common::load_object(&args.program.object)?;
    let packets = common::load_trace(&args.trace)?;
    let Pair {
        _sandbox,
        mut kernel,
        mut machine,
        name,
    } = Pair::setup(&args.program, &args.trace, &loaded, Clock::Monotonic)?;
    let ringbufs: Vec<usize> = (0..loaded.spec.maps.len())
        .filter(|&m| loaded.spec.maps[m].map_type == RINGBUF)
        .collect();

    let bar = progress::packets(packets.len(), "verify");
    let mut buff = XdpBuff::new(&[0; 64]).expect("a 64-byte frame fits");
    let mut compared = 0;
    for (i, packet) in packets.iter().enumerate() {
        bar.inc(1);
        if buff.reset(&packet.data).is_err() {
            continue;
        }
        let md = common::metadata(&args.trace, &packet.data);
        let k = kernel
            .test_run(&packet.data, &md)
            .with_context(|| format!("packet {i}"))?;
        let o = machine.run_packet(&mut buff, &md);
        compared += 1;
        let mut problems = Vec::new();
        if k.retval != o.retval {
            problems.push(format!(
                "verdict: kernel {}, hwxdp {}",
                k.verdict(),
                o.verdict()
            ));
        }
        if let Some(f) = &o.fault {
            problems.push(format!("hwxdp stopped the program: {f}"));
        }
        if k.output != buff.output() {
            problems.push(byte_diff(&k.output, buff.output()));
        }
        for &m in &ringbufs {
            let theirs = kernel.ringbuf_drain(m)?;
            let ours = machine.maps_mut().ringbuf_drain(m);
            if theirs != ours {
                problems.push(format!(
                    "ring buffer {}: kernel has {} records, hwxdp {} (first differing: kernel {:02x?}, hwxdp {:02x?})",
                    loaded.spec.maps[m].name,
                    theirs.len(),
                    ours.len(),
                    theirs.iter().zip(&ours).find(|(a, b)| a != b).map(|p| p.0),
                    theirs.iter().zip(&ours).find(|(a, b)| a != b).map(|p| p.1),
                ));
            }
        }
        if !problems.is_empty() {
            bar.finish_and_clear();
            println!(
                "{name}: packet {i} differs ({compared} compared, {} identical before it)",
                compared - 1
            );
            for p in problems {
                println!("  {p}");
            }
            for d in compare_maps(&mut kernel, machine.maps_mut())? {
                println!("  {d}");
            }
            return Ok(ExitCode::from(1));
        }
    }
    bar.finish_and_clear();
    let map_diffs = compare_maps(&mut kernel, machine.maps_mut())?;
    if !map_diffs.is_empty() {
        println!("{name}: {compared} packets identical, but the maps differ after the run:");
        for d in map_diffs {
            println!("  {d}");
        }
        return Ok(ExitCode::from(1));
    }
    let skipped = packets.len() - compared;
    println!(
        "{name}: {compared} packets identical (verdicts, packet bytes), {} maps identical{}",
        loaded.spec.maps.len(),
        if skipped > 0 {
            format!("; {skipped} frames too short or long for XDP skipped")
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// Describes how two packets differ.
fn byte_diff(kernel: &[u8], ours: &[u8]) -> String {
    let mut out = format!(
        "packet bytes: kernel {} bytes, hwxdp {} bytes",
        kernel.len(),
        ours.len()
    );
    let diffs: Vec<String> = (0..kernel.len().max(ours.len()))
        .filter(|&i| kernel.get(i) != ours.get(i))
        .take(16)
        .map(|i| {
            let show =
                |b: Option<&u8>| b.map(|b| format!("{b:02x}")).unwrap_or_else(|| "--".into());
            format!("{i}: {} vs {}", show(kernel.get(i)), show(ours.get(i)))
        })
        .collect();
    if !diffs.is_empty() {
        out.push_str("; differing offsets (kernel vs hwxdp): ");
        out.push_str(&diffs.join(", "));
    }
    out
}

/// Every entry that differs between the kernel's maps and the reference machine's.
fn compare_maps(kernel: &mut dyn MapStore, ours: &mut dyn MapStore) -> Result<Vec<String>> {
    let mut diffs = Vec::new();
    for m in 0..ours.specs().len() {
        let name = ours.specs()[m].name.clone();
        let theirs = kernel
            .entries(m)
            .with_context(|| format!("map {name} (kernel)"))?;
        let mine = ours.entries(m).with_context(|| format!("map {name}"))?;
        let (mut a, mut b) = (theirs.iter().peekable(), mine.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (None, None) => break,
                (Some((ka, va)), Some((kb, vb))) if ka == kb => {
                    if va != vb {
                        diffs.push(format!(
                            "map {name} key {ka:02x?}: kernel {va:02x?}, hwxdp {vb:02x?}"
                        ));
                    }
                    a.next();
                    b.next();
                }
                (Some((ka, va)), Some((kb, _))) if ka < kb => {
                    diffs.push(format!(
                        "map {name} key {ka:02x?}: kernel {va:02x?}, hwxdp has no entry"
                    ));
                    a.next();
                }
                (Some((ka, va)), None) => {
                    diffs.push(format!(
                        "map {name} key {ka:02x?}: kernel {va:02x?}, hwxdp has no entry"
                    ));
                    a.next();
                }
                (_, Some((kb, vb))) => {
                    diffs.push(format!(
                        "map {name} key {kb:02x?}: kernel has no entry, hwxdp {vb:02x?}"
                    ));
                    b.next();
                }
            }
            if diffs.len() >= 20 {
                diffs.push("(more differences not shown)".into());
                return Ok(diffs);
            }
        }
    }
    Ok(diffs)
}
