//! Payloads for a trace of a rules file (`hwxdp gen` on a dpi object): per rule, payloads in which it matches, near
//! misses in which it does not, a match split over two payloads, and matches that end just inside and just outside
//! the scan limit.
//!
//! Each rule's patterns, in their scopes, are built into one DFA of their own ([`crate::dfa`], a bit per pattern);
//! a rule matches a payload when the DFA's walk over it has seen every bit. The search runs on the product of the
//! DFA's states and the bits seen so far: a backward breadth-first search gives every node its distance to a node
//! with every bit, and a payload of exactly `n` bytes whose match completes at its last byte is a walk that keeps
//! that distance within the bytes left and reaches every bit only at the end. Bytes are random among those that
//! keep the walk possible, printable ones preferred, so the payloads vary from seed to seed.

use crate::compile::Automaton;
use crate::dfa::{self, Flat, Input};
use crate::error::DpiError;
use crate::pattern::scoped_hir;
use crate::rules::Proto;

/// The most product nodes (DFA states times sets of patterns seen) a rule's search may have.
pub const MAX_NODES: usize = 1 << 20;
/// Ports tried, in turn, for packets that no port-specific rule looks at.
const FREE_PORTS: std::ops::RangeInclusive<u16> = 4242..=4342;

/// The payloads made for one rule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSamples {
    /// The rule's index (file order, its key in `dpi_hits`).
    pub rule: usize,
    /// Destination ports of packets the rule looks at: its own, or a port no rule names and one a rule names.
    pub ports: Vec<u16>,
    /// A destination port of its protocol that the rule does not look at (port-specific rules only).
    pub other_port: Option<u16>,
    /// Payloads in which the rule matches within the scan limit.
    pub matching: Vec<Vec<u8>>,
    /// Payloads in which it does not: a matching payload cut before its last byte, or with a byte changed.
    pub missing: Vec<Vec<u8>>,
    /// A matching payload cut in two, neither part matching on its own.
    pub split: Option<(Vec<u8>, Vec<u8>)>,
    /// A payload of exactly the scan limit whose match completes at its last byte.
    pub inside: Option<Vec<u8>>,
    /// A payload one byte longer whose match completes only at that byte, past the scan limit.
    pub outside: Option<Vec<u8>>,
    /// Why some of the above could not be made (for example a pattern anchored at the payload's start).
    pub notes: Vec<String>,
}

/// Payloads for every rule of `automaton`, `per_rule` matching ones each (and as many near misses), for a scan of
/// `max_payload` bytes; deterministic from `seed`.
pub fn samples(
    automaton: &Automaton,
    max_payload: usize,
    dfa_limit: usize,
    per_rule: usize,
    seed: u64,
) -> Result<Vec<RuleSamples>, DpiError> {
    let mut rng = Rng(seed ^ 0x6470_6921_7769_746e | 1);
    let mut out = Vec::new();
    for (r, rule) in automaton.rules.iter().enumerate() {
        let (ports, other_port) = ports_of(automaton, r);
        let mut s = RuleSamples {
            rule: r,
            ports,
            other_port,
            ..RuleSamples::default()
        };
        let hirs = rule
            .patterns
            .iter()
            .map(|p| scoped_hir(rule, p))
            .collect::<Result<Vec<_>, _>>()?;
        let inputs: Vec<Input<'_>> = hirs
            .iter()
            .enumerate()
            .map(|(bit, hir)| Input {
                hir,
                bit: bit as u32,
                line: rule.line,
            })
            .collect();
        let flat = dfa::build(&inputs, dfa_limit)?;
        match Search::new(&flat, inputs.len()) {
            Some(search) => search.fill(&mut s, max_payload, per_rule, &mut rng),
            None => s.notes.push(format!(
                "its search would need more than {MAX_NODES} nodes (DFA states times pattern sets)"
            )),
        }
        out.push(s);
    }
    Ok(out)
}

/// The ports a rule looks at, and one of its protocol it does not (for a port-specific rule).
fn ports_of(a: &Automaton, r: usize) -> (Vec<u16>, Option<u16>) {
    let rule = &a.rules[r];
    let named: Vec<u16> = a
        .classes
        .iter()
        .filter(|c| c.proto == rule.proto)
        .filter_map(|c| c.dport)
        .collect();
    let free = free_port(a, rule.proto);
    match rule.dport {
        Some(port) => (vec![port], Some(free)),
        None => {
            let mut ports = vec![free];
            ports.extend(named.first());
            (ports, None)
        }
    }
}

/// A port of `proto` no rule names.
pub fn free_port(a: &Automaton, proto: Proto) -> u16 {
    FREE_PORTS
        .clone()
        .find(|p| {
            !a.classes
                .iter()
                .any(|c| c.proto == proto && c.dport == Some(*p))
        })
        .unwrap_or(31337)
}

/// The product of a rule's DFA and the sets of its patterns seen, with every node's distance to a full set.
struct Search<'a> {
    flat: &'a Flat,
    /// Patterns of the rule.
    k: usize,
    /// `dist[s << k | m]`, `u32::MAX` when no payload completes the set from there.
    dist: Vec<u32>,
}

impl<'a> Search<'a> {
    /// The search of `flat` (bits 0 to `k - 1`); `None` when it is over [`MAX_NODES`].
    fn new(flat: &'a Flat, k: usize) -> Option<Search<'a>> {
        let nodes = flat.states().checked_mul(1usize << k)?;
        if nodes > MAX_NODES {
            return None;
        }
        let full = (1u64 << k) - 1;
        let targets: Vec<Vec<u32>> = (0..flat.states())
            .map(|s| {
                let mut t = flat.next[s * 256..(s + 1) * 256].to_vec();
                t.sort_unstable();
                t.dedup();
                t
            })
            .collect();
        // Backward edges, as a compressed adjacency: per node, the nodes one byte before it.
        let mut count = vec![0u32; nodes + 1];
        let edge = |m: u64, t: u32| {
            let m2 = m | (flat.ends[t as usize] & full);
            ((t as usize) << k) | m2 as usize
        };
        for ts in &targets {
            for m in 0..full {
                for &t in ts {
                    count[edge(m, t) + 1] += 1;
                }
            }
        }
        for i in 0..nodes {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut back = vec![0u32; count[nodes] as usize];
        for (s, ts) in targets.iter().enumerate() {
            for m in 0..full {
                for &t in ts {
                    let to = edge(m, t);
                    back[fill[to] as usize] = ((s << k) | m as usize) as u32;
                    fill[to] += 1;
                }
            }
        }
        let mut dist = vec![u32::MAX; nodes];
        let mut queue: Vec<usize> = (0..flat.states())
            .map(|s| (s << k) | full as usize)
            .collect();
        for &n in &queue {
            dist[n] = 0;
        }
        let mut at = 0;
        while at < queue.len() {
            let n = queue[at];
            at += 1;
            for &p in &back[count[n] as usize..count[n + 1] as usize] {
                if dist[p as usize] == u32::MAX {
                    dist[p as usize] = dist[n] + 1;
                    queue.push(p as usize);
                }
            }
        }
        Some(Search { flat, k, dist })
    }

    fn full(&self) -> u64 {
        (1u64 << self.k) - 1
    }

    fn step(&self, n: usize, b: u8) -> usize {
        let t = self.flat.next[(n >> self.k) * 256 + b as usize] as usize;
        let m = (n as u64 & self.full()) | (self.flat.ends[t] & self.full());
        (t << self.k) | m as usize
    }

    /// Whether the rule matches `payload`.
    fn matches(&self, payload: &[u8]) -> bool {
        let n = payload.iter().fold(0, |n, &b| self.step(n, b));
        n as u64 & self.full() == self.full()
    }

    /// Shortest matching payload's length, `None` when nothing matches.
    fn shortest(&self) -> Option<usize> {
        let d = self.dist[0];
        (d != u32::MAX).then_some(d as usize)
    }

    /// A payload of exactly `len` bytes whose match completes at its last byte, if there is one.
    fn walk(&self, len: usize, rng: &mut Rng) -> Option<Vec<u8>> {
        let mut n = 0usize;
        let mut out = Vec::with_capacity(len);
        let mut ok: Vec<u8> = Vec::with_capacity(256);
        for i in 0..len {
            let left = (len - i - 1) as u32;
            ok.clear();
            ok.extend((0..=255u8).filter(|&b| {
                let to = self.step(n, b);
                self.dist[to] <= left && (left == 0 || self.dist[to] > 0)
            }));
            let printable: Vec<u8> = ok
                .iter()
                .copied()
                .filter(|b| (0x20..0x7f).contains(b))
                .collect();
            let pool = if !printable.is_empty() && rng.below(8) != 0 {
                &printable
            } else {
                &ok
            };
            let &b = pool.get(rng.below(pool.len()))?;
            out.push(b);
            n = self.step(n, b);
        }
        Some(out)
    }

    /// Fills `s` with payloads for a scan of `max_payload` bytes.
    fn fill(&self, s: &mut RuleSamples, max_payload: usize, per_rule: usize, rng: &mut Rng) {
        let Some(shortest) = self.shortest() else {
            s.notes.push("no payload matches it".into());
            return;
        };
        if shortest > max_payload {
            s.notes.push(format!(
                "its shortest match is {shortest} bytes, past the scan limit of {max_payload}"
            ));
        }
        for i in 0..per_rule.max(1) * 4 {
            if s.matching.len() >= per_rule.max(1) {
                break;
            }
            let len = if i == 0 {
                shortest
            } else {
                shortest + rng.below(48)
            };
            if len > max_payload {
                continue;
            }
            if let Some(mut w) = self.walk(len, rng) {
                self.near_misses(s, &w, per_rule, rng);
                if s.split.is_none() {
                    s.split = self.split(&w);
                }
                w.extend((0..rng.below(24)).map(|_| b' ' + rng.below(95) as u8));
                s.matching.push(w);
            }
        }
        s.inside = self.walk(max_payload, rng);
        s.outside = self.walk(max_payload + 1, rng);
        if s.inside.is_none() || s.outside.is_none() {
            s.notes.push(format!(
                "no match of it ends at byte {} or {}: its patterns are anchored near the payload's start",
                max_payload,
                max_payload + 1
            ));
        }
    }

    /// Payloads near the matching `w` in which the rule does not match.
    fn near_misses(&self, s: &mut RuleSamples, w: &[u8], per_rule: usize, rng: &mut Rng) {
        let mut tries = 0;
        let cut = w[..w.len() - 1].to_vec();
        s.missing.push(cut);
        while s.missing.len() < per_rule.max(1) && tries < 16 {
            tries += 1;
            let mut m = w.to_vec();
            let at = rng.below(m.len());
            m[at] = m[at].wrapping_add(1 + rng.below(255) as u8);
            if !self.matches(&m) && !s.missing.contains(&m) {
                s.missing.push(m);
            }
        }
    }

    /// `w` cut in two where neither part matches, if it can be.
    fn split(&self, w: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
        let mid = w.len() / 2;
        (1..w.len())
            .map(|d| {
                if d % 2 == 1 {
                    mid + d / 2
                } else {
                    mid.wrapping_sub(d / 2)
                }
            })
            .filter(|&j| j > 0 && j < w.len())
            .find(|&j| !self.matches(&w[..j]) && !self.matches(&w[j..]))
            .map(|j| (w[..j].to_vec(), w[j..].to_vec()))
    }
}

/// xorshift64*: payloads reproduce from a seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        if n == 0 {
            0
        } else {
            ((x >> 11) % n as u64) as usize
        }
    }
}
