//! Program warping end to end (appendix D of the warping paper): for every example and its `hwxdp gen` trace,
//! `compile --target warp --pcap` runs the trace on the reference machine plainly and through the Warp Engine
//! (verdicts from the rules, the rest resumed from the restored context) and fails on the first packet whose
//! verdict, bytes, redirect or maps differ. Every rule set must also fit the engine and warp some instructions. And
//! `run --backend warp`, the engine in front of the hXDP cycle model, must give the reference machine's verdicts,
//! packets and maps on the same trace, in fewer cycles per packet than the core alone.

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
    assert!(figure("entry_points") >= 1.0, "{example}: {figures}");
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
    assert!(
        warped < hxdp,
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
