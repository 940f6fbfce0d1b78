//! The control and the deparser: locals, actions, tables, `CounterArray` instances and `apply` blocks.

use super::{err, Access, Binding, CResult, Checker, Ctx};
use crate::ast::{self, Argument, Decl, DeclKind, Direction, Ident, TablePropertyKind, TypeKind};
use crate::diag::Span;
use crate::ir::{
    Action, ActionId, ConstEntry, Control, Counter, ExprKind, MatchKind, Root, Stmt, Table,
    TableImpl, TableKey, Ty,
};

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
            self.ctx = Ctx::Control;
            match &l.kind {
                DeclKind::Const { ty, name, value } => {
                    let v = self.const_value(ty, value)?;
                    self.bind(name, Binding::Value(v))?;
                }
                DeclKind::Variable { ty, name, init } => {
                    stmts.push(self.declare(ty, name, init.as_ref())?)
                }
                DeclKind::Action { name, .. } => {
                    let id = self.lower_action(l)?;
                    self.bind(name, Binding::Action(id))?;
                }
                DeclKind::Table { name, properties } => {
                    let table = self.lower_table(name, properties)?;
                    self.tables.push(table);
                    self.bind(name, Binding::Table(self.tables.len() - 1))?;
                }
                DeclKind::Instance { ty, args, name } => {
                    let counter = self.counter(ty, args, name)?;
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

    /// Lowers the deparser's `apply` block (its variable declarations first).
    pub(super) fn lower_deparser(&mut self, decl: &Decl) -> CResult<Vec<Stmt>> {
        let DeclKind::Control { locals, apply, .. } = &decl.kind else {
            return err(decl.span, "expected a control");
        };
        self.ctx = Ctx::Deparser;
        let mut stmts = Vec::new();
        for l in locals {
            match &l.kind {
                DeclKind::Const { ty, name, value } => {
                    let v = self.const_value(ty, value)?;
                    self.bind(name, Binding::Value(v))?;
                }
                DeclKind::Variable { ty, name, init } => {
                    stmts.push(self.declare(ty, name, init.as_ref())?)
                }
                _ => {
                    return err(
                        l.span,
                        "unsupported construct: this declaration in a deparser",
                    )
                }
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
            let mut ids = Vec::new();
            for p in params {
                if p.direction != Direction::None {
                    return err(
                        p.span,
                        "unsupported construct: directional action parameters",
                    );
                }
                let ty = c.resolve_type(&p.ty)?;
                if !c.is_scalar(&ty) {
                    return err(
                        p.ty.span,
                        format!("unsupported action parameter type {}", c.ty_name(&ty)),
                    );
                }
                let id = c.new_local(&p.name, ty.clone());
                c.bind(
                    &p.name,
                    Binding::Var {
                        root: Root::Local(id),
                        ty,
                        access: Access::ActionParam,
                    },
                )?;
                ids.push(id);
            }
            Ok((ids, c.block(&body.stmts)?))
        });
        self.ctx = saved;
        let (params, body) = lowered?;
        self.actions.push(Action {
            name: name.name.clone(),
            params,
            body,
            span: name.span,
        });
        Ok(self.actions.len() - 1)
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

    /// Action arguments folded to constants.
    fn const_args(&mut self, id: ActionId, args: &[Argument], span: Span) -> CResult<Vec<u128>> {
        let mut out = Vec::new();
        for e in self.action_args(id, args, span)? {
            out.push(match e.kind {
                ExprKind::Const(v) => v,
                ExprKind::Bool(b) => b as u128,
                _ => return err(e.span, "not a constant"),
            });
        }
        Ok(out)
    }

    fn table_action(
        &mut self,
        r: &ast::ActionRef,
        actions: &[ActionId],
        table: &Ident,
    ) -> CResult<(ActionId, Vec<u128>)> {
        let id = self.find_action(&r.name)?;
        if !actions.contains(&id) {
            return err(
                r.name.span,
                format!(
                    "`{}` is not an action of table `{}`",
                    r.name.name, table.name
                ),
            );
        }
        let args = self.const_args(id, r.args.as_deref().unwrap_or(&[]), r.span)?;
        Ok((id, args))
    }

    fn lower_table(&mut self, name: &Ident, props: &[ast::TableProperty]) -> CResult<Table> {
        let mut t = Table {
            name: name.name.clone(),
            keys: Vec::new(),
            actions: Vec::new(),
            default_action: (0, Vec::new()),
            default_is_const: false,
            entries: Vec::new(),
            size: 1024,
            implementation: TableImpl::Default,
            span: name.span,
        };
        let (mut seen, mut has_actions, mut default, mut entries) = (Vec::new(), false, None, None);
        for p in props {
            let pname = match &p.kind {
                TablePropertyKind::Key(_) => "key",
                TablePropertyKind::Actions(_) => "actions",
                TablePropertyKind::DefaultAction(_) => "default_action",
                TablePropertyKind::Entries(_) => "entries",
                TablePropertyKind::Other { name, .. } => name.name.as_str(),
            };
            if seen.contains(&pname) {
                return err(p.span, format!("duplicate table property `{pname}`"));
            }
            seen.push(pname);
            match &p.kind {
                TablePropertyKind::Key(elems) => {
                    for k in elems {
                        t.keys.push(self.table_key(k, &t.keys)?);
                    }
                }
                TablePropertyKind::Actions(refs) => {
                    has_actions = true;
                    for r in refs {
                        if r.args.as_ref().is_some_and(|a| !a.is_empty()) {
                            return err(
                                r.span,
                                "unsupported construct: action arguments in `actions`",
                            );
                        }
                        let id = self.find_action(&r.name)?;
                        if t.actions.contains(&id) {
                            return err(r.name.span, format!("duplicate action `{}`", r.name.name));
                        }
                        t.actions.push(id);
                    }
                }
                TablePropertyKind::DefaultAction(r) => default = Some((r, p.is_const)),
                TablePropertyKind::Entries(es) => entries = Some(es),
                TablePropertyKind::Other { name: n, value } => match n.name.as_str() {
                    "size" => t.size = self.table_size(value)?,
                    "implementation" => self.implementation(value, &mut t)?,
                    other => return err(n.span, format!("unsupported table property `{other}`")),
                },
            }
        }
        if !has_actions {
            return err(
                name.span,
                format!("missing `actions` in table `{}`", name.name),
            );
        }
        t.default_action = match default {
            Some((r, is_const)) => {
                t.default_is_const = is_const;
                self.table_action(r, &t.actions, name)?
            }
            None if self.top_actions.contains_key("NoAction")
                || self.lookup("NoAction").is_some() =>
            {
                let no = Ident {
                    name: "NoAction".into(),
                    span: name.span,
                };
                (self.find_action(&no)?, Vec::new())
            }
            None => {
                return err(
                    name.span,
                    format!("missing `default_action` in table `{}`", name.name),
                )
            }
        };
        let tys: Vec<Ty> = t.keys.iter().map(|k| k.expr.ty.clone()).collect();
        for e in entries.into_iter().flatten() {
            let keys = self.keysets(&e.keyset, &tys, e.span)?;
            let (action, args) = self.table_action(&e.action, &t.actions, name)?;
            t.entries.push(ConstEntry { keys, action, args });
        }
        Ok(t)
    }

    fn table_key(&mut self, k: &ast::KeyElement, before: &[TableKey]) -> CResult<TableKey> {
        let expr = self.expr(&k.expr, None)?;
        let Some(width) = self.scalar_width(&expr.ty) else {
            return err(
                k.expr.span,
                format!("invalid key type {}", self.ty_name(&expr.ty)),
            );
        };
        let kind = match k.match_kind.name.as_str() {
            "exact" => MatchKind::Exact,
            "lpm" => MatchKind::Lpm,
            "ternary" => MatchKind::Ternary,
            m if self.match_kinds.iter().any(|x| x == m) => {
                return err(k.match_kind.span, format!("unsupported match kind `{m}`"))
            }
            m => return err(k.match_kind.span, format!("unknown match kind `{m}`")),
        };
        if kind == MatchKind::Lpm && before.iter().any(|b| b.kind == MatchKind::Lpm) {
            return err(k.match_kind.span, "at most one `lpm` key per table");
        }
        Ok(TableKey {
            name: crate::pretty_expr(&k.expr),
            expr,
            kind,
            width,
        })
    }

    fn table_size(&mut self, value: &ast::Expr) -> CResult<u32> {
        let n = self.const_u32(value)?;
        if n == 0 {
            return err(value.span, "invalid table size 0");
        }
        Ok(n)
    }

    fn implementation(&mut self, value: &ast::Expr, t: &mut Table) -> CResult<()> {
        let ast::ExprKind::Call { callee, args, .. } = &value.kind else {
            return err(value.span, "unsupported table implementation");
        };
        let ast::ExprKind::Name(n) = &callee.kind else {
            return err(value.span, "unsupported table implementation");
        };
        t.implementation = match n.name.as_str() {
            "array_table" if self.extern_objs.contains("array_table") => TableImpl::Array,
            "hash_table" if self.extern_objs.contains("hash_table") => TableImpl::Hash,
            other => return err(n.span, format!("unknown extern `{other}`")),
        };
        let [a] = args.as_slice() else {
            return err(
                value.span,
                format!("wrong number of arguments: expected 1, got {}", args.len()),
            );
        };
        t.size = self.table_size(&a.value)?;
        if t.implementation == TableImpl::Array
            && !(t.keys.len() == 1 && t.keys[0].kind == MatchKind::Exact)
        {
            return err(n.span, "`array_table` needs exactly one `exact` key");
        }
        Ok(())
    }

    fn counter(&mut self, ty: &ast::Type, args: &[Argument], name: &Ident) -> CResult<Counter> {
        let TypeKind::Named { name: t, .. } = &ty.kind else {
            return err(ty.span, "unsupported construct: instances of this type");
        };
        if self.blocks.contains_key(&t.name) {
            return err(t.span, "unsupported construct: parser or control instances");
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
