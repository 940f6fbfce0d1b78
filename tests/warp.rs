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
