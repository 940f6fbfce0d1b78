//! The meaning of an instruction, one variant per instruction form of RFC 9669.
//!
//! [`InsnKind`] is what [`crate::valid::kind`] decodes an [`Insn`] into and what the assembler builds before encoding;
//! [`InsnKind::to_insn`] is the inverse of `kind` for every valid instruction.

use crate::opcode::*;
use crate::Insn;

/// The second operand of an ALU, jump or store instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// A register (r0-r10).
    Reg(u8),
    /// The 32-bit immediate.
    Imm(i32),
}

/// Two-operand arithmetic (negation, sign-extending moves and byte swaps have their own variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    /// `+=`
    Add,
    /// `-=`
    Sub,
    /// `*=`
    Mul,
    /// Unsigned `/=`.
    Div,
    /// Signed `s/=` (v4).
    SDiv,
    /// `|=`
    Or,
    /// `&=`
    And,
    /// `<<=`
    Lsh,
    /// Logical `>>=`.
    Rsh,
    /// Unsigned `%=`.
    Mod,
    /// Signed `s%=` (v4).
    SMod,
    /// `^=`
    Xor,
    /// `=`
    Mov,
    /// Arithmetic `s>>=`.
    Arsh,
}

impl AluOp {
    /// Every operation, for enumeration in tests and tools.
    pub const ALL: [AluOp; 14] = [
        AluOp::Add,
        AluOp::Sub,
        AluOp::Mul,
        AluOp::Div,
        AluOp::SDiv,
        AluOp::Or,
        AluOp::And,
        AluOp::Lsh,
        AluOp::Rsh,
        AluOp::Mod,
        AluOp::SMod,
        AluOp::Xor,
        AluOp::Mov,
        AluOp::Arsh,
    ];

    /// The operation bits of the opcode and the `off` field that selects the signed variants.
    pub const fn encoding(self) -> (u8, i16) {
        match self {
            AluOp::Add => (ALU_ADD, 0),
            AluOp::Sub => (ALU_SUB, 0),
            AluOp::Mul => (ALU_MUL, 0),
            AluOp::Div => (ALU_DIV, 0),
            AluOp::SDiv => (ALU_DIV, 1),
            AluOp::Or => (ALU_OR, 0),
            AluOp::And => (ALU_AND, 0),
            AluOp::Lsh => (ALU_LSH, 0),
            AluOp::Rsh => (ALU_RSH, 0),
            AluOp::Mod => (ALU_MOD, 0),
            AluOp::SMod => (ALU_MOD, 1),
            AluOp::Xor => (ALU_XOR, 0),
            AluOp::Mov => (ALU_MOV, 0),
            AluOp::Arsh => (ALU_ARSH, 0),
        }
    }

    /// The assignment operator llvm-objdump prints (`+=`, `s/=`, `=` ...).
    pub const fn symbol(self) -> &'static str {
        match self {
            AluOp::Add => "+=",
            AluOp::Sub => "-=",
            AluOp::Mul => "*=",
            AluOp::Div => "/=",
            AluOp::SDiv => "s/=",
            AluOp::Or => "|=",
            AluOp::And => "&=",
            AluOp::Lsh => "<<=",
            AluOp::Rsh => ">>=",
            AluOp::Mod => "%=",
            AluOp::SMod => "s%=",
            AluOp::Xor => "^=",
            AluOp::Mov => "=",
            AluOp::Arsh => "s>>=",
        }
    }
}

/// Access size of loads, stores and atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// 1 byte.
    B,
    /// 2 bytes.
    H,
    /// 4 bytes.
    W,
    /// 8 bytes.
    DW,
}

impl Width {
    /// Every width.
    pub const ALL: [Width; 4] = [Width::B, Width::H, Width::W, Width::DW];

    /// The size bits of the opcode.
    pub const fn bits(self) -> u8 {
        match self {
            Width::B => SIZE_B,
            Width::H => SIZE_H,
            Width::W => SIZE_W,
            Width::DW => SIZE_DW,
        }
    }

    /// The width encoded in an opcode's size bits.
    pub const fn from_code(code: u8) -> Width {
        match code & 0x18 {
            SIZE_B => Width::B,
            SIZE_H => Width::H,
            SIZE_W => Width::W,
            _ => Width::DW,
        }
    }

    /// Size in bytes.
    pub const fn bytes(self) -> u32 {
        match self {
            Width::B => 1,
            Width::H => 2,
            Width::W => 4,
            Width::DW => 8,
        }
    }
}

/// Condition of a conditional jump.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JmpCond {
    /// `==`
    Eq,
    /// Unsigned `>`.
    Gt,
    /// Unsigned `>=`.
    Ge,
    /// `&` (any bit set).
    Set,
    /// `!=`
    Ne,
    /// Signed `s>`.
    Sgt,
    /// Signed `s>=`.
    Sge,
    /// Unsigned `<`.
    Lt,
    /// Unsigned `<=`.
    Le,
    /// Signed `s<`.
    Slt,
    /// Signed `s<=`.
    Sle,
}

impl JmpCond {
    /// Every condition.
    pub const ALL: [JmpCond; 11] = [
        JmpCond::Eq,
        JmpCond::Gt,
        JmpCond::Ge,
        JmpCond::Set,
        JmpCond::Ne,
        JmpCond::Sgt,
        JmpCond::Sge,
        JmpCond::Lt,
        JmpCond::Le,
        JmpCond::Slt,
        JmpCond::Sle,
    ];

    /// The operation bits of the opcode.
    pub const fn bits(self) -> u8 {
        match self {
            JmpCond::Eq => JMP_JEQ,
            JmpCond::Gt => JMP_JGT,
            JmpCond::Ge => JMP_JGE,
            JmpCond::Set => JMP_JSET,
            JmpCond::Ne => JMP_JNE,
            JmpCond::Sgt => JMP_JSGT,
            JmpCond::Sge => JMP_JSGE,
            JmpCond::Lt => JMP_JLT,
            JmpCond::Le => JMP_JLE,
            JmpCond::Slt => JMP_JSLT,
            JmpCond::Sle => JMP_JSLE,
        }
    }

    /// The comparison operator llvm-objdump prints.
    pub const fn symbol(self) -> &'static str {
        match self {
            JmpCond::Eq => "==",
            JmpCond::Gt => ">",
            JmpCond::Ge => ">=",
            JmpCond::Set => "&",
            JmpCond::Ne => "!=",
            JmpCond::Sgt => "s>",
            JmpCond::Sge => "s>=",
            JmpCond::Lt => "<",
            JmpCond::Le => "<=",
            JmpCond::Slt => "s<",
            JmpCond::Sle => "s<=",
        }
    }
}

/// Byte-order conversion of the END opcodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// `le16/32/64`: to little-endian (ALU class, source K).
    Le,
    /// `be16/32/64`: to big-endian (ALU class, source X).
    Be,
    /// `bswap16/32/64`: unconditional swap (ALU64 class, v4).
    Swap,
}

impl ByteOrder {
    /// The mnemonic prefix llvm-objdump prints.
    pub const fn name(self) -> &'static str {
        match self {
            ByteOrder::Le => "le",
            ByteOrder::Be => "be",
            ByteOrder::Swap => "bswap",
        }
    }
}

/// Operation of an atomic instruction (its immediate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// `lock ... +=`
    Add,
    /// `lock ... |=`
    Or,
    /// `lock ... &=`
    And,
    /// `lock ... ^=`
    Xor,
    /// `atomic_fetch_add`
    FetchAdd,
    /// `atomic_fetch_or`
    FetchOr,
    /// `atomic_fetch_and`
    FetchAnd,
    /// `atomic_fetch_xor`
    FetchXor,
    /// `xchg`
    Xchg,
    /// `cmpxchg` (compares with r0, old value into r0).
    Cmpxchg,
}

impl AtomicOp {
    /// Every atomic operation.
    pub const ALL: [AtomicOp; 10] = [
        AtomicOp::Add,
        AtomicOp::Or,
        AtomicOp::And,
        AtomicOp::Xor,
        AtomicOp::FetchAdd,
        AtomicOp::FetchOr,
        AtomicOp::FetchAnd,
        AtomicOp::FetchXor,
        AtomicOp::Xchg,
        AtomicOp::Cmpxchg,
    ];

    /// The immediate that encodes this operation.
    pub const fn imm(self) -> i32 {
        match self {
            AtomicOp::Add => ATOMIC_ADD,
            AtomicOp::Or => ATOMIC_OR,
            AtomicOp::And => ATOMIC_AND,
            AtomicOp::Xor => ATOMIC_XOR,
            AtomicOp::FetchAdd => ATOMIC_ADD | ATOMIC_FETCH,
            AtomicOp::FetchOr => ATOMIC_OR | ATOMIC_FETCH,
            AtomicOp::FetchAnd => ATOMIC_AND | ATOMIC_FETCH,
            AtomicOp::FetchXor => ATOMIC_XOR | ATOMIC_FETCH,
            AtomicOp::Xchg => ATOMIC_XCHG,
            AtomicOp::Cmpxchg => ATOMIC_CMPXCHG,
        }
    }

    /// The operation an immediate encodes, if any.
    pub fn from_imm(imm: i64) -> Option<AtomicOp> {
        AtomicOp::ALL.into_iter().find(|op| op.imm() as i64 == imm)
    }
}

/// What a `call` with an immediate calls (its `src` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// Helper function by id (src 0).
    Helper,
    /// bpf-to-bpf call, immediate is the slot offset of the callee relative to the next instruction (src 1).
    Local,
    /// Kernel function by BTF id (src 2).
    Kfunc,
}

impl CallKind {
    /// The `src` field value.
    pub const fn src(self) -> u8 {
        match self {
            CallKind::Helper => 0,
            CallKind::Local => PSEUDO_CALL,
            CallKind::Kfunc => PSEUDO_KFUNC_CALL,
        }
    }
}

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
