//! The meaning of an instruction, one variant per instruction form of RFC 9669.
//!
//! [`InsnKind`] is what [`crate::valid::kind`] decodes an [`Insn`] into and what the assembler builds before encoding;
//! [`InsnKind::to_insn`] is the inverse of `kind` for every valid instruction.

use crate::opcode::*;
pub use crate::operand::{AluOp, AtomicOp, ByteOrder, CallKind, JmpCond, Source, Width};
use crate::Insn;

/// One valid instruction, by meaning. Register fields are 0-10.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InsnKind {
    /// Two-operand arithmetic; `wide` selects ALU64 over 32-bit ALU.
    Alu {
        wide: bool,
        op: AluOp,
        dst: u8,
        src: Source,
    },
    /// `dst = -dst`.
    Neg { wide: bool, dst: u8 },
    /// Sign-extending move `dst = (s8/s16/s32)src` (v4); `from` is B, H or (wide only) W.
    MovSx {
        wide: bool,
        from: Width,
        dst: u8,
        src: u8,
    },
    /// Byte-order conversion of the low `bits` (16, 32 or 64) of `dst`.
    Endian { order: ByteOrder, bits: u8, dst: u8 },
    /// `lddw`: 64-bit immediate, with pseudo-source `pseudo` (0-6).
    LoadImm64 { dst: u8, pseudo: u8, imm: i64 },
    /// Legacy packet load into r0: `skb[imm]` or `skb[index + imm]`; B, H or W.
    LoadPacket {
        size: Width,
        index: Option<u8>,
        imm: i32,
    },
    /// `dst = *(size *)(base + off)`, sign-extending (v4 MEMSX; B, H or W) when `signed`.
    Load {
        size: Width,
        signed: bool,
        dst: u8,
        base: u8,
        off: i16,
    },
    /// `*(size *)(base + off) = src`.
    Store {
        size: Width,
        base: u8,
        off: i16,
        src: Source,
    },
    /// Atomic read-modify-write on `*(size *)(base + off)` (W or DW) with register `src`.
    Atomic {
        size: Width,
        op: AtomicOp,
        base: u8,
        off: i16,
        src: u8,
    },
    /// `goto off` (JMP class, 16-bit slot offset).
    Ja { off: i16 },
    /// `gotol imm` (JMP32 class, 32-bit slot offset, v4).
    JaLong { imm: i32 },
    /// Conditional jump; `wide` selects JMP (64-bit compare) over JMP32.
    Branch {
        wide: bool,
        cond: JmpCond,
        dst: u8,
        src: Source,
        off: i16,
    },
    /// `call imm`.
    Call { kind: CallKind, imm: i32 },
    /// `callx reg`: call through a register held in `dst`.
    CallReg { reg: u8 },
    /// `exit`.
    Exit,
}

impl InsnKind {
    /// Encodes this instruction. For every valid instruction `kind(&k.to_insn()) == Ok(k)`.
    pub fn to_insn(&self) -> Insn {
        let alu_class = |wide: bool| if wide { CLASS_ALU64 } else { CLASS_ALU };
        let jmp_class = |wide: bool| if wide { CLASS_JMP } else { CLASS_JMP32 };
        match *self {
            InsnKind::Alu { wide, op, dst, src } => {
                let (bits, off) = op.encoding();
                let code = alu_class(wide) | bits;
                match src {
                    Source::Reg(r) => Insn::new(code | SRC_X, dst, r, off, 0),
                    Source::Imm(imm) => Insn::new(code | SRC_K, dst, 0, off, imm as i64),
                }
            }
            InsnKind::Neg { wide, dst } => Insn::new(alu_class(wide) | ALU_NEG, dst, 0, 0, 0),
            InsnKind::MovSx {
                wide,
                from,
                dst,
                src,
            } => {
                let off = (from.bytes() * 8) as i16;
                Insn::new(alu_class(wide) | ALU_MOV | SRC_X, dst, src, off, 0)
            }
            InsnKind::Endian { order, bits, dst } => {
                let code = match order {
                    ByteOrder::Le => CLASS_ALU | ALU_END | SRC_K,
                    ByteOrder::Be => CLASS_ALU | ALU_END | SRC_X,
                    ByteOrder::Swap => CLASS_ALU64 | ALU_END | SRC_K,
                };
                Insn::new(code, dst, 0, 0, bits as i64)
            }
            InsnKind::LoadImm64 { dst, pseudo, imm } => Insn::new(LD_DW_IMM, dst, pseudo, 0, imm),
            InsnKind::LoadPacket { size, index, imm } => match index {
                None => Insn::new(CLASS_LD | MODE_ABS | size.bits(), 0, 0, 0, imm as i64),
                Some(r) => Insn::new(CLASS_LD | MODE_IND | size.bits(), 0, r, 0, imm as i64),
            },
            InsnKind::Load {
                size,
                signed,
                dst,
                base,
                off,
            } => {
                let mode = if signed { MODE_MEMSX } else { MODE_MEM };
                Insn::new(CLASS_LDX | mode | size.bits(), dst, base, off, 0)
            }
            InsnKind::Store {
                size,
                base,
                off,
                src,
            } => match src {
                Source::Reg(r) => Insn::new(CLASS_STX | MODE_MEM | size.bits(), base, r, off, 0),
                Source::Imm(imm) => {
                    Insn::new(CLASS_ST | MODE_MEM | size.bits(), base, 0, off, imm as i64)
                }
            },
            InsnKind::Atomic {
                size,
                op,
                base,
                off,
                src,
            } => Insn::new(
                CLASS_STX | MODE_ATOMIC | size.bits(),
                base,
                src,
                off,
                op.imm() as i64,
            ),
            InsnKind::Ja { off } => Insn::new(CLASS_JMP | JMP_JA, 0, 0, off, 0),
            InsnKind::JaLong { imm } => Insn::new(CLASS_JMP32 | JMP_JA, 0, 0, 0, imm as i64),
            InsnKind::Branch {
                wide,
                cond,
                dst,
                src,
                off,
            } => {
                let code = jmp_class(wide) | cond.bits();
                match src {
                    Source::Reg(r) => Insn::new(code | SRC_X, dst, r, off, 0),
                    Source::Imm(imm) => Insn::new(code | SRC_K, dst, 0, off, imm as i64),
                }
            }
            InsnKind::Call { kind, imm } => {
                Insn::new(CLASS_JMP | JMP_CALL, 0, kind.src(), 0, imm as i64)
            }
            InsnKind::CallReg { reg } => Insn::new(CLASS_JMP | JMP_CALL | SRC_X, reg, 0, 0, 0),
            InsnKind::Exit => Insn::new(CLASS_JMP | JMP_EXIT, 0, 0, 0, 0),
        }
    }

    /// The jump offset in slots, relative to the next instruction, for `goto`, `gotol` and conditional jumps.
    /// Calls are not jumps: llvm-objdump labels neither helper nor bpf-to-bpf call targets.
    pub fn jump_offset(&self) -> Option<i64> {
        match *self {
            InsnKind::Ja { off } | InsnKind::Branch { off, .. } => Some(off as i64),
            InsnKind::JaLong { imm } => Some(imm as i64),
            _ => None,
        }
    }
}
