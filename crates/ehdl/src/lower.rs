//! Lowering: labelling, predication (if-conversion) and instruction fusion of the flattened program.
//!
//! Fusions (section 3.2 of the paper, with the constant knowledge of [`hwxdp_analysis::Regions`]):
//!
//! - **constant addresses**: a load or store whose packet, metadata, stack or context offset is a constant does not
//!   read its base register; the template wires the element of the packet frame or stack array directly;
//! - **constant helper arguments**: arguments that are constant pointers (stack, packet, context, map handles) or
//!   constant numbers are wired as constants into the helper block;
//! - **bounds checks to length compares**: `if data + N > data_end` becomes one predicate op comparing the packet
//!   length with N ([`OpKind::LenCheck`]);
//! - **compare and branch into one predicate op**: every conditional jump becomes [`OpKind::Cond`];
//! - **dead address arithmetic**: pointer moves and additions, `data`/`data_end` loads and map-handle constants that
//!   only fed the folded addresses disappear;
//! - **three-operand ALU**: `rX = rY; rX op= Z` becomes `rX = rY op Z` ([`OpKind::Alu3`]).

use crate::flatten::Flat;
use crate::ir::{ArgConst, Label, Op, OpKind, PredDef};
use crate::EhdlError;
use hwxdp_analysis::helpers::{helper, MemArg};
use hwxdp_analysis::value::NO_LOOKUP;
use hwxdp_analysis::{
    BlockId, ControlEquivalence, Def, DomTree, EdgeKind, FuncId, InsnId, Liveness, Patterns,
    ProgramCfg, ReachingDefs, RegSet, Regions, StackBytes, StackLiveness, Value,
};
use hwxdp_ebpf::{disasm::format_kind, AluOp, CallKind, InsnKind, Source};
use hwxdp_object::MapSpec;

/// Which memory an op touches, for ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKey {
    /// The packet (and its metadata).
    Packet,
    /// The stack.
    Stack,
    /// `struct xdp_md` (read only).
    Context,
    /// Values of one map.
    Map(u32),
    /// Anywhere.
    Unknown,
}

/// The memory footprint of one op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mem {
    /// Region.
    pub key: MemKey,
    /// Bytes `[lo, hi)` when known.
    pub range: Option<(i64, i64)>,
    /// Reads it.
    pub read: bool,
    /// Writes it.
    pub write: bool,
}

impl Mem {
    /// Whether two footprints must keep their program order.
    pub fn conflicts(&self, other: &Mem) -> bool {
        if !(self.write || other.write) {
            return false;
        }
        let same =
            self.key == other.key || self.key == MemKey::Unknown || other.key == MemKey::Unknown;
        same && match (self.range, other.range) {
            (Some((a0, a1)), Some((b0, b1))) => a0 < b1 && b0 < a1,
            _ => true,
        }
    }
}

/// What scheduling and pruning need besides the ops.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The flattened program's CFG.
    pub prog: ProgramCfg,
    /// Ops in program order (stage 0 until scheduled).
    pub ops: Vec<Op>,
    /// Predicates (ready 0 until scheduled); the terms name condition ops by op id.
    pub preds: Vec<PredDef>,
    /// Block of each op.
    pub op_block: Vec<BlockId>,
    /// Memory footprint of each op.
    pub mem: Vec<Option<Mem>>,
    /// For each op and each register it reads, the definitions that may reach it.
    pub reaching: Vec<Vec<(u8, Vec<Def>)>>,
    /// Stack bytes each op reads.
    pub stack_reads: Vec<StackBytes>,
    /// Stack bytes each op may write.
    pub stack_writes: Vec<StackBytes>,
    /// The op of each flattened instruction that is one.
    pub op_of_insn: Vec<Option<u32>>,
    /// `reach[a]` holds `b` when block `b` is reachable from block `a` (each block reaches itself).
    pub reach: Vec<Vec<bool>>,
    /// Instructions that became no op, with why.
    pub removed: Vec<(u32, String)>,
}

impl Lowered {
    /// Whether op `a` may run before op `b` on one path (`a` earlier in program order).
    pub fn ordered(&self, a: usize, b: usize) -> bool {
        self.reach[self.op_block[a].index()][self.op_block[b].index()]
    }
}

/// One instruction on its way to becoming an op.
struct Cand {
    insn: usize,
    kind: OpKind,
    text: String,
    label: Label,
    pointer_lookup: Option<u32>,
    reads: RegSet,
    writes: RegSet,
    reaching: Vec<(u8, Vec<Def>)>,
    fused: Vec<u32>,
    size: Option<u32>,
    needed: bool,
}

/// Labels, predicates and fuses the flattened program.
/// `frame_bytes` is the packet bus width in bytes: an access to byte `b` needs frame `b / frame_bytes`.
pub fn lower(flat: &Flat, maps: &[MapSpec], frame_bytes: u32) -> Result<Lowered, EhdlError> {
    let prog = ProgramCfg::build(&flat.spec)?;
    let cfg = prog.func(FuncId(0)).clone();
    let live = Liveness::compute(&prog);
    let regions = Regions::compute(&prog, maps);
    let rdefs = ReachingDefs::compute(&prog, &live);
    let stack = StackLiveness::compute(&prog, &regions, maps);
    let patterns = Patterns::compute(&prog, &regions);
    let dom = DomTree::dominators(&cfg);
    let pdom = DomTree::post_dominators(&cfg);
    let ceq = ControlEquivalence::compute(&cfg, &dom, &pdom);
    let n = prog.kinds.len();
    let nb = cfg.blocks.len();

    // Predicates: one per control-equivalence class, led by its first (dominating) block.
    let leader: Vec<BlockId> = cfg
        .block_ids()
        .map(|b| match ceq.class_of[b.index()] {
            Some(c) => ceq.classes[c][0],
            None => b,
        })
        .collect();
    let mut pred_of_leader = vec![u32::MAX; nb];
    let mut pred_leaders = Vec::new();
    for b in cfg.block_ids() {
        let l = leader[b.index()];
        if pred_of_leader[l.index()] == u32::MAX {
            pred_of_leader[l.index()] = pred_leaders.len() as u32;
            pred_leaders.push(l);
        }
    }
    let pred_of_block = |b: BlockId| pred_of_leader[leader[b.index()].index()];

    let mut reach = vec![vec![false; nb]; nb];
    for b in (0..nb).rev() {
        reach[b][b] = true;
        for (s, _) in &cfg.blocks[b].succs {
            let (lo, hi) = reach.split_at_mut(s.index());
            let (row_b, row_s) = (&mut lo[b], &hi[0]);
            for (x, y) in row_b.iter_mut().zip(row_s) {
                *x |= *y;
            }
        }
    }

    // Candidates, one per instruction that is not a jump.
    let mut removed = Vec::new();
    let mut cands: Vec<Cand> = Vec::new();
    let mut instances: Vec<(i32, u32)> = Vec::new();
    for i in 0..n {
        let k = prog.kinds[i];
        let id = InsnId::new(i);
        if matches!(k, InsnKind::Ja { .. } | InsnKind::JaLong { .. }) {
            removed.push((i as u32, "jump: control flow is predication".into()));
            continue;
        }
        let st = regions.state_before(id);
        let reg = |r: u8| st.map_or(Value::Unknown, |s| s.reg(r));
        let e = live.effects[i];
        let mut reads = e.uses;
        reads.remove(10);
        let mut writes = e.defs;
        writes.remove(10);
        let mut label = regions.label(id).map_or(Label::None, Label::from_region);
        let mut text = format_kind(&k);
        let mut size = None;
        let kind = match k {
            InsnKind::Load { size: w, .. } | InsnKind::LoadPacket { size: w, .. } => {
                size = Some(w.bytes());
                OpKind::Load
            }
            InsnKind::Store { size: w, .. } => {
                size = Some(w.bytes());
                OpKind::Store
            }
            InsnKind::Atomic { size: w, .. } => {
                size = Some(w.bytes());
                OpKind::Atomic
            }
            InsnKind::Branch { .. } => match patterns.bounds_checks.iter().find(|c| c.insn == id) {
                Some(c) if !c.variable => {
                    reads = RegSet::EMPTY;
                    let meta = c.area == hwxdp_analysis::CheckedArea::Meta;
                    let taken_if_short = c.fail == hwxdp_analysis::BranchSide::Taken;
                    text = format!(
                        "{} {} {} ({text})",
                        if meta { "meta_len" } else { "pkt_len" },
                        if taken_if_short { "<" } else { ">=" },
                        c.ensured
                    );
                    OpKind::LenCheck {
                        ensured: c.ensured,
                        meta,
                        taken_if_short,
                    }
                }
                _ => OpKind::Cond,
            },
            InsnKind::Call {
                kind: CallKind::Helper,
                imm,
            } => {
                let inst = match instances.iter_mut().find(|(h, _)| *h == imm) {
                    Some((_, c)) => {
                        *c += 1;
                        *c - 1
                    }
                    None => {
                        instances.push((imm, 1));
                        0
                    }
                };
                let mut consts = Vec::new();
                for r in reads.iter() {
                    if let Some(c) = constant_arg(reg(r)) {
                        consts.push((r, c));
                    }
                }
                for r in 1..=5u8 {
                    if constant_arg(reg(r)).is_some() {
                        reads.remove(r);
                    }
                }
                if let Value::MapHandle(m) = reg(1) {
                    label = Label::Map { map: m };
                } else if let Value::MapHandle(m) = reg(2) {
                    label = Label::Map { map: m };
                }
                let name = hwxdp_ebpf::helper_name(imm)
                    .map_or_else(|| format!("helper_{imm}"), str::to_string);
                if !consts.is_empty() {
                    let shown: Vec<String> =
                        consts.iter().map(|(r, c)| format!("r{r}={c}")).collect();
                    text = format!("{text} [{}]", shown.join(" "));
                }
                OpKind::Helper {
                    id: imm,
                    name,
                    instance: inst,
                    consts,
                }
            }
            InsnKind::Call { imm, .. } => OpKind::Helper {
                id: imm,
                name: "call".into(),
                instance: 0,
                consts: Vec::new(),
            },
            InsnKind::CallReg { .. } => OpKind::Helper {
                id: -1,
                name: "callx".into(),
                instance: 0,
                consts: Vec::new(),
            },
            InsnKind::Exit => OpKind::Exit { reg: 0, imm: None },
            _ => OpKind::Alu,
        };
        if let InsnKind::Load { base, .. }
        | InsnKind::Store { base, .. }
        | InsnKind::Atomic { base, .. } = k
        {
            let constant = matches!(
                label,
                Label::Packet { offset: Some(_) }
                    | Label::PacketMeta { offset: Some(_) }
                    | Label::Stack { offset: Some(_) }
                    | Label::Context { offset: Some(_) }
            );
            let also_src = match k {
                InsnKind::Store {
                    src: Source::Reg(s),
                    ..
                } => s == base,
                InsnKind::Atomic { src, .. } => src == base,
                _ => false,
            };
            if constant && !also_src {
                reads.remove(base);
            }
        }
        let reaching = reads
            .iter()
            .map(|r| (r, rdefs.reaching(id, r).unwrap_or(&[]).to_vec()))
            .collect();
        let needed = !matches!(kind, OpKind::Alu | OpKind::Load);
        let pointer_lookup = match k {
            InsnKind::Load { base, .. }
            | InsnKind::Store { base, .. }
            | InsnKind::Atomic { base, .. } => match reg(base) {
                Value::MapValue { lookup, .. } if lookup != NO_LOOKUP => Some(lookup),
                _ => None,
            },
            _ => None,
        };
        cands.push(Cand {
            insn: i,
            kind,
            text,
            label,
            pointer_lookup,
            reads,
            writes,
            reaching,
            fused: Vec::new(),
            size,
            needed,
        });
    }

    // Dead address arithmetic: keep what side effects need, transitively.
    let mut cand_of_insn: Vec<Option<usize>> = vec![None; n];
    for (c, cand) in cands.iter().enumerate() {
        cand_of_insn[cand.insn] = Some(c);
    }
    let mut work: Vec<usize> = (0..cands.len()).filter(|&c| cands[c].needed).collect();
    while let Some(c) = work.pop() {
        let defs: Vec<usize> = cands[c]
            .reaching
            .iter()
            .flat_map(|(_, d)| d.iter())
            .filter_map(|d| match d {
                Def::Insn(at, _) => cand_of_insn[at.index()],
                Def::Entry(_) => None,
            })
            .collect();
        for d in defs {
            if !cands[d].needed {
                cands[d].needed = true;
                work.push(d);
            }
        }
    }
    for c in &cands {
        if !c.needed {
            removed.push((c.insn as u32, "dead: only fed constant addresses".into()));
        }
    }
    cands.retain(|c| c.needed);
    fuse_three_operand(&prog, &cfg, &mut cands, &mut removed);
    fuse_exit(&prog, &cfg, &mut cands, &mut removed);
    removed.sort();

    // Packet frames need the shift of `data` by bpf_xdp_adjust_head.
    let shift = data_shift(&prog, &cfg, &regions);

    let mut ops = Vec::with_capacity(cands.len());
    let mut op_block = Vec::new();
    let mut mem = Vec::new();
    let mut reaching = Vec::new();
    let mut stack_reads = Vec::new();
    let mut stack_writes = Vec::new();
    let mut op_of_insn = vec![None; n];
    for (o, c) in cands.into_iter().enumerate() {
        let id = InsnId::new(c.insn);
        let b = cfg.block_of(id).expect("own instruction");
        let k = prog.kinds[c.insn];
        let st = regions.state_before(id);
        let frames = frames_of(&c, shift[c.insn], frame_bytes as u64);
        let (sr, sw) = stack_effects(
            &k,
            &c.label,
            c.size,
            stack.uses[c.insn],
            stack.defs[c.insn],
            st,
            maps,
        );
        mem.push(footprint(&k, &c.label, c.size));
        stack_reads.push(sr);
        stack_writes.push(sw);
        op_of_insn[c.insn] = Some(o as u32);
        op_block.push(b);
        reaching.push(c.reaching);
        ops.push(Op {
            id: o as u32,
            insn: c.insn as u32,
            origin: flat.origin[c.insn],
            fused: c.fused,
            kind: c.kind,
            text: c.text,
            pred: pred_of_block(b),
            label: c.label,
            pointer_lookup: c.pointer_lookup,
            reads: c.reads,
            writes: c.writes,
            frames,
            data_shift: if frames.is_some() && !matches!(c.label, Label::PacketMeta { .. }) {
                shift[c.insn]
            } else {
                None
            },
            stage: 0,
        });
    }

    let preds = pred_leaders
        .iter()
        .enumerate()
        .map(|(p, &l)| {
            let terms = if p == 0 {
                Vec::new()
            } else {
                cfg.block(l)
                    .preds
                    .iter()
                    .map(|&src| {
                        let blk = cfg.block(src);
                        let last = blk.last();
                        let cond = match prog.kinds[last.index()] {
                            InsnKind::Branch { .. } if blk.succs.iter().any(|(s, _)| *s != l) => {
                                let taken = blk
                                    .succs
                                    .iter()
                                    .any(|(s, e)| *s == l && *e == EdgeKind::Taken);
                                op_of_insn[last.index()].map(|op| (op, taken))
                            }
                            _ => None,
                        };
                        (pred_of_block(src), cond)
                    })
                    .collect()
            };
            PredDef {
                id: p as u32,
                block_insn: cfg.block(l).start.0,
                terms,
                ready: 0,
            }
        })
        .collect();
    Ok(Lowered {
        prog,
        ops,
        preds,
        op_block,
        mem,
        reaching,
        stack_reads,
        stack_writes,
        op_of_insn,
        reach,
        removed,
    })
}

/// A helper argument the template can wire as a constant.
fn constant_arg(v: Value) -> Option<ArgConst> {
    Some(match v {
        Value::Scalar(Some(c)) => ArgConst::Scalar(c),
        Value::Stack { off, .. } => ArgConst::Stack(off.constant()?),
        Value::Packet(off) => ArgConst::Packet(off.constant()?),
        Value::PacketMeta(off) => ArgConst::Meta(off.constant()?),
        Value::Ctx(off) if off.constant()? == 0 => ArgConst::Ctx,
        Value::MapHandle(m) => ArgConst::Map(m),
        _ => return None,
    })
}

/// `rX = rY; rX op= Z` in one block, nothing touching rX or writing rY between: one three-operand op.
fn fuse_three_operand(
    prog: &ProgramCfg,
    cfg: &hwxdp_analysis::Cfg,
    cands: &mut Vec<Cand>,
    removed: &mut Vec<(u32, String)>,
) {
    let mut gone = vec![false; cands.len()];
    for i in 0..cands.len() {
        let InsnKind::Alu {
            wide: mov_wide,
            op: AluOp::Mov,
            dst: x,
            src: Source::Reg(y),
        } = prog.kinds[cands[i].insn]
        else {
            continue;
        };
        if x == y || gone[i] || !cands[i].fused.is_empty() {
            continue;
        }
        let block = cfg.block_of(InsnId::new(cands[i].insn));
        let Some(j) = (i + 1..cands.len()).find(|&j| {
            !gone[j]
                && (cands[j].reads.contains(x)
                    || cands[j].writes.contains(x)
                    || cands[j].writes.contains(y)
                    || cfg.block_of(InsnId::new(cands[j].insn)) != block)
        }) else {
            continue;
        };
        if cfg.block_of(InsnId::new(cands[j].insn)) != block || cands[j].kind != OpKind::Alu {
            continue;
        }
        let kj = prog.kinds[cands[j].insn];
        let reg_name = |wide: bool, r: u8| format!("{}{r}", if wide { 'r' } else { 'w' });
        let text = match kj {
            InsnKind::Alu { wide, op, dst, src }
                if dst == x && op != AluOp::Mov && src != Source::Reg(x) && (mov_wide || !wide) =>
            {
                let sym = op.symbol().trim_end_matches('=');
                let s = match src {
                    Source::Reg(r) => reg_name(wide, r),
                    Source::Imm(v) => v.to_string(),
                };
                format!("{} = {} {sym} {s}", reg_name(wide, x), reg_name(wide, y))
            }
            InsnKind::Neg { wide, dst } if dst == x && (mov_wide || !wide) => {
                format!("{} = -{}", reg_name(wide, x), reg_name(wide, y))
            }
            InsnKind::Endian { order, bits, dst } if dst == x && mov_wide => {
                format!("r{x} = {}{bits} r{y}", order.name())
            }
            _ => continue,
        };
        let y_defs: Vec<(u8, Vec<Def>)> = cands[i].reaching.clone();
        let mov_insn = cands[i].insn as u32;
        let cj = &mut cands[j];
        cj.reads.remove(x);
        cj.reaching.retain(|(r, _)| *r != x);
        if y != 10 {
            cj.reads.insert(y);
            for d in y_defs {
                if !cj.reaching.iter().any(|(r, _)| *r == d.0) {
                    cj.reaching.push(d);
                }
            }
            cj.reaching.sort();
        }
        cj.kind = OpKind::Alu3 { a: y };
        cj.text = text;
        cj.fused.push(mov_insn);
        gone[i] = true;
        let into = cj.insn;
        removed.push((mov_insn, format!("fused into {into} (three-operand)")));
    }
    let mut k = 0;
    cands.retain(|_| {
        k += 1;
        !gone[k - 1]
    });
}

/// `r0 = rY; exit` or `r0 = imm; exit` in one block: an exit that takes its verdict from `rY` or the constant.
fn fuse_exit(
    prog: &ProgramCfg,
    cfg: &hwxdp_analysis::Cfg,
    cands: &mut Vec<Cand>,
    removed: &mut Vec<(u32, String)>,
) {
    let mut gone = vec![false; cands.len()];
    for j in 1..cands.len() {
        if cands[j].kind != (OpKind::Exit { reg: 0, imm: None }) {
            continue;
        }
        let i = j - 1;
        let block = |c: &Cand| cfg.block_of(InsnId::new(c.insn));
        if block(&cands[i]) != block(&cands[j]) || !cands[i].fused.is_empty() {
            continue;
        }
        let (kind, text, reads) = match prog.kinds[cands[i].insn] {
            InsnKind::Alu {
                wide: true,
                op: AluOp::Mov,
                dst: 0,
                src: Source::Reg(y),
            } if y != 10 => (
                OpKind::Exit { reg: y, imm: None },
                format!("exit r{y}"),
                cands[i].reaching.clone(),
            ),
            InsnKind::Alu {
                wide,
                op: AluOp::Mov,
                dst: 0,
                src: Source::Imm(c),
            } => {
                let v = if wide { c as i64 } else { c as u32 as i64 };
                (
                    OpKind::Exit {
                        reg: 0,
                        imm: Some(v),
                    },
                    format!("exit {v}"),
                    Vec::new(),
                )
            }
            _ => continue,
        };
        let mov = cands[i].insn as u32;
        let cj = &mut cands[j];
        cj.kind = kind;
        cj.text = text;
        cj.reads = reads.iter().fold(RegSet::EMPTY, |mut s, (r, _)| {
            s.insert(*r);
            s
        });
        cj.reaching = reads;
        cj.fused.push(mov);
        gone[i] = true;
        let into = cj.insn;
        removed.push((mov, format!("fused into {into} (verdict of exit)")));
    }
    let mut k = 0;
    cands.retain(|_| {
        k += 1;
        !gone[k - 1]
    });
}

/// For each instruction, how far `data` has moved from where the packet's first byte arrived (`None`: unknown).
fn data_shift(prog: &ProgramCfg, cfg: &hwxdp_analysis::Cfg, regions: &Regions) -> Vec<Option<i64>> {
    let mut out = vec![None; prog.kinds.len()];
    let mut block_out: Vec<Option<Option<i64>>> = vec![None; cfg.blocks.len()];
    for b in cfg.block_ids() {
        let blk = cfg.block(b);
        let mut s: Option<i64> = if b == hwxdp_analysis::Cfg::ENTRY {
            Some(0)
        } else {
            let mut acc: Option<Option<i64>> = None;
            for p in &blk.preds {
                let v = block_out[p.index()].unwrap_or(None);
                acc = Some(match acc {
                    None => v,
                    Some(a) if a == v => a,
                    Some(_) => None,
                });
            }
            acc.unwrap_or(None)
        };
        for i in blk.insns() {
            out[i.index()] = s;
            if let InsnKind::Call {
                kind: CallKind::Helper,
                imm: 44,
            } = prog.kinds[i.index()]
            {
                let delta = regions.state_before(i).and_then(|st| match st.reg(2) {
                    // The helper's delta is an `int`: only the low 32 bits count.
                    Value::Scalar(Some(c)) => Some(c as i32 as i64),
                    _ => None,
                });
                s = match (s, delta) {
                    (Some(a), Some(d)) => Some(a + d),
                    _ => None,
                };
            }
        }
        block_out[b.index()] = Some(s);
    }
    out
}

/// Frames `[first, last]` an access needs, at one frame per `frame_bytes` bytes.
fn frames_of(c: &Cand, shift: Option<i64>, frame_bytes: u64) -> Option<(u32, u32)> {
    let (lo, hi) = match (c.label, &c.kind) {
        (_, OpKind::LenCheck { ensured, meta, .. }) => {
            if *meta || *ensured <= 0 {
                return Some((0, 0));
            }
            (0, *ensured)
        }
        (Label::Packet { offset: Some(o) }, _) => (o, o + c.size.unwrap_or(1) as i64),
        (Label::PacketMeta { .. }, _) => return Some((0, 0)),
        _ => return None,
    };
    let s = shift?;
    if !(-(1 << 16)..1 << 16).contains(&(hi + s)) {
        return None;
    }
    // Byte positions from the first byte that arrived; bytes prepended by adjust_head count as the first frame's.
    let lo = (lo + s).max(0) as u64;
    let hi = (hi + s - 1).max(0) as u64;
    let frame = |b: u64| (b / frame_bytes).min(u32::MAX as u64) as u32;
    Some((frame(lo), frame(hi)))
}

/// The memory footprint of an instruction for ordering.
fn footprint(k: &InsnKind, label: &Label, size: Option<u32>) -> Option<Mem> {
    let (read, write) = match k {
        InsnKind::Load { .. } | InsnKind::LoadPacket { .. } => (true, false),
        InsnKind::Store { .. } => (false, true),
        InsnKind::Atomic { .. } => (true, true),
        _ => return None,
    };
    let sz = size.unwrap_or(8) as i64;
    let (key, range) = match *label {
        Label::Packet { offset } => (MemKey::Packet, offset.map(|o| (o, o + sz))),
        // Metadata sits before data: keep it apart from packet bytes by a large negative offset.
        Label::PacketMeta { offset } => (
            MemKey::Packet,
            offset.map(|o| (o - (1 << 20), o - (1 << 20) + sz)),
        ),
        Label::Stack { offset } => (MemKey::Stack, offset.map(|o| (o, o + sz))),
        Label::Context { offset } => (MemKey::Context, offset.map(|o| (o, o + sz))),
        Label::MapValue { map, offset } => (MemKey::Map(map), offset.map(|o| (o, o + sz))),
        _ => (MemKey::Unknown, None),
    };
    Some(Mem {
        key,
        range,
        read,
        write,
    })
}

/// Stack bytes an op reads and may write: the analysis's certain writes, stores at unknown offsets (anywhere),
/// and buffers helpers fill.
fn stack_effects(
    k: &InsnKind,
    label: &Label,
    size: Option<u32>,
    uses: StackBytes,
    defs: StackBytes,
    st: Option<&hwxdp_analysis::State>,
    maps: &[MapSpec],
) -> (StackBytes, StackBytes) {
    let mut writes = defs;
    match (k, label) {
        (InsnKind::Store { .. } | InsnKind::Atomic { .. }, Label::Stack { offset: None })
        | (InsnKind::Store { .. } | InsnKind::Atomic { .. }, Label::Unknown) => {
            writes = StackBytes::ALL
        }
        (InsnKind::Atomic { .. }, Label::Stack { offset: Some(o) }) => {
            writes = StackBytes::range(*o, *o + size.unwrap_or(8) as i64)
        }
        (
            InsnKind::Call {
                kind: CallKind::Helper,
                imm,
            },
            _,
        ) => {
            let Some(st) = st else {
                return (uses, StackBytes::ALL);
            };
            let map_size = |f: fn(&MapSpec) -> u32| match st.reg(1) {
                Value::MapHandle(m) => maps.get(m as usize).map(|m| f(m) as i64),
                _ => None,
            };
            for w in helper(*imm).map_or(&[][..], |h| h.writes) {
                let (ptr, len) = match *w {
                    MemArg::MapKey(p) => (p, map_size(|m| m.key_size)),
                    MemArg::MapValue(p) => (p, map_size(|m| m.value_size)),
                    MemArg::Sized { ptr, size } => match st.reg(size) {
                        Value::Scalar(Some(c)) => (ptr, Some(c)),
                        _ => (ptr, None),
                    },
                };
                if let Value::Stack { off, .. } = st.reg(ptr) {
                    writes = writes.union(match (off.constant(), len) {
                        (Some(at), Some(len)) => StackBytes::range(at, at + len),
                        _ => StackBytes::ALL,
                    });
                }
            }
        }
        _ => {}
    }
    (uses, writes)
}
