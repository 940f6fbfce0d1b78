//! Speculation past branches: an op at the head of a block moves up into its only predecessor, before that block's
//! conditional branch, so that it fills a free lane there and the packets that take the other way run it too. That is
//! right when the op has no effect but its register result, cannot fault and costs nothing extra (register arithmetic
//! other than division, `lddw`, context loads and stack loads at known offsets), and its result is dead on the other
//! way. The hardware would fault a packet load outside the packet, so packet loads never move. clang's early-return
//! shape (a check, then a few ops, then the next check) gives the scheduler blocks of two or three ops: this is what
//! lets it pack them beside the checks before them. Nothing moves from an entry point ([`IrProgram::entries`]).

use crate::ir::{reads, writes, IrOp, IrProgram, Mem};
use crate::passes::{live_after, successors};
use crate::rows::BlockRows;
use crate::sched::{constraint, is_div};

/// Ops that may run on a path that did not ask for them: no effect but the register result, no fault, no extra cycles.
fn speculable(o: &IrOp) -> bool {
    if (o.op.is_alu() && !is_div(&o.op)) || o.op.is_lddw() {
        return true;
    }
    o.op.is_load()
        && o.op.fault_verdict().is_none()
        && matches!(o.mem, Mem::Ctx | Mem::Stack { range: Some(_), .. })
}

/// Registers live when block `k` starts.
fn live_in(prog: &IrProgram, live: &[Vec<u16>], k: usize) -> u16 {
    match prog.blocks[k].ops.first() {
        Some(first) => (live[k][0] & !writes(&first.op)) | reads(&first.op),
        None => successors(prog, k)
            .into_iter()
            .fold(0, |acc, s| acc | live_in(prog, live, s)),
    }
}

/// The predecessor of each block when it has exactly one (and is not itself), else `None`.
fn sole_predecessors(prog: &IrProgram) -> Vec<Option<usize>> {
    let n = prog.blocks.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for k in 0..n {
        for s in successors(prog, k) {
            if !preds[s].contains(&k) {
                preds[s].push(k);
            }
        }
    }
    preds
        .into_iter()
        .enumerate()
        .map(|(k, p)| match p.as_slice() {
            [a] if *a != k => Some(*a),
            _ => None,
        })
        .collect()
}

/// Op `i` of block `s` as it would run at the end of `a` (before its conditional branch), when that is allowed:
/// nothing earlier in `s` that stays must come first, the branch neither reads nor writes what it writes, and its
/// result is dead on `a`'s other way.
fn can_speculate(prog: &IrProgram, live: &[Vec<u16>], a: usize, s: usize, i: usize) -> bool {
    let op = &prog.blocks[s].ops[i];
    if !speculable(op) {
        return false;
    }
    if prog.blocks[s].ops[..i]
        .iter()
        .any(|earlier| constraint(earlier, op).is_some())
    {
        return false;
    }
    let Some(branch) = prog.blocks[a].ops.last() else {
        return false;
    };
    if !branch.op.is_cond_jump() {
        return false;
    }
    let w = writes(&op.op);
    if w & (reads(&branch.op) | writes(&branch.op)) != 0 || w & (1 << 10) != 0 {
        return false;
    }
    let others: Vec<usize> = successors(prog, a)
        .into_iter()
        .filter(|&x| x != s)
        .collect();
    if others.is_empty() {
        return false;
    }
    others.iter().all(|&o| live_in(prog, live, o) & w == 0)
}

/// Moves ops from the heads of blocks into their sole predecessors wherever `rows` (each block's bundles as the
/// scheduler lays the program out) says no block grows and the program gets no longer. Returns the ops moved.
pub fn speculate(prog: &mut IrProgram, rows: &mut BlockRows) -> usize {
    let mut moved = 0;
    let mut live = live_after(prog);
    // A second round moves what the first brought into a block on up into the block before it.
    for _ in 0..2 {
        let preds = sole_predecessors(prog);
        for (s, pred) in preds.iter().enumerate() {
            let Some(a) = *pred else {
                continue;
            };
            if prog.is_entry(s) || prog.blocks[a].func != prog.blocks[s].func {
                continue;
            }
            let mut i = 0;
            while i < prog.blocks[s].ops.len() {
                if !can_speculate(prog, &live, a, s, i) {
                    i += 1;
                    continue;
                }
                let live_into_a = live_in(prog, &live, a);
                let op = prog.blocks[s].ops.remove(i);
                let at = prog.blocks[a].ops.len() - 1;
                prog.blocks[a].ops.insert(at, op);
                if rows.accept(prog, &[a, s]) {
                    moved += 1;
                    relive(prog, &mut live, &[s, a], live_into_a);
                } else {
                    let op = prog.blocks[a].ops.remove(at);
                    prog.blocks[s].ops.insert(i, op);
                    i += 1;
                }
            }
        }
    }
    moved
}

/// Brings `live` (as [`live_after`] gives it) up to date after ops moved between `blocks`, given in an order where
/// each comes before the blocks it is reached from. Only those blocks' liveness changes when the registers live into
/// the last of them do not (an op moved into its sole predecessor's end, with its result dead on the other way,
/// leaves that block's live-in as it was, `before`); when they do, the whole dataflow runs again.
fn relive(prog: &IrProgram, live: &mut [Vec<u16>], blocks: &[usize], before: u16) {
    let last = *blocks.last().expect("blocks");
    for &k in blocks {
        let mut now = successors(prog, k)
            .into_iter()
            .fold(0u16, |acc, t| acc | live_in(prog, live, t));
        let ops = &prog.blocks[k].ops;
        let mut after = vec![0u16; ops.len()];
        for (i, op) in ops.iter().enumerate().rev() {
            after[i] = now;
            now = (now & !writes(&op.op)) | reads(&op.op);
        }
        live[k] = after;
    }
    if live_in(prog, live, last) != before {
        live.clone_from_slice(&live_after(prog));
    }
}
