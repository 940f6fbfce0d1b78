//! `hwxdp run`: a trace through a program on one backend: one pcap per verdict, `stats.json`, a per-packet log, the
//! records the program emitted, and optionally the maps and an instruction trace.

use crate::backends::{self, BackendArgs};
use crate::common::{self, ProgramArgs, TraceArgs};
use crate::drive::Feeder;
use crate::tally::{self, Mpps, Spread, Tally};
use crate::{progress, trace};
use anyhow::{bail, Context, Result};
use hwxdp_backend::{Backend, Capabilities, Packet, Ran, Record};
use hwxdp_xdp::{Clock, Config, Verdict, XdpBuff};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const AFTER_HELP: &str = "\
Writes to OUT: aborted/drop/pass/tx/redirect.pcap (the packets as the program left them, by verdict), stats.json
(verdicts and the figures the backend has: instructions and paths for software, cycles per packet for processors,
a pipeline's latency and packets per cycle; coverage where the backend can map its work back to eBPF
instructions), packets.jsonl (one line a packet: index, input time, verdict, redirect, instructions or cycles,
fault, the exit instruction), records.jsonl (ring buffer records and perf samples with their cpu, when the object
has ring buffers or perf event arrays), perf_samples.pcap (the packet bytes perf samples carry, BPF_F_CTXLEN_MASK),
trace_printk.txt (bpf_trace_printk lines) and, with --dump-maps, maps.json.";

/// Arguments of `hwxdp run`.
#[derive(clap::Args)]
#[command(mut_arg("program", |a| a.help("The XDP program to run, by function or section name (default: the object's only XDP program, or the one named like the file)")))]
#[command(after_help = format!("{AFTER_HELP}\n\n{}\n\n{}", backends::backends_help(), crate::exit::AFTER_HELP))]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    #[command(flatten)]
    trace: TraceArgs,
    /// Directory for the pcaps, stats.json, packets.jsonl and the rest (created if missing).
    #[arg(short = 'o', long = "out")]
    out: PathBuf,
    /// Also write the maps after the last packet to OUT/maps.json (bpftool JSON shape). Arrays of more than 2^20
    /// entries list only their non-zero entries unless `--dump-maps=all` is given.
    #[arg(long, value_name = "WHICH", num_args = 0..=1, require_equals = true, default_missing_value = "nonzero")]
    dump_maps: Option<DumpMaps>,
    /// Write the slot index of every executed instruction, one JSON line per packet, to this file (backends that
    /// can map their work back to eBPF instructions).
    #[arg(long)]
    insn_trace: Option<PathBuf>,
    /// Seed of bpf_get_prandom_u32.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    backend: BackendArgs,
}

/// What `--dump-maps` lists of arrays above 2^20 entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum DumpMaps {
    /// Only entries holding a non-zero value (every entry of other maps).
    Nonzero,
    /// Every entry, zeros included.
    All,
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

#[derive(Serialize)]
struct Stats {
    object: String,
    program: String,
    backend: &'static str,
    packets: usize,
    skipped: usize,
    verdicts: BTreeMap<&'static str, usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    insns_per_packet: Option<Spread>,
    #[serde(skip_serializing_if = "Option::is_none")]
    paths: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cycles_per_packet: Option<Spread>,
    #[serde(skip_serializing_if = "Option::is_none")]
    packets_per_cycle: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mpps: Vec<Mpps>,
    figures: serde_json::Map<String, serde_json::Value>,
    faults: usize,
    first_faults: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<Vec<CoverageStats>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    records: BTreeMap<String, usize>,
}

/// Runs `hwxdp run`.
pub fn run(args: Args) -> Result<ExitCode> {
    let loaded = common::load_object(&args.program.object)?;
    let program = backends::one_xdp_program(&loaded.spec, &args.program)?;
    let entries = args.backend.entries(&["interp"], false)?;
    let [entry] = entries.as_slice() else {
        bail!("run takes one --backend (verify and bench take several)");
    };
    if let Some(vcd) = &args.backend.vcd {
        check_vcd_packets(&args, vcd)?;
    }
    let config = Config {
        possible_cpus: hwxdp_kernel::possible_cpus().unwrap_or(1),
        clock: Clock::Virtual,
        seed: args.seed,
        record_trace: args.insn_trace.is_some(),
        ..Config::default()
    };
    let session = backends::Session::new(
        &loaded,
        &args.program,
        &args.trace,
        &args.backend,
        config,
        &entries,
        true,
    )?;
    let mut backend = session.create(entry, &program)?;
    let caps = backend.capabilities();
    if args.insn_trace.is_some() && !caps.insn_trace {
        let refused = hwxdp_backend::BackendError::Unsupported {
            backend: backend.name(),
            what: "record which eBPF instructions ran (its work has no map back to them); use --backend interp"
                .into(),
        };
        return Err(anyhow::Error::new(refused).context("--insn-trace"));
    }
    common::create_dir(&args.out)?;
    let mut out = Outputs::create(&args, &loaded.spec, &mut *backend)?;
    let bar = progress::counter("run");
    let mut feeder = Feeder::new(&mut *backend, bar.clone());
    let (mut index, mut skipped) = (0usize, 0usize);
    let mut each = |i: usize, packet: &Packet, ran: Ran| out.packet(i, packet, ran);
    let ports = trace::interfaces(&args.trace.pcap)?;
    trace::for_each(&args.trace.pcap, |time_ns, data| {
        let i = index;
        index += 1;
        if let Err(e) = XdpBuff::new(data) {
            eprintln!("hwxdp: packet {i}: skipped: {e}");
            skipped += 1;
            return Ok(());
        }
        let mut md = common::metadata(&args.trace, data);
        md.ingress_ifindex += ports.get(i).copied().unwrap_or(0);
        let packet = Packet {
            bytes: data.to_vec(),
            md,
            time_ns,
        };
        feeder.push(i, packet, &mut each)
    })?;
    feeder.flush(&mut each)?;
    drop(feeder);
    out.skipped = skipped;
    bar.finish_and_clear();
    let late = backend.drain_records()?;
    out.late_records(late)?;
    if let Some(which) = args.dump_maps {
        let dump = match which {
            DumpMaps::Nonzero => hwxdp_maps::json::dump(backend.maps())?,
            DumpMaps::All => hwxdp_maps::json::dump_all(backend.maps())?,
        };
        common::write_json(&args.out.join("maps.json"), &dump)?;
    }
    backend.finish()?;
    let stats = out.finish(&args, &program, &*backend, caps)?;
    common::write_json(&args.out.join("stats.json"), &stats)?;
    print_summary(&stats, backend.as_ref(), &args.out, &args.backend.clocks());
    Ok(ExitCode::SUCCESS)
}

/// `--vcd-packets` must name packets of the trace.
fn check_vcd_packets(args: &Args, vcd: &Path) -> Result<()> {
    let range = args.backend.vcd_packets.clone().unwrap_or(0..1);
    let packets = trace::for_each(&args.trace.pcap, |_, _| Ok(()))? as u64;
    if range.start >= packets || range.end > packets {
        bail!(
            "--vcd-packets {}..{}: the trace {} has {packets} packets, so {} records nothing or runs past its end",
            range.start,
            range.end,
            args.trace.pcap.display(),
            vcd.display()
        );
    }
    Ok(())
}

/// Everything `run` writes while the packets go through.
struct Outputs {
    dir: PathBuf,
    writers: Vec<trace::Writer>,
    counts: [usize; Verdict::NAMED.len()],
    ran: usize,
    skipped: usize,
    tally: Tally,
    log: BufWriter<File>,
    records: Option<BufWriter<File>>,
    /// `perf_samples.pcap`: the packet bytes of perf samples (`BPF_F_CTXLEN_MASK`), when the object has perf event
    /// arrays.
    samples: Option<trace::Writer>,
    record_counts: BTreeMap<String, usize>,
    insn_trace: Option<BufWriter<File>>,
    printk: Vec<String>,
    /// The object's programs, for the exit instruction's name and source line.
    programs: Vec<hwxdp_object::ProgramSpec>,
    maps: Vec<String>,
    /// The interface each device map entry names, read before the first packet (programs cannot write them).
    devmap_ifindex: BTreeMap<(usize, u64), u32>,
    /// A multi-port NIC's output queues (`--backend ebpflow`).
    queues: Option<Queues>,
}

/// `OUT/queues/tx<p>.pcap` (port p's TX queue) and `OUT/queues/host.pcap`: where a multi-port NIC sends each packet,
/// by Table 4.2 of the eBPFlow thesis: XDP_TX to the input port, XDP_REDIRECT to the port of the interface it names
/// (the host queue when it names none of the NIC's), XDP_PASS to the host queue; the rest is dropped.
struct Queues {
    first_ifindex: u32,
    writers: Vec<trace::Writer>,
}

impl Queues {
    fn create(dir: &Path, ports: usize, first_ifindex: u32) -> Result<Queues> {
        let dir = dir.join("queues");
        common::create_dir(&dir)?;
        let mut writers = Vec::new();
        for p in 0..ports {
            writers.push(trace::Writer::create(&dir.join(format!("tx{p}.pcap")))?);
        }
        writers.push(trace::Writer::create(&dir.join("host.pcap"))?);
        Ok(Queues {
            first_ifindex,
            writers,
        })
    }

    fn write(&mut self, packet: &Packet, ran: &Ran, redirect_ifindex: Option<u32>) -> Result<()> {
        let ports = self.writers.len() - 1;
        let port_of = |ifindex: u32| {
            let p = ifindex.wrapping_sub(self.first_ifindex) as usize;
            if p < ports {
                p
            } else {
                ports
            }
        };
        let queue = match (ran.fault.is_some(), ran.verdict()) {
            (true, _) => return Ok(()),
            (_, Verdict::Pass) => ports,
            (_, Verdict::Tx) => port_of(packet.md.ingress_ifindex),
            (_, Verdict::Redirect) => match redirect_ifindex {
                Some(i) => port_of(i),
                None => return Ok(()),
            },
            _ => return Ok(()),
        };
        self.writers[queue].write(packet.time_ns, ran.data())
    }

    fn finish(self) -> Result<()> {
        for w in self.writers {
            w.finish()?;
        }
        Ok(())
    }
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    Ok(BufWriter::new(File::create(path).with_context(|| {
        format!("{}: cannot create", path.display())
    })?))
}

impl Outputs {
    fn create(
        args: &Args,
        spec: &hwxdp_object::ObjectSpec,
        backend: &mut dyn Backend,
    ) -> Result<Outputs> {
        let mut writers = Vec::new();
        for v in Verdict::NAMED {
            writers.push(trace::Writer::create(
                &args.out.join(format!("{}.pcap", v.bucket())),
            )?);
        }
        let has_rings = !hwxdp_backend::record_maps(&spec.maps).is_empty();
        let has_perf = !hwxdp_backend::perf_event_arrays(&spec.maps).is_empty();
        let mut devmap_ifindex = BTreeMap::new();
        for (m, map) in spec.maps.iter().enumerate() {
            if !backends::DEVMAP_TYPES.contains(&map.map_type) {
                continue;
            }
            for (key, value) in backend.maps().entries(m)? {
                if let (Some(k), Some(v)) = (key.get(..4), value.get(..4)) {
                    let key = u32::from_le_bytes([k[0], k[1], k[2], k[3]]);
                    devmap_ifindex.insert(
                        (m, u64::from(key)),
                        u32::from_le_bytes([v[0], v[1], v[2], v[3]]),
                    );
                }
            }
        }
        Ok(Outputs {
            dir: args.out.clone(),
            writers,
            counts: [0; Verdict::NAMED.len()],
            ran: 0,
            skipped: 0,
            tally: Tally::default(),
            log: create(&args.out.join("packets.jsonl"))?,
            records: if has_rings {
                Some(create(&args.out.join("records.jsonl"))?)
            } else {
                None
            },
            samples: if has_perf {
                Some(trace::Writer::create(&args.out.join("perf_samples.pcap"))?)
            } else {
                None
            },
            record_counts: BTreeMap::new(),
            insn_trace: args.insn_trace.as_deref().map(create).transpose()?,
            printk: Vec::new(),
            programs: spec.programs.clone(),
            maps: spec.maps.iter().map(|m| m.name.clone()).collect(),
            devmap_ifindex,
            queues: if backend.summary().figures.iter().any(|f| f.key == "ports") {
                let ports = args.backend.ports.unwrap_or(4);
                Some(Queues::create(&args.out, ports, args.trace.ifindex)?)
            } else {
                None
            },
        })
    }

    fn packet(&mut self, index: usize, packet: &Packet, ran: Ran) -> Result<()> {
        let verdict = ran.verdict();
        let bucket = Verdict::NAMED
            .iter()
            .position(|v| v.bucket() == verdict.bucket())
            .unwrap_or(0);
        self.counts[bucket] += 1;
        self.writers[bucket].write(packet.time_ns, ran.data())?;
        self.ran += 1;
        self.tally.add(index, &ran);
        let redirect_ifindex = ran.redirect.and_then(|r| match r.map {
            None => Some(r.key as u32),
            Some(m) => self.devmap_ifindex.get(&(m, r.key)).copied(),
        });
        if let Some(q) = self.queues.as_mut() {
            q.write(packet, &ran, redirect_ifindex)?;
        }
        let redirect = ran.redirect.map(|r| {
            let ifindex = redirect_ifindex;
            json!({
                "map": r.map.and_then(|m| self.maps.get(m)),
                "key": r.key,
                "ifindex": ifindex,
            })
        });
        let exit = ran.exit.map(|site| {
            let program = self.programs.get(site.program);
            let line = program
                .and_then(|p| p.source_line(site.slot as usize))
                .map(|l| format!("{}:{}: {}", l.file, l.line, l.text.trim()));
            json!({
                "program": program.map(|p| &p.name),
                "insn": site.slot,
                "line": line,
            })
        });
        let line = json!({
            "packet": index,
            "time_ns": packet.time_ns,
            "verdict": verdict.to_string(),
            "redirect": redirect,
            "insns": ran.insns,
            "cycles": ran.cycles,
            "fault": ran.fault,
            "exit": exit,
        });
        writeln!(self.log, "{line}")?;
        self.write_records(Some((index, packet.time_ns)), &ran.records)?;
        self.printk
            .extend(ran.printk.iter().map(|l| format!("packet {index}: {l}")));
        if let Some(out) = self.insn_trace.as_mut() {
            let slots: Vec<String> = ran
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
    }

    /// One JSON line a record (perf samples with their cpu), and the packet bytes of perf samples to
    /// `perf_samples.pcap`, stamped with the time of the packet that wrote them (`packet`: index and time; `None` for
    /// records read after the trace, stamped 0).
    fn write_records(&mut self, packet: Option<(usize, u64)>, records: &[Record]) -> Result<()> {
        let Some(out) = self.records.as_mut() else {
            return Ok(());
        };
        for r in records {
            let name = self.maps.get(r.map).cloned().unwrap_or_default();
            let hex: String = r.bytes.iter().map(|b| format!("{b:02x}")).collect();
            let index = packet.map(|p| p.0);
            let line = match r.cpu {
                Some(cpu) => json!({"packet": index, "map": name, "cpu": cpu, "bytes": hex}),
                None => json!({"packet": index, "map": name, "bytes": hex}),
            };
            writeln!(out, "{line}")?;
            *self.record_counts.entry(name).or_default() += 1;
            let sampled = r
                .packet
                .as_ref()
                .and_then(|range| r.bytes.get(range.clone()));
            if let (Some(pcap), Some(bytes)) = (self.samples.as_mut(), sampled) {
                pcap.write(packet.map_or(0, |p| p.1), bytes)?;
            }
        }
        Ok(())
    }

    /// Records a batch backend could not attribute to a packet.
    fn late_records(&mut self, records: Vec<Record>) -> Result<()> {
        self.write_records(None, &records)
    }

    fn finish(
        mut self,
        args: &Args,
        program: &str,
        backend: &dyn Backend,
        caps: Capabilities,
    ) -> Result<Stats> {
        for w in self.writers {
            w.finish()?;
        }
        if let Some(q) = self.queues.take() {
            q.finish()?;
        }
        self.log.flush()?;
        if let Some(mut r) = self.records.take() {
            r.flush()?;
        }
        if let Some(pcap) = self.samples.take() {
            pcap.finish()?;
        }
        if let Some(mut t) = self.insn_trace.take() {
            t.flush()?;
        }
        if !self.printk.is_empty() {
            std::fs::write(
                self.dir.join("trace_printk.txt"),
                self.printk.join("\n") + "\n",
            )?;
        }
        let summary = backend.summary();
        let cycles = self.tally.cycles();
        let coverage = caps.coverage.then(|| backend.coverage()).flatten();
        Ok(Stats {
            object: args.program.object.display().to_string(),
            program: program.to_string(),
            backend: backend.name(),
            packets: self.ran,
            skipped: self.skipped,
            verdicts: Verdict::NAMED
                .iter()
                .zip(self.counts)
                .map(|(v, n)| (v.bucket(), n))
                .collect(),
            insns_per_packet: self.tally.insns(),
            paths: self.tally.paths(),
            mpps: tally::mpps(&args.backend.clocks(), cycles.as_ref(), &summary),
            cycles_per_packet: cycles,
            packets_per_cycle: summary.packets_per_cycle,
            figures: tally::figures_json(&summary),
            faults: self.tally.faults,
            first_faults: std::mem::take(&mut self.tally.first_faults),
            coverage: coverage.map(|c| {
                c.into_iter()
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
                    .collect()
            }),
            records: self.record_counts,
        })
    }
}

fn print_summary(stats: &Stats, backend: &dyn Backend, out: &Path, clocks: &[f64]) {
    let counts: Vec<String> = stats
        .verdicts
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    println!(
        "{}: {} packets on {}: {}",
        stats.program,
        stats.packets,
        stats.backend,
        counts.join(", ")
    );
    if let Some(i) = &stats.insns_per_packet {
        println!(
            "instructions per packet: min {} mean {:.1} max {}; {} distinct paths",
            i.min,
            i.mean,
            i.max,
            stats.paths.unwrap_or(0)
        );
    }
    if let Some(c) = &stats.cycles_per_packet {
        println!(
            "cycles per packet: min {} mean {:.1} max {}; {}",
            c.min,
            c.mean,
            c.max,
            tally::mpps_text(&stats.mpps)
        );
    }
    let summary = backend.summary();
    if !summary.figures.is_empty() {
        println!("{}: {}", stats.backend, tally::figures_text(&summary));
    }
    if let Some(ppc) = stats.packets_per_cycle {
        println!(
            "packets per cycle: {ppc:.3} ({} packets); {}",
            stats.packets,
            tally::mpps_text(&stats.mpps)
        );
    }
    if let Some(ports) = crate::compare::port_rates(&summary, clocks) {
        println!("per port: {ports}");
    }
    match &stats.coverage {
        Some(coverage) => {
            for c in coverage {
                println!(
                    "coverage of {}: {}/{} instructions, {}/{} branches both ways",
                    c.program,
                    c.instructions_executed,
                    c.instructions,
                    c.branches_both_ways,
                    c.branches
                );
            }
        }
        None => println!(
            "coverage: not measured on {} (its work has no map back to eBPF instructions; --backend interp has it)",
            stats.backend
        ),
    }
    if stats.skipped > 0 {
        println!("{} packets skipped (not a valid XDP frame)", stats.skipped);
    }
    for (map, n) in &stats.records {
        println!("{n} records in {map}");
    }
    for f in &stats.first_faults {
        println!("fault: {f}");
    }
    println!("wrote {}", out.display());
}
