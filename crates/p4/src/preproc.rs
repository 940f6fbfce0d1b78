//! A small preprocessor over tokens: `#include <f>`/`#include "f"`, object-like `#define NAME tokens`, `#undef`,
//! `#ifdef`/`#ifndef`/`#if EXPR`/`#elif EXPR`/`#else`/`#endif` (expressions as C reads them, [`crate::ppexpr`]).
//! Included files keep their own [`FileId`], so errors inside an include name the include. Function-like macros are
//! outside the subset and are refused by name.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::diag::{FileId, SourceMap, Span, SpanError};
use crate::lexer::{lex, Token, TokenKind};

/// Include nesting deeper than this is a cycle without guards, not a program.
const MAX_INCLUDE_DEPTH: usize = 32;
/// Macro expansion deeper than this is a self-referential definition.
const MAX_EXPANSION_DEPTH: usize = 32;
/// The whole token stream (every file and every macro expansion) is refused past this many tokens: large P4
/// programs are around 100k tokens, and definitions that double each other (`#define B A A`) would otherwise grow
/// it exponentially within the depth limit.
pub(crate) const MAX_TOKENS: usize = 1 << 20;
/// Files read through `#include`, counted every time (guarded files too): within the depth limit, a file that
/// includes the next one twice would otherwise read 2^32 files.
const MAX_INCLUDES: usize = 1024;

/// The include files shipped with the crate, found by the name given in `#include`.
const BUNDLED: &[(&str, &str)] = &[
    ("core.p4", include_str!("../include/core.p4")),
    ("ebpf_model.p4", include_str!("../include/ebpf_model.p4")),
    ("xdp_model.p4", include_str!("../include/xdp_model.p4")),
    ("hwxdp_xdp.p4", include_str!("../include/hwxdp_xdp.p4")),
];

/// The text of a bundled include, by file name (`core.p4`, `ebpf_model.p4`, `xdp_model.p4`, `hwxdp_xdp.p4`).
pub fn bundled_include(name: &str) -> Option<&'static str> {
    BUNDLED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// Where `#include "f"` looks first: the directory of the including file, if it is a real file.
#[derive(Clone, Debug)]
enum Origin {
    Disk(PathBuf),
    Bundled,
    Memory,
}

struct Frame {
    /// The directive that opened the conditional, for "unterminated" errors.
    span: Span,
    /// Whether the enclosing region was active when this conditional opened.
    parent_active: bool,
    /// Whether the current branch is the one taken.
    current: bool,
    /// Whether some branch so far (this one included) was taken.
    any_taken: bool,
    /// Whether `#else` was seen.
    in_else: bool,
}

impl Frame {
    fn open(span: Span, parent_active: bool, holds: bool) -> Frame {
        Frame {
            span,
            parent_active,
            current: holds,
            any_taken: holds,
            in_else: false,
        }
    }
}

/// Reads a program and everything it includes into one token stream ending in `Eof`.
pub(crate) struct Preprocessor {
    pub sources: SourceMap,
    defines: HashMap<String, Vec<Token>>,
    out: Vec<Token>,
    /// `#include`s read so far.
    includes: usize,
}

impl Preprocessor {
    pub fn new() -> Preprocessor {
        Preprocessor {
            sources: SourceMap::default(),
            defines: HashMap::new(),
            out: Vec::new(),
            includes: 0,
        }
    }

    /// Preprocesses the main file; `path` is its location on disk, if it has one.
    pub fn run(
        mut self,
        name: &str,
        text: String,
        path: Option<&Path>,
    ) -> (SourceMap, Result<Vec<Token>, SpanError>) {
        let origin = path.map_or(Origin::Memory, |p| Origin::Disk(p.to_path_buf()));
        let file = self.sources.add(name.to_string(), text);
        let result = self.file(file, origin, 0).map(|()| {
            let text_len = self.sources.file(file).map_or(0, |f| f.text.len()) as u32;
            let mut out = std::mem::take(&mut self.out);
            out.push(Token {
                kind: TokenKind::Eof,
                span: Span::new(file, text_len, text_len),
            });
            out
        });
        (self.sources, result)
    }

    fn file(&mut self, file: FileId, origin: Origin, depth: usize) -> Result<(), SpanError> {
        let text = self
            .sources
            .file(file)
            .map(|f| f.text.clone())
            .unwrap_or_default();
        let tokens = lex(file, &text, 0, text.len())?;
        let mut conds: Vec<Frame> = Vec::new();
        for tok in tokens {
            let active = conds.last().is_none_or(|f| f.parent_active && f.current);
            let TokenKind::Directive(line) = &tok.kind else {
                if active {
                    self.emit(tok, None, 0)?;
                }
                continue;
            };
            let (name, rest) = line
                .split_once(|c: char| c.is_whitespace())
                .unwrap_or((line.as_str(), ""));
            let rest = rest.trim();
            match name {
                "ifdef" | "ifndef" => {
                    let macro_name = single_word(rest, tok.span, name)?;
                    let defined = self.defines.contains_key(macro_name);
                    conds.push(Frame::open(tok.span, active, defined == (name == "ifdef")));
                }
                // An inactive region's expressions are not evaluated (they may use what is not defined there).
                "if" => {
                    let holds = active && self.condition(rest, tok.span)?;
                    conds.push(Frame::open(tok.span, active, holds));
                }
                "elif" => {
                    let f = match conds.last() {
                        Some(f) if f.in_else => {
                            return Err(SpanError::new(tok.span, "`#elif` after `#else`"))
                        }
                        Some(f) => f,
                        None => return Err(SpanError::new(tok.span, "`#elif` without `#if`")),
                    };
                    let holds =
                        f.parent_active && !f.any_taken && self.condition(rest, tok.span)?;
                    if let Some(f) = conds.last_mut() {
                        f.current = holds;
                        f.any_taken |= holds;
                    }
                }
                "else" => match conds.last_mut() {
                    Some(f) if !f.in_else => {
                        f.in_else = true;
                        f.current = !f.any_taken;
                        f.any_taken = true;
                    }
                    Some(_) => return Err(SpanError::new(tok.span, "`#else` after `#else`")),
                    None => return Err(SpanError::new(tok.span, "`#else` without `#if`")),
                },
                "endif" => {
                    if conds.pop().is_none() {
                        return Err(SpanError::new(tok.span, "`#endif` without `#if`"));
                    }
                }
                _ if !active => {}
                "define" => self.define(&text, &tok, rest)?,
                "undef" => {
                    let macro_name = single_word(rest, tok.span, name)?;
                    self.defines.remove(macro_name);
                }
                "include" => self.include(&origin, rest, tok.span, depth)?,
                "error" => return Err(SpanError::new(tok.span, format!("#error {rest}"))),
                other => {
                    return Err(SpanError::new(
                        tok.span,
                        format!("unsupported preprocessor directive `#{other}`"),
                    ));
                }
            }
        }
        match conds.last() {
            Some(f) => Err(SpanError::new(f.span, "unterminated conditional directive")),
            None => Ok(()),
        }
    }

    /// Whether the expression of `#if`/`#elif` (`text`, at the directive `span`) is not zero.
    fn condition(&self, text: &str, span: Span) -> Result<bool, SpanError> {
        let value_of = |name: &str| {
            self.defines.get(name).map(|body| {
                let mut text = String::new();
                for t in body {
                    if let Some(f) = self.sources.file(t.span.file) {
                        text.push_str(
                            f.text
                                .get(t.span.lo as usize..t.span.hi as usize)
                                .unwrap_or(""),
                        );
                        text.push(' ');
                    }
                }
                text
            })
        };
        crate::ppexpr::eval(text, &value_of)
            .map(|v| v != 0)
            .map_err(|m| SpanError::new(span, m))
    }

    /// Pushes a token, replacing a defined name by its definition. `used` is the macro named at the use site when
    /// `tok` comes from its expansion.
    fn emit(&mut self, tok: Token, used: Option<&str>, depth: usize) -> Result<(), SpanError> {
        let expansion = match &tok.kind {
            TokenKind::Ident(name) => self.defines.get(name).map(|b| (name.clone(), b.clone())),
            _ => None,
        };
        let Some((name, body)) = expansion else {
            return self.push(tok, used);
        };
        if depth >= MAX_EXPANSION_DEPTH {
            return Err(SpanError::new(
                tok.span,
                // A macro that names itself, or a chain of macros longer than the bound: the message covers both.
                format!(
                    "macro `{name}` expands without end (macros inside macros deeper than {MAX_EXPANSION_DEPTH} levels)"
                ),
            ));
        }
        let used = used.unwrap_or(&name);
        for t in body {
            // The expansion is reported at the use site: that is where a reader looks.
            self.emit(
                Token {
                    kind: t.kind,
                    span: tok.span,
                },
                Some(used),
                depth + 1,
            )?;
        }
        Ok(())
    }

    /// Appends one token to the output, within [`MAX_TOKENS`].
    fn push(&mut self, tok: Token, used: Option<&str>) -> Result<(), SpanError> {
        if self.out.len() >= MAX_TOKENS {
            let message = match used {
                Some(name) => format!("macro `{name}` expands past {MAX_TOKENS} tokens"),
                None => format!("program longer than {MAX_TOKENS} tokens"),
            };
            return Err(SpanError::new(tok.span, message));
        }
        self.out.push(tok);
        Ok(())
    }

    fn define(&mut self, text: &str, tok: &Token, rest: &str) -> Result<(), SpanError> {
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(SpanError::new(tok.span, "`#define` needs a macro name"));
        }
        if rest[name_len..].starts_with('(') {
            return Err(SpanError::new(
                tok.span,
                format!("function-like macro `{name}` is not supported"),
            ));
        }
        // Lex the value in place so that errors in it point into the file.
        // `rest` starts after `#`, blanks, `define` and blanks of the raw line, and ends where the directive's text
        // ends (before any trailing `//` comment).
        let raw_lo = tok.span.lo as usize + 1;
        let raw = text.get(raw_lo..tok.span.hi as usize).unwrap_or("");
        let after_kw = raw.trim_start().strip_prefix("define").unwrap_or("");
        let rest_at = raw_lo + raw.len() - after_kw.trim_start().len();
        let value_at = rest_at + name_len;
        let value_end = (rest_at + rest.len()).min(tok.span.hi as usize);
        let body = lex(tok.span.file, text, value_at, value_end)?;
        if let Some(d) = body
            .iter()
            .find(|t| matches!(t.kind, TokenKind::Directive(_)))
        {
            return Err(SpanError::new(d.span, "`#` in a macro value"));
        }
        self.defines.insert(name.to_string(), body);
        Ok(())
    }

    fn include(
        &mut self,
        origin: &Origin,
        rest: &str,
        span: Span,
        depth: usize,
    ) -> Result<(), SpanError> {
        let (name, angled) =
            if let Some(n) = rest.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
                (n, true)
            } else if let Some(n) = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                (n, false)
            } else {
                return Err(SpanError::new(
                    span,
                    "`#include` expects <file> or \"file\"",
                ));
            };
        self.includes += 1;
        if self.includes > MAX_INCLUDES {
            return Err(SpanError::new(
                span,
                format!("more than {MAX_INCLUDES} includes at `{name}`"),
            ));
        }
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(SpanError::new(
                span,
                format!("includes nested deeper than {MAX_INCLUDE_DEPTH} at `{name}`"),
            ));
        }
        let local = match origin {
            Origin::Disk(p) => Some(p.parent().unwrap_or(Path::new(".")).join(name)),
            Origin::Bundled | Origin::Memory => None,
        };
        let read_local = |path: &PathBuf| {
            std::fs::read_to_string(path)
                .ok()
                .map(|t| (path.clone(), t))
        };
        let from_disk = local.as_ref().and_then(read_local);
        let bundled = bundled_include(name);
        let (shown, text, next) = match (angled, from_disk, bundled) {
            (true, _, Some(text)) | (false, None, Some(text)) => (
                format!("<bundled>/{name}"),
                text.to_string(),
                Origin::Bundled,
            ),
            (_, Some((path, text)), _) => (path.display().to_string(), text, Origin::Disk(path)),
            (_, None, None) => {
                return Err(SpanError::new(
                    span,
                    format!("include file `{name}` not found"),
                ))
            }
        };
        let file = self.sources.add(shown, text);
        self.file(file, next, depth + 1)
    }
}

fn single_word<'a>(rest: &'a str, span: Span, directive: &str) -> Result<&'a str, SpanError> {
    let mut words = rest.split_whitespace();
    match (words.next(), words.next()) {
        (Some(w), None) => Ok(w),
        _ => Err(SpanError::new(
            span,
            format!("`#{directive}` expects one macro name"),
        )),
    }
}
