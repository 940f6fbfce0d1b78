//! The generated eHDL pipelines (`--backend ehdl-rtl`: `hwxdp_ehdl::verilog::generate`'s module and `rtl/ehdl/` under
//! Verilator through `sim/ehdl/ehdl_pipe_tb.cpp`) against the reference machine: every bundled example on its
//! generated trace and on an adversarial single-flow trace (the trace's packets that change the program's maps, each
//! repeated back to back, so that consecutive packets in flight hit the same map entries: the hazards the stall checks
//! exist for), with identical verdicts (one pcap per verdict, in order), packet bytes and final maps required.
//!
//! Every example must generate. Also: a program the generator refuses is refused on the command line with the
//! generator's error, `verify --backend ehdl-rtl` agrees with the kernel, `bench --backend ehdl-rtl` reports the
//! pipeline beside the kernel, and `--data-width` is refused without the eHDL backend.
//!
//! Needs the examples built (`make examples`) and Verilator; each example's module is built once and cached.

#[path = "../../../tests/support/mod.rs"]
mod support;

use std::path::Path;

use hwxdp_ehdl::verilog::VerilogError;
use hwxdp_maps::MapStore;
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};
use support::*;

/// Packets of each generated trace.
const TRACE_PACKETS: usize = 240;
/// The adversarial trace: the first map-changing packet this many times in a row, ...
const FIRST_RUN: usize = 120;
/// ... then up to this many other map-changing packets, ...
const OTHERS: usize = 16;
/// ... each this many times in a row.
const RUN: usize = 8;

/// The program `hwxdp` picks in `obj` when none is named: the only XDP program, else the one named like the file.
fn program_of(spec: &hwxdp_object::ObjectSpec, obj: &str) -> String {
    let xdp: Vec<_> = spec
        .programs
        .iter()
        .filter(|p| p.section.starts_with("xdp"))
        .collect();
    if let [only] = xdp.as_slice() {
        return only.name.clone();
    }
    let stem = Path::new(obj).file_stem().expect("stem").to_string_lossy();
    spec.programs
        .iter()
        .find(|p| p.name == stem)
        .map(|p| p.name.clone())
        .unwrap_or_else(|| panic!("{obj}: which program?"))
}

/// Writes the adversarial single-flow trace of a generated one (`dir/trace.pcap`, with `dir/maps.json` preloaded) to
/// `dir/flow.pcap`: the packets that change the reference machine's maps, each repeated back to back (or, for a
/// program that never writes its maps, the first packets, so that lookups still meet back to back). Returns how many
/// distinct packets change the maps.
fn adversarial_trace(obj: &str, dir: &str) -> usize {
    let spec = hwxdp_object::parse(&std::fs::read(obj).expect("object")).expect("parses");
    let program = program_of(&spec, obj);
    let mut machine = Machine::new(&spec, Some(&program), &Config::default()).expect("loads");
    let maps_json = format!("{dir}/maps.json");
    if Path::new(&maps_json).exists() {
        let file = hwxdp_maps::json::parse(&std::fs::read_to_string(&maps_json).expect("maps"))
            .expect("maps.json parses");
        hwxdp_maps::json::preload(machine.maps_mut(), &file).expect("preload");
    }
    let packets = hwxdp_cli::trace::read(Path::new(&format!("{dir}/trace.pcap"))).expect("trace");
    let snapshot = |m: &mut Machine| {
        let maps = m.maps_mut();
        (0..maps.specs().len())
            .map(|i| maps.entries(i).unwrap_or_default())
            .collect::<Vec<_>>()
    };
    let mut writers: Vec<Vec<u8>> = Vec::new();
    for p in &packets {
        let Ok(mut buff) = XdpBuff::new(&p.data) else {
            continue;
        };
        let before = snapshot(&mut machine);
        machine.run_packet(&mut buff, &XdpMd::default());
        if snapshot(&mut machine) != before && !writers.contains(&p.data) {
            writers.push(p.data.clone());
        }
    }
    let found = writers.len();
    if writers.is_empty() {
        writers = packets
            .iter()
            .filter(|p| XdpBuff::new(&p.data).is_ok())
            .map(|p| p.data.clone())
            .take(OTHERS + 1)
            .collect();
    }
    let mut out = hwxdp_cli::trace::Writer::create(Path::new(&format!("{dir}/flow.pcap")))
        .expect("flow.pcap");
    let mut t = 0u64;
    for (i, p) in writers.iter().take(OTHERS + 1).enumerate() {
        for _ in 0..if i == 0 { FIRST_RUN } else { RUN } {
            out.write(t, p).expect("write");
            t += 1000;
        }
    }
    out.finish().expect("finish");
    found
}

/// Runs `obj` on `trace` on the reference machine and on the pipeline (with `ehdl` options); `Err` says how they
/// differ. Returns `ehdl-rtl`'s stats.json.
fn differential(
    obj: &str,
    dir: &str,
    name: &str,
    trace: &[String],
    ehdl: &[&str],
) -> Result<serde_json::Value, String> {
    let interp_dir = format!("{dir}/{name}-interp");
    let rtl_dir = format!("{dir}/{name}-ehdl");
    let args: Vec<&str> = trace.iter().map(String::as_str).collect();
    let b = run_beside_interp(obj, &args, ("ehdl-rtl", ehdl), &interp_dir, &rtl_dir)?;
    let e = &b["figures"];
    if e["stages"].as_u64().unwrap_or(0) == 0
        || b["packets_per_cycle"].as_f64().unwrap_or(0.0) <= 0.0
    {
        return Err(format!("no pipeline figures in stats.json:\n{b}"));
    }
    println!("{name}: ehdl-rtl {e}");
    Ok(b)
}

/// The generator's verdict on `example` at 512 bits, through the library.
fn generated(example: &str) -> Result<(), VerilogError> {
    let obj = example_object(example);
    let spec = hwxdp_object::parse(&std::fs::read(&obj).expect("object")).expect("parses");
    let name = program_of(&spec, &obj);
    let program = spec.program(Some(&name)).expect("program");
    let p = hwxdp_ehdl::compile_object(
        program,
        &spec.programs,
        &spec.maps,
        &hwxdp_ehdl::Options::default(),
    )
    .unwrap_or_else(|e| panic!("{example}: the front end refuses it: {e}"));
    hwxdp_ehdl::verilog::generate(&p, &spec.maps, "ehdl_pipe").map(|_| ())
}

/// Checks one example: identical results on both traces.
fn check(example: &str, extra: &[&str]) {
    if let Err(e) = generated(example) {
        panic!("{example}: the generator refuses it ({e})");
    }
    let (obj, dir, mut trace) = workload_n(example, "ehdl-rtl", TRACE_PACKETS);
    trace.extend(extra.iter().map(|s| s.to_string()));
    let stats = differential(&obj, &dir, "trace", &trace, &[])
        .unwrap_or_else(|why| panic!("{example} on ehdl-rtl, its generated trace: {why}"));
    let packets = stats["packets"].as_u64().unwrap_or(0);
    assert!(packets >= 200, "{example}: only {packets} packets ran");
    let writers = adversarial_trace(&obj, &dir);
    trace[1] = format!("{dir}/flow.pcap");
    let stats = differential(&obj, &dir, "flow", &trace, &[])
        .unwrap_or_else(|why| panic!("{example} on ehdl-rtl, the single-flow trace: {why}"));
    println!(
        "{example}: {writers} map-changing packets; single-flow trace: {} packets, {} stall cycles",
        stats["packets"], stats["figures"]["stall_cycles"]
    );
    if example == "xdp1_drop" {
        // Its per-protocol counters are `load; add; store`: back-to-back packets of one flow must stall.
        assert!(
            stats["figures"]["stall_cycles"].as_u64().unwrap_or(0) > 0,
            "xdp1_drop: no stall cycles on the single-flow trace:\n{stats}"
        );
    }
}

macro_rules! ehdl_tests {
    ($($name:ident $(, $arg:literal)*;)*) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name), &[$($arg),*]);
            }
        )*
    };
}

mod run_matches_interp {
    use super::*;

    with_examples!(ehdl_tests);
}

/// `--hazards flush`: xdp1_drop's pipeline with a flush evaluation block and replay instead of its stall check,
/// byte-identical to the reference machine on its trace and on the single-flow trace, where back-to-back packets of
/// one protocol read the counter an older one then writes and are flushed; and the option needs the backend.
#[test]
fn flush_and_replay_matches_interp_and_flushes_on_one_flow() {
    let (obj, dir, mut trace) = workload_n("xdp1_drop", "ehdl-rtl-flush", TRACE_PACKETS);
    let flush = ["--hazards", "flush"];
    let stats = differential(&obj, &dir, "trace", &trace, &flush)
        .unwrap_or_else(|why| panic!("xdp1_drop with --hazards flush, its trace: {why}"));
    assert_eq!(stats["figures"]["flush_checks"], 1, "{stats}");
    adversarial_trace(&obj, &dir);
    trace[1] = format!("{dir}/flow.pcap");
    let stats = differential(&obj, &dir, "flow", &trace, &flush)
        .unwrap_or_else(|why| panic!("xdp1_drop with --hazards flush, one flow: {why}"));
    let e = &stats["figures"];
    assert!(
        e["flushes"].as_u64().unwrap_or(0) > 50,
        "few flushes:\n{stats}"
    );
    assert_eq!(e["stall_checks"], 0, "{stats}");
    let mut args = vec!["run", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    let out = format!("{dir}/interp-flush");
    args.extend(["-o", out.as_str(), "--hazards", "flush"]);
    let r = hwxdp(&args);
    assert!(
        !r.ok && r.stderr.contains("--hazards") && r.stderr.contains("--backend ehdl-rtl"),
        "{}",
        r.all
    );
}

/// A program the generator has no template for (here `bpf_get_prandom_u32`) is refused before any simulation, with
/// the generator's error naming the program and the instruction on one line.
#[test]
fn a_program_the_generator_refuses_is_refused_on_the_command_line() {
    let dir = scratch_dir("ehdl-rtl-refused");
    let obj = ehdl_refused_object(&dir);
    let (_, _, trace) = workload_n("xdp1_drop", "ehdl-rtl-refused-trace", 4);
    let mut args = vec!["run", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    let out = format!("{dir}/out");
    args.extend(["-o", out.as_str(), "--backend", "ehdl-rtl"]);
    let r = hwxdp(&args);
    assert!(!r.ok, "run --backend ehdl-rtl succeeded:\n{}", r.all);
    let want = format!(
        "hwxdp: {obj}: --backend ehdl-rtl: program coin: instruction 0 (call 7): helper bpf_get_prandom_u32 (7) \
         is not supported by the eHDL Verilog generator yet"
    );
    assert_eq!(r.stderr.trim_end(), want, "{}", r.all);
    assert!(
        !Path::new(&out).join("stats.json").exists(),
        "a refused program wrote results"
    );
}

/// `verify --backend ehdl-rtl`: the pipeline against the Linux kernel, packet by packet and map by map.
#[test]
fn verify_matches_the_kernel() {
    require_kernel();
    for example in ["xdp2_macswap", "ethertype_counter", "firewall"] {
        let (obj, _dir, trace) = workload_n(example, "ehdl-rtl-verify", TRACE_PACKETS);
        let mut args = vec!["verify", obj.as_str()];
        args.extend(trace.iter().map(String::as_str));
        args.extend(["--backend", "ehdl-rtl"]);
        let r = hwxdp(&args);
        assert!(r.ok, "verify --backend ehdl-rtl, {example}:\n{}", r.all);
        let identical = identical_count(&r.stdout)
            .unwrap_or_else(|| panic!("no 'N packets identical' for {example}:\n{}", r.all));
        assert!(
            identical >= 200,
            "{example}: {identical} packets:\n{}",
            r.all
        );
        assert!(
            r.stdout.contains(" maps identical; ehdl-rtl: ")
                && r.stdout.contains(" packets per cycle"),
            "{example}: no pipeline figures:\n{}",
            r.all
        );
        // firewall logs dropped packets to a ring buffer: the batch's records, read back after the trace, are the
        // kernel's (its ring undrained meanwhile, so both fill up alike).
        if example == "firewall" {
            let records: usize = r
                .stdout
                .split(" ring buffer records")
                .next()
                .and_then(|s| s.rsplit(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            assert!(records > 20, "firewall: {records} ring records:\n{}", r.all);
        }
    }
}

/// `bench --backend ehdl-rtl --json`: the pipeline's figures beside the kernel's and the reference machine's, its
/// cycles those of `run --backend ehdl-rtl` on the same trace.
#[test]
fn bench_reports_the_pipeline() {
    require_kernel();
    let (obj, dir, trace) = workload_n("rxq_counter", "ehdl-rtl-bench", 64);
    let report = bench_json(&obj, &trace, "ehdl-rtl");
    let e = &report["backends"]["ehdl-rtl"];
    assert!(
        e["ns_per_packet"].as_f64().unwrap_or(0.0) > 0.0,
        "{}",
        report
    );
    let mut run_args = vec!["run", obj.as_str()];
    run_args.extend(trace.iter().map(String::as_str));
    let out = format!("{dir}/run");
    run_args.extend(["-o", out.as_str(), "--backend", "ehdl-rtl"]);
    let run = hwxdp(&run_args);
    assert!(run.ok, "{}", run.all);
    let stats = read_stats(&out);
    assert_eq!(
        (
            stats["figures"]["cycles"].as_u64(),
            stats["figures"]["stages"].as_u64()
        ),
        (e["cycles"].as_u64(), e["stages"].as_u64()),
        "bench and run --backend ehdl-rtl disagree on the same trace:\n{}",
        report
    );
}

/// `--data-width 256`: the pipeline generated for a 256-bit bus (frames of 32 bytes, more of them per packet) agrees
/// with the reference machine too.
#[test]
fn a_256_bit_pipeline_matches_the_reference_machine() {
    let (obj, dir, trace) = workload_n("redirect_fwd", "ehdl-rtl-256", TRACE_PACKETS);
    let narrow = differential(&obj, &dir, "trace-256", &trace, &["--data-width", "256"])
        .unwrap_or_else(|why| panic!("redirect_fwd at 256 bits: {why}"));
    assert_eq!(narrow["figures"]["data_width"].as_u64(), Some(256));
    let wide = differential(&obj, &dir, "trace-512", &trace, &[])
        .unwrap_or_else(|why| panic!("redirect_fwd at 512 bits: {why}"));
    assert!(
        narrow["figures"]["cycles"].as_u64() > wide["figures"]["cycles"].as_u64(),
        "half the bus carries the same trace in more cycles: {} vs {}",
        narrow["figures"],
        wide["figures"]
    );
}

/// `--data-width` sets the pipeline's bus: it is refused without `--backend ehdl-rtl`, and a width the testbench
/// cannot drive is refused with the range it takes.
#[test]
fn data_width_needs_the_ehdl_backend_and_a_width_it_takes() {
    let (obj, dir, trace) = workload_n("xdp1_drop", "ehdl-rtl-width", 4);
    for (backend, width, message) in [
        (
            "interp",
            "256",
            "--data-width is an option of --backend ehdl-rtl, not of interp",
        ),
        (
            "ehdl-rtl",
            "1024",
            "--data-width 1024: the eHDL simulation takes a multiple of 64 bits from 128 to 512",
        ),
    ] {
        let mut args = vec!["run", obj.as_str()];
        args.extend(trace.iter().map(String::as_str));
        args.extend([
            "-o",
            dir.as_str(),
            "--backend",
            backend,
            "--data-width",
            width,
        ]);
        let r = hwxdp(&args);
        assert!(!r.ok, "{}", r.all);
        assert!(r.stderr.contains(message), "{}", r.all);
    }
}
