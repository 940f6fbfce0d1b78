//! Stage scheduling by instruction-level parallelism (section 3.3 of the paper).
//!
//! Ops are placed in program order, each in the earliest stage that its dependences on earlier ops allow. Only ops
//! that can run on one path are dependent (their blocks reach one another); ops of exclusive paths share stages
//! freely. Constraints for an earlier op `a` and a later op `b`:
//!
//! - register RAW: `b` after `a` (results appear at the next boundary); WAR and WAW: `b` not before `a` (a stage
//!   reads its input boundary; of two writes in one stage the later op wins);
//! - memory, for accesses to the same region whose bytes may overlap: a store before a load or store is followed
//!   by a later stage; a load before a store may share the stage;
//! - helper calls: after every earlier memory access and helper, before every later one; each helper call is the
//!   only op of its stage (inserted where it becomes ready, shifting later stages down);
//! - predicates: not before the stage whose input boundary has the block's predicate (one stage after the last
//!   condition it depends on);
//! - packet frames: not before stage `f` for the last frame `f` it touches (frame `f` reaches stage `f` at the
//!   earliest); stages that wait only for a frame stay empty, as NOP stages.

use crate::ir::OpKind;
use crate::lower::Lowered;

/// The schedule: a stage for every op, and the stages' contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    /// Stage of each op.
    pub stage_of: Vec<u32>,
    /// Ops of each stage, ascending, and whether it is a helper stage.
    pub stages: Vec<(Vec<u32>, bool)>,
    /// The first stage whose input boundary has each predicate.
    pub ready: Vec<u32>,
}

/// The first stage each predicate is available at, given the stages of the condition ops.
pub fn pred_ready(l: &Lowered, stage_of: &[u32]) -> Vec<u32> {
    let mut ready: Vec<u32> = vec![0; l.preds.len()];
    for p in 0..l.preds.len() {
        let mut r = 0;
        for &(src, cond) in &l.preds[p].terms {
            r = r.max(ready[src as usize]);
            if let Some((op, _)) = cond {
                r = r.max(stage_of[op as usize] + 1);
            }
        }
        ready[p] = r;
    }
    ready
}

fn is_helper(k: &OpKind) -> bool {
    matches!(k, OpKind::Helper { .. })
}

/// The first stage each predicate is available at ([`pred_ready`]), kept up to date as ops get their stages: stages
/// only grow, so a predicate's readiness only grows, and a change of one op's stage raises the predicates that test it
/// and, through them, the predicates built on those.
struct Readiness {
    ready: Vec<u32>,
    /// The predicates whose terms test each op.
    testing: Vec<Vec<u32>>,
    /// The predicates whose terms start from each predicate.
    built_on: Vec<Vec<u32>>,
}

impl Readiness {
    fn new(l: &Lowered, stage_of: &[u32]) -> Readiness {
        let mut testing = vec![Vec::new(); l.ops.len()];
        let mut built_on = vec![Vec::new(); l.preds.len()];
        for (p, def) in l.preds.iter().enumerate() {
            for &(src, cond) in &def.terms {
                built_on[src as usize].push(p as u32);
                if let Some((op, _)) = cond {
                    testing[op as usize].push(p as u32);
                }
            }
        }
        Readiness {
            ready: pred_ready(l, stage_of),
            testing,
            built_on,
        }
    }

    /// Op `j`'s stage grew: the predicates testing it, and those built on them, are raised where they must be.
    fn raise(&mut self, l: &Lowered, stage_of: &[u32], j: usize) {
        let mut work: Vec<u32> = self.testing[j].clone();
        while let Some(p) = work.pop() {
            let mut r = 0;
            for &(src, cond) in &l.preds[p as usize].terms {
                r = r.max(self.ready[src as usize]);
                if let Some((op, _)) = cond {
                    r = r.max(stage_of[op as usize] + 1);
                }
            }
            if r > self.ready[p as usize] {
                self.ready[p as usize] = r;
                work.extend(self.built_on[p as usize].iter().copied());
            }
        }
    }
}

/// Schedules the ops of `l`. The earlier ops an op depends on are visited from the latest stage down, and only while
/// they could still push it later (a helper call, which also needs the stages it may share, visits them all).
pub fn schedule(l: &Lowered) -> Scheduled {
    let n = l.ops.len();
    let mut stage_of: Vec<u32> = vec![0; n];
    let mut slots: Vec<(Vec<u32>, bool)> = Vec::new();
    let mut readiness = Readiness::new(l, &stage_of);
    // The ops placed so far, by stage descending (a helper's insertion shifts later stages alike, keeping the order).
    let mut by_stage: Vec<u32> = Vec::with_capacity(n);
    for j in 0..n {
        let op = &l.ops[j];
        let mut e = readiness.ready[op.pred as usize];
        if let Some((_, last)) = op.frames {
            e = e.max(last);
        }
        let helper_j = is_helper(&op.kind);
        // The latest stage of an op that `b` may share a stage with but not precede (WAR, WAW, load before store).
        let mut same_ok: Option<u32> = None;
        let mut not_before = |e: &mut u32, s: u32| {
            *e = (*e).max(s);
            same_ok = Some(same_ok.map_or(s, |m: u32| m.max(s)));
        };
        for &i in &by_stage {
            let (i, s) = (i as usize, stage_of[i as usize]);
            if !helper_j && s < e {
                // Every op left is at stage `s` or earlier: none can push `j` past `e`.
                break;
            }
            if !l.ordered(i, j) {
                continue;
            }
            let a = &l.ops[i];
            if !a.writes.intersect(op.reads).is_empty() {
                e = e.max(s + 1);
            }
            if !a.reads.intersect(op.writes).is_empty() || !a.writes.intersect(op.writes).is_empty()
            {
                not_before(&mut e, s);
            }
            let helper_i = is_helper(&a.kind);
            match (&l.mem[i], &l.mem[j]) {
                (Some(ma), Some(mb)) if ma.conflicts(mb) => {
                    if ma.write {
                        e = e.max(s + 1);
                    } else {
                        not_before(&mut e, s);
                    }
                }
                _ => {}
            }
            if (helper_i && (helper_j || l.mem[j].is_some())) || (helper_j && l.mem[i].is_some()) {
                e = e.max(s + 1);
            }
        }
        // A helper inserted at `e` would push ops already in stage `e` after it: when one of them must not come
        // after the helper, the helper goes right after stage `e` instead.
        let mut shifted = false;
        let e = if helper_j
            && same_ok == Some(e)
            && (e as usize) < slots.len()
            && !slots[e as usize].0.is_empty()
        {
            e as usize + 1
        } else {
            e as usize
        };
        if helper_j {
            if e < slots.len() && slots[e].0.is_empty() {
                slots[e].1 = true;
            } else if e < slots.len() {
                for s in stage_of.iter_mut().take(j) {
                    if *s as usize >= e {
                        *s += 1;
                    }
                }
                slots.insert(e, (Vec::new(), true));
                shifted = true;
            } else {
                slots.resize(e + 1, (Vec::new(), false));
                slots[e].1 = true;
            }
            slots[e].0.push(j as u32);
            stage_of[j] = e as u32;
        } else {
            let mut s = e;
            while s < slots.len() && slots[s].1 {
                s += 1;
            }
            if s >= slots.len() {
                slots.resize(s + 1, (Vec::new(), false));
            }
            slots[s].0.push(j as u32);
            stage_of[j] = s as u32;
        }
        if shifted {
            readiness.ready = pred_ready(l, &stage_of);
        } else {
            readiness.raise(l, &stage_of, j);
        }
        let at = by_stage.partition_point(|&i| stage_of[i as usize] > stage_of[j]);
        by_stage.insert(at, j as u32);
    }
    if slots.is_empty() {
        slots.push((Vec::new(), false));
    }
    let ready = pred_ready(l, &stage_of);
    Scheduled {
        stage_of,
        stages: slots,
        ready,
    }
}

/// The dependences a schedule breaks, as text (empty for a valid schedule); tests and debug builds check it.
pub fn violations(l: &Lowered, s: &Scheduled) -> Vec<String> {
    let mut out = Vec::new();
    let ready = pred_ready(l, &s.stage_of);
    for j in 0..l.ops.len() {
        let b = &l.ops[j];
        let sj = s.stage_of[j];
        let mut need = |what: &str, at_least: u32| {
            if sj < at_least {
                out.push(format!(
                    "op {} (insn {}) in stage {sj}: {what} needs stage {at_least}",
                    j, b.insn
                ));
            }
        };
        need("predicate", ready[b.pred as usize]);
        if let Some((_, last)) = b.frames {
            need("frame", last);
        }
        if is_helper(&b.kind) && s.stages[sj as usize].0.len() != 1 {
            need("a stage of its own", u32::MAX);
        }
        for i in 0..j {
            if !l.ordered(i, j) {
                continue;
            }
            let a = &l.ops[i];
            let si = s.stage_of[i];
            if !a.writes.intersect(b.reads).is_empty() {
                need(&format!("RAW on op {i}"), si + 1);
            }
            if !a.reads.intersect(b.writes).is_empty() || !a.writes.intersect(b.writes).is_empty() {
                need(&format!("WAR/WAW on op {i}"), si);
            }
            if let (Some(ma), Some(mb)) = (&l.mem[i], &l.mem[j]) {
                if ma.conflicts(mb) {
                    need(
                        &format!("memory order on op {i}"),
                        if ma.write { si + 1 } else { si },
                    );
                }
            }
            if (is_helper(&a.kind) && (is_helper(&b.kind) || l.mem[j].is_some()))
                || (is_helper(&b.kind) && l.mem[i].is_some())
            {
                need(&format!("helper order on op {i}"), si + 1);
            }
        }
    }
    out
}
