//! Statements: assignments, declarations, `if`, blocks, `switch` on `action_run`, and calls that are statements
//! (packet, table, counter, header and header-stack methods, actions, `verify`, `BPF_PERF_EVENT_OUTPUT`).

use super::access::{applied_table, extern_fn};
use super::expr::mk;
use super::{err, Access, Binding, CResult, Checker, Ctx};
use crate::ast::{self, Argument, Ident, StmtKind, SwitchCase, SwitchLabel};
use crate::diag::Span;
use crate::ir::{ActionId, CounterId, Expr, ExprKind, Root, Stmt, SwitchArm, Ty};

impl Checker<'_> {
    /// Runs `f` in a new scope.
    pub(super) fn scoped<T>(&mut self, f: impl FnOnce(&mut Self) -> CResult<T>) -> CResult<T> {
        self.push_scope();
        let r = f(self);
        self.pop_scope();
        r
    }

    /// The statements of a block, in a scope of their own.
    pub(super) fn block(&mut self, stmts: &[ast::Stmt]) -> CResult<Vec<Stmt>> {
        self.scoped(|c| {
            let mut out = Vec::new();
            for s in stmts {
                c.stmt(s, &mut out)?;
            }
            Ok(out)
        })
    }

    fn branch(&mut self, s: &ast::Stmt) -> CResult<Vec<Stmt>> {
        self.block(std::slice::from_ref(s))
    }

    /// Moves the statements hoisted out of the expressions just checked to `out`.
    fn flush(&mut self, out: &mut Vec<Stmt>) {
        out.append(&mut self.hoist);
    }

    /// Lowers one statement, appending to `out`.
    pub(super) fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> CResult<()> {
        match &s.kind {
            StmtKind::Assign { lhs, rhs } => {
                let l = self.lvalue(lhs)?;
                let r = self.expr_as(rhs, &l.ty.clone())?;
                self.flush(out);
                out.push(Stmt::Assign { lhs: l, rhs: r });
            }
            StmtKind::Call(e) => self.call_stmt(e, out)?,
            StmtKind::If { cond, then, els } => {
                let c = self.expr_as(cond, &Ty::Bool)?;
                self.flush(out);
                let then = self.branch(then)?;
                let els = match els {
                    Some(e) => self.branch(e)?,
                    None => Vec::new(),
                };
                out.push(Stmt::If { cond: c, then, els });
            }
            StmtKind::Block(b) => out.extend(self.block(&b.stmts)?),
            StmtKind::Switch { expr, cases } => self.switch(expr, cases, out)?,
            StmtKind::Return(Some(e)) => {
                return err(e.span, "unsupported construct: `return` with a value")
            }
            StmtKind::Return(None) if self.ctx == Ctx::Parser => {
                return err(s.span, "unsupported construct: `return` in a parser")
            }
            StmtKind::Return(None) => out.push(Stmt::Return),
            StmtKind::Exit if self.ctx == Ctx::Parser => {
                return err(s.span, "unsupported construct: `exit` in a parser")
            }
            StmtKind::Exit => out.push(Stmt::Exit),
            StmtKind::Empty => {}
            StmtKind::Variable { ty, name, init } => {
                let d = self.declare(ty, name, init.as_ref())?;
                self.flush(out);
                out.push(d);
            }
            StmtKind::Const { ty, name, value } => {
                let v = self.const_value(ty, value)?;
                self.bind(name, Binding::Value(v))?;
            }
        }
        Ok(())
    }

    /// A variable declaration: a new local bound in the current scope after its initialiser is checked.
    pub(super) fn declare(
        &mut self,
        ty: &ast::Type,
        name: &Ident,
        init: Option<&ast::Expr>,
    ) -> CResult<Stmt> {
        let t = self.resolve_type(ty)?;
        if t == Ty::Void {
            return err(ty.span, "invalid variable type void");
        }
        let init = match init {
            Some(e) => Some(self.expr_as(e, &t)?),
            None => None,
        };
        let local = self.new_local(name, t.clone());
        let root = Root::Local(local);
        self.bind(
            name,
            Binding::Var {
                root,
                ty: t,
                access: Access::Write,
            },
        )?;
        Ok(Stmt::Declare { local, init })
    }

    /// Checks that the root of an assigned expression may be written.
    fn writable(&self, e: &ast::Expr) -> CResult<()> {
        match &e.kind {
            ast::ExprKind::Name(id) => match self.lookup(&id.name) {
                Some(Binding::Var {
                    access: Access::Write,
                    ..
                })
                | None => Ok(()),
                Some(Binding::Var {
                    access: Access::In, ..
                }) => err(
                    id.span,
                    format!("cannot assign to `in` parameter `{}`", id.name),
                ),
                Some(Binding::Var {
                    access: Access::ActionParam,
                    ..
                }) => err(
                    id.span,
                    format!("cannot assign to action parameter `{}`", id.name),
                ),
                Some(Binding::Value(_)) => {
                    err(id.span, format!("cannot assign to constant `{}`", id.name))
                }
                Some(_) => err(id.span, format!("cannot assign to `{}`", id.name)),
            },
            ast::ExprKind::Member { base, .. }
            | ast::ExprKind::Index { base, .. }
            | ast::ExprKind::Slice { base, .. } => self.writable(base),
            _ => err(e.span, "cannot assign to this expression"),
        }
    }

    /// An expression that is assigned to.
    pub(super) fn lvalue(&mut self, e: &ast::Expr) -> CResult<Expr> {
        self.writable(e)?;
        let x = self.expr(e, None)?;
        fn ok(x: &Expr) -> bool {
            match &x.kind {
                ExprKind::Var(_) => true,
                ExprKind::Field { base, .. }
                | ExprKind::StackElem { base, .. }
                | ExprKind::Slice { base, .. } => ok(base),
                ExprKind::StackNext(base) => ok(base),
                _ => false,
            }
        }
        if !ok(&x) {
            return err(e.span, "cannot assign to this expression");
        }
        Ok(x)
    }

    fn call_stmt(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> CResult<()> {
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
    fn in_apply(&self, span: Span) -> CResult<()> {
        match self.ctx {
            Ctx::Apply => Ok(()),
            Ctx::Action => err(
                span,
                "unsupported construct: calls of tables or actions from actions",
            ),
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
                    _ => err(f.span, format!("unknown extern `{}`", f.name)),
                };
            }
        }
        self.in_apply(span)?;
        let id = self.find_action(f)?;
        let args = self.action_args(id, args, span)?;
        self.flush(out);
        out.push(Stmt::CallAction { action: id, args });
        Ok(())
    }

    /// Arguments of a call of an action, one per parameter.
    pub(super) fn action_args(
        &mut self,
        id: ActionId,
        args: &[Argument],
        span: Span,
    ) -> CResult<Vec<Expr>> {
        let params: Vec<(String, Ty)> = self.actions[id]
            .params
            .iter()
            .map(|&l| (self.locals[l].name.clone(), self.locals[l].ty.clone()))
            .collect();
        self.call_args(&params, args, span)
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

    fn switch(
        &mut self,
        expr: &ast::Expr,
        cases: &[SwitchCase],
        out: &mut Vec<Stmt>,
    ) -> CResult<()> {
        let t = match &expr.kind {
            ast::ExprKind::Member { base, member } if member.name == "action_run" => {
                applied_table(base)
            }
            _ => None,
        };
        let Some(t) = t else {
            return err(expr.span, "unsupported construct: switch on a value");
        };
        let table = self.table_id(t)?;
        self.in_apply(expr.span)?;
        let mut arms = Vec::new();
        let (mut pending, mut default, mut seen, mut seen_default) =
            (Vec::new(), false, Vec::new(), false);
        for case in cases {
            match &case.label {
                SwitchLabel::Default(sp) => {
                    if seen_default {
                        return err(*sp, "duplicate switch label `default`");
                    }
                    (default, seen_default) = (true, true);
                }
                SwitchLabel::Expr(e) => {
                    let ast::ExprKind::Name(a) = &e.kind else {
                        return err(e.span, "switch label must be an action name");
                    };
                    let id = self.find_action(a)?;
                    if !self.tables[table].actions.contains(&id) {
                        return err(
                            a.span,
                            format!("`{}` is not an action of table `{}`", a.name, t.name),
                        );
                    }
                    if seen.contains(&id) {
                        return err(a.span, format!("duplicate switch label `{}`", a.name));
                    }
                    seen.push(id);
                    pending.push(id);
                }
            }
            if let Some(body) = &case.body {
                let body = self.block(&body.stmts)?;
                let actions = if default {
                    None
                } else {
                    Some(std::mem::take(&mut pending))
                };
                pending.clear();
                default = false;
                arms.push(SwitchArm { actions, body });
            }
        }
        if default || !pending.is_empty() {
            arms.push(SwitchArm {
                actions: if default { None } else { Some(pending) },
                body: Vec::new(),
            });
        }
        out.push(Stmt::SwitchAction { table, arms });
        Ok(())
    }
}
