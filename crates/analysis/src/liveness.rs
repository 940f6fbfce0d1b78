//! Register liveness: which of r0-r10 hold a value some later instruction reads.

use crate::effects::{reg_effects, RegEffects, CALLER_SAVED};
use crate::{FuncId, InsnId, ProgramCfg};
use std::fmt;

/// A set of registers r0-r10, one bit each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct RegSet(pub u16);

impl RegSet {
    /// No register.
    pub const EMPTY: RegSet = RegSet(0);

    /// r1 to r`n` (at most r5): the arguments of a call taking `n` of them.
    pub const fn args(n: u8) -> RegSet {
        let n = if n > 5 { 5 } else { n };
        RegSet(((1u16 << n) - 1) << 1)
    }

    /// Adds `reg`.
    pub fn insert(&mut self, reg: u8) {
        self.0 |= 1 << reg;
    }

    /// Removes `reg`.
    pub fn remove(&mut self, reg: u8) {
        self.0 &= !(1 << reg);
    }

    /// Whether `reg` is in the set.
    pub const fn contains(self, reg: u8) -> bool {
        self.0 & (1 << reg) != 0
    }

    /// Registers in either set.
    pub const fn union(self, other: RegSet) -> RegSet {
        RegSet(self.0 | other.0)
    }

    /// Registers in `self` but not in `other`.
    pub const fn minus(self, other: RegSet) -> RegSet {
        RegSet(self.0 & !other.0)
    }

    /// Registers in both sets.
    pub const fn intersect(self, other: RegSet) -> RegSet {
        RegSet(self.0 & other.0)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The registers, ascending.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (0..11u8).filter(move |&r| self.contains(r))
    }
}

impl fmt::Display for RegSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        let names: Vec<String> = self.iter().map(|r| format!("r{r}")).collect();
        f.write_str(&names.join(","))
    }
}

/// Live registers before and after every instruction and at the boundaries of every block.
///
/// Helper calls read r1 to r`n` by the helper's arity ([`crate::helpers::arity`]); bpf-to-bpf calls read the
/// argument registers live at the callee's entry; both write r0 and clobber r1-r5. `exit` reads r0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Liveness {
    /// Registers each instruction reads and writes.
    pub effects: Vec<RegEffects>,
    /// Live before each instruction, by [`InsnId`].
    pub insn_in: Vec<RegSet>,
    /// Live after each instruction.
    pub insn_out: Vec<RegSet>,
    /// Live at the start of each block, by function then block.
    pub block_in: Vec<Vec<RegSet>>,
    /// Live at the end of each block.
    pub block_out: Vec<Vec<RegSet>>,
    /// The argument registers (among r1-r5) each function reads, by [`FuncId`].
    pub func_args: Vec<RegSet>,
}

impl Liveness {
    /// Liveness of every function, callees first so that calls know their callees' arguments.
    pub fn compute(prog: &ProgramCfg) -> Self {
        let n = prog.kinds.len();
        let mut live = Liveness {
            effects: vec![RegEffects::default(); n],
            insn_in: vec![RegSet::EMPTY; n],
            insn_out: vec![RegSet::EMPTY; n],
            block_in: prog
                .funcs
                .iter()
                .map(|f| vec![RegSet::EMPTY; f.blocks.len()])
                .collect(),
            block_out: prog
                .funcs
                .iter()
                .map(|f| vec![RegSet::EMPTY; f.blocks.len()])
                .collect(),
            func_args: vec![CALLER_SAVED; prog.funcs.len()],
        };
        for f in prog.callees_first() {
            live.compute_func(prog, f);
        }
        live
    }

    fn compute_func(&mut self, prog: &ProgramCfg, f: FuncId) {
        let cfg = prog.func(f);
        for i in cfg.start.index()..cfg.end.index() {
            let args = prog
                .callee_at(InsnId::new(i))
                .map_or(CALLER_SAVED, |c| self.func_args[c.index()]);
            self.effects[i] = reg_effects(&prog.kinds[i], args);
        }
        let fi = f.index();
        let mut changed = true;
        while changed {
            changed = false;
            for b in cfg.block_ids().rev() {
                let block = cfg.block(b);
                let out = block.succs.iter().fold(RegSet::EMPTY, |acc, (s, _)| {
                    acc.union(self.block_in[fi][s.index()])
                });
                let mut live = out;
                for i in block.insns().rev() {
                    let e = self.effects[i.index()];
                    self.insn_out[i.index()] = live;
                    live = live.minus(e.defs).union(e.uses);
                    self.insn_in[i.index()] = live;
                }
                self.block_out[fi][b.index()] = out;
                if self.block_in[fi][b.index()] != live {
                    self.block_in[fi][b.index()] = live;
                    changed = true;
                }
            }
        }
        self.func_args[fi] = self.block_in[fi][0].intersect(CALLER_SAVED);
    }

    /// Live before `insn`.
    pub fn live_in(&self, insn: InsnId) -> RegSet {
        self.insn_in[insn.index()]
    }

    /// Live after `insn`.
    pub fn live_out(&self, insn: InsnId) -> RegSet {
        self.insn_out[insn.index()]
    }
}
