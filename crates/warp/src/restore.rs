//! Context restores: the registers and stack bytes the processor needs to go on at one instruction, each a
//! constant, an extraction from the chunk, or a pointer the processor knows.

use crate::params::Params;
use crate::state::{PathState, StackByte};
use crate::sym::{Bit, Bits, KeyBit, Sym, LEN_BITS};
use hwxdp_analysis::{RegSet, StackBytes};
use serde::Serialize;
use std::fmt;

/// `shift(read(offset, length), shift) & mask`: bytes of the chunk as one number (little- or big-endian), moved
/// left (positive `shift`) or right, masked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Extraction {
    /// First chunk byte read.
    pub offset: u16,
    /// Bytes read (1 to 8).
    pub length: u8,
    /// Whether the first byte is the most significant.
    pub big_endian: bool,
    /// Left shift (negative: right) after the read.
    pub shift: i8,
    /// Mask after the shift.
    pub mask: u64,
}

impl Extraction {
    /// The value for a packet whose first bytes are `chunk` (zero past its end).
    pub fn eval(&self, chunk: &[u8]) -> u64 {
        let byte = |i: usize| chunk.get(i).copied().unwrap_or(0) as u64;
        let mut v = 0u64;
        for i in 0..self.length as usize {
            let b = byte(self.offset as usize + i);
            if self.big_endian {
                v = v << 8 | b;
            } else {
                v |= b << (8 * i);
            }
        }
        let moved = match self.shift {
            s if s >= 0 => v << s,
            s => v >> (-s),
        };
        moved & self.mask
    }

    /// The extraction computing `bits` from at most `max_read` chunk bytes, when there is one.
    pub fn of(bits: &Bits, max_read: u16) -> Option<Extraction> {
        let keys: Vec<(usize, u16)> = bits
            .0
            .iter()
            .enumerate()
            .filter_map(|(i, b)| match b {
                Bit::Key(KeyBit::Chunk(c)) => Some((i, *c)),
                _ => None,
            })
            .collect();
        let only_chunk_and_zero = bits
            .0
            .iter()
            .all(|b| matches!(b, Bit::Zero | Bit::Key(KeyBit::Chunk(_))));
        if keys.is_empty() || !only_chunk_and_zero {
            return None;
        }
        let first = keys.iter().map(|k| k.1 / 8).min()?;
        let last = keys.iter().map(|k| k.1 / 8).max()?;
        let length = last - first + 1;
        if length > max_read.min(8) {
            return None;
        }
        let mask = keys.iter().fold(0u64, |m, (i, _)| m | 1 << i);
        [false, true].into_iter().find_map(|big_endian| {
            // Bit j of the read number for chunk bit c.
            let j = |c: u16| -> i64 {
                let byte = (c / 8 - first) as i64;
                let byte = if big_endian {
                    length as i64 - 1 - byte
                } else {
                    byte
                };
                byte * 8 + (c % 8) as i64
            };
            let shift = keys[0].0 as i64 - j(keys[0].1);
            let same = keys.iter().all(|&(i, c)| i as i64 - j(c) == shift);
            same.then_some(Extraction {
                offset: first,
                length: length as u8,
                big_endian,
                shift: shift as i8,
                mask,
            })
        })
    }
}

/// A restored value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Value {
    /// A constant.
    Const {
        /// The value.
        value: u64,
    },
    /// Bytes of the chunk.
    Extract(Extraction),
    /// The packet length plus `offset` (`data_end - data + offset`).
    Length {
        /// What is added.
        offset: i64,
    },
    /// The context pointer.
    Context,
    /// `data + offset`.
    Packet {
        /// Offset from `data`.
        offset: i64,
    },
    /// `data_end + offset`.
    PacketEnd {
        /// Offset from `data_end`.
        offset: i64,
    },
    /// `r10 + offset`.
    Stack {
        /// Offset from the frame pointer.
        offset: i64,
    },
    /// A map handle.
    Map {
        /// The map's index in the object.
        map: u32,
    },
}

impl Value {
    /// The restored value of `sym`, when the engine can produce it.
    pub fn of(sym: &Sym, max_read: u16) -> Option<Value> {
        Some(match *sym {
            Sym::Bits(b) => match b.as_const() {
                Some(value) => Value::Const { value },
                None if b == Bits::length() => Value::Length { offset: 0 },
                None => Value::Extract(Extraction::of(&b, max_read)?),
            },
            Sym::Len(offset) => Value::Length { offset },
            Sym::Ctx => Value::Context,
            Sym::Packet(offset) => Value::Packet { offset },
            Sym::PacketEnd(offset) => Value::PacketEnd { offset },
            Sym::Stack(offset) => Value::Stack { offset },
            Sym::Map(map) => Value::Map { map },
            Sym::Unknown => return None,
        })
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Const { value } => write!(f, "{value:#x}"),
            Value::Extract(e) => {
                let order = if e.big_endian { "be" } else { "le" };
                write!(
                    f,
                    "{order}(pkt[{}..{}])",
                    e.offset,
                    e.offset + e.length as u16
                )?;
                match e.shift {
                    0 => {}
                    s if s > 0 => write!(f, " << {s}")?,
                    s => write!(f, " >> {}", -s)?,
                }
                write!(f, " & {:#x}", e.mask)
            }
            Value::Length { offset } => write!(f, "len{offset:+}"),
            Value::Context => f.write_str("ctx"),
            Value::Packet { offset } => write!(f, "data{offset:+}"),
            Value::PacketEnd { offset } => write!(f, "data_end{offset:+}"),
            Value::Stack { offset } => write!(f, "r10{offset:+}"),
            Value::Map { map } => write!(f, "map{map}"),
        }
    }
}

/// One stack write of a restore: the low `size` bytes of `value` at r10-relative `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct StackValue {
    /// r10-relative offset of the first byte.
    pub offset: i64,
    /// Bytes written.
    pub size: u8,
    /// What is written.
    pub value: Value,
}

/// A context restore: where the processor starts and what it starts with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Restore {
    /// Slot index of the first instruction the processor runs.
    pub slot: u32,
    /// r0 where the rest of the program reads it: always a constant, set from the rule's action line
    /// (`Params::r0_const`); `None` where r0 is dead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r0: Option<u64>,
    /// Registers of r1-r9 the rest of the program reads, with their values.
    pub regs: Vec<(u8, Value)>,
    /// Stack writes into the zeroed frame.
    pub stack: Vec<StackValue>,
    /// Instructions the engine ran in place of the processor.
    pub warped: u64,
}

impl Restore {
    /// Stack bytes this restore writes.
    pub fn stack_bytes(&self) -> usize {
        self.stack.iter().map(|s| s.size as usize).sum()
    }
}

/// Why a point of the program is not a restore point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unrestorable {
    /// r0 holds a value the rest reads that is not a constant (or the engine restores r1-r9 only).
    R0Live,
    /// A live register or stack byte holds something the engine cannot produce.
    Value,
    /// More registers than register extractors.
    RegExtractors,
    /// More stack writes than stack extractors.
    StackExtractors,
    /// The written bytes span more than the stack buffer.
    StackBuffer,
}

impl Unrestorable {
    /// The kebab-case name the report prints.
    pub fn name(self) -> &'static str {
        match self {
            Unrestorable::R0Live => "r0-live",
            Unrestorable::Value => "value",
            Unrestorable::RegExtractors => "reg-extractors",
            Unrestorable::StackExtractors => "stack-extractors",
            Unrestorable::StackBuffer => "stack-buffer",
        }
    }
}

/// The restore of `st` at slot `slot`, given the registers and frame bytes live there.
pub fn restore_at(
    st: &PathState,
    slot: u32,
    live: RegSet,
    live_stack: StackBytes,
    params: &Params,
) -> Result<Restore, Unrestorable> {
    let r0 = match live.contains(0) {
        false => None,
        true if params.r0_const == 0 => return Err(Unrestorable::R0Live),
        true => match st.regs[0] {
            Sym::Bits(b) => Some(b.as_const().ok_or(Unrestorable::R0Live)?),
            _ => return Err(Unrestorable::R0Live),
        },
    };
    let mut regs = Vec::new();
    for r in (1..=9u8).filter(|&r| live.contains(r)) {
        let v = Value::of(&st.regs[r as usize], params.reg_read).ok_or(Unrestorable::Value)?;
        regs.push((r, v));
    }
    if regs.len() > params.reg_extractors as usize {
        return Err(Unrestorable::RegExtractors);
    }
    let stack = stack_writes(st, live_stack, params)?;
    if stack.len() > params.stack_extractors as usize {
        return Err(Unrestorable::StackExtractors);
    }
    if let (Some(lo), Some(hi)) = (
        stack.first().map(|s| s.offset),
        stack.last().map(|s| s.offset + s.size as i64),
    ) {
        if hi - lo > params.stack_buffer as i64 {
            return Err(Unrestorable::StackBuffer);
        }
    }
    Ok(Restore {
        slot,
        r0,
        regs,
        stack,
        warped: st.insns,
    })
}

/// The stack writes that give the live bytes of `st`'s frame their values (zero bytes need none).
fn stack_writes(
    st: &PathState,
    live: StackBytes,
    params: &Params,
) -> Result<Vec<StackValue>, Unrestorable> {
    let needed: Vec<i64> = st
        .stack
        .iter()
        .filter(|(o, b)| live.contains(**o) && **b != StackByte::Bits([Bit::Zero; 8]))
        .map(|(o, _)| *o)
        .collect();
    let byte = |o: i64| {
        st.stack
            .get(&o)
            .copied()
            .unwrap_or(StackByte::Bits([Bit::Zero; 8]))
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < needed.len() {
        let at = needed[i];
        let longest = (1..=params.stack_read.min(8) as i64)
            .rev()
            .filter(|n| at + n <= 0)
            .find_map(|n| stack_value(&byte, at, n, params.reg_read.max(params.stack_read)))
            .ok_or(Unrestorable::Value)?;
        let end = at + longest.size as i64;
        out.push(longest);
        while i < needed.len() && needed[i] < end {
            i += 1;
        }
    }
    Ok(out)
}

/// Bytes `at..at + n` as one stack write, when one value gives them all.
fn stack_value(
    byte: &dyn Fn(i64) -> StackByte,
    at: i64,
    n: i64,
    max_read: u16,
) -> Option<StackValue> {
    if let StackByte::Pointer(p, 0) = byte(at) {
        let whole = n == 8 && (0..8).all(|i| byte(at + i) == StackByte::Pointer(p, i as u8));
        if !whole {
            return None;
        }
        return Some(StackValue {
            offset: at,
            size: 8,
            value: Value::of(&p, max_read)?,
        });
    }
    let mut bits = [Bit::Zero; 64];
    for i in 0..n {
        match byte(at + i) {
            StackByte::Bits(b) => bits[i as usize * 8..i as usize * 8 + 8].copy_from_slice(&b),
            _ => return None,
        }
    }
    let value = match Value::of(&Sym::Bits(Bits(bits)), max_read)? {
        v @ (Value::Const { .. } | Value::Extract(_)) => v,
        _ => return None,
    };
    Some(StackValue {
        offset: at,
        size: n as u8,
        value,
    })
}

/// Whether `v` reads the length (so the key or a restore needs it).
pub fn reads_length(v: &Value) -> bool {
    matches!(v, Value::Length { .. } | Value::PacketEnd { .. })
}

/// `LEN_BITS` as bytes, for the key layout.
pub const LEN_BYTES: u16 = (LEN_BITS / 8) as u16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swapped_halfword_is_a_big_endian_read() {
        let b = Bits::packet(12, 2).swap_bytes(16);
        let e = Extraction::of(&b, 8).unwrap();
        assert!(e.big_endian);
        assert_eq!((e.offset, e.length, e.shift, e.mask), (12, 2, 0, 0xffff));
        let chunk: Vec<u8> = (0..20).collect();
        assert_eq!(e.eval(&chunk), 0x0c0d);
    }

    #[test]
    fn a_masked_shifted_nibble_is_an_extraction_and_a_sign_extension_is_not() {
        let ihl = Bits::packet(14, 1).and_const(0x0f).shl(2, 64);
        let e = Extraction::of(&ihl, 8).unwrap();
        let chunk = [0u8; 14]
            .iter()
            .copied()
            .chain([0x45u8])
            .collect::<Vec<_>>();
        assert_eq!(e.eval(&chunk), 20);
        let sx = Bits::packet(0, 1).sign_extend(8);
        assert!(Extraction::of(&sx, 8).is_none());
    }
}
