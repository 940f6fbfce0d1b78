//! `--backend ebpflow`, the eBPFlow NIC's cycle model, end to end: every bundled example through `hwxdp verify
//! --backend ebpflow` against the kernel (0 differences in verdicts, bytes, records and maps, packets compared by
//! identity), a trace over 4 ports, the loader's image and its refusals, and 1000 program swaps under traffic on a
//! short trace (no packet lost, each packet run by the program it was meant to run). The engine model's cycles
//! against the engine RTL are checked in `crates/ebpflow/tests/rtl_cycles.rs`.

mod support;

use support::*;

fn ebpflow(example: &str, extra: &[&str]) {
    let (obj, _dir, trace) = workload(example, "ebpflow");
    require_kernel();
    let mut args = vec!["verify", obj.as_str()];
    args.extend(trace.iter().map(String::as_str));
    args.extend(extra);
    args.extend(["--backend", "ebpflow", "--clock-mhz", "166.67"]);
    let verify = hwxdp(&args);
    assert!(verify.ok, "{example} on ebpflow:\n{}", verify.all);
    let identical = identical_count(&verify.stdout)
        .unwrap_or_else(|| panic!("no 'N packets identical' for {example}:\n{}", verify.all));
    assert!(
        identical >= 1000,
        "{example}: {identical} packets:\n{}",
        verify.all
    );
    assert!(
        verify.stdout.contains("Mpps at 166.67 MHz") && verify.stdout.contains("packets reordered"),
        "{example}: no rate or reordering:\n{}",
        verify.all
    );
}

macro_rules! ebpflow_tests {
    ($($name:ident $(, $arg:literal)*;)*) => {$(
        #[test]
        fn $name() {
            ebpflow(stringify!($name), &[$($arg),*]);
        }
    )*};
}

with_examples!(ebpflow_tests);

/// The number before `label` in a verify or run report line.
fn figure(text: &str, label: &str) -> Option<f64> {
    let at = text.find(label)?;
    text[..at].trim_end().rsplit(' ').next()?.parse().ok()
}

#[test]
fn a_trace_over_four_ports_spreads_over_the_ports_and_engines() {
    require_kernel();
    let obj = example_object("xdp2_macswap");
    let dir = scratch_dir("ebpflow-ports");
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "2000", "--ports", "4"]);
    assert!(gen.ok, "{}", gen.all);
    let pcap = format!("{dir}/trace.pcapng");
    let verify = hwxdp(&["verify", &obj, "--pcap", &pcap, "--backend", "ebpflow"]);
    assert!(verify.ok, "{}", verify.all);
    assert_eq!(
        identical_count(&verify.stdout),
        Some(2000),
        "{}",
        verify.all
    );
    for port in 0..4 {
        let rate = figure(&verify.stdout, &format!("port {port} packets per cycle"))
            .unwrap_or_else(|| panic!("no rate of port {port}:\n{}", verify.all));
        assert!(rate > 0.0, "port {port} idle:\n{}", verify.all);
    }
    // One engine per port is slower than four.
    let one = hwxdp(&[
        "verify",
        &obj,
        "--pcap",
        &pcap,
        "--backend",
        "ebpflow",
        "--engines-per-port",
        "1",
    ]);
    assert!(one.ok, "{}", one.all);
    let rate = |t: &str| figure(t, "port 0 packets per cycle").expect("a rate");
    assert!(
        rate(&one.stdout) < rate(&verify.stdout),
        "{}\n{}",
        one.all,
        verify.all
    );
}

/// The verdicts `run` logged in `dir/packets.jsonl`, in packet order.
fn verdicts(dir: &str) -> Vec<String> {
    let log = std::fs::read_to_string(format!("{dir}/packets.jsonl")).expect("packets.jsonl");
    log.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["verdict"].as_str().expect("verdict").to_string()
        })
        .collect()
}

#[test]
fn a_thousand_swaps_under_traffic_lose_no_packet_and_run_each_on_its_program() {
    let drop = example_object("xdp1_drop");
    let swap = example_object("xdp2_macswap");
    let dir = scratch_dir("ebpflow-swaps");
    let gen = hwxdp(&["gen", &swap, "-o", &dir, "-n", "2000"]);
    assert!(gen.ok, "{}", gen.all);
    let pcap = format!("{dir}/trace.pcap");
    // What each program does to each packet, alone on the reference machine.
    let mut alone = Vec::new();
    for (obj, tag) in [(&drop, "drop"), (&swap, "swap")] {
        let out = format!("{dir}/{tag}");
        let run = hwxdp(&["run", obj, "--pcap", &pcap, "-o", &out]);
        assert!(run.ok, "{}", run.all);
        alone.push(verdicts(&out));
    }
    let differ = (0..2000).filter(|&i| alone[0][i] != alone[1][i]).count();
    assert!(
        differ > 1000,
        "the two programs differ on {differ} packets only"
    );
    // Swaps at packets 1, 2, ..., 1000, alternating: packet i < 1000 runs xdp1_drop when i is even, xdp2_macswap
    // when odd; from packet 1000 on xdp1_drop again (the 1000th swap).
    let swaps: Vec<String> = (1..=1000u32)
        .map(|at| format!("{at}:{}", if at % 2 == 1 { &swap } else { &drop }))
        .collect();
    let out = format!("{dir}/swapped");
    let mut args = vec![
        "run",
        drop.as_str(),
        "--pcap",
        pcap.as_str(),
        "--backend",
        "ebpflow",
        "-o",
        out.as_str(),
    ];
    for s in &swaps {
        args.extend(["--swap-at", s.as_str()]);
    }
    let run = hwxdp(&args);
    assert!(run.ok, "{}", run.all);
    let got = verdicts(&out);
    assert_eq!(got.len(), 2000, "packets lost:\n{}", run.all);
    for (i, v) in got.iter().enumerate() {
        let meant = usize::from(i < 1000 && i % 2 == 1);
        assert_eq!(
            v, &alone[meant][i],
            "packet {i} did not run program {meant}"
        );
    }
    require_kernel();
    let mut args = vec![
        "verify",
        drop.as_str(),
        "--pcap",
        pcap.as_str(),
        "--backend",
        "ebpflow",
    ];
    for s in &swaps {
        args.extend(["--swap-at", s.as_str()]);
    }
    let verify = hwxdp(&args);
    assert!(verify.ok, "{}", verify.all);
    assert_eq!(
        identical_count(&verify.stdout),
        Some(2000),
        "{}",
        verify.all
    );
    assert_eq!(
        figure(&verify.stdout, "program swaps"),
        Some(1000.0),
        "{}",
        verify.all
    );
}

#[test]
fn the_loader_writes_the_image_the_map_table_and_a_report() {
    let obj = example_object("firewall");
    let dir = scratch_dir("ebpflow-compile");
    let out = hwxdp(&["compile", &obj, "--target", "ebpflow", "-o", &dir]);
    assert!(out.ok, "{}", out.all);
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{dir}/firewall.ebpflow.json")).expect("report"),
    )
    .expect("json");
    let bin = std::fs::read(format!("{dir}/firewall.ebpflow.bin")).expect("image");
    let hex = std::fs::read_to_string(format!("{dir}/firewall.ebpflow.hex")).expect("hex");
    assert_eq!(bin.len() % 8, 0);
    assert_eq!(hex.lines().count(), bin.len() / 8);
    let maps = report["maps"].as_array().expect("map table");
    assert!(!maps.is_empty(), "{report}");
    assert!(maps
        .iter()
        .all(|m| m["window"].as_u64().unwrap() >= 0x0100_0000));
    assert!(report["map_relocations"].as_u64().unwrap() >= 1, "{report}");
    assert!(report["context_loads"].as_u64().unwrap() >= 2, "{report}");
    // No lddw of the image keeps a map-fd source: every map reference names a map-table index.
    for (k, slot) in bin.chunks_exact(8).enumerate() {
        if slot[0] == 0x18 {
            assert_eq!(slot[1] >> 4, 0, "slot {k} still a pseudo lddw");
        }
    }
}
