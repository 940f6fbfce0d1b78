//! Snort's content positions as regular expressions. `offset:O; depth:D` put a content's start at byte O or later of
//! the payload and its end within the D bytes from O: `^(?s-u:.){O,O+D-N}C` for a content of N bytes (`{O,}` without
//! depth). `distance:X; within:W` put a content's start X bytes or more after the end of the content before it and
//! its end within W bytes from there: `P(?s-u:.){X,X+W-N}C`, with P the previous content's expression, so a chain of
//! relative contents is one pattern. As Snort retries a relative match after each occurrence of the content before
//! it, the chain matches when any occurrence of the first content is followed by the others at their distances.
//! What cannot be compiled (a relative content after a pcre or first in the rule, absolute and relative positions on
//! one content, negative values, a window smaller than the content) is refused naming the line and the keyword.

use crate::error::DpiError;
use crate::rules::Pattern;
use crate::snort::unsupported;

/// A content option and its position modifiers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Content {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// `nocase`.
    pub nocase: bool,
    /// `offset`.
    pub offset: Option<i64>,
    /// `depth`.
    pub depth: Option<i64>,
    /// `distance`.
    pub distance: Option<i64>,
    /// `within`.
    pub within: Option<i64>,
}

impl Content {
    /// A content without modifiers.
    pub fn new(bytes: Vec<u8>) -> Content {
        Content {
            bytes,
            nocase: false,
            offset: None,
            depth: None,
            distance: None,
            within: None,
        }
    }

    fn relative(&self) -> bool {
        self.distance.is_some() || self.within.is_some()
    }

    fn absolute(&self) -> bool {
        self.offset.is_some() || self.depth.is_some()
    }

    /// The content's bytes as an expression.
    fn regex(&self) -> String {
        let mut out = String::from(if self.nocase { "(?i-u:" } else { "(?-u:" });
        for &b in &self.bytes {
            if b.is_ascii_alphanumeric() {
                out.push(b as char);
            } else {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out.push(')');
        out
    }
}

/// One pattern option of a Snort rule, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// `content` and its modifiers.
    Content(Content),
    /// `pcre`.
    Pcre(Pattern),
}

/// A run of contents linked by relative positions: its expression, and whether its first content went into the
/// patterns as a plain content (to be replaced when a relative content joins it).
struct Chain {
    re: String,
    plain: bool,
    extended: bool,
}

/// The rule's patterns: each content (with the relative contents after it) and each pcre.
pub(crate) fn patterns(line: usize, items: Vec<Item>) -> Result<Vec<Pattern>, DpiError> {
    let mut out: Vec<Pattern> = Vec::new();
    let mut chain: Option<Chain> = None;
    for item in items {
        match item {
            Item::Pcre(p) => {
                flush(&mut out, chain.take());
                out.push(p);
            }
            Item::Content(c) if c.relative() => {
                if c.absolute() {
                    let key = if c.offset.is_some() {
                        "offset"
                    } else {
                        "depth"
                    };
                    return Err(unsupported(
                        line,
                        key,
                        "a content with distance or within takes no offset or depth",
                    ));
                }
                let Some(mut run) = chain.take() else {
                    let key = if c.distance.is_some() {
                        "distance"
                    } else {
                        "within"
                    };
                    return Err(unsupported(
                        line,
                        key,
                        "a relative position is compiled after a content only (not first in the rule, not after a pcre)",
                    ));
                };
                let gap = window(line, &c, c.distance, c.within, ("distance", "within"))?;
                run.re = format!("{}{gap}{}", run.re, c.regex());
                run.extended = true;
                chain = Some(run);
            }
            Item::Content(c) => {
                flush(&mut out, chain.take());
                if c.absolute() {
                    let lead = window(line, &c, c.offset, c.depth, ("offset", "depth"))?;
                    chain = Some(Chain {
                        re: format!("^{lead}{}", c.regex()),
                        plain: false,
                        extended: true,
                    });
                } else {
                    chain = Some(Chain {
                        re: c.regex(),
                        plain: true,
                        extended: false,
                    });
                    out.push(Pattern::Content {
                        bytes: c.bytes,
                        nocase: c.nocase,
                    });
                }
            }
        }
    }
    flush(&mut out, chain);
    Ok(out)
}

/// Ends a chain: one with positions replaces its first content's plain pattern (the last one pushed) by its own.
fn flush(out: &mut Vec<Pattern>, chain: Option<Chain>) {
    if let Some(run) = chain.filter(|r| r.extended) {
        if run.plain {
            out.pop();
        }
        out.push(Pattern::Regex(run.re));
    }
}

/// The bytes before a content: `start` or more, and the content's end within `size` bytes of `start`.
fn window(
    line: usize,
    c: &Content,
    start: Option<i64>,
    size: Option<i64>,
    keys: (&str, &str),
) -> Result<String, DpiError> {
    let from = start.unwrap_or(0);
    if from < 0 {
        return Err(unsupported(
            line,
            keys.0,
            "a negative value is not compiled",
        ));
    }
    let any = "(?s-u:.)";
    match size {
        None if from == 0 => Ok(format!("{any}*")),
        None => Ok(format!("{any}{{{from},}}")),
        Some(w) => {
            let n = c.bytes.len() as i64;
            if w < n {
                return Err(unsupported(
                    line,
                    keys.1,
                    &format!("{w} bytes cannot hold the content's {n}"),
                ));
            }
            Ok(format!("{any}{{{from},{}}}", from + w - n))
        }
    }
}
