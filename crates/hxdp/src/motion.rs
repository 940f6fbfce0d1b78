//! Code motion between control-equivalent blocks (section 3.4 of the hXDP paper): an op of block `b` moves up into
//! block `a` when `a` dominates `b` and `b` post-dominates `a`, so that the op fills a free lane of `a`'s bundles.
//! Both blocks run on exactly the same packets, so the op still runs once per packet; only register arithmetic and
//! loads that cannot fault move, and only when nothing on the way from `a` to `b` touches what they read or write.
//! Nothing moves from or past an entry point ([`IrProgram::entries`]).

use crate::ir::{reads, writes, IrOp, IrProgram, Mem};
use crate::passes::successors;
use crate::rows::BlockRows;
use crate::sched::{alias, constraint};

/// In a program of more than [`EXACT_BLOCKS`] blocks, control-equivalent blocks with at most this many blocks on the
/// ways between them are considered for code motion; farther pairs are skipped (and counted in [`Motion::skipped`]):
/// checking what lies between a pair costs the blocks between, and a chain of `n` equivalent blocks has `n^2` pairs.
pub const MAX_BLOCKS_BETWEEN: usize = 32;

/// Programs of up to this many blocks consider every control-equivalent pair.
pub const EXACT_BLOCKS: usize = 512;

/// Classes of control-equivalent blocks up to this size are searched whole for each block's partners.
pub const FULL_CLASS: usize = 256;

/// Which blocks dominate, post-dominate and run exactly when which, within each function of a program.
pub struct Flow {
    succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
    /// Dominator and post-dominator trees as depth-first intervals (over a virtual root before every function entry
    /// and a virtual end after every block without successors).
    dom: hwxdp_analysis::TreeIntervals,
    /// Blocks on a cycle.
    cyclic: Vec<bool>,
    /// Blocks the entries reach.
    reachable: Vec<bool>,
    /// Control-equivalence class of each block (reachable, not on a cycle), the classes' members ascending.
    class_of: Vec<Option<usize>>,
    classes: Vec<Vec<usize>>,
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
        // Virtual node `n`: the root before every function's first block, or the end after every block without
        // successors.
        let firsts: Vec<usize> = (0..n)
            .filter(|&k| k == 0 || prog.blocks[k - 1].func != prog.blocks[k].func)
            .collect();
        let ends: Vec<usize> = (0..n).filter(|&k| succs[k].is_empty()).collect();
        let with_root = |edges: &[Vec<usize>], root_edges: &[usize]| {
            let mut out: Vec<Vec<usize>> = edges.to_vec();
            out.push(root_edges.to_vec());
            let mut rev: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
            for (k, list) in out.iter().enumerate() {
                for &t in list {
                    rev[t].push(k);
                }
            }
            (out, rev)
        };
        let (fwd, fwd_rev) = with_root(&succs, &firsts);
        let (bwd, bwd_rev) = with_root(&preds, &ends);
        let idom = hwxdp_analysis::immediate_dominators(n + 1, n, &fwd, &fwd_rev);
        let ipdom = hwxdp_analysis::immediate_dominators(n + 1, n, &bwd, &bwd_rev);
        let reachable: Vec<bool> = (0..n).map(|k| idom[k].is_some()).collect();
        let dom = intervals(&idom, n);
        let post = intervals(&ipdom, n);
        let cyclic = hwxdp_analysis::on_cycles(&succs);
        // Equivalent blocks are linked through immediate dominators (as in `hwxdp_analysis::ControlEquivalence`);
        // blocks on cycles link too (a pair may have a loop between them) but are never moved from or into.
        let member = |k: usize| reachable[k] && ipdom[k].is_some();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for b in (0..n).filter(|&b| member(b)) {
            match idom[b] {
                Some(a) if a != n && a != b && member(a) && post.contains(b, a) => {
                    let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
                    parent[ra.max(rb)] = ra.min(rb);
                }
                _ => {}
            }
        }
        let mut classes: Vec<Vec<usize>> = Vec::new();
        let mut class_of = vec![None; n];
        let mut class_of_root: Vec<Option<usize>> = vec![None; n];
        for b in (0..n).filter(|&b| member(b)) {
            let root = find(&mut parent, b);
            let class = *class_of_root[root].get_or_insert_with(|| {
                classes.push(Vec::new());
                classes.len() - 1
            });
            classes[class].push(b);
            class_of[b] = Some(class);
        }
        Flow {
            succs,
            preds,
            dom,
            cyclic,
            reachable,
            class_of,
            classes,
        }
    }

    /// True when `b` runs exactly when `a` does, after it, and neither sits on a cycle.
    pub fn control_equivalent_after(&self, a: usize, b: usize) -> bool {
        a != b
            && !self.cyclic[a]
            && !self.cyclic[b]
            && self.class_of[a].is_some()
            && self.class_of[a] == self.class_of[b]
            && self.dom.contains(a, b)
    }

    /// The blocks that run exactly when `a` does, after it, in block order: all of them when its class has at most
    /// [`FULL_CLASS`] blocks, else those laid out after `a` (a block dominated by one laid out after it is reached by
    /// a backward jump only).
    fn equivalents_after(&self, a: usize) -> impl Iterator<Item = usize> + '_ {
        let members: &[usize] = match self.class_of[a] {
            Some(c) => &self.classes[c],
            None => &[],
        };
        let from = if members.len() <= FULL_CLASS {
            0
        } else {
            members.partition_point(|&b| b <= a)
        };
        members[from..]
            .iter()
            .copied()
            .filter(move |&b| self.control_equivalent_after(a, b))
    }

    /// The blocks on the ways from `a` to `b` (reached from `a`, reaching `b`, neither of them), when there are at
    /// most `limit`.
    fn between(&self, a: usize, b: usize, limit: usize, marks: &mut Marks) -> Option<Vec<usize>> {
        // Forward from `a` without passing `b`, then back from `b` among what that reached.
        let forward = marks.fresh();
        let mut reached = 0usize;
        let mut stack: Vec<usize> = self.succs[a].clone();
        while let Some(x) = stack.pop() {
            if x == b || x == a || marks.stamp[x] >= forward {
                continue;
            }
            marks.stamp[x] = forward;
            reached += 1;
            if reached > limit * 4 + 16 {
                return None;
            }
            stack.extend(self.succs[x].iter().copied());
        }
        let back = marks.fresh();
        let mut out = Vec::new();
        let mut stack: Vec<usize> = self.preds[b].clone();
        while let Some(x) = stack.pop() {
            if marks.stamp[x] != forward {
                continue;
            }
            marks.stamp[x] = back;
            out.push(x);
            if out.len() > limit {
                return None;
            }
            stack.extend(self.preds[x].iter().copied());
        }
        out.sort_unstable();
        Some(out)
    }
}

/// Visit marks for [`Flow::between`]'s walks: a block is marked by a walk when its stamp is that walk's number, so no
/// walk clears what the one before marked.
struct Marks {
    stamp: Vec<u64>,
    walk: u64,
}

impl Marks {
    fn new(n: usize) -> Marks {
        Marks {
            stamp: vec![0; n],
            walk: 0,
        }
    }

    fn fresh(&mut self) -> u64 {
        self.walk += 1;
        self.walk
    }
}

/// Depth-first intervals of the tree `idom` (over `n` blocks and the virtual root `n`).
fn intervals(idom: &[Option<usize>], n: usize) -> hwxdp_analysis::TreeIntervals {
    let tree: Vec<Option<hwxdp_analysis::BlockId>> = (0..n)
        .map(|k| match idom[k] {
            Some(d) if d != n && d != k => Some(hwxdp_analysis::BlockId::new(d)),
            _ => None,
        })
        .collect();
    let in_tree: Vec<bool> = (0..n).map(|k| idom[k].is_some()).collect();
    hwxdp_analysis::DomTree {
        idom: tree,
        in_tree,
        post: false,
    }
    .intervals()
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
fn can_hoist(prog: &IrProgram, between: &[usize], a: usize, at: usize, b: usize, i: usize) -> bool {
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
    rest_of_a.iter().all(independent)
        && between
            .iter()
            .flat_map(|&x| prog.blocks[x].ops.iter())
            .all(independent)
}

/// True when an op moved from block `b` up into block `a` would pass an entry point: `b` is one, or a block on the
/// way from `a` to `b` is. A packet started there with a restored context would skip the op.
fn crosses_entry(prog: &IrProgram, between: &[usize], b: usize) -> bool {
    prog.is_entry(b) || between.iter().any(|&x| prog.is_entry(x))
}

/// What code motion did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Motion {
    /// Ops moved.
    pub moved: usize,
    /// Blocks whose search for control-equivalent partners stopped at one with more than [`MAX_BLOCKS_BETWEEN`]
    /// blocks on the ways between them.
    pub skipped: usize,
}

/// Moves ops up into control-equivalent earlier blocks wherever `rows` (each block's bundles as the scheduler lays
/// the program out) says it costs nothing: no block grows and the total does not grow.
pub fn hoist_control_equivalent(prog: &mut IrProgram, rows: &mut BlockRows) -> Motion {
    let flow = Flow::compute(prog);
    let n = prog.blocks.len();
    let mut out = Motion::default();
    let mut marks = Marks::new(n);
    let limit = if n <= EXACT_BLOCKS {
        n
    } else {
        MAX_BLOCKS_BETWEEN
    };
    for a in 0..n {
        if flow.class_of[a].is_none() || flow.cyclic[a] || !flow.reachable[a] {
            continue;
        }
        for b in flow.equivalents_after(a) {
            let Some(between) = flow.between(a, b, limit, &mut marks) else {
                // The ways only grow along the class: the later partners are as far or farther.
                out.skipped += 1;
                break;
            };
            if crosses_entry(prog, &between, b) {
                continue;
            }
            let mut i = 0;
            while i < prog.blocks[b].ops.len() {
                let Some(at) = insertion_point(prog, a) else {
                    break;
                };
                if !can_hoist(prog, &between, a, at, b, i) {
                    i += 1;
                    continue;
                }
                let op = prog.blocks[b].ops.remove(i);
                prog.blocks[a].ops.insert(at, op);
                if rows.accept(prog, &[a, b]) {
                    out.moved += 1;
                } else {
                    let op = prog.blocks[a].ops.remove(at);
                    prog.blocks[b].ops.insert(i, op);
                    i += 1;
                }
            }
        }
    }
    out
}
