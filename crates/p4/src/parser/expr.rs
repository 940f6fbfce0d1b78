//! Expressions by precedence climbing, keysets of `select` cases and table entries, and call arguments.

use super::{PResult, Parser};
use crate::ast::{Argument, BinaryOp, Expr, ExprKind, Ident, Keyset, UnaryOp};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// A full expression, including `?:`.
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.nested(|p| {
            let cond = p.binary(1)?;
            if !p.eat_punct("?") {
                return Ok(cond);
            }
            let then = p.expr()?;
            p.expect_punct(":")?;
            let els = p.expr()?;
            let span = cond.span.to(els.span);
            Ok(Expr {
                kind: ExprKind::Ternary {
                    cond: Box::new(cond),
                    then: Box::new(then),
                    els: Box::new(els),
                },
                span,
            })
        })
    }

    /// The binary operator at the cursor and how many tokens spell it (`>>` is two adjacent `>`).
    fn binary_op(&self) -> Option<(BinaryOp, usize)> {
        use BinaryOp::*;
        let TokenKind::Punct(p) = self.kind() else {
            return None;
        };
        let op = match *p {
            "||" => Or,
            "&&" => And,
            "==" => Eq,
            "!=" => Ne,
            "<" => Lt,
            "<=" => Le,
            ">=" => Ge,
            ">" => {
                let joined = self.is_punct_at(1, ">") && self.tok(0).span.hi == self.tok(1).span.lo;
                return Some(if joined { (Shr, 2) } else { (Gt, 1) });
            }
            "|" => BitOr,
            "^" => BitXor,
            "&" => BitAnd,
            "<<" => Shl,
            "++" => Concat,
            "+" => Add,
            "-" => Sub,
            "|+|" => AddSat,
            "|-|" => SubSat,
            "*" => Mul,
            "/" => Div,
            "%" => Mod,
            _ => return None,
        };
        Some((op, 1))
    }

    /// Operators binding at least as tightly as `min_prec`, all left-associative.
    ///
    /// The chain is read in a loop, but the tree it builds leans left and every later walk over it recurses, so
    /// each operator counts as one nesting level (see [`Parser::chained`]).
    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let depth = self.depth;
        let r = self.binary_chain(min_prec);
        self.depth = depth;
        r
    }

    fn binary_chain(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        while let Some((op, len)) = self.binary_op() {
            if op.precedence() < min_prec {
                break;
            }
            self.chained()?;
            for _ in 0..len {
                self.bump();
            }
            let rhs = self.binary(op.precedence() + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                span,
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.nested(|p| {
            let start = p.span();
            let op = match p.kind() {
                TokenKind::Punct("!") => Some(UnaryOp::Not),
                TokenKind::Punct("~") => Some(UnaryOp::Complement),
                TokenKind::Punct("-") => Some(UnaryOp::Neg),
                TokenKind::Punct("+") => Some(UnaryOp::Plus),
                _ => None,
            };
            if let Some(op) = op {
                p.bump();
                let operand = p.unary()?;
                let span = start.to(operand.span);
                return Ok(Expr {
                    kind: ExprKind::Unary {
                        op,
                        operand: Box::new(operand),
                    },
                    span,
                });
            }
            if p.is_punct("(") {
                if let Some(ty) = p.cast_type()? {
                    let operand = p.unary()?;
                    let span = start.to(operand.span);
                    return Ok(Expr {
                        kind: ExprKind::Cast {
                            ty,
                            expr: Box::new(operand),
                        },
                        span,
                    });
                }
            }
            p.postfix()
        })
    }

    /// `(T)` when the parenthesis opens a cast. A keyword type always does; a named type does when what follows
    /// `)` can only start an operand, since `(x) - y` is a subtraction.
    fn cast_type(&mut self) -> PResult<Option<crate::ast::Type>> {
        let keyword_type = ["bit", "int", "varbit", "bool", "tuple"]
            .iter()
            .any(|w| self.is_word_at(1, w));
        if keyword_type {
            self.bump();
            let ty = self.ty()?;
            self.expect_punct(")")?;
            return Ok(Some(ty));
        }
        if !self.is_ident_at(1) {
            return Ok(None);
        }
        Ok(self.attempt("cast", |p| {
            p.bump();
            let ty = p.ty()?;
            p.expect_punct(")")?;
            let operand_start = match p.kind() {
                TokenKind::Ident(w) => w != "_",
                TokenKind::Int(_) | TokenKind::Str(_) => true,
                TokenKind::Punct(q) => matches!(*q, "(" | "!" | "~" | "{"),
                _ => false,
            };
            if operand_start {
                Ok(ty)
            } else {
                Err(p.unexpected("cast operand"))
            }
        }))
    }

    /// Member accesses, indices, slices and calls after a primary expression; like a chain of binary operators,
    /// each one nests the tree one level deeper.
    fn postfix(&mut self) -> PResult<Expr> {
        let depth = self.depth;
        let r = self.postfix_chain();
        self.depth = depth;
        r
    }

    fn postfix_chain(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            let start = e.span;
            let kind = if self.eat_punct(".") {
                let member = self.any_word()?;
                ExprKind::Member {
                    base: Box::new(e),
                    member,
                }
            } else if self.eat_punct("[") {
                let index = self.expr()?;
                let kind = if self.eat_punct(":") {
                    let lo = self.expr()?;
                    ExprKind::Slice {
                        base: Box::new(e),
                        hi: Box::new(index),
                        lo: Box::new(lo),
                    }
                } else {
                    ExprKind::Index {
                        base: Box::new(e),
                        index: Box::new(index),
                    }
                };
                self.expect_punct("]")?;
                kind
            } else if self.is_punct("(") {
                let args = self.args()?;
                ExprKind::Call {
                    callee: Box::new(e),
                    type_args: Vec::new(),
                    args,
                }
            } else if self.is_punct("<")
                && matches!(e.kind, ExprKind::Name(_) | ExprKind::Member { .. })
            {
                // `f<T>(...)` against `a < b`: only a type list closed by `>` and followed by `(` is a call.
                let type_args = self.attempt("type arguments", |p| {
                    p.bump();
                    let args = p.type_args_rest()?;
                    if p.is_punct("(") {
                        Ok(args)
                    } else {
                        Err(p.unexpected("`(`"))
                    }
                });
                let Some(type_args) = type_args else {
                    break;
                };
                let args = self.args()?;
                ExprKind::Call {
                    callee: Box::new(e),
                    type_args,
                    args,
                }
            } else {
                break;
            };
            self.chained()?;
            e = Expr {
                kind,
                span: start.to(self.prev_span()),
            };
        }
        Ok(e)
    }

    fn primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let kind = match self.kind() {
            TokenKind::Int(lit) => {
                self.bump();
                ExprKind::Int(*lit)
            }
            TokenKind::Str(s) => {
                self.bump();
                ExprKind::Str(s.clone())
            }
            TokenKind::Ident(w) if w == "true" || w == "false" => {
                self.bump();
                ExprKind::Bool(w == "true")
            }
            TokenKind::Ident(w) if w == "_" => {
                self.bump();
                ExprKind::DontCare
            }
            // `error.NoMatch`: the error type's members are reached through its keyword.
            TokenKind::Ident(w) if w == "error" => {
                let span = self.bump().span;
                ExprKind::Name(Ident {
                    name: w.clone(),
                    span,
                })
            }
            TokenKind::Punct("(") => {
                self.bump();
                let inner = self.expr()?;
                self.expect_punct(")")?;
                return Ok(Expr {
                    kind: inner.kind,
                    span: start.to(self.prev_span()),
                });
            }
            TokenKind::Punct("{") => {
                self.bump();
                self.initialiser()?
            }
            _ if self.is_ident() => ExprKind::Name(self.ident()?),
            _ => return Err(self.unexpected("expression")),
        };
        Ok(Expr {
            kind,
            span: start.to(self.prev_span()),
        })
    }

    /// After `{`: `{ a, b }` or `{ f = a, g = b }`.
    fn initialiser(&mut self) -> PResult<ExprKind> {
        if self.is_ident() && self.is_punct_at(1, "=") {
            let fields = self.comma_list("}", |p| {
                let name = p.ident()?;
                p.expect_punct("=")?;
                Ok((name, p.expr()?))
            })?;
            return Ok(ExprKind::StructInit(fields));
        }
        Ok(ExprKind::List(self.comma_list("}", Self::expr)?))
    }

    /// `( args )` of a call or instantiation.
    pub(super) fn args(&mut self) -> PResult<Vec<Argument>> {
        self.expect_punct("(")?;
        self.comma_list(")", |p| {
            let name = if p.is_ident() && p.is_punct_at(1, "=") {
                let name = p.ident()?;
                p.bump();
                Some(name)
            } else {
                None
            };
            Ok(Argument {
                name,
                value: p.expr()?,
            })
        })
    }

    /// A keyset before `:` in a `select` case or a table entry.
    pub(super) fn keyset(&mut self) -> PResult<Keyset> {
        if self.is_punct("(") {
            let start = self.span();
            let tuple = self.attempt("tuple keyset", |p| {
                p.bump();
                let items = p.comma_list(")", Self::simple_keyset)?;
                if p.is_punct(":") {
                    Ok(items)
                } else {
                    Err(p.unexpected("`:`"))
                }
            });
            if let Some(mut items) = tuple {
                if items.len() == 1 {
                    return Ok(items.remove(0));
                }
                return Ok(Keyset::Tuple(items, start.to(self.prev_span())));
            }
        }
        self.simple_keyset()
    }

    fn simple_keyset(&mut self) -> PResult<Keyset> {
        if self.is_word("default") {
            return Ok(Keyset::Default(self.bump().span));
        }
        if self.is_word("_")
            && (self.is_punct_at(1, ":") || self.is_punct_at(1, ",") || self.is_punct_at(1, ")"))
        {
            return Ok(Keyset::DontCare(self.bump().span));
        }
        let value = self.expr()?;
        if self.eat_punct("&&&") {
            let mask = self.expr()?;
            return Ok(Keyset::Mask { value, mask });
        }
        if self.eat_punct("..") {
            let hi = self.expr()?;
            return Ok(Keyset::Range { lo: value, hi });
        }
        Ok(Keyset::Value(value))
    }
}
