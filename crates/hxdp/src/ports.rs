//! The maps module's value ports as a property of a whole image: the value memory has one read port and one write
//! port, so a bundle may hold at most one access that may load a map value and one that may store one (an atomic is
//! both). The scheduler keeps this rule with the region labels of `hwxdp_analysis`; [`check_value_ports`] verifies
//! it on an image alone (the RTL driver runs it before loading an image), re-deriving what each register may point
//! to by the same abstract interpretation the labels come from (`hwxdp_analysis::Value`, `State`), run over bundles
//! with the bundle semantics of `docs/isa-hxdp.md`: all lanes read the registers as they were before the bundle,
//! loads first, then the helper call, then stores in lane order, then the register results, then control.
//!
//! An access counts as a possible map-value access unless its base register surely holds a pointer into the
//! context, the packet, the packet metadata or a stack frame (what the analysis labels so); accesses in bundles no
//! path reaches count too, as the analysis labels them unknown.
//!
//! The core's divider is a port of the same kind: the lanes share one divide/modulo unit, so a bundle may hold at
//! most one division or modulo (32- or 64-bit, signed or unsigned). [`check_divider`] verifies that rule; it needs no
//! analysis, the opcode alone decides.

use crate::isa::{Image, Op, EXIT_IMM, LDX6, STX6};
use crate::sched::{is_atomic, is_div};
use hwxdp_analysis::helpers::{helper, MemArg, MAP_LOOKUP_ELEM};
use hwxdp_analysis::value::NO_LOOKUP;
use hwxdp_analysis::{FuncId, Offset, State, Value};
use hwxdp_ebpf::opcode::*;
use std::fmt;
use thiserror::Error;

/// Which value port of the maps module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValuePort {
    /// The read port (loads, atomics).
    Read,
    /// The write port (stores, atomics).
    Write,
}

/// A bundle with more than one access that may use one value port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortConflict {
    /// The bundle index.
    pub bundle: usize,
    /// The port used twice.
    pub port: ValuePort,
    /// The lanes whose accesses may touch a map value through that port.
    pub lanes: Vec<usize>,
}

impl fmt::Display for PortConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.port {
            ValuePort::Read => "load",
            ValuePort::Write => "store",
        };
        write!(
            f,
            "bundle {}: lanes {:?} may each {what} a map value, the maps module has one value {} port",
            self.bundle,
            self.lanes,
            match self.port {
                ValuePort::Read => "read",
                ValuePort::Write => "write",
            }
        )
    }
}

/// An image that breaks the value-port rule.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("image breaks the one-map-value-load, one-map-value-store rule: {}", list(.conflicts))]
pub struct PortError {
    /// Every conflict, by bundle.
    pub conflicts: Vec<PortConflict>,
}

fn list(conflicts: &[PortConflict]) -> String {
    conflicts
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Checks that no bundle of `image` has two accesses that may load a map value, or two that may store one.
pub fn check_value_ports(image: &Image) -> Result<(), PortError> {
    let conflicts = value_port_conflicts(image);
    if conflicts.is_empty() {
        Ok(())
    } else {
        Err(PortError { conflicts })
    }
}

/// Every bundle of `image` that breaks the value-port rule (empty when it holds).
pub fn value_port_conflicts(image: &Image) -> Vec<PortConflict> {
    let states = Interp::new(image).run();
    let mut out = Vec::new();
    for (b, bundle) in image.bundles.iter().enumerate() {
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        for (lane, op) in bundle.ops() {
            let base = if op.is_load() {
                op.src
            } else if op.is_store() {
                op.dst
            } else {
                continue;
            };
            let maybe_map = states[b]
                .as_ref()
                .is_none_or(|st| may_be_map_value(st.reg(base)));
            if !maybe_map {
                continue;
            }
            if op.is_load() || is_atomic(op) {
                reads.push(lane);
            }
            if op.is_store() {
                writes.push(lane);
            }
        }
        for (port, lanes) in [(ValuePort::Read, reads), (ValuePort::Write, writes)] {
            if lanes.len() > 1 {
                out.push(PortConflict {
                    bundle: b,
                    port,
                    lanes,
                });
            }
        }
    }
    out
}

/// A bundle with more than one division or modulo: the core has one divider, shared by the lanes.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("image breaks the one-division-per-bundle rule: {}", divider_list(.conflicts))]
pub struct DividerError {
    /// Every bundle that breaks the rule, as (bundle, the lanes holding a division or modulo).
    pub conflicts: Vec<(usize, Vec<usize>)>,
}

fn divider_list(conflicts: &[(usize, Vec<usize>)]) -> String {
    conflicts
        .iter()
        .map(|(b, lanes)| {
            format!("bundle {b}: lanes {lanes:?} each divide or take a modulo, the core has one divider")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Checks that no bundle of `image` holds more than one division or modulo (`BPF_DIV`/`BPF_MOD`, 32- or 64-bit,
/// signed or unsigned): the Sephirot core has one divider, shared by the lanes.
pub fn check_divider(image: &Image) -> Result<(), DividerError> {
    let conflicts: Vec<(usize, Vec<usize>)> = image
        .bundles
        .iter()
        .enumerate()
        .filter_map(|(b, bundle)| {
            let lanes: Vec<usize> = bundle
                .ops()
                .filter(|(_, op)| is_div(op))
                .map(|(l, _)| l)
                .collect();
            (lanes.len() > 1).then_some((b, lanes))
        })
        .collect();
    if conflicts.is_empty() {
        Ok(())
    } else {
        Err(DividerError { conflicts })
    }
}

/// What the analysis labels a region other than a map value or unknown: context, packet, metadata, stack.
fn may_be_map_value(v: Value) -> bool {
    !matches!(
        v,
        Value::Ctx(_) | Value::Packet(_) | Value::PacketMeta(_) | Value::Stack { .. }
    )
}

/// Rounds of the whole-image fixpoint before giving up (then every access counts as a possible map value).
const MAX_ROUNDS: usize = 256;

/// One function of the image: a program entry or a bpf-to-bpf call target.
struct Func {
    entry: usize,
    program: bool,
}

struct Interp<'a> {
    image: &'a Image,
    funcs: Vec<Func>,
    /// The function each bundle belongs to (the first whose entry reaches it), by bundle.
    owner: Vec<Option<usize>>,
}

/// What one bundle passes on.
#[derive(Default)]
struct Outcome {
    succs: Vec<(usize, State)>,
    /// A bpf-to-bpf call: callee function, its arguments, and the caller's state to resume at the next bundle.
    call: Option<(usize, [Value; 5], State)>,
    ret: Option<Value>,
}

impl<'a> Interp<'a> {
    fn new(image: &'a Image) -> Interp<'a> {
        let n = image.bundles.len();
        let mut funcs: Vec<Func> = Vec::new();
        for &e in &image.entries {
            if (e as usize) < n && !funcs.iter().any(|f| f.entry == e as usize) {
                funcs.push(Func {
                    entry: e as usize,
                    program: true,
                });
            }
        }
        for bundle in &image.bundles {
            for (_, op) in bundle.ops() {
                let t = op.imm as usize;
                if op.is_local_call() && t < n && !funcs.iter().any(|f| f.entry == t) {
                    funcs.push(Func {
                        entry: t,
                        program: false,
                    });
                }
            }
        }
        let mut owner = vec![None; n];
        for (f, func) in funcs.iter().enumerate() {
            let mut stack = vec![func.entry];
            while let Some(b) = stack.pop() {
                if b >= n || owner[b].is_some() {
                    continue;
                }
                owner[b] = Some(f);
                stack.extend(control_targets(image, b));
            }
        }
        Interp {
            image,
            funcs,
            owner,
        }
    }

    fn frame(&self, b: usize) -> FuncId {
        FuncId(self.owner[b].unwrap_or(usize::MAX) as u32)
    }

    /// The state before each bundle; `None` where no path arrives (or everywhere when no fixpoint was reached).
    fn run(&self) -> Vec<Option<State>> {
        let n = self.image.bundles.len();
        let mut states: Vec<Option<State>> = vec![None; n];
        let mut args: Vec<Option<[Value; 5]>> = self
            .funcs
            .iter()
            .map(|f| {
                f.program.then_some([
                    Value::Ctx(Offset::ZERO),
                    Value::Unknown,
                    Value::Unknown,
                    Value::Unknown,
                    Value::Unknown,
                ])
            })
            .collect();
        let mut rets: Vec<Option<Value>> = vec![None; self.funcs.len()];
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            for (f, func) in self.funcs.iter().enumerate() {
                if let Some(a) = args[f] {
                    let entry = State::entry(FuncId(f as u32), a);
                    changed |= join_into(&mut states[func.entry], entry);
                }
            }
            for b in 0..n {
                let Some(st) = states[b].clone() else {
                    continue;
                };
                let out = self.step(b, &st);
                for (s, next) in out.succs {
                    if s < n {
                        changed |= join_into(&mut states[s], next);
                    }
                }
                if let Some((callee, a, mut resume)) = out.call {
                    let joined =
                        args[callee].map_or(a, |old| std::array::from_fn(|i| old[i].join(a[i])));
                    changed |= args[callee] != Some(joined);
                    args[callee] = Some(joined);
                    if let (Some(r), true) = (rets[callee], b + 1 < n) {
                        resume.regs[0] = r;
                        changed |= join_into(&mut states[b + 1], resume);
                    }
                }
                if let (Some(r), Some(f)) = (out.ret, self.owner[b]) {
                    let joined = rets[f].map_or(r, |old| old.join(r));
                    changed |= rets[f] != Some(joined);
                    rets[f] = Some(joined);
                }
            }
            if !changed {
                return states;
            }
        }
        vec![None; n]
    }

    /// One bundle under the bundle semantics.
    fn step(&self, b: usize, pre: &State) -> Outcome {
        let frame = self.frame(b);
        let bundle = &self.image.bundles[b];
        let mut post = pre.clone();
        let mut results: Vec<(u8, Value)> = Vec::new();
        let mut written = 0u16;
        for (_, op) in bundle.ops() {
            if let Some((r, v)) = result(frame, op, pre) {
                results.push((r, v));
                written |= 1 << r;
            }
        }
        if let Some((lane, call)) = bundle.ops().find(|(_, o)| o.is_helper_call()) {
            // a lookup's result is named by its place, so that a null check of one copy refines them all
            let lookup = (b * crate::isa::MAX_LANES + lane) as u32;
            self.helper_effects(frame, call, lookup, pre, &mut post);
            written |= 0b11_1111;
        }
        for (_, op) in bundle.ops().filter(|(_, o)| o.is_store()) {
            store_effect(frame, op, pre, &mut post);
        }
        for (r, v) in results {
            post.regs[r as usize] = v;
        }
        let mut out = Outcome::default();
        let mut fall = post;
        for (_, op) in bundle.ops() {
            if op.is_cond_jump() {
                out.succs
                    .push((op.off as u16 as usize, refine(op, &fall, true, written)));
                fall = refine(op, &fall, false, written);
            } else if op.is_ja() {
                out.succs.push((op.off as u16 as usize, fall));
                return out;
            } else if op.is_exit() {
                out.ret = Some(if op.code == EXIT_IMM {
                    Value::constant(op.imm)
                } else {
                    fall.reg(0)
                });
                return out;
            } else if op.is_local_call() {
                let callee = self.funcs.iter().position(|f| f.entry == op.imm as usize);
                let a = [1, 2, 3, 4, 5].map(|r| fall.reg(r));
                clobber_args(frame, &mut fall);
                for r in 1..=5 {
                    fall.regs[r] = Value::Unknown;
                }
                match callee {
                    Some(c) => out.call = Some((c, a, fall)),
                    None => out.succs.push((b + 1, fall)),
                }
                return out;
            }
        }
        out.succs.push((b + 1, fall));
        out
    }

    /// A helper call: its r0, r1-r5 clobbered, and the stack bytes it writes.
    fn helper_effects(&self, frame: FuncId, call: &Op, lookup: u32, pre: &State, post: &mut State) {
        let id = call.imm as i32;
        let r0 = if id == MAP_LOOKUP_ELEM {
            match pre.reg(1) {
                Value::MapHandle(map) => Value::MapValue {
                    map,
                    off: Offset::ZERO,
                    nullable: true,
                    lookup,
                },
                _ => Value::Unknown,
            }
        } else {
            Value::Scalar(None)
        };
        match helper(id) {
            Some(h) => {
                for w in h.writes {
                    let (ptr, len) = match *w {
                        MemArg::MapKey(p) => (p, self.map_size(pre, |m| m.key_size)),
                        MemArg::MapValue(p) => (p, self.map_size(pre, |m| m.value_size)),
                        MemArg::Sized { ptr, size } => (ptr, scalar(pre.reg(size))),
                    };
                    if let Some(at) = frame_offset(frame, pre.reg(ptr)) {
                        clobber(post, at, len);
                    }
                }
            }
            None => {
                for r in 1..=5 {
                    if let Some(at) = frame_offset(frame, pre.reg(r)) {
                        clobber(post, at, None);
                    }
                }
            }
        }
        for r in 1..=5 {
            post.regs[r] = Value::Unknown;
        }
        post.regs[0] = r0;
    }

    fn map_size(&self, st: &State, field: fn(&crate::isa::MapConfig) -> u32) -> Option<i64> {
        match st.reg(1) {
            Value::MapHandle(m) => self.image.maps.get(m as usize).map(|c| field(c) as i64),
            _ => None,
        }
    }
}

/// The register an op of a bundle writes and its value, from the state before the bundle.
fn result(frame: FuncId, op: &Op, pre: &State) -> Option<(u8, Value)> {
    let class = op.class();
    if op.is_lddw() {
        let v = match op.src {
            0 => Value::constant(op.imm),
            1 | 5 => Value::MapHandle(op.imm as u32),
            2 | 6 => Value::MapValue {
                map: (op.imm & 0xffff_ffff) as u32,
                off: Offset::exact(op.imm >> 32),
                nullable: false,
                lookup: NO_LOOKUP,
            },
            _ => Value::Unknown,
        };
        return Some((op.dst, v));
    }
    if matches!(class, CLASS_ALU | CLASS_ALU64) {
        return Some((op.dst, alu_result(op, pre)));
    }
    if op.is_load() {
        return Some((op.dst, load(frame, op, pre)));
    }
    if is_atomic(op) {
        let imm = op.imm as i32;
        if imm == ATOMIC_CMPXCHG {
            return Some((0, Value::Scalar(None)));
        }
        if imm & ATOMIC_FETCH != 0 {
            return Some((op.src, Value::Scalar(None)));
        }
    }
    None
}

/// Bundles control may reach from bundle `b` within its function (calls resume at the next bundle).
fn control_targets(image: &Image, b: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for (_, op) in image.bundles[b].ops() {
        if op.is_cond_jump() {
            out.push(op.off as u16 as usize);
        } else if op.is_ja() {
            out.push(op.off as u16 as usize);
            return out;
        } else if op.is_exit() {
            return out;
        } else if op.is_local_call() {
            out.push(b + 1);
            return out;
        }
    }
    out.push(b + 1);
    out
}

fn join_into(slot: &mut Option<State>, new: State) -> bool {
    let joined = match slot.as_ref() {
        None => new,
        Some(old) => old.join(&new),
    };
    let changed = slot.as_ref() != Some(&joined);
    *slot = Some(joined);
    changed
}

/// The r10-relative offset `v` points at in the current frame (`Some(None)` when not a constant).
fn frame_offset(frame: FuncId, v: Value) -> Option<Option<i64>> {
    match v {
        Value::Stack { frame: f, off } if f == frame => Some(off.constant()),
        _ => None,
    }
}

fn scalar(v: Value) -> Option<i64> {
    match v {
        Value::Scalar(c) => c,
        _ => None,
    }
}

/// A call the interpretation knows nothing about may write anywhere above a stack pointer it receives.
fn clobber_args(frame: FuncId, st: &mut State) {
    for r in 1..=5 {
        if let Some(at) = frame_offset(frame, st.reg(r)) {
            clobber(st, at, None);
        }
    }
}

/// Forgets the slots overlapping `[at, at + len)` (to the frame's top when `len` is unknown; all when `at` is).
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

fn access_bytes(op: &Op) -> i64 {
    if op.code == LDX6 || op.code == STX6 {
        6
    } else {
        op.access_size() as i64
    }
}

fn load(frame: FuncId, op: &Op, st: &State) -> Value {
    let size = access_bytes(op);
    match st.reg(op.src) {
        Value::Ctx(o) if size == 4 => match o.add(op.off as i64).constant() {
            Some(0) => Value::Packet(Offset::ZERO),
            Some(4) => Value::PacketEnd(Offset::ZERO),
            Some(8) => Value::PacketMeta(Offset::ZERO),
            _ => Value::Scalar(None),
        },
        base => match frame_offset(frame, base) {
            Some(Some(at)) => {
                let at = at + op.off as i64;
                if size == 8 && at.rem_euclid(8) == 0 {
                    return st.slots.get(&at).copied().unwrap_or(Value::Unknown);
                }
                let slot = at.div_euclid(8) * 8;
                let last = (at + size - 1).div_euclid(8) * 8;
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

/// A store's (or atomic's) effect on the frame's spilled slots; the values come from the state before the bundle.
fn store_effect(frame: FuncId, op: &Op, pre: &State, post: &mut State) {
    let Some(at) = frame_offset(frame, pre.reg(op.dst)) else {
        return;
    };
    let at = at.map(|a| a + op.off as i64);
    let v = if is_atomic(op) {
        Value::Scalar(None)
    } else if op.class() == CLASS_ST {
        Value::constant(op.imm)
    } else {
        pre.reg(op.src)
    };
    let Some(at) = at else {
        post.slots.clear();
        return;
    };
    let size = access_bytes(op);
    if size == 8 && at.rem_euclid(8) == 0 {
        if v == Value::Unknown {
            post.slots.remove(&at);
        } else {
            post.slots.insert(at, v);
        }
        return;
    }
    let end = at + size;
    let mut slot = at.div_euclid(8) * 8;
    while slot < end {
        let keeps_zero =
            post.slots.get(&slot) == Some(&Value::constant(0)) && v == Value::constant(0);
        post.slots
            .insert(slot, if keeps_zero { v } else { Value::Scalar(None) });
        slot += 8;
    }
}

/// An ALU op's result (two- or three-operand form), as the region analysis computes it.
fn alu_result(op: &Op, st: &State) -> Value {
    let wide = op.class() == CLASS_ALU64;
    let operation = op.code & 0xf0;
    let x = op.code & SRC_X != 0;
    let b = if x {
        st.reg(op.src)
    } else if wide {
        Value::constant(op.imm)
    } else {
        Value::constant(op.imm as u32 as i64)
    };
    let a = st.reg(op.a.unwrap_or(op.dst));
    match operation {
        ALU_NEG => match a {
            Value::Scalar(Some(c)) => Value::constant(if wide {
                c.wrapping_neg()
            } else {
                c.wrapping_neg() as u32 as i64
            }),
            _ => Value::Scalar(None),
        },
        ALU_END => Value::Scalar(None),
        ALU_MOV if op.off != 0 => Value::Scalar(None),
        _ if !wide => match (operation, a, b) {
            (ALU_MOV, _, Value::Scalar(Some(c))) => Value::constant(c as u32 as i64),
            (_, Value::Scalar(Some(p)), Value::Scalar(Some(q))) if operation != ALU_MOV => {
                fold(operation, p, q)
                    .map_or(Value::Scalar(None), |v| Value::constant(v as u32 as i64))
            }
            _ => Value::Scalar(None),
        },
        ALU_MOV => b,
        _ => match (a, b) {
            (Value::Scalar(Some(p)), Value::Scalar(Some(q))) => {
                fold(operation, p, q).map_or(Value::Scalar(None), Value::constant)
            }
            (p, Value::Scalar(c)) if operation == ALU_ADD && p.is_pointer() => {
                p.offset_by(c).unwrap_or(Value::Unknown)
            }
            (Value::Scalar(c), p) if operation == ALU_ADD && p.is_pointer() => {
                p.offset_by(c).unwrap_or(Value::Unknown)
            }
            (p, Value::Scalar(c)) if operation == ALU_SUB && p.is_pointer() => p
                .offset_by(c.map(i64::wrapping_neg))
                .unwrap_or(Value::Unknown),
            (p, q) if operation == ALU_SUB && p.is_pointer() && q.is_pointer() => {
                Value::Scalar(None)
            }
            (Value::Scalar(_), Value::Scalar(_)) => Value::Scalar(None),
            (p, Value::Unknown) if p.is_pointer() && matches!(operation, ALU_ADD | ALU_SUB) => {
                p.offset_by(None).unwrap_or(Value::Unknown)
            }
            _ => Value::Unknown,
        },
    }
}

/// Constant folding of the operations clang builds constants and offsets with.
fn fold(operation: u8, x: i64, y: i64) -> Option<i64> {
    Some(match operation {
        ALU_ADD => x.wrapping_add(y),
        ALU_SUB => x.wrapping_sub(y),
        ALU_MUL => x.wrapping_mul(y),
        ALU_AND => x & y,
        ALU_OR => x | y,
        ALU_XOR => x ^ y,
        ALU_LSH => x.wrapping_shl(y as u32),
        ALU_RSH => ((x as u64).wrapping_shr(y as u32)) as i64,
        ALU_ARSH => x.wrapping_shr(y as u32),
        _ => return None,
    })
}

/// The state on one side of conditional jump `op`: a null check of a map-value pointer, or equality with a
/// constant, refines the compared register (unless the bundle also wrote it: the jump compared the old value).
fn refine(op: &Op, st: &State, taken: bool, written: u16) -> State {
    let mut out = st.clone();
    let cond = op.code & 0xf0;
    if op.class() != CLASS_JMP
        || op.code & SRC_X != 0
        || !matches!(cond, JMP_JEQ | JMP_JNE)
        || written & (1 << op.dst) != 0
    {
        return out;
    }
    let equal_side = (cond == JMP_JEQ) == taken;
    let c = op.imm;
    match st.reg(op.dst) {
        Value::MapValue {
            nullable: true,
            lookup,
            ..
        } if c == 0 => {
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
            let same = |v: &Value| matches!(*v, Value::MapValue { nullable: true, lookup: l, .. } if lookup != NO_LOOKUP && l == lookup);
            out.regs[op.dst as usize] = refined(out.regs[op.dst as usize]);
            for v in out.regs.iter_mut().chain(out.slots.values_mut()) {
                if same(v) {
                    *v = refined(*v);
                }
            }
        }
        Value::Scalar(None) if equal_side => out.regs[op.dst as usize] = Value::constant(c),
        _ => {}
    }
    out
}
