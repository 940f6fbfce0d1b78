//! Tables: keys and match kinds, the actions list, default action, constant entries, size and implementation.

use super::{err, CResult, Checker};
use crate::ast::{self, Argument, Ident, TablePropertyKind};
use crate::diag::Span;
use crate::ir::{ActionId, ConstEntry, ExprKind, MatchKind, Table, TableImpl, TableKey, Ty};

impl Checker<'_> {
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
        // The directional arguments come first; the table binds them as its `actions` list does.
        let dirs = self.action_dirs.get(&id).map_or(0, Vec::len);
        let given = r.args.as_deref().unwrap_or(&[]);
        if given.len() < dirs {
            return err(
                r.span,
                format!(
                    "`{}` takes its {dirs} directional arguments first",
                    r.name.name
                ),
            );
        }
        let args = self.const_args(id, &given[dirs..], r.span)?;
        Ok((id, args))
    }

    /// The directional arguments an `actions` list gives action `id` (`a(h.f)`), as the table's copy-in and
    /// copy-out statements; an action without directional parameters takes none there.
    fn bind_table_action(
        &mut self,
        id: ActionId,
        r: &ast::ActionRef,
        t: &mut Table,
    ) -> CResult<()> {
        let dirs = self.action_dirs.get(&id).cloned().unwrap_or_default();
        let given = r.args.as_deref().unwrap_or(&[]);
        if dirs.is_empty() {
            if !given.is_empty() {
                return err(
                    r.span,
                    format!(
                        "`{}` has no directional parameters to bind in `actions`",
                        r.name.name
                    ),
                );
            }
            return Ok(());
        }
        if given.len() != dirs.len() || given.iter().any(|a| a.name.is_some()) {
            return err(
                r.span,
                format!(
                    "`{}` in `actions` takes its {} directional arguments, by position",
                    r.name.name,
                    dirs.len()
                ),
            );
        }
        let (copy_in, copy_out) = self.bind_directional(&dirs, given)?;
        t.bindings.push((id, copy_in, copy_out));
        Ok(())
    }

    pub(super) fn lower_table(
        &mut self,
        name: &Ident,
        props: &[ast::TableProperty],
    ) -> CResult<Table> {
        let mut t = Table {
            name: name.name.clone(),
            keys: Vec::new(),
            actions: Vec::new(),
            default_action: (0, Vec::new()),
            default_is_const: false,
            entries: Vec::new(),
            bindings: Vec::new(),
            size: 1024,
            implementation: TableImpl::Default,
            annotated: None,
            span: name.span,
        };
        let (mut seen, mut has_actions, mut default, mut entries) = (Vec::new(), false, None, None);
        let mut implementation = None;
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
                        let id = self.find_action(&r.name)?;
                        self.bind_table_action(id, r, &mut t)?;
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
                    "implementation" => implementation = Some(self.implementation(value, &mut t)?),
                    other => return err(n.span, format!("unsupported table property `{other}`")),
                },
            }
        }
        if let Some(span) = implementation {
            Self::implementation_fits_key(&t, span)?;
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
            annotated: super::annotated_name(&k.annotations),
        })
    }

    fn table_size(&mut self, value: &ast::Expr) -> CResult<u32> {
        let n = self.const_u32(value)?;
        if n == 0 {
            return err(value.span, "invalid table size 0");
        }
        Ok(n)
    }

    /// Sets the table's implementation and size; the span of the extern's name.
    fn implementation(&mut self, value: &ast::Expr, t: &mut Table) -> CResult<Span> {
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
        Ok(n.span)
    }

    /// Refuses an implementation docs/p4.md has no map for with the table's key (whichever property comes
    /// first), so that [`Table::storage`] holds for every checked table; `span` is the extern's name. As p4c-ebpf
    /// compiles them, a keyless `array_table` only runs its default action, and a `hash_table` with an `lpm` or
    /// `ternary` key is stored as tables of those keys are (an LPM trie, ranked slots), with the size it gives.
    fn implementation_fits_key(t: &Table, span: Span) -> CResult<()> {
        let all_exact = t.keys.iter().all(|k| k.kind == MatchKind::Exact);
        match t.implementation {
            TableImpl::Array if !(t.keys.len() <= 1 && all_exact) => {
                err(span, "`array_table` needs one `exact` key or none")
            }
            _ => Ok(()),
        }
    }
}
