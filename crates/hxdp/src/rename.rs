//! Register renaming (section 3.4 of the hXDP paper, "physical register assignment"): a value whose whole life is
//! inside one block moves to a register nobody uses meanwhile, when that removes a write-after-write or
//! write-after-read conflict that kept two ops out of one bundle. r0 (the exit code and helper results), r1-r5 (helper
//! arguments) and r10 (the frame pointer) keep their roles: a value a call or an exit reads is never renamed, and a
//! register a call clobbers is never chosen while the value lives.

use crate::ir::{reads, writes, IrOp, IrProgram};
use crate::isa::Op;
use crate::passes::live_after;
use crate::sched::constraint;
use hwxdp_ebpf::opcode::*;

/// Registers a renamed value may live in (r10 is the frame pointer).
const GENERAL: std::ops::RangeInclusive<u8> = 0..=9;

fn bit(r: u8) -> u16 {
    1 << r
}

/// True for an op that sets its destination without reading it, so the destination can change alone.
fn pure_definition(op: &Op) -> Option<u8> {
    let w = writes(op);
    if op.dst == 10 || w != bit(op.dst) {
        return None;
    }
    let plain_load = op.is_load() && op.class() == CLASS_LDX;
    let alu_from_others = op.is_alu()
        && (op.a.is_some_and(|a| a != op.dst) || (op.code & 0xf0 == ALU_MOV && op.a.is_none()));
    (plain_load || op.is_lddw() || alu_from_others).then_some(op.dst)
}

/// `op` with its reads of `from` redirected to `to`, or `None` when a read cannot move (an implicit argument of a
/// call or exit, an atomic operand).
fn redirect_reads(op: &Op, from: u8, to: u8) -> Option<Op> {
    let mut out = *op;
    if reads(op) & bit(from) == 0 {
        return Some(out);
    }
    let x = op.code & SRC_X != 0;
    match op.class() {
        CLASS_ALU | CLASS_ALU64 => {
            let operation = op.code & 0xf0;
            let reads_src = x && operation != ALU_END && operation != ALU_NEG;
            if reads_src && op.src == from {
                out.src = to;
            }
            match op.a {
                Some(a) if a == from => out.a = Some(to),
                None if op.dst == from && operation != ALU_MOV => out.a = Some(to),
                _ => {}
            }
        }
        CLASS_LDX => out.src = to,
        CLASS_ST => out.dst = to,
        CLASS_STX if op.code & 0xe0 != MODE_ATOMIC => {
            if op.dst == from {
                out.dst = to;
            }
            if op.src == from {
                out.src = to;
            }
        }
        CLASS_JMP | CLASS_JMP32 if op.is_cond_jump() => {
            if op.dst == from {
                out.dst = to;
            }
            if x && op.src == from {
                out.src = to;
            }
        }
        _ => return None,
    }
    (reads(&out) & bit(from) == 0).then_some(out)
}

/// The block's ops with the value defined by op `j` moved to register `to`, or `None` when that is not possible.
fn renamed(
    ops: &[IrOp],
    live_out: u16,
    live_after_def: u16,
    j: usize,
    to: u8,
) -> Option<Vec<IrOp>> {
    let from = pure_definition(&ops[j].op)?;
    if to == from || live_after_def & bit(to) != 0 {
        return None;
    }
    let mut out = ops.to_vec();
    out[j].op.dst = to;
    let mut ended = false;
    for m in j + 1..ops.len() {
        let op = &ops[m].op;
        let touched = reads(op) | writes(op);
        // While the value lives in `to`, nothing else may read or write it.
        if touched & bit(to) != 0 {
            return None;
        }
        if touched & bit(from) == 0 {
            continue;
        }
        out[m].op = redirect_reads(op, from, to)?;
        if writes(op) & bit(from) != 0 {
            ended = true;
            break;
        }
    }
    // A value still live when the block ends is read elsewhere, under its own name.
    if !ended && live_out & bit(from) != 0 {
        return None;
    }
    // Past the value's last use `to` holds the value instead of what it held before; that was dead, so nobody reads it.
    Some(out)
}

/// Ordered pairs of a block's ops that the scheduler must keep apart or in order.
fn dependences(ops: &[IrOp]) -> usize {
    (0..ops.len())
        .map(|j| {
            (0..j)
                .filter(|&i| constraint(&ops[i], &ops[j]).is_some())
                .count()
        })
        .sum()
}

/// Blocks of up to this many ops are renamed whole; a longer block is renamed window by window of [`WINDOW`] ops
/// (a value renamed dies inside its window, and a renaming is judged by the window's rows), since each trial
/// schedules what it is judged on and counts its dependences pair by pair.
pub const WHOLE_BLOCK_OPS: usize = 256;

/// The window of a block longer than [`WHOLE_BLOCK_OPS`].
pub const WINDOW: usize = 32;

/// What renaming did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Renaming {
    /// Values renamed.
    pub renamed: usize,
    /// Blocks longer than [`WHOLE_BLOCK_OPS`], renamed window by window.
    pub windowed: usize,
}

/// Tries every value defined in each block in every free register and keeps the renaming that lowers `rows` (the
/// bundles the block schedules into) the most. A second round then also takes renamings that keep the rows and remove
/// dependences, since two false dependences may each have to go before the rows drop; it comes second because each
/// renaming takes a register a better one might have wanted.
pub fn rename_registers(prog: &mut IrProgram, rows: impl Fn(&[IrOp]) -> usize) -> Renaming {
    let live = live_after(prog);
    let mut out = Renaming::default();
    for (k, block) in prog.blocks.iter_mut().enumerate() {
        if block.ops.is_empty() {
            continue;
        }
        // The original liveness stays a safe guide: a renaming only changes which register holds a value between
        // its definition and its last use, where the new register was dead; `taken` adds the registers now used.
        let mut taken = live[k].clone();
        let len = block.ops.len();
        let window = if len <= WHOLE_BLOCK_OPS {
            len
        } else {
            out.windowed += 1;
            WINDOW
        };
        let rows_only = |ops: &[IrOp]| (rows(ops), 0);
        let with_dependences = |ops: &[IrOp]| (rows(ops), dependences(ops));
        for start in (0..len).step_by(window) {
            let end = (start + window).min(len);
            let mut ops = block.ops[start..end].to_vec();
            // Live after the window's last op: a value still live there is read past the window.
            let live_out = taken[end - 1];
            let taken = &mut taken[start..end];
            out.renamed += rename_round(&mut ops, live_out, taken, &rows_only);
            out.renamed += rename_round(&mut ops, live_out, taken, &with_dependences);
            block.ops.splice(start..end, ops);
        }
    }
    out
}

/// One greedy walk over a block's definitions, keeping each renaming that lowers `cost`.
fn rename_round(
    ops: &mut Vec<IrOp>,
    live_out: u16,
    taken: &mut [u16],
    cost: &dyn Fn(&[IrOp]) -> (usize, usize),
) -> usize {
    let mut count = 0;
    let mut current = cost(ops);
    for j in 0..ops.len() {
        let mut best: Option<((usize, usize), Vec<IrOp>, u8)> = None;
        for to in GENERAL {
            let Some(candidate) = renamed(ops, live_out, taken[j], j, to) else {
                continue;
            };
            let c = cost(&candidate);
            if c < current && best.as_ref().is_none_or(|b| c < b.0) {
                best = Some((c, candidate, to));
            }
        }
        if let Some((c, renamed_ops, to)) = best {
            *ops = renamed_ops;
            current = c;
            count += 1;
            for l in taken.iter_mut().skip(j) {
                *l |= bit(to);
            }
        }
    }
    count
}
