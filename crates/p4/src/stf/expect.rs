//! Output packets against `expect` lines: per port, expectations in the order written; the n-th packet sent out on a
//! port must match that port's n-th expectation, wherever the `expect` line stands relative to the `packet` lines (as in
//! the P4 tools, which collect a script's expectations before comparing); every expectation must be met and no packet
//! may go out unexpected.

use super::Pattern;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

/// A failed expectation or an unexpected packet, at the line of the `expect` (or of the `packet` that produced an
/// unexpected output), shown as `file:line: message` followed by indented detail lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The script's file name.
    pub file: String,
    /// The line the failure is reported at.
    pub line: usize,
    /// What went wrong, in one line.
    pub message: String,
    /// Expected and received bytes, one per line (may be empty).
    pub detail: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)?;
        for d in &self.detail {
            write!(f, "\n    {d}")?;
        }
        Ok(())
    }
}

impl Pattern {
    /// Whether `data` matches: every nibble equal or wildcarded, the packet at least as long as the pattern, and
    /// exactly as long when the pattern ends with `$`.
    pub fn matches(&self, data: &[u8]) -> bool {
        let have = data.len() * 2;
        if have < self.nibbles.len() || (self.exact && have != self.nibbles.len()) {
            return false;
        }
        self.nibbles
            .iter()
            .enumerate()
            .all(|(i, n)| n.is_none_or(|n| nibble(data, i) == n))
    }

    /// The pattern as hex, `*` for wildcards, bytes separated by spaces, `$` at the end when exact.
    pub fn to_hex(&self) -> String {
        let digits: Vec<char> = self
            .nibbles
            .iter()
            .map(|n| n.map_or('*', |n| char::from_digit(u32::from(n), 16).unwrap_or('?')))
            .collect();
        let mut out = digits
            .chunks(2)
            .map(|c| c.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join(" ");
        if self.exact {
            out.push_str(" $");
        }
        out
    }

    /// Byte offsets where `data` differs from the pattern (a byte missing from `data` differs), at most `limit`.
    pub fn differing_bytes(&self, data: &[u8], limit: usize) -> Vec<usize> {
        let bytes = self.nibbles.len().div_ceil(2);
        (0..bytes)
            .filter(|&b| {
                (2 * b..(2 * b + 2).min(self.nibbles.len())).any(|i| match self.nibbles[i] {
                    None => b >= data.len(),
                    Some(n) => b >= data.len() || nibble(data, i) != n,
                })
            })
            .take(limit)
            .collect()
    }
}

fn nibble(data: &[u8], i: usize) -> u8 {
    let b = data[i / 2];
    if i.is_multiple_of(2) {
        b >> 4
    } else {
        b & 0xf
    }
}

/// Hex of `data`, bytes separated by spaces.
pub(crate) fn hex(data: &[u8]) -> String {
    data.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

struct Expectation {
    line: usize,
    pattern: Option<Pattern>,
}

struct Output {
    packet_line: usize,
    data: Vec<u8>,
}

/// Collects expectations and output packets and reports every mismatch.
pub struct Matcher {
    file: String,
    queues: BTreeMap<u32, VecDeque<Expectation>>,
    outputs: BTreeMap<u32, Vec<Output>>,
    met: usize,
    failures: Vec<Failure>,
}

impl Matcher {
    /// A matcher whose failures name `file`.
    pub fn new(file: &str) -> Matcher {
        Matcher {
            file: file.to_string(),
            queues: BTreeMap::new(),
            outputs: BTreeMap::new(),
            met: 0,
            failures: Vec::new(),
        }
    }

    /// Records `expect PORT [pattern]` of `line`; `None` matches any one packet.
    pub fn expect(&mut self, line: usize, port: u32, pattern: Option<Pattern>) {
        self.queues
            .entry(port)
            .or_default()
            .push_back(Expectation { line, pattern });
    }

    /// A packet went out on `port`, produced by the `packet` command of `packet_line`.
    pub fn output(&mut self, packet_line: usize, port: u32, data: &[u8]) {
        self.outputs.entry(port).or_default().push(Output {
            packet_line,
            data: data.to_vec(),
        });
    }

    /// Matches one output against the port's next expectation.
    fn judge(&mut self, packet_line: usize, port: u32, data: &[u8]) {
        let Some(e) = self.queues.get_mut(&port).and_then(VecDeque::pop_front) else {
            self.failures.push(Failure {
                file: self.file.clone(),
                line: packet_line,
                message: format!(
                    "unexpected packet out on port {port} ({} bytes)",
                    data.len()
                ),
                detail: vec![format!("got:      {}", hex(data))],
            });
            return;
        };
        let Some(pattern) = e.pattern else {
            self.met += 1;
            return;
        };
        if pattern.matches(data) {
            self.met += 1;
            return;
        }
        let offsets: Vec<String> = pattern
            .differing_bytes(data, 16)
            .iter()
            .map(usize::to_string)
            .collect();
        let mut detail = vec![
            format!("expected: {}", pattern.to_hex()),
            format!("got:      {}", hex(data)),
        ];
        let bytes = pattern.nibbles.len().div_ceil(2);
        if !offsets.is_empty() {
            detail.push(format!("differing bytes at offsets {}", offsets.join(", ")));
        }
        if data.len() < bytes || (pattern.exact && data.len() != bytes) {
            detail.push(format!(
                "length: expected {}{bytes}, got {}",
                if pattern.exact { "" } else { "at least " },
                data.len()
            ));
        }
        self.failures.push(Failure {
            file: self.file.clone(),
            line: e.line,
            message: format!("packet out on port {port} (from line {packet_line}) does not match"),
            detail,
        });
    }

    /// Ends the run: expectations never met become failures. Returns how many were met and every failure, ordered
    /// by line.
    pub fn finish(mut self) -> (usize, Vec<Failure>) {
        for (port, outputs) in std::mem::take(&mut self.outputs) {
            for o in outputs {
                self.judge(o.packet_line, port, &o.data);
            }
        }
        for (port, queue) in std::mem::take(&mut self.queues) {
            for e in queue {
                let what = e.pattern.map_or("any packet".to_string(), |p| p.to_hex());
                self.failures.push(Failure {
                    file: self.file.clone(),
                    line: e.line,
                    message: format!("expected packet on port {port} never came"),
                    detail: vec![format!("expected: {what}")],
                });
            }
        }
        self.failures.sort_by_key(|f| f.line);
        (self.met, self.failures)
    }
}
