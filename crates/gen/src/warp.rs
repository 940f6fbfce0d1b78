//! Equivalence traces for a warped program (appendix D of the warping paper): from the Warp Engine's rules, packets
//! that hit every rule, and packets no rule matches.
//!
//! A rule is a list of TCAM entries in packet terms ([`EntrySpec`]: value and mask on bytes of the packet's first
//! chunk, and on its 16-bit length); a packet hits the rule when one of its entries matches and no entry of a
//! higher-priority rule does. [`warp_trace`] solves each entry: the length from the entry's length condition, the
//! bytes it cares about set, the don't-care bytes random (or taken from a base packet, see below); then, while a
//! higher-priority entry matches, it flips a bit that entry cares about and this one does not. Bytes past the end
//! of a frame read as zero, as the engine's key extractors read them.
//!
//! Map states. Where the rest of the program runs on the processor (a restore rule, [`RuleSpec::resumes`]) it may
//! branch on a map lookup keyed by packet fields. Each such rule's entries are also laid over every base packet (the
//! program's own `hwxdp gen` trace, whose addresses and ports are those its `maps.json` preloads): with those
//! preloads, the random packets miss the tables and the laid-over ones hit them. And every packet of a restore rule
//! is sent twice in a row, so the second sees what the first wrote (a flow created, a counter bumped).

use crate::rng::Rng;
use thiserror::Error;

/// Shortest frame XDP sees (an Ethernet header).
pub const MIN_FRAME: usize = 14;
/// Longest frame the trace makes (an Ethernet MTU frame without FCS).
pub const MAX_FRAME: usize = 1514;

/// One byte of a TCAM entry: `packet[offset] & mask == value` (zero past the frame's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteMatch {
    /// Offset from the packet's first byte.
    pub offset: u16,
    /// The care bits' values.
    pub value: u8,
    /// The care bits.
    pub mask: u8,
}

/// One TCAM entry in packet terms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntrySpec {
    /// Conditions on bytes.
    pub bytes: Vec<ByteMatch>,
    /// `len & mask == value` on the frame's length, when the entry has one.
    pub length: Option<(u16, u16)>,
}

impl EntrySpec {
    /// Whether frame `p` matches.
    pub fn matches(&self, p: &[u8]) -> bool {
        let len_ok = self
            .length
            .is_none_or(|(v, m)| (p.len().min(0xffff) as u16) & m == v);
        len_ok
            && self
                .bytes
                .iter()
                .all(|b| p.get(b.offset as usize).copied().unwrap_or(0) & b.mask == b.value)
    }

    /// The mask this entry has on byte `offset`.
    fn mask_at(&self, offset: u16) -> u8 {
        self.bytes
            .iter()
            .filter(|b| b.offset == offset)
            .fold(0, |m, b| m | b.mask)
    }
}

/// One rule of the engine, in priority order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSpec {
    /// Its entries: the rule matches when one does.
    pub entries: Vec<EntrySpec>,
    /// Whether the processor runs on after the engine (a context restore) rather than the engine deciding.
    pub resumes: bool,
}

/// How many packets [`warp_trace`] makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpTraceOptions {
    /// Random packets per entry of each rule.
    pub per_entry: usize,
    /// Random packets that no rule matches (when there are such packets).
    pub unmatched: usize,
    /// Base packets a restore rule's entries are laid over (the first ones given).
    pub bases: usize,
}

impl Default for WarpTraceOptions {
    fn default() -> Self {
        WarpTraceOptions {
            per_entry: 2,
            unmatched: 8,
            bases: 24,
        }
    }
}

/// A packet of the trace and the rule it was made for (`None`: none matches it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpPacket {
    /// The frame.
    pub bytes: Vec<u8>,
    /// The rule's index (its priority).
    pub rule: Option<usize>,
}

/// A rule no packet can hit: each entry is covered by higher-priority ones (or needs an impossible length).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("rule {rule}: no frame of {MIN_FRAME} to {MAX_FRAME} bytes matches it and no higher-priority rule")]
pub struct Unreachable {
    /// The rule.
    pub rule: usize,
}

/// The equivalence trace of `rules` (in priority order): for every entry of every rule `per_entry` random frames
/// that hit it, the frames of restore rules laid over `bases` too and each sent twice, then frames no rule
/// matches. Deterministic from `seed`. `Err` names the first rule no frame hits.
pub fn warp_trace(
    rules: &[RuleSpec],
    bases: &[Vec<u8>],
    options: &WarpTraceOptions,
    seed: u64,
) -> Result<Vec<WarpPacket>, Unreachable> {
    let mut rng = Rng::new(seed ^ 0x7761_7270);
    let mut out: Vec<WarpPacket> = Vec::new();
    let bases: Vec<&Vec<u8>> = bases
        .iter()
        .filter(|b| (MIN_FRAME..=MAX_FRAME).contains(&b.len()))
        .take(options.bases)
        .collect();
    for (index, rule) in rules.iter().enumerate() {
        let higher: Vec<&EntrySpec> = rules[..index].iter().flat_map(|r| &r.entries).collect();
        let mut made: Vec<Vec<u8>> = Vec::new();
        for entry in &rule.entries {
            for _ in 0..options.per_entry {
                if let Some(p) = solve(entry, &higher, None, &mut rng) {
                    made.push(p);
                }
            }
            if rule.resumes {
                made.extend(
                    bases
                        .iter()
                        .filter_map(|b| solve(entry, &higher, Some(b), &mut rng)),
                );
            }
        }
        if made.is_empty() {
            return Err(Unreachable { rule: index });
        }
        let mut seen: Vec<Vec<u8>> = Vec::new();
        for p in made {
            if seen.contains(&p) {
                continue;
            }
            let copies = if rule.resumes { 2 } else { 1 };
            for _ in 0..copies {
                out.push(WarpPacket {
                    bytes: p.clone(),
                    rule: Some(index),
                });
            }
            seen.push(p);
        }
    }
    let all: Vec<&EntrySpec> = rules.iter().flat_map(|r| &r.entries).collect();
    let any = EntrySpec::default();
    for _ in 0..options.unmatched {
        if let Some(p) = solve(&any, &all, None, &mut rng) {
            out.push(WarpPacket {
                bytes: p,
                rule: None,
            });
        }
    }
    Ok(out)
}

/// Attempts at one entry, each from a fresh start.
const ATTEMPTS: usize = 24;
/// Bit flips one attempt may make to escape higher-priority entries.
const FLIPS: usize = 96;

/// A frame matching `entry` and none of `higher`: random, or `base` with the entry laid over it.
fn solve(
    entry: &EntrySpec,
    higher: &[&EntrySpec],
    base: Option<&Vec<u8>>,
    rng: &mut Rng,
) -> Option<Vec<u8>> {
    for attempt in 0..ATTEMPTS {
        let start = match base {
            Some(b) if attempt == 0 => (*b).clone(),
            Some(b) => {
                // Later attempts keep the base's length but vary the bytes past its headers.
                let mut p = (*b).clone();
                let keep = p.len().min(64);
                for x in p.iter_mut().skip(keep) {
                    *x = rng.next_u64() as u8;
                }
                p
            }
            None => random_frame(entry, rng),
        };
        let Some(mut p) = lay(entry, start, rng) else {
            continue;
        };
        if escape(entry, higher, &mut p, rng) {
            return Some(p);
        }
    }
    None
}

/// A random frame long enough for the bytes `entry` cares about.
fn random_frame(entry: &EntrySpec, rng: &mut Rng) -> Vec<u8> {
    let need = entry
        .bytes
        .iter()
        .map(|b| b.offset as usize + 1)
        .max()
        .unwrap_or(0)
        .max(MIN_FRAME);
    let hi = (need + 200).min(MAX_FRAME);
    let len = rng.range(need as u32, hi as u32) as usize;
    rng.bytes(len)
}

/// `p` changed to match `entry`: its length (cut, or grown with random bytes) and its bytes; `None` when no length
/// in range satisfies the entry.
fn lay(entry: &EntrySpec, mut p: Vec<u8>, rng: &mut Rng) -> Option<Vec<u8>> {
    if let Some((v, m)) = entry.length {
        let fits = |l: usize| (MIN_FRAME..=MAX_FRAME).contains(&l) && (l as u16) & m == v;
        let mut len = (p.len() as u16 & !m) | v;
        let mut tries = 0;
        while !fits(len as usize) {
            tries += 1;
            if tries > 64 {
                return None;
            }
            let x = rng.range(MIN_FRAME as u32, MAX_FRAME as u32) as u16;
            len = (x & !m) | v;
        }
        let len = len as usize;
        let old = p.len();
        p.resize(len, 0);
        for x in p.iter_mut().skip(old) {
            *x = rng.next_u64() as u8;
        }
    }
    for b in &entry.bytes {
        match p.get_mut(b.offset as usize) {
            Some(x) => *x = (*x & !b.mask) | b.value,
            // Past the end the byte reads as zero: only a zero value matches there.
            None if b.value == 0 => {}
            None => return None,
        }
    }
    entry.matches(&p).then_some(p)
}

/// Flips bits of `p` until no entry of `higher` matches it, keeping `entry` matched; false when it cannot.
fn escape(entry: &EntrySpec, higher: &[&EntrySpec], p: &mut Vec<u8>, rng: &mut Rng) -> bool {
    for _ in 0..FLIPS {
        let Some(h) = higher.iter().find(|h| h.matches(p)) else {
            return true;
        };
        // The bits `h` cares about that `entry` leaves free, inside the frame.
        let mut bits: Vec<(u16, u8)> = Vec::new();
        for b in &h.bytes {
            let free = b.mask & !entry.mask_at(b.offset);
            if (b.offset as usize) < p.len() {
                bits.extend((0..8).filter(|i| free >> i & 1 == 1).map(|i| (b.offset, i)));
            }
        }
        let mut lengths: Vec<usize> = Vec::new();
        if let Some((_, hm)) = h.length {
            let free = hm & !entry.length.map_or(0, |(_, m)| m);
            lengths.extend(
                (0..16)
                    .filter(|i| free >> i & 1 == 1)
                    .map(|i| p.len() ^ (1 << i))
                    .filter(|l| (MIN_FRAME..=MAX_FRAME).contains(l)),
            );
        }
        let choice = rng.below(bits.len() + lengths.len());
        if choice < bits.len() {
            let (offset, bit) = bits[choice];
            p[offset as usize] ^= 1 << bit;
        } else if let Some(&len) = lengths.get(choice - bits.len()) {
            let old = p.len();
            p.resize(len, 0);
            for x in p.iter_mut().skip(old) {
                *x = rng.next_u64() as u8;
            }
            if !entry.matches(p) {
                return false;
            }
        } else {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ethertype(value: u16) -> EntrySpec {
        let [hi, lo] = value.to_be_bytes();
        EntrySpec {
            bytes: vec![
                ByteMatch {
                    offset: 12,
                    value: hi,
                    mask: 0xff,
                },
                ByteMatch {
                    offset: 13,
                    value: lo,
                    mask: 0xff,
                },
            ],
            length: None,
        }
    }

    #[test]
    fn every_rule_is_hit_below_a_broader_higher_one_and_unmatched_frames_miss_all() {
        // Rule 0: IPv4 shorter than 34 bytes; rule 1: IPv4; rule 2: ARP.
        let short = EntrySpec {
            length: Some((0, 0xffe0)), // lengths 0-31
            ..ethertype(0x0800)
        };
        let rules = vec![
            RuleSpec {
                entries: vec![short.clone()],
                resumes: false,
            },
            RuleSpec {
                entries: vec![ethertype(0x0800)],
                resumes: true,
            },
            RuleSpec {
                entries: vec![ethertype(0x0806)],
                resumes: false,
            },
        ];
        let base = vec![0u8; 60];
        let trace = warp_trace(&rules, &[base], &WarpTraceOptions::default(), 7).unwrap();
        let first = |p: &[u8]| {
            rules
                .iter()
                .position(|r| r.entries.iter().any(|e| e.matches(p)))
        };
        for p in &trace {
            assert_eq!(first(&p.bytes), p.rule, "{:02x?}", p.bytes);
        }
        for r in 0..3 {
            assert!(trace.iter().any(|p| p.rule == Some(r)), "rule {r} not hit");
        }
        assert!(trace.iter().any(|p| p.rule.is_none()));
        // Rule 1 resumes on the processor: its frames come twice in a row, the base laid over among them.
        let ones: Vec<&WarpPacket> = trace.iter().filter(|p| p.rule == Some(1)).collect();
        assert!(ones.len() >= 2 && ones.len().is_multiple_of(2));
        assert!(ones
            .iter()
            .any(|p| p.bytes.len() == 60 && p.bytes[..12] == [0; 12]));
        assert!(trace.iter().all(|p| p.bytes.len() >= MIN_FRAME));
    }

    #[test]
    fn a_rule_covered_by_a_higher_one_is_reported() {
        let rules = vec![
            RuleSpec {
                entries: vec![ethertype(0x0800)],
                resumes: false,
            },
            RuleSpec {
                entries: vec![ethertype(0x0800)],
                resumes: false,
            },
        ];
        let err = warp_trace(&rules, &[], &WarpTraceOptions::default(), 1).unwrap_err();
        assert_eq!(err, Unreachable { rule: 1 });
    }

    #[test]
    fn a_byte_past_the_end_matches_only_zero() {
        let e = EntrySpec {
            bytes: vec![ByteMatch {
                offset: 40,
                value: 0,
                mask: 0xff,
            }],
            length: Some((20, 0xffff)),
        };
        assert!(e.matches(&[1u8; 20]));
        let mut rng = Rng::new(3);
        let p = solve(&e, &[], None, &mut rng).unwrap();
        assert_eq!(p.len(), 20);
        let nonzero = EntrySpec {
            bytes: vec![ByteMatch {
                offset: 40,
                value: 1,
                mask: 0xff,
            }],
            ..e
        };
        assert!(solve(&nonzero, &[], None, &mut rng).is_none());
    }
}
