//! The hXDP differential suite: every bundled example's trace through the compiled image on the Sephirot cycle model
//! (`hwxdp run --backend hxdp`) and through the reference machine (`--backend interp`): verdicts (one pcap per
//! verdict, in order), packet bytes and the final maps must be identical. The same traces go through the core and the
//! Linux kernel (`hwxdp verify --backend hxdp`), and `hwxdp bench --backend hxdp` reports the core's figures. Needs
//! the examples built (`make examples`) and, for verify and bench, root (the kernel runs BPF_PROG_TEST_RUN).

mod support;

use support::*;

fn run(obj: &str, args: &[&str], out: &str, backend: &[&str]) -> serde_json::Value {
    let mut all = vec!["run", obj];
    all.extend(args);
    all.extend(["-o", out, "--dump-maps"]);
    all.extend(backend);
    let r = hwxdp(&all);
    assert!(r.ok, "hwxdp {} failed:\n{}", all.join(" "), r.all);
    read_stats(out)
}

fn same_files(a: &str, b: &str, example: &str) {
    for name in [
        "aborted.pcap",
        "drop.pcap",
        "pass.pcap",
        "tx.pcap",
        "redirect.pcap",
        "maps.json",
    ] {
        let x = std::fs::read(format!("{a}/{name}")).unwrap_or_default();
        let y = std::fs::read(format!("{b}/{name}")).unwrap_or_default();
        assert!(
            x == y,
            "{example}: {name} differs between interp ({a}) and hxdp ({b})"
        );
    }
}

fn differential(example: &str, extra: &[&str], backend: &[&str]) {
    let tag = format!("hxdp-{}", backend.join("").replace(['-', ','], ""));
    let (obj, dir, trace) = workload(example, &tag);
    let mut args: Vec<&str> = trace.iter().map(String::as_str).collect();
    args.extend(extra);
    let interp = run(&obj, &args, &format!("{dir}/interp"), &[]);
    let mut hx = vec!["--backend", "hxdp"];
    hx.extend(backend);
    let hxdp = run(&obj, &args, &format!("{dir}/hxdp"), &hx);
    assert_eq!(
        interp["verdicts"], hxdp["verdicts"],
        "{example}: verdict counts differ"
    );
    assert!(
        hxdp["packets"].as_u64().unwrap_or(0) >= 1000,
        "{example}: too few packets"
    );
    let cycles = hxdp["cycles_per_packet"]["mean"].as_f64().unwrap_or(0.0);
    assert!(
        cycles >= 2.0,
        "{example}: {cycles} cycles per packet is not a run of the core"
    );
    same_files(&format!("{dir}/interp"), &format!("{dir}/hxdp"), example);
}

/// `hwxdp verify --backend hxdp`: every packet and every map of the core identical to the kernel's.
fn verify_against_kernel(example: &str, extra: &[&str]) {
    require_kernel();
    let (obj, _dir, trace) = workload(example, "hxdp-verify");
    let mut args = vec!["verify", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend(extra);
    args.extend(["--backend", "hxdp"]);
    let verify = hwxdp(&args);
    assert!(
        verify.ok,
        "verify --backend hxdp found a difference for {example}:\n{}",
        verify.all
    );
    let identical = identical_count(&verify.stdout)
        .unwrap_or_else(|| panic!("no 'N packets identical' for {example}:\n{}", verify.all));
    assert!(
        identical >= 1000,
        "{example}: only {identical} packets compared:\n{}",
        verify.all
    );
    assert!(
        verify.stdout.contains(" maps identical; hxdp: 4 lanes, "),
        "{example}: no map or cycle figures in the summary:\n{}",
        verify.all
    );
    let mean: f64 = verify
        .stdout
        .split("mean ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no mean cycles for {example}:\n{}", verify.all));
    assert!(
        mean >= 2.0,
        "{example}: {mean} cycles per packet:\n{}",
        verify.all
    );
}

macro_rules! hxdp_tests {
    ($($name:ident $(, $arg:literal)*;)*) => {$(
        mod $name {
            use super::*;

            #[test]
            fn run_matches_interp() {
                differential(stringify!($name), &[$($arg),*], &[]);
            }

            #[test]
            fn verify_matches_kernel() {
                verify_against_kernel(stringify!($name), &[$($arg),*]);
            }
        }
    )*};
}

with_examples!(hxdp_tests);

/// One lane and eight lanes schedule differently but must compute the same.
#[test]
fn lanes_one_and_eight() {
    for lanes in ["1", "8"] {
        for example in ["firewall", "katran_lb", "tunnel"] {
            differential(example, &[], &["--lanes", lanes]);
        }
    }
}

/// Every pass off gives the plain schedule, which must compute the same too.
#[test]
fn passes_disabled() {
    for example in ["firewall", "xdp2_macswap", "nat"] {
        differential(
            example,
            &[],
            &[
                "--disable",
                "bounds,zeroing,three-operand,six-byte,exit,rename,code-motion,parallel-branches",
            ],
        );
    }
}

/// `bench --backend hxdp --json`: the core's figures beside the kernel's and the reference machine's, the existing keys
/// unchanged, Mpps derived from the mean cycles, and those cycles the ones `run --backend hxdp` reports.
#[test]
fn bench_reports_the_core() {
    require_kernel();
    let (obj, dir, trace) = workload("firewall", "hxdp-bench");
    let mut args = vec!["bench", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend([
        "--backend",
        "hxdp",
        "--lanes",
        "2",
        "--json",
        "--min-ms",
        "20",
        "--repeat",
        "50",
        "--kernel-samples",
        "20",
    ]);
    let bench = hwxdp(&args);
    assert!(bench.ok, "bench failed:\n{}", bench.all);
    let report: serde_json::Value =
        serde_json::from_str(&bench.stdout).expect("bench --json is JSON");
    for (backend, key) in [
        ("kernel", "ns_per_packet"),
        ("interp", "ns_per_packet"),
        ("interp", "ns_per_insn"),
    ] {
        assert!(
            report["backends"][backend][key].as_f64().unwrap_or(0.0) > 0.0,
            "{backend} {key}:\n{}",
            bench.all
        );
    }
    let h = &report["backends"]["hxdp"];
    let number = |key: &str| {
        h[key]
            .as_f64()
            .unwrap_or_else(|| panic!("backends.hxdp.{key} missing:\n{}", bench.all))
    };
    let cycles = number("cycles_per_packet");
    assert!(cycles > 0.0, "{}", bench.all);
    assert!(number("ns_per_packet") > 0.0 && number("packets_per_second") > 0.0);
    for (i, clock) in [156.25, 250.0].into_iter().enumerate() {
        assert_eq!(h["mpps"][i]["clock_mhz"].as_f64(), Some(clock), "{h}");
        let mpps = h["mpps"][i]["mpps"].as_f64().unwrap_or(0.0);
        assert!((mpps - clock / cycles).abs() < 1e-9, "{h}");
    }
    assert_eq!(h["lanes"].as_u64(), Some(2));
    assert!(h["bundles"].as_u64().unwrap_or(0) > 0);
    assert!(report["backends"]["kernel"].is_object() && report["backends"]["interp"].is_object());

    let mut run_args: Vec<&str> = trace.iter().map(String::as_str).collect();
    run_args.extend(["--lanes", "2"]);
    let stats = run(
        &obj,
        &run_args,
        &format!("{dir}/run"),
        &["--backend", "hxdp"],
    );
    assert_eq!(
        stats["cycles_per_packet"]["mean"].as_f64(),
        Some(cycles),
        "bench and run --backend hxdp disagree on the cycles of the same trace"
    );
}

/// The table shows a row per backend, the core's below the kernel's and the reference machine's, each with the
/// figures it has.
#[test]
fn bench_table_has_the_core_columns() {
    require_kernel();
    let (obj, _dir, trace) = workload("xdp2_macswap", "hxdp-bench-table");
    let mut args = vec!["bench", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend(["--backend", "hxdp", "--min-ms", "20", "--repeat", "50"]);
    let bench = hwxdp(&args);
    assert!(bench.ok, "bench failed:\n{}", bench.all);
    let lines: Vec<&str> = bench.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        4,
        "one header, a row per backend:\n{}",
        bench.all
    );
    let head: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        head,
        [
            "program",
            "backend",
            "packets",
            "ns/pkt",
            "x",
            "kernel",
            "insns/pkt",
            "ns/insn",
            "cyc/pkt",
            "pkt/cycle",
            "Mpps@156.25MHz",
            "Mpps@250MHz"
        ],
        "{}",
        bench.all
    );
    let row = |i: usize| lines[i].split_whitespace().collect::<Vec<_>>();
    assert_eq!(row(1)[..2], ["xdp2_macswap", "kernel"]);
    assert_eq!(row(2)[..2], ["xdp2_macswap", "interp"]);
    // The core's row: ns/pkt, x kernel, then its cycles and rates; no instruction counts.
    assert_eq!(row(3)[..2], ["xdp2_macswap", "hxdp"]);
    assert_eq!(row(3).len(), 3 + 2 + 3, "{}", bench.all);
}
