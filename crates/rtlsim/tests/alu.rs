//! rtl/sephirot/alu.sv against the reference machine's ALU (`hwxdp_xdp::alu`), vector by vector.

mod common;

use common::Rng;
use hwxdp_xdp::alu;

/// One stimulus of the ALU, field for field its input ports.
#[derive(Debug, Clone, Copy)]
struct Vector {
    op: u8,
    wide: bool,
    off: i16,
    a: u64,
    b: u64,
    end_imm: i32,
    end_swap: bool,
}

impl Vector {
    fn line(&self) -> String {
        format!(
            "{:x} {:x} {:x} {:x} {:x} {:x} {:x}\n",
            self.op,
            u8::from(self.wide),
            self.off as u16,
            self.a,
            self.b,
            self.end_imm as u32,
            u8::from(self.end_swap)
        )
    }

    /// What the reference machine computes, `None` where it rejects the encoding.
    fn expected(&self) -> Option<u64> {
        let op = self.op << 4;
        if op == hwxdp_ebpf::ALU_END {
            alu::endian(self.a, i64::from(self.end_imm), self.end_swap)
        } else if self.wide {
            alu::alu64(op, self.off, self.a, self.b)
        } else {
            alu::alu32(op, self.off, self.a, self.b)
        }
    }
}

const EDGES: &[u64] = &[
    0,
    1,
    2,
    u64::MAX,
    i64::MIN as u64,
    i64::MAX as u64,
    i32::MIN as i64 as u64,
    i32::MIN as u32 as u64,
    i32::MAX as u64,
    u32::MAX as u64,
    1 << 32,
    (1 << 32) | 7,
    31,
    32,
    63,
    64,
    0x7f,
    0x80,
    0x8000,
    0xffff,
    0x1122_3344_5566_7788,
    0x8877_6655_4433_2211,
    (-7i64) as u64,
];

/// The `off` values worth trying for an operation: the ones it gives meaning to, plus ones it must ignore or reject.
fn offsets(op: u8, rng: &mut Rng) -> Vec<i16> {
    let random = rng.next() as i16;
    match op << 4 {
        hwxdp_ebpf::ALU_DIV | hwxdp_ebpf::ALU_MOD => vec![0, 1, 2, -1, random],
        hwxdp_ebpf::ALU_MOV => vec![0, 8, 16, 32, 1, 7, 64, -8, random],
        _ => vec![0, 1, random],
    }
}

/// A second operand as an immediate would reach the ALU: a sign-extended 32-bit value.
fn imm_like(value: u64) -> u64 {
    value as i32 as i64 as u64
}

fn vectors() -> Vec<Vector> {
    let mut rng = Rng(0x6878_6470_616c_7531);
    let mut out = Vec::new();
    let plain = Vector {
        op: 0,
        wide: true,
        off: 0,
        a: 0,
        b: 0,
        end_imm: 0,
        end_swap: false,
    };
    for op in 0..16u8 {
        for wide in [false, true] {
            if op << 4 == hwxdp_ebpf::ALU_END {
                for end_imm in [
                    16,
                    32,
                    64,
                    0,
                    8,
                    24,
                    48,
                    128,
                    -16,
                    16 + (1 << 16),
                    rng.next() as i32,
                ] {
                    for end_swap in [false, true] {
                        for &a in EDGES {
                            out.push(Vector {
                                op,
                                wide,
                                a,
                                b: rng.next(),
                                end_imm,
                                end_swap,
                                ..plain
                            });
                        }
                        for _ in 0..60 {
                            let a = rng.next();
                            out.push(Vector {
                                op,
                                wide,
                                a,
                                b: rng.next(),
                                end_imm,
                                end_swap,
                                ..plain
                            });
                        }
                    }
                }
                continue;
            }
            for off in offsets(op, &mut rng) {
                for register in [false, true] {
                    let second = |v: u64| if register { v } else { imm_like(v) };
                    for &a in EDGES {
                        for &b in EDGES {
                            out.push(Vector {
                                op,
                                wide,
                                off,
                                a,
                                b: second(b),
                                ..plain
                            });
                        }
                    }
                    for _ in 0..150 {
                        let (a, b) = (rng.operand(), rng.operand());
                        out.push(Vector {
                            op,
                            wide,
                            off,
                            a,
                            b: second(b),
                            ..plain
                        });
                    }
                }
            }
        }
    }
    out
}

/// Runs the vectors through the Verilated ALU and returns its `(valid, result)` lines.
fn simulate(vectors: &[Vector]) -> Vec<(bool, u64)> {
    let spec = common::unit_spec("alu").source("sephirot/alu.sv");
    let input: String = vectors.iter().map(Vector::line).collect();
    common::run_testbench(&spec, input)
        .iter()
        .map(|line| {
            let (valid, result) = line.split_once(' ').expect("\"valid result\" line");
            (
                valid == "1",
                u64::from_str_radix(result, 16).expect("hex result"),
            )
        })
        .collect()
}

#[test]
fn alu_matches_the_reference_on_every_operation() {
    let vectors = vectors();
    assert!(vectors.len() >= 20_000, "only {} vectors", vectors.len());
    let results = simulate(&vectors);
    assert_eq!(results.len(), vectors.len(), "one output line per vector");

    let mut mismatches = Vec::new();
    for (vector, &(valid, result)) in vectors.iter().zip(&results) {
        let expected = vector.expected();
        let got = valid.then_some(result);
        // An invalid encoding must also drive result_o to zero, so that nothing downstream sees stale data.
        if got != expected || (!valid && result != 0) {
            mismatches.push(format!(
                "{vector:x?}: rtl {valid} {result:#x}, reference {expected:x?}"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} vectors differ, first ones:\n{}",
        mismatches.len(),
        vectors.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );

    // Every operation was exercised both valid and (for mov, end and the unused nibbles) invalid.
    for op in 0..16u8 {
        let of_op = || {
            vectors
                .iter()
                .zip(&results)
                .filter(move |(v, _)| v.op == op)
        };
        assert!(of_op().count() > 500, "op {op:#x} has too few vectors");
        let any_valid = of_op().any(|(_, r)| r.0);
        assert_eq!(any_valid, op <= 0xd, "op {op:#x} validity");
    }
}

/// Runs div and mod vectors through the Verilated shared divider (rtl/sephirot/divider.sv) and returns its
/// `(valid, result, edges)` lines: edges are the clock edges after the start edge until `done_o`.
fn simulate_divider(vectors: &[Vector]) -> Vec<(bool, u64, u64)> {
    let spec = common::unit_spec("divider").source("sephirot/divider.sv");
    let input: String = vectors
        .iter()
        .map(|v| {
            format!(
                "{:x} {:x} {:x} {:x} {:x}\n",
                v.op,
                u8::from(v.wide),
                v.off as u16,
                v.a,
                v.b
            )
        })
        .collect();
    common::run_testbench(&spec, input)
        .iter()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 3, "\"valid result edges\" line: {line}");
            (
                f[0] == "1",
                u64::from_str_radix(f[1], 16).expect("hex result"),
                u64::from_str_radix(f[2], 16).expect("hex edges"),
            )
        })
        .collect()
}

#[test]
fn the_shared_divider_matches_the_reference_in_the_model_s_cycles() {
    let vectors: Vec<Vector> = vectors()
        .into_iter()
        .filter(|v| matches!(v.op << 4, hwxdp_ebpf::ALU_DIV | hwxdp_ebpf::ALU_MOD))
        .collect();
    assert!(vectors.len() >= 2_000, "only {} vectors", vectors.len());
    let results = simulate_divider(&vectors);
    assert_eq!(results.len(), vectors.len(), "one output line per vector");
    let mut mismatches = Vec::new();
    for (vector, &(valid, result, edges)) in vectors.iter().zip(&results) {
        let expected = vector.expected();
        // The core waits in execute from the start cycle through the edges of division.
        if valid.then_some(result) != expected || 1 + edges != hwxdp_hxdp::timing::DIV_CYCLES {
            mismatches.push(format!(
                "{vector:x?}: rtl {valid} {result:#x} after {edges} edges, reference {expected:x?} after {}",
                hwxdp_hxdp::timing::DIV_CYCLES - 1
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} vectors differ, first ones:\n{}",
        mismatches.len(),
        vectors.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );
    // Any other operation is invalid and gives 0.
    let others = [Vector {
        op: 0,
        wide: true,
        off: 0,
        a: 5,
        b: 3,
        end_imm: 0,
        end_swap: false,
    }];
    assert_eq!(
        simulate_divider(&others),
        vec![(false, 0, hwxdp_hxdp::timing::DIV_CYCLES - 1)]
    );
}
