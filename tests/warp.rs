//! Program warping end to end (appendix D of the warping paper): for every example and its `hwxdp gen` trace,
//! `compile --target warp --pcap` runs the trace on the reference machine plainly and through the Warp Engine
//! (verdicts from the rules, the rest resumed from the restored context) and fails on the first packet whose
//! verdict, bytes, redirect or maps differ. Every rule set must also fit the engine and warp some instructions.

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

macro_rules! warp_tests {
    ($($name:ident $(, $opt:literal)*;)*) => {
        $(
            #[test]
            fn $name() {
                warped(stringify!($name), &[$($opt),*]);
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
