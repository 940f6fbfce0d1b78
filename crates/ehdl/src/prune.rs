//! State pruning (section 4.3 of the paper): what each stage boundary must carry, and the finished [`Pipeline`].
//!
//! A register is carried at boundary `k` when an op in stage `k` or later reads it and a definition that may reach
//! that read (from [`hwxdp_analysis::ReachingDefs`]) is in a stage before `k` (or is the program's entry). A stack
//! byte is carried when a later-stage op reads it and an op that may write it, on the same path, sits in an earlier
//! stage (from the byte sets of [`hwxdp_analysis::StackLiveness`]). r10 is never carried: the frame pointer is a
//! constant of the design. A predicate is carried from the stage it becomes ready to its last use, and the output of
//! a condition op from its stage to the stage where the predicates that use it are formed.
//!
//! With [`Options::prune`] off, every boundary carries r0-r9 and the whole 512-byte stack instead (the paper's
//! unpruned baseline); predicates and conditions stay as above, since the baseline is about program state.

use crate::flatten::Flat;
use crate::ir::{Label, OpKind, Pipeline, Stage, Summary, UNPRUNED_BOUNDARY_BITS};
use crate::lower::Lowered;
use crate::sched::Scheduled;
use crate::Options;
use hwxdp_analysis::{Def, RegSet, StackBytes};
use hwxdp_object::ProgramSpec;

fn intersect(a: StackBytes, b: StackBytes) -> StackBytes {
    a.minus(a.minus(b))
}

/// Assembles the pipeline: stages with their live state, and the summary.
pub fn finish(
    spec: &ProgramSpec,
    flat: &Flat,
    l: Lowered,
    s: Scheduled,
    options: &Options,
) -> Pipeline {
    let ns = s.stages.len();
    let stage = |op: usize| s.stage_of[op] as usize;
    let mut regs = vec![RegSet::EMPTY; ns];
    for (u, reads) in l.reaching.iter().enumerate() {
        for (r, defs) in reads {
            for d in defs {
                let from = match d {
                    Def::Entry(_) => 0,
                    Def::Insn(at, _) => match l.op_of_insn[at.index()] {
                        Some(op) => stage(op as usize) + 1,
                        None => continue,
                    },
                };
                for live in regs.iter_mut().take(stage(u) + 1).skip(from) {
                    live.insert(*r);
                }
            }
        }
    }
    let mut stack = vec![StackBytes::EMPTY; ns];
    for u in 0..l.ops.len() {
        if l.stack_reads[u].is_empty() {
            continue;
        }
        for w in 0..u {
            let bytes = intersect(l.stack_writes[w], l.stack_reads[u]);
            if bytes.is_empty() || !l.ordered(w, u) {
                continue;
            }
            for live in stack.iter_mut().take(stage(u) + 1).skip(stage(w) + 1) {
                *live = live.union(bytes);
            }
        }
    }
    if !options.prune {
        let mut all = RegSet::EMPTY;
        for r in 0..10 {
            all.insert(r);
        }
        regs.fill(all);
        stack.fill(StackBytes::ALL);
    }
    // Predicates: from ready to last use (their ops, and the predicates formed from them).
    let mut last_use: Vec<Option<u32>> = vec![None; l.preds.len()];
    let bump = |slot: &mut Option<u32>, at: u32| *slot = Some(slot.map_or(at, |x| x.max(at)));
    for (o, op) in l.ops.iter().enumerate() {
        bump(&mut last_use[op.pred as usize], s.stage_of[o]);
    }
    let mut cond_until: Vec<Option<u32>> = vec![None; l.ops.len()];
    for (q, def) in l.preds.iter().enumerate() {
        for &(src, cond) in &def.terms {
            let at = s.ready[q];
            bump(&mut last_use[src as usize], at);
            if let Some((c, _)) = cond {
                bump(&mut cond_until[c as usize], at);
            }
        }
    }
    let mut stages: Vec<Stage> = s
        .stages
        .iter()
        .enumerate()
        .map(|(k, (ops, helper))| Stage {
            index: k as u32,
            ops: ops.clone(),
            helper: *helper,
            nop: ops.is_empty(),
            frame: ops
                .iter()
                .filter_map(|&o| l.ops[o as usize].frames.map(|f| f.1))
                .max(),
            live_regs: regs[k],
            live_stack: stack[k],
            live_preds: Vec::new(),
            live_conds: Vec::new(),
        })
        .collect();
    for (p, last) in last_use.iter().enumerate() {
        if let Some(last) = last {
            for st in stages
                .iter_mut()
                .take(*last as usize + 1)
                .skip(s.ready[p] as usize)
            {
                st.live_preds.push(p as u32);
            }
        }
    }
    for (c, until) in cond_until.iter().enumerate() {
        if let Some(until) = until {
            let from = s.stage_of[c] as usize + 1;
            for st in stages.iter_mut().take(*until as usize + 1).skip(from) {
                st.live_conds.push(c as u32);
            }
        }
    }
    let mut ops = l.ops;
    for op in &mut ops {
        op.stage = s.stage_of[op.id as usize];
    }
    let mut preds = l.preds;
    for p in &mut preds {
        p.ready = s.ready[p.id as usize];
    }
    let nops = stages.iter().filter(|s| s.nop).count();
    let busy = (ns - nops).max(1);
    let bits: Vec<u64> = stages.iter().map(Stage::state_bits).collect();
    let summary = Summary {
        program: spec.name.clone(),
        ebpf_insns: spec.insns.len(),
        flat_insns: flat.spec.insns.len(),
        ops: ops.len(),
        stages: ns,
        nop_stages: nops,
        helper_stages: stages.iter().filter(|s| s.helper).count(),
        max_ilp: stages.iter().map(|s| s.ops.len()).max().unwrap_or(0),
        mean_ilp: ops.len() as f64 / busy as f64,
        state_bits_pruned: bits.iter().sum(),
        state_bits_unpruned: ns as u64 * UNPRUNED_BOUNDARY_BITS,
        max_boundary_bits: bits.iter().copied().max().unwrap_or(0),
        dynamic_packet_accesses: ops
            .iter()
            .filter(|o| {
                matches!(o.label, Label::Packet { offset: None })
                    && !matches!(o.kind, OpKind::Helper { .. })
            })
            .count(),
        last_frame: ops.iter().filter_map(|o| o.frames.map(|f| f.1)).max(),
        data_width: options.data_width,
        loops_unrolled: flat.loops.len(),
        calls_inlined: flat.inlined.len(),
    };
    Pipeline {
        summary,
        preds,
        ops,
        stages,
        removed: l.removed,
        loops: flat.loops.clone(),
        tail_targets: flat.tail_targets.clone(),
        insns: flat.spec.insns.clone(),
    }
}
