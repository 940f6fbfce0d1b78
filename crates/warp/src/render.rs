//! The readable forms of a warped program: the rule table, the key-extractor and restore configuration, the report.

use crate::fit::{EntryMatch, Rule};
use crate::rules::KeySource;
use crate::walk::Action;
use crate::Warp;
use std::fmt::Write;

/// One entry's matches as text: `pkt[12..14] & 0xffff == 0x0800, len & 0xffc0 == 0x0000`.
pub fn entry_text(e: &EntryMatch) -> String {
    let mut parts: Vec<String> = e
        .fields
        .iter()
        .map(|f| {
            let all = f.mask.chars().skip(2).all(|c| c == 'f');
            let at = format!("pkt[{}..{}]", f.offset, f.offset + f.length);
            if all {
                format!("{at} == {}", f.value)
            } else {
                format!("{at} & {} == {}", f.mask, f.value)
            }
        })
        .collect();
    if let Some((value, mask)) = e.length {
        parts.push(format!("len & {mask:#06x} == {value:#06x}"));
    }
    if parts.is_empty() {
        "*".to_string()
    } else {
        parts.join(", ")
    }
}

/// A rule's action as text.
pub fn action_text(rule: &Rule) -> String {
    match &rule.action {
        Action::Verdict { retval, warped, .. } => {
            let name = hwxdp_xdp::Verdict::from_retval(*retval).bucket();
            format!("verdict {retval} ({name}); {warped} insns warped")
        }
        Action::Restore(r) => {
            let regs: Vec<String> = r.regs.iter().map(|(n, v)| format!("r{n}={v}")).collect();
            let stack: Vec<String> = r
                .stack
                .iter()
                .map(|s| format!("[r10{:+}]:{}={}", s.offset, s.size, s.value))
                .collect();
            let why = rule.stop.map_or(String::new(), |s| format!(" ({s})"));
            format!(
                "resume at {}{why}: {}{}{}; {} insns warped",
                r.slot,
                regs.join(" "),
                if stack.is_empty() { "" } else { " " },
                stack.join(" "),
                r.warped
            )
        }
    }
}

/// The rule table: one line per TCAM entry, the rule's priority and action on its first.
pub fn rules_table(w: &Warp) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:>4}  {:<56}  action", "prio", "matches");
    for r in &w.rules {
        for (i, m) in r.matches.iter().enumerate() {
            if i == 0 {
                let _ = writeln!(
                    out,
                    "{:>4}  {:<56}  {}",
                    r.priority,
                    entry_text(m),
                    action_text(r)
                );
            } else {
                let _ = writeln!(out, "{:>4}  {:<56}", "", format!("or {}", entry_text(m)));
            }
        }
    }
    out
}

/// The key extractors, one line a stage.
pub fn key_table(w: &Warp) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "key: {} bytes from {} extractors",
        w.layout.key_bytes,
        w.layout.extractors.len()
    );
    for (i, e) in w.layout.extractors.iter().enumerate() {
        let src = match e.source {
            KeySource::Chunk(o) => format!("pkt[{}..{}]", o, o + e.width),
            KeySource::Length(o) => format!("len[{}..{}]", o, o + e.width),
        };
        let mask: String = e.mask.iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(
            out,
            "  extractor {i}: {src} & 0x{mask} -> key[{}..{}]",
            e.key_offset,
            e.key_offset + e.width
        );
    }
    out
}

/// The report as text.
pub fn report_text(w: &Warp) -> String {
    let r = &w.report;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} rules ({} verdicts), {} TCAM entries, {} key bytes ({} extractors), at most {} stack bytes in {} writes and {} registers restored; {} restore points",
        w.program, r.rules, r.verdict_rules, r.tcam_entries, r.key_bytes, r.key_extractors, r.stack_bytes,
        r.stack_writes, r.registers, r.restore_slots.len()
    );
    let depth = r.depth.map_or("unlimited".to_string(), |d| d.to_string());
    let _ = writeln!(
        out,
        "walk depth {depth}, range compares up to {} entries",
        r.range_entries
    );
    if r.limited_by.is_empty() {
        let _ = writeln!(out, "limited by: nothing (the whole walk fits)");
    } else {
        let _ = writeln!(out, "limited by: {}", r.limited_by.join("; "));
    }
    let list = |m: &std::collections::BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "paths continue in the processor at: {}",
        list(&r.stops)
    );
    if !r.fallbacks.is_empty() {
        let _ = writeln!(
            out,
            "restores moved to an earlier instruction: {}",
            list(&r.fallbacks)
        );
    }
    out
}
