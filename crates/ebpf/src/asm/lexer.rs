//! Splits one line of assembly into tokens.

/// One token of an instruction line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tok<'a> {
    /// `rN` (wide) or `wN`, N at most 10.
    Reg { wide: bool, n: u8 },
    /// An integer literal, with its sign when the sign is unary (`-4` in `r2 += -4`, not in `(r1 - 4)`).
    Num(i128),
    /// A name: mnemonic, type, label.
    Ident(&'a str),
    /// An operator or punctuation.
    Punct(&'a str),
}

/// Why a line does not split into tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LexError {
    /// A character that starts no token.
    Char(char),
    /// A malformed or too long number.
    Number(String),
    /// `r11` and the like.
    Register(String),
}

/// Longest first, so that `s>>=` wins over `s>` and `<<=` over `<`.
const PUNCTS: [&str; 34] = [
    "s>>=", "<<=", ">>=", "s>=", "s<=", "s/=", "s%=", "s>", "s<", "+=", "-=", "*=", "/=", "|=",
    "&=", "%=", "^=", "==", "!=", ">=", "<=", "=", ">", "<", "&", "(", ")", "*", "[", "]", ",",
    "+", "-", ":",
];

/// Tokenizes `text` (already stripped of comments).
pub(crate) fn lex(text: &str) -> Result<Vec<Tok<'_>>, LexError> {
    let mut toks = Vec::new();
    let mut rest = text.trim_start();
    while let Some(c) = rest.chars().next() {
        let (tok, len) =
            if c.is_ascii_digit() || (is_sign(c) && sign_is_unary(&toks) && starts_number(rest)) {
                number(rest)?
            } else if let Some(p) = PUNCTS.iter().find(|p| rest.starts_with(**p)) {
                (Tok::Punct(p), p.len())
            } else if c.is_ascii_alphabetic() || c == '_' || c == '.' {
                let len = rest
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
                    .unwrap_or(rest.len());
                (word(&rest[..len])?, len)
            } else {
                return Err(LexError::Char(c));
            };
        toks.push(tok);
        rest = rest[len..].trim_start();
    }
    Ok(toks)
}

fn is_sign(c: char) -> bool {
    c == '-' || c == '+'
}

fn starts_number(text: &str) -> bool {
    text[1..].starts_with(|c: char| c.is_ascii_digit())
}

/// A sign is part of the number unless it follows an operand, where it is a binary operator.
fn sign_is_unary(before: &[Tok<'_>]) -> bool {
    !matches!(
        before.last(),
        Some(Tok::Reg { .. } | Tok::Num(_) | Tok::Punct(")" | "]"))
    )
}

fn number(text: &str) -> Result<(Tok<'static>, usize), LexError> {
    let (negative, digits_at) = match text.as_bytes().first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let body = &text[digits_at..];
    let len = body
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(body.len());
    let literal = &body[..len];
    let parsed = match literal
        .strip_prefix("0x")
        .or_else(|| literal.strip_prefix("0X"))
    {
        Some(hex) => u128::from_str_radix(hex, 16),
        None => literal.parse::<u128>(),
    };
    let magnitude = parsed
        .ok()
        .filter(|m| *m <= u64::MAX as u128)
        .ok_or_else(|| LexError::Number(text[..digits_at + len].to_string()))?;
    let value = if negative {
        -(magnitude as i128)
    } else {
        magnitude as i128
    };
    Ok((Tok::Num(value), digits_at + len))
}

fn word(w: &str) -> Result<Tok<'_>, LexError> {
    let mut chars = w.chars();
    let wide = match chars.next() {
        Some('r') => true,
        Some('w') => false,
        _ => return Ok(Tok::Ident(w)),
    };
    let digits = chars.as_str();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Tok::Ident(w));
    }
    match digits.parse::<u8>() {
        Ok(n) if n <= 10 => Ok(Tok::Reg { wide, n }),
        _ => Err(LexError::Register(w.to_string())),
    }
}
