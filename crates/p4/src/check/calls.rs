//! Calls that are statements: methods of the packet, tables, counters, headers and header stacks; actions;
//! `verify` and `hwxdp_perf_event_output`; and the matching of arguments to parameters.

use super::access::extern_fn;
use super::expr::mk;
use super::{err, Access, Binding, CResult, Checker, Ctx};
use crate::ast::{self, Argument, Direction, Ident};
use crate::diag::Span;
use crate::ir::{ActionId, CounterId, Expr, ExprKind, LocalId, Root, Stmt, Ty};

/// A directional parameter of an action.
#[derive(Clone, Debug)]
pub(super) struct DirParam {
    /// The local the action reads and writes.
    local: LocalId,
    /// Its type.
    ty: Ty,
    /// `in`, `out` or `inout`.
    direction: Direction,
}

impl Checker<'_> {
    pub(super) fn call_stmt(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> CResult<()> {
        let ast::ExprKind::Call { callee, args, .. } = &e.kind else {
            return err(e.span, "not a call");
        };
        let span = e.span;
        match &callee.kind {
            ast::ExprKind::Member { base, member } => {
                if let ast::ExprKind::Name(n) = &base.kind {
                    match self.lookup(&n.name).cloned() {
                        Some(Binding::Packet { input }) => {
                            return self.packet_call(input, member, args, span, out)
                        }
                        Some(Binding::Table(id)) if member.name == "apply" => {
                            self.no_args(args, span)?;
                            self.in_apply(span)?;
                            out.push(Stmt::ApplyTable(id));
                            return Ok(());
                        }
                        Some(Binding::Counter(id)) => {
                            return self.count(id, member, args, span, out)
                        }
                        Some(Binding::SubControl(k)) if member.name == "apply" => {
                            return self.apply_sub_control(k, args, span, out);
                        }
                        Some(Binding::Table(_) | Binding::Action(_)) => {
                            return err(member.span, format!("unknown method `{}`", member.name))
                        }
                        _ => {}
                    }
                }
                self.object_call(base, member, args, span, out)
            }
            ast::ExprKind::Name(f) => self.function_call(f, args, span, out),
            _ => err(
                callee.span,
                "unsupported construct: call of this expression",
            ),
        }
    }

    /// Tables and actions run only from the control's `apply`.
    pub(super) fn in_apply(&self, span: Span) -> CResult<()> {
        match self.ctx {
            Ctx::Apply => Ok(()),
            Ctx::Action => err(span, "unsupported construct: applying tables from actions"),
            _ => err(
                span,
                "tables and actions can only be applied in the control's `apply`",
            ),
        }
    }

    fn object_call(
        &mut self,
        base: &ast::Expr,
        member: &Ident,
        args: &[Argument],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> CResult<()> {
        let b = self.expr(base, None)?;
        match (&b.ty, member.name.as_str()) {
            (Ty::Header(_), "setValid" | "setInvalid") => {
                self.writable(base)?;
                self.no_args(args, span)?;
                self.flush(out);
                out.push(if member.name == "setValid" {
                    Stmt::SetValid(b)
                } else {
                    Stmt::SetInvalid(b)
                });
            }
            (Ty::Header(_), "isValid") => {
                self.no_args(args, span)?;
                self.flush(out);
            }
            (Ty::Stack { elem, size }, "push_front" | "pop_front") => {
                let (elem, size) = (*elem, *size);
                self.writable(base)?;
                let [n] = args else {
                    return err(
                        span,
                        format!("wrong number of arguments: expected 1, got {}", args.len()),
                    );
                };
                let n = self.const_u32(&n.value)?;
                self.flush(out);
                let at = |i: u32| {
                    mk(
                        ExprKind::StackElem {
                            base: Box::new(b.clone()),
                            index: i,
                        },
                        Ty::Header(elem),
                        span,
                    )
                };
                let pop = member.name == "pop_front";
                let order: Vec<u32> = if pop {
                    (0..size).collect()
                } else {
                    (0..size).rev().collect()
                };
                for i in order {
                    let from = if pop {
                        i.checked_add(n).filter(|&j| j < size)
                    } else {
                        i.checked_sub(n)
                    };
                    out.push(match from {
                        Some(j) => Stmt::Assign {
                            lhs: at(i),
                            rhs: at(j),
                        },
                        None => Stmt::SetInvalid(at(i)),
                    });
                }
            }
            _ => return err(member.span, format!("unknown method `{}`", member.name)),
        }
        Ok(())
    }

    fn function_call(
        &mut self,
        f: &Ident,
        args: &[Argument],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> CResult<()> {
        match self.lookup(&f.name) {
            Some(Binding::Action(_)) => {}
            Some(_) => return err(f.span, format!("`{}` cannot be called", f.name)),
            None if self.top_actions.contains_key(&f.name) => {}
            None => {
                return match f.name.as_str() {
                    _ if !self.extern_fns.contains_key(&f.name) => {
                        err(f.span, format!("unknown name `{}`", f.name))
                    }
                    "verify" => self.verify(args, span, out),
                    "BPF_PERF_EVENT_OUTPUT" => {
                        if !args.is_empty() {
                            return err(
                                span,
                                format!(
                                    "wrong number of arguments: expected 0, got {}",
                                    args.len()
                                ),
                            );
                        }
                        self.flush(out);
                        out.push(Stmt::PerfPacket);
                        Ok(())
                    }
                    "hwxdp_perf_event_output" => {
                        let [a] = args else {
                            return err(
                                span,
                                format!(
                                    "wrong number of arguments: expected 1, got {}",
                                    args.len()
                                ),
                            );
                        };
                        let x = self.expr(&a.value, None)?;
                        self.flush(out);
                        out.push(Stmt::PerfOutput(x));
                        Ok(())
                    }
                    name if extern_fn(name).is_some() => {
                        err(span, format!("unused result of `{name}`"))
                    }
                    name if super::cextern::is_c_extern(name) => {
                        let sig = self.extern_fns[name];
                        let call = self.c_extern_call(f, sig, args, span)?;
                        self.flush(out);
                        out.push(Stmt::Eval(call));
                        Ok(())
                    }
                    _ => err(f.span, format!("unknown extern `{}`", f.name)),
                };
            }
        }
        // Actions may call actions (P4 has no recursion: an action is bound only after its body is checked).
        if self.ctx != Ctx::Action {
            self.in_apply(span)?;
        }
        let id = self.find_action(f)?;
        let dirs = self.action_dirs.get(&id).cloned().unwrap_or_default();
        let (bound, data) = args.split_at(dirs.len().min(args.len()));
        let named = args.iter().any(|a| a.name.is_some());
        if !dirs.is_empty() && (args.len() < dirs.len() || named) {
            return err(
                span,
                format!(
                    "`{}` takes its {} directional arguments first, by position",
                    f.name,
                    dirs.len()
                ),
            );
        }
        let (copy_in, copy_out) = self.bind_directional(&dirs, bound)?;
        let args = self.action_args(id, data, span)?;
        self.flush(out);
        out.extend(copy_in);
        out.push(Stmt::CallAction { action: id, args });
        out.extend(copy_out);
        Ok(())
    }

    /// A directional parameter of an action: a local bound in the action's scope, read-only when `in`.
    pub(super) fn directional_param(&mut self, p: &ast::Param) -> CResult<DirParam> {
        let ty = self.resolve_type(&p.ty)?;
        if matches!(ty, Ty::Void | Ty::InfInt) {
            return err(
                p.ty.span,
                format!("invalid parameter type {}", self.ty_name(&ty)),
            );
        }
        let local = self.new_local(&p.name, ty.clone());
        let access = if p.direction == Direction::In {
            Access::In
        } else {
            Access::Write
        };
        self.bind(
            &p.name,
            Binding::Var {
                root: Root::Local(local),
                ty: ty.clone(),
                access,
            },
        )?;
        Ok(DirParam {
            local,
            ty,
            direction: p.direction,
        })
    }

    /// The copy-in (`in`, `inout`) and copy-out (`out`, `inout`) assignments of a call's directional arguments;
    /// an `out` or `inout` argument must be assignable.
    pub(super) fn bind_directional(
        &mut self,
        dirs: &[DirParam],
        args: &[Argument],
    ) -> CResult<(Vec<Stmt>, Vec<Stmt>)> {
        let (mut copy_in, mut copy_out) = (Vec::new(), Vec::new());
        for (d, a) in dirs.iter().zip(args) {
            let var = Expr {
                kind: ExprKind::Var(Root::Local(d.local)),
                ty: d.ty.clone(),
                span: a.value.span,
            };
            if d.direction == Direction::In {
                let value = self.expr_as(&a.value, &d.ty)?;
                copy_in.push(Stmt::Assign {
                    lhs: var,
                    rhs: value,
                });
                continue;
            }
            let place = self.lvalue(&a.value)?;
            if place.ty != d.ty {
                return self.mismatch(a.value.span, &d.ty, &place.ty);
            }
            if d.direction == Direction::InOut {
                copy_in.push(Stmt::Assign {
                    lhs: var.clone(),
                    rhs: place.clone(),
                });
            }
            copy_out.push(Stmt::Assign {
                lhs: place,
                rhs: var,
            });
        }
        Ok((copy_in, copy_out))
    }

    /// Arguments of a call of an action, one per action data (directionless) parameter.
    pub(super) fn action_args(
        &mut self,
        id: ActionId,
        args: &[Argument],
        span: Span,
    ) -> CResult<Vec<Expr>> {
        let params = self.action_sigs.get(&id).cloned().unwrap_or_default();
        let values = self.call_args(&params, args, span)?;
        // A struct-typed argument becomes one argument per leaf field, as its parameter became leaf locals.
        Ok(values
            .iter()
            .flat_map(|v| self.leaf_exprs(v).into_iter().map(|(_, leaf)| leaf))
            .collect())
    }

    fn verify(&mut self, args: &[Argument], span: Span, out: &mut Vec<Stmt>) -> CResult<()> {
        if self.ctx != Ctx::Parser {
            return err(span, "`verify` is only allowed in a parser");
        }
        let params = [
            ("check".to_string(), Ty::Bool),
            ("toSignal".to_string(), Ty::Error),
        ];
        let mut a = self.call_args(&params, args, span)?.into_iter();
        let (Some(cond), Some(e)) = (a.next(), a.next()) else {
            return err(span, "wrong number of arguments: expected 2");
        };
        let ExprKind::ErrorMember(error) = e.kind else {
            return err(e.span, "not a constant");
        };
        self.flush(out);
        out.push(Stmt::Verify { cond, error });
        Ok(())
    }

    fn packet_call(
        &mut self,
        input: bool,
        member: &Ident,
        args: &[Argument],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> CResult<()> {
        let one = |args: &[Argument]| match args {
            [a] => Ok(a.value.clone()),
            _ => err(
                span,
                format!("wrong number of arguments: expected 1, got {}", args.len()),
            ),
        };
        match (input, member.name.as_str()) {
            (true, "extract") => {
                if args.len() == 2 {
                    return err(span, "unsupported construct: variable-size extract");
                }
                let a = one(args)?;
                self.writable(&a)?;
                self.allow_next = true;
                let x = self.expr(&a, None);
                self.allow_next = false;
                let x = x?;
                if !matches!(x.ty, Ty::Header(_)) {
                    return err(a.span, format!("cannot extract {}", self.ty_name(&x.ty)));
                }
                self.flush(out);
                out.push(Stmt::Extract(x));
            }
            (true, "advance") => {
                let a = one(args)?;
                let x = self.expr_as(&a, &Ty::Bit(32))?;
                self.flush(out);
                out.push(Stmt::Advance(x));
            }
            (true, "lookahead" | "length") => {
                return err(span, format!("unused result of `{}`", member.name))
            }
            (false, "emit") => {
                let a = one(args)?;
                let x = self.expr(&a, None)?;
                if !self.emittable(&x.ty) {
                    return err(a.span, format!("cannot emit {}", self.ty_name(&x.ty)));
                }
                self.flush(out);
                out.push(Stmt::Emit(x));
            }
            _ => return err(member.span, format!("unknown method `{}`", member.name)),
        }
        Ok(())
    }

    /// A header, a header stack, or a struct of those.
    fn emittable(&self, ty: &Ty) -> bool {
        match ty {
            Ty::Header(_) | Ty::Stack { .. } => true,
            Ty::Struct(s) => self.structs[*s]
                .fields
                .iter()
                .all(|f| self.emittable(&f.ty)),
            _ => false,
        }
    }

    fn count(
        &mut self,
        id: CounterId,
        member: &Ident,
        args: &[Argument],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> CResult<()> {
        if !matches!(self.ctx, Ctx::Apply | Ctx::Action) {
            return err(span, "counters can only be used in a control");
        }
        let mut params = vec![("index".to_string(), Ty::Bit(32))];
        match member.name.as_str() {
            "increment" => {}
            "add" => params.push(("value".to_string(), Ty::Bit(32))),
            _ => return err(member.span, format!("unknown method `{}`", member.name)),
        }
        let mut a = self.call_args(&params, args, span)?.into_iter();
        let Some(index) = a.next() else {
            return err(span, "wrong number of arguments");
        };
        self.flush(out);
        out.push(Stmt::Count {
            counter: id,
            index,
            amount: a.next(),
        });
        Ok(())
    }

    /// Checks that a call has no arguments.
    pub(super) fn no_args(&self, args: &[Argument], span: Span) -> CResult<()> {
        if !args.is_empty() {
            return err(
                span,
                format!("wrong number of arguments: expected 0, got {}", args.len()),
            );
        }
        Ok(())
    }

    /// Arguments matched to parameters (positionally or by name) and converted to their types.
    pub(super) fn call_args(
        &mut self,
        params: &[(String, Ty)],
        args: &[Argument],
        span: Span,
    ) -> CResult<Vec<Expr>> {
        if params.len() != args.len() {
            return err(
                span,
                format!(
                    "wrong number of arguments: expected {}, got {}",
                    params.len(),
                    args.len()
                ),
            );
        }
        let mut out: Vec<Option<Expr>> = vec![None; params.len()];
        for (i, a) in args.iter().enumerate() {
            let slot = match &a.name {
                None => i,
                Some(n) => match params.iter().position(|p| p.0 == n.name) {
                    Some(j) => j,
                    None => return err(n.span, format!("unknown parameter `{}`", n.name)),
                },
            };
            if out[slot].is_some() {
                return err(a.value.span, "argument given twice");
            }
            out[slot] = Some(self.expr_as(&a.value, &params[slot].1)?);
        }
        Ok(out.into_iter().flatten().collect())
    }
}
