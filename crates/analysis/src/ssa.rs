//! SSA form of the registers: phi functions placed on iterated dominance frontiers where the register is live,
//! and every definition and use numbered with a version (version 0 is the value at function entry).

use crate::{BlockId, DomTree, InsnId, Liveness, ProgramCfg};
use hwxdp_ebpf::disasm::format_kind;
use std::fmt::Write;

/// A phi function at the start of a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phi {
    /// The register.
    pub reg: u8,
    /// The version the phi defines.
    pub version: u32,
    /// The incoming version from each reachable predecessor, ascending by block.
    pub args: Vec<(BlockId, u32)>,
}

/// Versioned registers of a whole program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ssa {
    /// Phis per function, per block.
    pub phis: Vec<Vec<Vec<Phi>>>,
    /// Per instruction, the versions of the registers it reads, ascending by register.
    pub uses: Vec<Vec<(u8, u32)>>,
    /// Per instruction, the versions it defines, ascending by register.
    pub defs: Vec<Vec<(u8, u32)>>,
}

impl Ssa {
    /// Builds SSA form from the register effects and block liveness of `live`; unreachable blocks get no versions.
    pub fn compute(prog: &ProgramCfg, live: &Liveness) -> Self {
        let n = prog.kinds.len();
        let mut ssa = Ssa {
            phis: Vec::with_capacity(prog.funcs.len()),
            uses: vec![Vec::new(); n],
            defs: vec![Vec::new(); n],
        };
        for cfg in &prog.funcs {
            let fi = cfg.func.index();
            let dom = DomTree::dominators(cfg);
            let df = dom.frontiers(cfg);
            let nb = cfg.blocks.len();
            // Phi placement.
            let mut phi_regs: Vec<Vec<u8>> = vec![Vec::new(); nb];
            for r in 0..11u8 {
                let mut work: Vec<BlockId> = cfg
                    .block_ids()
                    .filter(|b| cfg.reachable[b.index()])
                    .filter(|b| {
                        cfg.block(*b)
                            .insns()
                            .any(|i| live.effects[i.index()].defs.contains(r))
                    })
                    .collect();
                let mut placed = vec![false; nb];
                let mut queued = vec![false; nb];
                for b in &work {
                    queued[b.index()] = true;
                }
                while let Some(b) = work.pop() {
                    for &y in &df[b.index()] {
                        if placed[y.index()] || !live.block_in[fi][y.index()].contains(r) {
                            continue;
                        }
                        placed[y.index()] = true;
                        phi_regs[y.index()].push(r);
                        if !queued[y.index()] {
                            queued[y.index()] = true;
                            work.push(y);
                        }
                    }
                }
            }
            let mut phis: Vec<Vec<Phi>> = phi_regs
                .iter()
                .map(|regs| {
                    let mut regs = regs.clone();
                    regs.sort();
                    regs.into_iter()
                        .map(|reg| Phi {
                            reg,
                            version: 0,
                            args: Vec::new(),
                        })
                        .collect()
                })
                .collect();
            // Renaming, by a walk of the dominator tree.
            let mut children: Vec<Vec<BlockId>> = vec![Vec::new(); nb];
            for b in cfg.block_ids() {
                if let Some(d) = dom.idom(b) {
                    children[d.index()].push(b);
                }
            }
            let mut next = [1u32; 11];
            let mut stacks: Vec<Vec<u32>> = vec![vec![0]; 11];
            enum Step {
                Enter(BlockId),
                Leave(Vec<u8>),
            }
            let mut work = vec![Step::Enter(crate::Cfg::ENTRY)];
            while let Some(step) = work.pop() {
                let b = match step {
                    Step::Leave(pushed) => {
                        for r in pushed {
                            stacks[r as usize].pop();
                        }
                        continue;
                    }
                    Step::Enter(b) => b,
                };
                let mut pushed = Vec::new();
                for phi in &mut phis[b.index()] {
                    phi.version = next[phi.reg as usize];
                    next[phi.reg as usize] += 1;
                    stacks[phi.reg as usize].push(phi.version);
                    pushed.push(phi.reg);
                }
                for i in cfg.block(b).insns() {
                    let e = live.effects[i.index()];
                    let top = |r: u8| stacks[r as usize].last().copied().unwrap_or(0);
                    ssa.uses[i.index()] = e.uses.iter().map(|r| (r, top(r))).collect();
                    let mut defs = Vec::new();
                    for r in e.defs.iter() {
                        let v = next[r as usize];
                        next[r as usize] += 1;
                        stacks[r as usize].push(v);
                        pushed.push(r);
                        defs.push((r, v));
                    }
                    ssa.defs[i.index()] = defs;
                }
                let mut succs: Vec<BlockId> = cfg.block(b).succs.iter().map(|(s, _)| *s).collect();
                succs.dedup();
                for s in succs {
                    for phi in &mut phis[s.index()] {
                        let v = stacks[phi.reg as usize].last().copied().unwrap_or(0);
                        if !phi.args.iter().any(|(p, _)| *p == b) {
                            phi.args.push((b, v));
                        }
                    }
                }
                work.push(Step::Leave(pushed));
                for &c in children[b.index()].iter().rev() {
                    work.push(Step::Enter(c));
                }
            }
            for list in &mut phis {
                for phi in list {
                    phi.args.sort();
                }
            }
            ssa.phis.push(phis);
        }
        ssa
    }

    /// The SSA listing of every function: phis at block starts, each instruction with the versions it defines and
    /// reads.
    pub fn dump(&self, prog: &ProgramCfg) -> String {
        let mut out = String::new();
        for cfg in &prog.funcs {
            let _ = writeln!(out, "{} {}:", cfg.func, cfg.name);
            for b in cfg.block_ids() {
                if !cfg.reachable[b.index()] {
                    continue;
                }
                let _ = writeln!(out, "  {b}:");
                for phi in &self.phis[cfg.func.index()][b.index()] {
                    let args: Vec<String> = phi
                        .args
                        .iter()
                        .map(|(p, v)| format!("{p}: r{}.{v}", phi.reg))
                        .collect();
                    let _ = writeln!(
                        out,
                        "    r{}.{} = phi({})",
                        phi.reg,
                        phi.version,
                        args.join(", ")
                    );
                }
                for i in cfg.block(b).insns() {
                    let _ = writeln!(
                        out,
                        "    {:>4}: {:<40} ; {} <- {}",
                        i,
                        format_kind(&prog.kinds[i.index()]),
                        versions(&self.defs[i.index()]),
                        versions(&self.uses[i.index()])
                    );
                }
            }
        }
        out
    }

    /// The version of `reg` that `insn` reads.
    pub fn use_version(&self, insn: InsnId, reg: u8) -> Option<u32> {
        let uses = self.uses.get(insn.index())?;
        uses.iter().find(|(r, _)| *r == reg).map(|(_, v)| *v)
    }
}

fn versions(list: &[(u8, u32)]) -> String {
    if list.is_empty() {
        return "-".to_string();
    }
    let text: Vec<String> = list.iter().map(|(r, v)| format!("r{r}.{v}")).collect();
    text.join(" ")
}
