//! What one instruction does to the abstract [`State`] of the region analysis.

use crate::helpers::{helper, MemArg, MAP_LOOKUP_ELEM};
use crate::value::{Offset, State, Value, NO_LOOKUP};
use crate::{FuncId, InsnId};
use hwxdp_ebpf::{AluOp, AtomicOp, CallKind, InsnKind, JmpCond, Source, Width};
use hwxdp_ebpf::{
    ATOMIC_FETCH, PSEUDO_MAP_FD, PSEUDO_MAP_IDX, PSEUDO_MAP_IDX_VALUE, PSEUDO_MAP_VALUE,
};
use hwxdp_object::MapSpec;

/// Offsets of the `struct xdp_md` fields that hold packet pointers.
pub const XDP_MD_DATA: i64 = 0;
/// `data_end`.
pub const XDP_MD_DATA_END: i64 = 4;
/// `data_meta`.
pub const XDP_MD_DATA_META: i64 = 8;

/// What the transfer functions need besides the state.
pub(crate) struct Env<'a> {
    /// The function being analysed, whose frame r10 points to.
    pub frame: FuncId,
    /// The object's maps, for key and value sizes (may be empty).
    pub maps: &'a [MapSpec],
    /// The value each function returns in r0.
    pub returns: &'a [Value],
}

impl Env<'_> {
    /// The r10-relative offset `v` points at, if it points into this function's frame (`Some(None)` when the offset
    /// is not a constant).
    pub fn frame_offset(&self, v: Value) -> Option<Option<i64>> {
        match v {
            Value::Stack { frame, off } if frame == self.frame => Some(off.constant()),
            _ => None,
        }
    }
}

/// Applies instruction `k` (at `insn`) to `st`; `callee` is the function a bpf-to-bpf call calls.
pub(crate) fn step(env: &Env, insn: InsnId, k: &InsnKind, st: &mut State, callee: Option<FuncId>) {
    match *k {
        InsnKind::Alu { wide, op, dst, src } => {
            let b = match src {
                Source::Reg(r) => st.reg(r),
                Source::Imm(i) => Value::constant(if wide { i as i64 } else { i as u32 as i64 }),
            };
            st.regs[dst as usize] = alu(wide, op, st.reg(dst), b);
        }
        InsnKind::Neg { wide, dst } => {
            let v = match st.reg(dst) {
                Value::Scalar(Some(c)) => Value::constant(trunc(wide, c.wrapping_neg())),
                _ => Value::Scalar(None),
            };
            st.regs[dst as usize] = v;
        }
        InsnKind::MovSx { dst, .. } | InsnKind::Endian { dst, .. } => {
            st.regs[dst as usize] = Value::Scalar(None)
        }
        InsnKind::LoadImm64 { dst, pseudo, imm } => {
            st.regs[dst as usize] = match pseudo {
                0 => Value::constant(imm),
                PSEUDO_MAP_FD | PSEUDO_MAP_IDX => Value::MapHandle(imm as u32),
                PSEUDO_MAP_VALUE | PSEUDO_MAP_IDX_VALUE => Value::MapValue {
                    map: imm as u32,
                    off: Offset::exact(imm >> 32),
                    nullable: false,
                    lookup: NO_LOOKUP,
                },
                _ => Value::Unknown,
            }
        }
        InsnKind::LoadPacket { .. } => {
            clobber_caller_saved(st);
            st.regs[0] = Value::Scalar(None);
        }
        InsnKind::Load {
            size,
            dst,
            base,
            off,
            ..
        } => {
            let v = load(env, st, st.reg(base), off, size);
            st.regs[dst as usize] = v;
        }
        InsnKind::Store {
            size,
            base,
            off,
            src,
        } => {
            let v = match src {
                Source::Reg(r) => st.reg(r),
                Source::Imm(i) => Value::constant(i as i64),
            };
            if let Some(at) = env.frame_offset(st.reg(base)) {
                store(st, at.map(|a| a + off as i64), size, v);
            }
        }
        InsnKind::Atomic {
            size,
            op,
            base,
            off,
            src,
        } => {
            if let Some(at) = env.frame_offset(st.reg(base)) {
                store(st, at.map(|a| a + off as i64), size, Value::Scalar(None));
            }
            if op == AtomicOp::Cmpxchg {
                st.regs[0] = Value::Scalar(None);
            } else if op.imm() & ATOMIC_FETCH != 0 {
                st.regs[src as usize] = Value::Scalar(None);
            }
        }
        InsnKind::Call { kind, imm } => call(env, insn, st, kind, imm, callee),
        InsnKind::CallReg { .. } => {
            clobber_args(env, st, None);
            clobber_caller_saved(st);
            st.regs[0] = Value::Unknown;
        }
        InsnKind::Ja { .. }
        | InsnKind::JaLong { .. }
        | InsnKind::Branch { .. }
        | InsnKind::Exit => {}
    }
}

fn call(env: &Env, insn: InsnId, st: &mut State, kind: CallKind, id: i32, callee: Option<FuncId>) {
    let r0 = match (kind, callee) {
        (CallKind::Helper, _) if id == MAP_LOOKUP_ELEM => match st.reg(1) {
            Value::MapHandle(map) => Value::MapValue {
                map,
                off: Offset::ZERO,
                nullable: true,
                lookup: insn.0,
            },
            _ => Value::Unknown,
        },
        (CallKind::Helper, _) => Value::Scalar(None),
        (CallKind::Local, Some(f)) => env
            .returns
            .get(f.index())
            .copied()
            .unwrap_or(Value::Unknown),
        _ => Value::Unknown,
    };
    match (kind, helper(id)) {
        (CallKind::Helper, Some(h)) => {
            for w in h.writes {
                let (ptr, len) = match *w {
                    MemArg::MapKey(p) => (p, map_size(env, st, |m| m.key_size)),
                    MemArg::MapValue(p) => (p, map_size(env, st, |m| m.value_size)),
                    MemArg::Sized { ptr, size } => (ptr, scalar(st.reg(size))),
                };
                if let Some(at) = env.frame_offset(st.reg(ptr)) {
                    clobber(st, at, len);
                }
            }
        }
        _ => clobber_args(env, st, None),
    }
    clobber_caller_saved(st);
    st.regs[0] = r0;
}

fn map_size(env: &Env, st: &State, field: fn(&MapSpec) -> u32) -> Option<i64> {
    match st.reg(1) {
        Value::MapHandle(m) => env.maps.get(m as usize).map(|m| field(m) as i64),
        _ => None,
    }
}

fn scalar(v: Value) -> Option<i64> {
    match v {
        Value::Scalar(c) => c,
        _ => None,
    }
}

/// A call the analysis knows nothing about may write anywhere above a stack pointer it receives.
fn clobber_args(env: &Env, st: &mut State, len: Option<i64>) {
    for r in 1..=5 {
        if let Some(at) = env.frame_offset(st.reg(r)) {
            clobber(st, at, len);
        }
    }
}

fn clobber_caller_saved(st: &mut State) {
    for r in 1..=5 {
        st.regs[r] = Value::Unknown;
    }
}

/// Forgets what the slots overlapping `[at, at + len)` hold (to the frame's top when `len` is unknown; everything
/// when `at` is unknown).
fn clobber(st: &mut State, at: Option<i64>, len: Option<i64>) {
    let Some(at) = at else {
        st.slots.clear();
        return;
    };
    let end = len.map_or(0, |l| at.saturating_add(l));
    for (slot, v) in st.slots.iter_mut() {
        if *slot < end && slot + 8 > at {
            *v = Value::Scalar(None);
        }
    }
}

fn store(st: &mut State, at: Option<i64>, size: Width, v: Value) {
    let Some(at) = at else {
        st.slots.clear();
        return;
    };
    if size == Width::DW && at.rem_euclid(8) == 0 {
        if v == Value::Unknown {
            st.slots.remove(&at);
        } else {
            st.slots.insert(at, v);
        }
        return;
    }
    let end = at + size.bytes() as i64;
    let first = at.div_euclid(8) * 8;
    let mut slot = first;
    while slot < end {
        let keeps_zero =
            st.slots.get(&slot) == Some(&Value::constant(0)) && v == Value::constant(0);
        st.slots
            .insert(slot, if keeps_zero { v } else { Value::Scalar(None) });
        slot += 8;
    }
}

fn load(env: &Env, st: &State, base: Value, off: i16, size: Width) -> Value {
    match base {
        Value::Ctx(o) if size == Width::W => match o.add(off as i64).constant() {
            Some(XDP_MD_DATA) => Value::Packet(Offset::ZERO),
            Some(XDP_MD_DATA_END) => Value::PacketEnd(Offset::ZERO),
            Some(XDP_MD_DATA_META) => Value::PacketMeta(Offset::ZERO),
            _ => Value::Scalar(None),
        },
        _ => match env.frame_offset(base) {
            Some(Some(at)) => {
                let at = at + off as i64;
                if size == Width::DW && at.rem_euclid(8) == 0 {
                    return st.slots.get(&at).copied().unwrap_or(Value::Unknown);
                }
                let slot = at.div_euclid(8) * 8;
                let last = (at + size.bytes() as i64 - 1).div_euclid(8) * 8;
                let zero = Some(&Value::constant(0));
                if st.slots.get(&slot) == zero && st.slots.get(&last) == zero {
                    Value::constant(0)
                } else {
                    Value::Scalar(None)
                }
            }
            _ => Value::Scalar(None),
        },
    }
}

fn alu(wide: bool, op: AluOp, a: Value, b: Value) -> Value {
    if !wide {
        return match (op, a, b) {
            (AluOp::Mov, _, Value::Scalar(Some(c))) => Value::constant(c as u32 as i64),
            (_, Value::Scalar(Some(x)), Value::Scalar(Some(y))) => {
                fold(op, x, y).map_or(Value::Scalar(None), |v| Value::constant(v as u32 as i64))
            }
            _ => Value::Scalar(None),
        };
    }
    match (op, a, b) {
        (AluOp::Mov, _, b) => b,
        (_, Value::Scalar(Some(x)), Value::Scalar(Some(y))) => {
            fold(op, x, y).map_or(Value::Scalar(None), Value::constant)
        }
        (AluOp::Add, p, Value::Scalar(c)) | (AluOp::Add, Value::Scalar(c), p) if p.is_pointer() => {
            p.offset_by(c).unwrap_or(Value::Unknown)
        }
        (AluOp::Sub, p, Value::Scalar(c)) if p.is_pointer() => p
            .offset_by(c.map(|c| c.wrapping_neg()))
            .unwrap_or(Value::Unknown),
        (AluOp::Sub, p, q) if p.is_pointer() && q.is_pointer() => Value::Scalar(None),
        (_, Value::Scalar(_), Value::Scalar(_)) => Value::Scalar(None),
        (_, p, Value::Unknown) if p.is_pointer() && matches!(op, AluOp::Add | AluOp::Sub) => {
            p.offset_by(None).unwrap_or(Value::Unknown)
        }
        _ => Value::Unknown,
    }
}

fn trunc(wide: bool, v: i64) -> i64 {
    if wide {
        v
    } else {
        v as u32 as i64
    }
}

/// Constant folding of the operations clang uses to build constants and offsets.
fn fold(op: AluOp, x: i64, y: i64) -> Option<i64> {
    Some(match op {
        AluOp::Add => x.wrapping_add(y),
        AluOp::Sub => x.wrapping_sub(y),
        AluOp::Mul => x.wrapping_mul(y),
        AluOp::And => x & y,
        AluOp::Or => x | y,
        AluOp::Xor => x ^ y,
        AluOp::Lsh => x.wrapping_shl(y as u32),
        AluOp::Rsh => ((x as u64).wrapping_shr(y as u32)) as i64,
        AluOp::Arsh => x.wrapping_shr(y as u32),
        _ => return None,
    })
}

/// The state on one side of the conditional jump `k`: null checks of map-value pointers and equality with a
/// constant refine what the compared register holds.
pub(crate) fn refine(k: &InsnKind, st: &State, taken: bool) -> State {
    let mut out = st.clone();
    let InsnKind::Branch {
        wide: true,
        cond: cond @ (JmpCond::Eq | JmpCond::Ne),
        dst,
        src: Source::Imm(c),
        ..
    } = *k
    else {
        return out;
    };
    let equal_side = (cond == JmpCond::Eq) == taken;
    match st.reg(dst) {
        Value::MapValue {
            nullable: true,
            lookup,
            ..
        } if c == 0 => {
            let same = |v: &Value| match *v {
                Value::MapValue {
                    nullable: true,
                    lookup: l,
                    ..
                } => lookup != NO_LOOKUP && l == lookup,
                _ => false,
            };
            let refined = |v: Value| match v {
                _ if equal_side => Value::constant(0),
                Value::MapValue {
                    map, off, lookup, ..
                } => Value::MapValue {
                    map,
                    off,
                    nullable: false,
                    lookup,
                },
                other => other,
            };
            out.regs[dst as usize] = refined(out.regs[dst as usize]);
            for v in out.regs.iter_mut().chain(out.slots.values_mut()) {
                if same(v) {
                    *v = refined(*v);
                }
            }
        }
        Value::Scalar(None) if equal_side => out.regs[dst as usize] = Value::constant(c as i64),
        _ => {}
    }
    out
}
