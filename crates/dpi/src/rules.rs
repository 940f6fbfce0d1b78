//! The rule model both syntaxes parse into: where to look, what to look for, what to do.

/// What a matching rule does to the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `XDP_DROP` (our `drop`, Snort's `drop`).
    Drop,
    /// `XDP_PASS`, deciding: later drop rules no longer apply (our `pass`, Snort's `pass`).
    Pass,
    /// Count and keep looking (our `count`, Snort's `alert`).
    Count,
}

impl Action {
    /// The keyword of our format.
    pub fn keyword(self) -> &'static str {
        match self {
            Action::Drop => "drop",
            Action::Pass => "pass",
            Action::Count => "count",
        }
    }
}

/// The transport protocol whose payload a rule inspects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Proto {
    /// TCP over IPv4 or IPv6.
    Tcp,
    /// UDP over IPv4 or IPv6.
    Udp,
}

impl Proto {
    /// `tcp` or `udp`.
    pub fn keyword(self) -> &'static str {
        match self {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
        }
    }

    /// The IP protocol number.
    pub fn number(self) -> u8 {
        match self {
            Proto::Tcp => 6,
            Proto::Udp => 17,
        }
    }
}

/// Which bytes of the payload a rule's patterns are matched against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The whole transport payload (up to the scan limit).
    Payload,
    /// The first line of the payload, up to its first `\r` or `\n`.
    RequestLine,
    /// The value of every header line `NAME:` (name compared ASCII case-insensitively): the bytes after the colon up
    /// to the line's first `\r` or `\n`. A header line is a line that starts at the payload's start or after a `\n`.
    Header(String),
}

/// One pattern of a rule: every pattern of a rule must occur for the rule to match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// A regular expression over bytes (regex crate syntax, Unicode off).
    Regex(String),
    /// A literal byte string, optionally ASCII case-insensitive.
    Content {
        /// The bytes.
        bytes: Vec<u8>,
        /// ASCII letters match either case.
        nocase: bool,
    },
}

impl Pattern {
    /// The pattern as a regular expression in the regex crate's syntax (for messages and the tests' reference).
    pub fn to_regex(&self) -> String {
        match self {
            Pattern::Regex(re) => re.clone(),
            Pattern::Content { bytes, nocase } => {
                let mut out = String::from(if *nocase { "(?i-u)" } else { "(?-u)" });
                for &b in bytes {
                    if b.is_ascii_alphanumeric() {
                        out.push(b as char);
                    } else {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                out
            }
        }
    }
}

/// One rule, whichever syntax it was written in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Its line in the rules file, from 1.
    pub line: usize,
    /// A name for reports: our `name`, Snort's `msg` (or `sid:N`), else `line N`.
    pub name: String,
    /// Snort's `sid`, when given.
    pub sid: Option<u32>,
    /// What a match does.
    pub action: Action,
    /// The transport protocol.
    pub proto: Proto,
    /// The destination port, or any.
    pub dport: Option<u16>,
    /// Where in the payload to look.
    pub scope: Scope,
    /// What to look for: all must occur.
    pub patterns: Vec<Pattern>,
}
