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
    /// Reaching definitions of every function, from the register effects in `live`.
    pub fn compute(prog: &ProgramCfg, live: &Liveness) -> Self {
        let mut uses = vec![Vec::new(); prog.kinds.len()];
        for cfg in &prog.funcs {
            let mut defs: Vec<Def> = (0..11).map(Def::Entry).collect();
            for i in cfg.start.index()..cfg.end.index() {
                defs.extend(
                    live.effects[i]
                        .defs
                        .iter()
                        .map(|r| Def::Insn(InsnId::new(i), r)),
                );
            }
            let words = defs.len().div_ceil(64);
            let of_reg: Vec<Vec<usize>> = (0..11u8)
                .map(|r| (0..defs.len()).filter(|&d| defs[d].reg() == r).collect())
                .collect();
            let first_def_of_insn = |i: usize| {
                defs.partition_point(|d| match d {
                    Def::Entry(_) => true,
                    Def::Insn(at, _) => at.index() < i,
                })
            };
            // Applies one instruction to a reaching set: its definitions replace those of the same registers.
            let apply = |set: &mut Vec<u64>, i: usize| {
                let first = first_def_of_insn(i);
                for r in live.effects[i].defs.iter() {
                    for &d in &of_reg[r as usize] {
                        set[d / 64] &= !(1 << (d % 64));
                    }
                }
                let mut d = first;
                while d < defs.len() && matches!(defs[d], Def::Insn(at, _) if at.index() == i) {
                    set[d / 64] |= 1 << (d % 64);
                    d += 1;
                }
            };
            let mut block_in = vec![vec![0u64; words]; cfg.blocks.len()];
            for d in 0..11 {
                block_in[0][d / 64] |= 1 << (d % 64);
            }
            let order = cfg.reverse_postorder();
            let mut changed = true;
            while changed {
                changed = false;
                for &b in &order {
                    let mut set = block_in[b.index()].clone();
                    for i in cfg.block(b).insns() {
                        apply(&mut set, i.index());
                    }
                    for (s, _) in &cfg.block(b).succs {
                        let target = &mut block_in[s.index()];
                        for (t, w) in target.iter_mut().zip(&set) {
                            if *t | w != *t {
                                *t |= w;
                                changed = true;
                            }
                        }
                    }
                }
            }
            for &b in &order {
                let mut set = block_in[b.index()].clone();
                for i in cfg.block(b).insns() {
                    let i = i.index();
                    uses[i] = live.effects[i]
                        .uses
                        .iter()
                        .map(|r| {
                            let reaching = of_reg[r as usize]
                                .iter()
                                .filter(|&&d| set[d / 64] & (1 << (d % 64)) != 0)
                                .map(|&d| defs[d])
                                .collect();
                            (r, reaching)
                        })
                        .collect();
                    apply(&mut set, i);
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
