//! Each block's bundle count as [`crate::compile::schedule`] lays the program out, kept up to date while code motion
//! and speculation move ops between blocks: a move re-schedules only the blocks it changed and re-runs the parallel
//! branch merges only over the window of blocks they can reach, so judging a move costs the blocks near it, not the
//! whole program.
//!
//! The window of a change is bounded by *anchor* blocks: a block whose own rows are not one row of one op can never be
//! emptied by a merge from before it, and a merge never looks past a non-empty block, so what happens at and after
//! the first anchor past the change, and before the last anchor before it, is the same as without the change.

use crate::ir::IrProgram;
use crate::passes::successors;
use crate::sched::{merge_next_branch_in, schedule_block, Row, Slot};

/// Block rows before and bundle counts after the parallel-branch merges, for the program as it is now.
pub struct BlockRows {
    lanes: usize,
    merges: bool,
    preds: Vec<usize>,
    base: Vec<Vec<Row>>,
    counts: Vec<usize>,
}

impl BlockRows {
    /// Schedules every block of `prog` at `lanes` lanes, with the parallel-branch merges when `merges`.
    pub fn new(prog: &IrProgram, lanes: usize, merges: bool) -> BlockRows {
        let n = prog.blocks.len();
        let mut preds = vec![0usize; n];
        for k in 0..n {
            for s in successors(prog, k) {
                preds[s] += 1;
            }
        }
        let base: Vec<Vec<Row>> = prog
            .blocks
            .iter()
            .map(|b| schedule_block(&b.ops, lanes))
            .collect();
        let mut rows = BlockRows {
            lanes,
            merges,
            preds,
            base,
            counts: Vec::new(),
        };
        rows.counts = rows.merged_counts(prog, 0, n, &[]);
        rows
    }

    /// Each block's bundle count.
    pub fn counts(&self) -> &[usize] {
        &self.counts
    }

    fn anchor(rows: &[Row]) -> bool {
        match rows {
            [] => false,
            [row] => {
                row.lanes
                    .iter()
                    .filter(|s| matches!(s, Slot::Op(_)))
                    .count()
                    != 1
            }
            _ => true,
        }
    }

    /// Counts of blocks `lo..hi` after the merges, with `fresh` (block, rows) in place of those blocks' rows.
    fn merged_counts(
        &self,
        prog: &IrProgram,
        lo: usize,
        hi: usize,
        fresh: &[(usize, Vec<Row>)],
    ) -> Vec<usize> {
        let mut window: Vec<Vec<Row>> = self.base[lo..hi].to_vec();
        for (k, rows) in fresh.iter().filter(|(k, _)| (lo..hi).contains(k)) {
            window[k - lo] = rows.clone();
        }
        if self.merges {
            for k in lo..hi {
                while merge_next_branch_in(&mut window, lo, prog, &self.preds, k) {}
            }
        }
        window.iter().map(Vec::len).collect()
    }

    /// Judges a change of the ops of blocks `changed` (already made in `prog`): when no block's bundle count grows
    /// and the total does not grow, keeps it and returns true; otherwise returns false, and the caller undoes it.
    pub fn accept(&mut self, prog: &IrProgram, changed: &[usize]) -> bool {
        let fresh: Vec<(usize, Vec<Row>)> = changed
            .iter()
            .map(|&k| (k, schedule_block(&prog.blocks[k].ops, self.lanes)))
            .collect();
        let is_anchor = |k: usize| match fresh.iter().find(|(c, _)| *c == k) {
            Some((_, rows)) => Self::anchor(rows),
            None => Self::anchor(&self.base[k]),
        };
        let n = self.base.len();
        // Each changed block's window, overlapping ones joined.
        let mut windows: Vec<(usize, usize)> = Vec::new();
        let mut sorted = changed.to_vec();
        sorted.sort_unstable();
        for k in sorted {
            let (lo, hi) = if self.merges {
                let lo = (0..k).rev().find(|&x| is_anchor(x)).unwrap_or(0);
                let hi = (k + 1..n).find(|&x| is_anchor(x)).unwrap_or(n);
                (lo, hi)
            } else {
                (k, k + 1)
            };
            match windows.last_mut() {
                Some(w) if lo < w.1 => w.1 = w.1.max(hi),
                _ => windows.push((lo, hi)),
            }
        }
        let mut results = Vec::with_capacity(windows.len());
        let (mut grown, mut delta) = (false, 0isize);
        for &(lo, hi) in &windows {
            let after = self.merged_counts(prog, lo, hi, &fresh);
            let before = &self.counts[lo..hi];
            grown |= after.iter().zip(before).any(|(x, y)| x > y);
            delta += after.iter().sum::<usize>() as isize - before.iter().sum::<usize>() as isize;
            results.push(after);
        }
        if grown || delta > 0 {
            return false;
        }
        for (&(lo, hi), after) in windows.iter().zip(results) {
            self.counts[lo..hi].copy_from_slice(&after);
        }
        for (k, rows) in fresh {
            self.base[k] = rows;
        }
        true
    }
}
