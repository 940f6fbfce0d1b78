//! The eBPF instruction set of RFC 9669 (including the v4 additions) as one decoded type.
//!
//! An [`Insn`] is one instruction as the kernel sees it: a 16-byte `lddw` is a single `Insn` with a 64-bit immediate.
//! Jump and call offsets stay in 8-byte *slots*, as in the encoding, so that indices printed by `llvm-objdump` and by the
//! kernel's verifier are the indices used everywhere in hwxdp.

pub mod abi;
pub mod asm;
pub mod disasm;
pub mod kind;
pub mod opcode;
pub mod operand;
pub mod valid;

pub use abi::{helper_id, helper_label, helper_name, map_type_label, map_type_name};
pub use asm::{assemble, AsmError};
pub use disasm::{format_insn, listing};
pub use kind::{AluOp, AtomicOp, ByteOrder, CallKind, InsnKind, JmpCond, Source, Width};
pub use opcode::*;
pub use valid::{kind, validate, InvalidInsn};

use thiserror::Error;

/// One decoded eBPF instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Insn {
    /// The opcode byte.
    pub code: u8,
    /// Destination register (0-10).
    pub dst: u8,
    /// Source register (0-10), or the pseudo-source of `lddw` and `call`.
    pub src: u8,
    /// Signed 16-bit offset.
    pub off: i16,
    /// The immediate: the sign-extended 32-bit field, or for `lddw` the full 64-bit value
    /// (`low as u32 | high << 32`).
    pub imm: i64,
}

/// Why a byte string is not a valid instruction stream.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum DecodeError {
    /// The byte count is not a multiple of 8.
    #[error("instruction stream of {len} bytes is not a multiple of 8")]
    Length {
        /// Length of the stream in bytes.
        len: usize,
    },
    /// `lddw` in the last slot, with no second half.
    #[error("instruction {slot}: lddw is missing its second half")]
    TruncatedLddw {
        /// Slot of the lddw.
        slot: usize,
    },
    /// The second half of `lddw` has non-zero fields other than the immediate.
    #[error("instruction {slot}: malformed second half of lddw")]
    BadLddwTail {
        /// Slot of the lddw.
        slot: usize,
    },
}

impl Insn {
    /// Builds an instruction from its fields.
    pub const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i64) -> Self {
        Insn {
            code,
            dst,
            src,
            off,
            imm,
        }
    }

    /// The instruction class (low three bits of the opcode).
    pub const fn class(&self) -> u8 {
        self.code & 0x07
    }

    /// True for the 16-byte load of a 64-bit immediate.
    pub const fn is_lddw(&self) -> bool {
        self.code == LD_DW_IMM
    }

    /// Number of 8-byte slots this instruction occupies (2 for `lddw`, 1 otherwise).
    pub const fn slots(&self) -> usize {
        if self.is_lddw() {
            2
        } else {
            1
        }
    }

    /// The immediate as the 32-bit field of the encoding.
    pub const fn imm32(&self) -> i32 {
        self.imm as i32
    }

    /// Appends the encoding of this instruction (8 or 16 bytes, little-endian) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.push(self.code);
        out.push((self.src << 4) | (self.dst & 0x0f));
        out.extend_from_slice(&self.off.to_le_bytes());
        out.extend_from_slice(&(self.imm as i32).to_le_bytes());
        if self.is_lddw() {
            out.extend_from_slice(&[0, 0, 0, 0]);
            out.extend_from_slice(&((self.imm >> 32) as i32).to_le_bytes());
        }
    }

    /// Decodes one instruction from the start of `bytes`, which must hold at least 8 bytes (16 for `lddw`).
    /// `slot` is only used in errors.
    pub fn decode_at(bytes: &[u8], slot: usize) -> Result<Insn, DecodeError> {
        if bytes.len() < 8 {
            return Err(DecodeError::Length { len: bytes.len() });
        }
        let code = bytes[0];
        let dst = bytes[1] & 0x0f;
        let src = bytes[1] >> 4;
        let off = i16::from_le_bytes([bytes[2], bytes[3]]);
        let lo = i32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        if code != LD_DW_IMM {
            return Ok(Insn::new(code, dst, src, off, lo as i64));
        }
        let tail = bytes
            .get(8..16)
            .ok_or(DecodeError::TruncatedLddw { slot })?;
        if tail[..4] != [0, 0, 0, 0] {
            return Err(DecodeError::BadLddwTail { slot });
        }
        let hi = i32::from_le_bytes([tail[4], tail[5], tail[6], tail[7]]);
        let imm = ((hi as i64) << 32) | (lo as u32 as i64);
        Ok(Insn::new(code, dst, src, off, imm))
    }
}

/// Decodes a whole instruction stream.
pub fn decode(bytes: &[u8]) -> Result<Vec<Insn>, DecodeError> {
    if !bytes.len().is_multiple_of(8) {
        return Err(DecodeError::Length { len: bytes.len() });
    }
    let mut insns = Vec::with_capacity(bytes.len() / 8);
    let mut slot = 0;
    while slot * 8 < bytes.len() {
        let insn = Insn::decode_at(&bytes[slot * 8..], slot)?;
        slot += insn.slots();
        insns.push(insn);
    }
    Ok(insns)
}

/// Encodes an instruction stream.
pub fn encode(insns: &[Insn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(insns.len() * 8);
    for insn in insns {
        insn.encode_into(&mut out);
    }
    out
}

/// The slot index at which each instruction starts, plus one final entry for the end of the program.
pub fn slot_offsets(insns: &[Insn]) -> Vec<usize> {
    let mut offsets = Vec::with_capacity(insns.len() + 1);
    let mut slot = 0;
    for insn in insns {
        offsets.push(slot);
        slot += insn.slots();
    }
    offsets.push(slot);
    offsets
}
