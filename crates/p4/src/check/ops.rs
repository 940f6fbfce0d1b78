//! Operators: unary and binary operators, shifts, concatenation and `?:`, with P4's typing rules (both operands
//! of one type, a width-less literal taking the other's) and folding of constant operands.

use super::expr::mk;
use super::fold::{self, Folded, Num};
use super::{err, CResult, Checker};
use crate::ast::{self, BinaryOp, UnaryOp};
use crate::diag::Span;
use crate::ir::{Expr, ExprKind, Ty};
use crate::lexer::MAX_WIDTH;

impl Checker<'_> {
    pub(super) fn unary(
        &mut self,
        op: UnaryOp,
        operand: &ast::Expr,
        expected: Option<&Ty>,
        span: Span,
    ) -> CResult<Expr> {
        if op == UnaryOp::Not {
            let x = self.expr_as(operand, &Ty::Bool)?;
            if let ExprKind::Bool(b) = x.kind {
                return Ok(mk(ExprKind::Bool(!b), Ty::Bool, span));
            }
            return Ok(mk(ExprKind::Unary(op, Box::new(x)), Ty::Bool, span));
        }
        let mut x = self.expr(operand, expected)?;
        if let (Ty::InfInt, Some(t @ (Ty::Bit(_) | Ty::Int(_)))) = (&x.ty, expected) {
            if op == UnaryOp::Complement {
                x = self.coerce(x, t)?;
            }
        }
        let num = match self.num(&x.ty) {
            Some(n) if matches!(x.ty, Ty::Bit(_) | Ty::Int(_) | Ty::InfInt) => n,
            _ => {
                return err(
                    span,
                    format!(
                        "invalid operand of `{}`: {}",
                        op.symbol(),
                        self.ty_name(&x.ty)
                    ),
                )
            }
        };
        if op == UnaryOp::Complement && num == Num::Inf {
            return err(
                span,
                format!("invalid operand of `~`: {}", self.ty_name(&x.ty)),
            );
        }
        let ty = x.ty.clone();
        if let ExprKind::Const(v) = x.kind {
            let v = fold::unary(op, num, v).or_else(|m| err(span, m))?;
            return Ok(mk(ExprKind::Const(v), ty, span));
        }
        Ok(mk(ExprKind::Unary(op, Box::new(x)), ty, span))
    }

    /// Makes two operands the same type, giving a width-less literal the other's type.
    fn unify(&self, a: Expr, b: Expr, span: Span) -> CResult<(Expr, Expr)> {
        if a.ty == b.ty {
            return Ok((a, b));
        }
        match (&a.ty, &b.ty) {
            (Ty::InfInt, Ty::Bit(_) | Ty::Int(_)) => {
                let t = b.ty.clone();
                Ok((self.coerce(a, &t)?, b))
            }
            (Ty::Bit(_) | Ty::Int(_), Ty::InfInt) => {
                let t = a.ty.clone();
                Ok((a, self.coerce(b, &t)?))
            }
            _ => self.mismatch(span, &a.ty, &b.ty),
        }
    }

    pub(super) fn binary(
        &mut self,
        op: BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        expected: Option<&Ty>,
        span: Span,
    ) -> CResult<Expr> {
        use BinaryOp::*;
        match op {
            And | Or => {
                let l = self.expr_as(lhs, &Ty::Bool)?;
                let r = self.conditional(|c| c.expr_as(rhs, &Ty::Bool))?;
                if let (ExprKind::Bool(a), ExprKind::Bool(b)) = (&l.kind, &r.kind) {
                    let v = if op == And { *a && *b } else { *a || *b };
                    return Ok(mk(ExprKind::Bool(v), Ty::Bool, span));
                }
                Ok(mk(
                    ExprKind::Binary(op, Box::new(l), Box::new(r)),
                    Ty::Bool,
                    span,
                ))
            }
            Concat => self.concat(lhs, rhs, span),
            Shl | Shr => self.shift(op, lhs, rhs, expected, span),
            _ => {
                let l = self.expr(lhs, expected)?;
                let r = self.expr(rhs, expected)?;
                let (l, r) = self.unify(l, r, span)?;
                let compare = matches!(op, Eq | Ne);
                let ordered = matches!(op, Lt | Gt | Le | Ge);
                let arith = matches!(l.ty, Ty::Bit(_) | Ty::Int(_) | Ty::InfInt);
                let ok = if compare {
                    arith || matches!(l.ty, Ty::Bool | Ty::Enum(_) | Ty::Error)
                } else {
                    arith && !(matches!(op, AddSat | SubSat) && l.ty == Ty::InfInt)
                };
                if !ok {
                    return self.invalid_operands(op, &l.ty, span);
                }
                let ty = if compare || ordered {
                    Ty::Bool
                } else {
                    l.ty.clone()
                };
                self.fold_binary(op, l, r, ty, span)
            }
        }
    }

    /// Checks what only runs depending on a condition (the right operand of `&&`/`||`, the branches of `?:`),
    /// where table applications are refused.
    fn conditional<T>(&mut self, check: impl FnOnce(&mut Self) -> CResult<T>) -> CResult<T> {
        self.cond_depth += 1;
        let out = check(self);
        self.cond_depth -= 1;
        out
    }

    /// The error of a binary operator whose operands have a type it does not take.
    fn invalid_operands<T>(&self, op: BinaryOp, ty: &Ty, span: Span) -> CResult<T> {
        err(
            span,
            format!(
                "invalid operands of `{}`: {}",
                op.symbol(),
                self.ty_name(ty)
            ),
        )
    }

    fn fold_binary(&self, op: BinaryOp, l: Expr, r: Expr, ty: Ty, span: Span) -> CResult<Expr> {
        let consts = match (&l.kind, &r.kind) {
            (ExprKind::Const(a), ExprKind::Const(b)) => Some((*a, *b)),
            (ExprKind::Bool(a), ExprKind::Bool(b)) => Some((*a as u128, *b as u128)),
            (ExprKind::EnumMember(a), ExprKind::EnumMember(b))
            | (ExprKind::ErrorMember(a), ExprKind::ErrorMember(b)) => {
                Some((*a as u128, *b as u128))
            }
            _ => None,
        };
        if let (Some((a, b)), Some(num)) = (consts, self.num(&l.ty).or(Some(Num::Inf))) {
            let kind = match fold::binary(op, num, a, b).or_else(|m| err(span, m))? {
                Folded::Int(v) => ExprKind::Const(v),
                Folded::Bool(v) => ExprKind::Bool(v),
            };
            return Ok(mk(kind, ty, span));
        }
        Ok(mk(ExprKind::Binary(op, Box::new(l), Box::new(r)), ty, span))
    }

    fn concat(&mut self, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> CResult<Expr> {
        let l = self.expr(lhs, None)?;
        let r = self.expr(rhs, None)?;
        let width = |x: &Expr| match x.ty {
            Ty::Bit(w) | Ty::Int(w) => Ok(w),
            _ => err(
                x.span,
                format!("invalid operand of `++`: {}", self.ty_name(&x.ty)),
            ),
        };
        let (wl, wr) = (width(&l)?, width(&r)?);
        let w = wl + wr;
        if w > MAX_WIDTH {
            return err(span, format!("width {w} exceeds {MAX_WIDTH} bits"));
        }
        let ty = if matches!(l.ty, Ty::Int(_)) {
            Ty::Int(w)
        } else {
            Ty::Bit(w)
        };
        if let (ExprKind::Const(a), ExprKind::Const(b)) = (&l.kind, &r.kind) {
            let v = if wr >= 128 { *b } else { (a << wr) | b };
            return Ok(mk(ExprKind::Const(v & fold::mask(w)), ty, span));
        }
        Ok(mk(ExprKind::Concat(Box::new(l), Box::new(r)), ty, span))
    }

    fn shift(
        &mut self,
        op: BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        expected: Option<&Ty>,
        span: Span,
    ) -> CResult<Expr> {
        let mut l = self.expr(lhs, expected)?;
        let r = self.expr(rhs, None)?;
        match (&r.ty, &r.kind) {
            (Ty::Bit(_), _) => {}
            (Ty::InfInt, ExprKind::Const(v)) if (*v as i128) >= 0 => {}
            _ => {
                return err(
                    rhs.span,
                    format!("invalid shift amount of type {}", self.ty_name(&r.ty)),
                )
            }
        }
        let r_const = matches!(r.kind, ExprKind::Const(_));
        if l.ty == Ty::InfInt && !r_const {
            match expected {
                Some(t @ (Ty::Bit(_) | Ty::Int(_))) => l = self.coerce(l, t)?,
                _ => {
                    return err(
                        lhs.span,
                        "shift of a width-less constant by a variable amount",
                    )
                }
            }
        }
        if !matches!(l.ty, Ty::Bit(_) | Ty::Int(_) | Ty::InfInt) {
            return self.invalid_operands(op, &l.ty, span);
        }
        let ty = l.ty.clone();
        self.fold_binary(op, l, r, ty, span)
    }

    pub(super) fn ternary(
        &mut self,
        cond: &ast::Expr,
        then: &ast::Expr,
        els: &ast::Expr,
        expected: Option<&Ty>,
        span: Span,
    ) -> CResult<Expr> {
        let c = self.expr_as(cond, &Ty::Bool)?;
        let (mut t, mut e) =
            self.conditional(|c| Ok((c.expr(then, expected)?, c.expr(els, expected)?)))?;
        if let Some(x @ (Ty::Bit(_) | Ty::Int(_))) = expected {
            if t.ty == Ty::InfInt {
                t = self.coerce(t, x)?;
            }
            if e.ty == Ty::InfInt {
                e = self.coerce(e, x)?;
            }
        }
        let (t, e) = self.unify(t, e, span)?;
        if let ExprKind::Bool(b) = c.kind {
            let pick = if b { t } else { e };
            return Ok(Expr { span, ..pick });
        }
        if t.ty == Ty::InfInt {
            return err(span, "cannot infer the width of `?:`");
        }
        let ty = t.ty.clone();
        Ok(mk(
            ExprKind::Cond(Box::new(c), Box::new(t), Box::new(e)),
            ty,
            span,
        ))
    }
}
