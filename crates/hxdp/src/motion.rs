//! Code motion between control-equivalent blocks (section 3.4 of the hXDP paper): an op of block `b` moves up into
//! block `a` when `a` dominates `b` and `b` post-dominates `a`, so that the op fills a free lane of `a`'s bundles.
//! Both blocks run on exactly the same packets, so the op still runs once per packet; only register arithmetic and
//! loads that cannot fault move, and only when nothing on the way from `a` to `b` touches what they read or write.
//! Nothing moves from or past an entry point ([`IrProgram::entries`]).

use crate::ir::{reads, writes, IrOp, IrProgram, Mem};
use crate::passes::successors;
use crate::sched::{alias, constraint};

/// Which blocks reach, dominate and post-dominate which, within each function of a program.
pub struct Flow {
    /// `reaches[x][y]`: a path of at least one edge leads from block `x` to block `y`.
    pub reaches: Vec<Vec<bool>>,
    /// `dominates[x][y]`: every path from its function's entry to `y` passes `x`.
    pub dominates: Vec<Vec<bool>>,
    /// `post_dominates[x][y]`: every path from `y` to its function's end passes `x`.
    pub post_dominates: Vec<Vec<bool>>,
}

impl Flow {
    /// Computes the relations on the working form as it is now (the passes change the blocks' edges).
    pub fn compute(prog: &IrProgram) -> Flow {
        let n = prog.blocks.len();
        let succs: Vec<Vec<usize>> = (0..n).map(|k| successors(prog, k)).collect();
        let mut preds = vec![Vec::new(); n];
        for (k, s) in succs.iter().enumerate() {
            for &t in s {
                preds[t].push(k);
            }
        }
        let mut reaches = vec![vec![false; n]; n];
        for (x, row) in reaches.iter_mut().enumerate() {
            let mut stack = succs[x].clone();
            while let Some(y) = stack.pop() {
                if !row[y] {
                    row[y] = true;
                    stack.extend(succs[y].iter().copied());
                }
            }
        }
        let entry = |k: usize| {
            prog.blocks
                .iter()
                .position(|b| b.func == prog.blocks[k].func)
                .unwrap_or(k)
        };
        let is_entry: Vec<bool> = (0..n).map(|k| entry(k) == k).collect();
        let is_end: Vec<bool> = succs.iter().map(|s| s.is_empty()).collect();
        let dominated_by = solve(n, &preds, &is_entry);
        let post_dominated_by = solve(n, &succs, &is_end);
        let transpose = |m: Vec<Vec<bool>>| -> Vec<Vec<bool>> {
            (0..n).map(|x| (0..n).map(|y| m[y][x]).collect()).collect()
        };
        Flow {
            reaches,
            dominates: transpose(dominated_by),
            post_dominates: transpose(post_dominated_by),
        }
    }

    /// True when `b` runs exactly when `a` does, after it, and neither sits on a cycle.
    pub fn control_equivalent_after(&self, a: usize, b: usize) -> bool {
        a != b
            && self.dominates[a][b]
            && self.post_dominates[b][a]
            && !self.reaches[a][a]
            && !self.reaches[b][b]
    }
}

/// The iterative dataflow for (post-)dominators: `out[y][x]` when `x` (post-)dominates `y`, with `edges[y]` the blocks
/// `y` is reached from (predecessors for dominators, successors for post-dominators) and `roots` the starts.
fn solve(n: usize, edges: &[Vec<usize>], roots: &[bool]) -> Vec<Vec<bool>> {
    let mut out: Vec<Vec<bool>> = (0..n)
        .map(|y| {
            if roots[y] {
                (0..n).map(|x| x == y).collect()
            } else {
                vec![true; n]
            }
        })
        .collect();
    loop {
        let mut changed = false;
        for y in 0..n {
            if roots[y] || edges[y].is_empty() {
                continue;
            }
            let mut set = vec![true; n];
            for &p in &edges[y] {
                for x in 0..n {
                    set[x] &= out[p][x];
                }
            }
            set[y] = true;
            if set != out[y] {
                out[y] = set;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    out
}

/// Where ops moved into block `a` go: before its branch, or at its end when it falls through.
fn insertion_point(prog: &IrProgram, a: usize) -> Option<usize> {
    let ops = &prog.blocks[a].ops;
    match ops.last() {
        Some(last) if last.op.is_cond_jump() => Some(ops.len() - 1),
        Some(last) if last.op.is_control() || last.op.is_helper_call() => None,
        _ if prog.blocks[a].falls_through => Some(ops.len()),
        _ => None,
    }
}

/// Ops whose only effect is their register result and that cannot fault.
fn movable_kind(o: &IrOp) -> bool {
    if o.op.is_alu() || o.op.is_lddw() {
        return true;
    }
    o.op.is_load() && matches!(o.mem, Mem::Ctx | Mem::Stack { range: Some(_), .. })
}

/// True when op `i` of block `b` can run at `a`'s insertion point `at` instead, with the same operands and no effect
/// on anything that runs in between.
fn can_hoist(prog: &IrProgram, flow: &Flow, a: usize, at: usize, b: usize, i: usize) -> bool {
    let op = &prog.blocks[b].ops[i];
    if !movable_kind(op) {
        return false;
    }
    if prog.blocks[b].ops[..i]
        .iter()
        .any(|earlier| constraint(earlier, op).is_some())
    {
        return false;
    }
    let (r, w) = (reads(&op.op), writes(&op.op));
    let independent = |other: &IrOp| {
        let (ro, wo) = (reads(&other.op), writes(&other.op));
        if w & (ro | wo) != 0 || r & wo != 0 {
            return false;
        }
        if op.op.is_load() {
            let calls = other.op.is_helper_call() || other.op.is_local_call();
            let clobbers = other.op.is_store() && alias(other.mem, op.mem);
            return !calls && !clobbers;
        }
        true
    };
    let rest_of_a = &prog.blocks[a].ops[at..];
    let between = (0..prog.blocks.len())
        .filter(|&x| x != a && x != b && flow.reaches[a][x] && flow.reaches[x][b]);
    rest_of_a.iter().all(independent)
        && between
            .flat_map(|x| prog.blocks[x].ops.iter())
            .all(independent)
}

/// True when an op moved from block `b` up into block `a` would pass an entry point: `b` is one, or a block on the
/// way from `a` to `b` is. A packet started there with a restored context would skip the op.
fn crosses_entry(prog: &IrProgram, flow: &Flow, a: usize, b: usize) -> bool {
    prog.is_entry(b)
        || (0..prog.blocks.len())
            .any(|x| x != a && flow.reaches[a][x] && flow.reaches[x][b] && prog.is_entry(x))
}

/// Moves ops up into control-equivalent earlier blocks wherever `bundles` (the program's bundle count and the rows of
/// each block, as the scheduler lays them out) says it costs nothing: no block grows and the total does not grow.
/// Returns the ops moved.
pub fn hoist_control_equivalent(
    prog: &mut IrProgram,
    bundles: impl Fn(&IrProgram) -> Vec<usize>,
) -> usize {
    let flow = Flow::compute(prog);
    let n = prog.blocks.len();
    let mut rows = bundles(prog);
    let mut moved = 0;
    for a in 0..n {
        for b in 0..n {
            if !flow.control_equivalent_after(a, b) || crosses_entry(prog, &flow, a, b) {
                continue;
            }
            let mut i = 0;
            while i < prog.blocks[b].ops.len() {
                let Some(at) = insertion_point(prog, a) else {
                    break;
                };
                if !can_hoist(prog, &flow, a, at, b, i) {
                    i += 1;
                    continue;
                }
                let mut trial = prog.clone();
                let op = trial.blocks[b].ops.remove(i);
                trial.blocks[a].ops.insert(at, op);
                let after = bundles(&trial);
                let total = |r: &[usize]| r.iter().sum::<usize>();
                let no_block_grows = after.iter().zip(&rows).all(|(x, y)| x <= y);
                if no_block_grows && total(&after) <= total(&rows) {
                    *prog = trial;
                    rows = after;
                    moved += 1;
                } else {
                    i += 1;
                }
            }
        }
    }
    moved
}
