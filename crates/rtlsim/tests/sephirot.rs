//! rtl/sephirot/sephirot.sv against the cycle model `hwxdp_hxdp::HxdpCore`, program by program and packet by packet,
//! with the packet arriving 32 bytes a cycle (the APS's early start) and with the whole packet there from the start:
//! verdicts, faults, packet bytes, cycles and the cycle of every helper call (`run_cycles_o`) must be identical. The
//! cycle table is printed (`cargo test -p hwxdp-rtlsim --test sephirot -- --nocapture`), with each image's listing
//! when `SEPHIROT_LISTINGS` is set.

mod common;

use common::{hex, unhex, Rng};
use hwxdp_ebpf::opcode::*;
use hwxdp_ebpf::Insn;
use hwxdp_hxdp::isa::{Bundle, Image, Op, EXIT_IMM, LDX6, STX6};
use hwxdp_hxdp::{compile_object, timing, HxdpCore, Options};
use hwxdp_object::{MapKind, MapSpec, ObjectSpec, ProgramSpec};
use hwxdp_xdp::maps::MapStore;
use hwxdp_xdp::{Config, XdpBuff, XdpMd};

/// Lanes of the hand-scheduled images and of the main build.
const LANES: usize = 4;

/// Helpers the testbench answers, as (id, latency, r0, fault): latencies as `hwxdp_hxdp::timing` charges them
/// (the top's call register, then an answer without memory traffic: `bpf_map_lookup_elem` faults on its NULL map
/// at once), values as the reference machine computes them for the programs below (cpu 0; the packet length for
/// `bpf_xdp_get_buff_len`; `bpf_map_lookup_elem` is only called with a NULL map, which faults).
fn helper_lines(packet_len: usize) -> String {
    let l = timing::HELPER_REGISTER_CYCLES + timing::HELPER_CYCLES;
    format!("helper 8 {l:x} 0 0\nhelper bc {l:x} {packet_len:x} 0\nhelper 1 {l:x} 0 1\n")
}

/// One program with the packets it runs on.
struct Case {
    name: String,
    spec: ObjectSpec,
    image: Image,
    packets: Vec<(Vec<u8>, XdpMd)>,
    /// Testbench lines before packet i (helper behaviour beyond `helper_lines`), when there are any.
    extra: Vec<String>,
    /// Cycles the testbench's helpers take beyond what the model charges (stack accesses take a cycle each).
    extra_latency: u64,
    /// Map updates (map, key, value) the model gets before the packets (the testbench has no maps).
    preload: Vec<(usize, Vec<u8>, Vec<u8>)>,
}

impl Case {
    fn with_extra(mut self, extra: Vec<String>, extra_latency: u64) -> Case {
        self.extra = extra;
        self.extra_latency = extra_latency;
        self
    }
}

/// What one packet produced.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    verdict: u32,
    fault: bool,
    bytes: Vec<u8>,
    cycles: u64,
    /// Helper calls as the testbench saw them ("ID R1 R2 R3 R4 R5" in hex); the model's side leaves them empty.
    calls: Vec<String>,
    /// The cycle of each helper call: `run_cycles_o` on the core, the cycle virtual time sees in the model.
    call_cycles: Vec<u64>,
    /// The testbench's stack accesses, "WE ADDR BYTES RDATA FAULT" (hex) as the core answered them.
    hmem: Vec<String>,
}

fn object(insns: Vec<Insn>) -> ObjectSpec {
    ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns))
}

fn assemble(text: &str) -> ObjectSpec {
    object(insns(text))
}

fn insns(text: &str) -> Vec<Insn> {
    hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn compiled(lanes: usize, name: &str, spec: ObjectSpec, packets: Vec<(Vec<u8>, XdpMd)>) -> Case {
    let options = Options {
        lanes,
        ..Options::default()
    };
    let image = compile_object(&spec, 0, &options)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .image;
    Case {
        name: name.to_string(),
        spec,
        image,
        packets,
        extra: Vec::new(),
        extra_latency: 0,
        preload: Vec::new(),
    }
}

/// A hand-scheduled image: bundles of (lane, op); the object only has to exist for the model to load.
fn hand(name: &str, bundles: Vec<Vec<(usize, Op)>>, packets: Vec<(Vec<u8>, XdpMd)>) -> Case {
    let image = Image {
        lanes: LANES,
        bundles: bundles
            .into_iter()
            .map(|ops| {
                let mut b = Bundle::empty(LANES);
                for (lane, op) in ops {
                    b.lanes[lane] = Some(op);
                }
                b
            })
            .collect(),
        entries: vec![0],
        maps: Vec::new(),
    };
    Case {
        name: name.to_string(),
        spec: object(vec![Insn::new(CLASS_JMP | JMP_EXIT, 0, 0, 0, 0)]),
        image,
        packets,
        extra: Vec::new(),
        extra_latency: 0,
        preload: Vec::new(),
    }
}

fn op(code: u8, dst: u8, src: u8, off: i16, imm: i64) -> Op {
    Op {
        code,
        dst,
        src,
        a: None,
        off,
        imm,
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed))
        .collect()
}

fn md() -> XdpMd {
    XdpMd {
        ingress_ifindex: 3,
        rx_queue_index: 5,
    }
}

fn packets(lens: &[usize]) -> Vec<(Vec<u8>, XdpMd)> {
    lens.iter()
        .enumerate()
        .map(|(i, &len)| (pattern(len, i as u8 * 11 + 1), md()))
        .collect()
}

/// The reference: the cycle model with the reference machine's memory and helpers; `arrival` as the testbench's.
fn reference(case: &Case, arrival: bool) -> Vec<Outcome> {
    let program = case.spec.programs[0].name.clone();
    let mut core = HxdpCore::new(
        case.image.clone(),
        &case.spec,
        Some(program.as_str()),
        &Config::default(),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    core.set_packet_present(!arrival);
    for (map, key, value) in &case.preload {
        core.machine_mut()
            .maps_mut()
            .update(*map, key, value, 0)
            .unwrap_or_else(|e| panic!("{}: preloading map {map}: {e}", case.name));
    }
    case.packets
        .iter()
        .map(|(frame, md)| {
            let mut buff = XdpBuff::new(frame).expect("frame");
            let verdict = core.run_packet(&mut buff, md).retval();
            Outcome {
                verdict,
                fault: core.last_fault().is_some(),
                bytes: buff.output().to_vec(),
                cycles: core.last_cycles(),
                calls: Vec::new(),
                call_cycles: core.last_helper_calls().iter().map(|c| c.1).collect(),
                hmem: Vec::new(),
            }
        })
        .collect()
}

fn script(cases: &[Case], arrival: bool) -> String {
    let mut s = format!("arrival {}\n", u8::from(arrival));
    for case in cases {
        for (b, bundle) in case.image.bundles.iter().enumerate() {
            let mut slots = vec![0u64; case.image.lanes];
            for (lane, op) in bundle.ops() {
                let [low, high] = hwxdp_hxdp::isa::encode_op(op);
                slots[lane] = low;
                if op.is_lddw() {
                    slots[lane + 1] = high;
                }
            }
            for (lane, slot) in slots.iter().enumerate() {
                s.push_str(&format!("imem {b:x} {lane:x} {slot:x}\n"));
            }
        }
        s.push_str(&format!("entry {:x}\n", case.image.entries[0]));
        for (i, (frame, md)) in case.packets.iter().enumerate() {
            s.push_str(&helper_lines(frame.len()));
            if let Some(extra) = case.extra.get(i) {
                s.push_str(extra);
            }
            s.push_str(&format!(
                "frame {}\nmd {:x} {:x}\nrun\n",
                hex(frame),
                md.ingress_ifindex,
                md.rx_queue_index
            ));
        }
    }
    s
}

/// Runs the cases (all of `lanes` lanes) on the core built with that many lanes.
fn simulate(lanes: usize, cases: &[Case], arrival: bool) -> Vec<Outcome> {
    let mut spec = common::unit_spec("sephirot");
    for file in [
        "sephirot/sephirot.sv",
        "sephirot/alu.sv",
        "sephirot/divider.sv",
        "sephirot/lane.sv",
        "sephirot/decode.sv",
        "sephirot/regfile.sv",
        "sephirot/imem.sv",
        "sephirot/stack.sv",
    ] {
        spec = spec.source(file);
    }
    spec.flags = vec![
        format!("-GLANES={lanes}"),
        "-CFLAGS".into(),
        format!("-DTB_LANES={lanes}"),
    ];
    let mut calls = Vec::new();
    let mut call_cycles = Vec::new();
    let mut hmem = Vec::new();
    let mut outcomes = Vec::new();
    for line in common::run_testbench(&spec, script(cases, arrival)) {
        if let Some(call) = line.strip_prefix("hcall ") {
            let (args, cycle) = call.rsplit_once(' ').expect("hcall line ends in the cycle");
            calls.push(args.to_string());
            call_cycles.push(u64::from_str_radix(cycle, 16).expect("run_cycles"));
            continue;
        }
        if let Some(access) = line.strip_prefix("hmem ") {
            hmem.push(access.to_string());
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert!(f.len() == 5 && f[0] == "result", "model printed {line:?}");
        outcomes.push(Outcome {
            verdict: u32::from_str_radix(f[1], 16).expect("verdict"),
            fault: f[2] == "1",
            bytes: unhex(f[4]),
            cycles: u64::from_str_radix(f[3], 16).expect("cycles"),
            calls: std::mem::take(&mut calls),
            call_cycles: std::mem::take(&mut call_cycles),
            hmem: std::mem::take(&mut hmem),
        });
    }
    outcomes
}

/// Runs every case on both sides, the packet arriving frame by frame and then present from the start; results,
/// cycles and helper-call cycles must match exactly (cycles less the testbench's extra helper latency). Returns the
/// cycle table and the core's outcomes.
fn check(lanes: usize, cases: &[Case]) -> (String, Vec<Outcome>) {
    assert!(cases.iter().all(|c| c.image.lanes == lanes));
    // The core has one divider for all lanes: every image, compiled or hand-scheduled, keeps the rule.
    for case in cases {
        hwxdp_hxdp::ports::check_divider(&case.image)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    }
    let mut failures = Vec::new();
    let mut table = String::new();
    let mut outcomes = Vec::new();
    for arrival in [true, false] {
        let got = simulate(lanes, cases, arrival);
        let mut want = Vec::new();
        for case in cases {
            let names: Vec<String> = case.spec.programs.iter().map(|p| p.name.clone()).collect();
            let listing = hwxdp_hxdp::isa::listing(&case.image, &names);
            for (i, w) in reference(case, arrival).into_iter().enumerate() {
                want.push((
                    format!("{} #{i}", case.name),
                    case.extra_latency,
                    listing.clone(),
                    w,
                ));
            }
        }
        assert_eq!(got.len(), want.len(), "one result per packet");
        let mode = if arrival { "arriving" } else { "present" };
        for (g, (name, extra, listing, w)) in got.iter().zip(&want) {
            let expected = w.cycles + extra;
            table.push_str(&format!(
                "{name:<40} {mode:<8} model {:>5} rtl {:>5} {:+}\n",
                w.cycles,
                g.cycles,
                g.cycles as i64 - expected as i64
            ));
            if std::env::var_os("SEPHIROT_LISTINGS").is_some() {
                table.push_str(listing);
            }
            if (g.verdict, g.fault, &g.bytes) != (w.verdict, w.fault, &w.bytes) {
                failures.push(format!(
                    "{name} ({mode}): rtl verdict {} fault {} bytes {}\n    model verdict {} fault {} bytes {}\n{listing}",
                    g.verdict,
                    g.fault,
                    hex(&g.bytes),
                    w.verdict,
                    w.fault,
                    hex(&w.bytes)
                ));
            }
            if g.cycles != expected {
                failures.push(format!(
                    "{name} ({mode}): {} cycles, the model {} (+{extra} for the testbench's helpers)\n{listing}",
                    g.cycles, w.cycles
                ));
            }
            // With extra helper latency only the first call's cycle is the model's.
            let compared = if *extra == 0 { w.call_cycles.len() } else { 1 };
            if g.call_cycles.len() != w.call_cycles.len()
                || g.call_cycles[..compared.min(g.call_cycles.len())]
                    != w.call_cycles[..compared.min(w.call_cycles.len())]
            {
                failures.push(format!(
                    "{name} ({mode}): helper calls in cycles {:?}, the model {:?}",
                    g.call_cycles, w.call_cycles
                ));
            }
        }
        outcomes.extend(got);
    }
    println!("{table}");
    assert!(failures.is_empty(), "{}\n{table}", failures.join("\n"));
    (table, outcomes)
}

// ---------------------------------------------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------------------------------------------

/// Every ALU operation, 64- and 32-bit, immediate and register forms; results stored into the packet.
const ALU_ALL: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = 0x7654321f
    r4 = -7
    r5 = r3
    r5 += r4
    r6 = r3
    r6 -= 0x1234
    r7 = r3
    r7 *= r4
    r8 = r3
    r8 /= 13
    r9 = r3
    r9 %= r4
    *(u64 *)(r2 + 0) = r5
    *(u64 *)(r2 + 8) = r6
    *(u64 *)(r2 + 16) = r7
    *(u64 *)(r2 + 24) = r8
    *(u64 *)(r2 + 32) = r9
    r5 = r3
    r5 |= r4
    r6 = r3
    r6 &= 0xff0f
    r7 = r3
    r7 <<= 35
    r8 = r4
    r8 >>= 3
    r9 = r4
    r9 s>>= 3
    *(u64 *)(r2 + 40) = r5
    *(u64 *)(r2 + 48) = r6
    *(u64 *)(r2 + 56) = r7
    *(u64 *)(r2 + 64) = r8
    *(u64 *)(r2 + 72) = r9
    r5 = r3
    r5 ^= r4
    r6 = r3
    r6 = -r6
    r7 = r4
    r7 s/= 3
    r8 = r4
    r8 s%= 3
    r9 = (s8)r3
    *(u64 *)(r2 + 80) = r5
    *(u64 *)(r2 + 88) = r6
    *(u64 *)(r2 + 96) = r7
    *(u64 *)(r2 + 104) = r8
    *(u64 *)(r2 + 112) = r9
    w5 = w3
    w5 += w4
    w6 = w4
    w6 *= 3
    w7 = w4
    w7 /= w3
    w8 = w4
    w8 s>>= 2
    w9 = w4
    w9 = -w9
    *(u64 *)(r2 + 120) = r5
    *(u64 *)(r2 + 128) = r6
    *(u64 *)(r2 + 136) = r7
    *(u64 *)(r2 + 144) = r8
    *(u64 *)(r2 + 152) = r9
    r5 = r3
    r5 = be16 r5
    r6 = r3
    r6 = be32 r6
    r7 = r4
    r7 = be64 r7
    r8 = r3
    r8 = le16 r8
    r9 = r4
    r9 = bswap32 r9
    *(u64 *)(r2 + 160) = r5
    *(u64 *)(r2 + 168) = r6
    *(u64 *)(r2 + 176) = r7
    *(u64 *)(r2 + 184) = r8
    *(u64 *)(r2 + 192) = r9
    w0 = w3
    w0 ^= 0x55
    exit
";

/// Every condition, taken and not taken, 64- and 32-bit: each records its outcome as one bit of r0.
fn conditions() -> String {
    let conds = [
        "==", "!=", ">", ">=", "<", "<=", "s>", "s>=", "s<", "s<=", "&",
    ];
    let mut text =
        String::from("    r0 = 0\n    r3 = -5\n    r4 = 7\n    r5 = 0x100000007 ll\n    r6 = 0\n");
    let mut k = 0;
    for c in conds {
        for (a, b) in [
            ("r3", "r4"),
            ("r4", "r3"),
            ("r4", "r5"),
            ("w4", "w5"),
            ("w3", "w4"),
        ] {
            for imm in [false, true] {
                let b = if imm {
                    match b {
                        "r4" | "w4" => "7".to_string(),
                        "r3" => "-5".to_string(),
                        _ => "-1".to_string(),
                    }
                } else {
                    b.to_string()
                };
                text.push_str(&format!(
                    "    if {a} {c} {b} goto t{k}\n    goto n{k}\nt{k}:\n    r6 += {}\nn{k}:\n",
                    (k % 13) + 1
                ));
                text.push_str("    r0 ^= r6\n    r0 <<= 1\n");
                k += 1;
            }
        }
    }
    text.push_str("    exit\n");
    text
}

/// Packet loads and stores of every size, context fields, the stack at every size.
const MEMORY: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 64
    if r4 > r3 goto out
    r5 = *(u8 *)(r2 + 1)
    r6 = *(u16 *)(r2 + 3)
    r7 = *(u32 *)(r2 + 6)
    r8 = *(u64 *)(r2 + 13)
    *(u64 *)(r10 - 8) = r8
    *(u32 *)(r10 - 12) = r7
    *(u16 *)(r10 - 14) = r6
    *(u8 *)(r10 - 15) = r5
    *(u32 *)(r10 - 24) = 0x11223344
    r0 = *(u64 *)(r10 - 16)
    r9 = *(u32 *)(r10 - 11)
    *(u64 *)(r2 + 32) = r0
    *(u32 *)(r2 + 40) = r9
    r0 = *(u16 *)(r10 - 22)
    *(u16 *)(r2 + 44) = r0
    *(u8 *)(r2 + 46) = r5
    *(u16 *)(r2 + 47) = r6
    *(u32 *)(r2 + 49) = 0x01020304
    *(u64 *)(r2 + 53) = r7
    r5 = *(u32 *)(r1 + 12)
    r6 = *(u32 *)(r1 + 16)
    r7 = *(u32 *)(r1 + 8)
    r7 -= r2
    *(u8 *)(r2 + 61) = r5
    *(u8 *)(r2 + 62) = r6
    *(u8 *)(r2 + 63) = r7
    r0 = *(u8 *)(r2 + 0)
    exit
out:
    r0 = 1
    exit
";

/// A bounds check the compiler turns into a checked packet load: short packets end with its verdict.
const CHECKED: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 40
    if r4 > r3 goto drop
    r0 = *(u32 *)(r2 + 36)
    r0 &= 3
    exit
drop:
    r0 = 1
    exit
";

/// bpf-to-bpf calls: the callee sees its own frame, r6-r9 survive, the stack of the caller is reachable.
const CALLS: &str = "
    r6 = 11
    r7 = 22
    *(u64 *)(r10 - 8) = r6
    r1 = r10
    r1 += -8
    call f
    r0 += r6
    r0 += r7
    r2 = *(u64 *)(r10 - 8)
    r0 += r2
    exit
f:
    r6 = 100
    r7 = *(u64 *)(r1 + 0)
    r7 += 1
    *(u64 *)(r1 + 0) = r7
    *(u64 *)(r10 - 8) = r6
    r0 = *(u64 *)(r10 - 8)
    call g
    r0 += r7
    exit
g:
    r0 = 1000
    exit
";

/// Helper calls with results forwarded to the next bundle, and an unknown helper (a fault).
const HELPERS: &str = "
    r6 = r1
    call 8
    r7 = r0
    call 188
    r0 += r7
    r0 += 1
    r1 = *(u32 *)(r6 + 0)
    exit
";

/// Helper arguments r1-r5 as they were before the bundle, some computed in the bundle just before the call.
const HELPER_ARGS: &str = "
    r1 = 0x1111
    r2 = 0x2222
    r3 = 0x3333
    r4 = 0x4444
    r5 = 0x5555
    r6 = r1
    r1 += r2
    r2 += r3
    r3 <<= 4
    r4 = r5
    r5 = -1
    call 8
    r1 = r0
    r1 += 7
    r2 = r1
    call 8
    exit
";

const BAD_HELPER: &str = "
    r1 = 0
    call 1
    exit
";

/// Faults: a stack access above the frame, a packet load out of bounds, a context store.
const STACK_FAULT: &str = "
    r0 = *(u64 *)(r10 + 0)
    exit
";

const PACKET_FAULT: &str = "
    r2 = *(u32 *)(r1 + 0)
    r0 = *(u8 *)(r2 + 80)
    exit
";

const CONTEXT_STORE: &str = "
    *(u32 *)(r1 + 0) = 1
    r0 = 2
    exit
";

/// Atomics on the stack and in the packet: every operation, with and without fetch, 32- and 64-bit.
const ATOMICS: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 48
    if r4 > r3 goto out
    r5 = 0x0f0f
    *(u64 *)(r10 - 8) = r5
    r6 = 3
    lock *(u64 *)(r10 - 8) += r6
    r6 = atomic_fetch_add((u64 *)(r10 - 8), r6)
    r7 = 0x300
    r7 = atomic_fetch_or((u64 *)(r10 - 8), r7)
    w8 = 0xff
    w8 = atomic_fetch_and((u32 *)(r10 - 8), w8)
    r9 = 0x55
    lock *(u64 *)(r10 - 8) ^= r9
    r9 = xchg_64(r10 - 8, r9)
    r0 = *(u64 *)(r10 - 8)
    r5 = 77
    r0 = cmpxchg_64(r10 - 8, r0, r5)
    r5 = *(u64 *)(r10 - 8)
    *(u64 *)(r2 + 0) = r6
    *(u64 *)(r2 + 8) = r7
    *(u64 *)(r2 + 16) = r8
    *(u64 *)(r2 + 24) = r9
    *(u64 *)(r2 + 32) = r5
    w5 = 0x01010101
    lock *(u32 *)(r2 + 40) += w5
    w5 = atomic_fetch_xor((u32 *)(r2 + 44), w5)
    lock *(u32 *)(r2 + 0) |= w5
    w0 = 1
    w0 = cmpxchg32_32(r2 + 8, w0, w5)
    r1 = 9
    r0 = cmpxchg_64(r2 + 16, r0, r1)
    lock *(u64 *)(r2 + 24) &= r1
    w4 = xchg32_32(r2 + 32, w4)
    r0 += r4
    exit
out:
    r0 = 1
    exit
";

/// Calls nested deeper than the eight stack frames allow: the eighth call faults.
const CALL_DEPTH: &str = "
    r6 = 0
    call f
    exit
f:
    r6 += 1
    r0 = r6
    if r6 > 20 goto done
    call f
done:
    exit
";

/// A loop (backward branches taken many times), then an early exit (`exit K`).
const LOOP: &str = "
    r0 = 0
    r3 = 0
loop:
    r0 += r3
    r3 += 1
    if r3 < 50 goto loop
    if r0 == 1225 goto good
    r0 = 0
    exit
good:
    r0 = 2
    exit
";

/// Loads far into long packets early in the program: decode waits for their frames (32 bytes a cycle when the packet
/// arrives); a store to bytes not there yet does not wait, and a load of them reads the stored value.
const ARRIVAL: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 1500
    if r4 > r3 goto short
    r5 = *(u8 *)(r2 + 1400)
    r6 = *(u32 *)(r2 + 100)
    *(u16 *)(r2 + 1200) = r6
    r7 = *(u16 *)(r2 + 1200)
    r0 = *(u16 *)(r2 + 1490)
    r0 += r5
    r0 += r6
    r0 += r7
    *(u32 *)(r2 + 4) = r0
    r0 = 2
    exit
short:
    r4 = r2
    r4 += 200
    if r4 > r3 goto out
    r0 = *(u64 *)(r2 + 192)
    *(u64 *)(r2 + 0) = r0
out:
    r0 = 2
    exit
";

/// The helper's stack port: a helper called from a function writes the caller's frame (`bpf_xdp_load_bytes` into
/// the caller's r10 - 16); the testbench's helper makes those accesses, and more, through hmem_* (see `HMEM_SCRIPT`).
const HMEM: &str = "
    r9 = r1
    r6 = 0x1122334455667788 ll
    *(u64 *)(r10 - 8) = r6
    r7 = 0x0102030405060708 ll
    *(u64 *)(r10 - 24) = r7
    r1 = r9
    call f
    r2 = *(u32 *)(r9 + 0)
    r3 = *(u32 *)(r9 + 4)
    r4 = r2
    r4 += 32
    if r4 > r3 goto out
    r5 = *(u64 *)(r10 - 16)
    *(u64 *)(r2 + 16) = r5
    r5 = *(u64 *)(r10 - 8)
    *(u64 *)(r2 + 24) = r5
    r0 = 2
    exit
out:
    r0 = 1
    exit
f:
    r2 = 0
    r3 = r10
    r3 += -528
    r4 = 8
    call 189
    exit
";

/// The stack accesses the testbench's `bpf_xdp_load_bytes` makes in `HMEM` (the callee's frame is the second, r10 =
/// stack + 1024): (write, address, bytes, data, the answer expected: Some(data read) or None for a fault). `DATA`
/// stands for the packet's first eight bytes, which the reference's helper copies to the caller's r10 - 16.
const DATA: u64 = u64::MAX;
const HMEM_SCRIPT: [(bool, u64, u64, u64, Option<u64>); 13] = [
    // The caller's frame, below the current one: read its two values, write the helper's result, read it back.
    (
        false,
        0x3000_0000_0000_01f8,
        8,
        0,
        Some(0x1122_3344_5566_7788),
    ),
    (
        false,
        0x3000_0000_0000_01e8,
        8,
        0,
        Some(0x0102_0304_0506_0708),
    ),
    (true, 0x3000_0000_0000_01f0, 8, DATA, Some(0)),
    (false, 0x3000_0000_0000_01f0, 8, 0, Some(DATA)),
    (false, 0x3000_0000_0000_0000, 1, 0, Some(0)),
    // The current frame's top is the bound: an access ending there is fine, one beyond it faults and changes nothing.
    (true, 0x3000_0000_0000_0400, 8, 0xdead, None),
    (false, 0x3000_0000_0000_03fc, 4, 0, Some(0)),
    (true, 0x3000_0000_0000_03fe, 4, 0xffff_ffff, None),
    (false, 0x3000_0000_0000_03f8, 8, 0, Some(0)),
    // Not the stack, no bytes, too many bytes.
    (false, 0x2000_0000_0000_0100, 8, 0, None),
    (false, 0x3000_0000_0000_01f8, 0, 0, None),
    (false, 0x3000_0000_0000_01f0, 9, 0, None),
    (true, 0x4000_0000_0000_0000, 4, 1, None),
];

/// A stray stack access (outside any helper call): it faults.
const HMEM_STRAY: (bool, u64, u64) = (false, 0x3000_0000_0000_01f8, 8);

fn hmem_case(lanes: usize) -> Case {
    let pk = packets(&[64, 20]);
    let extra = pk
        .iter()
        .enumerate()
        .map(|(i, (frame, _))| {
            let data = u64::from_le_bytes(frame[..8].try_into().expect("8 bytes"));
            let mut lines = String::from("helper bd 1 0 0\n");
            for (we, addr, bytes, wdata, _) in HMEM_SCRIPT {
                let wdata = if wdata == DATA { data } else { wdata };
                lines.push_str(&format!(
                    "hmem bd {:x} {addr:x} {bytes:x} {wdata:x}\n",
                    u8::from(we)
                ));
            }
            if i == 0 {
                let (we, addr, bytes) = HMEM_STRAY;
                lines.push_str(&format!("stray {:x} {addr:x} {bytes:x} 0\n", u8::from(we)));
            }
            lines
        })
        .collect();
    // The testbench's helper answers after its last access's answer (the script's length + 1 cycles); the model
    // charges the 8-byte bpf_xdp_load_bytes as helpers.sv takes it: the top's call register, a cycle for the copy's
    // geometry, the far byte read, the one chunk read and written, the answer.
    let model = timing::HELPER_REGISTER_CYCLES + 5;
    compiled(lanes, "helper stack port", assemble(HMEM), pk)
        .with_extra(extra, HMEM_SCRIPT.len() as u64 + 1 - model)
}

/// Checks the testbench's stack accesses of `hmem_case` against `HMEM_SCRIPT` (and the stray one).
fn check_hmem(case: &Case, outcomes: &[Outcome]) {
    assert_eq!(outcomes.len(), case.packets.len());
    for (i, (o, (frame, _))) in outcomes.iter().zip(&case.packets).enumerate() {
        let data = u64::from_le_bytes(frame[..8].try_into().expect("8 bytes"));
        let mut want: Vec<(bool, u64, u64, Option<u64>)> = Vec::new();
        if i == 0 {
            want.push((HMEM_STRAY.0, HMEM_STRAY.1, HMEM_STRAY.2, None));
        }
        for (we, addr, bytes, _, answer) in HMEM_SCRIPT {
            want.push((
                we,
                addr,
                bytes,
                answer.map(|a| if a == DATA { data } else { a }),
            ));
        }
        assert_eq!(o.hmem.len(), want.len(), "packet {i}: {:?}", o.hmem);
        for (line, (we, addr, bytes, answer)) in o.hmem.iter().zip(want) {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f.len(), 5, "{line}");
            let head = format!("{:x} {addr:x} {bytes:x}", u8::from(we));
            assert_eq!(f[..3].join(" "), head, "packet {i}: {line}");
            match answer {
                Some(v) if !we => assert_eq!(
                    (f[3], f[4]),
                    (format!("{v:x}").as_str(), "0"),
                    "packet {i}: {line}"
                ),
                Some(_) => assert_eq!(f[4], "0", "packet {i}: a good write faulted: {line}"),
                None => assert_eq!(f[4], "1", "packet {i}: no fault: {line}"),
            }
        }
    }
}

/// `bpf_tail_call` through a PROG_ARRAY whose slot 0 holds program 1: from the program itself (`main`) and from a
/// bpf-to-bpf function (`sub`, whose tail-called program then returns to the function's caller, as the reference
/// machine has it). Slot 1 is empty: the call falls through. The packet's first byte picks the slot.
const TAIL_MAIN: &str = "
    r6 = 7
    *(u64 *)(r10 - 8) = r6
    r9 = r1
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 16
    if r4 > r3 goto out
    r3 = *(u8 *)(r2 + 0)
    r3 &= 1
    r1 = r9
    r2 = 0x77 ll
    call 12
    r0 = 9
    exit
out:
    r0 = 1
    exit
";

const TAIL_SUB: &str = "
    r6 = 7
    *(u64 *)(r10 - 8) = r6
    r9 = r1
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 16
    if r4 > r3 goto out
    r7 = r2
    r8 = *(u8 *)(r2 + 0)
    r8 &= 1
    r1 = r9
    call f
    r6 = 0xee
    *(u8 *)(r7 + 15) = r6
    r0 = 3
    exit
out:
    r0 = 1
    exit
f:
    r6 = 5
    *(u64 *)(r10 - 8) = r6
    r2 = 0x77 ll
    r3 = r8
    call 12
    r0 = 9
    exit
";

/// The tail-called program: r1 is the context again, the stack as the caller left it (r10 - 8: 7 from `main`, 5
/// from `sub`'s function).
const TAIL_NEXT: &str = "
    r2 = *(u32 *)(r1 + 0)
    r3 = *(u32 *)(r1 + 4)
    r4 = r2
    r4 += 16
    if r4 > r3 goto out
    r5 = *(u64 *)(r10 - 8)
    *(u64 *)(r2 + 8) = r5
    r0 = r5
    r0 += 0x50
    exit
out:
    r0 = 1
    exit
";

fn tail_case(lanes: usize, name: &str, first: &str) -> Case {
    let mut main = insns(first);
    for insn in main
        .iter_mut()
        .filter(|i| i.code == LD_DW_IMM && i.imm == 0x77)
    {
        insn.src = PSEUDO_MAP_FD;
        insn.imm = 0;
    }
    let spec = ObjectSpec {
        programs: vec![
            ProgramSpec::standalone("t", "xdp", main),
            ProgramSpec::standalone("next", "xdp", insns(TAIL_NEXT)),
        ],
        maps: vec![MapSpec {
            name: "jump_table".into(),
            map_type: 3,
            key_size: 4,
            value_size: 4,
            max_entries: 2,
            map_flags: 0,
            kind: MapKind::BtfDefined,
            initial_value: None,
            outer: None,
        }],
        license: "GPL".into(),
    };
    let pk = packets(&[64, 64, 64, 64, 14]);
    let mut case = compiled(lanes, name, spec, pk);
    let entry = case.image.entries[1];
    // The core keeps r0 across bpf_tail_call whatever the helper answers; on success it continues at program 1's
    // entry bundle. The testbench answers when the model's helper module would: the top's call register, the get
    // request in the next cycle, the maps module's get of a 4-byte PROG_ARRAY slot (index 0 or 1, in range), the
    // answer seen in the next cycle.
    let jump_table = timing::MapShape {
        map_type: 3,
        key_size: 4,
        value_size: 4,
        max_entries: 2,
    };
    let latency = timing::HELPER_REGISTER_CYCLES + 1 + timing::get_latency(&jump_table, 0) + 1;
    let extra = case
        .packets
        .iter()
        .map(|(frame, _)| {
            let mut lines = format!("helper c {latency:x} dead 0\n");
            if frame[0] & 1 == 0 {
                lines.push_str(&format!("tail c {entry:x}\n"));
            }
            lines
        })
        .collect();
    case.preload = vec![(0, 0u32.to_le_bytes().to_vec(), 1u32.to_le_bytes().to_vec())];
    case.with_extra(extra, 0)
}

fn hand_cases() -> Vec<Case> {
    let ja = CLASS_JMP | JMP_JA;
    let mov64k = CLASS_ALU64 | ALU_MOV;
    let jeqk = CLASS_JMP | JMP_JEQ;
    let exit = CLASS_JMP | JMP_EXIT;
    let pk = packets(&[64]);
    let mut cases = Vec::new();
    // Parallel branches: lane 0 not taken, lanes 1 and 3 taken: lane 1 wins.
    cases.push(hand(
        "lane priority",
        vec![
            vec![(0, op(mov64k, 3, 0, 0, 5)), (1, op(mov64k, 4, 0, 0, 9))],
            vec![
                (0, op(jeqk, 3, 0, 4, 6)),
                (1, op(jeqk, 3, 0, 5, 5)),
                (2, op(mov64k, 0, 0, 0, 77)),
                (3, op(ja, 0, 0, 6, 0)),
            ],
            vec![(0, op(EXIT_IMM, 0, 0, 0, 10))],
            vec![(0, op(EXIT_IMM, 0, 0, 0, 11))],
            vec![(0, op(EXIT_IMM, 0, 0, 0, 12))],
            vec![
                (2, op(exit, 0, 0, 0, 0)),
                (0, op(CLASS_ALU64 | ALU_ADD, 0, 0, 0, 1)),
            ],
            vec![(0, op(EXIT_IMM, 0, 0, 0, 14))],
        ],
        pk.clone(),
    ));
    // Exit in a lower lane beats a taken jump; an exit K beside other work drains.
    cases.push(hand(
        "exit beats jump",
        vec![
            vec![(0, op(mov64k, 0, 0, 0, 3))],
            vec![
                (1, op(ja, 0, 0, 3, 0)),
                (0, op(EXIT_IMM, 0, 0, 0, 4)),
                (2, op(mov64k, 5, 0, 0, 1)),
            ],
            vec![(0, op(EXIT_IMM, 0, 0, 0, 5))],
            vec![(0, op(EXIT_IMM, 0, 0, 0, 6))],
        ],
        pk.clone(),
    ));
    // Three-operand forms (64 and 32 bit, imm and register, sdiv through the narrowed off), lddw of a constant,
    // a map handle and a map value, 6-byte loads and stores, sign-extending loads, write-after-read in a bundle.
    let three = |code: u8, dst: u8, a: u8, src: u8, off: i16, imm: i64| Op {
        code,
        dst,
        src,
        a: Some(a),
        off,
        imm,
    };
    let stx =
        |size: u8, dst: u8, src: u8, off: i16| op(CLASS_STX | MODE_MEM | size, dst, src, off, 0);
    let ldx =
        |size: u8, dst: u8, src: u8, off: i16| op(CLASS_LDX | MODE_MEM | size, dst, src, off, 0);
    cases.push(hand(
        "encodings",
        vec![
            vec![
                (0, op(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0)),
                (1, op(LD_DW_IMM, 3, 0, 0, 0x1122_3344_8899_aabb_u64 as i64)),
                (3, op(mov64k, 4, 0, 0, -100)),
            ],
            vec![
                (0, op(LD_DW_IMM, 5, PSEUDO_MAP_FD, 0, 7)),
                (2, op(LD_DW_IMM, 6, PSEUDO_MAP_VALUE, 0, (12 << 32) | 3)),
                (1, op(mov64k, 0, 0, 0, 0)),
            ],
            vec![
                (0, three(CLASS_ALU64 | ALU_ADD | SRC_X, 7, 3, 4, 0, 0)),
                (1, three(CLASS_ALU | ALU_SUB | SRC_K, 8, 3, 0, 0, 1000)),
                (2, three(CLASS_ALU64 | ALU_DIV | SRC_K, 9, 4, 0, 1, 7)),
                (3, three(CLASS_ALU64 | ALU_MOV | SRC_X, 0, 0, 3, 0, 0)),
            ],
            vec![
                (0, stx(SIZE_DW, 2, 7, 0)),
                (1, stx(SIZE_DW, 2, 8, 8)),
                (2, stx(SIZE_DW, 2, 9, 16)),
                (3, stx(SIZE_DW, 2, 5, 24)),
            ],
            vec![
                (0, stx(SIZE_DW, 2, 6, 32)),
                (1, op(STX6, 2, 3, 40, 0)),
                (2, op(STX6, 10, 4, -6, 0)),
            ],
            vec![
                (0, op(LDX6, 7, 2, 1, 0)),
                (1, op(CLASS_LDX | MODE_MEMSX | SIZE_B, 8, 2, 47, 0)),
                (2, op(CLASS_LDX | MODE_MEMSX | SIZE_W, 9, 10, -8, 0)),
                (3, ldx(SIZE_H, 3, 10, -2)),
            ],
            // Write-after-read: lane 0 reads r7, lane 1 overwrites it in the same bundle.
            vec![
                (0, stx(SIZE_DW, 2, 7, 48)),
                (1, op(mov64k, 7, 0, 0, 1)),
                (2, stx(SIZE_DW, 2, 8, 56)),
                (3, stx(SIZE_DW, 2, 9, 64)),
            ],
            vec![(0, stx(SIZE_H, 2, 3, 72)), (1, stx(SIZE_B, 2, 7, 74))],
            vec![(0, op(exit, 0, 0, 0, 0))],
        ],
        packets(&[80]),
    ));
    // Overlapping stores of one bundle: the later lane wins; on the stack and in the packet.
    cases.push(hand(
        "store order",
        vec![
            vec![
                (0, op(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0)),
                (1, op(mov64k, 3, 0, 0, -1)),
            ],
            vec![
                (0, stx(SIZE_DW, 10, 3, -8)),
                (1, op(CLASS_ST | MODE_MEM | SIZE_H, 10, 0, -6, 0x1234)),
                (2, stx(SIZE_DW, 2, 3, 0)),
                (3, op(CLASS_ST | MODE_MEM | SIZE_B, 2, 0, 2, 0x55)),
            ],
            vec![(0, ldx(SIZE_DW, 0, 10, -8))],
            vec![(0, stx(SIZE_DW, 2, 0, 8)), (1, op(exit, 0, 0, 0, 0))],
        ],
        packets(&[32]),
    ));
    // The stack's words (stack.sv keeps 8-byte words in RAM, a copy per writer, forwarding the last edge's writes):
    // a bundle's loads see the stack before its stores; unaligned and overlapping stores of one bundle merge into a
    // word in lane order; the next bundle reads them (forwarded), later ones through the table; bytes the packet has
    // not written read as zero, also where the packet before wrote them (two packets).
    let stb = CLASS_ST | MODE_MEM | SIZE_B;
    let sth = CLASS_ST | MODE_MEM | SIZE_H;
    cases.push(hand(
        "stack words",
        vec![
            vec![
                (0, op(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0)),
                (1, op(mov64k, 3, 0, 0, -1)),
                (2, op(mov64k, 4, 0, 0, 0x1122_3344)),
            ],
            vec![
                (0, stx(SIZE_B, 10, 3, -13)),
                (1, stx(SIZE_W, 10, 4, -11)),
                (2, op(sth, 10, 0, -12, 0x5566)),
                (3, ldx(SIZE_DW, 5, 10, -16)),
            ],
            vec![
                (0, ldx(SIZE_DW, 6, 10, -16)),
                (1, ldx(SIZE_DW, 7, 10, -12)),
                (2, op(stb, 10, 0, -16, 0x77)),
                (3, ldx(SIZE_DW, 8, 10, -8)),
            ],
            vec![(0, op(stb, 10, 0, -1, 0x88))],
            vec![(0, ldx(SIZE_DW, 9, 10, -16)), (1, ldx(SIZE_W, 3, 10, -4))],
            vec![
                (0, stx(SIZE_DW, 2, 5, 0)),
                (1, stx(SIZE_DW, 2, 6, 8)),
                (2, stx(SIZE_DW, 2, 7, 16)),
            ],
            vec![
                (0, stx(SIZE_DW, 2, 8, 24)),
                (1, stx(SIZE_DW, 2, 9, 32)),
                (2, stx(SIZE_W, 2, 3, 40)),
            ],
            vec![(0, op(EXIT_IMM, 0, 0, 0, 2))],
        ],
        packets(&[48, 48]),
    ));
    // A store fault in lane 2 after a good store in lane 0 (stack above r10): lane 0's store stays.
    cases.push(hand(
        "store fault order",
        vec![
            vec![(0, op(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0))],
            vec![
                (0, op(CLASS_ST | MODE_MEM | SIZE_B, 2, 0, 0, 0x99)),
                (2, op(CLASS_ST | MODE_MEM | SIZE_B, 10, 0, 0, 1)),
            ],
            vec![(0, op(EXIT_IMM, 0, 0, 0, 2))],
        ],
        packets(&[32]),
    ));
    // The same in the packet: lane 1's store lies past the end, lane 0's is made, lane 3's is not.
    cases.push(hand(
        "packet store fault order",
        vec![
            vec![(0, op(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0))],
            vec![
                (0, op(CLASS_ST | MODE_MEM | SIZE_B, 2, 0, 0, 0x99)),
                (1, op(CLASS_ST | MODE_MEM | SIZE_H, 2, 0, 31, 0x77)),
                (3, op(CLASS_ST | MODE_MEM | SIZE_B, 2, 0, 1, 0x66)),
            ],
            vec![(0, op(EXIT_IMM, 0, 0, 0, 2))],
        ],
        packets(&[32, 33]),
    ));
    // A checked packet load running past the end, carrying XDP_DROP (imm = 1 + 1).
    cases.push(hand(
        "checked load",
        vec![
            vec![(0, op(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0))],
            vec![(1, op(CLASS_LDX | MODE_MEM | SIZE_W, 0, 2, 30, 2))],
            vec![(0, op(exit, 0, 0, 0, 0))],
        ],
        packets(&[34, 33, 20]),
    ));
    // Bus hazards: two loads after three packet stores (five bus ports wanted of four), a load of bytes the
    // previous bundle stores, and one that needs no wait (a load and two stores).
    cases.push(hand(
        "bus hazards",
        vec![
            vec![
                (0, op(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0)),
                (1, op(mov64k, 3, 0, 0, -1)),
            ],
            vec![
                (0, stx(SIZE_DW, 2, 3, 0)),
                (1, stx(SIZE_DW, 2, 3, 8)),
                (2, stx(SIZE_DW, 2, 3, 16)),
            ],
            vec![(0, ldx(SIZE_DW, 4, 2, 40)), (1, ldx(SIZE_DW, 5, 2, 48))],
            vec![(0, stx(SIZE_W, 2, 3, 24))],
            vec![(1, ldx(SIZE_H, 6, 2, 26))],
            vec![
                (0, stx(SIZE_DW, 2, 4, 32)),
                (1, stx(SIZE_DW, 2, 6, 40)),
                (2, ldx(SIZE_DW, 7, 2, 56)),
            ],
            vec![(0, stx(SIZE_DW, 2, 7, 0)), (1, op(exit, 0, 0, 0, 0))],
        ],
        packets(&[64]),
    ));
    // Packet arrival in one bundle: a load near the start, one 1000 bytes in (it waits for frame 32), and in the
    // 900-byte packet that one lies past the end (it faults without waiting); an atomic on a late byte waits, a
    // store to a late byte does not, and a load of it waits for its frame and reads the stored value.
    cases.push(hand(
        "arrival",
        vec![
            vec![
                (0, op(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0)),
                (1, op(mov64k, 3, 0, 0, 3)),
            ],
            vec![(0, ldx(SIZE_B, 4, 2, 40)), (1, ldx(SIZE_W, 5, 2, 1000))],
            vec![
                (0, stx(SIZE_B, 2, 3, 1090)),
                (1, op(CLASS_STX | MODE_ATOMIC | SIZE_W, 2, 4, 600, 0)),
            ],
            vec![(0, ldx(SIZE_B, 7, 2, 1090))],
            vec![(0, stx(SIZE_DW, 2, 5, 0)), (1, stx(SIZE_DW, 2, 7, 8))],
            vec![(0, op(exit, 0, 0, 0, 0))],
        ],
        packets(&[1100, 900, 3520]),
    ));
    cases
}

/// A random straight-line ALU program over r0 and r3-r9; every register ends up in the packet.
fn random_alu(seed: u64) -> ObjectSpec {
    let mut rng = Rng(seed);
    let regs = [0u8, 3, 4, 5, 6, 7, 8, 9];
    let mut insns = vec![Insn::new(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0)];
    for &r in &regs {
        insns.push(Insn::new(LD_DW_IMM, r, 0, 0, rng.next() as i64));
        insns.push(Insn::new(0, 0, 0, 0, 0));
    }
    // Drop the placeholder halves: Insn streams carry lddw as one instruction with the 64-bit imm.
    insns.retain(|i| i.code != 0);
    let ops = [
        ALU_ADD, ALU_SUB, ALU_MUL, ALU_DIV, ALU_OR, ALU_AND, ALU_LSH, ALU_RSH, ALU_NEG, ALU_MOD,
        ALU_XOR, ALU_MOV, ALU_ARSH, ALU_END,
    ];
    for _ in 0..40 {
        let operation = ops[rng.below(ops.len() as u64) as usize];
        let class = if rng.below(2) == 0 {
            CLASS_ALU64
        } else {
            CLASS_ALU
        };
        let dst = regs[rng.below(regs.len() as u64) as usize];
        let src = regs[rng.below(regs.len() as u64) as usize];
        let x = rng.below(2) == 0;
        let small = [0i64, 1, 3, 7, 13, 31, 32, 63, -1, -7];
        let mut imm = if rng.below(2) == 0 {
            small[rng.below(small.len() as u64) as usize]
        } else {
            rng.next() as i32 as i64
        };
        let mut off = 0i16;
        let mut code = class | operation | if x { SRC_X } else { SRC_K };
        match operation {
            ALU_END => {
                imm = [16, 32, 64][rng.below(3) as usize];
                if class == CLASS_ALU64 {
                    code = CLASS_ALU64 | ALU_END;
                }
            }
            ALU_NEG => {
                code = class | ALU_NEG;
                imm = 0;
            }
            ALU_DIV | ALU_MOD => off = rng.below(2) as i16,
            ALU_MOV if x && rng.below(3) == 0 => {
                off = [8, 16, 32][rng.below(3) as usize];
                if class == CLASS_ALU && off == 32 {
                    off = 16;
                }
            }
            ALU_LSH | ALU_RSH | ALU_ARSH if !x => imm &= if class == CLASS_ALU64 { 63 } else { 31 },
            _ => {}
        }
        if x && operation != ALU_END {
            imm = 0;
        }
        // Copies ahead of an op let the compiler form three-operand ops.
        if rng.below(3) == 0 && dst != src {
            insns.push(Insn::new(CLASS_ALU64 | ALU_MOV | SRC_X, dst, src, 0, 0));
        }
        let src = if code & SRC_X != 0 && operation != ALU_END {
            src
        } else {
            0
        };
        insns.push(Insn::new(code, dst, src, off, imm));
    }
    for (k, &r) in regs.iter().enumerate() {
        insns.push(Insn::new(
            CLASS_STX | MODE_MEM | SIZE_DW,
            2,
            r,
            8 * k as i16,
            0,
        ));
    }
    insns.push(Insn::new(CLASS_JMP | JMP_EXIT, 0, 0, 0, 0));
    object(insns)
}

fn assembled_cases(lanes: usize) -> Vec<Case> {
    let compiled = |name: &str, spec: ObjectSpec, packets: Vec<(Vec<u8>, XdpMd)>| {
        compiled(lanes, name, spec, packets)
    };
    vec![
        compiled("alu", assemble(ALU_ALL), packets(&[200, 256])),
        compiled("conditions", assemble(&conditions()), packets(&[64])),
        compiled("memory", assemble(MEMORY), packets(&[64, 100, 63])),
        compiled("checked", assemble(CHECKED), packets(&[40, 39, 20, 64])),
        compiled("calls", assemble(CALLS), packets(&[64])),
        compiled("helpers", assemble(HELPERS), packets(&[64, 99])),
        compiled("bad helper", assemble(BAD_HELPER), packets(&[64])),
        compiled("helper args", assemble(HELPER_ARGS), packets(&[64])),
        compiled("stack fault", assemble(STACK_FAULT), packets(&[64])),
        compiled(
            "packet fault",
            assemble(PACKET_FAULT),
            packets(&[64, 81, 250]),
        ),
        compiled("context store", assemble(CONTEXT_STORE), packets(&[64])),
        compiled("loop", assemble(LOOP), packets(&[64])),
        compiled("atomics", assemble(ATOMICS), packets(&[48, 64])),
        compiled("call depth", assemble(CALL_DEPTH), packets(&[64])),
        compiled(
            "arrival",
            assemble(ARRIVAL),
            packets(&[1500, 3000, 64, 250, 33, 3520]),
        ),
        hmem_case(lanes),
        tail_case(lanes, "tail call", TAIL_MAIN),
        tail_case(lanes, "tail call from a function", TAIL_SUB),
    ]
}

fn random_cases(lanes: usize, seeds: std::ops::RangeInclusive<u64>) -> Vec<Case> {
    seeds
        .map(|seed| {
            compiled(
                lanes,
                &format!("random alu {seed}"),
                random_alu(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
                packets(&[64]),
            )
        })
        .collect()
}

#[test]
fn sephirot_matches_the_cycle_model() {
    let mut cases = assembled_cases(LANES);
    cases.extend(hand_cases());
    cases.extend(random_cases(LANES, 1..=24));
    check(LANES, &cases);
}

#[test]
fn helper_stack_port_answers_within_the_reference_bounds() {
    let case = hmem_case(LANES);
    let (_, outcomes) = check(LANES, std::slice::from_ref(&case));
    // Both runs: the packet arriving, then present.
    let n = case.packets.len();
    check_hmem(&case, &outcomes[..n]);
    check_hmem(&case, &outcomes[n..]);
}

#[test]
fn tail_calls_continue_in_the_next_program() {
    for (first, stack_value) in [(TAIL_MAIN, 7), (TAIL_SUB, 5)] {
        let case = tail_case(LANES, "tail call", first);
        let (_, outcomes) = check(LANES, std::slice::from_ref(&case));
        // The reference machine runs the object itself (not the image): verdicts and bytes as the core's.
        let mut machine = hwxdp_xdp::Machine::new(&case.spec, Some("t"), &Config::default())
            .expect("the reference loads the object");
        let (map, key, value) = &case.preload[0];
        machine
            .maps_mut()
            .update(*map, key, value, 0)
            .expect("preload");
        for (o, (frame, md)) in outcomes.iter().zip(case.packets.iter().cycle()) {
            let mut buff = XdpBuff::new(frame).expect("frame");
            let want = machine.run_packet(&mut buff, md);
            assert_eq!(
                (o.verdict, o.fault, o.bytes.as_slice()),
                (want.retval, want.fault.is_some(), buff.output()),
                "{}",
                hwxdp_hxdp::isa::listing(&case.image, &[])
            );
            // Slot 0 (an even first byte) runs program 1, which stores the stack value it finds at r10 - 8.
            if frame.len() >= 16 {
                assert_eq!(o.calls.len(), 1);
                assert_eq!(
                    o.bytes[8] == stack_value,
                    frame[0] & 1 == 0,
                    "{:?}",
                    o.bytes
                );
            }
        }
    }
}

#[test]
fn helper_calls_see_r1_to_r5_as_before_their_bundle() {
    let case = compiled(LANES, "helper args", assemble(HELPER_ARGS), packets(&[64]));
    let got = simulate(LANES, std::slice::from_ref(&case), true);
    assert_eq!(
        got[0].calls,
        [
            "8 3333 5555 33330 5555 ffffffffffffffff",
            "8 7 7 33330 5555 ffffffffffffffff"
        ],
        "{}",
        hwxdp_hxdp::isa::listing(&case.image, &["t".to_string()])
    );
}

#[test]
fn sephirot_with_two_lanes_matches_the_cycle_model() {
    let mut cases = assembled_cases(2);
    cases.extend(random_cases(2, 100..=108));
    check(2, &cases);
}
