//! Names with structure: member access (fields, enum and error members, header stacks, `t.apply().hit`), stack
//! indices, and calls that produce values (`isValid()`, `lookahead<T>()`, extern functions).

use super::expr::mk;
use super::{err, Binding, CResult, Checker, Ctx};
use crate::ast::{self, Argument, Ident};
use crate::diag::Span;
use crate::ir::{Expr, ExprKind, ExternFn, HeaderId, Stmt, TableId, Ty};

/// Methods that return nothing: named in the diagnostic when used as a value.
const VOID_METHODS: &[&str] = &[
    "setValid",
    "setInvalid",
    "extract",
    "emit",
    "advance",
    "increment",
    "add",
    "push_front",
    "pop_front",
];

/// The extern functions code generation implements.
pub(super) fn extern_fn(name: &str) -> Option<ExternFn> {
    Some(match name {
        "csum_replace2" => ExternFn::CsumReplace2,
        "csum_replace4" => ExternFn::CsumReplace4,
        "ebpf_ipv4_checksum" => ExternFn::Ipv4Checksum,
        "BPF_KTIME_GET_NS" | "hwxdp_ktime_get_ns" => ExternFn::KtimeGetNs,
        _ => return None,
    })
}

/// `t` of `t.apply()`, when `e` is that call.
pub(super) fn applied_table(e: &ast::Expr) -> Option<&Ident> {
    let ast::ExprKind::Call { callee, args, .. } = &e.kind else {
        return None;
    };
    let ast::ExprKind::Member { base, member } = &callee.kind else {
        return None;
    };
    match &base.kind {
        ast::ExprKind::Name(t) if member.name == "apply" && args.is_empty() => Some(t),
        _ => None,
    }
}

impl Checker<'_> {
    pub(super) fn member(
        &mut self,
        base: &ast::Expr,
        member: &Ident,
        span: Span,
        allow_next: bool,
    ) -> CResult<Expr> {
        if let ast::ExprKind::Name(n) = &base.kind {
            if self.lookup(&n.name).is_none() {
                if n.name == "error" {
                    return match self.errors.iter().position(|e| *e == member.name) {
                        Some(i) => Ok(mk(ExprKind::ErrorMember(i), Ty::Error, span)),
                        None => err(member.span, format!("unknown error `{}`", member.name)),
                    };
                }
                if let Some(Ty::Enum(id)) = self.types.get(&n.name) {
                    let id = *id;
                    let def = &self.enums[id];
                    let Some(i) = def.members.iter().position(|m| *m == member.name) else {
                        return err(
                            member.span,
                            format!("unknown member `{}` of `{}`", member.name, def.name),
                        );
                    };
                    let kind = if def.repr_width.is_some() {
                        ExprKind::Const(def.values[i])
                    } else {
                        ExprKind::EnumMember(i)
                    };
                    return Ok(mk(kind, Ty::Enum(id), span));
                }
            }
        }
        if let Some(t) = applied_table(base) {
            let id = self.table_id(t)?;
            return match member.name.as_str() {
                "hit" => self.table_hit(id, span),
                "miss" => {
                    let hit = self.table_hit(id, span)?;
                    Ok(mk(
                        ExprKind::Unary(ast::UnaryOp::Not, Box::new(hit)),
                        Ty::Bool,
                        span,
                    ))
                }
                "action_run" => err(
                    member.span,
                    "unsupported construct: `action_run` outside `switch`",
                ),
                _ => err(member.span, format!("unknown field `{}`", member.name)),
            };
        }
        let b = self.expr(base, None)?;
        let fields = match &b.ty {
            Ty::Header(h) => &self.headers[*h].fields,
            Ty::Struct(s) => &self.structs[*s].fields,
            Ty::Stack { elem, size } => {
                let (elem, size) = (*elem, *size);
                return match member.name.as_str() {
                    "next" if allow_next => {
                        Ok(mk(ExprKind::StackNext(Box::new(b)), Ty::Header(elem), span))
                    }
                    "next" => err(member.span, "`next` is only allowed in `extract`"),
                    "last" if self.ctx == Ctx::Parser => {
                        Ok(mk(ExprKind::StackLast(Box::new(b)), Ty::Header(elem), span))
                    }
                    "last" => err(member.span, "`last` is only allowed in a parser"),
                    "size" => Ok(mk(ExprKind::Const(size as u128), Ty::Bit(32), span)),
                    _ => err(member.span, format!("unknown field `{}`", member.name)),
                };
            }
            _ => {
                return err(
                    member.span,
                    format!("unknown field `{}` of {}", member.name, self.ty_name(&b.ty)),
                )
            }
        };
        let Some(index) = fields.iter().position(|f| f.name == member.name) else {
            return err(
                member.span,
                format!("unknown field `{}` of {}", member.name, self.ty_name(&b.ty)),
            );
        };
        let ty = fields[index].ty.clone();
        if let (ExprKind::Lookahead, Ty::Header(h)) = (&b.kind, &b.ty) {
            return self.lookahead_field(*h, index, ty, span);
        }
        Ok(mk(
            ExprKind::Field {
                base: Box::new(b),
                index,
            },
            ty,
            span,
        ))
    }

    /// The table a name stands for.
    pub(super) fn table_id(&self, t: &Ident) -> CResult<TableId> {
        match self.lookup(&t.name) {
            Some(Binding::Table(id)) => Ok(*id),
            Some(_) => err(t.span, format!("`{}` is not a table", t.name)),
            None => err(t.span, format!("unknown table `{}`", t.name)),
        }
    }

    /// Hoists the application of a table before the statement and reads whether it hit.
    fn table_hit(&mut self, id: TableId, span: Span) -> CResult<Expr> {
        if self.ctx != Ctx::Apply {
            return err(span, "tables can only be applied in the control's `apply`");
        }
        if self.cond_depth > 0 {
            return err(
                span,
                "unsupported construct: table application in a conditional operand",
            );
        }
        self.hoist.push(Stmt::ApplyTable(id));
        Ok(mk(ExprKind::TableHit(id), Ty::Bool, span))
    }

    pub(super) fn index(
        &mut self,
        base: &ast::Expr,
        index: &ast::Expr,
        span: Span,
    ) -> CResult<Expr> {
        let b = self.expr(base, None)?;
        let Ty::Stack { elem, size } = b.ty else {
            return err(base.span, format!("cannot index {}", self.ty_name(&b.ty)));
        };
        let i = self.expr(index, None)?;
        if !matches!(i.kind, ExprKind::Const(_)) {
            return err(
                index.span,
                "unsupported construct: non-constant stack index",
            );
        }
        let i = self.const_u32(index)?;
        if i >= size {
            return err(
                index.span,
                format!("index {i} out of range for {}", self.ty_name(&b.ty)),
            );
        }
        Ok(mk(
            ExprKind::StackElem {
                base: Box::new(b),
                index: i,
            },
            Ty::Header(elem),
            span,
        ))
    }

    /// A call in an expression.
    pub(super) fn call_expr(
        &mut self,
        callee: &ast::Expr,
        type_args: &[ast::Type],
        args: &[Argument],
        span: Span,
    ) -> CResult<Expr> {
        match &callee.kind {
            ast::ExprKind::Member { base, member } => {
                if let ast::ExprKind::Name(n) = &base.kind {
                    match self.lookup(&n.name) {
                        Some(Binding::Packet { input: true }) if member.name == "lookahead" => {
                            return self.lookahead(type_args, args, span);
                        }
                        Some(Binding::Packet { input: true }) if member.name == "length" => {
                            self.no_args(args, span)?;
                            return Ok(mk(ExprKind::PacketLength, Ty::Bit(32), span));
                        }
                        Some(Binding::Table(_)) if member.name == "apply" => {
                            return err(span, "unsupported construct: `apply()` as a value");
                        }
                        Some(
                            Binding::Packet { .. }
                            | Binding::Table(_)
                            | Binding::Counter(_)
                            | Binding::Action(_),
                        ) => {
                            return self.no_value(member);
                        }
                        _ => {}
                    }
                }
                let b = self.expr(base, None)?;
                match (&b.ty, member.name.as_str()) {
                    (Ty::Header(_), "isValid") => {
                        self.no_args(args, span)?;
                        Ok(mk(ExprKind::IsValid(Box::new(b)), Ty::Bool, span))
                    }
                    _ => self.no_value(member),
                }
            }
            ast::ExprKind::Name(f) => {
                if self.lookup(&f.name).is_some() {
                    return err(f.span, format!("`{}` cannot be called here", f.name));
                }
                let Some(sig) = self.extern_fns.get(&f.name).copied() else {
                    if self.top_actions.contains_key(&f.name) {
                        return err(f.span, format!("`{}` cannot be called here", f.name));
                    }
                    return err(f.span, format!("unknown name `{}`", f.name));
                };
                let Some(which) = extern_fn(&f.name) else {
                    if super::cextern::is_c_extern(&f.name) {
                        return self.c_extern_call(f, sig, args, span);
                    }
                    if matches!(f.name.as_str(), "verify" | "hwxdp_perf_event_output") {
                        return err(f.span, format!("`{}` does not return a value", f.name));
                    }
                    return err(f.span, format!("unknown extern `{}`", f.name));
                };
                let mut params = Vec::new();
                for p in &sig.params {
                    params.push((p.name.name.clone(), self.resolve_type(&p.ty)?));
                }
                let ret = match &sig.ret {
                    Some(t) => self.resolve_type(t)?,
                    None => Ty::Void,
                };
                let args = self.call_args(&params, args, span)?;
                Ok(mk(ExprKind::Extern(which, args), ret, span))
            }
            _ => err(
                callee.span,
                "unsupported construct: call of this expression",
            ),
        }
    }

    fn no_value<T>(&self, member: &Ident) -> CResult<T> {
        if VOID_METHODS.contains(&member.name.as_str()) || member.name == "apply" {
            return err(
                member.span,
                format!("`{}` does not return a value", member.name),
            );
        }
        err(member.span, format!("unknown method `{}`", member.name))
    }

    /// A field of `lookahead<H>()`: the low bits of a lookahead of the header's bits up to the field's end, so no
    /// header is parsed (P4C-XDP and p4c-ebpf programs select on `packet.lookahead<H>().f`).
    fn lookahead_field(&self, h: HeaderId, index: usize, ty: Ty, span: Span) -> CResult<Expr> {
        let Ty::Bit(w) = ty else {
            return err(
                span,
                format!(
                    "unsupported construct: a {} field of `lookahead`",
                    self.ty_name(&ty)
                ),
            );
        };
        let offset: u32 = self.headers[h].fields[..index]
            .iter()
            .map(|f| self.scalar_width(&f.ty).unwrap_or(0))
            .sum();
        let end = offset + w;
        if end > 64 {
            return err(
                span,
                "unsupported construct: a field of `lookahead` ending past its header's 64th bit",
            );
        }
        let whole = mk(ExprKind::Lookahead, Ty::Bit(end), span);
        Ok(mk(
            ExprKind::Slice {
                base: Box::new(whole),
                hi: w - 1,
                lo: 0,
            },
            Ty::Bit(w),
            span,
        ))
    }

    fn lookahead(
        &mut self,
        type_args: &[ast::Type],
        args: &[Argument],
        span: Span,
    ) -> CResult<Expr> {
        self.no_args(args, span)?;
        let [t] = type_args else {
            return err(span, "`lookahead` needs one type argument");
        };
        let ty = self.resolve_type(t)?;
        if !(self.is_scalar(&ty) || matches!(ty, Ty::Header(_))) {
            return err(
                t.span,
                format!("unsupported construct: lookahead of {}", self.ty_name(&ty)),
            );
        }
        Ok(mk(ExprKind::Lookahead, ty, span))
    }
}
