//! `--backend ebpflow-rtl`, the eBPFlow NIC's RTL under Verilator, end to end: every example of `build/examples/xdp`
//! and `build/examples/ebpflow` that the NIC holds through `hwxdp verify` against the kernel on a short trace over
//! the NIC's ports (0 differences in verdicts, bytes and maps, packets compared by identity) with its per-packet
//! cycles against the cycle model's (`--backend ebpflow`); the clear error of each example the NIC cannot hold; and
//! 20 program swaps under traffic through the double-buffered instruction memory (no packet lost, every packet run
//! by the program it was meant to run, and `verify` with the swaps); the four DPI examples of `build/examples/dpi`
//! the same way on one engine. Small NICs keep Verilator fast: 2 ports of 2
//! engines, and 1 engine where the example needs it (a per-CPU map, or a map whose inserts race across engines);
//! each configuration's model is built once into the test model cache.

mod support;

use support::*;

/// Packets of each example's trace.
const PACKETS: usize = 50;

/// The object of `build/examples/<dir>/<name>.o`.
fn object(dir: &str, name: &str) -> String {
    let path = repo_root().join(format!("build/examples/{dir}/{name}.o"));
    assert!(
        path.exists(),
        "{} is missing: run `make examples` (make test does)",
        path.display()
    );
    path.display().to_string()
}

/// `packets.jsonl` of a `run -o DIR`: each packet's verdict, cycles and redirect target.
fn packets(dir: &str) -> Vec<serde_json::Value> {
    let log = std::fs::read_to_string(format!("{dir}/packets.jsonl")).expect("packets.jsonl");
    log.lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

/// The number before `label` in a report line.
fn figure(text: &str, label: &str) -> Option<f64> {
    let at = text.find(label)?;
    text[..at].trim_end().rsplit(' ').next()?.parse().ok()
}

/// A NIC shape.
#[derive(Clone, Copy)]
struct Nic {
    ports: usize,
    engines: usize,
}

const SMALL: Nic = Nic {
    ports: 2,
    engines: 2,
};
const ONE: Nic = Nic {
    ports: 1,
    engines: 1,
};

impl Nic {
    fn args(&self) -> Vec<String> {
        vec![
            "--ports".into(),
            self.ports.to_string(),
            "--engines-per-port".into(),
            self.engines.to_string(),
        ]
    }
}

/// `example`'s trace over the NIC's ports (and its maps, when gen writes them): the trace arguments.
fn trace(obj: &str, dir: &str, nic: Nic) -> Vec<String> {
    let n = PACKETS.to_string();
    let ports = nic.ports.to_string();
    let gen = hwxdp(&["gen", obj, "-o", dir, "-n", &n, "--ports", &ports]);
    assert!(gen.ok, "{}", gen.all);
    let mut args = vec!["--pcap".to_string(), format!("{dir}/trace.pcapng")];
    let maps = format!("{dir}/maps.json");
    if std::path::Path::new(&maps).exists() {
        args.extend(["--maps".to_string(), maps]);
    }
    args
}

/// Verifies `dir/name` on the RTL against the kernel and compares its cycles with the cycle model's: equal for
/// every packet on one engine (where the model claims exactness), within 10% on the mean otherwise (printed).
fn rtl(dir: &str, name: &str, nic: Nic, extra: &[&str]) {
    let obj = object(dir, name);
    let scratch = scratch_dir(&format!("ebpflow-rtl-{name}"));
    let mut args = trace(&obj, &scratch, nic);
    args.extend(nic.args());
    args.extend(extra.iter().map(|s| s.to_string()));
    require_kernel();
    let mut verify = vec!["verify".to_string(), obj.clone()];
    verify.extend(args.iter().cloned());
    verify.extend(["--backend".into(), "ebpflow-rtl".into()]);
    let verify = hwxdp(&verify.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(verify.ok, "{name} on ebpflow-rtl:\n{}", verify.all);
    assert_eq!(
        identical_count(&verify.stdout),
        Some(PACKETS),
        "{}",
        verify.all
    );
    assert!(
        verify.stdout.contains("packets reordered"),
        "{}",
        verify.all
    );
    let mut cycles = Vec::new();
    for backend in ["ebpflow", "ebpflow-rtl"] {
        let out = format!("{scratch}/{backend}");
        let mut run = vec!["run".to_string(), obj.clone()];
        run.extend(args.iter().cloned());
        run.extend(["--backend".into(), backend.into(), "-o".into(), out.clone()]);
        let run = hwxdp(&run.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(run.ok, "{}", run.all);
        let c: Vec<u64> = packets(&out)
            .iter()
            .map(|p| p["cycles"].as_u64().expect("cycles"))
            .collect();
        assert_eq!(c.len(), PACKETS, "{}", run.all);
        cycles.push(c);
    }
    let differ: Vec<(usize, u64, u64)> = (0..PACKETS)
        .filter(|&i| cycles[0][i] != cycles[1][i])
        .map(|i| (i, cycles[0][i], cycles[1][i]))
        .collect();
    let mean = |c: &[u64]| c.iter().sum::<u64>() as f64 / c.len() as f64;
    let (model, rtl) = (mean(&cycles[0]), mean(&cycles[1]));
    println!(
        "{name} on {}x{}: mean cycles a packet, model {model:.1}, RTL {rtl:.1}; {} of {PACKETS} packets differ \
         (packet, model, RTL): {:?}",
        nic.ports,
        nic.engines,
        differ.len(),
        &differ[..differ.len().min(8)]
    );
    if nic.ports * nic.engines == 1 {
        assert!(
            differ.is_empty(),
            "{name}: cycles differ on one engine: {differ:?}"
        );
    } else {
        assert!(
            (model - rtl).abs() <= 0.1 * model,
            "{name}: model {model}, RTL {rtl}"
        );
    }
}

#[test]
fn wire() {
    rtl("ebpflow", "wire", SMALL, &[]);
}

#[test]
fn lpm_forward() {
    let maps = repo_root().join("examples/ebpflow/lpm_forward.maps.json");
    rtl(
        "ebpflow",
        "lpm_forward",
        SMALL,
        &["--maps", &maps.display().to_string()],
    );
}

#[test]
fn redirect_fwd() {
    rtl("xdp", "redirect_fwd", SMALL, &[]);
}

#[test]
fn rxq_counter() {
    rtl(
        "xdp",
        "rxq_counter",
        SMALL,
        &["--ifindex", "5", "--rx-queues", "128"],
    );
}

#[test]
fn ethertype_counter() {
    // Two engines that both miss a new ethertype race to insert it (BPF_NOEXIST): one engine keeps the kernel's order.
    rtl("xdp", "ethertype_counter", ONE, &[]);
}

#[test]
fn stateful_firewall() {
    // 4096 connections: the model's CAM is sized to the map (4096 entries); one engine builds it fastest.
    rtl("ebpflow", "stateful_firewall", ONE, &[]);
}

#[test]
fn ddos() {
    // 4096 sources (the same 4096-entry CAM as the firewall's, so the same model); a new source is inserted with
    // BPF_NOEXIST: one engine keeps the kernel's order.
    rtl("ebpflow", "ddos", ONE, &[]);
}

#[test]
fn xdp1_drop() {
    rtl("xdp", "xdp1_drop", ONE, &[]);
}

#[test]
fn xdp2_macswap() {
    rtl("xdp", "xdp2_macswap", ONE, &[]);
}

#[test]
fn vlan_filter() {
    // A per-CPU map (one engine) and a 40-byte key: the model is built with KEY_BYTES 40, so every map helper
    // gathers 5 key words (the cycle model times the same).
    rtl("xdp", "vlan_filter", ONE, &[]);
}

#[test]
fn dpi_examples() {
    // The DFA's transition table is .rodata, an ARRAY of one 133,120-byte value read through the map-value window:
    // the four share one model (32,768 value words, the table written a word at a time through the host port).
    for name in ["bittorrent", "snort", "sql_sleep", "sql_tautology"] {
        rtl("dpi", name, ONE, &[]);
    }
}

/// Every example the NIC cannot hold, and what its error names.
const REFUSED: [(&str, &str, &str); 10] = [
    (
        "xdp",
        "firewall",
        "map drop_log: type 27 is not one the eBPFlow coprocessor has",
    ),
    ("xdp", "nat", "nat calls helper 28"),
    ("xdp", "rate_limiter", "rate_limiter calls helper 5"),
    ("xdp", "katran_lb", "katran_lb calls helper 44"),
    ("xdp", "tunnel", "tunnel calls helper 44"),
    ("xdp", "fib_forward", "fib_forward calls helper 69"),
    (
        "xdp",
        "vlan_filter",
        "map flow_table_v4: a per-CPU map on a NIC of 4 engines",
    ),
    (
        "xdp",
        "xdp2_macswap",
        "map rxcnt: a per-CPU map on a NIC of 4 engines",
    ),
    (
        "xdp",
        "tail_dispatch",
        "map jump_table: type 3 is not one the eBPFlow coprocessor has",
    ),
    ("xdp", "icmp_reply", "calls helper 65"),
];

#[test]
fn what_the_nic_cannot_hold_is_refused_naming_the_map_or_helper_and_the_limit() {
    let dir = scratch_dir("ebpflow-rtl-refused");
    let pcap = format!("{dir}/trace.pcap");
    let gen = hwxdp(&["gen", &object("xdp", "xdp1_drop"), "-o", &dir, "-n", "4"]);
    assert!(gen.ok, "{}", gen.all);
    for (d, name, says) in REFUSED {
        let run = hwxdp(&[
            "run",
            &object(d, name),
            "--pcap",
            &pcap,
            "--backend",
            "ebpflow-rtl",
            "--ports",
            "2",
            "--engines-per-port",
            "2",
            "-o",
            &format!("{dir}/{name}"),
        ]);
        assert!(!run.ok, "{name} ran on ebpflow-rtl:\n{}", run.all);
        assert!(
            run.stderr.contains(says) && run.stderr.contains("ebpflow-rtl"),
            "{name}: no {says:?}:\n{}",
            run.all
        );
    }
}

/// The verdict and redirect target of every packet of a `run -o DIR`.
fn outcomes(dir: &str) -> Vec<(String, Option<u64>)> {
    packets(dir)
        .iter()
        .map(|p| {
            (
                p["verdict"].as_str().expect("verdict").to_string(),
                p["redirect"]["ifindex"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn twenty_swaps_under_traffic_lose_no_packet_and_run_each_on_its_program() {
    let lpm = object("ebpflow", "lpm_forward");
    let wire = object("ebpflow", "wire");
    let maps = repo_root()
        .join("examples/ebpflow/lpm_forward.maps.json")
        .display()
        .to_string();
    let dir = scratch_dir("ebpflow-rtl-swaps");
    let gen = hwxdp(&["gen", &lpm, "-o", &dir, "-n", "200", "--ports", "2"]);
    assert!(gen.ok, "{}", gen.all);
    let pcap = format!("{dir}/trace.pcapng");
    // Each program alone, on the reference machine.
    let mut alone = Vec::new();
    for (obj, tag, extra) in [
        (&lpm, "lpm", vec!["--maps", maps.as_str()]),
        (&wire, "wire", vec![]),
    ] {
        let out = format!("{dir}/{tag}");
        let mut args = vec![
            "run",
            obj.as_str(),
            "--pcap",
            pcap.as_str(),
            "-o",
            out.as_str(),
        ];
        args.extend(extra);
        let run = hwxdp(&args);
        assert!(run.ok, "{}", run.all);
        alone.push(outcomes(&out));
    }
    let differ = (0..200).filter(|&i| alone[0][i] != alone[1][i]).count();
    assert!(
        differ > 50,
        "the two programs differ on {differ} packets only"
    );
    // Swap i (1..=20) at packet 9i: to wire when i is odd, back to lpm_forward when even.
    let swaps: Vec<String> = (1..=20u32)
        .map(|i| format!("{}:{}", 9 * i, if i % 2 == 1 { &wire } else { &lpm }))
        .collect();
    let meant = |k: usize| usize::from(k < 180 && (k / 9) % 2 == 1);
    let on_rtl = |command: &'static str| {
        let mut args = vec![
            command,
            lpm.as_str(),
            "--pcap",
            pcap.as_str(),
            "--maps",
            maps.as_str(),
        ];
        args.extend([
            "--backend",
            "ebpflow-rtl",
            "--ports",
            "2",
            "--engines-per-port",
            "2",
        ]);
        for s in &swaps {
            args.extend(["--swap-at", s.as_str()]);
        }
        args
    };
    let out = format!("{dir}/swapped");
    let mut args = on_rtl("run");
    args.extend(["-o", out.as_str()]);
    let run = hwxdp(&args);
    assert!(run.ok, "{}", run.all);
    assert_eq!(
        figure(&run.stdout, "program swaps"),
        Some(20.0),
        "{}",
        run.all
    );
    let got = outcomes(&out);
    assert_eq!(got.len(), 200, "packets lost:\n{}", run.all);
    for (k, o) in got.iter().enumerate() {
        assert_eq!(
            o,
            &alone[meant(k)][k],
            "packet {k} did not run program {}",
            meant(k)
        );
    }
    require_kernel();
    let args = on_rtl("verify");
    let verify = hwxdp(&args);
    assert!(verify.ok, "{}", verify.all);
    assert_eq!(identical_count(&verify.stdout), Some(200), "{}", verify.all);
}
