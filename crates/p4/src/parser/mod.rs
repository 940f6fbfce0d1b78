//! Recursive descent over the preprocessed tokens. P4 needs a few tokens of look-ahead where a statement may be a
//! declaration (`H[2] s;` against `h[2] = x;`) or `<` may open type arguments; those places try one reading and rewind
//! to the saved position when it does not fit, so no symbol table is needed.

mod decl;
mod expr;
mod local;
mod stmt;
mod types;

use std::collections::HashSet;

use crate::ast::{Annotation, Decl, Expr, Ident, Type};
use crate::diag::{Span, SpanError};
use crate::lexer::{Token, TokenKind};

/// Nesting beyond this (expressions, statements, types) is refused instead of exhausting the stack.
const MAX_DEPTH: u32 = 128;

/// Words that cannot name a declaration. Member names after `.` may still be any word (`t.apply()`).
const RESERVED: &[&str] = &[
    "abstract",
    "action",
    "apply",
    "bit",
    "bool",
    "const",
    "control",
    "default",
    "else",
    "entries",
    "enum",
    "error",
    "exit",
    "extern",
    "false",
    "header",
    "header_union",
    "if",
    "in",
    "inout",
    "int",
    "key",
    "match_kind",
    "out",
    "package",
    "parser",
    "return",
    "select",
    "state",
    "string",
    "struct",
    "switch",
    "table",
    "transition",
    "true",
    "tuple",
    "typedef",
    "varbit",
    "void",
    "_",
];

pub(crate) type PResult<T> = Result<T, SpanError>;

/// Parses every declaration of a token stream that ends in `Eof`.
pub(crate) fn parse_tokens(tokens: &[Token]) -> PResult<Vec<Decl>> {
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        depth: 0,
        failed: HashSet::new(),
    };
    let mut decls = Vec::new();
    while !p.at_eof() {
        decls.push(p.top_decl()?);
    }
    Ok(decls)
}

pub(crate) struct Parser<'a> {
    toks: &'a [Token],
    pos: usize,
    depth: u32,
    /// Tentative readings that already failed, by reading and position: nested tentative readings would otherwise
    /// retry each other exponentially (`(a[(b[(c[...`).
    failed: HashSet<(&'static str, usize)>,
}

/// How a token is named in "expected X, found Y" messages.
fn describe(kind: &TokenKind) -> String {
    match kind {
        TokenKind::Ident(w) if RESERVED.contains(&w.as_str()) => format!("keyword `{w}`"),
        TokenKind::Ident(w) => format!("identifier `{w}`"),
        TokenKind::Int(_) => "integer literal".to_string(),
        TokenKind::Str(_) => "string literal".to_string(),
        TokenKind::Punct(p) => format!("`{p}`"),
        TokenKind::Directive(d) => format!("directive `#{d}`"),
        TokenKind::Eof => "end of file".to_string(),
    }
}

impl<'a> Parser<'a> {
    fn tok(&self, ahead: usize) -> &'a Token {
        let last = self.toks.len().saturating_sub(1);
        // The stream always ends in Eof, so clamping to the last token answers "end of file" past the end.
        &self.toks[(self.pos + ahead).min(last)]
    }

    fn kind(&self) -> &'a TokenKind {
        &self.tok(0).kind
    }

    fn span(&self) -> Span {
        self.tok(0).span
    }

    /// The span of the last token consumed, for closing a node's span.
    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            self.span()
        } else {
            self.toks[(self.pos - 1).min(self.toks.len() - 1)].span
        }
    }

    fn at_eof(&self) -> bool {
        matches!(self.kind(), TokenKind::Eof)
    }

    fn bump(&mut self) -> &'a Token {
        let t = self.tok(0);
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.kind(), TokenKind::Punct(q) if *q == p)
    }

    fn is_punct_at(&self, ahead: usize, p: &str) -> bool {
        matches!(&self.tok(ahead).kind, TokenKind::Punct(q) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.kind(), TokenKind::Ident(x) if x == w)
    }

    fn is_word_at(&self, ahead: usize, w: &str) -> bool {
        matches!(&self.tok(ahead).kind, TokenKind::Ident(x) if x == w)
    }

    /// True when the current token is an identifier that is not reserved.
    fn is_ident(&self) -> bool {
        self.is_ident_at(0)
    }

    fn is_ident_at(&self, ahead: usize) -> bool {
        matches!(&self.tok(ahead).kind, TokenKind::Ident(x) if !RESERVED.contains(&x.as_str()))
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let yes = self.is_punct(p);
        if yes {
            self.bump();
        }
        yes
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let yes = self.is_word(w);
        if yes {
            self.bump();
        }
        yes
    }

    fn unexpected(&self, what: &str) -> SpanError {
        SpanError::new(
            self.span(),
            format!("expected {what}, found {}", describe(self.kind())),
        )
    }

    fn expect_punct(&mut self, p: &str) -> PResult<Span> {
        if self.is_punct(p) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(&format!("`{p}`")))
        }
    }

    /// What follows `const` in a declaration or a statement: `TYPE NAME = VALUE;`.
    fn const_rest(&mut self) -> PResult<(Type, Ident, Expr)> {
        let ty = self.ty()?;
        let name = self.ident()?;
        self.expect_punct("=")?;
        let value = self.expr()?;
        self.expect_punct(";")?;
        Ok((ty, name, value))
    }

    /// A non-reserved identifier.
    fn ident(&mut self) -> PResult<Ident> {
        match self.kind() {
            TokenKind::Ident(name) if !RESERVED.contains(&name.as_str()) => {
                let span = self.bump().span;
                Ok(Ident {
                    name: name.clone(),
                    span,
                })
            }
            _ => Err(self.unexpected("identifier")),
        }
    }

    /// Any word, reserved or not: member names and annotation names.
    fn any_word(&mut self) -> PResult<Ident> {
        match self.kind() {
            TokenKind::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident {
                    name: name.clone(),
                    span,
                })
            }
            _ => Err(self.unexpected("identifier")),
        }
    }

    /// Enters one nesting level; the caller must call `leave` on every path out.
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(SpanError::new(
                self.span(),
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    /// One more link of a chain the parser reads in a loop (`a + b + c`, `x[7:0][3:0]`, `h.a.b`, `T[2][2]`): the
    /// tree still nests one level deeper per link, and every later walk over it (checker, code generation, pretty
    /// printer) recurses, so a link counts as a nesting level. The caller restores `depth` when the chain ends.
    fn chained(&mut self) -> PResult<()> {
        self.enter()
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Runs `f` inside one more nesting level.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.enter()?;
        let r = f(self);
        self.leave();
        r
    }

    /// Tries the tentative reading `what`; on failure rewinds to where it started and returns `None`.
    fn attempt<T>(
        &mut self,
        what: &'static str,
        f: impl FnOnce(&mut Self) -> PResult<T>,
    ) -> Option<T> {
        let (pos, depth) = (self.pos, self.depth);
        if self.failed.contains(&(what, pos)) {
            return None;
        }
        match f(self) {
            Ok(v) => Some(v),
            Err(_) => {
                self.failed.insert((what, pos));
                self.pos = pos;
                self.depth = depth;
                None
            }
        }
    }

    /// `@name`, `@name(args)`, any number of them.
    fn annotations(&mut self) -> PResult<Vec<Annotation>> {
        let mut out = Vec::new();
        while self.is_punct("@") {
            let start = self.bump().span;
            let name = self.any_word()?;
            let args = if self.is_punct("(") {
                self.bump();
                let args = self.comma_list(")", Self::expr)?;
                Some(args)
            } else {
                None
            };
            out.push(Annotation {
                name,
                args,
                span: start.to(self.prev_span()),
            });
        }
        Ok(out)
    }

    /// Items separated by `,` up to and including `close`; a trailing comma is accepted.
    fn comma_list<T>(
        &mut self,
        close: &str,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut out = Vec::new();
        while !self.is_punct(close) {
            out.push(item(self)?);
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(close)?;
        Ok(out)
    }
}
