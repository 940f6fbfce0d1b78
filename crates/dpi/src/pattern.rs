//! Patterns to regex-syntax `Hir`: parsing (bytes, Unicode off), the checks of what a DFA scan can answer, and the
//! wrapping that confines a pattern to its scope (the request line, a header value).

use crate::error::DpiError;
use crate::rules::{Pattern, Rule, Scope};
use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
    Look, Repetition,
};
use regex_syntax::ParserBuilder;

/// The expression the DFA runs for `pattern` of `rule`: the pattern, checked, inside its scope.
pub fn scoped_hir(rule: &Rule, pattern: &Pattern) -> Result<Hir, DpiError> {
    let hir = parse(rule.line, pattern)?;
    let refuse = |reason: &str| DpiError::Pattern {
        line: rule.line,
        pattern: excerpt(&pattern.to_regex()),
        reason: reason.to_string(),
    };
    if hir.properties().minimum_len() == Some(0) {
        return Err(refuse(
            "it matches the empty string, so every packet would match",
        ));
    }
    let looks = hir.properties().look_set();
    match &rule.scope {
        Scope::Payload => {
            if !looks.remove(Look::Start).is_empty() {
                return Err(refuse(
                    "only the `^` anchor (start of the payload) is compiled: `$`, `\\b`, `\\B` and multi-line anchors are not",
                ));
            }
            Ok(hir)
        }
        Scope::RequestLine | Scope::Header(_) => {
            if !looks.is_empty() {
                return Err(refuse("anchors and word boundaries are not compiled in a request-line or header scope"));
            }
            Ok(within_scope(&rule.scope, within_line(&hir)))
        }
    }
}

/// Parses a pattern as the regex crate does for `regex::bytes` with Unicode off.
fn parse(line: usize, pattern: &Pattern) -> Result<Hir, DpiError> {
    let text = pattern.to_regex();
    ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(&text)
        .map_err(|e| DpiError::Pattern {
            line,
            pattern: excerpt(&text),
            reason: first_line(&e.to_string()),
        })
}

/// The most characters of a pattern an error quotes.
const EXCERPT_CHARS: usize = 80;

/// `pattern` as an error quotes it: whole up to [`EXCERPT_CHARS`] characters, else its start and its length (a
/// refused pattern may be a megabyte long).
fn excerpt(pattern: &str) -> String {
    let count = pattern.chars().count();
    if count <= EXCERPT_CHARS {
        return pattern.to_string();
    }
    let head: String = pattern.chars().take(EXCERPT_CHARS).collect();
    format!("{head}... ({count} characters)")
}

/// regex-syntax's messages draw the pattern over several lines: the last line says what is wrong.
fn first_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .map(|l| l.trim_start_matches("error:").trim().to_string())
        .unwrap_or_else(|| message.lines().next().unwrap_or("").to_string())
}

/// `hir` with `\r` and `\n` taken out of every class and literal, so that a match stays within one line.
fn within_line(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => hir.clone(),
        HirKind::Literal(lit) => {
            if lit.0.iter().any(|b| *b == b'\r' || *b == b'\n') {
                Hir::fail()
            } else {
                hir.clone()
            }
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut class = class.clone();
            class.difference(&line_ends());
            Hir::class(Class::Bytes(class))
        }
        HirKind::Class(Class::Unicode(class)) => {
            let mut class = class.clone();
            class.difference(&ClassUnicode::new([
                ClassUnicodeRange::new('\n', '\n'),
                ClassUnicodeRange::new('\r', '\r'),
            ]));
            Hir::class(Class::Unicode(class))
        }
        HirKind::Repetition(rep) => Hir::repetition(Repetition {
            sub: Box::new(within_line(&rep.sub)),
            ..rep.clone()
        }),
        HirKind::Capture(cap) => Hir::capture(Capture {
            sub: Box::new(within_line(&cap.sub)),
            ..cap.clone()
        }),
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(within_line).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(within_line).collect()),
    }
}

fn line_ends() -> ClassBytes {
    ClassBytes::new([
        ClassBytesRange::new(b'\n', b'\n'),
        ClassBytesRange::new(b'\r', b'\r'),
    ])
}

/// Any byte but `\r` and `\n`, any number of times.
fn rest_of_line() -> Hir {
    let mut class = ClassBytes::new([ClassBytesRange::new(0, 255)]);
    class.difference(&line_ends());
    Hir::repetition(Repetition {
        min: 0,
        max: None,
        greedy: true,
        sub: Box::new(Hir::class(Class::Bytes(class))),
    })
}

/// `pattern` (already confined to a line) placed where `scope` says.
fn within_scope(scope: &Scope, pattern: Hir) -> Hir {
    match scope {
        Scope::Payload => pattern,
        Scope::RequestLine => Hir::concat(vec![Hir::look(Look::Start), rest_of_line(), pattern]),
        Scope::Header(name) => {
            let line_start = Hir::alternation(vec![Hir::look(Look::Start), Hir::literal(*b"\n")]);
            let mut parts = vec![line_start];
            parts.extend(name.bytes().map(ascii_nocase));
            parts.push(Hir::literal(*b":"));
            parts.push(rest_of_line());
            parts.push(pattern);
            Hir::concat(parts)
        }
    }
}

/// One byte, both cases if it is an ASCII letter.
pub(crate) fn ascii_nocase(b: u8) -> Hir {
    if b.is_ascii_alphabetic() {
        let (lo, up) = (b.to_ascii_lowercase(), b.to_ascii_uppercase());
        Hir::class(Class::Bytes(ClassBytes::new([
            ClassBytesRange::new(up, up),
            ClassBytesRange::new(lo, lo),
        ])))
    } else {
        Hir::literal([b])
    }
}
