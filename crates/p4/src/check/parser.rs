//! The parser: its locals, its states (`start` first), transitions and `select` keysets; keysets of table entries
//! are folded by the same code.

use super::{err, CResult, Checker, Ctx};
use crate::ast::{self, Decl, DeclKind, Keyset, ParserState};
use crate::diag::Span;
use crate::ir::{ExprKind, KeysetElem, Parser, SelectCase, Stmt, Target, Transition, Ty};
use std::collections::HashMap;

impl<'a> Checker<'a> {
    /// Lowers the parser; its variable declarations run at the beginning of `start`. Parser instances
    /// (`sub() s;`) are inlined where a state applies them ([`super::subparser`]).
    pub(super) fn lower_parser(&mut self, decl: &'a Decl) -> CResult<Parser> {
        let DeclKind::Parser {
            signature,
            locals,
            states,
            ..
        } = &decl.kind
        else {
            return err(decl.span, "expected a parser");
        };
        self.ctx = Ctx::Parser;
        let mut prelude = Vec::new();
        let mut instances = HashMap::new();
        for l in locals {
            if self.local_decl(l, &mut prelude)? {
                continue;
            }
            let DeclKind::Instance { ty, name, .. } = &l.kind else {
                return err(
                    l.span,
                    "unsupported construct: this declaration in a parser",
                );
            };
            if let Some(element) = super::valueset::value_set_element(ty) {
                self.declare_value_set(l, element)?;
            } else if let Some(sub) = self.parser_named(ty) {
                instances.insert(name.name.clone(), sub);
            } else {
                return err(
                    name.span,
                    "unsupported construct: this instance in a parser",
                );
            }
        }
        let order = Self::state_order(states, &signature.name)?;
        let mut out = self.lower_states(&order, &instances)?;
        if let Some(first) = out.first_mut() {
            prelude.append(&mut first.stmts);
            first.stmts = prelude;
        }
        Ok(Parser {
            name: signature.name.name.clone(),
            states: out,
            value_sets: self.value_sets.iter().map(|(v, _)| v.clone()).collect(),
        })
    }

    /// The states with `start` first; duplicates and states named `accept` or `reject` are errors.
    pub(super) fn state_order<'s>(
        states: &'s [ParserState],
        parser: &ast::Ident,
    ) -> CResult<Vec<&'s ParserState>> {
        let Some(start) = states.iter().find(|s| s.name.name == "start") else {
            return err(parser.span, "missing state `start`");
        };
        let mut order: Vec<&ParserState> = vec![start];
        for s in states {
            let n = &s.name.name;
            if n == "accept"
                || n == "reject"
                || (order.iter().any(|o| o.name.name == *n) && !std::ptr::eq(s, start))
            {
                return err(s.name.span, format!("duplicate state `{n}`"));
            }
            if !std::ptr::eq(s, start) {
                order.push(s);
            }
        }
        Ok(order)
    }

    /// The statements of a state's body (or a part of it).
    pub(super) fn state_stmts(&mut self, body: &[ast::Stmt]) -> CResult<Vec<Stmt>> {
        let mut stmts = Vec::new();
        for st in body {
            self.stmt(st, &mut stmts)?;
        }
        Ok(stmts)
    }

    /// A state's transition; `resolve` gives the target of a state name (`accept` and `reject` as it says).
    pub(super) fn transition(
        &mut self,
        t: &Option<ast::Transition>,
        resolve: &dyn Fn(&ast::Ident) -> CResult<Target>,
    ) -> CResult<Transition> {
        Ok(match t {
            None => Transition::Direct(Target::Reject),
            Some(ast::Transition::Direct(t)) => Transition::Direct(resolve(t)?),
            Some(ast::Transition::Select { exprs, cases, .. }) => {
                let mut keys = Vec::new();
                for e in exprs {
                    let k = self.expr(e, None)?;
                    if !(self.is_scalar(&k.ty) || matches!(k.ty, Ty::Enum(_) | Ty::Error)) {
                        return err(
                            e.span,
                            format!("invalid select key of type {}", self.ty_name(&k.ty)),
                        );
                    }
                    keys.push(k);
                }
                let tys: Vec<Ty> = keys.iter().map(|k| k.ty.clone()).collect();
                let mut out = Vec::new();
                for c in cases {
                    let value_set = self.case_value_set(&c.keyset, &tys)?;
                    let keysets = match value_set {
                        Some(_) => vec![KeysetElem::Any; tys.len()],
                        None => self.keysets(&c.keyset, &tys, c.span)?,
                    };
                    out.push(SelectCase {
                        keysets,
                        value_set,
                        target: resolve(&c.state)?,
                    });
                }
                Transition::Select { keys, cases: out }
            }
        })
    }

    pub(super) fn keysets(
        &mut self,
        ks: &Keyset,
        tys: &[Ty],
        span: Span,
    ) -> CResult<Vec<KeysetElem>> {
        // `{ v1, v2 }` (a list expression, as in some `const entries`) is the tuple `(v1, v2)`.
        let listed;
        let ks = match ks {
            Keyset::Value(ast::Expr {
                kind: ast::ExprKind::List(items),
                span,
            }) => {
                listed = Keyset::Tuple(items.iter().cloned().map(Keyset::Value).collect(), *span);
                &listed
            }
            other => other,
        };
        match ks {
            Keyset::Default(_) | Keyset::DontCare(_) => Ok(vec![KeysetElem::Any; tys.len()]),
            Keyset::Tuple(items, sp) => {
                if items.len() != tys.len() {
                    let msg = format!(
                        "wrong number of keyset values: expected {}, got {}",
                        tys.len(),
                        items.len()
                    );
                    return err(*sp, msg);
                }
                items
                    .iter()
                    .zip(tys)
                    .map(|(k, t)| self.keyset_elem(k, t))
                    .collect()
            }
            single => {
                if tys.len() != 1 {
                    return err(
                        span,
                        format!(
                            "wrong number of keyset values: expected {}, got 1",
                            tys.len()
                        ),
                    );
                }
                Ok(vec![self.keyset_elem(single, &tys[0])?])
            }
        }
    }

    fn keyset_elem(&mut self, k: &Keyset, ty: &Ty) -> CResult<KeysetElem> {
        Ok(match k {
            Keyset::Default(_) | Keyset::DontCare(_) => KeysetElem::Any,
            Keyset::Value(e) => KeysetElem::Value(self.key_const(e, ty)?),
            Keyset::Mask { value, mask } => KeysetElem::Mask {
                value: self.key_const(value, ty)?,
                mask: self.key_const(mask, ty)?,
            },
            Keyset::Range { lo, hi } => KeysetElem::Range {
                lo: self.key_const(lo, ty)?,
                hi: self.key_const(hi, ty)?,
            },
            Keyset::Tuple(_, sp) => return err(*sp, "unexpected tuple keyset"),
        })
    }

    /// A keyset value: a constant of the key's type.
    fn key_const(&mut self, e: &ast::Expr, ty: &Ty) -> CResult<u128> {
        let x = self.expr_as(e, ty)?;
        match x.kind {
            ExprKind::Const(v) => Ok(v),
            ExprKind::Bool(b) => Ok(b as u128),
            ExprKind::EnumMember(i) | ExprKind::ErrorMember(i) => Ok(i as u128),
            _ => err(e.span, "not a constant"),
        }
    }
}
