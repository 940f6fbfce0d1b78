//! The commands over the one backend interface: every backend reports the figures it has and no others, programs are
//! chosen the same way everywhere, and `verify` and `bench` put several backends side by side in one run.

mod support;

use support::*;

/// A trace of `example`'s workload (40 packets) and its arguments.
fn short(example: &str, tag: &str) -> (String, String, Vec<String>) {
    workload_n(example, tag, 40)
}

fn args<'a>(head: &[&'a str], trace: &'a [String], tail: &[&'a str]) -> Vec<&'a str> {
    let mut all = head.to_vec();
    all.extend(trace.iter().map(String::as_str));
    all.extend(tail);
    all
}

#[test]
fn hxdp_reports_cycles_not_instructions_and_no_coverage_it_cannot_measure() {
    let (obj, dir, trace) = short("firewall", "be-hxdp");
    let out = format!("{dir}/out");
    let run = hwxdp(&args(
        &["run", &obj],
        &trace,
        &["-o", &out, "--backend", "hxdp", "--clock-mhz", "100"],
    ));
    assert!(run.ok, "{}", run.all);
    let stats = read_stats(&out);
    assert_eq!(stats["backend"], "hxdp");
    assert!(stats.get("insns_per_packet").is_none(), "{stats}");
    assert!(stats.get("coverage").is_none(), "{stats}");
    let mean = stats["cycles_per_packet"]["mean"].as_f64().expect("cycles");
    assert!(mean > 0.0, "{stats}");
    assert_eq!(stats["mpps"][0]["clock_mhz"].as_f64(), Some(100.0));
    assert!((stats["mpps"][0]["mpps"].as_f64().unwrap() - 100.0 / mean).abs() < 1e-9);
    assert!(
        stats["figures"]["bundles"].as_u64().unwrap_or(0) > 0,
        "{stats}"
    );
    assert!(
        !run.stdout.contains("instructions per packet"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("coverage: not measured on hxdp"),
        "{}",
        run.stdout
    );
    let log = std::fs::read_to_string(format!("{out}/packets.jsonl")).expect("packets.jsonl");
    let first: serde_json::Value =
        serde_json::from_str(log.lines().next().expect("a line")).unwrap();
    assert!(
        first["cycles"].as_u64().is_some() && first["insns"].is_null(),
        "{first}"
    );

    let refused = hwxdp(&args(
        &["run", &obj],
        &trace,
        &[
            "-o",
            &out,
            "--backend",
            "hxdp",
            "--insn-trace",
            &format!("{dir}/t.jsonl"),
        ],
    ));
    assert_eq!(refused.code, Some(2), "{}", refused.all);
    assert!(
        refused
            .stderr
            .contains("--insn-trace: --backend hxdp cannot record"),
        "{}",
        refused.stderr
    );
}

#[test]
fn the_reference_machine_logs_every_packet_with_its_exit_line_and_ring_buffer_records() {
    let (obj, dir, trace) = short("firewall", "be-log");
    let out = format!("{dir}/out");
    let run = hwxdp(&args(
        &["run", &obj],
        &trace,
        &["-o", &out, "--rings", "packet"],
    ));
    assert!(run.ok, "{}", run.all);
    let log = std::fs::read_to_string(format!("{out}/packets.jsonl")).expect("packets.jsonl");
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let stats = read_stats(&out);
    assert_eq!(lines.len() as u64, stats["packets"].as_u64().unwrap());
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["packet"].as_u64(), Some(i as u64), "{l}");
        assert!(l["insns"].as_u64().unwrap_or(0) > 0, "{l}");
        let line = l["exit"]["line"].as_str().unwrap_or_default();
        assert!(line.contains("firewall.c:"), "{l}");
    }
    // The firewall reports every dropped flow's first packet into its ring buffer.
    let records = std::fs::read_to_string(format!("{out}/records.jsonl")).expect("records.jsonl");
    let first: serde_json::Value =
        serde_json::from_str(records.lines().next().expect("a record")).unwrap();
    assert!(
        first["packet"].as_u64().is_some() && first["bytes"].is_string(),
        "{first}"
    );
    assert_eq!(
        stats["records"]
            .as_object()
            .map(|m| m.values().filter_map(|v| v.as_u64()).sum::<u64>()),
        Some(records.lines().count() as u64)
    );
}

#[test]
fn an_endless_program_on_hxdp_is_stopped_with_its_reason() {
    let dir = scratch_dir("be-endless");
    let obj = compile_c(
        &dir,
        "spin",
        r#"#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int spin(struct xdp_md *ctx)
{
	volatile int x = 0;
	while (x == 0)
		;
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"#,
    );
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "2"]);
    assert!(gen.ok, "{}", gen.all);
    for backend in ["interp", "hxdp"] {
        let out = format!("{dir}/{backend}");
        let run = hwxdp(&[
            "run",
            &obj,
            "--pcap",
            &format!("{dir}/trace.pcap"),
            "-o",
            &out,
            "--backend",
            backend,
        ]);
        assert!(run.ok, "{}", run.all);
        let stats = read_stats(&out);
        assert_eq!(stats["faults"].as_u64(), Some(2), "{backend}: {stats}");
        let first = stats["first_faults"][0].as_str().unwrap_or_default();
        assert!(first.starts_with("packet 0: "), "{backend}: {first}");
        assert!(run.stdout.contains("fault: packet 0: "), "{}", run.stdout);
    }
}

/// An object with two XDP programs of different sizes and a tc program.
fn mixed(dir: &str) -> String {
    compile_c(
        dir,
        "mixed",
        r#"#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
SEC("xdp")
int small(struct xdp_md *ctx)
{
	return XDP_PASS;
}
SEC("xdp")
int large(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	unsigned char *p = data;
	if (data + 14 > end)
		return XDP_ABORTED;
	if (p[12] == 0x08 && p[13] == 0x00)
		return XDP_DROP;
	if (p[12] == 0x86 && p[13] == 0xdd)
		return XDP_TX;
	return XDP_PASS;
}
SEC("tc")
int classifier(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}
char _license[] SEC("license") = "GPL";
"#,
    )
}

#[test]
fn programs_that_are_not_xdp_are_refused_naming_the_xdp_ones() {
    let dir = scratch_dir("be-tc");
    let obj = mixed(&dir);
    let (_, _, trace) = short("l2_acl", "be-tc-trace");
    let run = hwxdp(&args(
        &["run", &obj, "--program", "classifier"],
        &trace,
        &["-o", &dir],
    ));
    assert_eq!(run.code, Some(2), "{}", run.all);
    assert!(
        run.stderr
            .contains("classifier is a tc program, not an XDP program")
            && run.stderr.contains("small in xdp")
            && run.stderr.contains("large in xdp"),
        "{}",
        run.stderr
    );
    let several = hwxdp(&args(&["run", &obj], &trace, &["-o", &dir]));
    assert_eq!(several.code, Some(2), "{}", several.all);
    assert!(
        several.stderr.contains("choose one with --program")
            && several.stderr.contains("small in xdp, large in xdp")
            && !several.stderr.contains("classifier"),
        "{}",
        several.stderr
    );
}

#[test]
fn verify_and_bench_take_every_xdp_program_and_several_backends_in_one_run() {
    require_kernel();
    let dir = scratch_dir("be-several");
    let obj = mixed(&dir);
    // The trace alone: l2_acl's map preloads do not fit this object.
    let (_, _, mut trace) = short("l2_acl", "be-several-trace");
    trace.truncate(2);
    let verify = hwxdp(&args(
        &["verify", &obj],
        &trace,
        &["--backend", "interp", "--backend", "hxdp"],
    ));
    assert!(verify.ok, "{}", verify.all);
    let lines: Vec<&str> = verify.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", verify.stdout);
    for (line, (program, backend)) in lines.iter().zip([
        ("small", "interp"),
        ("small", "hxdp"),
        ("large", "interp"),
        ("large", "hxdp"),
    ]) {
        assert!(
            line.starts_with(&format!("{program}: "))
                && line.contains(&format!("identical; {backend}: ")),
            "{line}"
        );
    }
    // Each program's own image: the larger program needs more bundles.
    let bundles = |program: &str| -> u64 {
        let v = hwxdp(&args(
            &["verify", &obj, "--program", program],
            &trace,
            &["--backend", "hxdp", "--json"],
        ));
        assert!(v.ok, "{}", v.all);
        let report: serde_json::Value = serde_json::from_str(&v.stdout).expect("JSON");
        assert_eq!(report.as_array().map(Vec::len), Some(1), "{report}");
        assert_eq!(report[0]["program"], program);
        report[0]["figures"]["bundles"].as_u64().expect("bundles")
    };
    assert!(bundles("small") < bundles("large"));

    let b = hwxdp(&args(
        &["bench", &obj],
        &trace,
        &[
            "--json",
            "--min-ms",
            "1",
            "--repeat",
            "5",
            "--kernel-samples",
            "2",
            "--backend",
            "kernel",
            "--backend",
            "interp",
            "--backend",
            "hxdp",
        ],
    ));
    assert!(b.ok, "{}", b.all);
    let reports: serde_json::Value = serde_json::from_str(&b.stdout).expect("JSON");
    assert_eq!(reports.as_array().map(Vec::len), Some(2), "{reports}");
    for r in reports.as_array().unwrap() {
        for backend in ["kernel", "interp", "hxdp"] {
            assert!(
                r["backends"][backend]["ns_per_packet"]
                    .as_f64()
                    .unwrap_or(0.0)
                    > 0.0,
                "{r}"
            );
        }
        assert!(
            r["backends"]["hxdp"]["cycles_per_packet"]
                .as_f64()
                .is_some(),
            "{r}"
        );
        assert!(
            r["backends"]["interp"]["insns_per_packet"]
                .as_f64()
                .is_some(),
            "{r}"
        );
    }
}

#[test]
fn verify_keeps_going_writes_the_differing_packets_and_speaks_json() {
    require_kernel();
    let dir = scratch_dir("be-differ");
    // Random numbers: the kernel's and the reference machine's differ, so some verdicts do.
    let obj = ehdl_refused_object(&dir);
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "64"]);
    assert!(gen.ok, "{}", gen.all);
    let pcap = format!("{dir}/trace.pcap");
    let first = hwxdp(&["verify", &obj, "--pcap", &pcap]);
    assert_eq!(first.code, Some(1), "{}", first.all);
    assert_eq!(
        first.stdout.matches(" differs\n").count(),
        1,
        "{}",
        first.stdout
    );
    let diff = format!("{dir}/diff.pcap");
    let all = hwxdp(&[
        "verify",
        &obj,
        "--pcap",
        &pcap,
        "--keep-going",
        "--diff-pcap",
        &diff,
    ]);
    assert_eq!(all.code, Some(1), "{}", all.all);
    let differing = all.stdout.matches(" differs\n").count();
    assert!(differing > 1, "{}", all.stdout);
    let json = hwxdp(&["verify", &obj, "--pcap", &pcap, "--keep-going", "--json"]);
    assert_eq!(json.code, Some(1), "{}", json.all);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(report[0]["identical"], false);
    assert!(
        report[0]["differences"].as_array().map_or(0, Vec::len) > 1,
        "{report}"
    );
    // The differing packets, written again as a trace, still differ: every one of them.
    let again = hwxdp(&["verify", &obj, "--pcap", &diff, "--keep-going", "--json"]);
    let rerun: serde_json::Value = serde_json::from_str(&again.stdout).expect("JSON");
    assert_eq!(
        rerun[0]["compared"].as_u64(),
        Some(differing as u64),
        "{rerun}"
    );
}

#[test]
fn bench_without_root_runs_the_other_backends_and_says_why_the_kernel_is_missing() {
    let (obj, _, trace) = short("l2_acl", "be-noroot");
    let mut argv = vec![
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        env!("CARGO_BIN_EXE_hwxdp"),
        "bench",
        obj.as_str(),
    ];
    argv.extend(trace.iter().map(String::as_str));
    argv.extend(["--min-ms", "1"]);
    let out = std::process::Command::new("setpriv")
        .args(&argv)
        .current_dir("/")
        .output()
        .expect("setpriv (util-linux) runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    let row = |backend: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().take(2).eq(["l2_acl", backend]))
            .unwrap_or_else(|| panic!("no {backend} row in {stdout}"))
    };
    let interp = row("interp");
    assert!(!interp.contains("not run"), "{stdout}");
    let kernel = row("kernel");
    assert!(kernel.contains("not run: "), "{stdout}");
}

#[test]
fn an_option_no_chosen_backend_takes_is_refused() {
    let (obj, dir, trace) = short("l2_acl", "be-options");
    for (extra, needle) in [
        (
            vec!["--lanes", "2"],
            "--lanes is an option of --backend hxdp or hxdp-rtl, not of interp",
        ),
        (
            vec!["--backend", "hxdp", "--data-width", "256"],
            "--data-width is an option of --backend ehdl-rtl",
        ),
        (vec!["--backend", "fpga"], "no backend \"fpga\""),
        (
            vec!["--backend", "interp", "--backend", "hxdp"],
            "run takes one --backend",
        ),
    ] {
        let mut a = args(&["run", &obj], &trace, &["-o", &dir]);
        a.extend(extra);
        let r = hwxdp(&a);
        assert_eq!(r.code, Some(2), "{}", r.all);
        assert!(r.stderr.contains(needle), "{needle:?} not in {}", r.stderr);
    }
}

#[test]
fn run_on_the_kernel_writes_what_the_reference_machine_writes() {
    require_kernel();
    let (obj, dir, trace) = short("firewall", "be-kernel-run");
    let args: Vec<&str> = trace.iter().map(String::as_str).collect();
    let stats = run_beside_interp(
        &obj,
        &args,
        ("kernel", &[]),
        &format!("{dir}/interp"),
        &format!("{dir}/kernel"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stats["backend"], "kernel");
    // The kernel reports no figures of its own, and no coverage.
    assert!(
        stats.get("insns_per_packet").is_none() && stats.get("coverage").is_none(),
        "{stats}"
    );
}

#[test]
fn vcd_packets_outside_the_trace_are_refused_before_any_model_is_built() {
    let (obj, dir, trace) = short("xdp1_drop", "be-vcd-range");
    let mut a = args(
        &["run", &obj],
        &trace,
        &["-o", &dir, "--backend", "hxdp-rtl"],
    );
    a.extend(["--vcd", "w.vcd", "--vcd-packets", "40..42"]);
    let r = hwxdp(&a);
    assert_eq!(r.code, Some(2), "{}", r.all);
    assert!(
        r.stderr.contains("--vcd-packets 40..42: the trace") && r.stderr.contains("has 40 packets"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("building"), "{}", r.stderr);
}

#[test]
fn program_help_says_what_each_command_does_with_it() {
    for (command, words) in [
        ("run", "The XDP program to run"),
        ("verify", "every XDP program of the object, in turn"),
        ("bench", "The XDP program to time"),
    ] {
        let help = hwxdp(&[command, "--help"]);
        assert!(help.ok, "{}", help.all);
        assert!(help.stdout.contains(words), "{command}: {}", help.stdout);
        assert!(
            help.stdout.contains("Exit status:"),
            "{command}: {}",
            help.stdout
        );
        assert!(
            help.stdout.contains("HWXDP_CACHE_DIR"),
            "{command}: {}",
            help.stdout
        );
    }
}
