//! The differential suite: every bundled example, with the trace `hwxdp gen` writes for it, through the Linux kernel
//! and the reference machine, alone and behind the Warp Engine, and the hXDP core behind the engine (`hwxdp verify
//! --backend interp --backend warp-interp --backend warp`): no difference in verdicts, packet bytes or final maps is
//! allowed.
//!
//! Needs the examples built (`make examples`) and a kernel that runs BPF programs (root). Where `bpf()` is not
//! available the kernel half cannot run: each test then says so loudly on standard error and checks only the reference
//! machine.

mod support;

use support::*;

fn differential(example: &str, extra: &[&str]) {
    // The trace, its map preloads and the route table bpf_fib_lookup consults, given to the kernel and the reference
    // machine alike.
    let (obj, dir, trace) = workload(example, "diff");
    let mut args = vec!["verify", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend(extra);
    check_coverage(example, &args, &dir);
    require_kernel();
    // The reference machine, and the Warp Engine in front of it and of the hXDP core, against the kernel in one run.
    args.extend([
        "--backend",
        "interp",
        "--backend",
        "warp-interp",
        "--backend",
        "warp",
    ]);
    let verify = hwxdp(&args);
    assert!(
        verify.ok,
        "hwxdp verify found a difference for {example}:\n{}",
        verify.all
    );
    let identical = identical_count(&verify.stdout).unwrap_or_else(|| {
        panic!(
            "no 'N packets identical' in the output for {example}:\n{}",
            verify.all
        )
    });
    assert!(
        identical >= 1000,
        "{example}: only {identical} packets compared:\n{}",
        verify.all
    );
    for backend in ["interp", "warp-interp", "warp"] {
        assert!(
            verify
                .stdout
                .contains(&format!(" maps identical; {backend}: ")),
            "{example}: no line for {backend}:\n{}",
            verify.all
        );
    }
}

/// Instructions of each program the trace must execute, in percent. What stays unexecuted is the handling of helper
/// failures that cannot happen with valid arguments, bounds checks for frames shorter than the 14 bytes the kernel
/// accepts, and (rxq_counter) interface indices beyond its table, which one trace with one ingress interface cannot reach.
const MIN_COVERAGE_PERCENT: usize = 95;

/// Runs the trace on the reference machine and checks that it reaches (nearly) every instruction of every program.
fn check_coverage(example: &str, verify_args: &[&str], dir: &str) {
    let out = format!("{dir}/run");
    let mut args = verify_args.to_vec();
    args[0] = "run";
    // run's consumer reads the rings after the trace: they fill up, and the programs' ring-full paths run.
    args.extend(["-o", out.as_str()]);
    let run = hwxdp(&args);
    assert!(run.ok, "hwxdp run failed for {example}:\n{}", run.all);
    let stats = read_stats(&out);
    let coverage = stats["coverage"]
        .as_array()
        .expect("coverage in stats.json");
    assert!(!coverage.is_empty());
    for c in coverage {
        let (done, total) = (
            c["instructions_executed"].as_u64().unwrap(),
            c["instructions"].as_u64().unwrap(),
        );
        let needed = if example == "rxq_counter" {
            75
        } else {
            MIN_COVERAGE_PERCENT
        };
        assert!(
            done * 100 >= total * needed as u64,
            "{example}: the trace executes {done} of {total} instructions of {}; never executed: {}",
            c["program"],
            c["never_executed"]
        );
    }
}

macro_rules! differential_tests {
    ($($name:ident $(, $arg:literal)*;)*) => {$(
        #[test]
        fn $name() {
            differential(stringify!($name), &[$($arg),*]);
        }
    )*};
}

with_examples!(differential_tests);

/// Flow traces (`hwxdp gen --flows`) of the stateful examples, Zipf over 50,000 flows and a single flow, through the
/// kernel and the reference machine: the rewritten frames (new source address and port, checksums patched) take the
/// programs' state paths, and both sides agree on every packet and on the maps they fill.
#[test]
fn flow_traces_of_stateful_examples() {
    require_kernel();
    for example in ["rate_limiter", "nat", "katran_lb", "firewall"] {
        let obj = example_object(example);
        for (flows, tag) in [("50000", "zipf"), ("1", "one")] {
            let dir = scratch_dir(&format!("flows-{tag}-{example}"));
            let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "2000", "--flows", flows]);
            assert!(
                gen.ok,
                "hwxdp gen --flows {flows} for {example}:\n{}",
                gen.all
            );
            let pcap = format!("{dir}/trace.pcap");
            let maps = format!("{dir}/maps.json");
            let mut args = vec!["verify", obj.as_str(), "--pcap", pcap.as_str()];
            if std::path::Path::new(&maps).exists() {
                args.extend(["--maps", maps.as_str()]);
            }
            let verify = hwxdp(&args);
            assert!(verify.ok, "{example} --flows {flows}:\n{}", verify.all);
            assert_eq!(
                identical_count(&verify.stdout),
                Some(2000),
                "{example} --flows {flows}:\n{}",
                verify.all
            );
        }
    }
}
