//! Stack liveness at byte granularity: which bytes of a function's frame hold a value a later instruction reads
//! (eHDL's state pruning, section 3 of its paper).

use crate::helpers::{helper, MemArg};
use crate::regions::Regions;
use crate::value::{State, Value};
use crate::{FuncId, InsnId, ProgramCfg};
use hwxdp_ebpf::{CallKind, InsnKind, Width, STACK_SIZE};
use hwxdp_object::MapSpec;
use std::fmt;

/// A set of bytes of one stack frame, by r10-relative offset (-512 to -1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct StackBytes(pub [u64; STACK_SIZE / 64]);

impl StackBytes {
    /// No byte.
    pub const EMPTY: StackBytes = StackBytes([0; STACK_SIZE / 64]);
    /// The whole frame.
    pub const ALL: StackBytes = StackBytes([u64::MAX; STACK_SIZE / 64]);

    /// The bytes `[lo, hi)` (r10-relative), clipped to the frame.
    pub fn range(lo: i64, hi: i64) -> StackBytes {
        let mut out = StackBytes::EMPTY;
        let lo = lo.max(-(STACK_SIZE as i64));
        let hi = hi.min(0);
        for off in lo..hi {
            let bit = (off + STACK_SIZE as i64) as usize;
            out.0[bit / 64] |= 1 << (bit % 64);
        }
        out
    }

    /// Bytes in either set.
    pub fn union(self, other: StackBytes) -> StackBytes {
        StackBytes(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    /// Bytes in `self` but not in `other`.
    pub fn minus(self, other: StackBytes) -> StackBytes {
        StackBytes(std::array::from_fn(|i| self.0[i] & !other.0[i]))
    }

    /// Whether the byte at r10-relative `off` is in the set.
    pub fn contains(self, off: i64) -> bool {
        let bit = off + STACK_SIZE as i64;
        (0..STACK_SIZE as i64).contains(&bit) && self.0[bit as usize / 64] & (1 << (bit % 64)) != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// Maximal runs `[lo, hi)` of bytes in the set, ascending.
    pub fn runs(self) -> Vec<(i64, i64)> {
        let mut out: Vec<(i64, i64)> = Vec::new();
        for off in -(STACK_SIZE as i64)..0 {
            if !self.contains(off) {
                continue;
            }
            match out.last_mut() {
                Some((_, hi)) if *hi == off => *hi = off + 1,
                _ => out.push((off, off + 1)),
            }
        }
        out
    }
}

impl fmt::Display for StackBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let runs = self.runs();
        if runs.is_empty() {
            return f.write_str("-");
        }
        let text: Vec<String> = runs.iter().map(|(lo, hi)| format!("[{lo},{hi})")).collect();
        f.write_str(&text.join(" "))
    }
}

/// Live stack bytes of each function's own frame before and after every instruction and at block boundaries.
///
/// Accesses at a constant r10-relative offset read or write exactly their bytes; an access at an unknown offset
/// reads the whole frame and writes nothing for certain. A helper reads the keys, values and sized buffers it is
/// known to read ([`crate::helpers::HELPERS`]); any other call reads everything from each stack pointer it receives
/// to the top of the frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackLiveness {
    /// Bytes each instruction reads from its function's frame.
    pub uses: Vec<StackBytes>,
    /// Bytes each instruction certainly overwrites.
    pub defs: Vec<StackBytes>,
    /// Live before each instruction.
    pub insn_in: Vec<StackBytes>,
    /// Live after each instruction.
    pub insn_out: Vec<StackBytes>,
    /// Live at the start of each block, by function then block.
    pub block_in: Vec<Vec<StackBytes>>,
}

impl StackLiveness {
    /// Stack liveness from the pointer types of `regions`; `maps` give key and value sizes (may be empty).
    pub fn compute(prog: &ProgramCfg, regions: &Regions, maps: &[MapSpec]) -> Self {
        let n = prog.kinds.len();
        let mut uses = vec![StackBytes::EMPTY; n];
        let mut defs = vec![StackBytes::EMPTY; n];
        for cfg in &prog.funcs {
            for i in cfg.start.index()..cfg.end.index() {
                if let Some(st) = regions.state_before(InsnId::new(i)) {
                    let (u, d) = effects(&prog.kinds[i], st, cfg.func, maps);
                    uses[i] = u;
                    defs[i] = d;
                }
            }
        }
        let mut out = StackLiveness {
            uses,
            defs,
            insn_in: vec![StackBytes::EMPTY; n],
            insn_out: vec![StackBytes::EMPTY; n],
            block_in: prog
                .funcs
                .iter()
                .map(|f| vec![StackBytes::EMPTY; f.blocks.len()])
                .collect(),
        };
        for cfg in &prog.funcs {
            let fi = cfg.func.index();
            let mut changed = true;
            while changed {
                changed = false;
                for b in cfg.block_ids().rev() {
                    let block = cfg.block(b);
                    let mut live = block.succs.iter().fold(StackBytes::EMPTY, |acc, (s, _)| {
                        acc.union(out.block_in[fi][s.index()])
                    });
                    for i in block.insns().rev() {
                        out.insn_out[i.index()] = live;
                        live = live.minus(out.defs[i.index()]).union(out.uses[i.index()]);
                        out.insn_in[i.index()] = live;
                    }
                    if out.block_in[fi][b.index()] != live {
                        out.block_in[fi][b.index()] = live;
                        changed = true;
                    }
                }
            }
        }
        out
    }

    /// Live before `insn`.
    pub fn live_in(&self, insn: InsnId) -> StackBytes {
        self.insn_in[insn.index()]
    }
}

/// The bytes of `frame` that `k` reads and certainly writes, given the state before it.
fn effects(k: &InsnKind, st: &State, frame: FuncId, maps: &[MapSpec]) -> (StackBytes, StackBytes) {
    let own = |v: Value| match v {
        Value::Stack { frame: f, off } if f == frame => Some(off.constant()),
        _ => None,
    };
    let access = |base: u8, off: i16, size: Width| -> Option<Option<(i64, i64)>> {
        own(st.reg(base))?.map_or(Some(None), |at| {
            let lo = at + off as i64;
            Some(Some((lo, lo + size.bytes() as i64)))
        })
    };
    let read_to_top = |v: Value| match own(v) {
        Some(Some(at)) => StackBytes::range(at, 0),
        Some(None) => StackBytes::ALL,
        None => StackBytes::EMPTY,
    };
    let none = StackBytes::EMPTY;
    match *k {
        InsnKind::Load {
            size, base, off, ..
        } => match access(base, off, size) {
            Some(Some((lo, hi))) => (StackBytes::range(lo, hi), none),
            Some(None) => (StackBytes::ALL, none),
            None => (none, none),
        },
        InsnKind::Store {
            size, base, off, ..
        } => match access(base, off, size) {
            Some(Some((lo, hi))) => (none, StackBytes::range(lo, hi)),
            _ => (none, none),
        },
        InsnKind::Atomic {
            size, base, off, ..
        } => match access(base, off, size) {
            Some(Some((lo, hi))) => (StackBytes::range(lo, hi), none),
            Some(None) => (StackBytes::ALL, none),
            None => (none, none),
        },
        InsnKind::Call {
            kind: CallKind::Helper,
            imm,
        } if helper(imm).is_some() => {
            let h = helper(imm).map_or(&[][..], |h| h.reads);
            let map_size = |field: fn(&MapSpec) -> u32| match st.reg(1) {
                Value::MapHandle(m) => maps.get(m as usize).map(|m| field(m) as i64),
                _ => None,
            };
            let mut used = none;
            for arg in h {
                let (ptr, len) = match *arg {
                    MemArg::MapKey(p) => (p, map_size(|m| m.key_size)),
                    MemArg::MapValue(p) => (p, map_size(|m| m.value_size)),
                    MemArg::Sized { ptr, size } => match st.reg(size) {
                        Value::Scalar(Some(c)) => (ptr, Some(c)),
                        _ => (ptr, None),
                    },
                };
                used = used.union(match (own(st.reg(ptr)), len) {
                    (Some(Some(at)), Some(len)) => StackBytes::range(at, at.saturating_add(len)),
                    _ => read_to_top(st.reg(ptr)),
                });
            }
            (used, none)
        }
        InsnKind::Call { .. } | InsnKind::CallReg { .. } => {
            let used = (1..=5).fold(none, |acc, r| acc.union(read_to_top(st.reg(r))));
            (used, none)
        }
        _ => (none, none),
    }
}
