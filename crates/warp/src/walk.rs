//! Algorithm 1: a depth-first walk of the entry function from its first instruction, evaluating every instruction
//! symbolically, that turns each path into a rule `<matches, action>` in priority order.
//!
//! At a conditional jump on key bits the side whose condition is a conjunction of fewest TCAM entries (the taken
//! side on a tie, as in the paper) is walked first with its condition added to the matches; the other side is
//! walked afterwards without a match: its rules have lower priority, so the packets of the first side never reach
//! them. A path ends at `exit` (a verdict, when r0 is known) or at the first instruction the engine cannot run (a
//! restore there, or at the last instruction on the path where a restore is possible).

use crate::classify::in_loop;
use crate::restore::{restore_at, Restore, Unrestorable, Value};
use crate::state::{PathState, StackByte, Stop, MAX_LEN};
use crate::sym::{Bit, Bits, KeyBit, Sym, LEN_BITS};
use crate::ternary::{self, in_intervals, Interval, Pattern, Side};
use crate::Params;
use hwxdp_analysis::{BlockId, Cfg, EdgeKind, InsnId, Liveness, ProgramCfg, StackLiveness};
use hwxdp_ebpf::{AluOp, InsnKind, JmpCond, Source};
use serde::Serialize;
use std::collections::BTreeMap;
use std::rc::Rc;

/// What a rule does with the packets it matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Action {
    /// The program's return value: the packet needs no processor at all.
    Verdict {
        /// r0 at the `exit`.
        retval: u32,
        /// Slot of the `exit`.
        exit: u32,
        /// Instructions the engine ran in place of the processor (the whole path).
        warped: u64,
    },
    /// The processor goes on from a restored context.
    Restore(Restore),
}

impl Action {
    /// Instructions the engine runs in place of the processor for a packet of this rule.
    pub fn warped(&self) -> u64 {
        match self {
            Action::Verdict { warped, .. } => *warped,
            Action::Restore(r) => r.warped,
        }
    }
}

/// One decided conditional jump on a rule's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Slot of the jump.
    pub slot: u32,
    /// Whether it is taken.
    pub taken: bool,
    /// Whether the rule matches on it (false: the side walked second, or decided by constants).
    pub matched: bool,
}

/// A rule as the walk found it: a conjunction of conditions, each a disjunction of patterns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRule {
    /// The conditions.
    pub conds: Vec<Vec<Pattern>>,
    /// What to do.
    pub action: Action,
    /// The jumps decided on the way.
    pub path: Vec<Decision>,
    /// Why the path ends in the processor (`None` for a verdict).
    pub stop: Option<Stop>,
    /// Why the restore is not at the stop but at an earlier instruction.
    pub fallback: Option<Unrestorable>,
    /// Packets of the profile that take this rule's path.
    pub packets: usize,
}

/// How far one walk goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most matches on one path.
    pub depth: usize,
    /// Most TCAM entries one condition may take.
    pub range_entries: usize,
    /// Rules after which the walk gives up (the rules cannot fit).
    pub max_rules: usize,
    /// A path carrying at least this many packets of the profile is walked past `depth` and `range_entries` (up to
    /// the engine's `range-entries`) (`None`: none is).
    pub hot: Option<usize>,
    /// A path no frame of the profile takes stops at its next match (TCAM entries are kept for the paths taken).
    pub cold: bool,
    /// Paths (their decided jumps as (slot, taken)) walked one match past the limits: the fit deepens frequent
    /// paths one at a time while the rules fit.
    pub extended: Vec<Vec<(u32, bool)>>,
}

/// A path's decided jumps as [`Limits::extended`] names them.
pub fn path_key(path: &[Decision]) -> Vec<(u32, bool)> {
    path.iter().map(|d| (d.slot, d.taken)).collect()
}

/// Frames the rules are fitted to (a trace): the walk counts those on each path, and may walk frequent ones deeper.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// The frames (bytes from `data`).
    pub frames: Vec<Vec<u8>>,
}

impl Profile {
    /// Whether frame `f` matches `pattern` (bytes past its end read as zero, its length capped as the key's).
    pub fn matches(&self, f: usize, pattern: &Pattern) -> bool {
        let frame = &self.frames[f];
        let len = frame.len().min(MAX_LEN as usize);
        pattern.iter().all(|(bit, &v)| {
            let set = match *bit {
                crate::sym::KeyBit::Chunk(c) => {
                    frame.get(c as usize / 8).copied().unwrap_or(0) >> (c % 8) & 1 == 1
                }
                crate::sym::KeyBit::Len(n) => len >> n & 1 == 1,
            };
            set == v
        })
    }
}

/// What the walk needs of the program.
pub struct Program<'a> {
    /// Its CFG.
    pub prog: &'a ProgramCfg,
    /// Register liveness.
    pub live: &'a Liveness,
    /// Stack liveness.
    pub stack: &'a StackLiveness,
    /// Slot index of each instruction.
    pub slots: &'a [usize],
    /// The engine.
    pub params: &'a Params,
    /// The frames the rules are fitted to (may be none).
    pub profile: &'a Profile,
}

/// One path being walked.
#[derive(Clone)]
struct Task {
    block: BlockId,
    st: PathState,
    conds: Vec<Vec<Pattern>>,
    path: Vec<Decision>,
    /// The last restore point on the path.
    checkpoint: Rc<Restore>,
    /// The profile's frames on this path.
    frames: Rc<Vec<u32>>,
    /// Instructions of `block` already evaluated (a path split inside the block goes on after them).
    skip: usize,
}

/// The rules of one walk, or `None` when there are more than `limits.max_rules`.
pub fn walk(p: &Program, limits: &Limits) -> Option<Vec<RawRule>> {
    let cfg = p.prog.func(hwxdp_analysis::FuncId(0));
    let loops = in_loop(cfg);
    let start = Restore {
        slot: 0,
        r0: None,
        regs: vec![(1, Value::Context)],
        stack: Vec::new(),
        warped: 0,
    };
    let mut work = vec![Task {
        block: Cfg::ENTRY,
        st: PathState::entry(),
        conds: Vec::new(),
        path: Vec::new(),
        checkpoint: Rc::new(start),
        frames: Rc::new((0..p.profile.frames.len() as u32).collect()),
        skip: 0,
    }];
    let mut rules = Vec::new();
    while let Some(task) = work.pop() {
        walk_path(p, cfg, &loops, limits, task, &mut work, &mut rules);
        if rules.len() > limits.max_rules {
            return None;
        }
    }
    Some(rules)
}

/// Follows one path until it ends (a rule) or splits (two tasks).
fn walk_path(
    p: &Program,
    cfg: &Cfg,
    loops: &[bool],
    limits: &Limits,
    mut t: Task,
    work: &mut Vec<Task>,
    rules: &mut Vec<RawRule>,
) {
    loop {
        let block = cfg.block(t.block);
        if loops[t.block.index()] {
            return rules.push(stop_rule(p, t, block.start, Stop::Loop));
        }
        let skip = std::mem::take(&mut t.skip);
        for i in block.insns().skip(skip) {
            // The last point of the path where the state can be restored: a fallback for a stop later on.
            if let Ok(r) = restore_here(p, &t.st, i) {
                t.checkpoint = Rc::new(r);
            }
            let k = p.prog.kinds[i.index()];
            match k {
                InsnKind::Exit => return rules.push(exit_rule(p, t, i)),
                InsnKind::Branch { .. } => return branch(p, cfg, limits, t, i, &k, work, rules),
                InsnKind::Ja { .. } | InsnKind::JaLong { .. } => t.st.insns += 1,
                _ if offset_split(p, limits, &t, (i, i.0 - block.start.0), &k, work) => return,
                _ => match t.st.eval(&k, p.params.chunk) {
                    Ok(()) => t.st.insns += 1,
                    Err(stop) => return rules.push(stop_rule(p, t, i, stop)),
                },
            }
        }
        // A fall-through or `goto` block has one successor.
        match block.succs.first() {
            Some(&(next, _)) => t.block = next,
            None => return,
        }
    }
}

fn restore_here(p: &Program, st: &PathState, i: InsnId) -> Result<Restore, Unrestorable> {
    restore_at(
        st,
        p.slots[i.index()] as u32,
        p.live.live_in(i),
        p.stack.live_in(i),
        p.params,
    )
}

/// Most key bits of a variable packet offset the walk splits on (one path per value).
const SPLIT_BITS: usize = 4;

/// A variable offset added to a packet pointer (`data + (pkt[14] & 15) * 4`, the IP header's length): when the
/// offset is made of at most [`SPLIT_BITS`] bits of the chunk and the profile has frames on the path, the path is
/// split into one per value those frames carry (each matching the bits exactly, with the bits constant in the whole
/// state, so the pointer is `data + k` again and the bounds check after it a length compare), walked first, then
/// the path unsplit for every other value (pushed first, so its rules come after theirs). Without a profile, or
/// past the walk's limits, nothing is split. Returns whether the tasks were pushed.
fn offset_split(
    p: &Program,
    limits: &Limits,
    t: &Task,
    (i, done): (InsnId, u32),
    k: &InsnKind,
    work: &mut Vec<Task>,
) -> bool {
    let InsnKind::Alu {
        wide: true,
        op: AluOp::Add,
        dst,
        src: Source::Reg(src),
    } = *k
    else {
        return false;
    };
    let bits = match (t.st.regs[dst as usize], t.st.regs[src as usize]) {
        (Sym::Packet(_), Sym::Bits(b)) | (Sym::Bits(b), Sym::Packet(_)) => b,
        _ => return false,
    };
    let mut keys: Vec<KeyBit> = Vec::new();
    for b in bits.0 {
        match b {
            Bit::Key(key @ KeyBit::Chunk(_)) if !keys.contains(&key) => keys.push(key),
            Bit::Key(KeyBit::Len(_)) => return false,
            _ => {}
        }
    }
    if keys.is_empty() || keys.len() > SPLIT_BITS || t.frames.is_empty() {
        return false;
    }
    if beyond_limits(p, limits, t, 1).is_some() {
        return false;
    }
    let pattern = |v: usize| -> Pattern {
        keys.iter()
            .enumerate()
            .map(|(n, &key)| (key, v >> n & 1 == 1))
            .collect()
    };
    let mut by_value: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for &f in t.frames.iter() {
        if let Some(v) =
            (0..1usize << keys.len()).find(|&v| p.profile.matches(f as usize, &pattern(v)))
        {
            by_value.entry(v).or_default().push(f);
        }
    }
    let slot = p.slots[i.index()] as u32;
    // Every other value: the path as it was, without the frames of the split values.
    let mut rest = t.clone();
    rest.frames = Rc::new(Vec::new());
    rest.skip = done as usize;
    work.push(rest);
    for (v, frames) in by_value.into_iter().rev() {
        let pat = pattern(v);
        let mut one = t.clone();
        one.st = fix_bits(&t.st, &pat);
        one.frames = Rc::new(frames);
        one.skip = done as usize;
        one.conds.push(vec![pat]);
        one.path.push(Decision {
            slot,
            taken: v != 0,
            matched: true,
        });
        work.push(one);
    }
    true
}

/// `st` with every key bit `pat` fixes replaced by its value, in the registers and the frame.
fn fix_bits(st: &PathState, pat: &Pattern) -> PathState {
    let fix = |b: Bit| match b {
        Bit::Key(key) => match pat.get(&key) {
            Some(true) => Bit::One,
            Some(false) => Bit::Zero,
            None => b,
        },
        other => other,
    };
    let mut out = st.clone();
    for r in out.regs.iter_mut() {
        if let Sym::Bits(b) = r {
            *r = Sym::Bits(Bits(b.0.map(fix)));
        }
    }
    for byte in out.stack.values_mut() {
        if let StackByte::Bits(b) = byte {
            *byte = StackByte::Bits(b.map(fix));
        }
    }
    out
}

/// The rule of a path that ends at instruction `i`, which the engine cannot run.
fn stop_rule(p: &Program, t: Task, i: InsnId, stop: Stop) -> RawRule {
    let (restore, fallback) = match restore_here(p, &t.st, i) {
        Ok(r) => (r, None),
        Err(why) => ((*t.checkpoint).clone(), Some(why)),
    };
    RawRule {
        conds: t.conds,
        action: Action::Restore(restore),
        path: t.path,
        stop: Some(stop),
        fallback,
        packets: t.frames.len(),
    }
}

/// The rule of a path that reaches `exit` at `i`.
fn exit_rule(p: &Program, mut t: Task, i: InsnId) -> RawRule {
    match t.st.regs[0].as_const() {
        Some(r0) => {
            t.st.insns += 1;
            RawRule {
                conds: t.conds,
                action: Action::Verdict {
                    retval: r0 as u32,
                    exit: p.slots[i.index()] as u32,
                    warped: t.st.insns,
                },
                path: t.path,
                stop: None,
                fallback: None,
                packets: t.frames.len(),
            }
        }
        None => stop_rule(p, t, i, Stop::UnknownVerdict),
    }
}

/// The two sides of a jump, as the walk sees them.
enum Split {
    /// Constants decide it.
    Static(bool),
    /// Key bits decide it: each side's patterns and the packet lengths that reach it.
    Match {
        taken: Side,
        fall: Side,
        len_taken: Interval,
        len_fall: Interval,
    },
    /// The engine cannot compute it.
    Unknown,
}

#[allow(clippy::too_many_arguments)]
fn branch(
    p: &Program,
    cfg: &Cfg,
    limits: &Limits,
    mut t: Task,
    i: InsnId,
    k: &InsnKind,
    work: &mut Vec<Task>,
    rules: &mut Vec<RawRule>,
) {
    let InsnKind::Branch {
        wide,
        cond,
        dst,
        src,
        ..
    } = *k
    else {
        return;
    };
    let block = cfg.block(cfg.block_of(i).unwrap_or(Cfg::ENTRY));
    let succ = |kind: EdgeKind| block.succs.iter().find(|s| s.1 == kind).map(|s| s.0);
    let (Some(taken_to), Some(fall_to)) = (succ(EdgeKind::Taken), succ(EdgeKind::Fallthrough))
    else {
        return rules.push(stop_rule(p, t, i, Stop::UnknownBranch));
    };
    let slot = p.slots[i.index()] as u32;
    let split = split(&t.st, wide, cond, t.st.regs[dst as usize], t.st.source(src));
    let (taken, fall, len_taken, len_fall) = match split {
        Split::Unknown => return rules.push(stop_rule(p, t, i, Stop::UnknownBranch)),
        Split::Static(taken) => {
            t.st.insns += 1;
            t.block = if taken { taken_to } else { fall_to };
            t.path.push(Decision {
                slot,
                taken,
                matched: false,
            });
            work.push(t);
            return;
        }
        Split::Match {
            taken,
            fall,
            len_taken,
            len_fall,
        } => (taken, fall, len_taken, len_fall),
    };
    // The side to match on: the fewest entries, the taken side on a tie.
    let first_taken = taken.entries() <= fall.entries();
    let (matched, entries) = if first_taken {
        (taken, len_taken)
    } else {
        (fall, len_fall)
    };
    let Side::When(patterns) = matched else {
        return;
    };
    if let Some(stop) = beyond_limits(p, limits, &t, patterns.len()) {
        return rules.push(stop_rule(p, t, i, stop));
    }
    let (on, off): (Vec<u32>, Vec<u32>) = t.frames.iter().partition(|&&f| {
        patterns
            .iter()
            .any(|pat| p.profile.matches(f as usize, pat))
    });
    t.st.insns += 1;
    let mut second = t.clone();
    second.frames = Rc::new(off);
    t.frames = Rc::new(on);
    second.block = if first_taken { fall_to } else { taken_to };
    second.st.len = if first_taken { len_fall } else { len_taken };
    second.path.push(Decision {
        slot,
        taken: !first_taken,
        matched: false,
    });
    work.push(second);
    t.block = if first_taken { taken_to } else { fall_to };
    t.st.len = entries;
    t.conds.push(patterns);
    t.path.push(Decision {
        slot,
        taken: first_taken,
        matched: true,
    });
    work.push(t);
}

/// Why path `t` stops at a match of `entries` TCAM entries: past the range or the depth limit, or cold (no frame
/// of the profile takes it). A hot path (one carrying many of the profile's frames, or one the fit extends) is
/// walked past the depth and range limits, up to the engine's own range limit.
fn beyond_limits(p: &Program, limits: &Limits, t: &Task, entries: usize) -> Option<Stop> {
    let hot = limits.hot.is_some_and(|h| t.frames.len() >= h.max(1))
        || (!limits.extended.is_empty() && limits.extended.contains(&path_key(&t.path)));
    let range = if hot {
        limits.range_entries.max(p.params.range_entries as usize)
    } else {
        limits.range_entries
    };
    if entries > range {
        return Some(Stop::WideRange);
    }
    let cold = limits.cold && t.frames.is_empty();
    ((t.conds.len() >= limits.depth || cold) && !hot).then_some(Stop::Depth)
}

/// How the jump `a cond b` splits the packets that reach it.
fn split(st: &PathState, wide: bool, cond: JmpCond, a: Sym, b: Sym) -> Split {
    let width = if wide { 64 } else { 32 };
    if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
        return match hwxdp_xdp::alu::condition(cond.bits(), wide, x, y) {
            Some(t) => Split::Static(t),
            None => Split::Unknown,
        };
    }
    // Pointer and length compares: `s * len + t` against zero.
    if let Some((s, t)) = affine_difference(st, a, b) {
        return len_split(st, cond, s, t);
    }
    let (v, c, cond) = match (a, b.as_const(), a.as_const(), b) {
        (Sym::Bits(v), Some(c), _, _) => (v, c, cond),
        (_, _, Some(c), Sym::Bits(v)) => match swapped(cond) {
            Some(cond) => (v, c, cond),
            None => return Split::Unknown,
        },
        _ => return Split::Unknown,
    };
    let (taken, fall) = ternary::compare(&v, cond, c, width);
    match (&taken, &fall) {
        (Side::Never, _) | (_, Side::Always) => Split::Static(false),
        (Side::Always, _) | (_, Side::Never) => Split::Static(true),
        _ => Split::Match {
            taken,
            fall,
            len_taken: st.len,
            len_fall: st.len,
        },
    }
}

/// `a - b` as `s * len + t`, when both are packet pointers, or a length and a constant whose compare is one of
/// integers (no wrap-around at any length the path allows).
fn affine_difference(st: &PathState, a: Sym, b: Sym) -> Option<(i64, i64)> {
    let pointer = |v: Sym| match v {
        Sym::Packet(k) => Some((0, k)),
        Sym::PacketEnd(k) => Some((1, k)),
        _ => None,
    };
    let small = 1i64 << 31;
    let scalar = |v: Sym| match v {
        Sym::Len(k) if k >= -(st.len.0 as i64) && st.len.1 as i64 + k < small => Some((1, k)),
        Sym::Bits(bits) => bits
            .as_const()
            .filter(|&c| c < small as u64)
            .map(|c| (0, c as i64)),
        _ => None,
    };
    let ((s1, t1), (s2, t2)) = match (pointer(a), pointer(b)) {
        (Some(x), Some(y)) => (x, y),
        (None, None) => (scalar(a)?, scalar(b)?),
        _ => return None,
    };
    Some((s1 - s2, t1 - t2))
}

/// `b cond a` as `a cond' b`.
fn swapped(cond: JmpCond) -> Option<JmpCond> {
    Some(match cond {
        JmpCond::Eq | JmpCond::Ne | JmpCond::Set => cond,
        JmpCond::Gt => JmpCond::Lt,
        JmpCond::Ge => JmpCond::Le,
        JmpCond::Lt => JmpCond::Gt,
        JmpCond::Le => JmpCond::Ge,
        JmpCond::Sgt => JmpCond::Slt,
        JmpCond::Sge => JmpCond::Sle,
        JmpCond::Slt => JmpCond::Sgt,
        JmpCond::Sle => JmpCond::Sge,
    })
}

/// `s * len + t cond 0` (integers, no wrap-around: offsets are far from it), split over the lengths the path
/// allows.
fn len_split(st: &PathState, cond: JmpCond, s: i64, t: i64) -> Split {
    let (lo, hi) = (st.len.0 as i64, st.len.1 as i64);
    if s == 0 {
        let d = t;
        return Split::Static(match cond {
            JmpCond::Eq => d == 0,
            JmpCond::Ne => d != 0,
            JmpCond::Gt | JmpCond::Sgt => d > 0,
            JmpCond::Ge | JmpCond::Sge => d >= 0,
            JmpCond::Lt | JmpCond::Slt => d < 0,
            JmpCond::Le | JmpCond::Sle => d <= 0,
            JmpCond::Set => return Split::Unknown,
        });
    }
    // With s = -1 the compare of `t - len` with 0 is that of `len - t` with 0, mirrored.
    let cond = if s < 0 {
        swapped(cond).unwrap_or(cond)
    } else {
        cond
    };
    let root = if s < 0 { t } else { -t };
    // `len cond root`, as the lengths where it holds.
    let (a, b) = match cond {
        JmpCond::Eq | JmpCond::Ne => (root, root),
        JmpCond::Gt | JmpCond::Sgt => (root + 1, i64::MAX),
        JmpCond::Ge | JmpCond::Sge => (root, i64::MAX),
        JmpCond::Lt | JmpCond::Slt => (i64::MIN, root - 1),
        JmpCond::Le | JmpCond::Sle => (i64::MIN, root),
        JmpCond::Set => return Split::Unknown,
    };
    let clip = |a: i64, b: i64| -> Vec<Interval> {
        let (a, b) = (a.max(lo), b.min(hi));
        if a <= b {
            vec![(a as u64, b as u64)]
        } else {
            vec![]
        }
    };
    let inside = clip(a, b);
    let mut outside = clip(lo, a.saturating_sub(1));
    outside.extend(clip(b.saturating_add(1), hi));
    let (taken, fall) = if cond == JmpCond::Ne {
        (outside, inside)
    } else {
        (inside, outside)
    };
    len_sides(st.len, &taken, &fall)
}

/// The sides of a length compare within the known lengths `known`.
fn len_sides(known: Interval, taken: &[Interval], fall: &[Interval]) -> Split {
    match (taken.is_empty(), fall.is_empty()) {
        (true, _) => return Split::Static(false),
        (_, true) => return Split::Static(true),
        _ => {}
    }
    let hull = |l: &[Interval]| (l[0].0, l[l.len() - 1].1);
    Split::Match {
        taken: widened(known, taken),
        fall: widened(known, fall),
        len_taken: hull(taken),
        len_fall: hull(fall),
    }
}

/// The length patterns of `side`, each interval widened past the known bounds where that takes fewer entries
/// (lengths outside `known` never reach the rule).
fn widened(known: Interval, side: &[Interval]) -> Side {
    let len = Bits::length();
    let mut out: Vec<Pattern> = Vec::new();
    for &(lo, hi) in side {
        let los = if lo == known.0 { vec![lo, 0] } else { vec![lo] };
        let his = if hi == known.1 {
            vec![hi, MAX_LEN]
        } else {
            vec![hi]
        };
        let best = los
            .iter()
            .flat_map(|&l| his.iter().map(move |&h| (l, h)))
            .map(|(l, h)| in_intervals(&len, &[(l, h)], LEN_BITS as u32))
            .min_by_key(|s| match s {
                Side::Always => 0,
                s => s.entries().max(1),
            });
        match best {
            Some(Side::When(p)) => out.extend(p.into_iter().filter(|x| !x.is_empty())),
            Some(Side::Always) => return Side::Always,
            _ => {}
        }
    }
    if out.is_empty() {
        Side::Never
    } else {
        Side::When(out)
    }
}

/// Counts per reason, for the report.
pub fn count<K: Ord>(items: impl Iterator<Item = K>) -> BTreeMap<K, usize> {
    let mut out = BTreeMap::new();
    for k in items {
        *out.entry(k).or_insert(0) += 1;
    }
    out
}
