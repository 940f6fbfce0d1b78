//! The instruction-level passes of section 3 of the hXDP paper, each on the working form.

use crate::ir::{is_tail_call, reads, writes, IrOp, IrProgram, Mem};
use crate::isa::{Op, EXIT_IMM, LDX6, STX6};
use hwxdp_analysis::InsnId;
use hwxdp_analysis::{BranchSide, CheckedArea, Patterns, Regions, Value};
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
                if let Some(j) = block_at(prog, t) {
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

/// The first block starting at instruction `insn`: found by binary search, as the blocks lie in instruction order
/// (a linear search otherwise).
pub fn block_at(prog: &IrProgram, insn: u32) -> Option<usize> {
    let k = prog.blocks.partition_point(|b| b.start < insn);
    if prog.blocks.get(k).is_some_and(|b| b.start == insn)
        && (k == 0 || prog.blocks[k - 1].start < insn)
    {
        return Some(k);
    }
    prog.blocks.iter().position(|x| x.start == insn)
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

/// The verdict a block returns with nothing else done, reached with registers `reg` (the analysis' values at the
/// branch into it): `exit` with r0 known, `r0 = K; exit`, `r0 = rX; exit` with rX known (clang's shared exit
/// block, with the verdict set before the branch), or `exit K`.
fn plain_return(prog: &IrProgram, k: usize, reg: impl Fn(u8) -> Value) -> Option<i64> {
    let known = |v: Value| match v {
        Value::Scalar(Some(v)) => Some(v),
        _ => None,
    };
    let ops = &prog.blocks.get(k)?.ops;
    let verdict = match ops.as_slice() {
        [e] if e.op.code == EXIT_IMM => e.op.imm,
        [e] if e.op.is_exit() => known(reg(0))?,
        [m, e]
            if e.op.is_exit()
                && e.op.code != EXIT_IMM
                && matches!(m.op.code, 0xb7 | 0xb4)
                && m.op.dst == 0
                && m.op.a.is_none() =>
        {
            m.op.imm
        }
        [m, e]
            if e.op.is_exit()
                && e.op.code != EXIT_IMM
                && matches!(m.op.code, 0xbf | 0xbc)
                && m.op.dst == 0
                && m.op.off == 0
                && m.op.a.is_none() =>
        {
            let v = known(reg(m.op.src))?;
            if m.op.code == 0xbc {
                v as u32 as i64
            } else {
                v
            }
        }
        _ => return None,
    };
    (prog.blocks[k].func == 0 && REPRODUCIBLE_VERDICTS.contains(&verdict)).then_some(verdict)
}

/// Bytes every frame has: the kernel, the reference machine and the hXDP core refuse frames shorter than an
/// Ethernet header, and `bpf_xdp_adjust_head`/`bpf_xdp_adjust_tail` never shrink a frame below it.
pub const MIN_FRAME: i64 = hwxdp_xdp::ETH_HLEN as i64;

/// How a removed bounds check still ends a short packet with its verdict.
#[derive(Debug)]
enum Removal {
    /// The check cannot fail: it guards no more than [`MIN_FRAME`] bytes.
    Never,
    /// These loads of the success block (in order, the last one ending exactly at the checked byte, nothing but
    /// register arithmetic, stack accesses and in-range packet loads before it) carry the verdict.
    Loads(Vec<usize>),
    /// A one-byte probe load of the last checked byte, `dst = *(u8 *)(base + off)`, replaces the check.
    Probe { base: u8, off: i16, dst: u8 },
}

/// Bounds-check removal: a check `data + N > data_end` whose failure side plainly returns DROP, ABORTED or PASS goes.
/// When N is at most [`MIN_FRAME`] it can never fail. Otherwise the packet loads of the success side before its
/// first effect (a store outside the stack, a call, a branch) carry the verdict when the last of them ends exactly at
/// byte N, so that one of them faults exactly when the check would have failed; failing that, a one-byte load of
/// byte N - 1 carrying the verdict takes the check's place (one op, no dependence on the check's pointer arithmetic).
/// Returns the checks removed.
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
        let Some(verdict) = plain_return(prog, fail, |r| state.reg(r)) else {
            continue;
        };
        // The check's operands must be `data + n` and `data_end` on every path, not only where the analysis'
        // joins say so.
        let at = sure_before_check(prog, k);
        if at[bc.pointer as usize] != Some(Sure::Packet(bc.n))
            || at[bc.limit as usize] != Some(Sure::End(0))
        {
            continue;
        }
        let Some(removal) = plan_removal(prog, &at, k, success, bc.ensured) else {
            continue;
        };
        apply_removal(prog, k, success, &check, bc.fail, removal, verdict);
        removed += 1;
    }
    if removed > 0 {
        dead_code(prog);
    }
    removed
}

/// Replaces the check ending block `k` (`check`, failing on side `fail`) as `removal` says.
fn apply_removal(
    prog: &mut IrProgram,
    k: usize,
    success: usize,
    check: &IrOp,
    fail: BranchSide,
    removal: Removal,
    verdict: i64,
) {
    let success_start = prog.blocks[success].start;
    if let Removal::Loads(loads) = &removal {
        for &i in loads {
            prog.blocks[success].ops[i].op.imm = verdict + 1;
        }
    }
    let b = &mut prog.blocks[k];
    b.ops.pop();
    if let Removal::Probe { base, off, dst } = removal {
        b.ops.push(IrOp {
            op: Op {
                code: CLASS_LDX | SIZE_B | MODE_MEM,
                dst,
                src: base,
                off,
                imm: verdict + 1,
                ..Op::default()
            },
            origin: check.origin,
            target: None,
            mem: Mem::Packet,
        });
    }
    if fail == BranchSide::Fallthrough {
        b.ops.push(IrOp {
            op: Op {
                code: CLASS_JMP | JMP_JA,
                ..Op::default()
            },
            origin: check.origin,
            target: Some(success_start),
            mem: Mem::None,
        });
        b.falls_through = false;
    }
}

/// How the check ending block `k`, guarding `ensured` bytes, can go; `None` when it stays. `at` is what the
/// registers surely hold at the check.
fn plan_removal(
    prog: &IrProgram,
    at: &SureRegs,
    k: usize,
    success: usize,
    ensured: i64,
) -> Option<Removal> {
    if ensured <= MIN_FRAME {
        return Some(Removal::Never);
    }
    if let Some(loads) = verdict_loads(prog, at, success, ensured) {
        return Some(Removal::Loads(loads));
    }
    let check = prog.blocks[k].ops.last()?;
    // A register pointing into the packet at a known offset on every path (the probe runs on the short packets,
    // where a register the analysis joined from 0 and a packet pointer may be 0), other than the check's own
    // `data + N` when another one does (so that the arithmetic making it dies with the check).
    let mut bases: Vec<(u8, i64)> = (0..10u8)
        .filter_map(|r| match at[r as usize] {
            Some(Sure::Packet(konst)) => Some((r, konst)),
            _ => None,
        })
        .collect();
    let pointer = check.op.dst;
    bases.sort_by_key(|&(r, _)| r == pointer);
    let (base, off) = bases.into_iter().find_map(|(r, konst)| {
        let off = i16::try_from(ensured - 1 - konst).ok()?;
        Some((r, off))
    })?;
    // The probe's result is dead: any register the successor does not read first, preferring one no op of the
    // successor touches.
    let live = live_after(prog);
    let first = prog.blocks[success].ops.first()?;
    let live_in = (live[success][0] & !writes(&first.op)) | reads(&first.op);
    let touched = prog.blocks[success]
        .ops
        .iter()
        .fold(0u16, |acc, o| acc | reads(&o.op) | writes(&o.op));
    let free = |r: &u8| *r != base && live_in & (1 << r) == 0;
    let dst = (0..10u8)
        .rev()
        .filter(free)
        .find(|r| touched & (1 << r) == 0)
        .or_else(|| (0..10u8).rev().find(free))?;
    Some(Removal::Probe { base, off, dst })
}

/// The packet loads at the start of block `k` that can carry the verdict of a removed check guarding `n` bytes:
/// every packet load before the first effect, when the last of them ends exactly at byte `n` and none reaches past
/// it or already carries a verdict. `at` is what the registers surely hold at the check: on a short packet these
/// loads, and what lies between, run where the check would have failed, so every access among them must go through
/// a register that surely points where it seems to (the frame pointer, the context, the packet at a known offset).
fn verdict_loads(prog: &IrProgram, at: &SureRegs, k: usize, n: i64) -> Option<Vec<usize>> {
    let mut regs = *at;
    let mut loads = Vec::new();
    for (i, op) in prog.blocks.get(k)?.ops.iter().enumerate() {
        let before = regs;
        sure_step(&mut regs, &op.op);
        if op.op.is_alu() || op.op.is_lddw() {
            continue;
        }
        let stack = matches!(op.mem, Mem::Stack { .. });
        if op.op.is_store() && stack && !crate::sched::is_atomic(&op.op) {
            if op.op.dst != 10 {
                return None;
            }
            continue;
        }
        if !op.op.is_load() {
            return None;
        }
        let base = before[op.op.src as usize];
        match op.mem {
            Mem::Packet => {}
            Mem::Stack { .. } if op.op.src == 10 => continue,
            Mem::Ctx if matches!(base, Some(Sure::Ctx(_))) => continue,
            _ => return None,
        }
        if op.op.imm != 0 {
            return None;
        }
        let Some(Sure::Packet(konst)) = base else {
            return None;
        };
        let start = konst + op.op.off as i64;
        let end = start + op.op.access_size() as i64;
        if start < 0 || end > n {
            return None;
        }
        loads.push(i);
        if end == n {
            return Some(loads);
        }
    }
    None
}

/// What a register surely holds wherever an op runs. The analysis' values ([`Regions`]) join a register set to 0 on
/// one path and to a pointer on another into the pointer (the kernel's verifier may accept clang's select
/// `r3 = 0; if p > end goto +1; r3 = q; if p > end goto out; load through r3`, since the load only runs where r3 is
/// `q`); an op a removed bounds check moves or arms runs on paths the check used to end, and needs more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sure {
    /// The context, this many bytes in.
    Ctx(i64),
    /// `data` plus this many bytes.
    Packet(i64),
    /// `data_end` plus this many bytes.
    End(i64),
}

/// Offsets of `data` and `data_end` in `struct xdp_md`.
const XDP_MD_DATA: i64 = 0;
const XDP_MD_DATA_END: i64 = 4;

/// What r0-r10 surely hold (`None`: nothing known).
type SureRegs = [Option<Sure>; 11];

/// What the registers surely hold after `op`, from what they held before. Only the context at a program's entry,
/// its `data`/`data_end` fields, copies and constant moves of them are followed; a helper or bpf-to-bpf call ends
/// every packet pointer (it may move the packet) and r0-r5.
fn sure_step(regs: &mut SureRegs, op: &Op) {
    let before = *regs;
    if op.is_helper_call() || op.is_local_call() {
        for r in regs.iter_mut() {
            if !matches!(r, Some(Sure::Ctx(_))) {
                *r = None;
            }
        }
    }
    let written = writes(op);
    for (r, slot) in regs.iter_mut().enumerate() {
        if written & (1 << r) != 0 {
            *slot = None;
        }
    }
    let d = op.dst as usize;
    if written & (1 << d) == 0 || d > 10 {
        return;
    }
    let get = |r: u8| before.get(r as usize).copied().flatten();
    let moved = |s: Option<Sure>, by: i64| {
        s.map(|s| match s {
            Sure::Ctx(o) => Sure::Ctx(o + by),
            Sure::Packet(o) => Sure::Packet(o + by),
            Sure::End(o) => Sure::End(o + by),
        })
    };
    let first = op.a.unwrap_or(op.dst);
    regs[d] = match op.code {
        0xbf if op.a.is_none() && op.off == 0 => get(op.src),
        0x07 if op.off == 0 => moved(get(first), op.imm),
        0x17 if op.off == 0 => moved(get(first), -op.imm),
        0x61 => match get(op.src) {
            Some(Sure::Ctx(o)) => match o + op.off as i64 {
                XDP_MD_DATA => Some(Sure::Packet(0)),
                XDP_MD_DATA_END => Some(Sure::End(0)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
}

/// Meets two register states: what both surely hold.
fn sure_meet(a: &SureRegs, b: &SureRegs) -> SureRegs {
    std::array::from_fn(|r| if a[r] == b[r] { a[r] } else { None })
}

/// What the registers surely hold at the start of each block: r1 the context at the program's entry, nothing at a
/// function's entry or a restore slot (`IrProgram::entries`), the meet of the predecessors' ends elsewhere.
fn sure_block_entries(prog: &IrProgram) -> Vec<SureRegs> {
    let n = prog.blocks.len();
    let mut preds = vec![Vec::new(); n];
    for k in 0..n {
        for s in successors(prog, k) {
            preds[s].push(k);
        }
    }
    let seed = |k: usize| -> Option<SureRegs> {
        if prog.is_entry(k) || (k != 0 && preds[k].is_empty()) {
            Some([None; 11])
        } else if k == 0 {
            let mut regs = [None; 11];
            regs[1] = Some(Sure::Ctx(0));
            Some(regs)
        } else {
            None
        }
    };
    let mut entry: Vec<Option<SureRegs>> = (0..n).map(seed).collect();
    let mut exit: Vec<Option<SureRegs>> = vec![None; n];
    let mut changed = true;
    while changed {
        changed = false;
        for k in 0..n {
            let from_preds = preds[k].iter().filter_map(|&p| exit[p]);
            let start = seed(k)
                .into_iter()
                .chain(from_preds)
                .reduce(|a, b| sure_meet(&a, &b));
            let Some(start) = start else { continue };
            entry[k] = Some(start);
            let mut regs = start;
            for o in &prog.blocks[k].ops {
                sure_step(&mut regs, &o.op);
            }
            if exit[k] != Some(regs) {
                exit[k] = Some(regs);
                changed = true;
            }
        }
    }
    entry.into_iter().map(|e| e.unwrap_or([None; 11])).collect()
}

/// What the registers surely hold before the last op of block `k` (its bounds check).
fn sure_before_check(prog: &IrProgram, k: usize) -> SureRegs {
    let mut regs = sure_block_entries(prog)[k];
    let ops = &prog.blocks[k].ops;
    for o in &ops[..ops.len().saturating_sub(1)] {
        sure_step(&mut regs, &o.op);
    }
    regs
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
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for k in 0..n {
        for s in successors(prog, k) {
            preds[s].push(k);
        }
    }
    // The blocks from which a path of at least one edge leads to block `k` (one walk per zeroing run, not a table of
    // every pair).
    let reaching = |k: usize| {
        let mut seen = vec![false; n];
        let mut stack = preds[k].clone();
        while let Some(b) = stack.pop() {
            if !seen[b] {
                seen[b] = true;
                stack.extend(preds[b].iter().copied());
            }
        }
        seen
    };
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
        let reaches_k = reaching(k);
        let dirty_before = prog.blocks.iter().enumerate().any(|(b, block)| {
            block.ops.iter().enumerate().any(|(i, o)| {
                let store = o.op.is_store() && overlaps(o) && !in_run(o);
                store && (reaches_k[b] || (b == k && i < first_pos))
            })
        }) || reaches_k[k];
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

/// 6-byte fusion: a 4-byte and a 2-byte load of adjacent bytes (either order, `b + o` and `b + o + 4`, or `b + o`
/// and `b + o + 2`) whose values only feed a 4-byte and a 2-byte store of the same shape (`c + p`, `c + p + 4`, the
/// low part at the low address) become one 6-byte load, at the place of the earlier load, and one 6-byte store, at
/// the place of the later store; clang interleaves the four with other accesses (a MAC swap loads both addresses
/// before storing either). Nothing in between may write the bytes loaded or touch the bytes stored, the base
/// registers keep their values, and the 48-bit value lives in a register nothing else uses meanwhile. Returns the ops
/// removed.
pub fn fuse_six_byte(prog: &mut IrProgram) -> usize {
    let mut removed = 0;
    loop {
        let live = live_after(prog);
        let found = prog
            .blocks
            .iter()
            .enumerate()
            .find_map(|(k, b)| six_byte_candidate(&b.ops, &live[k]).map(|c| (k, c)));
        let Some((k, c)) = found else {
            break;
        };
        let ops = &mut prog.blocks[k].ops;
        let (first_load, low_load) = (c.loads.0.min(c.loads.1), c.loads.0);
        let last_store = c.stores.0.max(c.stores.1);
        let mut load = ops[low_load].clone();
        load.op.code = LDX6;
        load.op.dst = c.reg;
        load.origin = ops[first_load].origin;
        load.mem = c.mem.0;
        let mut store = ops[c.stores.0].clone();
        store.op.code = STX6;
        store.op.src = c.reg;
        store.origin = ops[last_store].origin;
        store.mem = c.mem.1;
        ops[first_load] = load;
        ops[last_store] = store;
        let mut gone = [c.loads.0.max(c.loads.1), c.stores.0.min(c.stores.1)];
        gone.sort_unstable();
        ops.remove(gone[1]);
        ops.remove(gone[0]);
        removed += 2;
    }
    removed
}

/// Four ops of a block that fuse into a 6-byte copy, by index: loads (low part, high part), stores (low, high) and
/// the register the 48-bit value moves through.
struct SixByte {
    loads: (usize, usize),
    stores: (usize, usize),
    reg: u8,
    /// The regions of the 6-byte load and store.
    mem: (Mem, Mem),
}

/// The region of a 6-byte access made of two adjacent ones in `a` and `b`; `None` when it cannot be told (an unknown
/// region, the read-only context, two different maps).
fn merged_mem(a: Mem, b: Mem) -> Option<Mem> {
    match (a, b) {
        (Mem::Packet, Mem::Packet) => Some(Mem::Packet),
        (Mem::Map(x), Mem::Map(y)) if x == y => Some(Mem::Map(x)),
        (
            Mem::Stack {
                frame: f,
                range: r1,
            },
            Mem::Stack {
                frame: g,
                range: r2,
            },
        ) if f == g => {
            let range = match (r1, r2) {
                (Some((l1, h1)), Some((l2, h2))) => Some((l1.min(l2), h1.max(h2))),
                _ => None,
            };
            Some(Mem::Stack { frame: f, range })
        }
        _ => None,
    }
}

/// Base, offset and size of a plain 2- or 4-byte load or store (the low 6 bits of its opcode's size field).
fn plain_access(op: &Op, load: bool) -> Option<(u8, i16, i16)> {
    let (w, h) = if load { (0x61, 0x69) } else { (0x63, 0x6b) };
    let size = match op.code {
        c if c == w => 4,
        c if c == h => 2,
        _ => return None,
    };
    if load && op.imm != 0 {
        return None;
    }
    Some(if load {
        (op.src, op.off, size)
    } else {
        (op.dst, op.off, size)
    })
}

/// The first 6-byte copy in `ops` (with `live[i]` the registers live after op `i`).
fn six_byte_candidate(ops: &[IrOp], live: &[u16]) -> Option<SixByte> {
    let n = ops.len();
    for lo in 0..n {
        let Some((b, o, size_lo)) = plain_access(&ops[lo].op, true) else {
            continue;
        };
        let size_hi = 6 - size_lo;
        let Some(hi) = (0..n).find(|&j| {
            j != lo && plain_access(&ops[j].op, true) == Some((b, o + size_lo, size_hi))
        }) else {
            continue;
        };
        let Some(load_mem) = merged_mem(ops[lo].mem, ops[hi].mem) else {
            continue;
        };
        let (x, y) = (ops[lo].op.dst, ops[hi].op.dst);
        let Some(s_lo) = sole_reader(ops, live, lo) else {
            continue;
        };
        let Some(s_hi) = sole_reader(ops, live, hi) else {
            continue;
        };
        let (Some((c, p, sl)), Some(high)) = (
            plain_access(&ops[s_lo].op, false),
            plain_access(&ops[s_hi].op, false),
        ) else {
            continue;
        };
        if sl != size_lo
            || high != (c, p + size_lo, size_hi)
            || ops[s_lo].op.src != x
            || ops[s_hi].op.src != y
            || [b, c].contains(&x)
            || [b, c].contains(&y)
            || x == y
        {
            continue;
        }
        let Some(store_mem) = merged_mem(ops[s_lo].mem, ops[s_hi].mem) else {
            continue;
        };
        let first = lo.min(hi);
        let last = s_lo.max(s_hi);
        if last < lo.max(hi) {
            continue;
        }
        let four = [lo, hi, s_lo, s_hi];
        let others = || (first + 1..last).filter(|i| !four.contains(i));
        // The bases hold their values from the first load to the last store.
        let writes_base = |r: u8| others().any(|i| writes(&ops[i].op) & (1 << r) != 0);
        if writes_base(b) || writes_base(c) {
            continue;
        }
        // The later load moves up to the earlier one, the earlier store down to the later one: what lies in
        // between must not write the bytes that load reads, nor touch the bytes that store writes.
        let bytes = |i: usize, mem| {
            let (base, off, size) = plain_access(&ops[i].op, ops[i].op.is_load())?;
            Some((base, off as i64, off as i64 + size as i64, mem))
        };
        let (Some(loaded), Some(stored)) = (
            bytes(lo.max(hi), load_mem),
            bytes(s_lo.min(s_hi), store_mem),
        ) else {
            continue;
        };
        // A copy whose source and destination may overlap stays in order: every load before any store.
        let apart = b == c && (p as i64 + 6 <= o as i64 || o as i64 + 6 <= p as i64);
        let overlap = crate::sched::alias(load_mem, store_mem) && !apart;
        if overlap && lo.max(hi) > s_lo.min(s_hi) {
            continue;
        }
        let load_span = first + 1..lo.max(hi);
        let store_span = s_lo.min(s_hi) + 1..last;
        let clash = |span: std::ops::Range<usize>, bytes, reads_too: bool| {
            span.filter(|i| !four.contains(i))
                .any(|i| conflicts(&ops[i], bytes, reads_too))
        };
        if clash(load_span, loaded, false) || clash(store_span, stored, true) {
            continue;
        }
        let busy = others().fold(0u16, |acc, i| acc | reads(&ops[i].op) | writes(&ops[i].op));
        let free = |r: &u8| {
            *r != 10 && ![b, c].contains(r) && busy & (1 << r) == 0 && live[last] & (1 << r) == 0
        };
        let Some(reg) = [x, y].into_iter().chain(0..10).find(free) else {
            continue;
        };
        return Some(SixByte {
            loads: (lo, hi),
            stores: (s_lo, s_hi),
            reg,
            mem: (load_mem, store_mem),
        });
    }
    None
}

/// The one op that reads the value op `def` loads, when it reads it only as a store's value and the value is dead
/// after it.
fn sole_reader(ops: &[IrOp], live: &[u16], def: usize) -> Option<usize> {
    let r = ops[def].op.dst;
    let mut reader = None;
    for (i, o) in ops.iter().enumerate().skip(def + 1) {
        if reads(&o.op) & (1 << r) != 0 {
            if reader.is_some() || !o.op.is_store() || o.op.dst == r {
                return None;
            }
            reader = Some(i);
            if live[i] & (1 << r) != 0 && writes(&o.op) & (1 << r) == 0 {
                return None;
            }
        }
        if writes(&o.op) & (1 << r) != 0 || o.op.is_control() || o.op.is_helper_call() {
            break;
        }
    }
    let i = reader?;
    (live[i] & (1 << r) == 0).then_some(i)
}

/// Whether op `o` may write the bytes `(base, lo, hi, region)` (or, with `reads_too`, read them), or is an effect
/// the copy may not move across (a call, a branch, a load that may fault).
fn conflicts(o: &IrOp, bytes: (u8, i64, i64, Mem), reads_too: bool) -> bool {
    let (base, lo, hi, mem) = bytes;
    if o.op.is_control() || o.op.is_helper_call() || o.op.fault_verdict().is_some() {
        return true;
    }
    let touches = o.op.is_store() || (reads_too && o.op.is_load());
    if !touches || !crate::sched::alias(o.mem, mem) {
        return false;
    }
    let (ob, ooff) = if o.op.is_load() {
        (o.op.src, o.op.off as i64)
    } else {
        (o.op.dst, o.op.off as i64)
    };
    let disjoint = ob == base && (ooff + o.op.access_size() as i64 <= lo || hi <= ooff);
    !disjoint || crate::sched::is_atomic(&o.op)
}

/// Byte-load fusion: clang reads a 16-bit field of a packed struct (the ethertype of `struct ethhdr`) as two byte
/// loads, a shift and an or, `lo = *(u8 *)(b + o); hi = *(u8 *)(b + o + 1); hi <<= 8; hi |= lo` (in either load
/// order, the or into either register); when nothing else reads the two bytes' registers and nothing in between
/// writes the base or the bytes, that is one little-endian 2-byte load `hi = *(u16 *)(b + o)` at the first load's
/// place. Returns the ops removed.
pub fn fuse_byte_loads(prog: &mut IrProgram) -> usize {
    let mut removed = 0;
    loop {
        let live = live_after(prog);
        let found = prog
            .blocks
            .iter()
            .enumerate()
            .find_map(|(k, b)| byte_pair(&b.ops, &live[k]).map(|c| (k, c)));
        let Some((k, [lo, hi, shift, or])) = found else {
            break;
        };
        let ops = &mut prog.blocks[k].ops;
        let first = lo.min(hi);
        let mut load = ops[lo].clone();
        load.op.code = CLASS_LDX | SIZE_H | MODE_MEM;
        load.op.dst = ops[or].op.dst;
        load.op.imm = ops[hi].op.imm;
        load.origin = ops[first].origin;
        ops[first] = load;
        let mut gone = [lo.max(hi), shift, or];
        gone.sort_unstable();
        for i in gone.into_iter().rev() {
            ops.remove(i);
        }
        removed += 3;
    }
    removed
}

/// Indices `[lo, hi, shift, or]` of the first two-byte read in `ops` that [`fuse_byte_loads`] can fuse.
fn byte_pair(ops: &[IrOp], live: &[u16]) -> Option<[usize; 4]> {
    let byte = |o: &Op| (o.code == CLASS_LDX | SIZE_B | MODE_MEM).then_some((o.src, o.off));
    // The first byte load of each base and offset: looking the partner up instead of scanning the block for it
    // keeps a long block linear.
    let mut first_load = std::collections::HashMap::new();
    for (j, op) in ops.iter().enumerate() {
        if let Some(at) = byte(&op.op) {
            first_load.entry(at).or_insert(j);
        }
    }
    for lo in 0..ops.len() {
        let Some((b, o)) = byte(&ops[lo].op) else {
            continue;
        };
        let Some(&hi) = first_load.get(&(b, o.wrapping_add(1))) else {
            continue;
        };
        let (l, h) = (ops[lo].op.dst, ops[hi].op.dst);
        // A loaded byte may replace the base only in the later load: the 2-byte load reads the base at the earlier one.
        let base_lost = (l == b && lo < hi) || (h == b && hi < lo);
        if l == h || base_lost || ops[lo].mem != ops[hi].mem || ops[lo].mem == Mem::Unknown {
            continue;
        }
        // A verdict the bytes carry (a removed bounds check) goes to the 2-byte load when both carry it.
        if ops[lo].op.imm != ops[hi].op.imm && ops[lo].op.imm != 0 {
            continue;
        }
        let last_load = lo.max(hi);
        let is_shift =
            |x: &Op| matches!(x.code, 0x67 | 0x64) && x.dst == h && x.imm == 8 && x.a.is_none();
        let Some(shift) = (last_load + 1..ops.len()).find(|&j| touches(&ops[j].op, h)) else {
            continue;
        };
        if !is_shift(&ops[shift].op) {
            continue;
        }
        let is_or = |x: &Op| {
            matches!(x.code, 0x4f | 0x4c)
                && x.a.is_none()
                && ((x.dst == h && x.src == l) || (x.dst == l && x.src == h))
        };
        let Some(or) =
            (shift + 1..ops.len()).find(|&j| touches(&ops[j].op, h) || touches(&ops[j].op, l))
        else {
            continue;
        };
        if !is_or(&ops[or].op) {
            continue;
        }
        let other = if ops[or].op.dst == h { l } else { h };
        if live[or] & (1 << other) != 0 {
            continue;
        }
        let first = lo.min(hi);
        let four = [lo, hi, shift, or];
        let between = (first + 1..or).filter(|i| !four.contains(i));
        let result = ops[or].op.dst;
        let clean = between.clone().all(|i| {
            let x = &ops[i];
            let regs = reads(&x.op) | writes(&x.op);
            regs & ((1 << l) | (1 << h) | (1 << result)) == 0
                && writes(&x.op) & (1 << b) == 0
                && !(x.op.is_store() && crate::sched::alias(x.mem, ops[lo].mem))
                && !x.op.is_helper_call()
                && !x.op.is_control()
                && x.op.fault_verdict().is_none()
        });
        if clean {
            return Some(four);
        }
    }
    None
}

/// Whether `op` reads or writes register `r`.
fn touches(op: &Op, r: u8) -> bool {
    (reads(op) | writes(op)) & (1 << r) != 0
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
