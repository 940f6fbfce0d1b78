//! The Warp Optimizer's driver: the analyses, the walk, and fitting its rules to the engine by walking less deeply
//! until they fit.

use crate::classify::{classify, BlockClass};
use crate::restore::Unrestorable;
use crate::rules::{usage, KeyEntry, KeyLayout};
use crate::state::Stop;
use crate::sym::KeyBit;
use crate::ternary::Pattern;
use crate::walk::{walk, Action, Decision, Limits, Profile, Program, RawRule};
use crate::{Params, WarpError};
use hwxdp_analysis::{Liveness, ProgramCfg, Regions, StackLiveness};
use hwxdp_ebpf::slot_offsets;
use hwxdp_object::{MapSpec, ObjectSpec, ProgramSpec};
use serde::Serialize;
use std::collections::BTreeMap;

/// A match on bytes of the chunk: `packet[offset..offset + length] & mask == value` (bytes in packet order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldMatch {
    /// First byte.
    pub offset: u16,
    /// Bytes.
    pub length: u16,
    /// Hex, packet order.
    pub value: String,
    /// Hex, packet order.
    pub mask: String,
}

/// One TCAM entry of a rule, in packet terms.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EntryMatch {
    /// Matches on the chunk.
    pub fields: Vec<FieldMatch>,
    /// `len & mask == value` on the packet length, from bounds checks.
    pub length: Option<(u16, u16)>,
}

/// One rule of the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// 0 is the highest.
    pub priority: usize,
    /// Its TCAM entries in packet terms (the rule matches when one does).
    pub matches: Vec<EntryMatch>,
    /// The same in key space.
    pub entries: Vec<KeyEntry>,
    /// What it does.
    pub action: Action,
    /// The conditional jumps its path decides.
    pub path: Vec<Decision>,
    /// Why the path continues in the processor.
    pub stop: Option<Stop>,
    /// Why the restore is at an earlier instruction of the path than the stop.
    pub fallback: Option<Unrestorable>,
}

/// What the optimizer made and what limited it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// eBPF instructions of the program (a `lddw` counts once).
    pub insns: usize,
    /// Rules.
    pub rules: usize,
    /// Rules giving a verdict.
    pub verdict_rules: usize,
    /// TCAM entries.
    pub tcam_entries: usize,
    /// Key bytes.
    pub key_bytes: usize,
    /// Key extractor stages.
    pub key_extractors: usize,
    /// Most stack bytes one restore writes.
    pub stack_bytes: usize,
    /// Most stack writes of one restore.
    pub stack_writes: usize,
    /// Most registers of one restore.
    pub registers: usize,
    /// Distinct slots the processor resumes at.
    pub restore_slots: Vec<u32>,
    /// The walk's depth limit (most matches per path); `None` when it was not limited.
    pub depth: Option<usize>,
    /// Most TCAM entries one range compare was allowed.
    pub range_entries: usize,
    /// Frames of the profile (the trace) the rules were fitted to; 0 without one.
    pub profile_frames: usize,
    /// Paths carrying at least this many of the profile's frames were walked past `depth` (`None`: none was).
    pub hot: Option<usize>,
    /// Frames of the profile on each rule's path, by priority (empty without a profile).
    pub rule_frames: Vec<usize>,
    /// What stopped a deeper walk from fitting (`tcam-entries 80 > 64`, ...); empty when the full walk fits.
    pub limited_by: Vec<String>,
    /// Why paths continue in the processor, with the number of rules each.
    pub stops: BTreeMap<String, usize>,
    /// Why restores fell back to an earlier instruction, with the number of rules each.
    pub fallbacks: BTreeMap<String, usize>,
}

/// A warped program: the rules, the key layout, the engine they are for, and the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warp {
    /// The program.
    pub program: String,
    /// The engine.
    pub params: Params,
    /// The key extractors.
    pub layout: KeyLayout,
    /// The rules in priority order.
    pub rules: Vec<Rule>,
    /// The class of each block of the entry function, by its first slot.
    pub blocks: Vec<(u32, BlockClass)>,
    /// The report.
    pub report: Report,
}

/// Warps program `name` (function or section name) of `spec`.
pub fn optimize(spec: &ObjectSpec, name: &str, params: &Params) -> Result<Warp, WarpError> {
    let program = spec
        .programs
        .iter()
        .find(|p| p.name == name)
        .or_else(|| spec.programs.iter().find(|p| p.section == name))
        .ok_or_else(|| WarpError::NoProgram(name.to_string()))?;
    optimize_program(program, &spec.maps, params)
}

/// Warps `spec`, whose maps are `maps`.
pub fn optimize_program(
    spec: &ProgramSpec,
    maps: &[MapSpec],
    params: &Params,
) -> Result<Warp, WarpError> {
    optimize_profiled(spec, maps, params, &Profile::default())
}

/// Warps `spec` for the traffic of `profile`: of the walks that fit, the one warping the most instructions over the
/// profile's frames, paths carrying many of them walked past the depth limit the others stop at (TCAM entries spent
/// by path frequency). With no frames, [`optimize_program`].
pub fn optimize_profiled(
    spec: &ProgramSpec,
    maps: &[MapSpec],
    params: &Params,
    profile: &Profile,
) -> Result<Warp, WarpError> {
    let prog = ProgramCfg::build(spec)?;
    let regions = Regions::compute(&prog, maps);
    let live = Liveness::compute(&prog);
    let stack = StackLiveness::compute(&prog, &regions, maps);
    let slots = slot_offsets(&spec.insns);
    let p = Program {
        prog: &prog,
        live: &live,
        stack: &stack,
        slots: &slots,
        params,
        profile,
    };
    let fitted = fit(&p, params);
    let (raw, entries) = (fitted.rules, fitted.entries);
    let flat: Vec<Pattern> = entries.iter().flatten().cloned().collect();
    let layout = KeyLayout::build(&flat, params.key_read.max(1));
    let rule_frames: Vec<usize> = raw
        .iter()
        .zip(&entries)
        .filter(|(_, e)| !e.is_empty())
        .map(|(r, _)| r.packets)
        .collect();
    let rules: Vec<Rule> = raw
        .into_iter()
        .zip(entries)
        .filter(|(_, e)| !e.is_empty())
        .enumerate()
        .map(|(priority, (r, e))| Rule {
            priority,
            matches: e.iter().map(entry_match).collect(),
            entries: e.iter().map(|p| KeyEntry::of(p, &layout)).collect(),
            action: r.action,
            path: r.path,
            stop: r.stop,
            fallback: r.fallback,
        })
        .collect();
    let cfg = prog.func(hwxdp_analysis::FuncId(0));
    let blocks = classify(&prog, &regions)
        .into_iter()
        .zip(&cfg.blocks)
        .map(|(c, b)| (slots[b.start.index()] as u32, c))
        .collect();
    let mut report = report(
        spec,
        &rules,
        &layout,
        fitted.depth,
        fitted.range,
        fitted.limited_by,
    );
    report.profile_frames = profile.frames.len();
    report.hot = fitted.hot;
    if !profile.frames.is_empty() {
        report.rule_frames = rule_frames;
    }
    Ok(Warp {
        program: spec.name.clone(),
        params: *params,
        layout,
        rules,
        blocks,
        report,
    })
}

/// The walk kept by [`fit`].
struct Fitted {
    rules: Vec<RawRule>,
    entries: Vec<Vec<Pattern>>,
    /// The depth limit (`None`: unlimited).
    depth: Option<usize>,
    range: usize,
    /// The hot-path threshold (`None`: none).
    hot: Option<usize>,
    /// What the deeper walks exceeded.
    limited_by: Vec<String>,
}

/// What a walk's rules are worth: instructions warped summed over the profile's frames, else over the rules.
fn score(rules: &[RawRule], profiled: bool) -> u64 {
    rules
        .iter()
        .map(|r| r.action.warped() * if profiled { r.packets as u64 } else { 1 })
        .sum()
}

/// One walk with `limits`, and its rules' entries when they fit the engine; `Err` says what they exceed.
fn attempt(
    p: &Program,
    params: &Params,
    limits: &Limits,
) -> Result<(Vec<RawRule>, Vec<Vec<Pattern>>), String> {
    let cap = params.tcam_entries as usize;
    let rules = walk(p, limits).ok_or_else(|| format!("rules > {}", limits.max_rules))?;
    let (entries, used) =
        usage(&rules, params, cap).ok_or_else(|| format!("tcam-entries > {cap}"))?;
    match used.exceeds(params) {
        Some((name, used, limit)) => Err(format!("{name} {used} > {limit}")),
        None => Ok((rules, entries)),
    }
}

/// The limits of a walk at `depth`, `range` and hot threshold `hot` (which also cuts the cold paths).
fn limits(params: &Params, depth: usize, range: usize, hot: Option<usize>) -> Limits {
    Limits {
        depth,
        range_entries: range,
        max_rules: params.tcam_entries as usize * 2 + 8,
        hot,
        cold: hot.is_some(),
        extended: Vec::new(),
    }
}

/// The walk whose rules fit and warp the most: the unlimited walk when it fits, else the best of the walks with a
/// depth limit, a range limit and (with a profile) a hot-path threshold, then (with a profile) its most frequent
/// stopped paths deepened one match at a time while the rules fit.
fn fit(p: &Program, params: &Params) -> Fitted {
    let mut limited_by: Vec<String> = Vec::new();
    let range = params.range_entries as usize;
    let natural = match attempt(p, params, &limits(params, usize::MAX, range, None)) {
        Ok((rules, entries)) => {
            return Fitted {
                rules,
                entries,
                depth: None,
                range,
                hot: None,
                limited_by,
            }
        }
        Err(why) => {
            limited_by.push(format!("{why} (unlimited depth)"));
            natural_depth(p, range)
        }
    };
    let profiled = !p.profile.frames.is_empty();
    let mut best: Option<(u64, Limits, Fitted)> = None;
    for l in grid(p, params, natural) {
        match attempt(p, params, &l) {
            Ok((rules, entries)) => {
                let s = score(&rules, profiled);
                if best.as_ref().is_none_or(|b| s > b.0) {
                    let fitted = Fitted {
                        rules,
                        entries,
                        depth: Some(l.depth),
                        range: l.range_entries,
                        hot: l.hot,
                        limited_by: Vec::new(),
                    };
                    best = Some((s, l, fitted));
                }
            }
            Err(why) if limited_by.len() < 4 && l.hot.is_none() => limited_by.push(format!(
                "{why} (depth {}, range {})",
                l.depth, l.range_entries
            )),
            Err(_) => {}
        }
    }
    let Some((s, l, fitted)) = best else {
        return Fitted {
            rules: Vec::new(),
            entries: Vec::new(),
            depth: Some(0),
            range: 0,
            hot: None,
            limited_by,
        };
    };
    let fitted = if profiled {
        deepen(p, params, s, l, fitted)
    } else {
        fitted
    };
    Fitted {
        limited_by,
        ..fitted
    }
}

/// The limits [`fit`] tries below the natural depth, deepest first: every range limit and, with a profile, hot
/// thresholds from half the frames down to a sixty-fourth (and one above all of them: cold paths cut only).
fn grid(p: &Program, params: &Params, natural: usize) -> Vec<Limits> {
    let mut ranges: Vec<usize> = [params.range_entries as usize, 4, 2, 1]
        .into_iter()
        .filter(|&r| r <= params.range_entries as usize)
        .collect();
    ranges.dedup();
    let frames = p.profile.frames.len();
    let mut hots: Vec<Option<usize>> = vec![None];
    if frames > 0 {
        hots.push(Some(frames + 1));
        hots.extend([2, 4, 8, 16, 32, 64].map(|d| Some((frames / d).max(1))));
        hots.dedup();
    }
    let mut out = Vec::new();
    for depth in (0..natural).rev() {
        for &range in &ranges {
            for &hot in &hots {
                out.push(limits(params, depth, range, hot));
            }
        }
    }
    out
}

/// Rounds of [`deepen`]: each may deepen every stopped path by one match.
const DEEPEN_ROUNDS: usize = 8;

/// TCAM entries spent by path frequency: the stopped paths (at the depth or range limit) of `fitted` that the most
/// frames take are walked one match deeper, one at a time, each kept when the rules still fit and warp more
/// instructions over the profile.
fn deepen(
    p: &Program,
    params: &Params,
    mut score_now: u64,
    mut l: Limits,
    mut fitted: Fitted,
) -> Fitted {
    for _ in 0..DEEPEN_ROUNDS {
        let mut stopped: Vec<(usize, Vec<(u32, bool)>)> = fitted
            .rules
            .iter()
            .filter(|r| matches!(r.stop, Some(Stop::Depth | Stop::WideRange)) && r.packets > 0)
            .map(|r| (r.packets, crate::walk::path_key(&r.path)))
            .collect();
        stopped.sort_by_key(|s| std::cmp::Reverse(s.0));
        let mut changed = false;
        for (_, path) in stopped {
            if l.extended.contains(&path) {
                continue;
            }
            let mut next = l.clone();
            next.extended.push(path);
            if let Ok((rules, entries)) = attempt(p, params, &next) {
                let s = score(&rules, true);
                if s > score_now {
                    score_now = s;
                    fitted.rules = rules;
                    fitted.entries = entries;
                    l = next;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    fitted
}

/// The deepest path the unlimited walk takes, or a bound when it was cut short.
fn natural_depth(p: &Program, range: usize) -> usize {
    let limits = Limits {
        max_rules: 4096,
        ..limits(&Params::default(), usize::MAX, range, None)
    };
    walk(p, &limits)
        .map(|r| r.iter().map(|r| r.conds.len()).max().unwrap_or(0))
        .unwrap_or(64)
}

/// A TCAM entry's care bits as matches on runs of chunk bytes and on the length.
fn entry_match(p: &Pattern) -> EntryMatch {
    let mut bytes: BTreeMap<u16, (u8, u8)> = BTreeMap::new();
    let mut length: Option<(u16, u16)> = None;
    for (&bit, &v) in p {
        match bit {
            KeyBit::Chunk(c) => {
                let e = bytes.entry(c / 8).or_insert((0, 0));
                e.1 |= 1 << (c % 8);
                if v {
                    e.0 |= 1 << (c % 8);
                }
            }
            KeyBit::Len(n) => {
                let e = length.get_or_insert((0, 0));
                e.1 |= 1 << n;
                if v {
                    e.0 |= 1 << n;
                }
            }
        }
    }
    let mut fields: Vec<(u16, Vec<(u8, u8)>)> = Vec::new();
    for (&off, &vm) in &bytes {
        match fields.last_mut() {
            Some((start, run)) if *start + run.len() as u16 == off => run.push(vm),
            _ => fields.push((off, vec![vm])),
        }
    }
    let hex = |b: &mut dyn Iterator<Item = u8>| -> String {
        let s: String = b.map(|x| format!("{x:02x}")).collect();
        format!("0x{s}")
    };
    EntryMatch {
        fields: fields
            .into_iter()
            .map(|(offset, run)| FieldMatch {
                offset,
                length: run.len() as u16,
                value: hex(&mut run.iter().map(|x| x.0)),
                mask: hex(&mut run.iter().map(|x| x.1)),
            })
            .collect(),
        length,
    }
}

fn report(
    spec: &ProgramSpec,
    rules: &[Rule],
    layout: &KeyLayout,
    depth: Option<usize>,
    range: usize,
    limited_by: Vec<String>,
) -> Report {
    let restores = || {
        rules.iter().filter_map(|r| match &r.action {
            Action::Restore(x) => Some(x),
            _ => None,
        })
    };
    let mut slots: Vec<u32> = restores().map(|r| r.slot).collect();
    slots.sort();
    slots.dedup();
    let count = |items: Vec<String>| crate::walk::count(items.into_iter());
    Report {
        insns: spec.insns.len(),
        rules: rules.len(),
        verdict_rules: rules.len() - restores().count(),
        tcam_entries: rules.iter().map(|r| r.entries.len()).sum(),
        key_bytes: layout.key_bytes as usize,
        key_extractors: layout.extractors.len(),
        stack_bytes: restores().map(|r| r.stack_bytes()).max().unwrap_or(0),
        stack_writes: restores().map(|r| r.stack.len()).max().unwrap_or(0),
        registers: restores().map(|r| r.regs.len()).max().unwrap_or(0),
        restore_slots: slots,
        depth,
        range_entries: range,
        profile_frames: 0,
        hot: None,
        rule_frames: Vec::new(),
        limited_by,
        stops: count(
            rules
                .iter()
                .filter_map(|r| r.stop)
                .map(|s| s.name().to_string())
                .collect(),
        ),
        fallbacks: count(
            rules
                .iter()
                .filter_map(|r| r.fallback)
                .map(|f| f.name().to_string())
                .collect(),
        ),
    }
}
