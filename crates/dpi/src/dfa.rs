//! Several patterns to one minimised multi-pattern DFA (regex-automata), flattened into the table the scan runs: one
//! row of 256 next states per state, and per state the mask of the patterns a match of which ends at that byte.

use crate::error::DpiError;
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::Hir;
use std::collections::HashMap;

/// One pattern of a DFA: its expression and its bit in the match mask.
pub struct Input<'a> {
    /// The scoped expression.
    pub hir: &'a Hir,
    /// Its bit (0 to 63).
    pub bit: u32,
    /// The rule's line, for errors.
    pub line: usize,
}

/// A DFA in flat form: state 0 is its start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flat {
    /// `next[s * 256 + b]`: the state after byte `b` in state `s`.
    pub next: Vec<u32>,
    /// `ends[s]`: the bits of the patterns a match of which ends at the byte that led to `s`.
    pub ends: Vec<u64>,
}

impl Flat {
    /// The number of states.
    pub fn states(&self) -> usize {
        self.ends.len()
    }
}

/// Builds the DFA of `inputs` within `limit` bytes (regex-automata's own accounting). A DFA over the limit is
/// rebuilt a rule at a time to name the rule that crossed it.
pub fn build(inputs: &[Input<'_>], limit: usize) -> Result<Flat, DpiError> {
    match build_dense(inputs, limit) {
        Ok(flat) => Ok(flat),
        Err(reason) => Err(culprit(inputs, limit, reason)),
    }
}

/// The error naming the first rule whose patterns, with those before it, exceed the limit.
fn culprit(inputs: &[Input<'_>], limit: usize, reason: String) -> DpiError {
    for end in 1..=inputs.len() {
        if let Err(reason) = build_dense(&inputs[..end], limit) {
            let line = inputs[end - 1].line;
            let alone: Vec<Input<'_>> = inputs
                .iter()
                .filter(|i| i.line == line)
                .map(|i| Input {
                    hir: i.hir,
                    bit: i.bit,
                    line,
                })
                .collect();
            let alone = build_dense(&alone, limit).is_err();
            return DpiError::DfaTooBig {
                line,
                limit,
                alone,
                reason,
            };
        }
    }
    DpiError::DfaTooBig {
        line: inputs.last().map_or(0, |i| i.line),
        limit,
        alone: false,
        reason,
    }
}

/// regex-automata's DFA, flattened; the error is regex-automata's message.
fn build_dense(inputs: &[Input<'_>], limit: usize) -> Result<Flat, String> {
    let hirs: Vec<&Hir> = inputs.iter().map(|i| i.hir).collect();
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .utf8(false)
                .which_captures(thompson::WhichCaptures::None),
        )
        .build_many_from_hir(&hirs)
        .map_err(|e| e.to_string())?;
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::All)
                .start_kind(StartKind::Unanchored)
                .minimize(true)
                .dfa_size_limit(Some(limit))
                .determinize_size_limit(Some(limit)),
        )
        .build_from_nfa(&nfa)
        .map_err(|e| e.to_string())?;
    let bits: Vec<u64> = inputs.iter().map(|i| 1u64 << i.bit).collect();
    flatten(&dfa, &bits)
}

/// Numbers the states reachable from the start (breadth first, the start 0) and reads their transitions.
fn flatten(dfa: &dense::DFA<Vec<u32>>, bits: &[u64]) -> Result<Flat, String> {
    let start = dfa
        .start_state(&start::Config::new().anchored(Anchored::No))
        .map_err(|e| e.to_string())?;
    let mut ids: HashMap<StateID, u32> = HashMap::from([(start, 0)]);
    let mut order = vec![start];
    let mut next = Vec::new();
    let mut ends = Vec::new();
    let mut at = 0;
    while at < order.len() {
        let sid = order[at];
        at += 1;
        ends.push(ending(dfa, sid, bits));
        for byte in 0..=255u8 {
            let to = dfa.next_state(sid, byte);
            let n = ids.len() as u32;
            let id = *ids.entry(to).or_insert_with(|| {
                order.push(to);
                n
            });
            next.push(id);
        }
    }
    Ok(Flat { next, ends })
}

/// The patterns a match of which ends where `sid` is: regex-automata reports a match one byte late, so they are the
/// matches of the state the end of input leads to (the same for every next byte, as no pattern looks ahead).
fn ending(dfa: &dense::DFA<Vec<u32>>, sid: StateID, bits: &[u64]) -> u64 {
    let eoi = dfa.next_eoi_state(sid);
    if !dfa.is_match_state(eoi) {
        return 0;
    }
    (0..dfa.match_len(eoi))
        .map(|i| bits[dfa.match_pattern(eoi, i).as_usize()])
        .fold(0, |a, b| a | b)
}
