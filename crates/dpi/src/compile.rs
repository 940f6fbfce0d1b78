//! Rules to the automaton the XDP program runs: the packets each DFA scans (a class: protocol and destination port),
//! one multi-pattern DFA per class, all of them in one table with the match states numbered last.

use crate::dfa::{self, Flat, Input};
use crate::error::DpiError;
use crate::pattern::scoped_hir;
use crate::rules::{Proto, Rule};
use regex_syntax::hir::Hir;

/// The patterns the 64-bit match mask has room for.
pub const MAX_PATTERNS: usize = 64;
/// The states a table of 16-bit entries holds: the top bit is the scan's "a pattern matched" flag.
pub const MAX_STATES: usize = 1 << 15;

/// The packets one DFA scans: a protocol, and a destination port or every port no other class of the protocol has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    /// TCP or UDP.
    pub proto: Proto,
    /// The destination port; `None`: every other port.
    pub dport: Option<u16>,
    /// The DFA's start state in the combined table.
    pub start: u32,
    /// The DFA's states in the combined table.
    pub states: usize,
    /// The rules it looks for (indices into [`Automaton::rules`]).
    pub rules: Vec<usize>,
}

/// Every rule's DFA in one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Automaton {
    /// The rules in file order.
    pub rules: Vec<Rule>,
    /// Per rule, the bits of its patterns: the rule matches when all are set.
    pub rule_masks: Vec<u64>,
    /// The classes, TCP first, each protocol's ports ascending and its catch-all last.
    pub classes: Vec<Class>,
    /// `next[s * 256 + b]`: the next state.
    pub next: Vec<u32>,
    /// Per state, the bits of the patterns a match of which ends there.
    pub ends: Vec<u64>,
    /// States from this one on are match states (a nonzero `ends`), those before it are not.
    pub first_match: u32,
}

impl Automaton {
    /// The number of states of all DFAs together.
    pub fn states(&self) -> usize {
        self.ends.len()
    }

    /// The class that scans a packet of `proto` to `dport`, if any rule looks at it.
    pub fn class_for(&self, proto: Proto, dport: u16) -> Option<&Class> {
        let mine = || self.classes.iter().filter(|c| c.proto == proto);
        mine()
            .find(|c| c.dport == Some(dport))
            .or_else(|| mine().find(|c| c.dport.is_none()))
    }

    /// Runs the DFA of `class` over `payload`: the mask of the patterns that occur (what the program computes).
    pub fn scan(&self, class: &Class, payload: &[u8]) -> u64 {
        let mut state = class.start as usize;
        let mut mask = 0;
        for &b in payload {
            state = self.next[state * 256 + b as usize] as usize;
            mask |= self.ends[state];
        }
        mask
    }
}

/// Builds the automaton of `rules`, each DFA within `limit` bytes.
pub fn automaton(rules: Vec<Rule>, limit: usize) -> Result<Automaton, DpiError> {
    let mut hirs: Vec<Vec<Hir>> = Vec::new();
    let mut rule_masks = Vec::new();
    let mut bit = 0usize;
    for rule in &rules {
        let mut mine = Vec::new();
        let mut mask = 0u64;
        for pattern in &rule.patterns {
            if bit == MAX_PATTERNS {
                return Err(DpiError::TooManyPatterns {
                    line: rule.line,
                    max: MAX_PATTERNS,
                });
            }
            mine.push(scoped_hir(rule, pattern)?);
            mask |= 1 << bit;
            bit += 1;
        }
        hirs.push(mine);
        rule_masks.push(mask);
    }
    let mut flats = Vec::new();
    let mut classes = Vec::new();
    for (proto, dport, members) in class_members(&rules) {
        let mut inputs = Vec::new();
        for &r in &members {
            let first = rule_masks[r].trailing_zeros();
            for (k, hir) in hirs[r].iter().enumerate() {
                inputs.push(Input {
                    hir,
                    bit: first + k as u32,
                    line: rules[r].line,
                });
            }
        }
        flats.push(dfa::build(&inputs, limit)?);
        classes.push(Class {
            proto,
            dport,
            start: 0,
            states: 0,
            rules: members,
        });
    }
    let (next, ends, first_match, starts) = combine(&flats)?;
    for (class, (start, flat)) in classes.iter_mut().zip(starts.into_iter().zip(&flats)) {
        class.start = start;
        class.states = flat.states();
    }
    Ok(Automaton {
        rules,
        rule_masks,
        classes,
        next,
        ends,
        first_match,
    })
}

/// The classes: per protocol, one per destination port a rule names (its rules and the any-port rules), then the
/// any-port rules alone for the other ports.
fn class_members(rules: &[Rule]) -> Vec<(Proto, Option<u16>, Vec<usize>)> {
    let mut out = Vec::new();
    for proto in [Proto::Tcp, Proto::Udp] {
        let mut ports: Vec<u16> = rules
            .iter()
            .filter(|r| r.proto == proto)
            .filter_map(|r| r.dport)
            .collect();
        ports.sort_unstable();
        ports.dedup();
        let pick = |want: &dyn Fn(&Rule) -> bool| -> Vec<usize> {
            (0..rules.len())
                .filter(|&i| rules[i].proto == proto && want(&rules[i]))
                .collect()
        };
        for port in ports {
            out.push((
                proto,
                Some(port),
                pick(&|r| r.dport.is_none() || r.dport == Some(port)),
            ));
        }
        let any = pick(&|r| r.dport.is_none());
        if !any.is_empty() {
            out.push((proto, None, any));
        }
    }
    out
}

type Combined = (Vec<u32>, Vec<u64>, u32, Vec<u32>);

/// One table for every DFA: non-match states first (each DFA's in turn), then match states; each DFA's start.
fn combine(flats: &[Flat]) -> Result<Combined, DpiError> {
    let total: usize = flats.iter().map(Flat::states).sum();
    if total > MAX_STATES {
        return Err(DpiError::TooManyStates {
            states: total,
            max: MAX_STATES,
        });
    }
    let mut ids: Vec<Vec<u32>> = flats.iter().map(|f| vec![0; f.states()]).collect();
    let mut order = Vec::with_capacity(total);
    for matching in [false, true] {
        for (d, flat) in flats.iter().enumerate() {
            for (s, &ends) in flat.ends.iter().enumerate() {
                if (ends != 0) == matching {
                    ids[d][s] = order.len() as u32;
                    order.push((d, s));
                }
            }
        }
    }
    let first_match = order
        .iter()
        .position(|&(d, s)| flats[d].ends[s] != 0)
        .unwrap_or(total) as u32;
    let mut next = Vec::with_capacity(total * 256);
    let mut ends = Vec::with_capacity(total);
    for &(d, s) in &order {
        next.extend(
            flats[d].next[s * 256..(s + 1) * 256]
                .iter()
                .map(|&t| ids[d][t as usize]),
        );
        ends.push(flats[d].ends[s]);
    }
    let starts = ids.iter().map(|m| m[0]).collect();
    Ok((next, ends, first_match, starts))
}
