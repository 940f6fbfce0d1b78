//! The rules file: one rule a line in our format or in the Snort subset, `#` comments and blank lines between.
//!
//! Our format (docs/dpi.md): `ACTION PROTO [dport N] [in SCOPE] PATTERN... [name "TEXT"]`, where ACTION is `drop`,
//! `pass` or `count`, PROTO `tcp` or `udp`, SCOPE `payload`, `request-line` or `header "NAME"`, and PATTERN
//! `regex "RE"`, `content "BYTES"` or `content-nocase "BYTES"`. A line with `->` is a Snort rule (`snort.rs`).

use crate::error::DpiError;
use crate::rules::{Action, Pattern, Proto, Rule, Scope};
use crate::snort;

/// One token of a rule line: a bare word or the raw inside of a double-quoted string (backslashes kept).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Token {
    /// A run of characters without whitespace or quotes.
    Word(String),
    /// The text between two double quotes, escapes not yet decoded.
    Quoted(String),
}

/// Parses a whole rules file.
pub fn parse_rules(text: &str) -> Result<Vec<Rule>, DpiError> {
    let mut rules = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let body = raw.trim();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let rule = if snort::is_snort(body) {
            snort::parse_rule(line, body)?
        } else {
            parse_own(line, body)?
        };
        rules.push(rule);
    }
    if rules.is_empty() {
        return Err(DpiError::Empty);
    }
    Ok(rules)
}

/// Splits a line of our format into words and quoted strings.
pub(crate) fn tokenize(line: usize, text: &str) -> Result<Vec<Token>, DpiError> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            let mut inner = String::new();
            loop {
                match chars.next() {
                    None => return Err(syntax(line, "a string is not closed with `\"`")),
                    Some('"') => break,
                    Some('\\') => {
                        inner.push('\\');
                        inner.extend(chars.next());
                    }
                    Some(other) => inner.push(other),
                }
            }
            tokens.push(Token::Quoted(inner));
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() || c == '"' {
                    break;
                }
                word.push(c);
                chars.next();
            }
            tokens.push(Token::Word(word));
        }
    }
    Ok(tokens)
}

/// A rule of our format.
fn parse_own(line: usize, text: &str) -> Result<Rule, DpiError> {
    let tokens = tokenize(line, text)?;
    let mut it = tokens.into_iter().peekable();
    let action = match word(line, it.next(), "an action")?.as_str() {
        "drop" => Action::Drop,
        "pass" => Action::Pass,
        "count" => Action::Count,
        other => {
            return Err(syntax(
                line,
                &format!("unknown action `{other}` (drop, pass or count)"),
            ))
        }
    };
    let proto = match word(line, it.next(), "a protocol")?.as_str() {
        "tcp" => Proto::Tcp,
        "udp" => Proto::Udp,
        other => {
            return Err(syntax(
                line,
                &format!("unknown protocol `{other}` (tcp or udp)"),
            ))
        }
    };
    let mut rule = Rule {
        line,
        name: format!("line {line}"),
        sid: None,
        action,
        proto,
        dport: None,
        scope: Scope::Payload,
        patterns: Vec::new(),
    };
    while let Some(token) = it.next() {
        let key = match token {
            Token::Word(w) => w,
            Token::Quoted(q) => {
                return Err(syntax(
                    line,
                    &format!("a string \"{q}\" where a keyword belongs"),
                ))
            }
        };
        match key.as_str() {
            "dport" => {
                rule.dport = Some(port(line, &word(line, it.next(), "a port after dport")?)?)
            }
            "in" => rule.scope = scope(line, &mut it)?,
            "regex" => rule.patterns.push(Pattern::Regex(unquote_regex(&quoted(
                line,
                it.next(),
                "regex",
            )?))),
            "content" | "content-nocase" => rule.patterns.push(Pattern::Content {
                bytes: decode_escapes(line, &quoted(line, it.next(), &key)?)?,
                nocase: key == "content-nocase",
            }),
            "name" => rule.name = unquote_regex(&quoted(line, it.next(), "name")?),
            other => return Err(syntax(line, &format!("unknown keyword `{other}`"))),
        }
    }
    if rule.patterns.is_empty() {
        return Err(syntax(
            line,
            "the rule has no pattern (regex \"...\" or content \"...\")",
        ));
    }
    Ok(rule)
}

/// The scope after `in`.
fn scope(
    line: usize,
    it: &mut std::iter::Peekable<std::vec::IntoIter<Token>>,
) -> Result<Scope, DpiError> {
    match word(line, it.next(), "a scope after in")?.as_str() {
        "payload" => Ok(Scope::Payload),
        "request-line" => Ok(Scope::RequestLine),
        "header" => {
            let name = match it.next() {
                Some(Token::Word(w)) | Some(Token::Quoted(w)) => w,
                None => return Err(syntax(line, "a header name after `in header`")),
            };
            header_name(line, &name)
        }
        other => Err(syntax(
            line,
            &format!("unknown scope `{other}` (payload, request-line or header NAME)"),
        )),
    }
}

/// A header field name: an HTTP token (letters, digits, `-` and the like).
pub(crate) fn header_name(line: usize, name: &str) -> Result<Scope, DpiError> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return Err(syntax(
            line,
            &format!("`{name}` is not an HTTP header name"),
        ));
    }
    Ok(Scope::Header(name.to_string()))
}

/// A destination port: 0 to 65535.
pub(crate) fn port(line: usize, text: &str) -> Result<u16, DpiError> {
    text.parse()
        .map_err(|_| syntax(line, &format!("`{text}` is not a port (0 to 65535)")))
}

fn word(line: usize, token: Option<Token>, what: &str) -> Result<String, DpiError> {
    match token {
        Some(Token::Word(w)) => Ok(w),
        Some(Token::Quoted(q)) => Err(syntax(line, &format!("expected {what}, found \"{q}\""))),
        None => Err(syntax(
            line,
            &format!("expected {what} at the end of the line"),
        )),
    }
}

fn quoted(line: usize, token: Option<Token>, after: &str) -> Result<String, DpiError> {
    match token {
        Some(Token::Quoted(q)) => Ok(q),
        Some(Token::Word(w)) => Err(syntax(
            line,
            &format!("`{after}` takes a quoted string, not `{w}`"),
        )),
        None => Err(syntax(line, &format!("`{after}` takes a quoted string"))),
    }
}

/// A regular expression as written between quotes: only `\"` is an escape of ours, the rest is the regex's.
pub(crate) fn unquote_regex(raw: &str) -> String {
    raw.replace("\\\"", "\"")
}

/// Content bytes: the string's UTF-8 with `\\`, `\"`, `\r`, `\n`, `\t`, `\0` and `\xHH` decoded.
pub(crate) fn decode_escapes(line: usize, raw: &str) -> Result<Vec<u8>, DpiError> {
    let mut out = Vec::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next() {
            Some('\\') => out.push(b'\\'),
            Some('"') => out.push(b'"'),
            Some('r') => out.push(b'\r'),
            Some('n') => out.push(b'\n'),
            Some('t') => out.push(b'\t'),
            Some('0') => out.push(0),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                let byte = u8::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 2)
                    .ok_or_else(|| syntax(line, &format!("`\\x{hex}` is not a byte (\\xHH)")))?;
                out.push(byte);
            }
            other => {
                let shown = other.map(String::from).unwrap_or_default();
                return Err(syntax(
                    line,
                    &format!("unknown escape `\\{shown}` in a content string"),
                ));
            }
        }
    }
    if out.is_empty() {
        return Err(syntax(line, "an empty content string"));
    }
    Ok(out)
}

/// A syntax error at `line`.
pub(crate) fn syntax(line: usize, message: &str) -> DpiError {
    DpiError::Syntax {
        line,
        message: message.to_string(),
    }
}
