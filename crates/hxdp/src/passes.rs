//! The instruction-level passes of section 3 of the hXDP paper, each on the working form.

use crate::ir::{is_tail_call, reads, writes, IrOp, IrProgram, Mem};
use crate::isa::{Op, EXIT_IMM, LDX6, STX6};
use hwxdp_analysis::{BranchSide, CheckedArea, Patterns, Regions, Value};
use hwxdp_analysis::{InsnId, Offset};
use hwxdp_ebpf::opcode::*;

/// Verdicts the hardware can end a program with when a packet access falls outside the packet.
const REPRODUCIBLE_VERDICTS: [i64; 3] = [0, 1, 2];

/// Helpers known to only read the memory their pointer arguments name; any other helper may write the stack.
const READ_ONLY_HELPERS: [i32; 14] = [1, 2, 3, 5, 6, 7, 8, 12, 23, 51, 14, 15, 16, 35];

/// Successor blocks of block `k`.
pub fn successors(prog: &IrProgram, k: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let b = &prog.blocks[k];
    if let Some(last) = b.ops.last() {
        if !last.op.is_local_call() {
            if let Some(t) = last.target {
                if let Some(j) = prog.blocks.iter().position(|x| x.start == t) {
                    out.push(j);
                }
            }
        }
    }
    if b.falls_through && k + 1 < prog.blocks.len() {
        out.push(k + 1);
    }
    out
}

/// Registers live after each op, per block, by backward dataflow over the working form.
pub fn live_after(prog: &IrProgram) -> Vec<Vec<u16>> {
    let n = prog.blocks.len();
    let succs: Vec<Vec<usize>> = (0..n).map(|k| successors(prog, k)).collect();
    let mut live_in = vec![0u16; n];
    loop {
        let mut changed = false;
        for k in (0..n).rev() {
            let mut live = succs[k].iter().fold(0u16, |acc, &s| acc | live_in[s]);
            for op in prog.blocks[k].ops.iter().rev() {
                live = (live & !writes(&op.op)) | reads(&op.op);
            }
            if live != live_in[k] {
                live_in[k] = live;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (0..n)
        .map(|k| {
            let mut live = succs[k].iter().fold(0u16, |acc, &s| acc | live_in[s]);
            let mut out = vec![0u16; prog.blocks[k].ops.len()];
            for (i, op) in prog.blocks[k].ops.iter().enumerate().rev() {
                out[i] = live;
                live = (live & !writes(&op.op)) | reads(&op.op);
            }
            out
        })
        .collect()
}

/// Blocks that run after a bpf-to-bpf call of a function that may make a tail call, directly or through the
/// functions it calls (the block holding such a call counts too). When that tail call succeeds, the tail-called
/// program's exit returns to the function's caller, so r0 after the call is whatever that program returned, not what
/// the function returns: the analysis' values ([`Regions`]) there, which take the function's return value, are not
/// to be trusted.
pub fn after_tail_calling_call(prog: &IrProgram) -> Vec<bool> {
    let n = prog.blocks.len();
    let callee = |o: &IrOp| {
        o.op.is_local_call()
            .then(|| o.target.and_then(|t| block_at(prog, t)))
            .flatten()
            .map(|b| prog.blocks[b].func)
    };
    let mut tail_calling: Vec<u32> = prog
        .blocks
        .iter()
        .filter(|b| b.ops.iter().any(|o| is_tail_call(&o.op)))
        .map(|b| b.func)
        .collect();
    loop {
        let more: Vec<u32> = prog
            .blocks
            .iter()
            .filter(|b| !tail_calling.contains(&b.func))
            .filter(|b| {
                b.ops
                    .iter()
                    .any(|o| callee(o).is_some_and(|f| tail_calling.contains(&f)))
            })
            .map(|b| b.func)
            .collect();
        if more.is_empty() {
            break;
        }
        tail_calling.extend(more);
    }
    let mut after = vec![false; n];
    let mut stack: Vec<usize> = (0..n)
        .filter(|&k| {
            prog.blocks[k]
                .ops
                .iter()
                .any(|o| callee(o).is_some_and(|f| tail_calling.contains(&f)))
        })
        .collect();
    while let Some(k) = stack.pop() {
        if !after[k] {
            after[k] = true;
            stack.extend(successors(prog, k));
        }
    }
    after
}

fn block_at(prog: &IrProgram, insn: u32) -> Option<usize> {
    prog.blocks.iter().position(|b| b.start == insn)
}

/// The verdict a block returns with nothing else done: `exit` with r0 = `r0`, `r0 = K; exit`, or `exit K`.
fn plain_return(prog: &IrProgram, k: usize, r0: Value) -> Option<i64> {
    let ops = &prog.blocks.get(k)?.ops;
    let verdict = match ops.as_slice() {
        [e] if e.op.code == EXIT_IMM => e.op.imm,
        [e] if e.op.is_exit() => match r0 {
            Value::Scalar(Some(v)) => v,
            _ => return None,
        },
        [m, e]
            if e.op.is_exit()
                && e.op.code != EXIT_IMM
                && matches!(m.op.code, 0xb7 | 0xb4)
                && m.op.dst == 0 =>
        {
            m.op.imm
        }
        _ => return None,
    };
    (prog.blocks[k].func == 0 && REPRODUCIBLE_VERDICTS.contains(&verdict)).then_some(verdict)
}

/// Bounds-check removal: a check `data + N > data_end` whose failure side plainly returns DROP, ABORTED or PASS goes
/// when the first memory access on its success side is a packet load that ends exactly at byte N: that load then
/// carries the verdict and faults exactly when the check would have failed, before anything else happens. Returns
/// the checks removed.
pub fn remove_bounds_checks(prog: &mut IrProgram, patterns: &Patterns, regions: &Regions) -> usize {
    // Removing a check only drops edges, so blocks found untainted here stay so as checks go.
    let tainted = after_tail_calling_call(prog);
    let mut removed = 0;
    for bc in &patterns.bounds_checks {
        if bc.area != CheckedArea::Packet || bc.variable {
            continue;
        }
        let Some(k) = prog
            .blocks
            .iter()
            .position(|b| b.ops.last().is_some_and(|o| o.origin == bc.insn.0))
        else {
            continue;
        };
        // The pattern and the verdict come from the analysis' values, which may be wrong there.
        if tainted[k] {
            continue;
        }
        let check = prog.blocks[k].ops.last().cloned().expect("block has ops");
        let Some(target) = check.target.and_then(|t| block_at(prog, t)) else {
            continue;
        };
        let next = k + 1;
        let (fail, success) = match bc.fail {
            BranchSide::Taken => (target, next),
            BranchSide::Fallthrough => (next, target),
        };
        let Some(state) = regions.state_before(bc.insn) else {
            continue;
        };
        let Some(verdict) = plain_return(prog, fail, state.reg(0)) else {
            continue;
        };
        let Some(load) = first_access(prog, success) else {
            continue;
        };
        let lop = prog.blocks[success].ops[load].clone();
        if !lop.op.is_load() || lop.mem != Mem::Packet || lop.op.fault_verdict().is_some() {
            continue;
        }
        let Some(lstate) = regions.state_before(InsnId(lop.origin)) else {
            continue;
        };
        let Value::Packet(Offset {
            konst,
            variable: false,
        }) = lstate.reg(lop.op.src)
        else {
            continue;
        };
        let start = konst + lop.op.off as i64;
        if start < 0 || start + lop.op.access_size() as i64 != bc.ensured {
            continue;
        }
        prog.blocks[success].ops[load].op.imm = verdict + 1;
        let success_start = prog.blocks[success].start;
        let b = &mut prog.blocks[k];
        b.ops.pop();
        if bc.fail == BranchSide::Fallthrough {
            b.ops.push(IrOp {
                op: Op {
                    code: CLASS_JMP | JMP_JA,
                    ..Op::default()
                },
                origin: check.origin,
                target: Some(success_start),
                mem: Mem::None,
            });
            prog.blocks[k].falls_through = false;
        }
        removed += 1;
    }
    if removed > 0 {
        dead_code(prog);
    }
    removed
}

/// Index of the first memory access or helper call in block `k`, if only register arithmetic precedes it.
fn first_access(prog: &IrProgram, k: usize) -> Option<usize> {
    for (i, op) in prog.blocks.get(k)?.ops.iter().enumerate() {
        if op.op.is_load() || op.op.is_store() {
            return Some(i);
        }
        if !(op.op.is_alu() || op.op.is_lddw()) {
            return None;
        }
    }
    None
}

/// Removes register arithmetic whose result nobody reads (what a removed bounds check leaves behind).
pub fn dead_code(prog: &mut IrProgram) {
    loop {
        let live = live_after(prog);
        let mut changed = false;
        for (k, block) in prog.blocks.iter_mut().enumerate() {
            let mut keep = Vec::with_capacity(block.ops.len());
            for (i, op) in block.ops.drain(..).enumerate() {
                let pure = op.op.is_alu() || op.op.is_lddw();
                if pure && writes(&op.op) & live[k][i] == 0 {
                    changed = true;
                } else {
                    keep.push(op);
                }
            }
            block.ops = keep;
        }
        if !changed {
            break;
        }
    }
}

/// Zeroing removal: zero stores to the program's stack frame that no earlier store can have dirtied (the hardware
/// clears the stack before every packet). Returns the stores removed.
pub fn remove_zeroing(prog: &mut IrProgram, patterns: &Patterns) -> usize {
    let n = prog.blocks.len();
    let succs: Vec<Vec<usize>> = (0..n).map(|k| successors(prog, k)).collect();
    // reaches[a][b]: a path of at least one edge leads from block a to block b.
    let mut reaches = vec![vec![false; n]; n];
    for a in 0..n {
        let mut stack = succs[a].clone();
        while let Some(b) = stack.pop() {
            if !reaches[a][b] {
                reaches[a][b] = true;
                stack.extend(succs[b].iter().copied());
            }
        }
    }
    let writes_stack_unknown = prog.blocks.iter().flat_map(|b| &b.ops).any(|o| {
        (o.op.is_helper_call() && !READ_ONLY_HELPERS.contains(&(o.op.imm as i32)))
            || (o.op.is_store() && o.mem == Mem::Unknown)
            || o.op.is_local_call()
    });
    if writes_stack_unknown {
        return 0;
    }
    let mut removed = 0;
    for run in &patterns.zero_runs {
        if run.frame.0 != 0 {
            continue;
        }
        let Some(first) = run.stores.first() else {
            continue;
        };
        let Some(k) = prog
            .blocks
            .iter()
            .position(|b| b.ops.iter().any(|o| o.origin == first.0))
        else {
            continue;
        };
        let in_run = |o: &IrOp| run.stores.iter().any(|s| s.0 == o.origin);
        let first_pos = prog.blocks[k]
            .ops
            .iter()
            .position(|o| o.origin == first.0)
            .unwrap_or(0);
        let overlaps = |o: &IrOp| match o.mem {
            Mem::Stack { frame: 0, range } => match range {
                Some((lo, hi)) => lo < run.hi && hi > run.lo,
                None => true,
            },
            _ => false,
        };
        let dirty_before = prog.blocks.iter().enumerate().any(|(b, block)| {
            block.ops.iter().enumerate().any(|(i, o)| {
                let store = o.op.is_store() && overlaps(o) && !in_run(o);
                store && (reaches[b][k] || (b == k && i < first_pos))
            })
        }) || reaches[k][k];
        if dirty_before {
            continue;
        }
        let before = prog.blocks[k].ops.len();
        prog.blocks[k].ops.retain(|o| !in_run(o));
        removed += before - prog.blocks[k].ops.len();
    }
    removed
}

/// Three-operand fusion: `rA = rB` followed by an ALU op on rA becomes `rA = rB OP x`. Returns the moves removed.
pub fn fuse_three_operand(prog: &mut IrProgram) -> usize {
    let mut fused = 0;
    for block in &mut prog.blocks {
        let mut i = 0;
        while i < block.ops.len() {
            let m = block.ops[i].op;
            let is_mov = matches!(m.code, 0xbf | 0xbc) && m.off == 0 && m.a.is_none();
            if !is_mov || m.dst == m.src {
                i += 1;
                continue;
            }
            let (ra, rb) = (m.dst, m.src);
            let mut j = i + 1;
            let mut ok = None;
            while j < block.ops.len() {
                let o = block.ops[j].op;
                let touches = (reads(&o) | writes(&o)) & (1 << ra) != 0;
                if touches {
                    let operation = o.code & 0xf0;
                    let width_ok = m.code == 0xbf || o.class() == CLASS_ALU;
                    if o.is_alu()
                        && o.dst == ra
                        && o.a.is_none()
                        && width_ok
                        && !matches!(operation, ALU_MOV | ALU_END)
                    {
                        ok = Some(j);
                    }
                    break;
                }
                if writes(&o) & (1 << rb) != 0 || o.op_is_barrier() {
                    break;
                }
                j += 1;
            }
            if let Some(j) = ok {
                let o = &mut block.ops[j].op;
                o.a = Some(rb);
                if o.code & SRC_X != 0 && o.src == ra {
                    o.src = rb;
                }
                block.ops.remove(i);
                fused += 1;
            } else {
                i += 1;
            }
        }
    }
    fused
}

trait Barrier {
    fn op_is_barrier(&self) -> bool;
}

impl Barrier for Op {
    /// Calls and control transfers end a fusion window.
    fn op_is_barrier(&self) -> bool {
        self.is_control() || self.is_helper_call()
    }
}

/// 6-byte fusion: `x = *(u32 *)(b + o); y = *(u16 *)(b + o + 4); *(u32 *)(c + p) = x; *(u16 *)(c + p + 4) = y`
/// (a MAC address copy) with x and y dead afterwards becomes one 6-byte load and one 6-byte store. Returns the ops
/// removed.
pub fn fuse_six_byte(prog: &mut IrProgram) -> usize {
    let live = live_after(prog);
    let mut removed = 0;
    for (k, block) in prog.blocks.iter_mut().enumerate() {
        let mut i = 0;
        let mut live_k = live[k].clone();
        while i + 3 < block.ops.len() {
            let w = &block.ops[i..i + 4];
            let (l1, l2, s1, s2) = (w[0].op, w[1].op, w[2].op, w[3].op);
            let (x, y) = (l1.dst, l2.dst);
            let fits = l1.code == 0x61
                && l2.code == 0x69
                && s1.code == 0x63
                && s2.code == 0x6b
                && l1.src == l2.src
                && l2.off as i32 == l1.off as i32 + 4
                && s1.dst == s2.dst
                && s2.off as i32 == s1.off as i32 + 4
                && s1.src == x
                && s2.src == y
                && x != y
                && ![l1.src, s1.dst].contains(&x)
                && ![l1.src, s1.dst].contains(&y)
                && l1.imm == 0
                && l2.imm == 0
                && live_k[i + 3] & ((1 << x) | (1 << y)) == 0;
            if !fits {
                i += 1;
                continue;
            }
            block.ops[i].op.code = LDX6;
            block.ops[i + 2].op.code = STX6;
            block.ops.remove(i + 3);
            block.ops.remove(i + 1);
            live_k.remove(i + 3);
            live_k.remove(i + 1);
            removed += 2;
            i += 2;
        }
    }
    removed
}

/// Parametrized exit: `r0 = K; exit` in the program's own code (and a bare `exit` where r0 is a known constant,
/// unless it may come back from a function that tail-calls) becomes `exit K`. Returns the moves folded.
pub fn parametrize_exits(prog: &mut IrProgram, regions: &Regions) -> usize {
    let tainted = after_tail_calling_call(prog);
    let mut folded = 0;
    for (block, tainted) in prog.blocks.iter_mut().zip(tainted) {
        if block.func != 0 {
            continue;
        }
        let Some(last) = block.ops.last() else {
            continue;
        };
        if !(last.op.is_exit() && last.op.code != EXIT_IMM) {
            continue;
        }
        let exit_at = block.ops.len() - 1;
        // The last write of r0 before the exit, with nothing reading r0 in between.
        let mut found = None;
        for j in (0..exit_at).rev() {
            let o = block.ops[j].op;
            if writes(&o) & 1 != 0 {
                if matches!(o.code, 0xb7 | 0xb4) && o.dst == 0 && o.a.is_none() {
                    found = Some(j);
                }
                break;
            }
            if reads(&o) & 1 != 0 {
                break;
            }
        }
        let exit = &block.ops[exit_at];
        let constant = match found {
            Some(j) => Some(block.ops[j].op.imm as i32 as i64),
            None if tainted => None,
            None => match regions.state_before(InsnId(exit.origin)).map(|s| s.reg(0)) {
                Some(Value::Scalar(Some(v)))
                    if (0..=u32::MAX as i64).contains(&(v as u32 as i64)) =>
                {
                    Some(v as u32 as i32 as i64)
                }
                _ => None,
            },
        };
        let Some(k) = constant else {
            continue;
        };
        block.ops[exit_at].op = Op {
            code: EXIT_IMM,
            imm: k,
            ..Op::default()
        };
        if let Some(j) = found {
            block.ops.remove(j);
            folded += 1;
        }
    }
    folded
}
