//! Text to tokens. Keywords are identifiers here; the parser decides where a word is reserved, so member names such as
//! `t.apply` need no special case. `>` is always a single token: the parser joins two adjacent `>` into a shift, which
//! keeps nested type arguments (`T<bit<8>>`) simple.

use crate::diag::{FileId, Span, SpanError};

/// The widest `bit<N>`/`int<N>` the subset supports.
pub const MAX_WIDTH: u32 = 128;

/// An integer literal as written: `8w0x0800`, `16s-1`, `0b101`, `42`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntLit {
    /// The magnitude.
    pub value: u128,
    /// True for a width-prefixed negative literal (`16s-1`).
    pub negative: bool,
    /// The width prefix, if any.
    pub width: Option<u32>,
    /// True for an `s` (signed) width prefix.
    pub signed: bool,
    /// 2, 8, 10 or 16: the base it was written in, kept so that printing shows it the same way.
    pub radix: u32,
}

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// A word: identifier or keyword.
    Ident(String),
    /// An integer literal.
    Int(IntLit),
    /// A string literal, escapes resolved.
    Str(String),
    /// An operator or punctuation, e.g. `&&&`, `{`, `>`.
    Punct(&'static str),
    /// A preprocessor line: the text after `#`, without the line break.
    Directive(String),
    /// End of the token stream.
    Eof,
}

/// A token and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
}

/// Punctuation, longest first so that the first match is the longest.
const PUNCT: &[&str] = &[
    "&&&", "|+|", "|-|", "&&", "||", "==", "!=", "<=", ">=", "<<", "++", "..", "{", "}", "(", ")",
    "[", "]", "<", ">", ";", ":", ",", ".", "=", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!",
    "?", "@",
];

/// Splits `text[start..end]` of `file` into tokens (no `Eof`). Spans are offsets into the whole `text`.
pub fn lex(file: FileId, text: &str, start: usize, end: usize) -> Result<Vec<Token>, SpanError> {
    let mut lx = Lexer {
        file,
        text: text.as_bytes(),
        pos: start,
        end: end.min(text.len()),
        src: text,
    };
    let mut out = Vec::new();
    while let Some(tok) = lx.next_token()? {
        out.push(tok);
    }
    Ok(out)
}

struct Lexer<'a> {
    file: FileId,
    src: &'a str,
    text: &'a [u8],
    pos: usize,
    end: usize,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        let i = self.pos + ahead;
        if i < self.end {
            self.text.get(i).copied()
        } else {
            None
        }
    }

    fn span(&self, lo: usize) -> Span {
        Span::new(self.file, lo as u32, self.pos as u32)
    }

    fn err(&self, lo: usize, message: impl Into<String>) -> SpanError {
        SpanError::new(Span::new(self.file, lo as u32, (lo + 1) as u32), message)
    }

    /// True when only blanks separate `pos` from the start of its line.
    fn at_line_start(&self) -> bool {
        let mut i = self.pos;
        while i > 0 {
            match self.text[i - 1] {
                b' ' | b'\t' | b'\r' => i -= 1,
                b'\n' => return true,
                _ => return false,
            }
        }
        true
    }

    fn skip_blanks_and_comments(&mut self) -> Result<(), SpanError> {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(c), _) if c.is_ascii_whitespace() => self.pos += 1,
                (Some(b'/'), Some(b'/')) => {
                    while self.peek(0).is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let lo = self.pos;
                    self.pos += 2;
                    loop {
                        match (self.peek(0), self.peek(1)) {
                            (Some(b'*'), Some(b'/')) => {
                                self.pos += 2;
                                break;
                            }
                            (Some(_), _) => self.pos += 1,
                            (None, _) => return Err(self.err(lo, "unterminated block comment")),
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn next_token(&mut self) -> Result<Option<Token>, SpanError> {
        self.skip_blanks_and_comments()?;
        let lo = self.pos;
        let Some(c) = self.peek(0) else {
            return Ok(None);
        };
        let kind = if c == b'#' {
            if !self.at_line_start() {
                return Err(self.err(lo, "`#` must start a line"));
            }
            self.directive()
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while self
                .peek(0)
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
            {
                self.pos += 1;
            }
            TokenKind::Ident(self.src[lo..self.pos].to_string())
        } else if c.is_ascii_digit() {
            TokenKind::Int(self.number()?)
        } else if c == b'"' {
            TokenKind::Str(self.string()?)
        } else if let Some(p) = PUNCT
            .iter()
            .find(|p| self.text[lo..self.end].starts_with(p.as_bytes()))
        {
            self.pos += p.len();
            TokenKind::Punct(p)
        } else {
            let ch = self.src[lo..].chars().next().unwrap_or('?');
            return Err(self.err(
                lo,
                format!("unexpected character `{}`", ch.escape_default()),
            ));
        };
        Ok(Some(Token {
            kind,
            span: self.span(lo),
        }))
    }

    fn directive(&mut self) -> TokenKind {
        self.pos += 1;
        let start = self.pos;
        while self.peek(0).is_some_and(|c| c != b'\n') {
            self.pos += 1;
        }
        let line = &self.src[start..self.pos];
        // A trailing line comment is not part of the directive's value.
        let line = line.find("//").map_or(line, |i| &line[..i]);
        TokenKind::Directive(line.trim().to_string())
    }

    fn digits(&mut self) -> &str {
        let lo = self.pos;
        while self
            .peek(0)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.pos += 1;
        }
        &self.src[lo..self.pos]
    }

    fn number(&mut self) -> Result<IntLit, SpanError> {
        let lo = self.pos;
        while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let mut width = None;
        let mut signed = false;
        let mut negative = false;
        let prefix = matches!(self.peek(0), Some(b'w' | b's'))
            && (self.peek(1).is_some_and(|c| c.is_ascii_digit())
                || (self.peek(0) == Some(b's') && self.peek(1) == Some(b'-')));
        if prefix {
            let w: u32 = self.src[lo..self.pos]
                .parse()
                .map_err(|_| self.err(lo, "integer width too large"))?;
            if w > MAX_WIDTH {
                return Err(self.err(lo, format!("integer width {w} exceeds {MAX_WIDTH}")));
            }
            if w == 0 {
                return Err(self.err(lo, "integer width must be positive"));
            }
            signed = self.peek(0) == Some(b's');
            self.pos += 1;
            if self.peek(0) == Some(b'-') {
                negative = true;
                self.pos += 1;
            }
            width = Some(w);
        } else {
            self.pos = lo;
        }
        let body_lo = self.pos;
        let body = self.digits().to_string();
        let (radix, digits) = match body.get(..2) {
            Some("0x" | "0X") => (16, &body[2..]),
            Some("0b" | "0B") => (2, &body[2..]),
            Some("0o" | "0O") => (8, &body[2..]),
            Some("0d" | "0D") => (10, &body[2..]),
            _ => (10, body.as_str()),
        };
        let mut value: u128 = 0;
        let mut seen = false;
        for (i, ch) in digits.char_indices() {
            if ch == '_' {
                continue;
            }
            let d = ch.to_digit(radix).ok_or_else(|| {
                self.err(
                    body_lo + body.len() - digits.len() + i,
                    format!("invalid digit `{ch}` in integer literal"),
                )
            })?;
            value = value
                .checked_mul(radix as u128)
                .and_then(|v| v.checked_add(d as u128))
                .ok_or_else(|| self.err(lo, "integer literal too large"))?;
            seen = true;
        }
        if !seen {
            return Err(self.err(lo, "integer literal has no digits"));
        }
        Ok(IntLit {
            value,
            negative,
            width,
            signed,
            radix,
        })
    }

    fn string(&mut self) -> Result<String, SpanError> {
        let lo = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.src[self.pos..self.end];
            let Some(ch) = rest.chars().next() else {
                return Err(self.err(lo, "unterminated string literal"));
            };
            self.pos += ch.len_utf8();
            match ch {
                '"' => return Ok(out),
                '\n' => return Err(self.err(lo, "unterminated string literal")),
                '\\' => {
                    let Some(esc) = self.src[self.pos..self.end].chars().next() else {
                        return Err(self.err(lo, "unterminated string literal"));
                    };
                    self.pos += esc.len_utf8();
                    out.push(match esc {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '0' => '\0',
                        '\\' | '"' | '\'' => esc,
                        other => {
                            return Err(
                                self.err(self.pos - 2, format!("unknown escape `\\{other}`"))
                            )
                        }
                    });
                }
                other => out.push(other),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<TokenKind> {
        lex(FileId(0), s, 0, s.len())
            .unwrap()
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    fn int(s: &str) -> IntLit {
        match kinds(s).as_slice() {
            [TokenKind::Int(i)] => *i,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn literals_keep_width_sign_and_radix() {
        assert_eq!(
            int("8w0x0800"),
            IntLit {
                value: 0x800,
                negative: false,
                width: Some(8),
                signed: false,
                radix: 16
            }
        );
        assert_eq!(
            int("16s-1"),
            IntLit {
                value: 1,
                negative: true,
                width: Some(16),
                signed: true,
                radix: 10
            }
        );
        assert_eq!(int("0b1010_1010").value, 0xaa);
        assert_eq!(
            int("128w0xffffffffffffffffffffffffffffffff").value,
            u128::MAX
        );
        assert_eq!(int("42").radix, 10);
    }

    #[test]
    fn bad_literals_are_errors() {
        for bad in [
            "0x",
            "0xfg",
            "129w1",
            "0w1",
            "340282366920938463463374607431768211456",
        ] {
            assert!(lex(FileId(0), bad, 0, bad.len()).is_err(), "{bad}");
        }
    }

    #[test]
    fn greater_than_is_never_joined() {
        assert_eq!(
            kinds(">>"),
            vec![TokenKind::Punct(">"), TokenKind::Punct(">")]
        );
        assert_eq!(
            kinds("&&&&"),
            vec![TokenKind::Punct("&&&"), TokenKind::Punct("&")]
        );
    }

    #[test]
    fn directives_only_at_line_start() {
        assert_eq!(
            kinds("  #include <core.p4> // c\nx"),
            vec![
                TokenKind::Directive("include <core.p4>".into()),
                TokenKind::Ident("x".into())
            ]
        );
        assert!(lex(FileId(0), "x #define", 0, 9).is_err());
    }
}
