//! From the walk's rules to the engine's configuration: TCAM entries (the cross product of each rule's
//! conditions), the key extractors that build the key from the chunk and the length, and each entry in key space.

use crate::sym::KeyBit;
use crate::ternary::{both, Pattern};
use crate::walk::RawRule;
use crate::Params;
use serde::Serialize;
use std::collections::BTreeMap;

/// Where a key extractor reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeySource {
    /// Bytes of the chunk from this offset.
    Chunk(u16),
    /// Bytes of the packet length (16 bits, most significant byte first) from this one (0 or 1).
    Length(u16),
}

/// One key extractor stage: `width` bytes from `source`, ANDed with `mask`, written at `key_offset`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Extractor {
    /// What it reads.
    pub source: KeySource,
    /// Bytes read and written.
    pub width: u16,
    /// The AND mask, one byte per byte read.
    pub mask: Vec<u8>,
    /// Where in the key it writes.
    pub key_offset: u16,
}

/// The key extractors of one program.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KeyLayout {
    /// The stages, in key order.
    pub extractors: Vec<Extractor>,
    /// Bytes of key they fill.
    pub key_bytes: u16,
}

/// One byte the key is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum KeyByte {
    Chunk(u16),
    Length(u16),
}

fn byte_of(bit: KeyBit) -> (KeyByte, u8) {
    match bit {
        KeyBit::Chunk(c) => (KeyByte::Chunk(c / 8), (c % 8) as u8),
        KeyBit::Len(n) => (KeyByte::Length(1 - n as u16 / 8), n % 8),
    }
}

impl KeyLayout {
    /// The extractors for every bit `entries` read: runs of adjacent bytes, at most `read` bytes a stage.
    pub fn build(entries: &[Pattern], read: u16) -> KeyLayout {
        let mut masks: BTreeMap<KeyByte, u8> = BTreeMap::new();
        for bit in entries.iter().flat_map(|p| p.keys()) {
            let (byte, b) = byte_of(*bit);
            *masks.entry(byte).or_insert(0) |= 1 << b;
        }
        let mut extractors: Vec<Extractor> = Vec::new();
        let mut key_offset = 0u16;
        for (&byte, &mask) in &masks {
            let source = match byte {
                KeyByte::Chunk(o) => KeySource::Chunk(o),
                KeyByte::Length(o) => KeySource::Length(o),
            };
            match extractors.last_mut() {
                Some(e) if e.width < read && advance(e.source, e.width) == Some(source) => {
                    e.width += 1;
                    e.mask.push(mask);
                }
                _ => extractors.push(Extractor {
                    source,
                    width: 1,
                    mask: vec![mask],
                    key_offset,
                }),
            }
            key_offset += 1;
        }
        KeyLayout {
            extractors,
            key_bytes: key_offset,
        }
    }

    /// The key position (byte, bit) of key bit `bit`, if the layout reads it.
    pub fn position(&self, bit: KeyBit) -> Option<(usize, u8)> {
        let (byte, b) = byte_of(bit);
        let (source, at) = match byte {
            KeyByte::Chunk(o) => (KeySource::Chunk(0), o),
            KeyByte::Length(o) => (KeySource::Length(0), o),
        };
        self.extractors.iter().find_map(|e| {
            let (start, same) = match (e.source, source) {
                (KeySource::Chunk(s), KeySource::Chunk(_)) => (s, true),
                (KeySource::Length(s), KeySource::Length(_)) => (s, true),
                _ => (0, false),
            };
            (same && at >= start && at < start + e.width)
                .then(|| ((e.key_offset + at - start) as usize, b))
        })
    }

    /// The key of a packet: `chunk` is its first bytes (zero past the end), `len` its length.
    pub fn key(&self, chunk: &[u8], len: usize) -> Vec<u8> {
        let len = (len.min(crate::state::MAX_LEN as usize) as u16).to_be_bytes();
        let mut key = vec![0u8; self.key_bytes as usize];
        for e in &self.extractors {
            for i in 0..e.width {
                let byte = match e.source {
                    KeySource::Chunk(o) => chunk.get((o + i) as usize).copied().unwrap_or(0),
                    KeySource::Length(o) => len[(o + i) as usize],
                };
                key[(e.key_offset + i) as usize] = byte & e.mask[i as usize];
            }
        }
        key
    }
}

/// The source after `width` bytes of `s`.
fn advance(s: KeySource, width: u16) -> Option<KeySource> {
    Some(match s {
        KeySource::Chunk(o) => KeySource::Chunk(o + width),
        KeySource::Length(o) if o + width < 2 => KeySource::Length(o + width),
        KeySource::Length(_) => return None,
    })
}

/// A TCAM entry in key space: the key matches when `key & mask == value`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KeyEntry {
    /// The care bits' values.
    pub value: Vec<u8>,
    /// The care bits.
    pub mask: Vec<u8>,
}

impl KeyEntry {
    /// `pattern` in `layout`'s key.
    pub fn of(pattern: &Pattern, layout: &KeyLayout) -> KeyEntry {
        let mut value = vec![0u8; layout.key_bytes as usize];
        let mut mask = vec![0u8; layout.key_bytes as usize];
        for (&bit, &v) in pattern {
            if let Some((byte, b)) = layout.position(bit) {
                mask[byte] |= 1 << b;
                if v {
                    value[byte] |= 1 << b;
                }
            }
        }
        KeyEntry { value, mask }
    }

    /// Whether `key` matches.
    pub fn matches(&self, key: &[u8]) -> bool {
        key.iter()
            .zip(&self.mask)
            .zip(&self.value)
            .all(|((k, m), v)| k & m == *v)
    }
}

/// The TCAM entries of one rule: the cross product of its conditions, contradictions left out; `None` beyond `cap`.
pub fn entries(rule: &RawRule, cap: usize) -> Option<Vec<Pattern>> {
    let mut out = vec![Pattern::new()];
    for cond in &rule.conds {
        let mut next = Vec::new();
        for a in &out {
            for b in cond {
                if let Some(p) = both(a, b) {
                    if !next.contains(&p) {
                        next.push(p);
                    }
                }
            }
            if next.len() > cap {
                return None;
            }
        }
        out = next;
    }
    Some(out)
}

/// Whether every packet `p` matches also matches `q` (q's care bits are a subset of p's, with the same values).
fn covers(q: &Pattern, p: &Pattern) -> bool {
    q.iter().all(|(k, v)| p.get(k) == Some(v))
}

/// What one set of rules takes of the engine.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// TCAM entries.
    pub tcam_entries: usize,
    /// Key bytes.
    pub key_bytes: usize,
    /// Key extractor stages.
    pub key_extractors: usize,
}

impl Usage {
    /// The first parameter this usage exceeds, with the usage and the limit.
    pub fn exceeds(&self, params: &Params) -> Option<(&'static str, usize, usize)> {
        let checks = [
            ("tcam-entries", self.tcam_entries, params.tcam_entries),
            ("key-bytes", self.key_bytes, params.key_bytes),
            ("key-extractors", self.key_extractors, params.key_extractors),
        ];
        checks
            .into_iter()
            .find(|(_, used, limit)| *used > *limit as usize)
            .map(|(n, u, l)| (n, u, l as usize))
    }
}

/// The entries of every rule and what they take; `None` when they exceed `cap` entries in all.
///
/// An entry that a higher-priority entry already covers (one whose care bits are a subset of its own) can never
/// match and is left out; a rule left without entries is dropped by the caller.
pub fn usage(rules: &[RawRule], params: &Params, cap: usize) -> Option<(Vec<Vec<Pattern>>, Usage)> {
    let mut all: Vec<Vec<Pattern>> = Vec::new();
    let mut total = 0usize;
    for r in rules {
        let mut e = entries(r, cap.saturating_sub(total))?;
        e.retain(|p| !all.iter().flatten().any(|q| covers(q, p)));
        total += e.len();
        all.push(e);
    }
    let flat: Vec<Pattern> = all.iter().flatten().cloned().collect();
    let layout = KeyLayout::build(&flat, params.key_read.max(1));
    Some((
        all,
        Usage {
            tcam_entries: total,
            key_bytes: layout.key_bytes as usize,
            key_extractors: layout.extractors.len(),
        },
    ))
}
