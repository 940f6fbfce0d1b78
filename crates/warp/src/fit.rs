//! The Warp Optimizer's driver: the analyses, the walk, and fitting its rules to the engine by walking less deeply
//! until they fit.

use crate::classify::{classify, BlockClass};
use crate::restore::Unrestorable;
use crate::rules::{usage, KeyEntry, KeyLayout};
use crate::state::Stop;
use crate::sym::KeyBit;
use crate::ternary::Pattern;
use crate::walk::{walk, Action, Decision, Limits, Program, RawRule};
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
    };
    let (raw, entries, depth, range, limited_by) = fit(&p, params);
    let flat: Vec<Pattern> = entries.iter().flatten().cloned().collect();
    let layout = KeyLayout::build(&flat, params.key_read.max(1));
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
    let report = report(spec, &rules, &layout, depth, range, limited_by);
    Ok(Warp {
        program: spec.name.clone(),
        params: *params,
        layout,
        rules,
        blocks,
        report,
    })
}

/// The deepest walk whose rules fit: its rules and their entries, the depth limit (`None`: unlimited), the range
/// limit, and what the deeper walks exceeded.
#[allow(clippy::type_complexity)]
fn fit(
    p: &Program,
    params: &Params,
) -> (
    Vec<RawRule>,
    Vec<Vec<Pattern>>,
    Option<usize>,
    usize,
    Vec<String>,
) {
    let cap = params.tcam_entries as usize;
    let mut limited_by: Vec<String> = Vec::new();
    let mut ranges: Vec<usize> = [params.range_entries as usize, 4, 2, 1]
        .into_iter()
        .filter(|&r| r <= params.range_entries as usize)
        .collect();
    ranges.dedup();
    let attempt =
        |depth: usize, range: usize| -> Result<(Vec<RawRule>, Vec<Vec<Pattern>>), String> {
            let limits = Limits {
                depth,
                range_entries: range,
                max_rules: cap * 2 + 8,
            };
            let rules = walk(p, &limits).ok_or_else(|| format!("rules > {}", limits.max_rules))?;
            let (entries, used) =
                usage(&rules, params, cap).ok_or_else(|| format!("tcam-entries > {cap}"))?;
            match used.exceeds(params) {
                Some((name, used, limit)) => Err(format!("{name} {used} > {limit}")),
                None => Ok((rules, entries)),
            }
        };
    let range = params.range_entries as usize;
    let natural = match attempt(usize::MAX, range) {
        Ok((rules, entries)) => return (rules, entries, None, range, limited_by),
        Err(why) => {
            limited_by.push(format!("{why} (unlimited depth)"));
            // The deepest path the unlimited walk would take, or a bound when it was cut short.
            let limits = Limits {
                depth: usize::MAX,
                range_entries: range,
                max_rules: 4096,
            };
            walk(p, &limits)
                .map(|r| r.iter().map(|r| r.conds.len()).max().unwrap_or(0))
                .unwrap_or(64)
        }
    };
    // Of the walks that fit, the one whose rules warp the most instructions (summed over rules), the deepest on a
    // tie.
    let mut best: Option<(u64, Vec<RawRule>, Vec<Vec<Pattern>>, usize, usize)> = None;
    for depth in (0..natural).rev() {
        for &range in &ranges {
            match attempt(depth, range) {
                Ok((rules, entries)) => {
                    let score: u64 = rules.iter().map(|r| r.action.warped()).sum();
                    if best.as_ref().is_none_or(|b| score > b.0) {
                        best = Some((score, rules, entries, depth, range));
                    }
                }
                Err(why) if limited_by.len() < 4 => {
                    limited_by.push(format!("{why} (depth {depth}, range {range})"))
                }
                Err(_) => {}
            }
        }
    }
    match best {
        Some((_, rules, entries, depth, range)) => (rules, entries, Some(depth), range, limited_by),
        None => (Vec::new(), Vec::new(), Some(0), 0, limited_by),
    }
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
