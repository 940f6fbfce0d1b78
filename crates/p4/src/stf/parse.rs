//! The STF grammar, one command per line: `packet`, `expect`, `add`, `setdefault`, `check_counter`, `wait`; `#` starts
//! a comment; blank lines are skipped; command words are case-insensitive.

use super::{ActionCall, CmpOp, Command, CountKind, KeyValue, Pattern, Script, StfError};

/// Parses a script; `file` names it in errors (`test.stf:7: ...`).
pub fn parse(file: &str, text: &str) -> Result<Script, StfError> {
    let mut script = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let (word, rest) = split_word(content);
        let command = parse_command(&word.to_ascii_lowercase(), rest)
            .map_err(|m| StfError::new(file, line, m))?;
        script.push((line, command));
    }
    Ok(script)
}

fn parse_command(word: &str, rest: &str) -> Result<Command, String> {
    match word {
        "packet" => {
            let (port, data) = port_and_rest(rest)?;
            let pattern = parse_hex(data)?;
            if pattern.exact || pattern.nibbles.iter().any(Option::is_none) {
                return Err("packet data cannot have `*` or `$`".into());
            }
            if pattern.nibbles.is_empty() {
                return Err("packet has no data".into());
            }
            if pattern.nibbles.len() % 2 == 1 {
                return Err("packet data has an odd number of hex digits".into());
            }
            let data = pattern
                .nibbles
                .chunks(2)
                .map(|c| (c[0].unwrap_or(0) << 4) | c[1].unwrap_or(0))
                .collect();
            Ok(Command::Packet { port, data })
        }
        "expect" => {
            let (port, data) = port_and_rest(rest)?;
            let pattern = if data.is_empty() {
                None
            } else {
                Some(parse_hex(data)?)
            };
            Ok(Command::Expect { port, pattern })
        }
        "add" => parse_add(rest),
        "setdefault" => {
            let (table, rest) = split_word(rest);
            if table.is_empty() {
                return Err("setdefault needs a table and an action".into());
            }
            let (action, tail) = parse_action(rest)?;
            if !tail.is_empty() {
                return Err(format!("unexpected `{tail}` after the action"));
            }
            Ok(Command::SetDefault {
                table: table.to_string(),
                action,
            })
        }
        "check_counter" => parse_check_counter(rest),
        "wait" if rest.is_empty() => Ok(Command::Wait),
        "wait" => Err(format!("unexpected `{rest}` after wait")),
        _ => Err(format!("unknown command `{word}`")),
    }
}

/// The first whitespace-separated word and the trimmed rest.
fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim();
    match text.find(char::is_whitespace) {
        Some(i) => (&text[..i], text[i..].trim()),
        None => (text, ""),
    }
}

fn port_and_rest(rest: &str) -> Result<(u32, &str), String> {
    let (port, data) = split_word(rest);
    if port.is_empty() {
        return Err("missing port".into());
    }
    let port = port
        .parse::<u32>()
        .map_err(|_| format!("bad port `{port}`: expected a decimal number"))?;
    Ok((port, data))
}

/// Hex nibbles with optional spaces between them, `*` wildcards and a trailing `$`.
fn parse_hex(data: &str) -> Result<Pattern, String> {
    let mut nibbles = Vec::new();
    let mut exact = false;
    for c in data.chars() {
        if exact && !c.is_whitespace() {
            return Err("`$` must come last".into());
        }
        match c {
            c if c.is_whitespace() => {}
            '$' => exact = true,
            '*' => nibbles.push(None),
            c => match c.to_digit(16) {
                Some(d) => nibbles.push(Some(d as u8)),
                None => return Err(format!("invalid character `{c}` in packet data")),
            },
        }
    }
    Ok(Pattern { nibbles, exact })
}

/// Removes whitespace around `:`, `/` and `&&&` so that `key : 1 / 8` reads as `key:1/8`.
fn glue(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            let next = chars.peek().copied();
            let prev = out.chars().last();
            if matches!(next, Some(':' | '/' | '&')) || matches!(prev, Some(':' | '/' | '&')) {
                continue;
            }
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

fn parse_add(rest: &str) -> Result<Command, String> {
    // Without `(` there is no action: the element of a value set.
    let (action, name_start) = match rest.find('(') {
        None => (None, rest.len()),
        Some(open) => {
            let head = &rest[..open];
            // The action name is the last word before `(`.
            // Past the whitespace character itself, which may take several bytes (U+00A0 takes two).
            let name_start = head
                .trim_end()
                .char_indices()
                .rev()
                .find(|(_, c)| c.is_whitespace())
                .map_or(0, |(i, c)| i + c.len_utf8());
            let (action, tail) = parse_action(&rest[name_start..])?;
            if tail.starts_with('=') {
                return Err("entry handles (`= NAME`) are not supported".into());
            }
            if !tail.is_empty() {
                return Err(format!("unexpected `{tail}` after the action"));
            }
            (Some(action), name_start)
        }
    };
    let head = glue(&rest[..name_start]);
    let mut words = head.split_whitespace();
    let table = words.next().ok_or("add needs a table")?.to_string();
    let mut priority = None;
    let mut keys = Vec::new();
    for (i, word) in words.enumerate() {
        if i == 0 && word.bytes().all(|b| b.is_ascii_digit()) {
            let p = word
                .parse::<u32>()
                .map_err(|_| format!("priority `{word}` is too large"))?;
            priority = Some(p);
            continue;
        }
        let (name, value) = word.split_once(':').ok_or_else(|| match action {
            // A word that is no key in an `add` without `(`: an action without its parentheses.
            None => "add needs an action with arguments in parentheses, `act(...)`".to_string(),
            Some(_) => format!("expected `key:VALUE`, found `{word}`"),
        })?;
        if name.is_empty() {
            return Err(format!("missing key name in `{word}`"));
        }
        keys.push((name.to_string(), parse_key_value(value)?));
    }
    Ok(Command::Add {
        table,
        priority,
        keys,
        action,
    })
}

/// `name(arg:VALUE, ...)` at the start of `text`; returns it and the trimmed text after `)`.
fn parse_action(text: &str) -> Result<(ActionCall, &str), String> {
    let open = text
        .find('(')
        .ok_or("expected an action with arguments in parentheses, `act(...)`")?;
    let close = text[open..]
        .find(')')
        .map(|i| open + i)
        .ok_or("missing `)` after the action's arguments")?;
    let name = text[..open].trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("bad action name `{name}`"));
    }
    let inner = glue(&text[open + 1..close]);
    let mut args = Vec::new();
    if !inner.trim().is_empty() {
        for arg in inner.split(',') {
            let arg = arg.trim();
            let (k, v) = arg.split_once(':').ok_or_else(|| {
                format!("expected `name:VALUE` as an action argument, found `{arg}`")
            })?;
            let (value, dont_care) = parse_number(v)?;
            if dont_care != 0 {
                return Err(format!("action argument `{k}` cannot have `*` digits"));
            }
            args.push((k.to_string(), value));
        }
    }
    let action = ActionCall {
        name: name.to_string(),
        args,
    };
    Ok((action, text[close + 1..].trim()))
}

fn parse_key_value(text: &str) -> Result<KeyValue, String> {
    if let Some((v, m)) = text.split_once("&&&") {
        let (value, dv) = parse_number(v)?;
        let (mask, dm) = parse_number(m)?;
        if dv != 0 || dm != 0 {
            return Err(format!(
                "`{text}`: `*` digits cannot be combined with `&&&`"
            ));
        }
        return Ok(KeyValue::Masked { value, mask });
    }
    if let Some((v, l)) = text.split_once('/') {
        let (value, dv) = parse_number(v)?;
        let (len, dl) = parse_number(l)?;
        if dv != 0 || dl != 0 || len > 128 {
            return Err(format!("`{text}`: bad prefix"));
        }
        return Ok(KeyValue::Prefix {
            value,
            len: len as u32,
        });
    }
    let (value, dont_care) = parse_number(text)?;
    Ok(KeyValue::Value { value, dont_care })
}

/// A decimal, `0x` (hex digits or `*`) or `0b` (binary digits or `*`) number: its value and its wildcard bits.
fn parse_number(text: &str) -> Result<(u128, u128), String> {
    let bad = || format!("bad number `{text}`");
    let too_big = || format!("number `{text}` does not fit in 128 bits");
    let (digits, radix) = match text.get(..2) {
        Some("0x" | "0X") => (&text[2..], 16u32),
        Some("0b" | "0B") => (&text[2..], 2),
        _ => (text, 10),
    };
    if digits.is_empty() {
        return Err(bad());
    }
    let bits = radix.trailing_zeros();
    let (mut value, mut dont_care) = (0u128, 0u128);
    for c in digits.chars() {
        let (digit, wild) = match c {
            '*' if radix != 10 => (0, (1u128 << bits) - 1),
            '_' => continue,
            c => (c.to_digit(radix).ok_or_else(bad)? as u128, 0),
        };
        if radix == 10 {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(digit))
                .ok_or_else(too_big)?;
        } else {
            if value >> (128 - bits) != 0 || dont_care >> (128 - bits) != 0 {
                return Err(too_big());
            }
            value = (value << bits) | digit;
            dont_care = (dont_care << bits) | wild;
        }
    }
    Ok((value, dont_care))
}

fn parse_check_counter(rest: &str) -> Result<Command, String> {
    let usage = "expected `check_counter NAME(INDEX) [packets|bytes] OP NUMBER`";
    let open = rest.find('(').ok_or(usage)?;
    let close = rest.find(')').filter(|&c| c > open).ok_or(usage)?;
    let counter = rest[..open].trim();
    if counter.is_empty() || counter.contains(char::is_whitespace) {
        return Err(usage.into());
    }
    let index_text = rest[open + 1..close].trim();
    let (index, wild) = parse_number(index_text).map_err(|_| {
        format!("bad counter index `{index_text}` (entry handles are not supported)")
    })?;
    let index = u32::try_from(index)
        .ok()
        .filter(|_| wild == 0)
        .ok_or_else(|| format!("bad counter index `{index_text}`"))?;
    let mut tail = rest[close + 1..].trim();
    let mut kind = None;
    for (word, k) in [("packets", CountKind::Packets), ("bytes", CountKind::Bytes)] {
        // `get`: the word's length may end inside a multi-byte character of the text.
        if tail
            .get(..word.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(word))
        {
            kind = Some(k);
            tail = tail[word.len()..].trim_start();
        }
    }
    let ops = [
        ("==", CmpOp::Eq),
        ("!=", CmpOp::Ne),
        ("<=", CmpOp::Le),
        (">=", CmpOp::Ge),
        ("<", CmpOp::Lt),
        (">", CmpOp::Gt),
    ];
    let (symbol, op) = ops
        .into_iter()
        .find(|(s, _)| tail.starts_with(s))
        .ok_or_else(|| format!("{usage}: missing comparison"))?;
    let number = tail[symbol.len()..].trim();
    let (value, wild) = parse_number(number)?;
    let value = u64::try_from(value)
        .ok()
        .filter(|_| wild == 0)
        .ok_or_else(|| format!("bad count `{number}`"))?;
    Ok(Command::CheckCounter {
        counter: counter.to_string(),
        index,
        kind,
        op,
        value,
    })
}
