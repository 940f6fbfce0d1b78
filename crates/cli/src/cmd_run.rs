//! `hwxdp run`: a trace through a program on the reference machine (or, with `--backend`, on the hXDP core model, the
//! hXDP module's RTL or the program's eHDL pipeline).

use crate::common::{self, ProgramArgs, TraceArgs};
use crate::under_test::{self, BackendArgs};
use crate::{progress, trace};
use anyhow::{Context, Result};
use hwxdp_rtlsim::ehdl::PacketIn;
use hwxdp_xdp::{Clock, Config, Machine, Verdict, XdpBuff};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hwxdp run`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    trace: TraceArgs,
    /// Directory for aborted/drop/pass/tx/redirect.pcap and stats.json.
    #[arg(short = 'o', long = "out")]
    out: PathBuf,
    /// Also write the maps after the last packet to OUT/maps.json (bpftool JSON shape).
    #[arg(long)]
    dump_maps: bool,
    /// Write the slot index of every executed instruction, one JSON line per packet, to this file.
    #[arg(long)]
    insn_trace: Option<PathBuf>,
    /// Seed of bpf_get_prandom_u32.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    backend: BackendArgs,
}

/// Cycle figures of `--backend hxdp` and `hxdp-rtl`.
#[derive(Serialize)]
struct HxdpStats {
    backend: &'static str,
    lanes: usize,
    bundles: usize,
    cycles_per_packet: InsnStats,
    mpps_156_25_mhz: f64,
    mpps_250_mhz: f64,
}

/// Pipeline figures of `--backend ehdl-rtl`: the generated module's, and the trace's measured in the simulation.
#[derive(Serialize)]
struct EhdlStats {
    backend: &'static str,
    data_width: u32,
    stages: usize,
    /// Cycles from the first packet's first beat in to its first beat out, as measured.
    latency_cycles: u64,
    /// Packets over the cycles from the first beat in to the last beat out, the trace streamed back to back.
    packets_per_cycle: f64,
    cycles: u64,
    /// Input beats (frames of `data_width` bits): at most one a cycle.
    beats: u64,
    /// Cycles the stall checks (map hazards between packets in flight) held the input.
    stall_cycles: u64,
    stall_checks: usize,
    /// With `--hazards flush`: the flushes (cycles a flush evaluation block dropped younger packets to replay them)
    /// and the checks the blocks watch.
    flushes: u64,
    flush_checks: usize,
    /// With `--hazards flush`: the boundary of the elastic buffer a flush replays from (0: the input buffer).
    elastic_boundary: u32,
    /// The largest read-to-write distance of a stall check, in stages (the paper's `L`).
    hazard_distance: u32,
    /// The earliest stage of a stall check's first access (the paper's `K` is this plus 4).
    hazard_stage: u32,
    state_flops: u64,
    frame_flops: u64,
}

impl EhdlStats {
    fn of(e: &hwxdp_rtlsim::ehdl::EhdlRtl) -> EhdlStats {
        let (f, t) = (e.figures(), e.totals());
        EhdlStats {
            backend: "ehdl-rtl",
            data_width: e.pipeline().summary.data_width,
            stages: f.stages,
            latency_cycles: t.latency,
            packets_per_cycle: t.packets_per_cycle(),
            cycles: t.cycles,
            beats: t.beats,
            stall_cycles: t.stall_cycles,
            stall_checks: f.stall_checks,
            flushes: t.flushes,
            flush_checks: f.flush_checks,
            elastic_boundary: f.elastic_boundary,
            hazard_distance: f.hazard_distance,
            hazard_stage: f.hazard_stage,
            state_flops: f.state_flops,
            frame_flops: f.frame_flops,
        }
    }
}

#[derive(Serialize, Default)]
struct InsnStats {
    min: u64,
    mean: f64,
    max: u64,
}

#[derive(Serialize)]
struct Stats {
    object: String,
    program: String,
    packets: usize,
    skipped: usize,
    verdicts: BTreeMap<&'static str, usize>,
    insns_per_packet: InsnStats,
    paths: usize,
    faults: usize,
    first_faults: Vec<String>,
    coverage: Vec<CoverageStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hxdp: Option<HxdpStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ehdl: Option<EhdlStats>,
}

/// Coverage of one program, as `stats.json` shows it.
#[derive(Serialize)]
struct CoverageStats {
    program: String,
    instructions_executed: usize,
    instructions: usize,
    branches_both_ways: usize,
    branches: usize,
    never_executed: Vec<u32>,
    one_way_branches: Vec<OneWay>,
}

#[derive(Serialize)]
struct OneWay {
    insn: u32,
    taken: bool,
}

/// Path ids are already hashes: hashing them again (SipHash, per packet) would be wasted work.
#[derive(Default)]
struct PathHashHasher(u64);

impl Hasher for PathHashHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Runs `hwxdp run`.
pub fn run(args: Args) -> Result<ExitCode> {
    let loaded = common::load_object(&args.program.object)?;
    let config = Config {
        possible_cpus: hwxdp_kernel::possible_cpus().unwrap_or(1),
        clock: Clock::Virtual,
        seed: args.seed,
        record_trace: args.insn_trace.is_some(),
        routes: common::load_routes(&args.trace)?,
        ..Config::default()
    };
    let mut machine = Machine::new(
        &loaded.spec,
        args.program.chosen(&loaded.spec).as_deref(),
        &config,
    )
    .with_context(|| args.program.object.display().to_string())?;
    let mut core = args.backend.core(&args.program, &loaded.spec, &config)?;
    if let Some(path) = &args.trace.maps {
        let file = common::load_maps(path)?;
        let target = under_test::chosen(core.as_mut(), &mut machine).maps();
        hwxdp_maps::json::preload(target, &file).with_context(|| path.display().to_string())?;
    }
    if let Some(c) = core.as_mut().filter(|c| c.ehdl().is_some()) {
        // The pipeline takes the whole trace back to back; the loop below then hands out its results in order.
        let mut batch = Vec::new();
        trace::for_each(&args.trace.pcap, |time_ns, data| {
            if XdpBuff::new(data).is_ok() {
                batch.push(PacketIn {
                    bytes: data.to_vec(),
                    md: common::metadata(&args.trace, data),
                    time_ns,
                });
            }
            Ok(())
        })?;
        c.queue(batch)?;
    }
    common::create_dir(&args.out)?;
    let mut writers = Vec::new();
    for v in Verdict::NAMED {
        writers.push(trace::Writer::create(
            &args.out.join(format!("{}.pcap", v.bucket())),
        )?);
    }
    let mut insn_trace = match &args.insn_trace {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("{}: cannot create", p.display()))?,
        )),
        None => None,
    };
    let mut printk = Vec::new();
    let mut counts = [0usize; Verdict::NAMED.len()];
    let (mut min, mut max, mut total, mut ran) = (u64::MAX, 0u64, 0u64, 0usize);
    let mut paths: HashSet<u64, BuildHasherDefault<PathHashHasher>> = HashSet::default();
    let mut faults = (0usize, Vec::new());
    let mut skipped = 0;
    let mut buff = XdpBuff::new(&[0; 64]).expect("a 64-byte frame fits");
    let bar = progress::counter("run");
    let mut i = 0usize;
    trace::for_each(&args.trace.pcap, |time_ns, data| {
        let index = i;
        i += 1;
        if index.is_multiple_of(4096) {
            bar.set_position(index as u64);
        }
        if let Err(e) = buff.reset(data) {
            eprintln!("hwxdp: packet {index}: skipped: {e}");
            skipped += 1;
            return Ok(());
        }
        let md = common::metadata(&args.trace, data);
        let outcome = match core.as_mut() {
            Some(c) => {
                c.set_time(time_ns);
                let verdict = c
                    .run_packet(&mut buff, &md)
                    .with_context(|| format!("packet {index}"))?;
                hwxdp_xdp::Outcome {
                    retval: verdict.retval(),
                    insns: c.cycles(),
                    ..Default::default()
                }
            }
            None => {
                machine.set_time(time_ns);
                machine.run_packet(&mut buff, &md)
            }
        };
        let verdict = outcome.verdict();
        let bucket = Verdict::NAMED
            .iter()
            .position(|v| v.bucket() == verdict.bucket())
            .unwrap_or(0);
        counts[bucket] += 1;
        writers[bucket].write(time_ns, buff.data())?;
        ran += 1;
        min = min.min(outcome.insns);
        max = max.max(outcome.insns);
        total += outcome.insns;
        paths.insert(outcome.path);
        if let Some(f) = &outcome.fault {
            faults.0 += 1;
            if faults.1.len() < 10 {
                faults.1.push(format!("packet {index}: {f}"));
            }
        }
        printk.extend(
            outcome
                .printk
                .iter()
                .map(|l| format!("packet {index}: {l}")),
        );
        if let Some(out) = insn_trace.as_mut() {
            let slots: Vec<String> = outcome
                .trace
                .iter()
                .map(|(p, s)| format!("[{p},{s}]"))
                .collect();
            writeln!(
                out,
                "{{\"packet\":{index},\"insns\":[{}]}}",
                slots.join(",")
            )?;
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    for w in writers {
        w.finish()?;
    }
    let verdicts: BTreeMap<&'static str, usize> = Verdict::NAMED
        .iter()
        .zip(counts)
        .map(|(v, n)| (v.bucket(), n))
        .collect();
    if let Some(mut out) = insn_trace {
        out.flush()?;
    }
    if !printk.is_empty() {
        std::fs::write(args.out.join("trace_printk.txt"), printk.join("\n") + "\n")?;
    }
    if args.dump_maps {
        let maps = under_test::chosen(core.as_mut(), &mut machine).maps();
        let dump = hwxdp_maps::json::dump(maps)?;
        common::write_json(&args.out.join("maps.json"), &dump)?;
    }
    if let Some(under_test::Hardware::Rtl(rtl)) = core.as_mut() {
        // Closes a waveform still being written, so that its file is complete when run returns.
        rtl.finish()?;
    }
    let hxdp = core.as_ref().and_then(|c| {
        let (st, image) = (c.stats()?, c.image()?);
        Some(HxdpStats {
            backend: c.name(),
            lanes: args.backend.lanes,
            bundles: image.bundles.len(),
            cycles_per_packet: InsnStats {
                min: st.min,
                mean: st.mean(),
                max: st.max,
            },
            mpps_156_25_mhz: hwxdp_hxdp::timing::mpps(
                hwxdp_hxdp::timing::CLOCK_PAPER_MHZ,
                st.mean(),
            ),
            mpps_250_mhz: hwxdp_hxdp::timing::mpps(hwxdp_hxdp::timing::CLOCK_FAST_MHZ, st.mean()),
        })
    });
    let ehdl = core.as_ref().and_then(|c| c.ehdl()).map(EhdlStats::of);
    let stats = Stats {
        hxdp,
        ehdl,
        object: args.program.object.display().to_string(),
        program: machine.entry().name.clone(),
        packets: ran,
        skipped,
        verdicts,
        insns_per_packet: if ran == 0 {
            InsnStats::default()
        } else {
            InsnStats {
                min,
                mean: total as f64 / ran as f64,
                max,
            }
        },
        paths: paths.len(),
        faults: faults.0,
        first_faults: faults.1,
        coverage: machine
            .coverage()
            .into_iter()
            .map(|c| CoverageStats {
                program: c.program,
                instructions_executed: c.executed,
                instructions: c.total,
                branches_both_ways: c.branches_both_ways,
                branches: c.branches,
                never_executed: c.never_executed,
                one_way_branches: c
                    .one_way
                    .into_iter()
                    .map(|(insn, taken)| OneWay { insn, taken })
                    .collect(),
            })
            .collect(),
    };
    common::write_json(&args.out.join("stats.json"), &stats)?;
    print_summary(&stats, &args.out);
    Ok(ExitCode::SUCCESS)
}

fn print_summary(stats: &Stats, out: &std::path::Path) {
    let counts: Vec<String> = stats
        .verdicts
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    println!(
        "{}: {} packets: {}",
        stats.program,
        stats.packets,
        counts.join(", ")
    );
    println!(
        "instructions per packet: min {} mean {:.1} max {}; {} distinct paths",
        stats.insns_per_packet.min,
        stats.insns_per_packet.mean,
        stats.insns_per_packet.max,
        stats.paths
    );
    for c in &stats.coverage {
        println!(
            "coverage of {}: {}/{} instructions, {}/{} branches both ways",
            c.program, c.instructions_executed, c.instructions, c.branches_both_ways, c.branches
        );
    }
    if stats.skipped > 0 {
        println!("{} packets skipped (not a valid XDP frame)", stats.skipped);
    }
    if let Some(h) = &stats.hxdp {
        println!(
            "{}: {} lanes, {} bundles; cycles per packet: min {} mean {:.1} max {}; {:.2} Mpps at 156.25 MHz, {:.2} Mpps at 250 MHz",
            h.backend, h.lanes, h.bundles, h.cycles_per_packet.min, h.cycles_per_packet.mean, h.cycles_per_packet.max,
            h.mpps_156_25_mhz, h.mpps_250_mhz
        );
    }
    if let Some(e) = &stats.ehdl {
        println!(
            "{}: {} stages at {} bits, latency {} cycles; {:.3} packets per cycle ({} packets in {} cycles), {} stall cycles \
             ({} stall checks){}",
            e.backend, e.stages, e.data_width, e.latency_cycles, e.packets_per_cycle, stats.packets, e.cycles,
            e.stall_cycles, e.stall_checks,
            if e.flush_checks > 0 {
                format!(", {} flushes ({} flush checks)", e.flushes, e.flush_checks)
            } else {
                String::new()
            }
        );
    }
    for f in &stats.first_faults {
        println!("fault: {f}");
    }
    println!("wrote {}", out.display());
}
