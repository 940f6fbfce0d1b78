//! Reaching definitions of registers.

use crate::{InsnId, Liveness, ProgramCfg};
use std::fmt;

/// A definition of a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Def {
    /// The value the register holds when the function starts.
    Entry(u8),
    /// Written by an instruction (for calls, also the clobbered r1-r5).
    Insn(InsnId, u8),
}

impl Def {
    /// The register defined.
    pub const fn reg(self) -> u8 {
        match self {
            Def::Entry(r) | Def::Insn(_, r) => r,
        }
    }
}

impl fmt::Display for Def {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Def::Entry(_) => f.write_str("entry"),
            Def::Insn(i, _) => write!(f, "{i}"),
        }
    }
}

/// For every register an instruction reads, the definitions that may reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReachingDefs {
    /// Per instruction, per register read (ascending), the reaching definitions (ascending).
    pub uses: Vec<Vec<(u8, Vec<Def>)>>,
}

impl ReachingDefs {
    /// Reaching definitions of every function, from the register effects in `live`. Time near-linear on
    /// straight-line code: blocks are summarized by their last definition of each register, and a read sees the
    /// block's own last definition or (before one) the definitions reaching the block, found once per block and
    /// register.
    pub fn compute(prog: &ProgramCfg, live: &Liveness) -> Self {
        let mut uses = vec![Vec::new(); prog.kinds.len()];
        for cfg in &prog.funcs {
            let defs = FuncDefs::of(cfg, live);
            let block_in = defs.block_in(cfg);
            for &b in &cfg.reverse_postorder() {
                // Per register: the block's latest definition so far, else what reaches the block (found once).
                let mut local: [Option<usize>; 11] = [None; 11];
                let mut incoming: [Option<Vec<Def>>; 11] = Default::default();
                for i in cfg.block(b).insns() {
                    let i = i.index();
                    uses[i] = live.effects[i]
                        .uses
                        .iter()
                        .map(|r| {
                            let reaching = match local[r as usize] {
                                Some(d) => vec![defs.defs[d]],
                                None => incoming[r as usize]
                                    .get_or_insert_with(|| defs.reaching(&block_in[b.index()], r))
                                    .clone(),
                            };
                            (r, reaching)
                        })
                        .collect();
                    for (r, d) in defs.of_insn(i) {
                        local[r as usize] = Some(d);
                    }
                }
            }
        }
        ReachingDefs { uses }
    }

    /// The definitions of `reg` that reach `insn`, if `insn` reads `reg`.
    pub fn reaching(&self, insn: InsnId, reg: u8) -> Option<&[Def]> {
        self.uses
            .get(insn.index())?
            .iter()
            .find(|(r, _)| *r == reg)
            .map(|(_, d)| d.as_slice())
    }
}

/// The definitions of one function, grouped by register (each register's in instruction order, its entry value
/// first), so that a set of definitions is a bit set whose registers are word ranges.
struct FuncDefs {
    /// Every definition, by register then instruction.
    defs: Vec<Def>,
    /// Per register, the range of `defs` holding its definitions.
    of_reg: [std::ops::Range<usize>; 11],
    /// Per instruction of the function (from its start), its definitions' indices in `defs` with their registers.
    at_insn: Vec<Vec<(u8, usize)>>,
    /// The function's first instruction.
    start: usize,
    /// Per block, its last definition of each register.
    block_last: Vec<[Option<usize>; 11]>,
}

impl FuncDefs {
    fn of(cfg: &crate::Cfg, live: &Liveness) -> FuncDefs {
        let start = cfg.start.index();
        let mut by_reg: [Vec<Def>; 11] = Default::default();
        for (r, list) in by_reg.iter_mut().enumerate() {
            list.push(Def::Entry(r as u8));
        }
        for i in start..cfg.end.index() {
            for r in live.effects[i].defs.iter() {
                by_reg[r as usize].push(Def::Insn(InsnId::new(i), r));
            }
        }
        let mut defs = Vec::new();
        let of_reg = std::array::from_fn(|r| {
            let first = defs.len();
            defs.extend_from_slice(&by_reg[r]);
            first..defs.len()
        });
        let mut at_insn = vec![Vec::new(); cfg.end.index() - start];
        for (d, def) in defs.iter().enumerate() {
            if let Def::Insn(at, r) = *def {
                at_insn[at.index() - start].push((r, d));
            }
        }
        let mut this = FuncDefs {
            defs,
            of_reg,
            at_insn,
            start,
            block_last: Vec::new(),
        };
        this.block_last = cfg
            .blocks
            .iter()
            .map(|block| {
                let mut last = [None; 11];
                for i in block.insns() {
                    for (r, d) in this.of_insn(i.index()) {
                        last[r as usize] = Some(d);
                    }
                }
                last
            })
            .collect();
        this
    }

    /// The definitions instruction `i` makes: (register, index in `defs`).
    fn of_insn(&self, i: usize) -> impl Iterator<Item = (u8, usize)> + '_ {
        self.at_insn[i - self.start].iter().copied()
    }

    /// The definitions reaching each block's start, by iteration to a fixpoint in reverse postorder.
    fn block_in(&self, cfg: &crate::Cfg) -> Vec<Vec<u64>> {
        let words = self.defs.len().div_ceil(64);
        let mut block_in = vec![vec![0u64; words]; cfg.blocks.len()];
        for range in &self.of_reg {
            set_bit(&mut block_in[0], range.start);
        }
        let order = cfg.reverse_postorder();
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &order {
                let mut set = block_in[b.index()].clone();
                // The block's own last definition of a register replaces every other one of it.
                for (r, last) in self.block_last[b.index()].iter().enumerate() {
                    if let Some(d) = *last {
                        clear_range(&mut set, self.of_reg[r].clone());
                        set_bit(&mut set, d);
                    }
                }
                for (s, _) in &cfg.block(b).succs {
                    for (t, w) in block_in[s.index()].iter_mut().zip(&set) {
                        if *t | w != *t {
                            *t |= w;
                            changed = true;
                        }
                    }
                }
            }
        }
        block_in
    }

    /// The definitions of `reg` in `set`, ascending.
    fn reaching(&self, set: &[u64], reg: u8) -> Vec<Def> {
        let range = self.of_reg[reg as usize].clone();
        let mut out = Vec::new();
        let mut d = range.start;
        while d < range.end {
            let word = set[d / 64] >> (d % 64);
            if word == 0 {
                d = (d / 64 + 1) * 64;
                continue;
            }
            d += word.trailing_zeros() as usize;
            if d < range.end {
                out.push(self.defs[d]);
            }
            d += 1;
        }
        out
    }
}

fn set_bit(set: &mut [u64], d: usize) {
    set[d / 64] |= 1 << (d % 64);
}

/// Clears bits `range` of `set`, a word at a time.
fn clear_range(set: &mut [u64], range: std::ops::Range<usize>) {
    let mut d = range.start;
    while d < range.end {
        let bits = (64 - d % 64).min(range.end - d);
        let mask = if bits == 64 {
            u64::MAX
        } else {
            ((1u64 << bits) - 1) << (d % 64)
        };
        set[d / 64] &= !mask;
        d += bits;
    }
}
