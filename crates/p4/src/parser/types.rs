//! Types, type parameter lists and parameter lists.

use super::{PResult, Parser};
use crate::ast::{Direction, Ident, Param, Type, TypeKind};
use crate::diag::SpanError;
use crate::lexer::{TokenKind, MAX_WIDTH};

impl Parser<'_> {
    /// True when the current token can only start a type (a keyword type), not an expression.
    pub(super) fn at_type_keyword(&self) -> bool {
        [
            "bit",
            "int",
            "varbit",
            "bool",
            "void",
            "string",
            "tuple",
            "match_kind",
        ]
        .iter()
        .any(|w| self.is_word(w))
    }

    /// A type, including header stacks `T[n]`.
    pub(super) fn ty(&mut self) -> PResult<Type> {
        self.nested(|p| {
            let mut t = p.base_type()?;
            let depth = p.depth;
            while p.is_punct("[") {
                // `T[1][1]...` nests the type like a chain of operators nests an expression.
                p.chained()?;
                p.bump();
                let size = p.expr()?;
                p.expect_punct("]")?;
                let span = t.span.to(p.prev_span());
                t = Type {
                    kind: TypeKind::Stack {
                        elem: Box::new(t),
                        size: Box::new(size),
                    },
                    span,
                };
            }
            p.depth = depth;
            Ok(t)
        })
    }

    fn base_type(&mut self) -> PResult<Type> {
        let start = self.span();
        let simple = |w: &str| match w {
            "bool" => Some(TypeKind::Bool),
            "error" => Some(TypeKind::Error),
            "void" => Some(TypeKind::Void),
            "string" => Some(TypeKind::String),
            "match_kind" => Some(TypeKind::MatchKind),
            "_" => Some(TypeKind::DontCare),
            _ => None,
        };
        if let TokenKind::Ident(w) = self.kind() {
            if let Some(kind) = simple(w) {
                let span = self.bump().span;
                return Ok(Type { kind, span });
            }
        }
        let kind = match self.kind() {
            TokenKind::Ident(w) if w == "bit" => {
                self.bump();
                if self.is_punct("<") {
                    TypeKind::Bit(self.width("bit")?)
                } else {
                    TypeKind::Bit(1)
                }
            }
            TokenKind::Ident(w) if w == "int" => {
                self.bump();
                TypeKind::Int(self.width("int")?)
            }
            TokenKind::Ident(w) if w == "varbit" => {
                self.bump();
                TypeKind::Varbit(self.width("varbit")?)
            }
            TokenKind::Ident(w) if w == "tuple" => {
                self.bump();
                self.expect_punct("<")?;
                TypeKind::Tuple(self.type_args_rest()?)
            }
            _ => {
                let name = self.ident().map_err(|_| self.unexpected("type"))?;
                let args = if self.is_punct("<") {
                    self.bump();
                    self.type_args_rest()?
                } else {
                    Vec::new()
                };
                TypeKind::Named { name, args }
            }
        };
        Ok(Type {
            kind,
            span: start.to(self.prev_span()),
        })
    }

    /// `<N>` after `bit`, `int` or `varbit`.
    fn width(&mut self, what: &str) -> PResult<u32> {
        self.expect_punct("<")?;
        let span = self.span();
        let w = match self.kind() {
            TokenKind::Int(lit) if lit.width.is_none() => lit.value,
            _ => return Err(self.unexpected(&format!("width of `{what}`"))),
        };
        self.bump();
        self.expect_punct(">")?;
        let limit = if what == "varbit" {
            u32::MAX as u128
        } else {
            MAX_WIDTH as u128
        };
        if w > limit {
            return Err(SpanError::new(
                span,
                format!("`{what}<{w}>` is wider than {MAX_WIDTH} bits"),
            ));
        }
        if w == 0 && what == "int" {
            return Err(SpanError::new(span, "`int<0>` has no sign bit"));
        }
        Ok(w as u32)
    }

    /// Type arguments after `<`, through `>`.
    pub(super) fn type_args_rest(&mut self) -> PResult<Vec<Type>> {
        self.comma_list(">", Self::ty)
    }

    /// `<A, B>` if present.
    pub(super) fn type_params(&mut self) -> PResult<Vec<Ident>> {
        if self.eat_punct("<") {
            self.comma_list(">", Self::ident)
        } else {
            Ok(Vec::new())
        }
    }

    /// `( params )`.
    pub(super) fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect_punct("(")?;
        self.comma_list(")", Self::param)
    }

    fn param(&mut self) -> PResult<Param> {
        let start = self.span();
        let annotations = self.annotations()?;
        let direction = if self.eat_word("inout") {
            Direction::InOut
        } else if self.eat_word("in") {
            Direction::In
        } else if self.eat_word("out") {
            Direction::Out
        } else {
            Direction::None
        };
        let ty = self.ty()?;
        let name = self.ident()?;
        let default = if self.eat_punct("=") {
            Some(self.expr()?)
        } else {
            None
        };
        Ok(Param {
            annotations,
            direction,
            ty,
            name,
            default,
            span: start.to(self.prev_span()),
        })
    }
}
