//! The abstract values of the region analysis: pointer types as the kernel verifier tracks them, and constants.

use crate::FuncId;
use std::collections::BTreeMap;
use std::fmt;

/// A pointer's offset from the start of its region.
///
/// Exact when `variable` is false. When an unknown scalar was added, `variable` is set and `konst` keeps the
/// constants added before and after it, for display. Where two paths disagree on an exact offset, the join keeps the
/// smaller constant; where either was already variable, the constant is dropped so that loops reach a fixpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Offset {
    /// The constant part.
    pub konst: i64,
    /// Whether an unknown amount was also added.
    pub variable: bool,
}

impl Offset {
    /// Exactly zero.
    pub const ZERO: Offset = Offset {
        konst: 0,
        variable: false,
    };

    /// The exact constant `konst`.
    pub const fn exact(konst: i64) -> Offset {
        Offset {
            konst,
            variable: false,
        }
    }

    /// The offset as a constant, if it is one.
    pub const fn constant(self) -> Option<i64> {
        if self.variable {
            None
        } else {
            Some(self.konst)
        }
    }

    /// Plus a constant.
    pub const fn add(self, c: i64) -> Offset {
        Offset {
            konst: self.konst.wrapping_add(c),
            variable: self.variable,
        }
    }

    /// Plus an unknown amount.
    pub const fn add_unknown(self) -> Offset {
        Offset {
            konst: self.konst,
            variable: true,
        }
    }

    /// The offset on either of two paths.
    pub fn join(self, other: Offset) -> Offset {
        if self == other {
            self
        } else if self.variable || other.variable {
            Offset {
                konst: 0,
                variable: true,
            }
        } else {
            Offset {
                konst: self.konst.min(other.konst),
                variable: true,
            }
        }
    }
}

impl fmt::Display for Offset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.variable, self.konst) {
            (false, k) => write!(f, "{k}"),
            (true, 0) => f.write_str("?"),
            (true, k) if k < 0 => write!(f, "?{k}"),
            (true, k) => write!(f, "?+{k}"),
        }
    }
}

/// The lookup that produced no map-value pointer: values joined from different lookups.
pub const NO_LOOKUP: u32 = u32::MAX;

/// What a register or a spilled stack slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// Nothing known: uninitialised, clobbered, or different types on different paths.
    Unknown,
    /// A number, with its value when it is a known constant.
    Scalar(Option<i64>),
    /// Pointer into `struct xdp_md`.
    Ctx(Offset),
    /// `data` plus an offset.
    Packet(Offset),
    /// `data_end` plus an offset.
    PacketEnd(Offset),
    /// `data_meta` plus an offset.
    PacketMeta(Offset),
    /// Pointer into the stack frame of function `frame` (offset from its r10, so negative).
    Stack {
        /// Whose frame.
        frame: FuncId,
        /// Offset from that frame's r10.
        off: Offset,
    },
    /// A map, as `lddw rX, map` loads it.
    MapHandle(u32),
    /// Pointer into a value of map `map`.
    MapValue {
        /// The map index.
        map: u32,
        /// Offset into the value.
        off: Offset,
        /// Whether it may still be NULL (a lookup result before its null check).
        nullable: bool,
        /// The lookup instruction that produced it, or [`NO_LOOKUP`]; copies of one result share it, so that a null
        /// check of one copy refines them all.
        lookup: u32,
    },
}

impl Value {
    /// The known constant `c`.
    pub const fn constant(c: i64) -> Value {
        Value::Scalar(Some(c))
    }

    /// The value on either of two paths.
    ///
    /// NULL on one path and a pointer on the other (clang's `select` of a pointer or 0) joins to the pointer, as a
    /// maybe-null map value for map values: an access through the NULL would fault, so every access that completes
    /// goes to the pointer's region.
    pub fn join(self, other: Value) -> Value {
        use Value::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Scalar(Some(0)), p) | (p, Scalar(Some(0))) if p.is_pointer() => match p {
                MapValue {
                    map, off, lookup, ..
                } => MapValue {
                    map,
                    off,
                    nullable: true,
                    lookup,
                },
                MapHandle(_) => Unknown,
                p => p,
            },
            (Scalar(_), Scalar(_)) => Scalar(None),
            (Ctx(a), Ctx(b)) => Ctx(a.join(b)),
            (Packet(a), Packet(b)) => Packet(a.join(b)),
            (PacketEnd(a), PacketEnd(b)) => PacketEnd(a.join(b)),
            (PacketMeta(a), PacketMeta(b)) => PacketMeta(a.join(b)),
            (Stack { frame: f, off: a }, Stack { frame: g, off: b }) if f == g => Stack {
                frame: f,
                off: a.join(b),
            },
            (
                MapValue {
                    map: m,
                    off: a,
                    nullable: na,
                    lookup: la,
                },
                MapValue {
                    map: n,
                    off: b,
                    nullable: nb,
                    lookup: lb,
                },
            ) if m == n => MapValue {
                map: m,
                off: a.join(b),
                nullable: na || nb,
                lookup: if la == lb { la } else { NO_LOOKUP },
            },
            _ => Unknown,
        }
    }

    /// The same pointer moved by `delta`, or `None` for values that are not movable pointers.
    pub fn offset_by(self, delta: Option<i64>) -> Option<Value> {
        let mv = |o: Offset| delta.map_or(o.add_unknown(), |d| o.add(d));
        Some(match self {
            Value::Ctx(o) => Value::Ctx(mv(o)),
            Value::Packet(o) => Value::Packet(mv(o)),
            Value::PacketEnd(o) => Value::PacketEnd(mv(o)),
            Value::PacketMeta(o) => Value::PacketMeta(mv(o)),
            Value::Stack { frame, off } => Value::Stack {
                frame,
                off: mv(off),
            },
            Value::MapValue {
                map,
                off,
                nullable,
                lookup,
            } => Value::MapValue {
                map,
                off: mv(off),
                nullable,
                lookup,
            },
            _ => return None,
        })
    }

    /// Whether this is a pointer of any kind.
    pub const fn is_pointer(self) -> bool {
        !matches!(self, Value::Unknown | Value::Scalar(_))
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Unknown => f.write_str("?"),
            Value::Scalar(None) => f.write_str("scalar"),
            Value::Scalar(Some(c)) => write!(f, "{c}"),
            Value::Ctx(o) => write!(f, "ctx{}", signed(o)),
            Value::Packet(o) => write!(f, "pkt{}", signed(o)),
            Value::PacketEnd(o) => write!(f, "pkt_end{}", signed(o)),
            Value::PacketMeta(o) => write!(f, "pkt_meta{}", signed(o)),
            Value::Stack { frame, off } => write!(f, "fp{}{}", frame.0, signed(off)),
            Value::MapHandle(m) => write!(f, "map{m}"),
            Value::MapValue {
                map, off, nullable, ..
            } => {
                let null = if nullable { "_or_null" } else { "" };
                write!(f, "map{map}_value{null}{}", signed(off))
            }
        }
    }
}

fn signed(o: Offset) -> String {
    match o {
        Offset::ZERO => String::new(),
        Offset {
            konst,
            variable: false,
        } if konst < 0 => format!("{konst}"),
        Offset {
            variable: false, ..
        } => format!("+{}", o.konst),
        _ => format!("[{o}]"),
    }
}

/// Registers and spilled stack slots at one program point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// r0-r10.
    pub regs: [Value; 11],
    /// What full 8-byte stores left in the frame's 8-byte-aligned slots, by r10-relative offset; absent is unknown.
    pub slots: BTreeMap<i64, Value>,
}

impl State {
    /// The state at the entry of function `frame` with arguments `args` in r1-r5.
    pub fn entry(frame: FuncId, args: [Value; 5]) -> State {
        let mut regs = [Value::Unknown; 11];
        regs[1..6].copy_from_slice(&args);
        regs[10] = Value::Stack {
            frame,
            off: Offset::ZERO,
        };
        State {
            regs,
            slots: BTreeMap::new(),
        }
    }

    /// The state on either of two paths.
    pub fn join(&self, other: &State) -> State {
        let mut regs = self.regs;
        for (r, o) in regs.iter_mut().zip(other.regs) {
            *r = r.join(o);
        }
        let slots = self
            .slots
            .iter()
            .filter_map(|(k, v)| Some((*k, v.join(*other.slots.get(k)?))))
            .filter(|(_, v)| *v != Value::Unknown)
            .collect();
        State { regs, slots }
    }

    /// The value of register `r` (r0-r10).
    pub fn reg(&self, r: u8) -> Value {
        self.regs.get(r as usize).copied().unwrap_or(Value::Unknown)
    }
}
