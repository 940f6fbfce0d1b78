//! Generators shared by the integration tests: every instruction form, and a raw field sweep.

#![allow(dead_code)]

pub mod llvm;

use hwxdp_ebpf::{AluOp, AtomicOp, ByteOrder, CallKind, Insn, InsnKind, JmpCond, Source, Width};

/// Register pairs used for (dst, src): extremes and distinct values.
const REGS: [(u8, u8); 3] = [(0, 10), (1, 2), (10, 0)];
/// 32-bit immediates: zero, small, negative, extremes.
const IMMS: [i32; 5] = [0, 7, -4, i32::MIN, i32::MAX];
/// 16-bit offsets: zero, positive, negative, extremes.
const OFFS: [i16; 5] = [0, 16, -8, i16::MIN, i16::MAX];

/// Every instruction form of RFC 9669, each with a few register, offset and immediate choices.
pub fn all_forms() -> Vec<InsnKind> {
    let mut out = Vec::new();
    for wide in [true, false] {
        for (dst, src) in REGS {
            for op in AluOp::ALL {
                out.push(InsnKind::Alu {
                    wide,
                    op,
                    dst,
                    src: Source::Reg(src),
                });
                for imm in IMMS {
                    out.push(InsnKind::Alu {
                        wide,
                        op,
                        dst,
                        src: Source::Imm(imm),
                    });
                }
            }
            out.push(InsnKind::Neg { wide, dst });
            let froms: &[Width] = if wide {
                &[Width::B, Width::H, Width::W]
            } else {
                &[Width::B, Width::H]
            };
            for &from in froms {
                out.push(InsnKind::MovSx {
                    wide,
                    from,
                    dst,
                    src,
                });
            }
            for cond in JmpCond::ALL {
                for off in OFFS {
                    out.push(InsnKind::Branch {
                        wide,
                        cond,
                        dst,
                        src: Source::Reg(src),
                        off,
                    });
                }
                for imm in IMMS {
                    out.push(InsnKind::Branch {
                        wide,
                        cond,
                        dst,
                        src: Source::Imm(imm),
                        off: -1,
                    });
                }
            }
        }
    }
    for (dst, _) in REGS {
        for order in [ByteOrder::Le, ByteOrder::Be, ByteOrder::Swap] {
            for bits in [16, 32, 64] {
                out.push(InsnKind::Endian { order, bits, dst });
            }
        }
        for pseudo in 0..=6 {
            for imm in [
                0,
                1,
                -1,
                5 | (7 << 32),
                0xffff_ffff,
                i64::MIN,
                i64::MAX,
                0x8000_0000,
            ] {
                out.push(InsnKind::LoadImm64 { dst, pseudo, imm });
            }
        }
    }
    for size in [Width::B, Width::H, Width::W] {
        for imm in IMMS {
            out.push(InsnKind::LoadPacket {
                size,
                index: None,
                imm,
            });
            for index in [0, 3, 10] {
                out.push(InsnKind::LoadPacket {
                    size,
                    index: Some(index),
                    imm,
                });
            }
        }
    }
    for size in Width::ALL {
        for (dst, src) in REGS {
            for off in OFFS {
                out.push(InsnKind::Load {
                    size,
                    signed: false,
                    dst,
                    base: src,
                    off,
                });
                if size != Width::DW {
                    out.push(InsnKind::Load {
                        size,
                        signed: true,
                        dst,
                        base: src,
                        off,
                    });
                }
                out.push(InsnKind::Store {
                    size,
                    base: dst,
                    off,
                    src: Source::Reg(src),
                });
                out.push(InsnKind::Store {
                    size,
                    base: dst,
                    off,
                    src: Source::Imm(IMMS[(off as usize) % 5]),
                });
                if matches!(size, Width::W | Width::DW) {
                    for op in AtomicOp::ALL {
                        out.push(InsnKind::Atomic {
                            size,
                            op,
                            base: dst,
                            off,
                            src,
                        });
                    }
                }
            }
        }
    }
    for off in OFFS {
        out.push(InsnKind::Ja { off });
    }
    for imm in IMMS {
        out.push(InsnKind::JaLong { imm });
        for kind in [CallKind::Helper, CallKind::Local, CallKind::Kfunc] {
            out.push(InsnKind::Call { kind, imm });
        }
    }
    for reg in [0, 3, 10] {
        out.push(InsnKind::CallReg { reg });
    }
    out.push(InsnKind::Exit);
    out
}

/// Field values for the raw sweep: chosen so that every selector (off of div/mod/movsx, imm of end and atomics,
/// src of lddw and call) meets its valid values and some invalid ones.
pub const SWEEP_OFFS: [i16; 9] = [0, 1, 2, 8, 16, 32, -8, i16::MIN, i16::MAX];
/// Immediates of the raw sweep.
pub const SWEEP_IMMS: [i64; 18] = [
    0,
    1,
    2,
    16,
    32,
    64,
    -1,
    0x40,
    0x41,
    0x50,
    0x51,
    0xa0,
    0xa1,
    0xe0,
    0xe1,
    0xf0,
    0xf1,
    i32::MIN as i64,
];

/// Calls `f` with every combination of opcode byte, register fields 0-15 and the sweep's offsets and immediates.
pub fn sweep(mut f: impl FnMut(Insn)) {
    for code in 0..=255u8 {
        for dst in 0..16u8 {
            for src in 0..16u8 {
                for off in SWEEP_OFFS {
                    for imm in SWEEP_IMMS {
                        f(Insn::new(code, dst, src, off, imm));
                    }
                }
            }
        }
    }
}
