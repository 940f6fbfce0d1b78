//! From the reference machine's run of a packet (its instruction trace and the operands beside it) to the steps an
//! engine times ([`crate::engine::Job`]).

use crate::decode::{decode, Kind};
use crate::engine::{End, Job, Step, Wait};
use hwxdp_xdp::region::{self, Region};
use hwxdp_xdp::Outcome;

/// Coprocessor service times of the contract (grant cycle to ack cycle, both counted).
pub mod service {
    /// `bpf_map_lookup_elem`.
    pub const LOOKUP: u32 = 4;
    /// `bpf_map_delete_elem`.
    pub const DELETE: u32 = 8;
    /// Any other helper.
    pub const HELPER: u32 = 2;
    /// `bpf_redirect`, which the engine answers itself in the cycle of the request (`ebpflow_engine.sv`), without
    /// the arbiter: the one service time of 1.
    pub const LOCAL: u32 = 1;
    /// A load or store of a map value.
    pub const VALUE: u32 = 2;
    /// An atomic on a map value.
    pub const ATOMIC: u32 = 3;
}

/// The coprocessor's key and value widths a NIC is built with (`ebpflow_nic`'s `KEY_BYTES` and `VAL_BYTES`): what
/// a map helper gathers from the data memory before its request, and how long an update writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The longest key, a multiple of 8: gathered at r2 by every map helper.
    pub key_bytes: u32,
    /// The longest value an update carries, a multiple of 8: gathered at r3 by an update.
    pub val_bytes: u32,
}

impl Shape {
    /// The default NIC: 16-byte keys, 32-byte values.
    pub const DEFAULT: Shape = Shape {
        key_bytes: 16,
        val_bytes: 32,
    };
    /// The longest key a NIC is built for.
    pub const MAX_KEY_BYTES: u32 = 64;
    /// The longest value an update carries on any NIC (the coprocessor's service counter has 5 bits).
    pub const MAX_VAL_BYTES: u32 = 128;

    /// The NIC for `maps`: the longest key and the longest value rounded up to 8 bytes, at least the default's,
    /// at most [`Shape::MAX_KEY_BYTES`] and [`Shape::MAX_VAL_BYTES`]. An ARRAY's longer values (a table the program
    /// reads through the map-value window) do not widen it: the host writes them a word at a time.
    pub fn of(maps: &[crate::MapEntry]) -> Shape {
        let round = |n: u32| n.div_ceil(8) * 8;
        let key = maps.iter().map(|m| round(m.key_size)).max().unwrap_or(0);
        let val = maps
            .iter()
            .map(|m| round(m.value_size))
            .filter(|&v| v <= Self::MAX_VAL_BYTES)
            .max()
            .unwrap_or(0);
        Shape {
            key_bytes: key.clamp(Self::DEFAULT.key_bytes, Self::MAX_KEY_BYTES),
            val_bytes: val.clamp(Self::DEFAULT.val_bytes, Self::MAX_VAL_BYTES),
        }
    }

    /// Key words a map helper gathers.
    pub fn key_words(&self) -> u32 {
        self.key_bytes / 8
    }

    /// Value words an update gathers and writes.
    pub fn value_words(&self) -> u32 {
        self.val_bytes / 8
    }

    /// The service time of `bpf_map_update_elem`: 4 cycles and a value word a cycle.
    pub fn update_service(&self) -> u32 {
        4 + self.value_words()
    }
}

impl Default for Shape {
    fn default() -> Self {
        Shape::DEFAULT
    }
}

/// The words helper `id` gathers from the data memory before its request on a NIC of `shape` (8 bytes a word):
/// the key at r2 for a lookup or delete, the key and the value at r3 for an update, none for any other helper.
pub fn gather_words(id: i32, shape: Shape) -> u32 {
    match id {
        1 | 3 => shape.key_words(),
        2 => shape.key_words() + shape.value_words(),
        _ => 0,
    }
}

/// The service time of helper `id` on a NIC of `shape` (an update's grows with its value words).
pub fn service_time(id: i32, shape: Shape) -> u32 {
    match id {
        1 => service::LOOKUP,
        2 => shape.update_service(),
        3 => service::DELETE,
        23 => service::LOCAL,
        _ => service::HELPER,
    }
}

/// Where the run's instructions are: the image's slots and the image slot of each (program, slot) of the trace.
pub struct Where<'a> {
    /// The instruction memory.
    pub slots: &'a [u64],
    /// Image slots executed before the trace's first instruction (the loader's prologue: no jumps, header and
    /// register accesses only).
    pub prologue: std::ops::Range<usize>,
    /// The image slot of a trace entry.
    pub slot_of: &'a dyn Fn(u16, u32) -> Option<usize>,
}

/// Why a trace cannot be timed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The trace names a slot the image does not hold.
    #[error("the trace reaches slot {slot} of program {program}, which the image does not hold")]
    NotInImage {
        /// Program index.
        program: u16,
        /// Slot.
        slot: u32,
    },
    /// The machine did not record a trace.
    #[error("the reference machine recorded no trace (Config::record_trace is off)")]
    NoTrace,
}

fn size_of(code: u8) -> u64 {
    match (code >> 3) & 3 {
        0 => 4,
        1 => 2,
        2 => 1,
        _ => 8,
    }
}

/// The steps of a packet's run: `outcome` with its trace and operands, `data0` the frame's offset from
/// `data_hard_start` in the machine's packet buffer when it started, `gap` the idle cycles between input beats,
/// on a NIC of `shape` (its map helpers gather and update as many words as its `KEY_BYTES` and `VAL_BYTES` say).
pub fn job(
    outcome: &Outcome,
    data0: u64,
    at: &Where,
    gap: u32,
    shape: Shape,
) -> Result<Job, JobError> {
    if outcome.trace.is_empty() && outcome.insns > 0 {
        return Err(JobError::NoTrace);
    }
    let mut steps: Vec<Step> = at
        .prologue
        .clone()
        .map(|s| Step {
            decoded: decode(at.slots[s], false),
            wait: Wait::None,
            taken: false,
            md_cycles: 0,
        })
        .collect();
    let mut image_slots = Vec::with_capacity(outcome.trace.len());
    for &(program, slot) in &outcome.trace {
        let s = (at.slot_of)(program, slot).ok_or(JobError::NotInImage { program, slot })?;
        image_slots.push(s);
    }
    for (k, &s) in image_slots.iter().enumerate() {
        let d = decode(at.slots[s], false);
        let operand = outcome.operands.get(k).copied().unwrap_or(0);
        let taken = d.kind == Kind::Branch && image_slots.get(k + 1).is_some_and(|&n| n != s + 1);
        let md_cycles = if d.kind == Kind::MulDiv {
            let zero = if d.code & 8 != 0 {
                operand == 0
            } else {
                d.imm == 0
            };
            d.muldiv_cycles(zero)
        } else {
            0
        };
        let wait = match d.kind {
            Kind::Helper if d.code & 0xf0 == 0x80 && (at.slots[s] >> 12) & 15 == 0 => {
                Wait::Coproc {
                    service: service_time(d.imm, shape),
                    gather: gather_words(d.imm, shape),
                }
            }
            Kind::Helper => Wait::Coproc {
                service: service::HELPER,
                gather: 0,
            },
            _ if d.memory => memory_wait(d.code, d.atomic, d.imm, operand, data0),
            _ => Wait::None,
        };
        steps.push(Step {
            decoded: d,
            wait,
            taken,
            md_cycles,
        });
    }
    let end = match (outcome.fault.is_some(), steps.last()) {
        (false, Some(s)) if s.decoded.kind == Kind::Exit => End::Exit,
        _ => End::Stop,
    };
    Ok(Job { steps, end, gap })
}

/// What a memory access waits for: the beat of its last byte for the frame, the coprocessor for a map value.
fn memory_wait(code: u8, atomic: bool, imm: i32, operand: u64, data0: u64) -> Wait {
    let size = size_of(code);
    let legacy = code & 7 == 0;
    let frame_byte = if legacy {
        // LD ABS/IND: data + imm (+ the offset register's value as a 32-bit signed number).
        let ind = if code & 0xe0 == 0x40 {
            i64::from(operand as u32 as i32)
        } else {
            0
        };
        Some(i64::from(imm) + ind)
    } else {
        match region::region(operand) {
            Region::Packet => Some(region::offset(operand) as i64 - data0 as i64),
            Region::MapValue => {
                return Wait::Coproc {
                    service: if atomic {
                        service::ATOMIC
                    } else {
                        service::VALUE
                    },
                    gather: 0,
                }
            }
            _ => None,
        }
    };
    match frame_byte {
        Some(b) if b + size as i64 > 0 => Wait::Frame {
            word: ((b + size as i64 - 1) / 8) as u32,
        },
        _ => Wait::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapEntry;

    fn map(map_type: u32, key_size: u32, value_size: u32) -> MapEntry {
        MapEntry {
            name: "m".into(),
            map_type,
            key_size,
            value_size,
            max_entries: 1,
            flags: 0,
            window: 0,
            stride: value_size.div_ceil(8) * 8,
        }
    }

    #[test]
    fn the_shape_is_the_longest_key_and_value_in_words_a_long_array_aside() {
        assert_eq!(Shape::of(&[]), Shape::DEFAULT);
        assert_eq!(Shape::of(&[map(1, 4, 8)]), Shape::DEFAULT);
        let vlan = Shape::of(&[map(5, 40, 16), map(2, 4, 44)]);
        assert_eq!((vlan.key_bytes, vlan.val_bytes), (40, 48));
        assert_eq!((vlan.key_words(), vlan.value_words()), (5, 6));
        assert_eq!(gather_words(2, vlan), 11);
        assert_eq!(service_time(2, vlan), 10);
        // a DPI table in .rodata: read through the window, never gathered
        assert_eq!(
            Shape::of(&[map(2, 4, 133_120), map(2, 4, 8)]),
            Shape::DEFAULT
        );
        assert_eq!(service_time(2, Shape::DEFAULT), 8);
        assert_eq!(gather_words(2, Shape::DEFAULT), 2 + 4);
    }
}
