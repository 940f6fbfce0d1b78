//! rtl/sephirot/sephirot.sv against the cycle model `hwxdp_hxdp::HxdpCore`, program by program and packet by packet:
//! verdicts, faults and packet bytes must be identical, cycles within 10% (or two cycles on short runs); the cycle
//! table is printed (`cargo test -p hwxdp-rtlsim --test sephirot -- --nocapture`), with each image's listing when
//! `SEPHIROT_LISTINGS` is set.

mod common;

use common::{unhex, Rng};
use hwxdp_ebpf::opcode::*;
use hwxdp_ebpf::Insn;
use hwxdp_hxdp::isa::{Bundle, Image, Op, EXIT_IMM, LDX6, STX6};
use hwxdp_hxdp::{compile_object, HxdpCore, Options};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Backend, Config, XdpBuff, XdpMd};

/// Lanes of the hand-scheduled images and of the main build.
const LANES: usize = 4;

/// Cycles the core may differ from the model by on runs too short for 10% to be a cycle: the model ends a faulting
/// packet in the cycle of its bundle, while the core learns of a fault in its execute stage, two cycles after fetch
/// (and an `exit K` reached by a branch ends one cycle after its fetch, in decode).
const SHORT_RUN_SLACK: u64 = 2;

/// Helpers the testbench answers, as (id, latency, r0, fault): latencies as `hwxdp_hxdp::timing` charges them,
/// values as the reference machine computes them for the programs below (cpu 0; the packet length for
/// `bpf_xdp_get_buff_len`; `bpf_map_lookup_elem` is only called with a NULL map, which faults).
fn helper_lines(packet_len: usize) -> String {
    format!("helper 8 1 0 0\nhelper bc 1 {packet_len:x} 0\nhelper 1 2 0 1\n")
}

/// One program with the packets it runs on.
struct Case {
    name: String,
    spec: ObjectSpec,
    image: Image,
    packets: Vec<(Vec<u8>, XdpMd)>,
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
}

fn object(insns: Vec<Insn>) -> ObjectSpec {
    ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns))
}

fn assemble(text: &str) -> ObjectSpec {
    object(hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}")))
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

/// The reference: the cycle model with the reference machine's memory and helpers.
fn reference(case: &Case) -> Vec<Outcome> {
    let mut core = HxdpCore::new(case.image.clone(), &case.spec, None, &Config::default())
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    case.packets
        .iter()
        .map(|(frame, md)| {
            let mut buff = XdpBuff::new(frame).expect("frame");
            let verdict = core.run_packet(&mut buff, md).retval();
            Outcome {
                verdict,
                fault: core.last_fault().is_some(),
                bytes: buff.output().to_vec(),
                cycles: core.cycles().expect("the model counts cycles"),
                calls: Vec::new(),
            }
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn script(cases: &[Case]) -> String {
    let mut s = String::new();
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
        for (frame, md) in &case.packets {
            s.push_str(&helper_lines(frame.len()));
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
fn simulate(lanes: usize, cases: &[Case]) -> Vec<Outcome> {
    let mut spec = common::unit_spec("sephirot");
    for file in [
        "sephirot/sephirot.sv",
        "sephirot/alu.sv",
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
    let mut outcomes = Vec::new();
    for line in common::run_testbench(&spec, script(cases)) {
        if let Some(call) = line.strip_prefix("hcall ") {
            calls.push(call.to_string());
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
        });
    }
    outcomes
}

/// Runs every case on both sides; results must match exactly, cycles within 10%. Returns the cycle table.
fn check(lanes: usize, cases: &[Case]) -> String {
    assert!(cases.iter().all(|c| c.image.lanes == lanes));
    let got = simulate(lanes, cases);
    let mut want = Vec::new();
    let mut names = Vec::new();
    let mut listings = Vec::new();
    for case in cases {
        let listing = hwxdp_hxdp::isa::listing(&case.image, &["t".to_string()]);
        for (i, w) in reference(case).into_iter().enumerate() {
            want.push(w);
            names.push(format!("{} #{i}", case.name));
            listings.push(listing.clone());
        }
    }
    assert_eq!(got.len(), want.len(), "one result per packet");
    let mut failures = Vec::new();
    let mut table = String::new();
    for (((name, g), w), listing) in names.iter().zip(&got).zip(&want).zip(&listings) {
        table.push_str(&format!(
            "{name:<40} model {:>5} rtl {:>5} {:+}\n",
            w.cycles,
            g.cycles,
            g.cycles as i64 - w.cycles as i64
        ));
        if std::env::var_os("SEPHIROT_LISTINGS").is_some() {
            table.push_str(listing);
        }
        if (g.verdict, g.fault, &g.bytes) != (w.verdict, w.fault, &w.bytes) {
            failures.push(format!(
                "{name}: rtl verdict {} fault {} bytes {}\n    model verdict {} fault {} bytes {}\n{listing}",
                g.verdict,
                g.fault,
                hex(&g.bytes),
                w.verdict,
                w.fault,
                hex(&w.bytes)
            ));
        }
        let diff = g.cycles.abs_diff(w.cycles);
        if diff as f64 > (0.1 * w.cycles as f64).max(SHORT_RUN_SLACK as f64) {
            failures.push(format!(
                "{name}: {} cycles, the model {} (more than 10% or {SHORT_RUN_SLACK} cycles apart)",
                g.cycles, w.cycles
            ));
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "{}\n{table}", failures.join("\n"));
    table
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
fn helper_calls_see_r1_to_r5_as_before_their_bundle() {
    let case = compiled(LANES, "helper args", assemble(HELPER_ARGS), packets(&[64]));
    let got = simulate(LANES, std::slice::from_ref(&case));
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
