//! The constant expressions of `#if` and `#elif`, as C's preprocessor reads them: integers (decimal, `0x`, `0b`,
//! octal, with `u`/`l` suffixes), `defined NAME` and `defined(NAME)`, macros replaced by their values, other names 0,
//! and C's operators with C's precedence (`?:`, `||`, `&&`, `|`, `^`, `&`, `==`/`!=`, relations, shifts, `+`/`-`,
//! `*`/`/`/`%`, unary `!`, `~`, `-`, `+`). Arithmetic is on `i128`, wrapping; division by zero is an error.

/// How deep macro values may refer to other macros inside one expression.
const MAX_DEPTH: usize = 32;

/// The value of `text`; `value_of(NAME)` is the text a defined macro stands for, `None` when it is not defined.
pub(crate) fn eval(text: &str, value_of: &dyn Fn(&str) -> Option<String>) -> Result<i128, String> {
    let tokens = expand(text, value_of, 0)?;
    let mut p = Eval {
        tokens,
        at: 0,
        depth: 0,
    };
    let v = p.ternary()?;
    match p.tokens.get(p.at) {
        None => Ok(v),
        Some(t) => Err(format!("unexpected `{}` in `#if` expression", t.text())),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i128),
    Op(&'static str),
}

impl Tok {
    fn text(&self) -> String {
        match self {
            Tok::Num(n) => n.to_string(),
            Tok::Op(o) => (*o).to_string(),
        }
    }
}

const OPS: [&str; 24] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "!", "~", "*", "/", "%", "+", "-",
    "<", ">", "&", "^", "|", "?", ":",
];

/// Tokens of `text` with `defined` resolved and macros replaced (recursively, up to [`MAX_DEPTH`]).
fn expand(
    text: &str,
    value_of: &dyn Fn(&str) -> Option<String>,
    depth: usize,
) -> Result<Vec<Tok>, String> {
    if depth > MAX_DEPTH {
        return Err("macros in `#if` expand without end".into());
    }
    let words = split(text)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if w == "defined" {
            let (name, next) = match (words.get(i).map(String::as_str), words.get(i + 2)) {
                (Some("("), Some(close)) if close == ")" => (words.get(i + 1), i + 3),
                (Some("("), _) => return Err("`defined(` needs a name and `)`".into()),
                (Some(_), _) => (words.get(i), i + 1),
                (None, _) => return Err("`defined` needs a macro name".into()),
            };
            let name = name
                .filter(|n| is_name(n))
                .ok_or("`defined` needs a macro name")?;
            out.push(Tok::Num(i128::from(value_of(name).is_some())));
            i = next;
        } else if is_name(w) {
            match value_of(w) {
                Some(value) => out.extend(expand(&value, value_of, depth + 1)?),
                None => out.push(Tok::Num(0)),
            }
            if out.len() > crate::preproc::MAX_TOKENS {
                return Err(format!(
                    "macro `{w}` expands past {} tokens",
                    crate::preproc::MAX_TOKENS
                ));
            }
        } else if let Some(op) = OPS.iter().find(|o| **o == w) {
            out.push(Tok::Op(op));
        } else {
            out.push(Tok::Num(number(w)?));
        }
    }
    Ok(out)
}

fn is_name(w: &str) -> bool {
    w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// Names, numbers and operators of `text`, in order.
fn split(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let word_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let len = if word_len > 0 {
            word_len
        } else if let Some(op) = OPS.iter().find(|o| rest.starts_with(**o)) {
            op.len()
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            return Err(format!("unexpected `{c}` in `#if` expression"));
        };
        out.push(rest[..len].to_string());
        rest = rest[len..].trim_start();
    }
    Ok(out)
}

fn number(w: &str) -> Result<i128, String> {
    let digits = w.trim_end_matches(['u', 'U', 'l', 'L']);
    let lower = digits.to_ascii_lowercase();
    let parsed = if let Some(h) = lower.strip_prefix("0x") {
        i128::from_str_radix(h, 16)
    } else if let Some(b) = lower.strip_prefix("0b") {
        i128::from_str_radix(b, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        i128::from_str_radix(&lower[1..], 8)
    } else {
        lower.parse()
    };
    parsed.map_err(|_| format!("bad number `{w}` in `#if` expression"))
}

struct Eval {
    tokens: Vec<Tok>,
    at: usize,
    /// Parentheses and unary operators open around the current token.
    depth: usize,
}

/// Parentheses and unary operators nested deeper than this are refused (the limit of the P4 front end).
const MAX_NESTING: usize = 128;

/// Binary operators by precedence level, loosest first (below `?:`).
const LEVELS: [&[&str]; 10] = [
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", ">", "<=", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Eval {
    fn eat(&mut self, op: &str) -> bool {
        let found = self.peek_op() == Some(op);
        self.at += usize::from(found);
        found
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    /// A conditional expression; its branches nest (`1 ? 1 ? ... : 0 : 0`), so each counts one level as a
    /// parenthesis does.
    fn ternary(&mut self) -> Result<i128, String> {
        if self.depth >= MAX_NESTING {
            return Err(format!("nesting deeper than {MAX_NESTING} levels"));
        }
        self.depth += 1;
        let v = self.conditional();
        self.depth -= 1;
        v
    }

    fn conditional(&mut self) -> Result<i128, String> {
        let cond = self.binary(0)?;
        if self.peek_op() != Some("?") {
            return Ok(cond);
        }
        self.at += 1;
        let then = self.ternary()?;
        if self.peek_op() != Some(":") {
            return Err("`?` without `:` in `#if` expression".into());
        }
        self.at += 1;
        let els = self.ternary()?;
        Ok(if cond != 0 { then } else { els })
    }

    fn binary(&mut self, level: usize) -> Result<i128, String> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        while let Some(op) = self.peek_op().filter(|o| LEVELS[level].contains(o)) {
            self.at += 1;
            let rhs = self.binary(level + 1)?;
            lhs = apply(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<i128, String> {
        if self.depth >= MAX_NESTING {
            return Err(format!("nesting deeper than {MAX_NESTING} levels"));
        }
        self.depth += 1;
        let v = self.operand();
        self.depth -= 1;
        v
    }

    fn operand(&mut self) -> Result<i128, String> {
        let op = self.peek_op();
        match op {
            Some("!") | Some("~") | Some("-") | Some("+") => {
                self.at += 1;
                let v = self.unary()?;
                Ok(match op {
                    Some("!") => i128::from(v == 0),
                    Some("~") => !v,
                    Some("-") => v.wrapping_neg(),
                    _ => v,
                })
            }
            Some("(") => {
                self.at += 1;
                // `unary` counted this level.
                let v = self.conditional()?;
                if !self.eat(")") {
                    return Err("missing `)` in `#if` expression".into());
                }
                Ok(v)
            }
            _ => match self.tokens.get(self.at) {
                Some(Tok::Num(n)) => {
                    self.at += 1;
                    Ok(*n)
                }
                Some(t) => Err(format!("unexpected `{}` in `#if` expression", t.text())),
                None => Err("`#if` expression ends early".into()),
            },
        }
    }
}

fn apply(op: &str, a: i128, b: i128) -> Result<i128, String> {
    let shift = |b: i128| u32::try_from(b.clamp(0, 127)).unwrap_or(127);
    Ok(match op {
        "||" => i128::from(a != 0 || b != 0),
        "&&" => i128::from(a != 0 && b != 0),
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "==" => i128::from(a == b),
        "!=" => i128::from(a != b),
        "<" => i128::from(a < b),
        ">" => i128::from(a > b),
        "<=" => i128::from(a <= b),
        ">=" => i128::from(a >= b),
        "<<" => a.wrapping_shl(shift(b)),
        ">>" => a.wrapping_shr(shift(b)),
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" | "%" if b == 0 => return Err("division by zero in `#if` expression".into()),
        "/" => a.wrapping_div(b),
        _ => a.wrapping_rem(b),
    })
}

#[cfg(test)]
mod tests {
    use super::eval;

    fn v(text: &str) -> Result<i128, String> {
        eval(text, &|n| match n {
            "TWO" => Some("2".into()),
            "SUM" => Some("TWO + 1".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        })
    }

    #[test]
    fn precedence_macros_and_defined() {
        assert_eq!(v("1 + 2 * 3"), Ok(7));
        assert_eq!(v("(1 + 2) * 3 == 9 && !0"), Ok(1));
        assert_eq!(v("SUM << TWO"), Ok(12));
        assert_eq!(v("defined(TWO) && defined EMPTY && !defined(NOPE)"), Ok(1));
        assert_eq!(v("NOPE ? 5 : 0x10 | 0b1"), Ok(17));
        assert_eq!(v("-1 < 0 && 010 == 8 && 3u % 2"), Ok(1));
        assert_eq!(
            v("1 / 0"),
            Err("division by zero in `#if` expression".into())
        );
        assert_eq!(v("1 +"), Err("`#if` expression ends early".into()));
        assert_eq!(v("(1"), Err("missing `)` in `#if` expression".into()));
        assert_eq!(v("1 2"), Err("unexpected `2` in `#if` expression".into()));
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(v(&deep), Err("nesting deeper than 128 levels".into()));
    }
}
