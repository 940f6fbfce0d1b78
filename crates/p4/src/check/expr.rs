//! Expression typing: literal widths from context, operators with P4's typing rules, casts, slices, concatenation,
//! initialisers against a known type; constant operands fold on the spot, so an `InfInt` expression is always a
//! [`ExprKind::Const`].

use super::fold::{self, Num};
use super::{err, Binding, CResult, Checker};
use crate::ast;
use crate::diag::Span;
use crate::ir::{Expr, ExprKind, Ty};
use crate::lexer::MAX_WIDTH;

/// An expression node.
pub(super) fn mk(kind: ExprKind, ty: Ty, span: Span) -> Expr {
    Expr { kind, ty, span }
}

impl Checker<'_> {
    /// Types an expression; `expected` is the type its context wants (initialisers and `?:` branches use it;
    /// the caller still [`Checker::coerce`]s).
    pub(super) fn expr(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> CResult<Expr> {
        let allow_next = std::mem::replace(&mut self.allow_next, false);
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Int(lit) => self.int_lit(lit, span),
            ast::ExprKind::Bool(b) => Ok(mk(ExprKind::Bool(*b), Ty::Bool, span)),
            ast::ExprKind::Str(_) => err(span, "unsupported construct: strings"),
            ast::ExprKind::DontCare => err(span, "`_` is not allowed here"),
            ast::ExprKind::Name(id) => self.name(id),
            ast::ExprKind::Member { base, member } => self.member(base, member, span, allow_next),
            ast::ExprKind::Index { base, index } => self.index(base, index, span),
            ast::ExprKind::Slice { base, hi, lo } => self.slice(base, hi, lo, span),
            ast::ExprKind::Call {
                callee,
                type_args,
                args,
            } => self.call_expr(callee, type_args, args, span),
            ast::ExprKind::Unary { op, operand } => self.unary(*op, operand, expected, span),
            ast::ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, expected, span),
            ast::ExprKind::Ternary { cond, then, els } => {
                self.ternary(cond, then, els, expected, span)
            }
            ast::ExprKind::Cast { ty, expr } => self.cast(ty, expr, span),
            ast::ExprKind::List(items) => self.list(items, expected, span),
            ast::ExprKind::StructInit(items) => self.struct_init(items, expected, span),
        }
    }

    /// Types an expression and converts it to `ty`.
    pub(super) fn expr_as(&mut self, e: &ast::Expr, ty: &Ty) -> CResult<Expr> {
        let x = self.expr(e, Some(ty))?;
        self.coerce(x, ty)
    }

    /// Gives a width-less literal the type `ty`; any other difference of types is an error.
    pub(super) fn coerce(&self, e: Expr, ty: &Ty) -> CResult<Expr> {
        if &e.ty == ty {
            return Ok(e);
        }
        match (&e.kind, ty) {
            (ExprKind::Const(v), Ty::Bit(_) | Ty::Int(_)) if e.ty == Ty::InfInt => {
                let num = self.num(ty).unwrap_or(Num::Inf);
                Ok(mk(ExprKind::Const(num.trunc(*v)), ty.clone(), e.span))
            }
            _ => self.mismatch(e.span, ty, &e.ty),
        }
    }

    /// The arithmetic of an integer type.
    pub(super) fn num(&self, ty: &Ty) -> Option<Num> {
        match ty {
            Ty::Bit(w) => Some(Num::Unsigned(*w)),
            Ty::Int(w) => Some(Num::Signed(*w)),
            Ty::InfInt => Some(Num::Inf),
            Ty::Enum(e) => self.enums[*e].repr_width.map(Num::Unsigned),
            Ty::Bool => Some(Num::Unsigned(1)),
            _ => None,
        }
    }

    /// A constant expression's value as a non-negative `u32` (slice bounds, indices, sizes).
    pub(super) fn const_u32(&mut self, e: &ast::Expr) -> CResult<u32> {
        let x = self.expr(e, None)?;
        let ExprKind::Const(v) = x.kind else {
            return err(e.span, "not a constant");
        };
        let v = match x.ty {
            Ty::Int(w) => fold::sext(v, w),
            Ty::InfInt => v as i128,
            _ => i128::try_from(v).unwrap_or(i128::MAX),
        };
        if !(0..=u32::MAX as i128).contains(&v) {
            return err(e.span, format!("invalid value {v}"));
        }
        Ok(v as u32)
    }

    fn int_lit(&self, lit: &ast::IntLit, span: Span) -> CResult<Expr> {
        let Some(w) = lit.width else {
            if lit.value > i128::MAX as u128 {
                return err(span, "constant overflow");
            }
            return Ok(mk(ExprKind::Const(lit.value), Ty::InfInt, span));
        };
        if w == 0 || w > MAX_WIDTH {
            return err(span, format!("width {w} is not between 1 and {MAX_WIDTH}"));
        }
        let (ty, num) = if lit.signed {
            (Ty::Int(w), Num::Signed(w))
        } else {
            (Ty::Bit(w), Num::Unsigned(w))
        };
        let v = if lit.negative {
            lit.value.wrapping_neg()
        } else {
            lit.value
        };
        Ok(mk(ExprKind::Const(num.trunc(v)), ty, span))
    }

    fn name(&mut self, id: &ast::Ident) -> CResult<Expr> {
        match self.lookup(&id.name) {
            Some(Binding::Var { root, ty, .. }) => {
                Ok(mk(ExprKind::Var(*root), ty.clone(), id.span))
            }
            Some(Binding::Value(v)) => Ok(Expr {
                span: id.span,
                ..v.clone()
            }),
            Some(_) => err(id.span, format!("`{}` is not a value", id.name)),
            None if self.types.contains_key(&id.name) => {
                err(id.span, format!("`{}` is a type, not a value", id.name))
            }
            None => err(id.span, format!("unknown name `{}`", id.name)),
        }
    }

    fn slice(
        &mut self,
        base: &ast::Expr,
        hi: &ast::Expr,
        lo: &ast::Expr,
        span: Span,
    ) -> CResult<Expr> {
        let b = self.expr(base, None)?;
        let w = match b.ty {
            Ty::Bit(w) | Ty::Int(w) => w,
            _ => return err(base.span, format!("cannot slice {}", self.ty_name(&b.ty))),
        };
        let (h, l) = (self.const_u32(hi)?, self.const_u32(lo)?);
        if h >= w || l > h {
            let at = if h >= w { hi.span } else { lo.span };
            return err(
                at,
                format!("slice [{h}:{l}] out of range for {}", self.ty_name(&b.ty)),
            );
        }
        let ty = Ty::Bit(h - l + 1);
        if let ExprKind::Const(v) = b.kind {
            return Ok(mk(
                ExprKind::Const((v >> l) & fold::mask(h - l + 1)),
                ty,
                span,
            ));
        }
        let kind = ExprKind::Slice {
            base: Box::new(b),
            hi: h,
            lo: l,
        };
        Ok(mk(kind, ty, span))
    }

    fn cast(&mut self, ty: &ast::Type, operand: &ast::Expr, span: Span) -> CResult<Expr> {
        let to = self.resolve_type(ty)?;
        let x = self.expr(operand, Some(&to))?;
        if x.ty == to {
            return Ok(Expr { span, ..x });
        }
        let serial = |t: &Ty| matches!(t, Ty::Enum(e) if self.enums[*e].repr_width.is_some());
        let int = |t: &Ty| matches!(t, Ty::Bit(_) | Ty::Int(_));
        let ok = match (&x.ty, &to) {
            (f, t) if (int(f) || *f == Ty::InfInt) && (int(t) || serial(t)) => true,
            (f, t) if serial(f) && int(t) => true,
            (Ty::Bool, Ty::Bit(1)) | (Ty::Bit(1), Ty::Bool) => true,
            (Ty::InfInt, Ty::Bool) => matches!(x.kind, ExprKind::Const(0 | 1)),
            _ => false,
        };
        if !ok {
            return err(
                span,
                format!(
                    "invalid cast from {} to {}",
                    self.ty_name(&x.ty),
                    self.ty_name(&to)
                ),
            );
        }
        let from_num = self.num(&x.ty);
        let to_num = self.num(&to);
        match (&x.kind, from_num, to_num) {
            (ExprKind::Const(v), Some(f), _) if to == Ty::Bool => {
                Ok(mk(ExprKind::Bool(f.trunc(*v) != 0), to, span))
            }
            (ExprKind::Const(v), Some(f), Some(t)) => {
                Ok(mk(ExprKind::Const(fold::convert(f, t, *v)), to, span))
            }
            (ExprKind::Bool(b), _, _) => Ok(mk(ExprKind::Const(*b as u128), to, span)),
            _ => Ok(mk(ExprKind::Cast(Box::new(x)), to, span)),
        }
    }

    /// The field types of the struct or header an initialiser builds.
    fn init_fields(&self, expected: Option<&Ty>, span: Span) -> CResult<Vec<(String, Ty)>> {
        let fields = match expected {
            Some(Ty::Struct(s)) => &self.structs[*s].fields,
            Some(Ty::Header(h)) => &self.headers[*h].fields,
            _ => {
                return err(
                    span,
                    "unsupported construct: list expression without a struct or header type",
                )
            }
        };
        Ok(fields
            .iter()
            .map(|f| (f.name.clone(), f.ty.clone()))
            .collect())
    }

    fn list(&mut self, items: &[ast::Expr], expected: Option<&Ty>, span: Span) -> CResult<Expr> {
        let fields = self.init_fields(expected, span)?;
        if fields.len() != items.len() {
            return err(
                span,
                format!(
                    "wrong number of fields: expected {}, got {}",
                    fields.len(),
                    items.len()
                ),
            );
        }
        let mut out = Vec::new();
        for (item, (_, ty)) in items.iter().zip(&fields) {
            out.push(self.expr_as(item, ty)?);
        }
        let ty = expected.cloned().unwrap_or(Ty::Void);
        Ok(mk(ExprKind::StructInit(out), ty, span))
    }

    fn struct_init(
        &mut self,
        items: &[(ast::Ident, ast::Expr)],
        expected: Option<&Ty>,
        span: Span,
    ) -> CResult<Expr> {
        let fields = self.init_fields(expected, span)?;
        let mut out: Vec<Option<Expr>> = vec![None; fields.len()];
        for (name, value) in items {
            let Some(i) = fields.iter().position(|f| f.0 == name.name) else {
                return err(name.span, format!("unknown field `{}`", name.name));
            };
            if out[i].is_some() {
                return err(name.span, format!("duplicate field `{}`", name.name));
            }
            out[i] = Some(self.expr_as(value, &fields[i].1)?);
        }
        let mut values = Vec::new();
        for (v, (name, _)) in out.into_iter().zip(&fields) {
            match v {
                Some(v) => values.push(v),
                None => return err(span, format!("missing field `{name}`")),
            }
        }
        let ty = expected.cloned().unwrap_or(Ty::Void);
        Ok(mk(ExprKind::StructInit(values), ty, span))
    }
}
