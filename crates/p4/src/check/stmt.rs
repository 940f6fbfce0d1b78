//! Statements: assignments, declarations, `if`, blocks, `switch` on `action_run`, and calls that are statements
//! (packet, table, counter, header and header-stack methods, actions, `verify`, `hwxdp_perf_event_output`).

use super::access::applied_table;
use super::{err, Access, Binding, CResult, Checker, Ctx};
use crate::ast::{self, Ident, StmtKind, SwitchCase, SwitchLabel};
use crate::ir::{Expr, ExprKind, Root, Stmt, SwitchArm, Ty};

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
    pub(super) fn flush(&mut self, out: &mut Vec<Stmt>) {
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
            StmtKind::Return(None) if self.sub_control_depth > 0 && self.ctx == Ctx::Apply => {
                return err(
                    s.span,
                    "unsupported construct: `return` in an applied control instance",
                )
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

    /// A parser's, control's or deparser's own `const` or variable declaration: binds the constant, or appends
    /// the variable's [`Stmt::Declare`] to `stmts`. False (nothing done) for any other declaration.
    pub(super) fn local_decl(&mut self, decl: &ast::Decl, stmts: &mut Vec<Stmt>) -> CResult<bool> {
        match &decl.kind {
            ast::DeclKind::Const { ty, name, value } => {
                let v = self.const_value(ty, value)?;
                self.bind(name, Binding::Value(v))?;
            }
            ast::DeclKind::Variable { ty, name, init } => {
                stmts.push(self.declare(ty, name, init.as_ref())?)
            }
            _ => return Ok(false),
        }
        Ok(true)
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
    pub(super) fn writable(&self, e: &ast::Expr) -> CResult<()> {
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
