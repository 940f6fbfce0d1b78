//! `hwxdp verify`: the kernel and the machine under test (the reference machine, the hXDP core with `--backend hxdp`,
//! the hXDP module's RTL with `--backend hxdp-rtl` or the program's eHDL pipeline with `--backend ehdl-rtl`) side by
//! side, packet by packet, then their maps.
//!
//! The eHDL pipeline runs the whole trace back to back before the comparison, so when a packet differs the maps
//! shown beside it are the pipeline's after the last packet.

use crate::common::{self, ProgramArgs, TraceArgs};
use crate::pair::Pair;
use crate::progress;
use crate::under_test::{chosen, BackendArgs, Tested};
use anyhow::{Context, Result};
use hwxdp_kernel::KernelRun;
use hwxdp_maps::MapStore;
use hwxdp_rtlsim::ehdl::PacketIn;
use hwxdp_xdp::{Clock, Verdict, XdpBuff};
use std::process::ExitCode;

/// Arguments of `hwxdp verify`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    trace: TraceArgs,
    #[command(flatten)]
    backend: BackendArgs,
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
        mut core,
        name,
    } = Pair::setup(
        &args.program,
        &args.trace,
        &args.backend,
        &loaded,
        Clock::Monotonic,
    )?;
    if let Some(c) = core.as_deref_mut() {
        // The kernel's bpf_ktime_get_ns reads CLOCK_MONOTONIC while the packets run right after: the batch gets now.
        let now = monotonic_ns();
        c.queue(
            packets
                .iter()
                .filter(|p| XdpBuff::new(&p.data).is_ok())
                .map(|p| PacketIn {
                    bytes: p.data.clone(),
                    md: common::metadata(&args.trace, &p.data),
                    time_ns: now,
                })
                .collect(),
        )?;
    }
    let tested = chosen(core.as_deref_mut(), &mut machine);
    let side = tested.side();
    let ringbufs: Vec<usize> = (0..loaded.spec.maps.len())
        .filter(|&m| loaded.spec.maps[m].map_type == RINGBUF)
        .collect();
    // A batch backend's rings are compared after the trace; the kernel's fill up as the batch's do meanwhile.
    let (per_packet_rings, after_trace_rings) = if tested.rings_after_trace() {
        (Vec::new(), ringbufs)
    } else {
        (ringbufs, Vec::new())
    };

    let bar = progress::packets(packets.len(), "verify");
    let mut buff = XdpBuff::new(&[0; 64]).expect("a 64-byte frame fits");
    let mut compared = 0;
    let mut ring_records = 0;
    for (i, packet) in packets.iter().enumerate() {
        bar.inc(1);
        if buff.reset(&packet.data).is_err() {
            continue;
        }
        let md = common::metadata(&args.trace, &packet.data);
        let k = kernel
            .test_run(&packet.data, &md)
            .with_context(|| format!("packet {i}"))?;
        let o = tested
            .run_one(&mut buff, &md)
            .with_context(|| format!("packet {i} on {side}"))?;
        compared += 1;
        let mut problems = packet_problems(side, &k, &o, buff.output());
        for &m in &per_packet_rings {
            let theirs = kernel.ringbuf_drain(m)?;
            let ours = tested.ringbuf_drain(m)?;
            ring_records += theirs.len();
            problems.extend(ringbuf_problem(
                side,
                &loaded.spec.maps[m].name,
                &theirs,
                &ours,
            ));
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
            for d in compare_maps(side, &mut kernel, tested.maps())? {
                println!("  {d}");
            }
            return Ok(ExitCode::from(1));
        }
    }
    bar.finish_and_clear();
    for &m in &after_trace_rings {
        let theirs = kernel.ringbuf_drain(m)?;
        let ours = tested.ringbuf_drain(m)?;
        ring_records += theirs.len();
        if let Some(p) = ringbuf_problem(side, &loaded.spec.maps[m].name, &theirs, &ours) {
            println!("{name}: {compared} packets identical, but the ring buffers differ after the run:\n  {p}");
            return Ok(ExitCode::from(1));
        }
    }
    let map_diffs = compare_maps(side, &mut kernel, tested.maps())?;
    if !map_diffs.is_empty() {
        println!("{name}: {compared} packets identical, but the maps differ after the run:");
        for d in map_diffs {
            println!("  {d}");
        }
        return Ok(ExitCode::from(1));
    }
    let skipped = packets.len() - compared;
    let cycles = core.as_deref().and_then(|c| {
        if let Some(e) = c.ehdl() {
            let t = e.totals();
            return Some(format!(
                "; {}: {} stages, latency {} cycles, {:.3} packets per cycle, {} stall cycles",
                c.name(),
                e.figures().stages,
                t.latency,
                t.packets_per_cycle(),
                t.stall_cycles
            ));
        }
        Some(format!(
            "; {}: {} lanes, {} bundles, mean {:.1} cycles per packet",
            c.name(),
            args.backend.lanes,
            c.image()?.bundles.len(),
            c.stats()?.mean()
        ))
    });
    let rings = if per_packet_rings.is_empty() && after_trace_rings.is_empty() {
        String::new()
    } else {
        format!(", {ring_records} ring buffer records")
    };
    println!(
        "{name}: {compared} packets identical (verdicts, packet bytes{rings}), {} maps identical{}{}",
        loaded.spec.maps.len(),
        if skipped > 0 {
            format!("; {skipped} frames too short or long for XDP skipped")
        } else {
            String::new()
        },
        cycles.unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

/// `CLOCK_MONOTONIC` in nanoseconds, what the kernel's `bpf_ktime_get_ns` reads.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// How one packet's run on `side` differs from the kernel's: verdict, a fault, packet bytes (`ours` is the packet as
/// `side` left it, metadata first, like the kernel's output).
fn packet_problems(side: &str, kernel: &KernelRun, tested: &Tested, ours: &[u8]) -> Vec<String> {
    let mut problems = Vec::new();
    if kernel.retval != tested.retval {
        problems.push(format!(
            "verdict: kernel {}, {side} {}",
            kernel.verdict(),
            Verdict::from_retval(tested.retval)
        ));
    }
    if let Some(f) = &tested.fault {
        problems.push(format!("{side} stopped the program: {f}"));
    }
    if kernel.output != ours {
        problems.push(byte_diff(side, &kernel.output, ours));
    }
    problems
}

/// How the records one packet wrote to ring buffer `map` differ, if they do.
fn ringbuf_problem(side: &str, map: &str, theirs: &[Vec<u8>], ours: &[Vec<u8>]) -> Option<String> {
    if theirs == ours {
        return None;
    }
    let first = theirs.iter().zip(ours).find(|(a, b)| a != b);
    Some(format!(
        "ring buffer {map}: kernel has {} records, {side} {} (first differing: kernel {:02x?}, {side} {:02x?})",
        theirs.len(),
        ours.len(),
        first.map(|p| p.0),
        first.map(|p| p.1),
    ))
}

/// Describes how two packets differ.
fn byte_diff(side: &str, kernel: &[u8], ours: &[u8]) -> String {
    let mut out = format!(
        "packet bytes: kernel {} bytes, {side} {} bytes",
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
        out.push_str(&format!("; differing offsets (kernel vs {side}): "));
        out.push_str(&diffs.join(", "));
    }
    out
}

/// Every entry that differs between the kernel's maps and those of `side`.
fn compare_maps(
    side: &str,
    kernel: &mut dyn MapStore,
    ours: &mut dyn MapStore,
) -> Result<Vec<String>> {
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
                            "map {name} key {ka:02x?}: kernel {va:02x?}, {side} {vb:02x?}"
                        ));
                    }
                    a.next();
                    b.next();
                }
                (Some((ka, va)), Some((kb, _))) if ka < kb => {
                    diffs.push(format!(
                        "map {name} key {ka:02x?}: kernel {va:02x?}, {side} has no entry"
                    ));
                    a.next();
                }
                (Some((ka, va)), None) => {
                    diffs.push(format!(
                        "map {name} key {ka:02x?}: kernel {va:02x?}, {side} has no entry"
                    ));
                    a.next();
                }
                (_, Some((kb, vb))) => {
                    diffs.push(format!(
                        "map {name} key {kb:02x?}: kernel has no entry, {side} {vb:02x?}"
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::under_test::{Hardware, UnderTest};
    use hwxdp_maps::Maps;
    use hwxdp_object::{MapSpec, ObjectSpec, ProgramSpec};
    use hwxdp_xdp::{Config, Machine, XdpMd};

    fn object(text: &str) -> ObjectSpec {
        let insns = hwxdp_ebpf::assemble(text).expect("assembles");
        ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns))
    }

    /// The hXDP core for `text`, built the way `verify --backend hxdp` builds it.
    fn core(spec: &ObjectSpec) -> Hardware {
        let program = ProgramArgs {
            object: "t.o".into(),
            program: None,
        };
        let backend = BackendArgs {
            backend: "hxdp".into(),
            lanes: 4,
            disable: Vec::new(),
            vcd: None,
            vcd_packets: 0..1,
            data_width: None,
            hazards: None,
        };
        backend
            .core(&program, spec, &Config::default())
            .expect("compiles")
            .expect("a core for --backend hxdp")
    }

    fn frame() -> Vec<u8> {
        (0..64u8).collect()
    }

    fn kernel(retval: u32, output: Vec<u8>) -> KernelRun {
        KernelRun {
            retval,
            output,
            meta_len: 0,
        }
    }

    /// Runs `frame()` on `tested` and compares it with what the kernel is said to have done.
    fn problems(tested: &mut dyn UnderTest, kernel: &KernelRun) -> Vec<String> {
        let mut buff = XdpBuff::new(&frame()).expect("frame");
        let o = tested.run_one(&mut buff, &XdpMd::default()).expect("runs");
        packet_problems(tested.side(), kernel, &o, buff.output())
    }

    #[test]
    fn core_that_agrees_with_the_kernel_has_no_problems() {
        let mut c = core(&object("r0 = 1\nexit"));
        assert_eq!(problems(&mut c, &kernel(1, frame())), Vec::<String>::new());
    }

    #[test]
    fn core_verdict_unlike_the_kernels_is_reported_as_hxdp() {
        let mut c = core(&object("r0 = 1\nexit"));
        assert_eq!(
            problems(&mut c, &kernel(2, frame())),
            vec!["verdict: kernel XDP_PASS, hxdp XDP_DROP".to_string()]
        );
    }

    #[test]
    fn core_fault_is_reported_with_its_reason() {
        // Reads far past the end of the context: the core stops the program, the kernel is said to have passed it.
        let mut c = core(&object("r0 = *(u32 *)(r1 + 4000)\nexit"));
        let found = problems(&mut c, &kernel(2, frame()));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0], "verdict: kernel XDP_PASS, hxdp XDP_ABORTED");
        assert!(
            found[1].starts_with("hxdp stopped the program: "),
            "{found:?}"
        );
    }

    #[test]
    fn reference_machine_keeps_its_name_in_reports() {
        let spec = object("r0 = 1\nexit");
        let mut m = Machine::new(&spec, None, &Config::default()).expect("loads");
        assert_eq!(
            problems(&mut m, &kernel(3, frame())),
            vec!["verdict: kernel XDP_TX, hwxdp XDP_DROP".to_string()]
        );
    }

    #[test]
    fn differing_bytes_are_listed_by_offset() {
        let mut theirs = frame();
        theirs[3] = 0xff;
        theirs.push(7);
        let tested = Tested {
            retval: 2,
            fault: None,
        };
        let found = packet_problems("hxdp", &kernel(2, theirs), &tested, &frame());
        assert_eq!(
            found,
            vec![
                "packet bytes: kernel 65 bytes, hxdp 64 bytes; differing offsets (kernel vs hxdp): \
                 3: ff vs 03, 64: 07 vs --"
                    .to_string()
            ]
        );
    }

    #[test]
    fn ring_buffer_records_are_compared() {
        let a = vec![vec![1u8, 2], vec![3]];
        let b = vec![vec![1u8, 2], vec![4]];
        assert_eq!(ringbuf_problem("hxdp", "events", &a, &a), None);
        assert_eq!(
            ringbuf_problem("hxdp", "events", &a, &b).as_deref(),
            Some(
                "ring buffer events: kernel has 2 records, hxdp 2 \
                 (first differing: kernel Some([03]), hxdp Some([04]))"
            )
        );
    }

    #[test]
    fn map_entries_that_differ_or_are_missing_are_listed() {
        let specs = [MapSpec::new("flows", 1, 4, 4, 8)];
        let mut theirs = Maps::new(&specs, 1).expect("maps");
        let mut ours = Maps::new(&specs, 1).expect("maps");
        theirs.update(0, &[1, 0, 0, 0], &[5, 0, 0, 0], 0).unwrap();
        ours.update(0, &[1, 0, 0, 0], &[6, 0, 0, 0], 0).unwrap();
        theirs.update(0, &[2, 0, 0, 0], &[7, 0, 0, 0], 0).unwrap();
        ours.update(0, &[3, 0, 0, 0], &[8, 0, 0, 0], 0).unwrap();
        assert_eq!(
            compare_maps("hxdp", &mut theirs, &mut ours).expect("compares"),
            vec![
                "map flows key [01, 00, 00, 00]: kernel [05, 00, 00, 00], hxdp [06, 00, 00, 00]",
                "map flows key [02, 00, 00, 00]: kernel [07, 00, 00, 00], hxdp has no entry",
                "map flows key [03, 00, 00, 00]: kernel has no entry, hxdp [08, 00, 00, 00]",
            ]
        );
        assert!(compare_maps("hxdp", &mut theirs.clone(), &mut theirs)
            .expect("compares")
            .is_empty());
    }
}
