//! Statements and blocks.

use super::{PResult, Parser};
use crate::ast::{Block, ExprKind, Ident, Stmt, StmtKind, SwitchCase, SwitchLabel, Type};
use crate::diag::SpanError;

impl Parser<'_> {
    /// `{ statements }`.
    pub(super) fn block(&mut self) -> PResult<Block> {
        let start = self.expect_punct("{")?;
        let mut stmts = Vec::new();
        while !self.is_punct("}") {
            if self.at_eof() {
                return Err(self.unexpected("`}`"));
            }
            stmts.push(self.stmt()?);
        }
        self.bump();
        Ok(Block {
            stmts,
            span: start.to(self.prev_span()),
        })
    }

    /// One statement.
    pub(super) fn stmt(&mut self) -> PResult<Stmt> {
        self.nested(|p| {
            let start = p.span();
            let kind = p.stmt_kind()?;
            Ok(Stmt {
                kind,
                span: start.to(p.prev_span()),
            })
        })
    }

    fn stmt_kind(&mut self) -> PResult<StmtKind> {
        if self.is_punct("{") {
            return Ok(StmtKind::Block(self.block()?));
        }
        if self.eat_punct(";") {
            return Ok(StmtKind::Empty);
        }
        if self.eat_word("if") {
            self.expect_punct("(")?;
            let cond = self.expr()?;
            self.expect_punct(")")?;
            let then = Box::new(self.stmt()?);
            let els = if self.eat_word("else") {
                Some(Box::new(self.stmt()?))
            } else {
                None
            };
            return Ok(StmtKind::If { cond, then, els });
        }
        if self.eat_word("switch") {
            return self.switch();
        }
        if self.eat_word("return") {
            let value = if self.is_punct(";") {
                None
            } else {
                Some(self.expr()?)
            };
            self.expect_punct(";")?;
            return Ok(StmtKind::Return(value));
        }
        if self.eat_word("exit") {
            self.expect_punct(";")?;
            return Ok(StmtKind::Exit);
        }
        if self.eat_word("const") {
            let (ty, name, value) = self.const_rest()?;
            return Ok(StmtKind::Const { ty, name, value });
        }
        if let Some((ty, name)) = self.declaration_head() {
            let init = if self.eat_punct("=") {
                Some(self.expr()?)
            } else {
                None
            };
            self.expect_punct(";")?;
            return Ok(StmtKind::Variable { ty, name, init });
        }
        let lhs = self.expr()?;
        if self.eat_punct("=") {
            let rhs = self.expr()?;
            self.expect_punct(";")?;
            return Ok(StmtKind::Assign { lhs, rhs });
        }
        if !matches!(lhs.kind, ExprKind::Call { .. }) {
            if self.is_punct(";") {
                return Err(SpanError::new(
                    lhs.span,
                    "expression statement must be a call or an assignment",
                ));
            }
            return Err(self.unexpected("`=` or `;`"));
        }
        self.expect_punct(";")?;
        Ok(StmtKind::Call(lhs))
    }

    /// `T name` followed by `=` or `;`: the start of a variable declaration. Rewinds and answers `None` otherwise,
    /// so `h[1] = x;` and `f(x);` go on as expressions.
    pub(super) fn declaration_head(&mut self) -> Option<(Type, Ident)> {
        if !(self.is_ident() || self.at_type_keyword() || self.is_word("error")) {
            return None;
        }
        self.attempt("declaration", |p| {
            let ty = p.ty()?;
            let name = p.ident()?;
            if p.is_punct("=") || p.is_punct(";") {
                Ok((ty, name))
            } else {
                Err(p.unexpected("`=` or `;`"))
            }
        })
    }

    fn switch(&mut self) -> PResult<StmtKind> {
        self.expect_punct("(")?;
        let expr = self.expr()?;
        self.expect_punct(")")?;
        self.expect_punct("{")?;
        let mut cases = Vec::new();
        while !self.eat_punct("}") {
            let start = self.span();
            let label = if self.is_word("default") {
                SwitchLabel::Default(self.bump().span)
            } else if self.at_eof() {
                return Err(self.unexpected("`}`"));
            } else {
                SwitchLabel::Expr(self.expr()?)
            };
            self.expect_punct(":")?;
            let body = if self.is_punct("{") {
                Some(self.block()?)
            } else {
                None
            };
            cases.push(SwitchCase {
                label,
                body,
                span: start.to(self.prev_span()),
            });
        }
        Ok(StmtKind::Switch { expr, cases })
    }
}
