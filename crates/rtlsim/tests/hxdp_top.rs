//! The whole hXDP module (rtl/sephirot/hxdp.sv) through its Verilator harness (sim/hxdp/hxdp_harness.cpp), against
//! the cycle model `hwxdp_hxdp::HxdpCore` (the reference machine's memory, maps and helpers): programs compiled with
//! `hwxdp_hxdp::compile_object`, packets in through the AXI4-Stream input, verdicts, faults and the bytes that leave
//! identical, cycles close; map values read back through the host port; the harness protocol's errors, refusals,
//! counters and waves. `-- --nocapture` prints the cycle table.

mod common;

use std::path::PathBuf;

use common::{hex, unhex, workspace_root, Rng};
use hwxdp_ebpf::opcode::{CLASS_JMP, JMP_JA};
use hwxdp_ebpf::opcode::{LD_DW_IMM, PSEUDO_MAP_FD, PSEUDO_MAP_VALUE};
use hwxdp_ebpf::Insn;
use hwxdp_hxdp::isa::{encode_op, Bundle, Image, Op};
use hwxdp_hxdp::{compile_object, HxdpCore, Options};
use hwxdp_object::{MapKind, MapSpec, ObjectSpec, ProgramSpec};
use hwxdp_rtlsim::BuildSpec;
use hwxdp_xdp::maps::MapStore;
use hwxdp_xdp::{Config, XdpBuff, XdpMd};

/// Sources of the top, in the order Verilator reads them.
const SOURCES: &[&str] = &[
    "sephirot/hxdp.sv",
    "sephirot/piq.sv",
    "sephirot/aps.sv",
    "sephirot/pkt_buffer.sv",
    "sephirot/diff_buffer.sv",
    "sephirot/sephirot.sv",
    "sephirot/alu.sv",
    "sephirot/divider.sv",
    "sephirot/decode.sv",
    "sephirot/lane.sv",
    "sephirot/regfile.sv",
    "sephirot/imem.sv",
    "sephirot/stack.sv",
    "sephirot/maps.sv",
    "sephirot/maps_values.sv",
    "common/ram_sdp.sv",
    "common/ram_tdp.sv",
    "common/hash32.sv",
    "sephirot/fib.sv",
    "sephirot/helpers.sv",
    "sephirot/ringbuf.sv",
];

/// Small maps (the programs here need one array): a quicker build than the defaults.
const PARAMS: &[&str] = &[
    "-GMAPS=4",
    "-GKEY_BYTES=8",
    "-GVALUE_BYTES=16",
    "-GENTRIES=16",
    "-GMEM_WORDS=64",
    "-GBUDGET=20000",
];

/// Cycles the module may differ from the model by on short runs (the core's documented differences: a fault or a
/// lone `exit K` is known a cycle or two later than the model charges).
const SHORT_RUN_SLACK: u64 = 3;

/// The build every test shares (one cached model).
fn harness_spec() -> BuildSpec {
    let root = workspace_root();
    let mut spec = BuildSpec::new(
        "hxdp",
        root.join("rtl"),
        root.join("sim/hxdp/hxdp_harness.cpp"),
        common::target_dir(),
    );
    for s in SOURCES {
        spec = spec.source(*s);
    }
    spec.flags = PARAMS.iter().map(|p| p.to_string()).collect();
    spec.flags.push("--trace".into());
    spec
}

fn insns(text: &str) -> Vec<Insn> {
    hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// `r = 0x77 ll` becomes `r = &map 0's value + off`, as a global variable's address.
fn map_value_pointers(mut insns: Vec<Insn>) -> Vec<Insn> {
    for insn in insns
        .iter_mut()
        .filter(|i| i.code == LD_DW_IMM && i.imm == 0x77)
    {
        insn.src = PSEUDO_MAP_VALUE;
        insn.imm = 0;
    }
    insns
}

/// `r = 0x55 ll` becomes `r = map 0` (the handle helpers take).
fn map_handles(mut insns: Vec<Insn>) -> Vec<Insn> {
    for insn in insns
        .iter_mut()
        .filter(|i| i.code == LD_DW_IMM && i.imm == 0x55)
    {
        insn.src = PSEUDO_MAP_FD;
        insn.imm = 0;
    }
    insns
}

fn object(insns: Vec<Insn>, maps: Vec<MapSpec>) -> ObjectSpec {
    ObjectSpec {
        programs: vec![ProgramSpec::standalone("t", "xdp", insns)],
        maps,
        license: "GPL".into(),
    }
}

fn compile(spec: &ObjectSpec) -> Image {
    compile_object(spec, 0, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .image
}

/// One packet's result, from either side.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    verdict: u32,
    fault: bool,
    bytes: Vec<u8>,
}

/// The harness lines that load `image` (instruction slots, program entries, maps).
fn load_lines(image: &Image) -> String {
    let mut s = String::new();
    for (b, bundle) in image.bundles.iter().enumerate() {
        let mut slots = vec![0u64; image.lanes];
        for (lane, op) in bundle.ops() {
            let [low, high] = encode_op(op);
            slots[lane] = low;
            if op.is_lddw() {
                slots[lane + 1] = high;
            }
        }
        for (lane, slot) in slots.iter().enumerate() {
            if *slot != 0 {
                s.push_str(&format!("imem {b:x} {lane:x} {slot:x}\n"));
            }
        }
    }
    for (i, entry) in image.entries.iter().enumerate() {
        if *entry != u32::MAX {
            s.push_str(&format!("prog {i:x} {entry:x}\n"));
        }
    }
    for (i, m) in image.maps.iter().enumerate() {
        s.push_str(&format!(
            "map {i:x} {:x} {:x} {:x} {:x} {:x}\n",
            m.map_type, m.key_size, m.value_size, m.max_entries, m.flags
        ));
    }
    s.push_str("maps_done\n");
    s
}

fn packet_line(frame: &[u8], md: &XdpMd) -> String {
    format!(
        "packet {:x} {:x} 0 {}\n",
        md.ingress_ifindex,
        md.rx_queue_index,
        if frame.is_empty() {
            "-".to_string()
        } else {
            hex(frame)
        }
    )
}

/// Parses `out VERDICT FAULT CYCLES SET BY_MAP MAP KEY BYTES`.
fn parse_out(line: &str) -> (Outcome, u64) {
    let w: Vec<&str> = line.split_whitespace().collect();
    assert!(w.len() == 9 && w[0] == "out", "not an out line: {line}");
    let num = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("{line}"));
    (
        Outcome {
            verdict: num(w[1]) as u32,
            fault: num(w[2]) == 1,
            bytes: if w[8] == "-" { Vec::new() } else { unhex(w[8]) },
        },
        num(w[3]),
    )
}

fn md(i: usize) -> XdpMd {
    XdpMd {
        ingress_ifindex: 3 + i as u32 % 2,
        rx_queue_index: i as u32 % 4,
    }
}

/// Runs `frames` through the model (packets arriving 32 bytes per cycle, as from the APS) and the module; compares
/// verdicts, faults and bytes, and with `cycles_close` cycles within 10% (or SHORT_RUN_SLACK): programs calling
/// helpers that touch memory take the helper module's latencies, which the model does not charge (printed only).
/// Returns the model (for its maps) and the harness's lines after the packets' (`after` is sent after the packets).
fn run_both(
    name: &str,
    spec: &ObjectSpec,
    frames: &[Vec<u8>],
    after: &str,
    cycles_close: bool,
) -> (HxdpCore, Vec<String>) {
    run_preloaded(name, spec, &[], frames, after, cycles_close)
}

/// `run_both` with map entries written first, into the model's maps and through the host port.
fn run_preloaded(
    name: &str,
    spec: &ObjectSpec,
    preload: &[(usize, Vec<u8>, Vec<u8>)],
    frames: &[Vec<u8>],
    after: &str,
    cycles_close: bool,
) -> (HxdpCore, Vec<String>) {
    let image = compile(spec);
    let mut model = HxdpCore::new(image.clone(), spec, Some("t"), &Config::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    model.set_packet_present(false);
    let mut input = load_lines(&image);
    for (map, key, value) in preload {
        model
            .machine_mut()
            .maps_mut()
            .update(*map, key, value, 0)
            .unwrap_or_else(|e| panic!("{name}: preloading map {map}: {e}"));
        input.push_str(&format!(
            "host_update {map:x} 0 {} {}\n",
            hex(key),
            hex(value)
        ));
    }
    let loaded = input.lines().count();
    for (i, f) in frames.iter().enumerate() {
        input.push_str(&packet_line(f, &md(i)));
    }
    input.push_str(after);
    input.push_str("quit\n");
    let lines = common::run_testbench(&harness_spec(), input);
    let (setup, rest) = lines.split_at(loaded);
    assert!(
        setup.iter().all(|l| l == "ok" || l == "ret 0"),
        "{name}: loading answered {setup:?}"
    );
    for (i, frame) in frames.iter().enumerate() {
        let mut buff = XdpBuff::new(frame).expect("frame");
        let verdict = model.run_packet(&mut buff, &md(i)).retval();
        let want = Outcome {
            verdict,
            fault: model.last_fault().is_some(),
            bytes: buff.output().to_vec(),
        };
        let model_cycles = model.last_cycles();
        let (got, cycles) = parse_out(&rest[i]);
        assert_eq!(got, want, "{name}: packet {i} ({} bytes)", frame.len());
        println!(
            "{name:<12} packet {i:>2} {:>5} bytes: module {cycles:>4} cycles, model {model_cycles:>4}",
            frame.len()
        );
        let slack = (model_cycles / 10).max(SHORT_RUN_SLACK);
        assert!(
            !cycles_close || cycles.abs_diff(model_cycles) <= slack,
            "{name}: packet {i}: {cycles} cycles, the model {model_cycles}"
        );
    }
    (model, rest[frames.len()..].to_vec())
}

fn frames(lens: &[usize], seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    lens.iter().map(|&n| rng.bytes(n)).collect()
}

const DROP: &str = "
    r0 = 1
    exit
";

const MACSWAP: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 14
    if r4 > r3 goto out
    r5 = *(u32 *)(r2 + 0)
    r6 = *(u16 *)(r2 + 4)
    r7 = *(u32 *)(r2 + 6)
    r8 = *(u16 *)(r2 + 10)
    *(u32 *)(r2 + 0) = r7
    *(u16 *)(r2 + 4) = r8
    *(u32 *)(r2 + 6) = r5
    *(u16 *)(r2 + 10) = r6
    r0 = 3
    exit
out:
    r0 = 1
    exit
";

/// Counts packets (value bytes 0-7) and their bytes (8-15) in a global, then passes even-length packets and drops
/// odd ones; reads a byte near the end, so long packets wait for their last frames.
const COUNTER: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r6 = 0x77 ll
    r4 = *(u64 *)(r6 + 0)
    r4 += 1
    *(u64 *)(r6 + 0) = r4
    r5 = r3
    r5 -= r2
    r7 = *(u64 *)(r6 + 8)
    r7 += r5
    *(u64 *)(r6 + 8) = r7
    r8 = r3
    r8 -= 1
    r9 = *(u8 *)(r8 + 0)
    r0 = 2
    r5 &= 1
    if r5 == 0 goto out
    r0 = 1
out:
    exit
";

/// Reads past data_end without a check: the APS faults the load, the packet ends XDP_ABORTED with fault.
const OUT_OF_BOUNDS: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u8 *)(r2 + 100)
    r0 = 2
    exit
";

fn global(value_size: u32) -> MapSpec {
    MapSpec {
        name: ".bss".into(),
        map_type: 2,
        key_size: 4,
        value_size,
        max_entries: 1,
        map_flags: 0,
        kind: MapKind::Global,
        initial_value: Some(vec![0; value_size as usize]),
        outer: None,
    }
}

#[test]
fn drop_and_counters() {
    let spec = object(insns(DROP), vec![]);
    let fr = frames(&[60, 14, 3520, 100], 1);
    let (_, rest) = run_both("drop", &spec, &fr, "counters\n", true);
    assert_eq!(rest, vec!["counters 4 0 4".to_string()]);
}

#[test]
fn mac_swap_transmits_the_swapped_frame() {
    let spec = object(insns(MACSWAP), vec![]);
    let fr = frames(&[64, 14, 15, 1514, 200, 33], 2);
    let (_, rest) = run_both("macswap", &spec, &fr, "counters\n", true);
    assert_eq!(rest, vec![format!("counters {0:x} {0:x} 0", fr.len())]);
    // And the swap itself, independently of the model.
    let load = load_lines(&compile(&spec));
    let loaded = load.lines().count();
    let lines = common::run_testbench(
        &harness_spec(),
        format!("{load}{}quit\n", packet_line(&fr[0], &md(0))),
    );
    let out = parse_out(&lines[loaded]).0;
    let mut swapped = fr[0].clone();
    swapped[..6].copy_from_slice(&fr[0][6..12]);
    swapped[6..12].copy_from_slice(&fr[0][..6]);
    assert_eq!((out.verdict, out.bytes), (3, swapped));
}

#[test]
fn map_counter_updates_over_packets_and_reads_back_through_the_host_port() {
    let spec = object(map_value_pointers(insns(COUNTER)), vec![global(16)]);
    let lens = [60, 61, 14, 1500, 3520, 99, 64, 128];
    let fr = frames(&lens, 3);
    let (mut model, rest) = run_both(
        "counter",
        &spec,
        &fr,
        "host_lookup 0 00000000\nhost_slot 0 0\ncounters\n",
        true,
    );
    let maps = model.machine_mut().maps_mut();
    let slot = maps.lookup_slot(0, &[0; 4]).expect("the global exists");
    let value = maps.value(0, slot).to_vec();
    let packets = lens.len() as u64;
    let bytes: u64 = lens.iter().map(|&n| n as u64).sum();
    let mut want = packets.to_le_bytes().to_vec();
    want.extend_from_slice(&bytes.to_le_bytes());
    assert_eq!(value, want, "the model counts as the program says");
    assert_eq!(rest[0], format!("ret 0 1 {}", hex(&want)));
    assert_eq!(rest[1], format!("slot 1 00000000 {}", hex(&want)));
    let odd = lens.iter().filter(|&&n| n % 2 == 1).count();
    assert_eq!(
        rest[2],
        format!("counters {:x} {:x} {odd:x}", lens.len(), lens.len() - odd)
    );
}

#[test]
fn out_of_bounds_packet_load_aborts() {
    let spec = object(insns(OUT_OF_BOUNDS), vec![]);
    let fr = frames(&[60, 101, 200], 4);
    let (_, rest) = run_both("oob", &spec, &fr, "counters\n", true);
    assert_eq!(rest, vec!["counters 3 2 1".to_string()]);
}

#[test]
fn protocol_errors_refusals_and_waves() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hxdp_top");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let vcd = dir.join("waves.vcd");
    let _ = std::fs::remove_file(&vcd);
    let spec = object(insns(DROP), vec![global(8)]);
    let image = compile(&spec);
    let mut input = load_lines(&image);
    let loaded = input.lines().count();
    let good = hex(&frames(&[60], 5)[0]);
    input.push_str(&format!(
        "bogus 1 2\n\
         imem 10000 0 0\n\
         imem 0 8 0\n\
         imem 0 0\n\
         map 0 2 4 8 1\n\
         packet 1 0 0 0102\n\
         packet 1 0 0 {too_long}\n\
         packet 1 0 0 -\n\
         packet 1 0 0 0g\n\
         host_lookup 0 000000\n\
         host_lookup 7 00000000\n\
         host_update 0 0 00000000 2a00000000000000\n\
         host_lookup 0 00000000\n\
         host_update 0 0 01000000 2a00000000000000\n\
         host_slot 0 1\n\
         vcd 2ps c80 {vcd}\n\
         vcd 1ps 0 {vcd}\n\
         vcd 1ps c80\n\
         vcd 1ps c80 {vcd}\n\
         packet 1 0 0 {good}\n\
         vcd_off\n\
         counters\n\
         \n\
         quit\n",
        too_long = "00".repeat(3521),
        vcd = vcd.display(),
    ));
    let lines = common::run_testbench(&harness_spec(), input);
    assert!(lines[..loaded].iter().all(|l| l == "ok"), "{lines:?}");
    let rest: Vec<&str> = lines[loaded..].iter().map(String::as_str).collect();
    let expect_prefix = [
        "error unknown command \"bogus\"",
        "error imem: BUNDLE 10000 is above ffff",
        "error imem: LANE 8 is above 7",
        "error imem: no SLOT",
        "error map: no FLAGS",
        "error packet: refused: 2 bytes",
        "error packet: refused: dc1 bytes",
        "error packet: refused: 0 bytes",
        "error packet: BYTES is not a string of hex pairs",
        "error host_lookup: KEY has 3 bytes, the map's size is 4",
        "error host_lookup: map 7 is not defined",
        "ret 0",
        "ret 0 1 2a00000000000000",
        "ret fffffffffffffff9", // -E2BIG: index 1 of a one-entry array
        "slot 0 - -",
        "error vcd: UNIT \"2ps\" is not 1ps or 1fs",
        "error vcd: HALF is 0",
        "error vcd: no FILE",
        "ok",
    ];
    for (i, want) in expect_prefix.iter().enumerate() {
        assert!(
            rest[i].starts_with(want),
            "line {i}: {:?}, expected {want:?}",
            rest[i]
        );
    }
    let n = expect_prefix.len();
    let (out, _) = parse_out(rest[n]);
    assert_eq!(out.verdict, 1);
    assert_eq!(rest[n + 1], "ok");
    // Three refused (counted as rx and drop), one dropped by the program.
    assert_eq!(rest[n + 2], "counters 4 0 4");
    assert_eq!(rest[n + 3], "error empty line");
    assert_eq!(rest.len(), n + 4, "quit has no answer: {rest:?}");
    // 156.25 MHz: 6400 ps a cycle, from #0 at the packet's first cycle.
    let waves = std::fs::read_to_string(&vcd).expect("the waves were written");
    let waves = common::parse_vcd(&waves).unwrap_or_else(|e| panic!("{}: {e}", vcd.display()));
    common::check_waves(&waves, "1ps", 3200, &["s_valid_i", "m_valid_o"]);
}

fn map(map_type: u32, key_size: u32, value_size: u32, max_entries: u32) -> MapSpec {
    MapSpec {
        name: "m".into(),
        map_type,
        key_size,
        value_size,
        max_entries,
        map_flags: 0,
        kind: MapKind::BtfDefined,
        initial_value: None,
        outer: None,
    }
}

/// Counts packets per rx queue in a hash map through bpf_map_lookup_elem / bpf_map_update_elem.
const HASH_COUNTER: &str = "
    r6 = r1
    r2 = *(u32 *)(r6 + 16)
    *(u32 *)(r10 - 4) = r2
    r1 = 0x55 ll
    r2 = r10
    r2 += -4
    call 1
    if r0 == 0 goto insert
    r1 = *(u64 *)(r0 + 0)
    r1 += 1
    *(u64 *)(r0 + 0) = r1
    r0 = 2
    exit
insert:
    r1 = 1
    *(u64 *)(r10 - 16) = r1
    r1 = 0x55 ll
    r2 = r10
    r2 += -4
    r3 = r10
    r3 += -16
    r4 = 0
    call 2
    r0 = 2
    exit
";

/// adjust_head, adjust_meta, adjust_tail (shrink, then grow: zeroed bytes), the metadata written, then an
/// adjust_head that carries it along; the return codes are written into the packet.
const ADJUST: &str = "
    r6 = r1
    r1 = r6
    r2 = -16
    call 44
    r7 = r0
    r1 = r6
    r2 = -8
    call 54
    r8 = r0
    r1 = r6
    r2 = -20
    call 65
    r9 = r0
    r1 = r6
    r2 = 10
    call 65
    r9 += r0
    r2 = *(u32 *)(r6 + 0)
    r3 = *(u32 *)(r6 + 4)
    r4 = r2
    r4 += 24
    if r4 > r3 goto out
    *(u64 *)(r2 + 0) = r7
    *(u64 *)(r2 + 8) = r8
    *(u64 *)(r2 + 16) = r9
    r5 = *(u32 *)(r6 + 8)
    r4 = r5
    r4 += 8
    if r4 > r2 goto out
    r1 = 0x1122334455667788 ll
    *(u64 *)(r5 + 0) = r1
    r1 = r6
    r2 = 4
    call 44
    r0 = 3
    exit
out:
    r0 = 1
    exit
";

/// bpf_redirect to the ifindex in the packet's first byte (flags from its second: nonzero aborts).
const REDIRECT: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 14
    if r4 > r3 goto out
    r1 = *(u8 *)(r2 + 0)
    r5 = *(u8 *)(r2 + 1)
    r2 = r5
    r2 &= 1
    call 23
    exit
out:
    r0 = 1
    exit
";

/// bpf_ringbuf_output of the packet's first 14 bytes (the Ethernet header).
const RINGBUF: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 14
    if r4 > r3 goto out
    r1 = 0x55 ll
    r3 = 14
    r4 = 0
    call 130
    r0 = 2
    exit
out:
    r0 = 1
    exit
";

#[test]
fn hash_counter_through_the_map_helpers() {
    let spec = object(map_handles(insns(HASH_COUNTER)), vec![map(1, 4, 8, 8)]);
    let fr = frames(&[60, 64, 70, 80, 90, 100, 61, 62, 63], 6);
    let keys: Vec<u32> = (0..5).collect();
    let after: String = keys
        .iter()
        .map(|k| format!("host_lookup 0 {}\n", hex(&k.to_le_bytes())))
        .collect();
    let (mut model, rest) = run_both("hash", &spec, &fr, &after, false);
    let maps = model.machine_mut().maps_mut();
    for (i, k) in keys.iter().enumerate() {
        match maps.lookup_slot(0, &k.to_le_bytes()) {
            Some(slot) => assert_eq!(
                rest[i],
                format!("ret 0 1 {}", hex(maps.value(0, slot))),
                "rx queue {k}"
            ),
            None => assert!(rest[i].ends_with(" 0 -"), "rx queue {k}: {}", rest[i]),
        }
    }
    assert_eq!(rest[0], format!("ret 0 1 {}", hex(&3u64.to_le_bytes())));
}

#[test]
fn adjust_head_meta_tail_as_the_reference_buffer() {
    let spec = object(insns(ADJUST), vec![]);
    let fr = frames(&[60, 14, 33, 34, 200, 1514, 3520], 7);
    run_both("adjust", &spec, &fr, "", false);
}

/// bpf_ktime_get_ns reads the packet's time plus the cycle the core made the call in, as the model passes it: the
/// call register between the core and the helper module must not make the time one cycle later. A load before the
/// call puts it after a packet wait, so the cycle differs between short and long packets.
const KTIME: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 64
    if r4 > r3 goto out
    r5 = *(u8 *)(r2 + 63)
    call 5
    r0 &= 0xffff
    exit
out:
    call 5
    r0 &= 0xffff
    exit
";

#[test]
fn ktime_is_the_cycle_of_the_call() {
    let spec = object(insns(KTIME), vec![]);
    let fr = frames(&[60, 64, 200, 1500], 11);
    run_both("ktime", &spec, &fr, "", true);
}

#[test]
fn redirect_records_its_target() {
    let spec = object(insns(REDIRECT), vec![]);
    let mut fr = frames(&[60, 64, 90], 8);
    fr[0][..2].copy_from_slice(&[7, 0]);
    fr[1][..2].copy_from_slice(&[9, 1]);
    fr[2][..2].copy_from_slice(&[0x21, 2]);
    let image = compile(&spec);
    let load = load_lines(&image);
    let loaded = load.lines().count();
    let mut input = load.clone();
    for (i, f) in fr.iter().enumerate() {
        input.push_str(&packet_line(f, &md(i)));
    }
    input.push_str("quit\n");
    let lines = common::run_testbench(&harness_spec(), input);
    let fields = |l: &str| {
        l.split_whitespace()
            .skip(1)
            .take(7)
            .collect::<Vec<_>>()
            .join(" ")
    };
    // verdict, fault, (cycles skipped), set, by map, map, key
    let got: Vec<String> = lines[loaded..]
        .iter()
        .map(|l| {
            let f: Vec<String> = fields(l).split(' ').map(str::to_string).collect();
            format!("{} {} {} {} {} {}", f[0], f[1], f[3], f[4], f[5], f[6])
        })
        .collect();
    assert_eq!(
        got,
        vec![
            "4 0 1 0 0 7".to_string(),
            "0 0 0 0 0 0".to_string(),
            "4 0 1 0 0 21".to_string()
        ]
    );
    run_both("redirect", &spec, &fr, "", true);
}

#[test]
fn ringbuf_records_drain_as_the_reference_ring() {
    let spec = object(map_handles(insns(RINGBUF)), vec![map(27, 0, 0, 4096)]);
    let fr = frames(&[60, 14, 100, 1514], 9);
    let (mut model, rest) = run_both("ringbuf", &spec, &fr, "ringbuf 0\nringbuf 0\n", false);
    let records = model.machine_mut().maps_mut().ringbuf_drain(0);
    assert_eq!(records.len(), fr.len());
    let want: Vec<String> = records.iter().map(|r| hex(r)).collect();
    assert_eq!(
        rest[0],
        format!("records {:x} {}", want.len(), want.join(" "))
    );
    assert_eq!(rest[1], "records 0", "drained");
}

/// Tail-calls program 1 through slot 0 of a PROG_ARRAY, indexed by the rx queue (slot 1 empty, 2 and 3 beyond it).
const TAIL: &str = "
    r6 = r1
    r2 = 0x55 ll
    r3 = *(u32 *)(r6 + 16)
    r1 = r6
    call 12
    r0 = 1
    exit
";

#[test]
fn tail_call_continues_in_the_next_program() {
    let spec = ObjectSpec {
        programs: vec![
            ProgramSpec::standalone("t", "xdp", map_handles(insns(TAIL))),
            // The tail-called program swaps the MAC addresses and transmits.
            ProgramSpec::standalone("next", "xdp", insns(MACSWAP)),
        ],
        maps: vec![map(3, 4, 4, 2)],
        license: "GPL".into(),
    };
    let fr = frames(&[60, 64, 70, 80, 90], 10);
    let preload = [(0, 0u32.to_le_bytes().to_vec(), 1u32.to_le_bytes().to_vec())];
    let (_, rest) = run_preloaded("tail", &spec, &preload, &fr, "counters\n", false);
    // Queue 0 (packets 0 and 4) reaches program 1 and transmits; the others drop.
    assert_eq!(rest, vec!["counters 5 2 3".to_string()]);
}

/// A program that never ends is aborted by the APS after BUDGET cycles (the build's -GBUDGET), with a fault.
#[test]
fn a_looping_program_is_aborted_at_the_budget() {
    let mut bundle = Bundle::empty(4);
    bundle.lanes[0] = Some(Op {
        code: CLASS_JMP | JMP_JA,
        dst: 0,
        src: 0,
        a: None,
        off: 0,
        imm: 0,
    });
    let image = Image {
        lanes: 4,
        bundles: vec![bundle],
        entries: vec![0],
        maps: Vec::new(),
    };
    let load = load_lines(&image);
    let loaded = load.lines().count();
    let fr = frames(&[60, 61], 11);
    let input = format!(
        "{load}{}{}counters\nquit\n",
        packet_line(&fr[0], &md(0)),
        packet_line(&fr[1], &md(1))
    );
    let lines = common::run_testbench(&harness_spec(), input);
    for (i, f) in fr.iter().enumerate() {
        let (out, cycles) = parse_out(&lines[loaded + i]);
        assert_eq!(
            out,
            Outcome {
                verdict: 0,
                fault: true,
                bytes: f.clone()
            }
        );
        assert!((20_000..20_010).contains(&cycles), "{cycles} cycles");
    }
    assert_eq!(lines[loaded + 2], "counters 2 0 2");
}

/// Stores to `words` distinct 8-byte words of a packet of at least `8 * words` bytes, then transmits.
fn many_stores(words: usize) -> String {
    let mut s = format!(
        "    r2 = *(u32 *)(r1 + 0)\n    r3 = *(u32 *)(r1 + 4)\n    r4 = r2\n    r4 += {}\n    \
         if r4 > r3 goto out\n    r5 = 0x5a5a5a5a5a5a5a5a ll\n",
        8 * words
    );
    for w in 0..words {
        s.push_str(&format!("    *(u64 *)(r2 + {}) = r5\n", 8 * w));
    }
    s.push_str("    r0 = 3\n    exit\nout:\n    r0 = 1\n    exit\n");
    s
}

/// The difference buffer holds DIFF_ENTRIES (32) written words: a packet writing more ends XDP_ABORTED with a fault
/// (the reference machine has no such limit: a documented difference), one writing exactly 32 transmits.
#[test]
fn difference_buffer_overflow_aborts_the_packet() {
    let fits = object(insns(&many_stores(32)), vec![]);
    let fr = frames(&[300, 400], 12);
    run_both("32 words", &fits, &fr, "", true);

    let spec = object(insns(&many_stores(33)), vec![]);
    let image = compile(&spec);
    let load = load_lines(&image);
    let loaded = load.lines().count();
    let input = format!("{load}{}counters\nquit\n", packet_line(&fr[1], &md(0)));
    let lines = common::run_testbench(&harness_spec(), input);
    let (out, _) = parse_out(&lines[loaded]);
    assert_eq!((out.verdict, out.fault), (0, true), "{}", lines[loaded]);
    assert_eq!(lines[loaded + 1], "counters 1 0 1");
}

/// The input queue synthesizes for UltraScale+ (block RAM frames); a few seconds. (aps.sv's figures, minutes of
/// Yosys at 8 difference-buffer entries, are in its header; pkt_buffer's test covers most of its logic.)
#[test]
fn input_queue_synthesizes_for_ultrascale_plus() {
    let piq = workspace_root().join("rtl/sephirot/piq.sv");
    hwxdp_rtlsim::synth(&[piq], "piq").unwrap_or_else(|err| panic!("{err}"));
}

/// Output backpressure (m_ready_i low five cycles in eight) changes nothing but the time the packets take to leave.
#[test]
fn output_backpressure_keeps_the_bytes() {
    let spec = object(insns(MACSWAP), vec![]);
    let fr = frames(&[64, 1514, 3520, 33], 13);
    run_both("backpressure", &spec, &fr, "", true);
    let image = compile(&spec);
    let load = load_lines(&image);
    let loaded = load.lines().count();
    let mut input = format!("{load}mready 0\nmready 25\n");
    for (i, f) in fr.iter().enumerate() {
        input.push_str(&packet_line(f, &md(i)));
    }
    input.push_str("quit\n");
    let lines = common::run_testbench(&harness_spec(), input);
    assert!(
        lines[loaded].starts_with("error mready: a mask of 0"),
        "{}",
        lines[loaded]
    );
    assert_eq!(lines[loaded + 1], "ok");
    for (i, f) in fr.iter().enumerate() {
        let mut swapped = f.clone();
        swapped[..6].copy_from_slice(&f[6..12]);
        swapped[6..12].copy_from_slice(&f[..6]);
        let (out, _) = parse_out(&lines[loaded + 2 + i]);
        assert_eq!((out.verdict, out.bytes), (3, swapped), "packet {i}");
    }
}

/// Packets sent back to back with `queue`: the input queue holds several while the APS works, refuses what does not
/// fit (PIQ_FRAMES 256 frames, PIQ_DESCS 16 packets), and the kept ones come out in order with the model's results.
#[test]
fn back_to_back_packets_queue_and_overflow_the_input_queue() {
    for (name, text, len, count) in [
        ("queue-long", MACSWAP, 1500, 20),
        ("queue-short", DROP, 64, 40),
    ] {
        let spec = object(insns(text), vec![]);
        let image = compile(&spec);
        let mut model = HxdpCore::new(image.clone(), &spec, Some("t"), &Config::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let fr = frames(&vec![len; count], 14);
        let load = load_lines(&image);
        let loaded = load.lines().count();
        let mut input = load.clone();
        for (i, f) in fr.iter().enumerate() {
            input.push_str(&packet_line(f, &md(i)).replacen("packet", "queue", 1));
        }
        input.push_str(&"result\n".repeat(count + 1));
        input.push_str("counters\nquit\n");
        let lines = common::run_testbench(&harness_spec(), input);
        let answers = &lines[loaded..];
        let kept: Vec<usize> = (0..count).filter(|&i| answers[i] == "ok").collect();
        for a in &answers[..count] {
            assert!(
                a == "ok" || a.starts_with("error queue: refused: "),
                "{name}: {a}"
            );
        }
        assert!(
            kept.len() > 1 && kept.len() < count,
            "{name}: {} of {count} kept: the queue should hold several and refuse some",
            kept.len()
        );
        println!(
            "{name}: {} of {count} packets of {len} bytes kept",
            kept.len()
        );
        let results = &answers[count..];
        for (r, &i) in kept.iter().enumerate() {
            let mut buff = XdpBuff::new(&fr[i]).expect("frame");
            let verdict = model.run_packet(&mut buff, &md(i)).retval();
            let want = Outcome {
                verdict,
                fault: model.last_fault().is_some(),
                bytes: buff.output().to_vec(),
            };
            assert_eq!(parse_out(&results[r]).0, want, "{name}: packet {i}");
        }
        // One `result` per packet sent and one more: those beyond the kept packets find none waiting.
        let extra = &results[kept.len()..count + 1];
        assert!(
            extra
                .iter()
                .all(|l| l.starts_with("error result: no queued packet")),
            "{name}: {extra:?}"
        );
        // Every packet left or was dropped: rx = tx + drop.
        let refused = count - kept.len();
        let (tx, drop) = if text == DROP {
            (0, count)
        } else {
            (kept.len(), refused)
        };
        assert_eq!(
            &results[count + 1..],
            [format!("counters {count:x} {tx:x} {drop:x}")],
            "{name}"
        );
    }
}
