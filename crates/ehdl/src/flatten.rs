//! Flattening: bpf-to-bpf calls inlined, bounded loops unrolled, blocks laid out in reverse post-order so that every
//! jump goes forward and instruction order is a topological order of the control-flow graph.
//!
//! A loop is unrolled when its trip count follows from an induction register: one conditional jump that leaves the
//! loop, runs on every iteration (its block dominates every latch) and compares the register (or a copy of it made
//! in the test's block: `rT = rI`, `wT = wI`, or a copy zero-extended by `<<= 32; >>= 32`) with a constant (an
//! immediate, or a register constant at the test, on either side); the
//! register is set to the same constant on every entry and changed inside the loop only by one `+=`/`-=` of a
//! constant, also on every iteration. The loop body is copied once per iteration; the last copy's jump back goes to
//! a trap block (`r0 = 0; exit`) that the bound proves unreachable.

use crate::EhdlError;
use hwxdp_analysis::{
    BlockId, DomTree, EdgeKind, FuncId, InsnId, Liveness, Paths, ProgramCfg, RegSet, Regions, Value,
};
use hwxdp_ebpf::{AluOp, CallKind, Insn, InsnKind, JmpCond, Source, Width, STACK_SIZE};
use hwxdp_object::{MapSpec, ProgramSpec};
use std::collections::BTreeSet;

/// Most iterations a loop may be unrolled to.
pub const MAX_TRIPS: u64 = 4096;

/// A loop the flattening unrolled.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Unrolled {
    /// The loop's first instruction: its slot index in the original program.
    pub header: u32,
    /// The jump back to it: its slot index in the original program.
    pub latch: u32,
    /// The register whose value bounds the loop.
    pub induction: u8,
    /// Iterations (copies of the body).
    pub trips: u64,
}

/// The flattened program.
#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    /// One function, every jump forward.
    pub spec: ProgramSpec,
    /// For each instruction of `spec`, the instruction of the original program it comes from, by slot index (as
    /// `hwxdp disasm` and the kernel's verifier number it: a `lddw` takes two).
    pub origin: Vec<u32>,
    /// Loops unrolled, innermost first.
    pub loops: Vec<Unrolled>,
    /// bpf-to-bpf calls inlined: the call's original slot index and the callee's name (tail calls too, once per call
    /// site and candidate program, see [`crate::tailcall`]).
    pub inlined: Vec<(u32, String)>,
    /// The programs (indices in the object's program list) inlined as tail-call targets; a PROG_ARRAY slot may name
    /// only these.
    pub tail_targets: Vec<u32>,
}

/// An instruction whose jump target is symbolic until encoding.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Item {
    pub(crate) kind: InsnKind,
    /// Index of the target item (after resolution) for jumps.
    pub(crate) target: Option<usize>,
    pub(crate) origin: u32,
}

/// Inlines calls and unrolls loops of `spec`.
pub fn flatten(spec: &ProgramSpec, maps: &[MapSpec], max_insns: usize) -> Result<Flat, EhdlError> {
    let prog = ProgramCfg::build(spec)?;
    let mut inlined = Vec::new();
    let live = Liveness::compute(&prog);
    let items = Inliner {
        spec,
        slots: hwxdp_ebpf::slot_offsets(&spec.insns),
        prog: &prog,
        depths: if prog.funcs.len() > 1 {
            frame_depths(&prog, &Regions::compute(&prog, maps), &live)
        } else {
            vec![0]
        },
        writes: callee_saved_writes(&prog, &live),
        live: &live,
        inlined: &mut inlined,
        max_insns,
    }
    .run()?;
    let (mut cur, mut origin) = encode(spec, &items, max_insns)?;
    let mut loops = Vec::new();
    loop {
        let prog = ProgramCfg::build(&cur)?;
        let cfg = prog.func(FuncId(0));
        let paths = Paths::compute(cfg, 0);
        let mut graph = Graph::from_cfg(&prog, &origin);
        if paths.back_edges.is_empty() {
            let items = graph.emit();
            let (spec_out, origin_out) = encode(&cur, &items, max_insns)?;
            return Ok(Flat {
                spec: spec_out,
                origin: origin_out,
                loops,
                inlined,
                tail_targets: Vec::new(),
            });
        }
        let dom = DomTree::dominators(cfg);
        let regions = Regions::compute(&prog, maps);
        let live = Liveness::compute(&prog);
        let headers: BTreeSet<BlockId> = paths.back_edges.iter().map(|e| e.1).collect();
        let mut best: Option<(BlockId, Vec<BlockId>, BTreeSet<BlockId>)> = None;
        for &h in &headers {
            let latches: Vec<BlockId> = paths
                .back_edges
                .iter()
                .filter(|e| e.1 == h)
                .map(|e| e.0)
                .collect();
            for &l in &latches {
                if !dom.dominates(h, l) {
                    return Err(EhdlError::Irreducible {
                        program: spec.name.clone(),
                        insn: origin[cfg.block(l).last().index()] as usize,
                    });
                }
            }
            let body = natural_loop(cfg, h, &latches);
            if best.as_ref().is_none_or(|b| body.len() < b.2.len()) {
                best = Some((h, latches, body));
            }
        }
        let (header, latches, body) = best.expect("a back edge has a header");
        let ctx = LoopCtx {
            prog: &prog,
            dom: &dom,
            regions: &regions,
            live: &live,
            header,
            latches: &latches,
            body: &body,
        };
        let (induction, trips) = ctx.trip_count().map_err(|why| EhdlError::UnboundedLoop {
            program: spec.name.clone(),
            insn: origin[cfg.block(latches[0]).last().index()] as usize,
            header: origin[cfg.block(header).start.index()] as usize,
            why,
        })?;
        let body_insns: usize = body.iter().map(|b| cfg.block(*b).insns().count()).sum();
        let grown = cur.insns.len() as u64 + body_insns as u64 * trips.saturating_sub(1);
        if grown > max_insns as u64 {
            return Err(EhdlError::TooLarge {
                program: spec.name.clone(),
                insns: grown.min(usize::MAX as u64) as usize,
                limit: max_insns,
            });
        }
        loops.push(Unrolled {
            header: origin[cfg.block(header).start.index()],
            latch: origin[cfg.block(latches[0]).last().index()],
            induction,
            trips,
        });
        graph.unroll(header, &body, trips as usize);
        let items = graph.emit();
        (cur, origin) = encode(&cur, &items, max_insns)?;
    }
}

/// Blocks of the natural loop of `header` closed by `latches`.
fn natural_loop(
    cfg: &hwxdp_analysis::Cfg,
    header: BlockId,
    latches: &[BlockId],
) -> BTreeSet<BlockId> {
    let mut body = BTreeSet::from([header]);
    let mut work: Vec<BlockId> = latches.to_vec();
    while let Some(b) = work.pop() {
        if body.insert(b) {
            work.extend(cfg.block(b).preds.iter().copied());
        }
    }
    body
}

/// Encodes items into a single-function program named like `like`.
pub(crate) fn encode(
    like: &ProgramSpec,
    items: &[Item],
    max_insns: usize,
) -> Result<(ProgramSpec, Vec<u32>), EhdlError> {
    if items.len() > max_insns {
        return Err(EhdlError::TooLarge {
            program: like.name.clone(),
            insns: items.len(),
            limit: max_insns,
        });
    }
    let mut slots = Vec::with_capacity(items.len() + 1);
    let mut slot = 0i64;
    for it in items {
        slots.push(slot);
        slot += it.kind.to_insn().slots() as i64;
    }
    slots.push(slot);
    let insns: Vec<Insn> = items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let mut kind = it.kind;
            if let Some(t) = it.target {
                let off = slots[t] - slots[i] - 1;
                match &mut kind {
                    InsnKind::Branch { off: o, .. } => *o = off as i16,
                    InsnKind::Ja { .. } | InsnKind::JaLong { .. } => {
                        kind = if i16::try_from(off).is_ok() {
                            InsnKind::Ja { off: off as i16 }
                        } else {
                            InsnKind::JaLong { imm: off as i32 }
                        };
                    }
                    _ => {}
                }
            }
            kind.to_insn()
        })
        .collect();
    let mut spec = ProgramSpec::standalone(&like.name, &like.section, insns);
    spec.own_len = spec.insns.len();
    Ok((spec, items.iter().map(|i| i.origin).collect()))
}

/// r6-r9: the registers a callee must give back as it found them.
const CALLEE_SAVED: RegSet = RegSet(0b11_1100_0000);

/// How far each function's own frame reaches below its r10, by [`FuncId`]: the lowest r10-relative byte any of its
/// instructions addresses or holds a pointer to; the whole frame when an offset is known only at run time.
fn frame_depths(prog: &ProgramCfg, regions: &Regions, live: &Liveness) -> Vec<i64> {
    let whole = STACK_SIZE as i64;
    prog.funcs
        .iter()
        .map(|cfg| {
            let mut depth = 0i64;
            for i in cfg.start.index()..cfg.end.index() {
                let Some(st) = regions.state_before(InsnId::new(i)) else {
                    continue;
                };
                let displacement = match prog.kinds[i] {
                    InsnKind::Load { base, off, .. }
                    | InsnKind::Store { base, off, .. }
                    | InsnKind::Atomic { base, off, .. } => Some((base, off as i64)),
                    _ => None,
                };
                for r in live.effects[i].uses.iter() {
                    let Value::Stack { frame, off } = st.reg(r) else {
                        continue;
                    };
                    if frame != cfg.func {
                        continue;
                    }
                    let extra = displacement.filter(|d| d.0 == r).map_or(0, |d| d.1);
                    depth = depth.max(
                        off.constant()
                            .map_or(whole, |k| k.saturating_add(extra).saturating_neg()),
                    );
                }
            }
            depth.clamp(0, whole)
        })
        .collect()
}

/// The callee-saved registers each function writes, itself or through the functions it calls, by [`FuncId`].
fn callee_saved_writes(prog: &ProgramCfg, live: &Liveness) -> Vec<RegSet> {
    let mut writes = vec![RegSet::EMPTY; prog.funcs.len()];
    for f in prog.callees_first() {
        let cfg = prog.func(f);
        let mut set = RegSet::EMPTY;
        for i in cfg.start.index()..cfg.end.index() {
            set = set.union(live.effects[i].defs.intersect(CALLEE_SAVED));
            if let Some(c) = prog.callee_at(InsnId::new(i)) {
                set = set.union(writes[c.index()]);
            }
        }
        writes[f.index()] = set;
    }
    writes
}

/// Inlines every bpf-to-bpf call of the program into one instruction sequence.
///
/// A callee's frame is placed below its caller's, as the kernel lays frames out: the inlined callee's r10-relative
/// accesses move down by the caller's frame depth, plus 8 bytes for each of the caller's r6-r9 that the callee
/// writes while the caller still needs it; those are stored there before the callee's code and loaded back at the
/// return point. All frames share the one 512-byte stack.
struct Inliner<'a> {
    spec: &'a ProgramSpec,
    /// The slot index of each instruction of `spec`: what origins and messages name.
    slots: Vec<usize>,
    prog: &'a ProgramCfg,
    live: &'a Liveness,
    /// Each function's frame depth in bytes ([`frame_depths`]).
    depths: Vec<i64>,
    /// Each function's writes of r6-r9 ([`callee_saved_writes`]).
    writes: Vec<RegSet>,
    inlined: &'a mut Vec<(u32, String)>,
    /// The instruction limit: inlining stops once past it (calls that double per level grow exponentially).
    max_insns: usize,
}

/// Call frames the kernel's verifier allows (`MAX_CALL_FRAMES`): a deeper chain is refused before it is inlined,
/// which recurses once per frame.
const MAX_CALL_FRAMES: usize = 8;

impl Inliner<'_> {
    fn run(mut self) -> Result<Vec<Item>, EhdlError> {
        let mut items = Vec::new();
        let mut chain = vec![FuncId(0)];
        self.emit(FuncId(0), &mut items, &mut chain, (0, 0))?;
        Ok(items)
    }

    /// Emits function `f`, inlined for the call at slot `frame.0`, whose r10 lies `frame.1` bytes above the
    /// program's (0 or negative); returns the items of its `exit`s when it is a callee (they become jumps to the
    /// return point).
    fn emit(
        &mut self,
        f: FuncId,
        items: &mut Vec<Item>,
        chain: &mut Vec<FuncId>,
        frame: (usize, i64),
    ) -> Result<Vec<usize>, EhdlError> {
        let base = frame.1;
        let cfg = self.prog.func(f);
        let start = cfg.start.index();
        let mut at = vec![0usize; cfg.end.index() - start];
        let mut jumps: Vec<(usize, usize)> = Vec::new();
        let mut exits = Vec::new();
        for i in start..cfg.end.index() {
            at[i - start] = items.len();
            let kind = self.prog.kinds[i];
            let origin = self.slots[i] as u32;
            match kind {
                InsnKind::Call {
                    kind: CallKind::Local,
                    ..
                } => self.inline_call(f, InsnId::new(i), items, chain, base)?,
                InsnKind::Exit if f != FuncId(0) => {
                    exits.push(items.len());
                    items.push(Item {
                        kind: InsnKind::Ja { off: 0 },
                        target: None,
                        origin,
                    });
                }
                k if k.jump_offset().is_some() => {
                    let b = cfg.block_of(InsnId::new(i)).expect("own instruction");
                    let target = cfg
                        .block(b)
                        .succs
                        .iter()
                        .find(|(_, e)| *e != EdgeKind::Fallthrough)
                        .map(|(s, _)| cfg.block(*s).start.index())
                        .expect("a jump has a target");
                    jumps.push((items.len(), target));
                    items.push(Item {
                        kind,
                        target: None,
                        origin,
                    });
                }
                _ => {
                    let rebased = self.rebase(f, InsnId::new(i), frame)?;
                    items.extend(rebased.into_iter().map(|kind| Item {
                        kind,
                        target: None,
                        origin,
                    }));
                }
            }
        }
        for (item, target) in jumps {
            items[item].target = Some(at[target - start]);
        }
        Ok(exits)
    }

    /// The error for the call at `call`.
    fn refuse(&self, call: InsnId, why: String) -> EhdlError {
        let callee = self.prog.callee_at(call).expect("local call");
        EhdlError::Inline {
            program: self.spec.name.clone(),
            insn: self.slots[call.index()],
            callee: self.prog.func(callee).name.clone(),
            why,
        }
    }

    /// Inlines the callee of the call at `call` in function `f` (frame at `base`), with the spills around it.
    fn inline_call(
        &mut self,
        f: FuncId,
        call: InsnId,
        items: &mut Vec<Item>,
        chain: &mut Vec<FuncId>,
        base: i64,
    ) -> Result<(), EhdlError> {
        let callee = self.prog.callee_at(call).expect("local call");
        if chain.contains(&callee) {
            return Err(self.refuse(call, "recursive call".into()));
        }
        if chain.len() >= MAX_CALL_FRAMES {
            return Err(self.refuse(
                call,
                format!("calls nested deeper than {MAX_CALL_FRAMES} frames (the kernel's limit)"),
            ));
        }
        if items.len() > self.max_insns {
            return Err(EhdlError::TooLarge {
                program: self.spec.name.clone(),
                insns: items.len(),
                limit: self.max_insns,
            });
        }
        let entry = self.live.block_in[callee.index()][0].intersect(CALLEE_SAVED);
        if let Some(r) = entry.iter().next() {
            return Err(self.refuse(
                call,
                format!("the callee reads r{r} before writing it (a callee's r6-r9 hold no value)"),
            ));
        }
        let spilled: Vec<u8> = self.writes[callee.index()]
            .intersect(self.live.live_out(call))
            .iter()
            .collect();
        let spill_top = base - (self.depths[f.index()] + 7) / 8 * 8;
        let callee_base = spill_top - 8 * spilled.len() as i64;
        let need = self.depths[callee.index()] - callee_base;
        if need > STACK_SIZE as i64 && (self.depths[callee.index()] > 0 || !spilled.is_empty()) {
            return Err(self.refuse(
                call,
                format!(
                    "the frames down to the callee's and {} spilled registers need {need} bytes of stack, over \
                     {STACK_SIZE}",
                    spilled.len()
                ),
            ));
        }
        let origin = self.slots[call.index()] as u32;
        let slot = |k: usize| (spill_top - 8 * (k as i64 + 1)) as i16;
        for (k, &r) in spilled.iter().enumerate() {
            items.push(Item {
                kind: InsnKind::Store {
                    size: Width::DW,
                    base: 10,
                    off: slot(k),
                    src: Source::Reg(r),
                },
                target: None,
                origin,
            });
        }
        self.inlined
            .push((origin, self.prog.func(callee).name.clone()));
        chain.push(callee);
        let callee_exits = self.emit(
            callee,
            items,
            chain,
            (self.slots[call.index()], callee_base),
        )?;
        chain.pop();
        let back = items.len();
        for e in callee_exits {
            items[e].target = Some(back);
        }
        for (k, &dst) in spilled.iter().enumerate() {
            items.push(Item {
                kind: InsnKind::Load {
                    size: Width::DW,
                    signed: false,
                    dst,
                    base: 10,
                    off: slot(k),
                },
                target: None,
                origin,
            });
        }
        Ok(())
    }

    /// Instruction `i` of function `f` with its frame moved to `frame.1` (inlined for the call at slot `frame.0`):
    /// r10-relative accesses moved by it, a copy of r10 followed by `+= frame.1`. Any other use of r10 in a moved
    /// frame is refused.
    fn rebase(
        &self,
        f: FuncId,
        i: InsnId,
        frame: (usize, i64),
    ) -> Result<Vec<InsnKind>, EhdlError> {
        let (call, base) = frame;
        let kind = self.prog.kinds[i.index()];
        if base == 0 || !self.live.effects[i.index()].uses.contains(10) {
            return Ok(vec![kind]);
        }
        let moved = |off: i16| i16::try_from(off as i64 + base).ok();
        let out = match kind {
            InsnKind::Load {
                base: 10,
                off,
                size,
                signed,
                dst,
            } => moved(off).map(|off| {
                vec![InsnKind::Load {
                    size,
                    signed,
                    dst,
                    base: 10,
                    off,
                }]
            }),
            InsnKind::Store {
                base: 10,
                off,
                size,
                src,
            } if src != Source::Reg(10) => moved(off).map(|off| {
                vec![InsnKind::Store {
                    size,
                    base: 10,
                    off,
                    src,
                }]
            }),
            InsnKind::Atomic {
                base: 10,
                off,
                size,
                op,
                src,
            } if src != 10 => moved(off).map(|off| {
                vec![InsnKind::Atomic {
                    size,
                    op,
                    base: 10,
                    off,
                    src,
                }]
            }),
            InsnKind::Alu {
                wide: true,
                op: AluOp::Mov,
                dst,
                src: Source::Reg(10),
            } if dst != 10 => i32::try_from(base).ok().map(|b| {
                vec![
                    kind,
                    InsnKind::Alu {
                        wide: true,
                        op: AluOp::Add,
                        dst,
                        src: Source::Imm(b),
                    },
                ]
            }),
            _ => None,
        };
        out.ok_or_else(|| EhdlError::Inline {
            program: self.spec.name.clone(),
            insn: call,
            callee: self.prog.func(f).name.clone(),
            why: format!(
                "instruction {} uses r10 other than as the base of a load or store or in a 64-bit copy (the \
                 callee's frame moves below the caller's)",
                self.slots[i.index()]
            ),
        })
    }
}

/// How a block ends.
#[derive(Clone, Copy, Debug)]
enum Term {
    Exit(u32),
    Goto(usize, u32),
    Branch {
        kind: InsnKind,
        origin: u32,
        taken: usize,
        fall: usize,
    },
}

#[derive(Clone, Debug)]
struct GBlock {
    insns: Vec<(InsnKind, u32)>,
    term: Term,
}

/// The one function's blocks, editable.
struct Graph {
    blocks: Vec<GBlock>,
}

impl Graph {
    fn from_cfg(prog: &ProgramCfg, origin: &[u32]) -> Graph {
        let cfg = prog.func(FuncId(0));
        let blocks = cfg
            .blocks
            .iter()
            .map(|b| {
                let last = b.last().index();
                let lk = prog.kinds[last];
                let succ = |want: EdgeKind| {
                    b.succs
                        .iter()
                        .find(|(_, e)| *e == want)
                        .map(|(s, _)| s.index())
                };
                let (body_end, term) = match lk {
                    InsnKind::Exit => (last, Term::Exit(origin[last])),
                    InsnKind::Ja { .. } | InsnKind::JaLong { .. } => (
                        last,
                        Term::Goto(succ(EdgeKind::Jump).expect("target"), origin[last]),
                    ),
                    InsnKind::Branch { .. } => (
                        last,
                        Term::Branch {
                            kind: lk,
                            origin: origin[last],
                            taken: succ(EdgeKind::Taken).expect("taken"),
                            fall: succ(EdgeKind::Fallthrough).expect("fallthrough"),
                        },
                    ),
                    _ => (
                        last + 1,
                        Term::Goto(
                            succ(EdgeKind::Fallthrough).expect("fallthrough"),
                            origin[last],
                        ),
                    ),
                };
                GBlock {
                    insns: (b.start.index()..body_end)
                        .map(|i| (prog.kinds[i], origin[i]))
                        .collect(),
                    term,
                }
            })
            .collect();
        Graph { blocks }
    }

    fn succs(&self, b: usize) -> Vec<usize> {
        match self.blocks[b].term {
            Term::Exit(_) => vec![],
            Term::Goto(t, _) => vec![t],
            // Taken first, so that the fallthrough successor lands right after the block in reverse post-order.
            Term::Branch { taken, fall, .. } => vec![taken, fall],
        }
    }

    fn retarget(term: &mut Term, f: &dyn Fn(usize) -> usize) {
        match term {
            Term::Exit(_) => {}
            Term::Goto(t, _) => *t = f(*t),
            Term::Branch { taken, fall, .. } => {
                *taken = f(*taken);
                *fall = f(*fall);
            }
        }
    }

    /// Replaces the loop `body` (header `header`) by `trips` copies chained through their back edges.
    fn unroll(&mut self, header: BlockId, body: &BTreeSet<BlockId>, trips: usize) {
        let n = self.blocks.len();
        let members: Vec<usize> = body.iter().map(|b| b.index()).collect();
        let trap_origin = match self.blocks[header.index()].insns.first() {
            Some((_, o)) => *o,
            None => 0,
        };
        let trap = n + members.len() * (trips - 1);
        let copy_of = |c: usize, b: usize| -> usize {
            if c == 0 {
                b
            } else {
                let k = members.iter().position(|&m| m == b).expect("member");
                n + (c - 1) * members.len() + k
            }
        };
        let originals: Vec<GBlock> = members.iter().map(|&b| self.blocks[b].clone()).collect();
        let mut copies = Vec::new();
        for c in 0..trips {
            for (&b, original) in members.iter().zip(&originals) {
                let mut blk = original.clone();
                let map = |t: usize| {
                    if t == header.index() {
                        if c + 1 < trips {
                            copy_of(c + 1, t)
                        } else {
                            trap
                        }
                    } else if body.contains(&BlockId::new(t)) {
                        copy_of(c, t)
                    } else {
                        t
                    }
                };
                Graph::retarget(&mut blk.term, &map);
                if c == 0 {
                    self.blocks[b] = blk;
                } else {
                    copies.push(blk);
                }
            }
        }
        self.blocks.extend(copies);
        let zero = InsnKind::Alu {
            wide: true,
            op: AluOp::Mov,
            dst: 0,
            src: Source::Imm(0),
        };
        self.blocks.push(GBlock {
            insns: vec![(zero, trap_origin)],
            term: Term::Exit(trap_origin),
        });
    }

    /// The blocks reachable from the entry in reverse post-order, as items with resolved targets.
    fn emit(&self) -> Vec<Item> {
        let n = self.blocks.len();
        let mut seen = vec![false; n];
        let mut post = Vec::new();
        let mut stack = vec![(0usize, 0usize)];
        seen[0] = true;
        while let Some((b, next)) = stack.last_mut() {
            let succs = self.succs(*b);
            if let Some(&s) = succs.get(*next) {
                *next += 1;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(*b);
                stack.pop();
            }
        }
        post.reverse();
        let mut items = Vec::new();
        let mut start = vec![usize::MAX; n];
        let jump = |t: usize, origin: u32| Item {
            kind: InsnKind::Ja { off: 0 },
            target: Some(t),
            origin,
        };
        for (pos, &b) in post.iter().enumerate() {
            start[b] = items.len();
            let next = post.get(pos + 1).copied();
            let blk = &self.blocks[b];
            items.extend(blk.insns.iter().map(|&(kind, origin)| Item {
                kind,
                target: None,
                origin,
            }));
            match blk.term {
                Term::Exit(origin) => items.push(Item {
                    kind: InsnKind::Exit,
                    target: None,
                    origin,
                }),
                Term::Goto(t, origin) => {
                    if next != Some(t) {
                        items.push(jump(t, origin));
                    }
                }
                Term::Branch {
                    kind,
                    origin,
                    taken,
                    fall,
                } => {
                    items.push(Item {
                        kind,
                        target: Some(taken),
                        origin,
                    });
                    if next != Some(fall) {
                        items.push(jump(fall, origin));
                    }
                }
            }
        }
        // Targets were block ids; an empty block starts where the next emitted block does.
        for it in &mut items {
            if let Some(t) = it.target {
                it.target = Some(start[t]);
            }
        }
        items
    }
}

/// A loop's exit test.
#[derive(Clone, Copy)]
struct Test {
    insn: InsnId,
    wide: bool,
    cond: JmpCond,
    /// Whether the taken edge leaves the loop.
    exit_when_taken: bool,
}

/// What an exit test compares, resolved ([`LoopCtx::compared`]).
struct Compared {
    /// The register stepped on every iteration.
    induction: u8,
    /// The constant it is compared with.
    limit: u64,
    /// Whether the constant is the test's first operand.
    swapped: bool,
    /// Where the compared value is taken: the copy of the induction register, or the test.
    point: InsnId,
    /// Whether the compared value is the induction register's low 32 bits.
    zext: bool,
}

/// One loop while its trip count is worked out.
struct LoopCtx<'a> {
    prog: &'a ProgramCfg,
    dom: &'a DomTree,
    regions: &'a Regions,
    live: &'a Liveness,
    header: BlockId,
    latches: &'a [BlockId],
    body: &'a BTreeSet<BlockId>,
}

impl LoopCtx<'_> {
    fn every_iteration(&self, b: BlockId) -> bool {
        self.latches.iter().all(|&l| self.dom.dominates(b, l))
    }

    /// The induction register and the number of iterations, or why there is none.
    fn trip_count(&self) -> Result<(u8, u64), String> {
        let cfg = self.prog.func(FuncId(0));
        let mut why = String::from("no conditional jump leaves the loop on every iteration");
        for &b in self.body {
            let blk = cfg.block(b);
            let last = blk.last();
            let InsnKind::Branch {
                wide,
                cond,
                dst,
                src,
                ..
            } = self.prog.kinds[last.index()]
            else {
                continue;
            };
            let outside: Vec<(BlockId, EdgeKind)> = blk
                .succs
                .iter()
                .copied()
                .filter(|(s, _)| !self.body.contains(s))
                .collect();
            if outside.len() != 1 || !self.every_iteration(b) {
                continue;
            }
            let exit_when_taken = outside[0].1 == EdgeKind::Taken;
            let test = Test {
                insn: last,
                wide,
                cond,
                exit_when_taken,
            };
            match self
                .compared(test, dst, src)
                .and_then(|c| Ok((c.induction, self.bound(test, &c)?)))
            {
                Ok(found) => return Ok(found),
                Err(e) => why = e,
            }
        }
        Err(why)
    }

    /// What the exit test compares: the induction register (the test's own, or the register it is a copy of),
    /// and the constant it is compared with (an immediate, or a register constant at the test, on either side).
    fn compared(&self, test: Test, dst: u8, src: Source) -> Result<Compared, String> {
        let state = self
            .regions
            .state_before(test.insn)
            .ok_or("the exit test is unreachable")?;
        let constant = |r: u8| match state.reg(r) {
            Value::Scalar(Some(k)) => Some(k as u64),
            _ => None,
        };
        let (reg, limit, swapped) = match src {
            Source::Imm(k) => (dst, k as i64 as u64, false),
            Source::Reg(r) => match (constant(r), constant(dst)) {
                (Some(k), _) => (dst, k, false),
                // `if rK > rI`: clang puts a constant on the left in a register.
                (None, Some(k)) => (r, k, true),
                (None, None) => {
                    return Err(format!(
                        "r{dst} and r{r} of the exit test: neither is a constant"
                    ))
                }
            },
        };
        let (induction, copy, zext) = self.copied_from(test.insn, reg)?;
        Ok(Compared {
            induction,
            limit,
            swapped,
            point: copy.unwrap_or(test.insn),
            zext,
        })
    }

    /// When the test's register `reg` is, on every iteration, a copy of another register made in the test's block
    /// (`rT = rI`, `wT = wI`, or `rT = rI; rT <<= 32; rT >>= 32`, the copy clang zero-extends a 32-bit counter
    /// with) and written nowhere else in the loop: that register, the copy and whether it is zero-extended.
    /// Otherwise `reg` itself.
    fn copied_from(&self, test: InsnId, reg: u8) -> Result<(u8, Option<InsnId>, bool), String> {
        let cfg = self.prog.func(FuncId(0));
        let defs: Vec<InsnId> = self
            .body
            .iter()
            .flat_map(|&b| cfg.block(b).insns())
            .filter(|i| self.live.effects[i.index()].defs.contains(reg))
            .collect();
        let block = cfg.block_of(test).expect("own instruction");
        let mov = |i: InsnId| match self.prog.kinds[i.index()] {
            InsnKind::Alu {
                op: AluOp::Mov,
                src: Source::Reg(from),
                wide,
                dst,
            } if from != reg && dst == reg => Some((from, wide)),
            _ => None,
        };
        let shift = |i: InsnId, want: AluOp| matches!(self.prog.kinds[i.index()], InsnKind::Alu { wide: true, op, src: Source::Imm(32), .. } if op == want);
        let (copy, zext) = match defs[..] {
            [c] if mov(c).is_some() => (c, !mov(c).expect("a copy").1),
            [c, l, r]
                if mov(c).is_some_and(|m| m.1) && shift(l, AluOp::Lsh) && shift(r, AluOp::Rsh) =>
            {
                (c, true)
            }
            _ => return Ok((reg, None, false)),
        };
        let (from, _) = mov(copy).expect("a copy");
        // The copy may come before or after the counter's step: the trip count takes the value where it is copied.
        let in_block = defs
            .iter()
            .all(|&d| cfg.block_of(d) == Some(block) && d < test);
        if !in_block {
            return Ok((reg, None, false));
        }
        Ok((from, Some(copy), zext))
    }

    fn bound(&self, test: Test, c: &Compared) -> Result<u64, String> {
        let cfg = self.prog.func(FuncId(0));
        let reg = c.induction;
        let defs: Vec<InsnId> = self
            .body
            .iter()
            .flat_map(|&b| cfg.block(b).insns())
            .filter(|i| self.live.effects[i.index()].defs.contains(reg))
            .collect();
        let [def] = defs[..] else {
            return Err(format!(
                "r{reg} is written {} times in the loop, not once",
                defs.len()
            ));
        };
        let InsnKind::Alu {
            wide: step_wide,
            op: op @ (AluOp::Add | AluOp::Sub),
            src: Source::Imm(step),
            ..
        } = self.prog.kinds[def.index()]
        else {
            return Err(format!(
                "r{reg} changes at instruction {def} by other than a constant step"
            ));
        };
        let def_block = cfg.block_of(def).expect("own instruction");
        if !self.every_iteration(def_block) {
            return Err(format!(
                "the step of r{reg} does not run on every iteration"
            ));
        }
        let point_block = cfg.block_of(c.point).expect("own instruction");
        let step_first = if def_block == point_block {
            def < c.point
        } else {
            self.dom.dominates(def_block, point_block)
        };
        let mut init = None;
        for &p in &cfg.block(self.header).preds {
            if self.body.contains(&p) {
                continue;
            }
            let last = cfg.block(p).last();
            let v = match (
                self.regions.state_before(last),
                self.prog.kinds[last.index()],
            ) {
                (Some(st), _) if !self.live.effects[last.index()].defs.contains(reg) => st.reg(reg),
                // `rN = C` right before the loop.
                (
                    Some(_),
                    InsnKind::Alu {
                        wide,
                        op: AluOp::Mov,
                        src: Source::Imm(c),
                        ..
                    },
                ) => Value::Scalar(Some(if wide { c as i64 } else { c as u32 as i64 })),
                _ => Value::Unknown,
            };
            let Value::Scalar(Some(c)) = v else {
                return Err(format!("r{reg} is not a constant when the loop starts"));
            };
            if init.is_some_and(|i| i != c) {
                return Err(format!("r{reg} starts the loop with different constants"));
            }
            init = Some(c);
        }
        let mut v = init.ok_or("the loop has no entry")? as u64;
        let step_once = |v: u64| {
            let s = step as i64 as u64;
            let r = if op == AluOp::Add {
                v.wrapping_add(s)
            } else {
                v.wrapping_sub(s)
            };
            if step_wide {
                r
            } else {
                r as u32 as u64
            }
        };
        for k in 0..MAX_TRIPS {
            if step_first {
                v = step_once(v);
            }
            let seen = if c.zext { v as u32 as u64 } else { v };
            let (a, b) = if c.swapped {
                (c.limit, seen)
            } else {
                (seen, c.limit)
            };
            if holds(test.cond, test.wide, a, b) == test.exit_when_taken {
                return Ok(k + 1);
            }
            if !step_first {
                v = step_once(v);
            }
        }
        Err(format!("more than {MAX_TRIPS} iterations"))
    }
}

/// Whether `a cond b` holds for a 64-bit (`wide`) or 32-bit jump.
pub fn holds(cond: JmpCond, wide: bool, a: u64, b: u64) -> bool {
    let (ua, ub, sa, sb) = if wide {
        (a, b, a as i64, b as i64)
    } else {
        (
            a as u32 as u64,
            b as u32 as u64,
            a as u32 as i32 as i64,
            b as u32 as i32 as i64,
        )
    };
    match cond {
        JmpCond::Eq => ua == ub,
        JmpCond::Ne => ua != ub,
        JmpCond::Gt => ua > ub,
        JmpCond::Ge => ua >= ub,
        JmpCond::Lt => ua < ub,
        JmpCond::Le => ua <= ub,
        JmpCond::Set => ua & ub != 0,
        JmpCond::Sgt => sa > sb,
        JmpCond::Sge => sa >= sb,
        JmpCond::Slt => sa < sb,
        JmpCond::Sle => sa <= sb,
    }
}
