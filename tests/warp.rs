//! Program warping end to end (appendix D of the warping paper): for every example and its `hwxdp gen` trace,
//! `compile --target warp --pcap` runs the trace on the reference machine plainly and through the Warp Engine
//! (verdicts from the rules, the rest resumed from the restored context) and fails on the first packet whose
//! verdict, bytes, redirect or maps differ. Every rule set must also fit the engine and warp some instructions. And
//! `run --backend warp`, the engine in front of the hXDP cycle model, must give the reference machine's verdicts,
//! packets and maps on the same trace, in fewer cycles per packet than the core alone. `run --backend warp-rtl`, the
//! engine and the hXDP module in Verilog, must give them too on a short trace that hits every rule, in the cycles
//! `--backend warp` counts for each packet.

mod support;

use support::*;

fn warped(example: &str, extra: &[&str]) {
    let (obj, dir, trace) = workload(example, "warp");
    let out = format!("{dir}/warp");
    let mut args = vec![
        "compile",
        "--target",
        "warp",
        obj.as_str(),
        "-o",
        out.as_str(),
    ];
    args.extend(trace.iter().map(String::as_str));
    args.extend(extra);
    let run = hwxdp(&args);
    assert!(run.ok, "{}", run.all);
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("packets identical warped and plain"))
        .collect();
    assert!(!lines.is_empty(), "no comparison:\n{}", run.all);
    for line in &lines {
        assert_eq!(identical_count(line), Some(PACKETS), "{}", run.all);
    }
    let mut reduced = false;
    for entry in std::fs::read_dir(&out).expect("output directory") {
        let path = entry.expect("entry").path();
        let name = path.display().to_string();
        if name.ends_with(".report.json") {
            let report: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("report"))
                    .expect("JSON");
            let entries = report["tcam_entries"].as_u64().expect("tcam_entries");
            assert!(entries <= 64, "{name}: {entries} TCAM entries");
            assert!(
                report["key_bytes"].as_u64().expect("key_bytes") <= 16,
                "{name}"
            );
            assert!(
                report["stack_bytes"].as_u64().expect("stack_bytes") <= 136,
                "{name}"
            );
            // The hXDP image beside the rules has an entry bundle for every restore slot.
            let table = name.replace(".report.json", ".entries.json");
            let entries: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(&table).unwrap_or_else(|e| panic!("{table}: {e}")),
            )
            .expect("JSON");
            let slots: Vec<u64> = entries
                .as_array()
                .expect("a list")
                .iter()
                .map(|e| e["slot"].as_u64().expect("slot"))
                .collect();
            let restore: Vec<u64> = report["restore_slots"]
                .as_array()
                .expect("restore_slots")
                .iter()
                .map(|s| s.as_u64().expect("slot"))
                .collect();
            assert_eq!(slots, restore, "{table}");
        }
        if name.ends_with(".paths.json") {
            let paths: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("paths"))
                    .expect("JSON");
            reduced |= paths
                .as_array()
                .expect("a list")
                .iter()
                .any(|p| p["warped"].as_u64() < p["plain"].as_u64());
        }
    }
    assert!(
        reduced,
        "{example}: no path runs fewer instructions warped:\n{}",
        run.all
    );
}

/// `run --backend warp` (the engine in front of the hXDP cycle model, resuming at entry bundles) against the reference
/// machine on the example's trace: the same verdicts, packets and maps; every packet's cycles counted, some packets
/// matched, an entry bundle for every restore slot, and fewer cycles per packet than the core alone.
fn on_hxdp(example: &str, extra: &[&str]) {
    let (obj, dir, trace) = workload(example, "warp-hxdp");
    let mut args: Vec<&str> = trace.iter().map(String::as_str).collect();
    args.extend(extra);
    let stats = run_beside_interp(
        &obj,
        &args,
        ("warp", &[]),
        &format!("{dir}/interp"),
        &format!("{dir}/warp"),
    )
    .unwrap_or_else(|e| panic!("{example}: {e}"));
    assert_eq!(stats["packets"].as_u64(), Some(PACKETS as u64), "{stats}");
    let figures = &stats["figures"];
    let figure = |key: &str| {
        figures[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{example}: no {key} in {figures}"))
    };
    assert!(figure("matched_packets") > 0.0, "{example}: {figures}");
    // An entry point for the restores; a program the engine decides whole (hxdp_parse_drop) has none.
    assert!(
        figure("entry_points") >= 1.0 || figure("engine_verdicts") == PACKETS as f64,
        "{example}: {figures}"
    );
    assert_eq!(figure("engine_depth"), 29.0);
    let warped = stats["cycles_per_packet"]["mean"].as_f64().unwrap_or(0.0);
    assert!(warped >= 1.0, "{example}: {warped} cycles per packet");
    let mut plain_args = vec!["run", obj.as_str()];
    plain_args.extend(&args);
    let out = format!("{dir}/hxdp");
    plain_args.extend(["-o", out.as_str(), "--backend", "hxdp"]);
    let plain = hwxdp(&plain_args);
    assert!(plain.ok, "{}", plain.all);
    let hxdp = read_stats(&out)["cycles_per_packet"]["mean"]
        .as_f64()
        .unwrap_or(0.0);
    // Never slower; not always faster: hxdp_macswap_tx writes every packet, so its 9 cycles stay in the processor.
    assert!(
        warped <= hxdp,
        "{example}: {warped} cycles per packet warped, {hxdp} on the core alone"
    );
}

/// Appendix D: `hwxdp gen --warp` writes the equivalence trace of the example's rules; every rule is hit by one of
/// its frames (the software engine's lookup, in process), some frame matches no rule where such frames exist, and
/// `verify --backend warp --backend warp-interp` on that trace agrees with the kernel on every packet and map.
fn equivalence(example: &str, extra: &[&str]) {
    require_kernel();
    let obj = example_object(example);
    let dir = scratch_dir(&format!("warp-equivalence-{example}"));
    let gen = hwxdp(&["gen", "--warp", obj.as_str(), "-o", dir.as_str()]);
    assert!(gen.ok, "{}", gen.all);
    let spec = hwxdp_object::load(std::path::Path::new(&obj)).expect("object parses");
    let program = spec
        .programs
        .iter()
        .find(|p| p.name == example)
        .unwrap_or(&spec.programs[0]);
    let warp = hwxdp_warp::optimize_program(program, &spec.maps, &hwxdp_warp::Params::default())
        .expect("warps");
    let frames = read_pcap(&format!("{dir}/trace.pcap"));
    let engine = hwxdp_warp::Engine::new(&warp);
    let mut hit = vec![0usize; warp.rules.len()];
    let mut missed = 0usize;
    for f in &frames {
        match engine.lookup(f) {
            Some(rule) => hit[rule] += 1,
            None => missed += 1,
        }
    }
    let never: Vec<usize> = (0..hit.len()).filter(|&r| hit[r] == 0).collect();
    assert!(
        never.is_empty(),
        "{example}: rules {never:?} hit by no frame of {}",
        frames.len()
    );
    assert!(
        missed > 0
            || warp.rules.iter().any(|r| r
                .matches
                .iter()
                .any(|m| m.fields.is_empty() && m.length.is_none())),
        "{example}: no frame misses every rule, and no rule matches everything"
    );
    let mut args = vec!["verify", obj.as_str(), "--pcap"];
    let pcap = format!("{dir}/trace.pcap");
    args.push(&pcap);
    let files: Vec<(String, &str)> = [("maps.json", "--maps"), ("routes.json", "--routes")]
        .into_iter()
        .map(|(f, flag)| (format!("{dir}/{f}"), flag))
        .filter(|(f, _)| std::path::Path::new(f).exists())
        .collect();
    for (f, flag) in &files {
        args.extend([*flag, f.as_str()]);
    }
    args.extend(extra);
    args.extend(["--backend", "warp", "--backend", "warp-interp"]);
    let run = hwxdp(&args);
    assert!(run.ok, "{}", run.all);
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("packets identical"))
        .collect();
    // Every XDP program of the object (tail-call targets too) on each of the two backends.
    assert!(
        lines.len() >= 2 && lines.len().is_multiple_of(2),
        "{}",
        run.all
    );
    for line in lines {
        assert_eq!(identical_count(line), Some(frames.len()), "{}", run.all);
    }
}

/// Packets of the short `hwxdp gen` trace the RTL runs (before the packets added for the rules).
const RTL_PACKETS: usize = 24;

/// The engine's parameters `--backend warp-rtl` makes its rules with: Table 5's (a constant r0 restored through
/// the action line and the hXDP module's resume port; none of the examples here restores one wider than 32 bits).
fn rtl_params() -> hwxdp_warp::Params {
    hwxdp_warp::Params::default()
}

/// The short trace for the RTL in `dir`/`rtl.pcap`: `example`'s own trace of [`RTL_PACKETS`] packets, then from the
/// equivalence trace of the RTL's rules ([`rtl_params`]; `hwxdp gen --warp`'s, made in process, laid over the own
/// trace), the first frame that hits each rule (so every verdict and every restore runs: asserted) and the first two
/// that hit none. Gives the trace arguments (the own trace's `--maps`/`--routes`).
fn rtl_trace(example: &str, dir: &str) -> Vec<String> {
    let (obj, own, mut args) = workload_n(example, "warp-rtl-own", RTL_PACKETS);
    let spec = hwxdp_object::load(std::path::Path::new(&obj)).expect("object parses");
    let program = spec
        .programs
        .iter()
        .find(|p| p.name == example)
        .unwrap_or(&spec.programs[0]);
    let warp = hwxdp_warp::optimize_program(program, &spec.maps, &rtl_params()).expect("warps");
    let engine = hwxdp_warp::Engine::new(&warp);
    let mut frames = read_pcap(&format!("{own}/trace.pcap"));
    let options = hwxdp_gen::warp::WarpTraceOptions::default();
    let equivalence = hwxdp_warp::trace::equivalence_trace(&warp, &frames, &options, 1)
        .unwrap_or_else(|e| panic!("{example}: {e}"));
    let mut hit = vec![false; warp.rules.len()];
    let mut misses = 0;
    for f in equivalence.into_iter().map(|p| p.bytes) {
        match engine.lookup(&f) {
            Some(rule) if !hit[rule] => hit[rule] = true,
            None if misses < 2 => misses += 1,
            _ => continue,
        }
        frames.push(f);
    }
    let never: Vec<usize> = (0..hit.len()).filter(|&r| !hit[r]).collect();
    assert!(
        never.is_empty(),
        "{example}: rules {never:?} not in the RTL's trace"
    );
    let path = format!("{dir}/rtl.pcap");
    write_pcap(&path, &frames);
    args[1] = path;
    args
}

/// Writes `frames` to a pcap file, a microsecond apart.
fn write_pcap(path: &str, frames: &[Vec<u8>]) {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let header = pcap_file::pcap::PcapHeader {
        datalink: pcap_file::DataLink::ETHERNET,
        ts_resolution: pcap_file::TsResolution::NanoSecond,
        ..Default::default()
    };
    let mut writer = pcap_file::pcap::PcapWriter::with_header(file, header).expect("pcap header");
    for (i, f) in frames.iter().enumerate() {
        let at = std::time::Duration::from_micros(1_700_000_000_000_000 + i as u64);
        writer
            .write_packet(&pcap_file::pcap::PcapPacket::new(at, f.len() as u32, f))
            .expect("pcap record");
    }
}

/// Each packet's cycles in the `packets.jsonl` that `hwxdp run -o OUT` wrote.
fn packet_cycles(out: &str) -> Vec<u64> {
    std::fs::read_to_string(format!("{out}/packets.jsonl"))
        .unwrap_or_else(|e| panic!("{out}/packets.jsonl: {e}"))
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v["cycles"]
                .as_u64()
                .unwrap_or_else(|| panic!("no cycles in {l}"))
        })
        .collect()
}

/// `run --backend warp-rtl` (the engine and the hXDP module in Verilog) against the reference machine on the short
/// trace of [`rtl_trace`]: the same verdicts, packets and maps, and every packet's cycles those of `--backend warp`
/// (the engine's verdicts 1, the rest Sephirot's from its entry bundle or from the start).
fn on_rtl(example: &str, extra: &[&str]) {
    let dir = scratch_dir(&format!("warp-rtl-{example}"));
    let trace = rtl_trace(example, &dir);
    let obj = example_object(example);
    let mut args: Vec<&str> = trace.iter().map(String::as_str).collect();
    args.extend(extra);
    let rtl = format!("{dir}/rtl");
    let stats = run_beside_interp(
        &obj,
        &args,
        ("warp-rtl", &[]),
        &format!("{dir}/interp"),
        &rtl,
    )
    .unwrap_or_else(|e| panic!("{example}: {e}"));
    let figures = &stats["figures"];
    assert!(
        figures["matched_packets"].as_f64() > Some(0.0),
        "{example}: {figures}"
    );
    let model = format!("{dir}/warp");
    let mut warp_args = vec!["run", obj.as_str()];
    warp_args.extend(&args);
    // The model with the RTL's rules (the same parameters), so each packet's cycles compare.
    warp_args.extend(["-o", model.as_str(), "--backend", "warp"]);
    let warp = hwxdp(&warp_args);
    assert!(warp.ok, "{}", warp.all);
    let (on_rtl, on_model) = (packet_cycles(&rtl), packet_cycles(&model));
    assert_eq!(on_rtl.len(), on_model.len(), "{example}");
    let differ: Vec<(usize, u64, u64)> = (0..on_rtl.len())
        .filter(|&i| on_rtl[i] != on_model[i])
        .map(|i| (i, on_rtl[i], on_model[i]))
        .collect();
    assert!(
        differ.is_empty(),
        "{example}: packets (index, RTL cycles, model cycles) differ: {differ:?}"
    );
}

/// The frames of a pcap file.
fn read_pcap(path: &str) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut reader = pcap_file::pcap::PcapReader::new(file).expect("a pcap header");
    let mut frames = Vec::new();
    while let Some(packet) = reader.next_packet() {
        frames.push(packet.expect("a pcap record").data.into_owned());
    }
    frames
}

/// `--cores N` on `--backend warp`: the reference machine's results for every N, and the throughput (the slower of
/// the engine's packet a clock and N cores over their mean cycles) growing with N up to the engine's clock.
fn scaling(example: &str, extra: &[&str]) {
    let (obj, dir, trace) = workload(example, "warp-cores");
    let mut args: Vec<&str> = trace.iter().map(String::as_str).collect();
    args.extend(extra);
    let mut last = 0.0;
    for cores in ["1", "2", "4", "8"] {
        let stats = run_beside_interp(
            &obj,
            &args,
            ("warp", &["--cores", cores]),
            &format!("{dir}/interp-{cores}"),
            &format!("{dir}/warp-{cores}"),
        )
        .unwrap_or_else(|e| panic!("{example} --cores {cores}: {e}"));
        let figures = &stats["figures"];
        assert_eq!(
            figures["cores"].as_f64(),
            Some(cores.parse().unwrap()),
            "{figures}"
        );
        let rate = stats["packets_per_cycle"]
            .as_f64()
            .unwrap_or_else(|| panic!("{stats}"));
        let core = figures["core_cycles"].as_f64().expect("core_cycles");
        let n: f64 = cores.parse().unwrap();
        let want = if core == 0.0 {
            1.0
        } else {
            (n / core).min(1.0)
        };
        assert!(
            (rate - want).abs() < 1e-9,
            "{example} --cores {cores}: {rate} against {want}"
        );
        assert!(
            rate >= last,
            "{example}: {rate} packets per cycle with {cores} cores, {last} with fewer"
        );
        let rr = figures["round_robin_packets_per_cycle"]
            .as_f64()
            .expect("round robin");
        assert!(
            rr <= rate + 1e-9 && rr > 0.0,
            "{example} --cores {cores}: round robin {rr} > {rate}"
        );
        last = rate;
    }
}

macro_rules! warp_tests {
    ($($name:ident $(, $opt:literal)*;)*) => {
        $(
            mod $name {
                use super::*;

                #[test]
                fn rules_match_the_plain_run() {
                    warped(stringify!($name), &[$($opt),*]);
                }

                #[test]
                fn backend_warp_matches_interp() {
                    on_hxdp(stringify!($name), &[$($opt),*]);
                }

                #[test]
                fn gen_warp_hits_every_rule_and_verifies() {
                    equivalence(stringify!($name), &[$($opt),*]);
                }

                #[test]
                fn backend_warp_rtl_matches_interp_and_warp_cycles() {
                    on_rtl(stringify!($name), &[$($opt),*]);
                }

                #[test]
                fn cores_scale_the_processor() {
                    scaling(stringify!($name), &[$($opt),*]);
                }
            }
        )*
    };
}

with_examples!(warp_tests);

#[test]
fn warp_options_need_the_warp_target() {
    let obj = example_object("l2_acl");
    let dir = scratch_dir("warp-options");
    let run = hwxdp(&[
        "compile",
        "--target",
        "hxdp",
        &obj,
        "-o",
        &dir,
        "--warp-param",
        "chunk=64",
    ]);
    assert!(
        !run.ok && run.stderr.contains("need --target warp"),
        "{}",
        run.all
    );
    let run = hwxdp(&[
        "compile",
        "--target",
        "warp",
        &obj,
        "-o",
        &dir,
        "--warp-param",
        "lanes=4",
    ]);
    assert!(
        !run.ok && run.stderr.contains("no such parameter"),
        "{}",
        run.all
    );
}

#[test]
fn cores_and_profile_options_are_checked() {
    let (obj, dir, trace) = workload_n("l2_acl", "warp-cores-options", 20);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", obj.as_str()];
        args.extend(trace.iter().map(String::as_str));
        let out = format!("{dir}/out");
        args.extend(["-o", out.as_str()]);
        args.extend(extra);
        hwxdp(&args)
    };
    let zero = run(&["--backend", "warp", "--cores", "0"]);
    assert!(
        !zero.ok && zero.all.contains("--cores must be 1 to 64"),
        "{}",
        zero.all
    );
    let other = run(&["--backend", "hxdp", "--cores", "2"]);
    assert!(!other.ok && other.all.contains("--cores"), "{}", other.all);
    let pcap = format!("{dir}/trace.pcap");
    let interp = run(&["--backend", "warp-interp", "--warp-profile", pcap.as_str()]);
    assert!(interp.ok, "{}", interp.all);
    let missing = run(&["--backend", "warp", "--warp-profile", "/nonexistent.pcap"]);
    assert!(!missing.ok, "{}", missing.all);
}

/// The hook on the RTL (`rtl/warp/warp_hxdp.sv`), in process: from a packet's last beat into the engine to
/// Sephirot's start for it. l2_acl's frames of its `hwxdp gen` trace, one at a time: the engine's verdicts never
/// start Sephirot, and every restore starts it after the same number of cycles plus the frame's 32-byte beats (the
/// engine, then the frame's beats into the input queue, the APS, the stack writes), which `docs/warp.md` gives
/// (`-- --nocapture` prints it).
#[test]
fn rtl_engine_to_sephirot_latency() {
    let (obj, dir, _) = workload_n("l2_acl", "warp-rtl-latency", 40);
    let spec = hwxdp_object::load(std::path::Path::new(&obj)).expect("object parses");
    let entry = spec
        .programs
        .iter()
        .position(|p| p.name == "l2_acl")
        .expect("l2_acl");
    let warp = hwxdp_warp::optimize_program(&spec.programs[entry], &spec.maps, &rtl_params())
        .expect("warps");
    let mut rtl = start_warp_rtl(&spec, entry, &warp);
    let engine = hwxdp_warp::Engine::new(&warp);
    let mut restores = Vec::new();
    let frames = read_pcap(&format!("{dir}/trace.pcap"));
    let mut kinds: [Option<Vec<u8>>; 2] = [None, None]; // a verdict frame, a restore frame
    for frame in frames {
        let mut buff = hwxdp_xdp::XdpBuff::new(&frame).expect("a frame");
        rtl.run_packet(&mut buff, &hwxdp_xdp::XdpMd::default())
            .expect("runs");
        let latency = hwxdp_rtlsim::warp_hxdp::start_latency(&mut rtl).expect("latency");
        match engine.lookup(&frame).map(|r| &warp.rules[r].action) {
            Some(hwxdp_warp::Action::Verdict { .. }) => {
                kinds[0].get_or_insert(frame.clone());
                assert_eq!(latency, None, "an engine verdict started Sephirot");
                assert_eq!(rtl.last_cycles(), 0, "an engine verdict took core cycles");
            }
            Some(hwxdp_warp::Action::Restore(r)) => {
                kinds[1].get_or_insert(frame.clone());
                let beats = frame.len().div_ceil(32) as u64;
                restores.push((r.stack.len(), latency.map(|l| l - beats)));
            }
            None => println!(
                "miss, {} bytes: {latency:?} cycles to Sephirot's start",
                frame.len()
            ),
        }
    }
    assert!(!restores.is_empty(), "no restore in the trace");
    let first = restores[0];
    assert!(first.1.is_some(), "a restore did not start Sephirot");
    assert!(
        restores.iter().all(|r| *r == first),
        "restores start after different latencies (stack writes, cycles less the beats): {restores:?}"
    );
    println!(
        "l2_acl restore ({} stack writes): {} cycles plus the frame's 32-byte beats from its last beat into the \
         engine to Sephirot's start",
        first.0,
        first.1.unwrap_or(0)
    );
    // Back to back: the interval for each kind, on the combined top and on the hXDP module alone (12 copies: its
    // input queue holds 16 packets and drops the next, as a NIC does).
    let mut plain = hwxdp_rtlsim::hxdp::HxdpRtl::new(
        hwxdp_hxdp::compile_object(&spec, entry, &hwxdp_hxdp::Options::default())
            .expect("compiles")
            .image,
        &spec,
        Some("l2_acl"),
        &hwxdp_xdp::Config::default(),
        &rtl_paths(),
    )
    .expect("the hXDP model starts");
    for (kind, frame) in ["verdict", "restore"].iter().zip(&kinds) {
        let frame = frame.as_ref().unwrap_or_else(|| panic!("no {kind} frame"));
        let warped = hwxdp_rtlsim::warp_hxdp::interval(&mut rtl, frame, 12).expect("interval");
        let alone = hwxdp_rtlsim::warp_hxdp::interval(&mut plain, frame, 12).expect("interval");
        println!(
            "l2_acl {kind} frame of {} bytes back to back: {warped:.2} cycles a packet with the engine, {alone:.2} \
             on the hXDP module alone",
            frame.len()
        );
        assert!(warped >= 1.0 && alone >= 1.0, "{kind}: {warped} {alone}");
        assert!(
            warped < alone,
            "{kind}: {warped} cycles warped, {alone} alone"
        );
    }
}

/// `verify --backend warp-rtl` agrees with the kernel on l2_acl's short trace of [`rtl_trace`] (every rule hit).
#[test]
fn verify_warp_rtl_against_the_kernel() {
    require_kernel();
    let dir = scratch_dir("warp-rtl-verify-l2_acl");
    let trace = rtl_trace("l2_acl", &dir);
    let frames = read_pcap(&trace[1]).len();
    let obj = example_object("l2_acl");
    let mut args = vec!["verify", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend(["--backend", "warp-rtl"]);
    let run = hwxdp(&args);
    assert!(run.ok, "{}", run.all);
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("packets identical"))
        .collect();
    assert!(!lines.is_empty(), "{}", run.all);
    for line in lines {
        assert_eq!(identical_count(line), Some(frames), "{}", run.all);
    }
}

/// The RTL's r0 restore and its drops in front of the hXDP module, in process, on a small program: r0 = 2 (the
/// verdict the checks fall through to) is live at the packet write the engine cannot make, so that rule restores
/// it (the action line's r0, Sephirot's resume port); a first byte of 9 is an engine XDP_DROP, discarded before
/// the module (no core cycle, counted as received and dropped), back to back a 64-byte frame a clock; any other
/// first byte an engine XDP_PASS, which still goes through the module.
#[test]
fn rtl_restores_r0_and_drops_in_front_of_the_module() {
    let insns = hwxdp_ebpf::assemble(
        "r0 = 2\nr2 = *(u32 *)(r1 + 0)\nr3 = *(u32 *)(r1 + 4)\nr4 = r2\nr4 += 14\nif r4 > r3 goto out\n\
         r5 = *(u8 *)(r2 + 0)\nif r5 == 9 goto drop\nif r5 != 1 goto out\n*(u8 *)(r2 + 1) = 7\nout:\nexit\n\
         drop:\nr0 = 1\nexit",
    )
    .expect("assembles");
    let spec = hwxdp_object::ObjectSpec {
        programs: vec![hwxdp_object::ProgramSpec::standalone(
            "r0_drop", "xdp", insns,
        )],
        maps: Vec::new(),
        license: "GPL".into(),
    };
    let warp =
        hwxdp_warp::optimize_program(&spec.programs[0], &spec.maps, &rtl_params()).expect("warps");
    let r0s: Vec<Option<u64>> = warp
        .rules
        .iter()
        .filter_map(|r| match &r.action {
            hwxdp_warp::Action::Restore(x) => Some(x.r0),
            hwxdp_warp::Action::Verdict { .. } => None,
        })
        .collect();
    assert_eq!(r0s, [Some(2)], "{}", hwxdp_warp::render::rules_table(&warp));
    let mut rtl = start_warp_rtl(&spec, 0, &warp);
    let frame = |first: u8| {
        let mut f: Vec<u8> = (0..64).map(|i| (i * 7 + 3) as u8).collect();
        f[0] = first;
        f
    };
    use hwxdp_xdp::Verdict::{Drop, Pass};
    // (first byte, verdict, byte 1 after, core cycles spent)
    for (first, verdict, byte1, core) in [
        (1, Pass, 7, true),
        (9, Drop, frame(9)[1], false),
        (5, Pass, frame(5)[1], false),
    ] {
        let mut buff = hwxdp_xdp::XdpBuff::new(&frame(first)).expect("a frame");
        let got = rtl
            .run_packet(&mut buff, &hwxdp_xdp::XdpMd::default())
            .expect("runs");
        assert_eq!(got, verdict, "first byte {first}");
        assert_eq!(buff.data()[1], byte1, "first byte {first}");
        assert_eq!(buff.data().len(), 64, "first byte {first}");
        assert_eq!(rtl.last_cycles() > 0, core, "first byte {first}");
    }
    let (rx, tx, drop) = rtl.counters().expect("counters");
    assert_eq!((rx, tx, drop), (3, 2, 1), "received, passed, dropped");
    // Back to back: the engine's drops take an input beat a clock (64 bytes: a 64-byte frame a clock), its passes
    // the module's emission.
    let beats = 64usize.div_ceil(64) as f64;
    let dropped = hwxdp_rtlsim::warp_hxdp::interval(&mut rtl, &frame(9), 16).expect("interval");
    let passed = hwxdp_rtlsim::warp_hxdp::interval(&mut rtl, &frame(5), 12).expect("interval");
    println!(
        "64-byte frames back to back: {dropped:.2} cycles a packet dropped by the engine, {passed:.2} passed by it \
         through the hXDP module"
    );
    assert_eq!(dropped, beats, "drops back to back");
    assert!(passed > dropped, "{passed} cycles a pass, {dropped} a drop");
    let (rx, _, drop) = rtl.counters().expect("counters");
    assert_eq!((rx, drop), (3 + 16 + 12, 1 + 16), "received, dropped");
}

/// The sources the RTL models build from: embedded, or the checkout `HWXDP_ROOT` names.
fn rtl_paths() -> hwxdp_rtlsim::hxdp::RtlPaths {
    hwxdp_rtlsim::hxdp::RtlPaths {
        source_root: std::env::var_os("HWXDP_ROOT")
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from),
        ..hwxdp_rtlsim::hxdp::RtlPaths::embedded(model_cache())
    }
}

/// Program `entry` of `spec` compiled with the restore points of `warp`, on the Warp Engine + hXDP model.
fn start_warp_rtl(
    spec: &hwxdp_object::ObjectSpec,
    entry: usize,
    warp: &hwxdp_warp::Warp,
) -> hwxdp_rtlsim::hxdp::HxdpRtl {
    let compiled = hwxdp_hxdp::compile_object_with_entries(
        spec,
        entry,
        &hwxdp_hxdp::Options::default(),
        &warp.report.restore_slots,
    )
    .expect("compiles");
    hwxdp_rtlsim::warp_hxdp::start(
        compiled.image.clone(),
        spec,
        Some(&spec.programs[entry].name),
        &hwxdp_xdp::Config::default(),
        &rtl_paths(),
        warp,
        &compiled.entry_points,
    )
    .expect("the Warp Engine + hXDP model starts")
}
