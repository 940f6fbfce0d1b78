//! Basic blocks and control-flow graphs, one per function, and the call graph between functions.
//!
//! A bpf-to-bpf call does not end a block: each callee is a function with its own [`Cfg`], and the call is an
//! instruction like a helper call whose target is recorded in [`ProgramCfg::calls`].

use crate::{AnalysisError, BlockId, FuncId, InsnId};
use hwxdp_ebpf::{kind, slot_offsets, CallKind, InsnKind};
use hwxdp_object::ProgramSpec;
use std::collections::BTreeSet;

/// How control reaches a successor block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeKind {
    /// The next instruction, after a non-jump or an untaken conditional jump.
    Fallthrough,
    /// The target of a taken conditional jump.
    Taken,
    /// The target of an unconditional `goto`/`gotol`.
    Jump,
}

impl EdgeKind {
    /// The word the dumps print.
    pub const fn name(self) -> &'static str {
        match self {
            EdgeKind::Fallthrough => "fallthrough",
            EdgeKind::Taken => "taken",
            EdgeKind::Jump => "jump",
        }
    }
}

/// A maximal run of instructions entered only at its first and left only after its last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// First instruction.
    pub start: InsnId,
    /// One past the last instruction.
    pub end: InsnId,
    /// Successors in edge order: the fallthrough (if any) before the taken target.
    pub succs: Vec<(BlockId, EdgeKind)>,
    /// Distinct predecessors, ascending.
    pub preds: Vec<BlockId>,
}

impl Block {
    /// The instructions of the block, in order.
    pub fn insns(&self) -> impl DoubleEndedIterator<Item = InsnId> {
        (self.start.0..self.end.0).map(InsnId)
    }

    /// The last instruction.
    pub fn last(&self) -> InsnId {
        InsnId(self.end.0 - 1)
    }
}

/// The control-flow graph of one function; block 0 is its entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// This function.
    pub func: FuncId,
    /// The function's symbol, or `sub_<index>` for a call target without one.
    pub name: String,
    /// The function's first instruction.
    pub start: InsnId,
    /// One past the function's last instruction.
    pub end: InsnId,
    /// Blocks in address order.
    pub blocks: Vec<Block>,
    /// Blocks ending in `exit`, ascending.
    pub exits: Vec<BlockId>,
    /// Whether each block is reachable from the entry.
    pub reachable: Vec<bool>,
}

impl Cfg {
    /// The entry block.
    pub const ENTRY: BlockId = BlockId(0);

    /// One block.
    pub fn block(&self, id: BlockId) -> &Block {
        &self.blocks[id.index()]
    }

    /// Block ids in address order.
    pub fn block_ids(&self) -> impl DoubleEndedIterator<Item = BlockId> {
        (0..self.blocks.len() as u32).map(BlockId)
    }

    /// The block holding `insn`, if it belongs to this function.
    pub fn block_of(&self, insn: InsnId) -> Option<BlockId> {
        if insn < self.start || insn >= self.end {
            return None;
        }
        let at = self.blocks.partition_point(|b| b.start <= insn);
        Some(BlockId::new(at.checked_sub(1)?))
    }

    /// Blocks no path from the entry reaches.
    pub fn unreachable(&self) -> Vec<BlockId> {
        self.block_ids()
            .filter(|b| !self.reachable[b.index()])
            .collect()
    }

    /// Reachable blocks in reverse post-order of a depth-first search from the entry, successors in edge order.
    pub fn reverse_postorder(&self) -> Vec<BlockId> {
        let mut visited = vec![false; self.blocks.len()];
        let mut post = Vec::with_capacity(self.blocks.len());
        let mut stack = vec![(Cfg::ENTRY, 0usize)];
        visited[0] = true;
        while let Some((block, next)) = stack.last_mut() {
            let succs = &self.blocks[block.index()].succs;
            if let Some(&(succ, _)) = succs.get(*next) {
                *next += 1;
                if !visited[succ.index()] {
                    visited[succ.index()] = true;
                    stack.push((succ, 0));
                }
            } else {
                post.push(*block);
                stack.pop();
            }
        }
        post.reverse();
        post
    }
}

/// One bpf-to-bpf call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallSite {
    /// The `call` instruction.
    pub insn: InsnId,
    /// The function containing it.
    pub caller: FuncId,
    /// The function it calls.
    pub callee: FuncId,
}

/// The decoded program: instruction kinds, a [`Cfg`] per function, and the calls between them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramCfg {
    /// The program's name.
    pub name: String,
    /// Every instruction, classified.
    pub kinds: Vec<InsnKind>,
    /// Functions by [`FuncId`]: the program first, then callees in address order.
    pub funcs: Vec<Cfg>,
    /// bpf-to-bpf calls in instruction order.
    pub calls: Vec<CallSite>,
}

impl ProgramCfg {
    /// Splits `spec` into functions and basic blocks.
    pub fn build(spec: &ProgramSpec) -> Result<Self, AnalysisError> {
        let program = spec.name.clone();
        if spec.insns.is_empty() {
            return Err(AnalysisError::Empty { program });
        }
        // Messages name instructions by slot, as llvm-objdump and the verifier do (a `lddw` takes two).
        let slots = slot_offsets(&spec.insns);
        let kinds = spec
            .insns
            .iter()
            .enumerate()
            .map(|(insn, i)| {
                kind(i).map_err(|source| AnalysisError::Invalid {
                    program: program.clone(),
                    insn: slots[insn],
                    source,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let insn_at_slot = |slot: i64| -> Option<usize> {
            let slot = usize::try_from(slot).ok()?;
            slots[..kinds.len()].binary_search(&slot).ok()
        };

        let mut starts: BTreeSet<usize> = spec
            .functions
            .iter()
            .map(|(s, _)| *s)
            .filter(|&s| s < kinds.len())
            .collect();
        starts.insert(0);
        let mut call_targets = Vec::new();
        for (i, k) in kinds.iter().enumerate() {
            if let InsnKind::Call {
                kind: CallKind::Local,
                imm,
            } = *k
            {
                let slot = slots[i + 1] as i64 + imm as i64;
                let target = insn_at_slot(slot).ok_or(AnalysisError::CallTarget {
                    program: program.clone(),
                    insn: slots[i],
                    slot,
                })?;
                starts.insert(target);
                call_targets.push((i, target));
            }
        }
        let starts: Vec<usize> = starts.into_iter().collect();
        let func_of = |insn: usize| FuncId::new(starts.partition_point(|&s| s <= insn) - 1);

        let mut funcs = Vec::with_capacity(starts.len());
        for (f, &start) in starts.iter().enumerate() {
            let end = starts.get(f + 1).copied().unwrap_or(kinds.len());
            let name = spec
                .functions
                .iter()
                .find(|(s, _)| *s == start)
                .map(|(_, n)| n.clone())
                .unwrap_or_else(|| format!("sub_{start}"));
            let range = FuncRange {
                program: &program,
                name: &name,
                start,
                end,
            };
            let blocks = range.blocks(&kinds, &slots, &insn_at_slot)?;
            let exits = (0..blocks.len())
                .filter(|&b| matches!(kinds[blocks[b].end.index() - 1], InsnKind::Exit))
                .map(BlockId::new)
                .collect();
            let mut cfg = Cfg {
                func: FuncId::new(f),
                name,
                start: InsnId::new(start),
                end: InsnId::new(end),
                blocks,
                exits,
                reachable: Vec::new(),
            };
            let mut reachable = vec![false; cfg.blocks.len()];
            for b in cfg.reverse_postorder() {
                reachable[b.index()] = true;
            }
            cfg.reachable = reachable;
            funcs.push(cfg);
        }
        let calls = call_targets
            .into_iter()
            .map(|(insn, target)| CallSite {
                insn: InsnId::new(insn),
                caller: func_of(insn),
                callee: func_of(target),
            })
            .collect();
        Ok(ProgramCfg {
            name: program,
            kinds,
            funcs,
            calls,
        })
    }

    /// The function containing `insn`.
    pub fn func_of(&self, insn: InsnId) -> Option<FuncId> {
        let at = self.funcs.partition_point(|f| f.start <= insn);
        let f = self.funcs.get(at.checked_sub(1)?)?;
        (insn < f.end).then_some(f.func)
    }

    /// The function a bpf-to-bpf call at `insn` calls.
    pub fn callee_at(&self, insn: InsnId) -> Option<FuncId> {
        self.calls
            .binary_search_by_key(&insn, |c| c.insn)
            .ok()
            .map(|i| self.calls[i].callee)
    }

    /// One function's graph.
    pub fn func(&self, f: FuncId) -> &Cfg {
        &self.funcs[f.index()]
    }

    /// Functions with every callee before its callers (a post-order of the call graph from each function in id
    /// order); in a recursive cycle, which the verifier rejects, the order inside the cycle is arbitrary.
    pub fn callees_first(&self) -> Vec<FuncId> {
        let mut visited = vec![false; self.funcs.len()];
        let mut order = Vec::with_capacity(self.funcs.len());
        for root in 0..self.funcs.len() {
            if visited[root] {
                continue;
            }
            visited[root] = true;
            let mut stack = vec![(FuncId::new(root), 0usize)];
            while let Some((f, next)) = stack.last_mut() {
                let caller = *f;
                let callee = self
                    .calls
                    .iter()
                    .filter(|c| c.caller == caller)
                    .nth(*next)
                    .map(|c| c.callee);
                *next += 1;
                match callee {
                    Some(c) if !visited[c.index()] => {
                        visited[c.index()] = true;
                        stack.push((c, 0));
                    }
                    Some(_) => {}
                    None => {
                        order.push(caller);
                        stack.pop();
                    }
                }
            }
        }
        order
    }
}

/// One function's instruction range while its blocks are built.
struct FuncRange<'a> {
    program: &'a str,
    name: &'a str,
    start: usize,
    end: usize,
}

impl FuncRange<'_> {
    fn blocks(
        &self,
        kinds: &[InsnKind],
        slots: &[usize],
        insn_at_slot: &dyn Fn(i64) -> Option<usize>,
    ) -> Result<Vec<Block>, AnalysisError> {
        let mut leaders = BTreeSet::from([self.start]);
        let mut targets = vec![None; self.end - self.start];
        for i in self.start..self.end {
            let k = &kinds[i];
            if let Some(off) = k.jump_offset() {
                let slot = slots[i + 1] as i64 + off;
                let target = insn_at_slot(slot)
                    .filter(|t| (self.start..self.end).contains(t))
                    .ok_or_else(|| AnalysisError::JumpTarget {
                        program: self.program.to_string(),
                        insn: slots[i],
                        slot,
                        function: self.name.to_string(),
                    })?;
                targets[i - self.start] = Some(target);
                leaders.insert(target);
            }
            if ends_block(k) && i + 1 < self.end {
                leaders.insert(i + 1);
            }
        }
        let leaders: Vec<usize> = leaders.into_iter().collect();
        let block_at = |insn: usize| BlockId::new(leaders.partition_point(|&l| l <= insn) - 1);
        let mut blocks: Vec<Block> = leaders
            .iter()
            .enumerate()
            .map(|(b, &start)| Block {
                start: InsnId::new(start),
                end: InsnId::new(leaders.get(b + 1).copied().unwrap_or(self.end)),
                succs: Vec::new(),
                preds: Vec::new(),
            })
            .collect();
        for block in &mut blocks {
            let last = block.end.index() - 1;
            let k = &kinds[last];
            let falls = !matches!(
                k,
                InsnKind::Exit | InsnKind::Ja { .. } | InsnKind::JaLong { .. }
            );
            let mut succs = Vec::new();
            if falls {
                if last + 1 >= self.end {
                    return Err(AnalysisError::FallsOff {
                        program: self.program.to_string(),
                        function: self.name.to_string(),
                        insn: slots[last],
                    });
                }
                succs.push((block_at(last + 1), EdgeKind::Fallthrough));
            }
            if let Some(target) = targets[last - self.start] {
                let edge = match k {
                    InsnKind::Branch { .. } => EdgeKind::Taken,
                    _ => EdgeKind::Jump,
                };
                succs.push((block_at(target), edge));
            }
            block.succs = succs;
        }
        for b in 0..blocks.len() {
            for (s, _) in blocks[b].succs.clone() {
                let preds = &mut blocks[s.index()].preds;
                if !preds.contains(&BlockId::new(b)) {
                    preds.push(BlockId::new(b));
                }
            }
        }
        for block in &mut blocks {
            block.preds.sort();
        }
        Ok(blocks)
    }
}

/// Whether control may leave the straight line after `k`.
fn ends_block(k: &InsnKind) -> bool {
    matches!(
        k,
        InsnKind::Exit | InsnKind::Ja { .. } | InsnKind::JaLong { .. } | InsnKind::Branch { .. }
    )
}
