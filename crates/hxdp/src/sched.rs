//! List scheduling of each basic block into bundles of N lanes, respecting the Bernstein conditions, per-lane
//! forwarding, the one-helper-per-bundle limit, the maps module's value ports (at most one access that may load a
//! map value and one that may store one per bundle) and the core's one shared divider (at most one division or
//! modulo per bundle); then parallel branches and block layout.

use crate::ir::{reads, writes, IrOp, IrProgram, Mem};
use crate::isa::{Bundle, Op};
use hwxdp_ebpf::opcode::{ALU_DIV, ALU_MOD, CLASS_STX, MODE_ATOMIC};

/// A bundle under construction: which op of the block sits in each lane.
#[derive(Clone, Debug)]
pub struct Row {
    /// Ops by lane (an `lddw` fills its lane and marks the next one taken with `Taken`).
    pub lanes: Vec<Slot>,
}

/// A lane of a [`Row`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Free.
    Free,
    /// The op.
    Op(Box<IrOp>),
    /// The second half of the `lddw` in the lane before.
    Taken,
}

impl Row {
    fn new(lanes: usize) -> Row {
        Row {
            lanes: vec![Slot::Free; lanes],
        }
    }

    fn ops(&self) -> impl Iterator<Item = (usize, &IrOp)> {
        self.lanes.iter().enumerate().filter_map(|(l, s)| match s {
            Slot::Op(o) => Some((l, o.as_ref())),
            _ => None,
        })
    }

    fn has_helper(&self) -> bool {
        self.ops().any(|(_, o)| o.op.is_helper_call())
    }

    /// Whether `op` fits the value ports beside the row's ops: one possible map-value load and one possible
    /// map-value store per bundle (an atomic is both).
    fn value_ports_free(&self, op: &IrOp) -> bool {
        let (load, store) = value_port_use(op);
        !(load && self.ops().any(|(_, o)| value_port_use(o).0)
            || store && self.ops().any(|(_, o)| value_port_use(o).1))
    }

    /// Whether `op` fits the core's one divider beside the row's ops: at most one division or modulo per bundle.
    fn divider_free(&self, op: &IrOp) -> bool {
        !is_div(&op.op) || !self.ops().any(|(_, o)| is_div(&o.op))
    }

    fn free(&self, lane: usize, width: usize) -> bool {
        (lane..lane + width).all(|l| self.lanes.get(l) == Some(&Slot::Free))
    }
}

/// True for an atomic read-modify-write (`STX` in atomic mode).
pub fn is_atomic(op: &Op) -> bool {
    op.class() == CLASS_STX && op.code & 0xe0 == MODE_ATOMIC
}

/// True for a division or modulo of either width and signedness (`BPF_DIV`, `BPF_MOD`, and with `off` 1 `SDIV`,
/// `SMOD`): the ops that need the Sephirot core's divider, of which it has one, shared by the lanes.
pub fn is_div(op: &Op) -> bool {
    op.is_alu() && matches!(op.code & 0xf0, ALU_DIV | ALU_MOD)
}

/// Whether an access to `mem` may touch a map value: a map value, or a region the analysis could not tell.
pub fn may_be_map_value(mem: Mem) -> bool {
    matches!(mem, Mem::Map(_) | Mem::Unknown)
}

/// Which of the maps module's value ports `o` may use: (read port, write port). Loads use the read port, stores the
/// write port, atomics both; only accesses that may touch a map value count.
pub fn value_port_use(o: &IrOp) -> (bool, bool) {
    if !may_be_map_value(o.mem) {
        return (false, false);
    }
    let atomic = is_atomic(&o.op);
    (o.op.is_load() || atomic, o.op.is_store())
}

pub(crate) fn alias(a: Mem, b: Mem) -> bool {
    match (a, b) {
        (Mem::None, _) | (_, Mem::None) | (Mem::Ctx, _) | (_, Mem::Ctx) => false,
        (Mem::Unknown, _) | (_, Mem::Unknown) => true,
        (Mem::Packet, Mem::Packet) => true,
        (Mem::Map(x), Mem::Map(y)) => x == y,
        (
            Mem::Stack {
                frame: f1,
                range: r1,
            },
            Mem::Stack {
                frame: f2,
                range: r2,
            },
        ) => {
            f1 == f2
                && !matches!((r1, r2), (Some((l1, h1)), Some((l2, h2))) if h1 <= l2 || h2 <= l1)
        }
        _ => false,
    }
}

fn may_fault(o: &IrOp) -> bool {
    (o.op.is_load() || o.op.is_store()) && matches!(o.mem, Mem::Packet | Mem::Unknown)
}

fn side_effect(o: &IrOp) -> bool {
    o.op.is_helper_call() || (o.op.is_store() && !matches!(o.mem, Mem::Stack { .. }))
}

/// True for ops after which nothing of the block may run in the same bundle or before: local calls and tail calls.
fn barrier(o: &IrOp) -> bool {
    o.op.is_local_call() || (o.op.is_helper_call() && o.op.imm == 12)
}

/// How op `j` depends on op `i` (earlier in program order): `None` when independent, else `(delta, raw)`, meaning
/// `j` must sit in bundle `b(i) + delta` or later, and `raw` marks a register read-after-write (which, one bundle
/// later, must use the producer's lane).
pub(crate) fn constraint(i: &IrOp, j: &IrOp) -> Option<(usize, bool)> {
    let (wi, ri, wj, rj) = (writes(&i.op), reads(&i.op), writes(&j.op), reads(&j.op));
    let mut dep: Option<usize> = None;
    let mut need = |d: usize| dep = Some(dep.map_or(d, |x: usize| x.max(d)));
    let raw = rj & wi != 0;
    if raw || wj & wi != 0 {
        need(1);
    }
    // Write-after-read: the same bundle is fine, operands are read before results commit.
    if ri & wj != 0 {
        need(0);
    }
    let (mi, mj) = (
        i.op.is_load() || i.op.is_store(),
        j.op.is_load() || j.op.is_store(),
    );
    let (hi, hj) = (i.op.is_helper_call(), j.op.is_helper_call());
    if (hi && (mj || hj)) || (mi && hj && i.op.is_store()) {
        need(1);
    }
    if mi && hj {
        need(0);
    }
    if mi && mj && alias(i.mem, j.mem) {
        need(if i.op.is_store() { 1 } else { 0 });
    }
    let fault_order = (may_fault(i) && side_effect(j))
        || (side_effect(i) && may_fault(j))
        || (may_fault(i) && may_fault(j) && i.op.fault_verdict() != j.op.fault_verdict());
    if fault_order {
        need(1);
    }
    dep.map(|d| (d, raw && !hi && d == 1))
}

/// Schedules one block's ops into rows of `lanes` lanes: each op in the first bundle its dependences on earlier ops
/// ([`constraint`]) and the lanes, calls, value ports and divider allow, in time linear in the ops.
pub fn schedule_block(ops: &[IrOp], lanes: usize) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let mut placed = Placed::default();
    // `open[b]`: a bundle at or after `b` that may have a free lane (full rows are skipped, with path halving).
    let mut open: Vec<usize> = Vec::new();
    let mut floor = 0usize;
    for op in ops {
        let width = op.op.width().min(lanes);
        let terminator = op.op.is_control() || barrier(op);
        let (deps_bound, rj) = placed.earliest(op);
        let mut earliest = floor.max(deps_bound);
        if terminator {
            earliest = earliest.max(rows.len().saturating_sub(1));
            earliest = earliest.max(placed.latest.unwrap_or(0));
        }
        let mut b = next_open(&mut open, earliest);
        let (bundle, lane) = loop {
            if b >= rows.len() {
                rows.push(Row::new(lanes));
                open.push(rows.len() - 1);
            }
            // Read-after-write on a result of the previous bundle must stay on the producer's lane.
            let mut forced = placed.forced(rj, b);
            let first = forced.next();
            let agree = forced.all(|l| Some(l) == first);
            let fits = (!op.op.is_helper_call() || !rows[b].has_helper())
                && rows[b].value_ports_free(op)
                && rows[b].divider_free(op);
            let lane = match first {
                _ if !agree => None,
                Some(l) => rows[b].free(l, width).then_some(l),
                None => (0..=lanes - width).find(|&l| rows[b].free(l, width)),
            };
            match lane {
                Some(l) if fits => break (b, l),
                _ => b = next_open(&mut open, b + 1),
            }
        };
        rows[bundle].lanes[lane] = Slot::Op(Box::new(op.clone()));
        if width == 2 {
            rows[bundle].lanes[lane + 1] = Slot::Taken;
        }
        if rows[bundle].lanes.iter().all(|s| *s != Slot::Free) {
            open[bundle] = bundle + 1;
        }
        placed.place(op, bundle, lane);
        if terminator {
            floor = bundle + 1;
        }
    }
    rows
}

/// The first bundle at or after `b` whose row is not full (`open.len()` when all are), halving the paths walked.
fn next_open(open: &mut [usize], mut b: usize) -> usize {
    while b < open.len() && open[b] != b {
        let next = open[b];
        if next < open.len() {
            open[b] = open[next];
        }
        b = next;
    }
    b
}

/// The latest bundle of the ops of one kind placed so far, split by whether they store: what an op that must follow
/// a load (in the same bundle or later) or a store (a bundle later) of that kind is bounded by.
#[derive(Clone, Copy, Default)]
struct Accesses {
    load: Option<usize>,
    store: Option<usize>,
}

impl Accesses {
    fn add(&mut self, bundle: usize, store: bool) {
        let slot = if store {
            &mut self.store
        } else {
            &mut self.load
        };
        later(slot, bundle);
    }

    fn merge(&mut self, other: &Accesses) {
        if let Some(b) = other.load {
            self.add(b, false);
        }
        if let Some(b) = other.store {
            self.add(b, true);
        }
    }
}

/// The accesses to one stack frame placed so far: by byte for known ranges, and those of unknown range.
#[derive(Default)]
struct FrameAccesses {
    any: Accesses,
    unranged: Accesses,
    bytes: std::collections::HashMap<i64, Accesses>,
}

/// What the ops placed so far in a block bound the next op's bundle by: per register its last writer (bundle, lane,
/// whether a helper call) and its last reader, and per kind of memory access, call and fault the latest bundle. The
/// same bounds [`constraint`] gives against every earlier op, gathered as the ops are placed, so a block schedules in
/// time linear in its ops: of all earlier ops only the latest of each kind can bound the next one's bundle, and only
/// a register's last writer can sit in the bundle just before it (writers of one register are a bundle apart).
#[derive(Default)]
struct Placed {
    writer: [Option<(usize, usize, bool)>; 16],
    reader: [Option<usize>; 16],
    /// Helper calls.
    helper: Option<usize>,
    /// Loads and stores of any region (for a helper call after them).
    memory: Accesses,
    /// Accesses of any region but the context and none.
    aliasing: Accesses,
    unknown: Accesses,
    packet: Accesses,
    maps: std::collections::HashMap<u32, Accesses>,
    frames: std::collections::HashMap<u32, FrameAccesses>,
    /// Ops that may fault, and those by fault verdict.
    faulting: Option<usize>,
    by_verdict: Vec<(Option<u32>, usize)>,
    /// Helper calls and stores outside the stack.
    effects: Option<usize>,
    /// The latest bundle of any op.
    latest: Option<usize>,
}

fn later(slot: &mut Option<usize>, bundle: usize) {
    *slot = Some(slot.map_or(bundle, |b| b.max(bundle)));
}

fn bits(mask: u16) -> impl Iterator<Item = usize> {
    (0..16).filter(move |r| mask & (1 << r) != 0)
}

impl Placed {
    /// The accesses placed so far that `mem` may alias, gathered.
    fn aliased(&self, mem: Mem) -> Accesses {
        let mut out = self.unknown;
        match mem {
            Mem::None | Mem::Ctx => return Accesses::default(),
            Mem::Unknown => return self.aliasing,
            Mem::Packet => out.merge(&self.packet),
            Mem::Map(k) => {
                if let Some(m) = self.maps.get(&k) {
                    out.merge(m);
                }
            }
            Mem::Stack { frame, range } => {
                if let Some(f) = self.frames.get(&frame) {
                    match range {
                        None => out.merge(&f.any),
                        Some((lo, hi)) => {
                            out.merge(&f.unranged);
                            for byte in lo..hi {
                                if let Some(a) = f.bytes.get(&byte) {
                                    out.merge(a);
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The earliest bundle `op` may take after the ops placed so far, and the lanes of the results it reads that
    /// were written in each bundle (a read one bundle after its write must use the writer's lane): exactly the bound
    /// [`constraint`] gives against each earlier op, maximised.
    fn earliest(&self, op: &IrOp) -> (usize, u16) {
        let (wj, rj) = (writes(&op.op), reads(&op.op));
        let mut at = 0usize;
        let mut need = |b: Option<usize>, delta: usize| {
            if let Some(b) = b {
                at = at.max(b + delta);
            }
        };
        for r in bits(rj | wj) {
            need(self.writer[r].map(|w| w.0), 1);
        }
        for r in bits(wj) {
            need(self.reader[r], 0);
        }
        let mj = op.op.is_load() || op.op.is_store();
        let hj = op.op.is_helper_call();
        if mj || hj {
            need(self.helper, 1);
        }
        if hj {
            need(self.memory.load, 0);
            need(self.memory.store, 1);
        }
        if mj {
            let a = self.aliased(op.mem);
            need(a.load, 0);
            need(a.store, 1);
        }
        if side_effect(op) {
            need(self.faulting, 1);
        }
        if may_fault(op) {
            need(self.effects, 1);
            let verdict = op.op.fault_verdict();
            for &(v, b) in &self.by_verdict {
                if v != verdict {
                    need(Some(b), 1);
                }
            }
        }
        (at, rj)
    }

    /// The lanes `op` (reading `rj`) must use in bundle `b`: those of the non-call writers of what it reads placed in
    /// the bundle before.
    fn forced(&self, rj: u16, b: usize) -> impl Iterator<Item = usize> + '_ {
        bits(rj).filter_map(move |r| match self.writer[r] {
            Some((w, lane, false)) if w + 1 == b => Some(lane),
            _ => None,
        })
    }

    fn place(&mut self, op: &IrOp, bundle: usize, lane: usize) {
        let helper = op.op.is_helper_call();
        for r in bits(writes(&op.op)) {
            self.writer[r] = Some((bundle, lane, helper));
        }
        for r in bits(reads(&op.op)) {
            later(&mut self.reader[r], bundle);
        }
        if helper {
            later(&mut self.helper, bundle);
        }
        let store = op.op.is_store();
        if op.op.is_load() || store {
            self.memory.add(bundle, store);
            let kind = match op.mem {
                Mem::None | Mem::Ctx => None,
                Mem::Unknown => Some(&mut self.unknown),
                Mem::Packet => Some(&mut self.packet),
                Mem::Map(k) => Some(self.maps.entry(k).or_default()),
                Mem::Stack { frame, range } => {
                    let f = self.frames.entry(frame).or_default();
                    f.any.add(bundle, store);
                    match range {
                        None => Some(&mut f.unranged),
                        Some((lo, hi)) => {
                            for byte in lo..hi {
                                f.bytes.entry(byte).or_default().add(bundle, store);
                            }
                            None
                        }
                    }
                }
            };
            if !matches!(op.mem, Mem::None | Mem::Ctx) {
                self.aliasing.add(bundle, store);
            }
            if let Some(k) = kind {
                k.add(bundle, store);
            }
        }
        if may_fault(op) {
            later(&mut self.faulting, bundle);
            let verdict = op.op.fault_verdict();
            match self.by_verdict.iter_mut().find(|(v, _)| *v == verdict) {
                Some((_, b)) => *b = (*b).max(bundle),
                None => self.by_verdict.push((verdict, bundle)),
            }
        }
        if side_effect(op) {
            later(&mut self.effects, bundle);
        }
        later(&mut self.latest, bundle);
    }
}

/// Fills the free lanes of block `k`'s last row with the branch or exit that makes up the whole of the next block,
/// behind the row's own branches in lane priority. Returns true when the next block's op moved (it had no other way
/// in) or was copied (an exit).
pub fn merge_next_branch(
    rows: &mut [Vec<Row>],
    prog: &IrProgram,
    preds: &[usize],
    k: usize,
) -> bool {
    merge_next_branch_in(rows, 0, prog, preds, k)
}

/// [`merge_next_branch`] on the rows of blocks `first..first + rows.len()` only (`rows[0]` is block `first`'s): the
/// blocks past the window count as absent.
pub fn merge_next_branch_in(
    rows: &mut [Vec<Row>],
    first: usize,
    prog: &IrProgram,
    preds: &[usize],
    k: usize,
) -> bool {
    let end = first + rows.len();
    if !prog.blocks[k].falls_through || rows[k - first].is_empty() {
        return false;
    }
    // The block execution falls into: the next one, past blocks that emptied out (and fall through).
    let mut j = k + 1;
    let mut chain_single = true;
    // An entry point among the blocks the merge would empty would lose its bundle.
    let mut chain_entry = false;
    while j < end && rows[j - first].is_empty() && prog.blocks[j].falls_through {
        chain_single &= preds[j] <= 1;
        chain_entry |= prog.is_entry(j);
        j += 1;
    }
    if j >= end || prog.blocks[j].func != prog.blocks[k].func {
        return false;
    }
    let next_rows = &rows[j - first];
    let [row] = next_rows.as_slice() else {
        return false;
    };
    let mut next_ops = row.ops();
    let (Some((_, op)), None) = (next_ops.next(), next_ops.next()) else {
        return false;
    };
    let op = op.clone();
    drop(next_ops);
    let single_pred = preds[j] <= 1 && chain_single;
    let is_exit = op.op.is_exit();
    if !(op.op.is_cond_jump() || op.op.is_ja() || is_exit) || !(single_pred || is_exit) {
        return false;
    }
    if single_pred && (chain_entry || prog.is_entry(j)) {
        return false;
    }
    let last = rows[k - first].last().expect("rows not empty");
    let written = last.ops().fold(0u16, |acc, (_, o)| acc | writes(&o.op));
    if reads(&op.op) & written != 0 {
        return false;
    }
    let after = last
        .ops()
        .filter(|(_, o)| o.op.is_control() || barrier(o))
        .map(|(l, _)| l + 1)
        .max()
        .unwrap_or(0);
    if last
        .ops()
        .any(|(_, o)| barrier(o) || o.op.is_exit() || o.op.is_ja())
    {
        return false;
    }
    let Some(lane) = (after..last.lanes.len()).find(|&l| last.free(l, 1)) else {
        return false;
    };
    let last = rows[k - first].last_mut().expect("rows not empty");
    last.lanes[lane] = Slot::Op(Box::new(op));
    if single_pred {
        rows[j - first].clear();
    }
    true
}

/// Converts rows to bundles, resolving jump and call targets (eBPF instruction indices) to bundle indices.
pub fn layout(
    prog: &IrProgram,
    rows: &[Vec<Row>],
    base: usize,
    lanes: usize,
) -> (Vec<Bundle>, Vec<usize>) {
    let mut starts = Vec::with_capacity(rows.len());
    let mut at = base;
    for r in rows {
        starts.push(at);
        at += r.len();
    }
    let bundle_of = |insn: u32| -> usize {
        crate::passes::block_at(prog, insn)
            .map(|k| starts[k])
            .unwrap_or(usize::MAX)
    };
    let mut out = Vec::new();
    for r in rows.iter().flatten() {
        let mut bundle = Bundle::empty(lanes);
        for (l, o) in r.ops() {
            let mut op: Op = o.op;
            if let Some(t) = o.target {
                let target = bundle_of(t);
                if op.is_local_call() {
                    op.imm = target as i64;
                } else {
                    op.off = target as u16 as i16;
                }
            }
            bundle.lanes[l] = Some(op);
        }
        out.push(bundle);
    }
    (out, starts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwxdp_ebpf::Insn;

    /// The scheduler as it was before [`Placed`]: every earlier op's [`constraint`] taken one by one. What the
    /// linear scheduler must reproduce exactly.
    fn schedule_all_pairs(ops: &[IrOp], lanes: usize) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::new();
        let mut placed: Vec<(usize, usize)> = Vec::new();
        let mut floor = 0usize;
        for (j, op) in ops.iter().enumerate() {
            let width = op.op.width().min(lanes);
            let terminator = op.op.is_control() || barrier(op);
            let mut earliest = floor;
            if terminator {
                earliest = earliest.max(rows.len().saturating_sub(1));
                earliest = earliest.max(placed.iter().map(|p| p.0).max().unwrap_or(0));
            }
            let deps: Vec<(usize, usize, usize, bool)> = (0..j)
                .filter_map(|i| {
                    let (delta, raw) = constraint(&ops[i], op)?;
                    Some((placed[i].0, placed[i].1, delta, raw))
                })
                .collect();
            for &(b, _, delta, _) in &deps {
                earliest = earliest.max(b + delta);
            }
            let mut b = earliest;
            let (bundle, lane) = loop {
                if b >= rows.len() {
                    rows.push(Row::new(lanes));
                }
                let forced: Vec<usize> = deps
                    .iter()
                    .filter(|d| d.3 && d.0 + 1 == b)
                    .map(|d| d.1)
                    .collect();
                let fits = (!op.op.is_helper_call() || !rows[b].has_helper())
                    && rows[b].value_ports_free(op)
                    && rows[b].divider_free(op);
                let lane = if forced.iter().any(|&l| l != forced[0]) {
                    None
                } else if let Some(&l) = forced.first() {
                    rows[b].free(l, width).then_some(l)
                } else {
                    (0..=lanes - width).find(|&l| rows[b].free(l, width))
                };
                match lane {
                    Some(l) if fits => break (b, l),
                    _ => b += 1,
                }
            };
            rows[bundle].lanes[lane] = Slot::Op(Box::new(op.clone()));
            if width == 2 {
                rows[bundle].lanes[lane + 1] = Slot::Taken;
            }
            placed.push((bundle, lane));
            if terminator {
                floor = bundle + 1;
            }
        }
        rows
    }

    /// A random block: ALU operations (divisions among them), `lddw`, loads and stores of every region (stack ranges
    /// that overlap or not, two frames, two maps, unknown), helper calls, local calls, and an exit at the end.
    fn random_block(seed: &mut u64, len: usize) -> Vec<IrOp> {
        let mut next = |m: u64| {
            *seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (*seed >> 33) % m
        };
        let mut ops = Vec::new();
        for k in 0..len {
            let dst = next(10) as u8;
            let src = next(11) as u8;
            let (insn, mem) = match next(12) {
                0..=3 => {
                    let op = [0x00u8, 0x10, 0x20, 0x30, 0x40, 0x50, 0x90, 0xa0, 0xb0, 0xc0]
                        [next(10) as usize];
                    let x = if next(2) == 0 { 0x08 } else { 0 };
                    (
                        Insn::new(0x07 | op | x, dst, src, 0, next(100) as i64 + 1),
                        Mem::None,
                    )
                }
                4 => (Insn::new(0x18, dst, 0, 0, next(1000) as i64), Mem::None),
                5..=7 => {
                    let size = [1i64, 2, 4, 8][next(4) as usize];
                    let code = [0x71u8, 0x69, 0x61, 0x79][size.trailing_zeros() as usize];
                    let store = next(2) == 0;
                    let code = if store { code + 2 } else { code };
                    let lo = -(next(6) as i64) * 4 - 8;
                    let mem = match next(7) {
                        0 => Mem::Packet,
                        1 => Mem::Map(next(2) as u32),
                        2 => Mem::Unknown,
                        3 => Mem::Ctx,
                        4 => Mem::Stack {
                            frame: next(2) as u32,
                            range: None,
                        },
                        _ => Mem::Stack {
                            frame: next(2) as u32,
                            range: Some((lo, lo + size)),
                        },
                    };
                    let verdict = next(3) as i64;
                    (
                        Insn::new(code, dst, src, lo as i16, if store { 0 } else { verdict }),
                        mem,
                    )
                }
                8..=9 => (Insn::new(0x85, 0, 0, 0, 1 + next(30) as i64), Mem::None),
                10 => (Insn::new(0x85, 0, 1, 0, 3), Mem::None),
                _ => (Insn::new(0xbf, dst, src, 0, 0), Mem::None),
            };
            ops.push(IrOp {
                op: Op::from_insn(&insn),
                origin: k as u32,
                target: None,
                mem,
            });
        }
        ops.push(IrOp {
            op: Op::from_insn(&Insn::new(0x95, 0, 0, 0, 0)),
            origin: len as u32,
            target: None,
            mem: Mem::None,
        });
        ops
    }

    #[test]
    fn the_linear_scheduler_places_every_op_where_comparing_all_pairs_does() {
        let mut seed = 7u64;
        for round in 0..400 {
            let len = 1 + round % 60;
            let ops = random_block(&mut seed, len);
            for lanes in [1, 2, 4, 8] {
                let want = schedule_all_pairs(&ops, lanes);
                let got = schedule_block(&ops, lanes);
                assert_eq!(
                    got.len(),
                    want.len(),
                    "round {round}, {lanes} lanes: {ops:?}"
                );
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(g.lanes, w.lanes, "round {round}, {lanes} lanes");
                }
            }
        }
    }
}
