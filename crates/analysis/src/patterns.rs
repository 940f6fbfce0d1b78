//! Instructions a hardware backend can drop (section 3.1 of the hXDP paper): packet bounds checks, which the
//! hardware enforces itself, and stack zeroing, which a frame zeroed at program start makes redundant.

use crate::value::{Offset, Value};
use crate::{FuncId, InsnId, ProgramCfg, Regions};
use hwxdp_ebpf::{InsnKind, JmpCond, Source, Width};
use std::fmt;

/// A side of a conditional jump.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BranchSide {
    /// The jump is taken.
    Taken,
    /// Execution falls through.
    Fallthrough,
}

/// Which packet pointer a bounds check compares with which limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckedArea {
    /// `data + N` against `data_end`.
    Packet,
    /// `data_meta + N` against `data`.
    Meta,
}

/// `if data + N > data_end goto fail` and its variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BoundsCheck {
    /// The conditional jump.
    pub insn: InsnId,
    /// What is checked.
    pub area: CheckedArea,
    /// The register holding `data + N` (or `data_meta + N`).
    pub pointer: u8,
    /// The register holding the limit (`data_end`, or `data` for the metadata).
    pub limit: u8,
    /// N: the constant part of the pointer's offset.
    pub n: i64,
    /// Whether the pointer also has an offset unknown at compile time (`data + (ihl * 4) + N`).
    pub variable: bool,
    /// The side taken when the packet is too short.
    pub fail: BranchSide,
    /// Bytes after the pointer's base known to be in the packet on the other side: N for `>`/`<=`, N + 1 for
    /// `>=`/`<`.
    pub ensured: i64,
}

/// A run of stores of zero to the stack (`struct x = {0}`, `memset`), covering `[lo, hi)` of `frame`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ZeroRun {
    /// The stores, in program order.
    pub stores: Vec<InsnId>,
    /// The frame stored to.
    pub frame: FuncId,
    /// Lowest r10-relative offset covered.
    pub lo: i64,
    /// One past the highest offset covered.
    pub hi: i64,
}

/// Bounds checks and stack zeroing of a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patterns {
    /// Recognised packet bounds checks, in instruction order.
    pub bounds_checks: Vec<BoundsCheck>,
    /// Runs of zero stores to the stack, in instruction order: stores in one block, adjacent or overlapping in the
    /// frame, with nothing but register arithmetic between them.
    pub zero_runs: Vec<ZeroRun>,
}

impl Patterns {
    /// Recognises the patterns from the pointer types of `regions`.
    pub fn compute(prog: &ProgramCfg, regions: &Regions) -> Self {
        let mut bounds_checks = Vec::new();
        let mut zero_runs = Vec::new();
        for cfg in &prog.funcs {
            for b in cfg.block_ids() {
                let mut run: Option<ZeroRun> = None;
                for i in cfg.block(b).insns() {
                    let k = &prog.kinds[i.index()];
                    let Some(st) = regions.state_before(i) else {
                        continue;
                    };
                    if let Some(check) = bounds_check(i, k, &|r| st.reg(r)) {
                        bounds_checks.push(check);
                    }
                    if let Some((lo, hi)) = zero_store(k, &|r| st.reg(r), cfg.func) {
                        match &mut run {
                            Some(r) if lo <= r.hi && hi >= r.lo => {
                                r.stores.push(i);
                                r.lo = r.lo.min(lo);
                                r.hi = r.hi.max(hi);
                            }
                            _ => {
                                zero_runs.extend(run.take());
                                run = Some(ZeroRun {
                                    stores: vec![i],
                                    frame: cfg.func,
                                    lo,
                                    hi,
                                });
                            }
                        }
                    } else if !matches!(
                        k,
                        InsnKind::Alu { .. }
                            | InsnKind::Neg { .. }
                            | InsnKind::MovSx { .. }
                            | InsnKind::Endian { .. }
                            | InsnKind::LoadImm64 { .. }
                    ) {
                        zero_runs.extend(run.take());
                    }
                }
                zero_runs.extend(run);
            }
        }
        Patterns {
            bounds_checks,
            zero_runs,
        }
    }
}

/// Recognises `k` as a packet bounds check, given the values of the registers before it.
pub fn bounds_check(insn: InsnId, k: &InsnKind, reg: &dyn Fn(u8) -> Value) -> Option<BoundsCheck> {
    let InsnKind::Branch {
        cond,
        dst,
        src: Source::Reg(src),
        ..
    } = *k
    else {
        return None;
    };
    let classify = |ptr: Value, limit: Value| match (ptr, limit) {
        (Value::Packet(o), Value::PacketEnd(Offset::ZERO)) => Some((CheckedArea::Packet, o)),
        (Value::PacketMeta(o), Value::Packet(Offset::ZERO)) => Some((CheckedArea::Meta, o)),
        _ => None,
    };
    // Normalise to `pointer cond limit`.
    let (area, off, pointer, limit, cond) = if let Some((area, o)) = classify(reg(dst), reg(src)) {
        (area, o, dst, src, cond)
    } else {
        let (area, o) = classify(reg(src), reg(dst))?;
        let swapped = match cond {
            JmpCond::Gt => JmpCond::Lt,
            JmpCond::Ge => JmpCond::Le,
            JmpCond::Lt => JmpCond::Gt,
            JmpCond::Le => JmpCond::Ge,
            _ => return None,
        };
        (area, o, src, dst, swapped)
    };
    let n = off.konst;
    let (fail, ensured) = match cond {
        JmpCond::Gt => (BranchSide::Taken, n),
        JmpCond::Ge => (BranchSide::Taken, n + 1),
        JmpCond::Lt => (BranchSide::Fallthrough, n + 1),
        JmpCond::Le => (BranchSide::Fallthrough, n),
        _ => return None,
    };
    Some(BoundsCheck {
        insn,
        area,
        pointer,
        limit,
        n,
        variable: off.variable,
        fail,
        ensured,
    })
}

/// The bytes `[lo, hi)` of `frame` that `k` sets to zero, if it is a store of zero at a constant offset.
pub fn zero_store(k: &InsnKind, reg: &dyn Fn(u8) -> Value, frame: FuncId) -> Option<(i64, i64)> {
    let InsnKind::Store {
        size,
        base,
        off,
        src,
    } = *k
    else {
        return None;
    };
    let zero = match src {
        Source::Imm(i) => i == 0,
        Source::Reg(r) => reg(r) == Value::constant(0),
    };
    match reg(base) {
        Value::Stack { frame: f, off: o } if zero && f == frame => {
            let lo = o.constant()? + off as i64;
            Some((lo, lo + Width::bytes(size) as i64))
        }
        _ => None,
    }
}

impl fmt::Display for BoundsCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (base, limit) = match self.area {
            CheckedArea::Packet => ("data", "data_end"),
            CheckedArea::Meta => ("data_meta", "data"),
        };
        let var = if self.variable { " + ?" } else { "" };
        let fail = match self.fail {
            BranchSide::Taken => "taken",
            BranchSide::Fallthrough => "fallthrough",
        };
        write!(
            f,
            "{}: r{} = {base}{var} + {} vs r{} = {limit}; fails when {fail}; ensures {} bytes",
            self.insn, self.pointer, self.n, self.limit, self.ensured
        )
    }
}

impl fmt::Display for ZeroRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stores: Vec<String> = self.stores.iter().map(|s| s.to_string()).collect();
        write!(
            f,
            "{} stack[{},{}) by {}",
            self.frame,
            self.lo,
            self.hi,
            stores.join(",")
        )
    }
}
