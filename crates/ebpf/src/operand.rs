//! Operands and operation selectors of instructions: registers or immediates, ALU and jump operations, widths.

use crate::opcode::*;

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
