//! The Snort/Suricata subset: `alert|drop|pass tcp|udp any any -> any PORT|any (OPTIONS)` with the options `msg`,
//! `content` (with `|hex|` bytes), `nocase`, the positions `offset`, `depth`, `distance` and `within`
//! (`positions.rs`), `pcre:"/RE/[ismx]"`, `sid`, and the informational `rev`, `classtype`,
//! `priority`, `reference`, `metadata`, `gid`. Anything else is refused with the keyword it stopped at.

use crate::error::DpiError;
use crate::parse::{port, syntax};
use crate::positions::{Content, Item};
use crate::rules::{Action, Pattern, Proto, Rule, Scope};

/// Whether a rule line is in Snort syntax (it has a direction arrow in its header).
pub(crate) fn is_snort(text: &str) -> bool {
    let header = text.split('(').next().unwrap_or("");
    header.split_whitespace().any(|w| w == "->" || w == "<>")
}

/// Parses one Snort rule.
pub(crate) fn parse_rule(line: usize, text: &str) -> Result<Rule, DpiError> {
    let open = text
        .find('(')
        .ok_or_else(|| syntax(line, "a Snort rule needs its options in `( ... )`"))?;
    let body = text[open + 1..].trim_end();
    let body = body
        .strip_suffix(')')
        .ok_or_else(|| syntax(line, "the rule's options do not end with `)`"))?;
    let (action, proto, dport) = header(line, &text[..open])?;
    let mut rule = Rule {
        line,
        name: format!("line {line}"),
        sid: None,
        action,
        proto,
        dport,
        scope: Scope::Payload,
        patterns: Vec::new(),
    };
    let mut named = false;
    let mut items = Vec::new();
    for option in split_options(line, body)? {
        let (key, value) = match option.split_once(':') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (option.trim(), None),
        };
        if !position(line, &mut items, key, value)? {
            apply_option(line, &mut rule, &mut items, key, value, &mut named)?;
        }
    }
    rule.patterns = crate::positions::patterns(line, items)?;
    if rule.patterns.is_empty() {
        return Err(syntax(line, "the rule has no content or pcre option"));
    }
    if !named {
        if let Some(sid) = rule.sid {
            rule.name = format!("sid:{sid}");
        }
    }
    Ok(rule)
}

/// `ACTION PROTO SRC SPORT -> DST DPORT`.
fn header(line: usize, text: &str) -> Result<(Action, Proto, Option<u16>), DpiError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let [action, proto, src, sport, dir, dst, dport] = words[..] else {
        return Err(syntax(
            line,
            "a Snort header is `ACTION PROTO SRC SPORT -> DST DPORT`",
        ));
    };
    let action = match action {
        "alert" => Action::Count,
        "drop" => Action::Drop,
        "pass" => Action::Pass,
        other => {
            return Err(unsupported(
                line,
                other,
                "the actions are alert, drop and pass",
            ))
        }
    };
    let proto = match proto {
        "tcp" => Proto::Tcp,
        "udp" => Proto::Udp,
        other => return Err(unsupported(line, other, "the protocols are tcp and udp")),
    };
    for (what, value) in [
        ("source address", src),
        ("source port", sport),
        ("destination address", dst),
    ] {
        if value != "any" {
            return Err(unsupported(
                line,
                value,
                &format!("the {what} must be `any`"),
            ));
        }
    }
    if dir != "->" {
        return Err(unsupported(
            line,
            dir,
            "only `->` (to the destination port) is compiled",
        ));
    }
    let dport = match dport {
        "any" => None,
        p if p.bytes().all(|b| b.is_ascii_digit()) => Some(port(line, p)?),
        other => {
            return Err(unsupported(
                line,
                other,
                "the destination port is `any` or one number (no lists, ranges or variables)",
            ))
        }
    };
    Ok((action, proto, dport))
}

/// Splits `k:v; k; ...` at the semicolons outside quotes (`\;` and `\"` stay inside values).
fn split_options(line: usize, body: &str) -> Result<Vec<String>, DpiError> {
    let mut options = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                current.push(c);
                current.extend(chars.next());
            }
            '"' => {
                in_quotes = !in_quotes;
                current.push(c);
            }
            ';' if !in_quotes => {
                options.push(std::mem::take(&mut current));
            }
            _ => current.push(c),
        }
    }
    if in_quotes {
        return Err(syntax(line, "a quoted option value is not closed"));
    }
    if !current.trim().is_empty() {
        return Err(syntax(
            line,
            &format!("the option `{}` does not end with `;`", current.trim()),
        ));
    }
    Ok(options
        .into_iter()
        .filter(|o| !o.trim().is_empty())
        .collect())
}

/// One rule option.
fn apply_option(
    line: usize,
    rule: &mut Rule,
    items: &mut Vec<Item>,
    key: &str,
    value: Option<&str>,
    named: &mut bool,
) -> Result<(), DpiError> {
    match key {
        "msg" => {
            rule.name = unescape(&quoted_value(line, key, value)?);
            *named = true;
        }
        "content" => {
            let raw = value.unwrap_or("");
            if raw.starts_with('!') {
                return Err(unsupported(line, "content:!", "negated content is not compiled"));
            }
            let bytes = content_bytes(line, &quoted_value(line, key, value)?)?;
            items.push(Item::Content(Content::new(bytes)));
        }
        "nocase" => match items.last_mut() {
            Some(Item::Content(c)) => c.nocase = true,
            _ => return Err(syntax(line, "`nocase` must follow a content option")),
        },
        "pcre" => items.push(Item::Pcre(pcre(line, &quoted_value(line, key, value)?)?)),
        "sid" => {
            let text = value.unwrap_or("");
            rule.sid = Some(text.parse().map_err(|_| syntax(line, &format!("sid `{text}` is not a number")))?);
        }
        "rev" | "classtype" | "priority" | "reference" | "metadata" | "gid" => {}
        other => {
            return Err(unsupported(
                line,
                other,
                "the options compiled are msg, content, nocase, offset, depth, distance, within, pcre, sid (and rev, classtype, priority, reference, metadata, gid, which are ignored)",
            ))
        }
    }
    Ok(())
}

/// The inside of a quoted option value, escapes kept.
fn quoted_value(line: usize, key: &str, value: Option<&str>) -> Result<String, DpiError> {
    let v = value.unwrap_or("").trim();
    v.strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .map(String::from)
        .ok_or_else(|| syntax(line, &format!("`{key}` takes a quoted value")))
}

/// Snort's escapes in strings: `\"`, `\;`, `\\` (and `\:`) stand for the character.
fn unescape(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// A content string: text with Snort's escapes, and `|41 42|` runs of hexadecimal bytes.
fn content_bytes(line: usize, raw: &str) -> Result<Vec<u8>, DpiError> {
    let mut out = Vec::new();
    let mut parts = raw.split('|');
    let mut hex = false;
    for part in parts.by_ref() {
        if hex {
            for pair in part.split_whitespace() {
                if pair.len() % 2 != 0 {
                    return Err(syntax(
                        line,
                        &format!("`|{part}|` has an odd number of hex digits"),
                    ));
                }
                for i in (0..pair.len()).step_by(2) {
                    let byte = u8::from_str_radix(&pair[i..i + 2], 16)
                        .map_err(|_| syntax(line, &format!("`{pair}` is not hexadecimal")))?;
                    out.push(byte);
                }
            }
        } else {
            out.extend_from_slice(unescape(part).as_bytes());
        }
        hex = !hex;
    }
    if !hex {
        return Err(syntax(line, "a `|` hex run in the content is not closed"));
    }
    if out.is_empty() {
        return Err(syntax(line, "an empty content string"));
    }
    Ok(out)
}

/// `"/RE/FLAGS"`: the flags `i`, `s` and `x` become inline flags; others are refused.
pub(crate) fn pcre(line: usize, raw: &str) -> Result<Pattern, DpiError> {
    let raw = raw.replace("\\\"", "\"");
    let (body, flags) = raw
        .strip_prefix('/')
        .and_then(|r| r.rfind('/').map(|end| (&r[..end], &r[end + 1..])))
        .ok_or_else(|| syntax(line, "pcre takes \"/REGEX/FLAGS\""))?;
    let mut inline = String::new();
    for flag in flags.chars() {
        match flag {
            'i' | 's' | 'x' => inline.push(flag),
            other => {
                return Err(unsupported(
                    line,
                    &format!("pcre /{other}"),
                    "the pcre flags compiled are i, s and x",
                ))
            }
        }
    }
    let re = if inline.is_empty() {
        body.to_string()
    } else {
        format!("(?{inline}){body}")
    };
    Ok(Pattern::Regex(re))
}

/// `offset`, `depth`, `distance` or `within` (a number of bytes) for the content before it; `false` for any other
/// option.
fn position(
    line: usize,
    items: &mut [Item],
    key: &str,
    value: Option<&str>,
) -> Result<bool, DpiError> {
    if !matches!(key, "offset" | "depth" | "distance" | "within") {
        return Ok(false);
    }
    let Some(Item::Content(content)) = items.last_mut() else {
        return Err(syntax(
            line,
            &format!("`{key}` must follow a content option"),
        ));
    };
    let text = value.unwrap_or("").trim();
    let n: i64 = text.parse().map_err(|_| {
        unsupported(
            line,
            key,
            &format!("`{text}` is not a number of bytes (variables are not compiled)"),
        )
    })?;
    let slot = match key {
        "offset" => &mut content.offset,
        "depth" => &mut content.depth,
        "distance" => &mut content.distance,
        _ => &mut content.within,
    };
    if slot.is_some() {
        return Err(syntax(line, &format!("`{key}` twice for one content")));
    }
    *slot = Some(n);
    Ok(true)
}

pub(crate) fn unsupported(line: usize, keyword: &str, reason: &str) -> DpiError {
    DpiError::Unsupported {
        line,
        keyword: keyword.to_string(),
        reason: reason.to_string(),
    }
}
