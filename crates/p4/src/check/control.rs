//! The control and the deparser: locals, actions, tables, `CounterArray` instances and `apply` blocks.

use super::{err, Access, Binding, CResult, Checker, Ctx};
use crate::ast::{self, Argument, Decl, DeclKind, Direction, Ident, TypeKind};
use crate::ir::{Action, ActionId, Control, Counter, Expr, ExprKind, Root, Stmt, Ty};

/// A control instance as its first application inlined it. A later application copies its arguments into the same
/// parameter locals and runs the same statements, so every application shares the instance's tables, counters and
/// actions (one object in P4) and the actions see the parameters of the application that runs them.
#[derive(Clone, Debug)]
pub(crate) struct AppliedControl {
    /// The instance's parameters as locals, in order.
    params: Vec<Expr>,
    /// Its declarations' initialisations, then its `apply` block.
    body: Vec<Stmt>,
}

impl<'a> Checker<'a> {
    /// Lowers the control. Its variable declarations become the first statements of `apply`.
    pub(super) fn lower_control(&mut self, decl: &'a Decl) -> CResult<Control> {
        let DeclKind::Control {
            signature,
            locals,
            apply,
            ..
        } = &decl.kind
        else {
            return err(decl.span, "expected a control");
        };
        self.ctx = Ctx::Control;
        let mut stmts = Vec::new();
        for l in locals {
            self.control_local(l, "", &mut stmts)?;
        }
        self.ctx = Ctx::Apply;
        stmts.extend(self.block(&apply.stmts)?);
        Ok(Control {
            name: signature.name.name.clone(),
            actions: std::mem::take(&mut self.actions),
            tables: std::mem::take(&mut self.tables),
            counters: std::mem::take(&mut self.counters),
            apply: stmts,
        })
    }

    /// One declaration of a control (of an applied instance when `prefix`, `inst_`, is not empty: its tables and
    /// counters are named with it, as their maps are).
    fn control_local(&mut self, l: &'a Decl, prefix: &str, stmts: &mut Vec<Stmt>) -> CResult<()> {
        self.ctx = Ctx::Control;
        if self.local_decl(l, stmts)? {
            return Ok(());
        }
        match &l.kind {
            DeclKind::Action { name, .. } => {
                let id = self.lower_action(l)?;
                self.bind(name, Binding::Action(id))?;
            }
            DeclKind::Table { name, properties } => {
                let mut table = self.lower_table(name, properties)?;
                table.annotated = super::annotated_name(&l.annotations);
                table.name = format!("{prefix}{}", table.name);
                self.tables.push(table);
                self.bind(name, Binding::Table(self.tables.len() - 1))?;
            }
            DeclKind::Instance { ty, name, .. } if self.control_named(ty).is_some() => {
                let decl = self.control_named(ty).unwrap_or(l);
                self.sub_controls
                    .push((format!("{prefix}{}", name.name), decl, None));
                self.bind(name, Binding::SubControl(self.sub_controls.len() - 1))?;
            }
            DeclKind::Instance { ty, args, name } => {
                let mut counter = self.counter(ty, args, name)?;
                counter.name = format!("{prefix}{}", counter.name);
                self.counters.push(counter);
                self.bind(name, Binding::Counter(self.counters.len() - 1))?;
            }
            DeclKind::Function { signature, .. } => {
                return err(
                    signature.name.span,
                    "unsupported construct: function declarations",
                )
            }
            _ => {
                return err(
                    l.span,
                    "unsupported construct: this declaration in a control",
                )
            }
        }
        Ok(())
    }

    /// The control a type names (`inner` of `inner() i;`).
    fn control_named(&self, ty: &ast::Type) -> Option<&'a Decl> {
        let TypeKind::Named { name, .. } = &ty.kind else {
            return None;
        };
        self.blocks
            .get(&name.name)
            .copied()
            .filter(|d| matches!(d.kind, DeclKind::Control { .. }))
    }

    /// `inst.apply(args)` of a control instance: copy-in of the arguments into the instance's parameters, its
    /// declarations and `apply` block inlined, copy-out of its `out` and `inout` parameters.
    pub(super) fn apply_sub_control(
        &mut self,
        k: usize,
        args: &[Argument],
        span: crate::diag::Span,
        out: &mut Vec<Stmt>,
    ) -> CResult<()> {
        self.in_apply(span)?;
        let (inst, decl, applied) = self.sub_controls[k].clone();
        let DeclKind::Control {
            signature,
            locals,
            apply,
            ..
        } = &decl.kind
        else {
            return err(span, "expected a control");
        };
        if signature.params.len() != args.len() {
            return err(
                span,
                format!(
                    "wrong number of arguments: expected {}, got {}",
                    signature.params.len(),
                    args.len()
                ),
            );
        }
        let mut params = Vec::new();
        for (i, (p, a)) in signature.params.iter().zip(args).enumerate() {
            let ty = self.resolve_type(&p.ty)?;
            let value = self.expr_as(&a.value, &ty)?;
            let var = match &applied {
                Some(first) => first.params[i].clone(),
                None => Expr {
                    kind: ExprKind::Var(Root::Local(self.new_local(&p.name, ty.clone()))),
                    ty: ty.clone(),
                    span: p.name.span,
                },
            };
            if p.direction != Direction::Out {
                out.push(Stmt::Assign {
                    lhs: var.clone(),
                    rhs: value.clone(),
                });
            }
            params.push((p, ty, var, value));
        }
        self.flush(out);
        if let Some(first) = applied {
            out.extend(first.body);
            Self::copy_out(params, out);
            return Ok(());
        }
        let prefix = format!("{inst}_");
        self.sub_control_depth += 1;
        let body = self.scoped(|c| {
            for (p, ty, var, _) in &params {
                let ExprKind::Var(root) = var.kind else {
                    return err(p.span, "expected a variable");
                };
                let access = match p.direction {
                    Direction::In => Access::In,
                    _ => Access::Write,
                };
                c.bind(
                    &p.name,
                    Binding::Var {
                        root,
                        ty: ty.clone(),
                        access,
                    },
                )?;
            }
            let mut stmts = Vec::new();
            for l in locals {
                c.control_local(l, &prefix, &mut stmts)?;
            }
            c.ctx = Ctx::Apply;
            stmts.extend(c.block(&apply.stmts)?);
            Ok(stmts)
        });
        self.sub_control_depth -= 1;
        self.ctx = Ctx::Apply;
        let body = body?;
        self.sub_controls[k].2 = Some(AppliedControl {
            params: params.iter().map(|(_, _, var, _)| var.clone()).collect(),
            body: body.clone(),
        });
        out.extend(body);
        Self::copy_out(params, out);
        Ok(())
    }

    /// Copy-out of the `out` and `inout` parameters of an applied control instance into its arguments.
    fn copy_out(params: Vec<(&ast::Param, Ty, Expr, Expr)>, out: &mut Vec<Stmt>) {
        for (p, _, var, value) in params {
            if matches!(p.direction, Direction::Out | Direction::InOut) {
                out.push(Stmt::Assign {
                    lhs: value,
                    rhs: var,
                });
            }
        }
    }

    /// Lowers the deparser's `apply` block (its variable declarations first).
    pub(super) fn lower_deparser(&mut self, decl: &Decl) -> CResult<Vec<Stmt>> {
        let DeclKind::Control { locals, apply, .. } = &decl.kind else {
            return err(decl.span, "expected a control");
        };
        self.ctx = Ctx::Deparser;
        let mut stmts = Vec::new();
        for l in locals {
            if !self.local_decl(l, &mut stmts)? {
                return err(
                    l.span,
                    "unsupported construct: this declaration in a deparser",
                );
            }
        }
        stmts.extend(self.block(&apply.stmts)?);
        Ok(stmts)
    }

    /// Lowers an action declaration and adds it to the control's actions.
    fn lower_action(&mut self, decl: &Decl) -> CResult<ActionId> {
        let DeclKind::Action { name, params, body } = &decl.kind else {
            return err(decl.span, "expected an action");
        };
        let saved = std::mem::replace(&mut self.ctx, Ctx::Action);
        let lowered = self.scoped(|c| {
            let (mut ids, mut sig, mut prefix) = (Vec::new(), Vec::new(), Vec::new());
            let mut dirs = Vec::new();
            for p in params {
                if p.direction != Direction::None {
                    if !sig.is_empty() {
                        return err(
                            p.span,
                            "directional parameters must come before the action data (directionless) ones",
                        );
                    }
                    dirs.push(c.directional_param(p)?);
                    continue;
                }
                let ty = c.resolve_type(&p.ty)?;
                let id = c.new_local(&p.name, ty.clone());
                if c.is_scalar(&ty) {
                    ids.push(id);
                } else if c.scalar_leaves(&ty).is_some() {
                    // A struct of scalars: one action-data local per leaf field, copied into the struct first.
                    let whole = Expr {
                        kind: ExprKind::Var(Root::Local(id)),
                        ty: ty.clone(),
                        span: p.name.span,
                    };
                    for (path, leaf) in c.leaf_exprs(&whole) {
                        let name = Ident {
                            name: format!("{}.{path}", p.name.name),
                            span: p.name.span,
                        };
                        let leaf_id = c.new_local(&name, leaf.ty.clone());
                        let rhs = Expr {
                            kind: ExprKind::Var(Root::Local(leaf_id)),
                            ty: leaf.ty.clone(),
                            span: p.name.span,
                        };
                        prefix.push(Stmt::Assign { lhs: leaf, rhs });
                        ids.push(leaf_id);
                    }
                } else {
                    return err(
                        p.ty.span,
                        format!("unsupported action parameter type {}", c.ty_name(&ty)),
                    );
                }
                sig.push((p.name.name.clone(), ty.clone()));
                c.bind(
                    &p.name,
                    Binding::Var {
                        root: Root::Local(id),
                        ty,
                        access: Access::ActionParam,
                    },
                )?;
            }
            prefix.extend(c.block(&body.stmts)?);
            Ok((ids, sig, prefix, dirs))
        });
        self.ctx = saved;
        let (params, sig, body, dirs) = lowered?;
        self.action_sigs.insert(self.actions.len(), sig);
        self.action_dirs.insert(self.actions.len(), dirs);
        self.actions.push(Action {
            name: name.name.clone(),
            params,
            body,
            annotated: super::annotated_name(&decl.annotations),
            span: name.span,
        });
        Ok(self.actions.len() - 1)
    }

    /// The scalar leaves of a struct type (fields, nested structs' fields, in order), `None` if it holds anything
    /// else (headers, stacks, non-serializable enums, `error`).
    pub(super) fn scalar_leaves(&self, ty: &Ty) -> Option<usize> {
        match ty {
            Ty::Struct(s) => self.structs[*s]
                .fields
                .iter()
                .map(|f| self.scalar_leaves(&f.ty))
                .sum(),
            t if self.is_scalar(t) => Some(1),
            _ => None,
        }
    }

    /// The leaf fields of `e` (a struct of scalars) with their dotted paths: a struct value built in place
    /// (`{1, 2}`) gives its elements, anything else its fields.
    pub(super) fn leaf_exprs(&self, e: &Expr) -> Vec<(String, Expr)> {
        let Ty::Struct(s) = &e.ty else {
            return vec![(String::new(), e.clone())];
        };
        let fields = self.structs[*s].fields.clone();
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            let part = match &e.kind {
                ExprKind::StructInit(es) if es.len() == fields.len() => es[i].clone(),
                _ => Expr {
                    kind: ExprKind::Field {
                        base: Box::new(e.clone()),
                        index: i,
                    },
                    ty: f.ty.clone(),
                    span: e.span,
                },
            };
            for (path, leaf) in self.leaf_exprs(&part) {
                let path = if path.is_empty() {
                    f.name.clone()
                } else {
                    format!("{}.{path}", f.name)
                };
                out.push((path, leaf));
            }
        }
        out
    }

    /// The action a name stands for; a top-level action (`NoAction`) is lowered when first named.
    pub(super) fn find_action(&mut self, a: &Ident) -> CResult<ActionId> {
        match self.lookup(&a.name) {
            Some(Binding::Action(id)) => return Ok(*id),
            Some(_) => return err(a.span, format!("`{}` is not an action", a.name)),
            None => {}
        }
        if let Some(id) = self.top_action_ids.get(&a.name) {
            return Ok(*id);
        }
        let Some(decl) = self.top_actions.get(&a.name).copied() else {
            return err(a.span, format!("unknown action `{}`", a.name));
        };
        let globals = self.scopes[0].clone();
        let saved = std::mem::replace(&mut self.scopes, vec![globals]);
        let id = self.lower_action(decl);
        self.scopes = saved;
        let id = id?;
        self.top_action_ids.insert(a.name.clone(), id);
        Ok(id)
    }

    fn counter(&mut self, ty: &ast::Type, args: &[Argument], name: &Ident) -> CResult<Counter> {
        let TypeKind::Named { name: t, .. } = &ty.kind else {
            return err(ty.span, "unsupported construct: instances of this type");
        };
        if self.blocks.contains_key(&t.name) {
            return err(
                t.span,
                "unsupported construct: parser instances in a control",
            );
        }
        if t.name != "CounterArray" || !self.extern_objs.contains("CounterArray") {
            return err(t.span, format!("unknown extern `{}`", t.name));
        }
        let params = [
            ("max_index".to_string(), Ty::Bit(32)),
            ("sparse".to_string(), Ty::Bool),
        ];
        let span = ty.span.to(name.span);
        let values = self.call_args(&params, args, span)?;
        let (size, sparse) = match (&values[0].kind, &values[1].kind) {
            (ExprKind::Const(n), ExprKind::Bool(b)) => (*n as u32, *b),
            (ExprKind::Const(_), _) => return err(values[1].span, "not a constant"),
            _ => return err(values[0].span, "not a constant"),
        };
        Ok(Counter {
            name: name.name.clone(),
            size,
            sparse,
        })
    }
}
