//! XDP verdicts.

use std::fmt;

/// What an XDP program decided for a packet (its return value, as `enum xdp_action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// `XDP_ABORTED` (0): also what any fault of the program becomes.
    Aborted,
    /// `XDP_DROP` (1).
    Drop,
    /// `XDP_PASS` (2).
    Pass,
    /// `XDP_TX` (3).
    Tx,
    /// `XDP_REDIRECT` (4).
    Redirect,
    /// Any other return value; a driver treats it as aborted.
    Other(u32),
}

impl Verdict {
    /// The five named verdicts, in `enum xdp_action` order.
    pub const NAMED: [Verdict; 5] = [
        Verdict::Aborted,
        Verdict::Drop,
        Verdict::Pass,
        Verdict::Tx,
        Verdict::Redirect,
    ];

    /// The verdict for a program's 32-bit return value.
    pub fn from_retval(retval: u32) -> Self {
        match retval {
            0 => Verdict::Aborted,
            1 => Verdict::Drop,
            2 => Verdict::Pass,
            3 => Verdict::Tx,
            4 => Verdict::Redirect,
            other => Verdict::Other(other),
        }
    }

    /// The return value this verdict stands for.
    pub fn retval(self) -> u32 {
        match self {
            Verdict::Aborted => 0,
            Verdict::Drop => 1,
            Verdict::Pass => 2,
            Verdict::Tx => 3,
            Verdict::Redirect => 4,
            Verdict::Other(v) => v,
        }
    }

    /// Lower-case name used for output files and JSON keys (`aborted`, `drop`, `pass`, `tx`, `redirect`); other
    /// return values are grouped with `aborted`, as a driver would.
    pub fn bucket(self) -> &'static str {
        match self {
            Verdict::Aborted | Verdict::Other(_) => "aborted",
            Verdict::Drop => "drop",
            Verdict::Pass => "pass",
            Verdict::Tx => "tx",
            Verdict::Redirect => "redirect",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Aborted => f.write_str("XDP_ABORTED"),
            Verdict::Drop => f.write_str("XDP_DROP"),
            Verdict::Pass => f.write_str("XDP_PASS"),
            Verdict::Tx => f.write_str("XDP_TX"),
            Verdict::Redirect => f.write_str("XDP_REDIRECT"),
            Verdict::Other(v) => write!(f, "return value {v}"),
        }
    }
}
