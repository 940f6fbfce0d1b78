//! The hXDP module's RTL (`--backend hxdp-rtl`: `rtl/sephirot/hxdp.sv` under Verilator through
//! `sim/hxdp/hxdp_harness.cpp`) against the reference machine: every bundled example's trace through both, with
//! identical verdicts (one pcap per verdict, in order), packet bytes and final maps required. Examples whose helpers or
//! maps the RTL does not have yet are listed in [`EXPECTED_TO_FAIL`] and must fail, so the list can only shrink as
//! the RTL grows. Also: `--vcd` writes a waveform, `verify --backend hxdp-rtl` agrees with the kernel, the errors
//! (Verilator missing, a program too big for the hardware, `--vcd` without the RTL) are clear, and an installed
//! `hwxdp` runs the RTL without the checkout it was built from.
//!
//! Needs the examples built (`make examples`) and Verilator; the module is built once per test run (then cached).

#[path = "../../../tests/support/mod.rs"]
mod support;

use std::sync::OnceLock;

use hwxdp_rtlsim::hxdp::{Needs, Params, RtlPaths};
use support::*;

/// Examples the RTL cannot run yet, each with the reason. Every one of them must fail the differential test; remove
/// an entry when the RTL learns what it lacks.
const EXPECTED_TO_FAIL: &[(&str, &str)] = &[];

/// Packets per trace: enough to reach every path of each example; the RTL simulates every cycle, so fewer than the
/// cycle model's suite. `HWXDP_RTL_PACKETS` overrides it: `HWXDP_RTL_PACKETS=1000 cargo test -p hwxdp --test
/// hxdp_rtl run_matches_interp` runs every example's full `hwxdp gen` trace (its default length).
const RTL_PACKETS: usize = 240;

/// [`RTL_PACKETS`], or `HWXDP_RTL_PACKETS` when set; a value that is not a positive number stops the test.
fn rtl_packets() -> usize {
    match std::env::var("HWXDP_RTL_PACKETS") {
        Err(_) => RTL_PACKETS,
        Ok(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => panic!("HWXDP_RTL_PACKETS={v:?} is not a positive number of packets"),
        },
    }
}

/// Builds the module once, in this process and in the tests' model cache, before any test starts a `hwxdp` process,
/// so that a build failure is told once and the processes find it cached.
fn model() {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        RtlPaths::embedded(model_cache())
            .model(
                &Params::for_lanes(4)
                    .with_possible_cpus(hwxdp_kernel::possible_cpus().unwrap_or(1)),
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    if let Err(e) = built {
        panic!("the hXDP module does not build: {e}");
    }
}

/// `example`'s trace of [`rtl_packets`] packets in a fresh scratch directory named after `tag`: the object, the
/// directory and the trace arguments (`--pcap`, and `--maps`/`--routes` when gen wrote them).
fn rtl_workload(example: &str, tag: &str) -> (String, String, Vec<String>) {
    workload_n(example, tag, rtl_packets())
}

/// Runs `example` on the reference machine and on the RTL; `Err` says how they differ (or why the RTL run failed).
fn differential(example: &str, extra: &[&str]) -> Result<u64, String> {
    model();
    let (obj, dir, trace) = rtl_workload(example, "hxdp-rtl");
    let mut common: Vec<&str> = trace.iter().map(String::as_str).collect();
    common.extend(extra);
    let interp_dir = format!("{dir}/interp");
    let rtl_dir = format!("{dir}/rtl");
    let b = run_beside_interp(&obj, &common, ("hxdp-rtl", &[]), &interp_dir, &rtl_dir)?;
    let packets = b["packets"].as_u64().unwrap_or(0);
    if packets < 200 {
        return Err(format!("only {packets} packets ran"));
    }
    let cycles = b["cycles_per_packet"]["mean"].as_f64().unwrap_or(0.0);
    if cycles < 2.0 {
        return Err(format!(
            "{cycles} cycles per packet is not a run of the module"
        ));
    }
    Ok(packets)
}

/// Checks one example: identical results, or a failure when it is listed as expected to fail.
fn check(example: &str, extra: &[&str]) {
    let result = differential(example, extra);
    match (EXPECTED_TO_FAIL.iter().find(|(e, _)| *e == example), result) {
        (None, Ok(_)) => {}
        (None, Err(why)) => panic!("{example} on hxdp-rtl: {why}"),
        (Some((_, reason)), Ok(packets)) => panic!(
            "{example} is listed in EXPECTED_TO_FAIL ({reason}) but its {packets} packets and maps are identical: \
             remove it from the list"
        ),
        (Some((_, reason)), Err(why)) => {
            eprintln!("{example}: fails as expected ({reason}): {why}");
        }
    }
}

macro_rules! rtl_tests {
    ($($name:ident $(, $arg:literal)*;)*) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name), &[$($arg),*]);
            }
        )*

        /// Every name in the expected-failure list is a bundled example (a typo would hide nothing).
        #[test]
        fn expected_failures_are_examples() {
            let examples = [$(stringify!($name)),*];
            for (e, _) in EXPECTED_TO_FAIL {
                assert!(examples.contains(e), "{e} in EXPECTED_TO_FAIL is not an example");
            }
        }
    };
}

mod run_matches_interp {
    use super::*;

    with_examples!(rtl_tests);
}

/// Cycles of every packet (`packets.jsonl`) of `example`'s trace run with `--backend` `backend` into `dir`.
fn packet_cycles(obj: &str, trace: &[String], backend: &str, dir: &str) -> Vec<u64> {
    let mut args = vec!["run", obj];
    args.extend(trace.iter().map(String::as_str));
    args.extend(["-o", dir, "--backend", backend]);
    let out = hwxdp(&args);
    assert!(out.ok, "run --backend {backend} failed:\n{}", out.all);
    std::fs::read_to_string(format!("{dir}/packets.jsonl"))
        .expect("packets.jsonl written")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v["cycles"].as_u64().expect("cycles of the packet")
        })
        .collect()
}

/// The module's cycles equal the cycle model's (`--backend hxdp`) packet by packet on katran_lb, whose LRU_HASH
/// updates refill the maps module's local free list (flush, rotations, fill, shrink: timed from
/// `hwxdp_maps::Maps::lru_pop_steps`), and on the firewall (HASH updates and lookups in the hashed buckets).
#[test]
fn rtl_cycles_equal_the_model_packet_by_packet() {
    model();
    for example in ["katran_lb", "firewall"] {
        let (obj, dir, trace) = rtl_workload(example, "hxdp-cycles");
        let model = packet_cycles(&obj, &trace, "hxdp", &format!("{dir}/model"));
        let rtl = packet_cycles(&obj, &trace, "hxdp-rtl", &format!("{dir}/rtl"));
        assert_eq!(model.len(), rtl.len(), "{example}: packets");
        assert!(
            model.len() >= 200,
            "{example}: only {} packets",
            model.len()
        );
        let differ: Vec<(usize, u64, u64)> = model
            .iter()
            .zip(&rtl)
            .enumerate()
            .filter(|(_, (m, r))| m != r)
            .map(|(i, (m, r))| (i, *m, *r))
            .collect();
        assert!(
            differ.is_empty(),
            "{example}: {} packets differ (packet, model, RTL), first {:?}",
            differ.len(),
            &differ[..differ.len().min(8)]
        );
    }
}

/// Every example of `examples/xdp` and `examples/p4` fits the one parameter set the module is built with, so one
/// build serves them all. Prints each program's needs (`-- --nocapture`).
#[test]
fn every_example_fits_the_default_parameters() {
    let params = Params::for_lanes(4);
    let mut objects: Vec<(String, String)> = Vec::new();
    let xdp = repo_root().join("build/examples/xdp");
    let mut names: Vec<_> = std::fs::read_dir(&xdp)
        .unwrap_or_else(|e| panic!("{}: {e} (run `make examples`)", xdp.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "o"))
        .collect();
    names.sort();
    for path in names {
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        objects.push((name, path.display().to_string()));
    }
    let p4_out = scratch_dir("hxdp-rtl-needs-p4");
    let p4 = repo_root().join("examples/p4");
    let mut sources: Vec<_> = std::fs::read_dir(&p4)
        .expect("examples/p4")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    sources.sort();
    for source in sources {
        let name = source
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let obj = format!("{p4_out}/{name}.o");
        let r = hwxdp(&["p4c", &source.display().to_string(), "-o", &obj]);
        assert!(r.ok, "p4c {name}:\n{}", r.all);
        objects.push((format!("p4/{name}"), obj));
    }
    assert!(objects.len() >= 30, "{} programs found", objects.len());
    let mut largest = Needs::default();
    let mut misfits = Vec::new();
    for (name, obj) in &objects {
        let elf = std::fs::read(obj).expect("object");
        let spec = hwxdp_object::parse(&elf).expect("parses");
        let program = spec
            .programs
            .iter()
            .position(|p| {
                p.section.starts_with("xdp")
                    && (spec.programs.len() == 1 || name.ends_with(&p.name))
            })
            .unwrap_or(0);
        let image = hwxdp_hxdp::compile_object(&spec, program, &hwxdp_hxdp::Options::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .image;
        let needs = Needs::of(&image, &Default::default());
        println!("{name:<28} {needs:?}");
        // The driver sizes the CAM to the image's LRU_HASH and LPM_TRIE maps; the rest is the one set.
        if let Err(e) = needs.check(&Params::for_image(4, &needs)) {
            misfits.push(format!("{name}: {e}"));
        }
        largest = largest.max(needs);
    }
    println!("largest: {largest:?}\nparameters: {params:?}");
    assert!(misfits.is_empty(), "{}", misfits.join("\n"));
}

/// `--vcd FILE --vcd-packets A..B` writes a VCD waveform of those packets' simulation.
#[test]
fn vcd_records_the_chosen_packets() {
    model();
    let (obj, dir, trace) = rtl_workload("xdp2_macswap", "hxdp-rtl-vcd");
    let vcd = format!("{dir}/waves.vcd");
    let mut args = vec!["run", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend([
        "-o",
        dir.as_str(),
        "--backend",
        "hxdp-rtl",
        "--vcd",
        vcd.as_str(),
        "--vcd-packets",
        "1..3",
    ]);
    let r = hwxdp(&args);
    assert!(r.ok, "{}", r.all);
    let text = std::fs::read_to_string(&vcd).unwrap_or_else(|e| panic!("{vcd}: {e}\n{}", r.all));
    assert!(text.contains("$enddefinitions"), "no VCD header in {vcd}");
    assert!(text.contains("clk_i"), "the clock is not in {vcd}");
    let stamps = text.lines().filter(|l| l.starts_with('#')).count();
    assert!(
        stamps >= 20,
        "{stamps} time stamps: two packets take more cycles"
    );
}

/// `--vcd` is for the RTL only.
#[test]
fn vcd_needs_the_rtl_backend() {
    let (obj, dir, trace) = workload_small("xdp1_drop", "hxdp-rtl-vcd-interp");
    let mut args = vec!["run", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend(["-o", dir.as_str(), "--vcd", "w.vcd"]);
    let r = hwxdp(&args);
    assert!(!r.ok, "{}", r.all);
    assert!(
        r.stderr.contains(
            "--vcd is an option of --backend hxdp-rtl or ehdl-rtl or warp-rtl, not of interp"
        ),
        "{}",
        r.all
    );
}

/// A few packets of `example`, for the error tests.
fn workload_small(example: &str, tag: &str) -> (String, String, Vec<String>) {
    workload_n(example, tag, 4)
}

/// Without Verilator the RTL backend says what to install, and runs nothing.
#[test]
fn missing_verilator_is_a_clear_error() {
    let (obj, dir, trace) = workload_small("xdp1_drop", "hxdp-rtl-no-verilator");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hwxdp"))
        .args(["run", obj.as_str()])
        .args(&trace)
        .args(["-o", dir.as_str(), "--backend", "hxdp-rtl"])
        .env("HWXDP_VERILATOR", "/nonexistent/verilator")
        .env("HWXDP_CACHE_DIR", model_cache())
        .current_dir(repo_root())
        .output()
        .expect("hwxdp runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("/nonexistent/verilator not found: install the debian package `verilator`"),
        "{stderr}"
    );
    assert!(stderr.contains("--backend hxdp-rtl"), "{stderr}");
}

/// A program whose maps need more CAM entries than the module has is refused before any simulation, naming the
/// parameter.
#[test]
fn a_program_too_big_for_the_hardware_is_refused() {
    let dir = scratch_dir("hxdp-rtl-too-big");
    let obj = compile_c(
        &dir,
        "big",
        r#"#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 100000);
	__type(key, __u32);
	__type(value, __u64);
} big SEC(".maps");
SEC("xdp")
int big_prog(struct xdp_md *ctx)
{
	__u32 k = 1;
	__u64 *v = bpf_map_lookup_elem(&big, &k);
	return v ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
"#,
    );
    let (_, _, trace) = workload_small("xdp1_drop", "hxdp-rtl-too-big-trace");
    let mut args = vec!["run", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend(["-o", dir.as_str(), "--backend", "hxdp-rtl"]);
    let r = hwxdp(&args);
    assert!(!r.ok, "{}", r.all);
    assert!(
        r.stderr.contains(
            "program too big for the hardware: it needs 100001 slots of hash maps, the hXDP module is built with \
             HASH_SLOTS = 8192"
        ),
        "{}",
        r.all
    );
}

/// `verify --backend hxdp-rtl`: the module against the Linux kernel, packet by packet and map by map (and, for
/// firewall, the ring buffer's records after every packet).
#[test]
fn verify_matches_the_kernel() {
    require_kernel();
    model();
    for example in ["xdp2_macswap", "l2_acl", "firewall"] {
        let (obj, _dir, trace) = rtl_workload(example, "hxdp-rtl-verify");
        let mut args = vec!["verify", obj.as_str()];
        args.extend(trace.iter().map(String::as_str));
        args.extend(["--backend", "hxdp-rtl"]);
        let r = hwxdp(&args);
        assert!(r.ok, "verify --backend hxdp-rtl, {example}:\n{}", r.all);
        let identical = identical_count(&r.stdout)
            .unwrap_or_else(|| panic!("no 'N packets identical' for {example}:\n{}", r.all));
        assert!(
            identical >= 200,
            "{example}: {identical} packets:\n{}",
            r.all
        );
        assert!(
            r.stdout.contains(" maps identical; hxdp-rtl: 4 lanes, "),
            "{example}: no cycle figures:\n{}",
            r.all
        );
    }
}

/// `bench --backend hxdp-rtl --json`: the module's figures beside the kernel's and the reference machine's, its cycles
/// those `run --backend hxdp-rtl` reports for the same trace.
#[test]
fn bench_reports_the_module() {
    require_kernel();
    model();
    let (obj, dir, trace) = workload_n("xdp2_macswap", "hxdp-rtl-bench", 24);
    let report = bench_json(&obj, &trace, "hxdp-rtl");
    let h = &report["backends"]["hxdp-rtl"];
    let cycles = h["cycles_per_packet"].as_f64().unwrap_or(0.0);
    assert!(cycles >= 2.0, "no cycles:\n{report}");
    assert!(
        h["ns_per_packet"].as_f64().unwrap_or(0.0) > 0.0,
        "{}",
        report
    );
    let mut run_args = vec!["run", obj.as_str()];
    run_args.extend(trace.iter().map(String::as_str));
    let out = format!("{dir}/run");
    run_args.extend(["-o", out.as_str(), "--backend", "hxdp-rtl"]);
    let run = hwxdp(&run_args);
    assert!(run.ok, "{}", run.all);
    assert_eq!(
        read_stats(&out)["cycles_per_packet"]["mean"].as_f64(),
        Some(cycles),
        "bench and run --backend hxdp-rtl disagree on the cycles of the same trace"
    );
}

/// The installed binary needs no checkout: `cargo install --debug` into a scratch root (reusing this test build's
/// target directory and profile, so nothing but the install is done), then `hwxdp run --backend hxdp-rtl` from an
/// empty directory, with the checkout's `rtl/` and `sim/` hidden from it (an empty directory mounted over each, in
/// a mount namespace of its own: we are root) and `HWXDP_ROOT` unset. The model comes from the tests' cache; the
/// run must give the reference machine's packets and maps, and leave the directory it ran in empty.
#[test]
fn the_installed_binary_runs_the_rtl_without_the_checkout() {
    model();
    let (obj, dir, trace) = workload_small("xdp2_macswap", "hxdp-rtl-installed");
    let root = format!("{dir}/root");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let install = std::process::Command::new(cargo)
        .args([
            "install",
            "--debug",
            "--offline",
            "--locked",
            "--quiet",
            "--path",
        ])
        .arg(repo_root().join("crates/cli"))
        .args(["--root", root.as_str(), "--target-dir"])
        .arg(target_dir())
        .output()
        .expect("cargo runs");
    assert!(
        install.status.success(),
        "cargo install failed:\n{}",
        String::from_utf8_lossy(&install.stderr)
    );
    let empty = format!("{dir}/empty");
    let cwd = format!("{dir}/cwd");
    for d in [&empty, &cwd] {
        std::fs::create_dir_all(d).expect("scratch");
    }
    let checkout = repo_root().canonicalize().expect("the checkout");
    let (rtl, sim) = (checkout.join("rtl"), checkout.join("sim"));
    let out = format!("{dir}/rtl");
    // `sh -c SCRIPT sh EMPTY RTL SIM HWXDP ARGS...`: hide the sources, then become hwxdp.
    let script = r#"mount --bind "$1" "$2" && mount --bind "$1" "$3" && test ! -e "$2/sephirot" && shift 3 && exec "$@""#;
    let installed = format!("{root}/bin/hwxdp");
    let run = std::process::Command::new("unshare")
        .args(["--mount", "sh", "-c", script, "sh", empty.as_str()])
        .args([&rtl, &sim])
        .args([installed.as_str(), "run", obj.as_str()])
        .args(&trace)
        .args(["-o", out.as_str(), "--dump-maps", "--backend", "hxdp-rtl"])
        .env("HWXDP_CACHE_DIR", model_cache())
        .env_remove("HWXDP_ROOT")
        .current_dir(&cwd)
        .output()
        .expect("unshare (util-linux) runs");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        run.status.success(),
        "the installed hwxdp, without rtl/ and sim/:\n{all}"
    );
    assert!(
        rtl.join("sephirot").is_dir(),
        "the checkout is hidden only from the run"
    );
    let left: Vec<_> = std::fs::read_dir(&cwd).expect("cwd").collect();
    assert!(
        left.is_empty(),
        "the run wrote into its directory: {left:?}"
    );
    let interp = format!("{dir}/interp");
    let mut args = vec!["run", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend(["-o", interp.as_str(), "--dump-maps"]);
    let r = hwxdp(&args);
    assert!(r.ok, "{}", r.all);
    for file in ["drop.pcap", "pass.pcap", "tx.pcap", "maps.json"] {
        let a = std::fs::read(format!("{interp}/{file}")).unwrap_or_default();
        let b = std::fs::read(format!("{out}/{file}")).unwrap_or_default();
        assert!(
            a == b,
            "{file} differs between interp and the installed hxdp-rtl:\n{all}"
        );
    }
    // The installed binaries are large debug builds.
    let _ = std::fs::remove_dir_all(&root);
}
