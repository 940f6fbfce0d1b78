//! `value_set<T>(size) name;` among a parser's locals, and the `select` cases that name one (`name: state;`). As
//! p4c-ebpf compiles it, a value set is a hash map the control plane fills; a case matches when the select's keys,
//! packed as the element's fields, are a key of the map.

use super::{err, Binding, CResult, Checker};
use crate::ast::{self, Decl, DeclKind, Keyset, TypeKind};
use crate::diag::Span;
use crate::ir::{Ty, ValueSet};

/// The element type of `value_set<T>`, if `ty` is one.
pub(super) fn value_set_element(ty: &ast::Type) -> Option<&ast::Type> {
    match &ty.kind {
        TypeKind::Named { name, args } if name.name == "value_set" && args.len() == 1 => {
            args.first()
        }
        _ => None,
    }
}

impl<'a> Checker<'a> {
    /// Declares the value set `decl` (a `value_set<T>(size)` instance) and binds its name.
    pub(super) fn declare_value_set(&mut self, decl: &'a Decl, element: &ast::Type) -> CResult<()> {
        let DeclKind::Instance { args, name, .. } = &decl.kind else {
            return err(decl.span, "expected a value_set instance");
        };
        let [size] = args.as_slice() else {
            return err(
                name.span,
                format!(
                    "value_set `{}` takes one argument, its size; got {}",
                    name.name,
                    args.len()
                ),
            );
        };
        let size = self.const_u32(&size.value)?;
        if size == 0 {
            return err(
                size_span(args),
                "the size of a value_set must be at least 1",
            );
        }
        let tys = self.value_set_fields(element)?;
        let fields = tys
            .iter()
            .map(|(n, t)| (n.clone(), self.scalar_width(t).unwrap_or(0)))
            .collect();
        self.value_sets.push((
            ValueSet {
                name: name.name.clone(),
                fields,
                size,
                annotated: super::annotated_name(&decl.annotations),
                span: name.span,
            },
            tys.into_iter().map(|(_, t)| t).collect(),
        ));
        self.bind(name, Binding::ValueSet(self.value_sets.len() - 1))
    }

    /// The fields of a value set's element type, named as p4c-ebpf's generated key struct names them: `field0` for
    /// a scalar, `field0`, `field1`, ... for a tuple, the fields of a struct or header.
    fn value_set_fields(&mut self, element: &ast::Type) -> CResult<Vec<(String, Ty)>> {
        let scalar = |c: &Self, ty: Ty, span: Span| {
            if c.is_scalar(&ty) {
                Ok(ty)
            } else {
                err(
                    span,
                    format!("invalid value_set element of type {}", c.ty_name(&ty)),
                )
            }
        };
        if let TypeKind::Tuple(items) = &element.kind {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let ty = self.resolve_type(item)?;
                out.push((format!("field{i}"), scalar(self, ty, item.span)?));
            }
            return Ok(out);
        }
        let ty = self.resolve_type(element)?;
        let fields = match &ty {
            Ty::Struct(s) => self.structs[*s].fields.clone(),
            Ty::Header(h) => self.headers[*h].fields.clone(),
            _ => return Ok(vec![("field0".into(), scalar(self, ty, element.span)?)]),
        };
        fields
            .into_iter()
            .map(|f| Ok((f.name, scalar(self, f.ty, element.span)?)))
            .collect()
    }

    /// The value set a `select` case's keyset names (`pvs: state;`), checked against the select's key types.
    pub(super) fn case_value_set(&self, keyset: &Keyset, keys: &[Ty]) -> CResult<Option<usize>> {
        let Keyset::Value(ast::Expr {
            kind: ast::ExprKind::Name(n),
            span,
        }) = keyset
        else {
            return Ok(None);
        };
        let Some(Binding::ValueSet(id)) = self.lookup(&n.name) else {
            return Ok(None);
        };
        let (set, tys) = &self.value_sets[*id];
        if tys.len() != keys.len() {
            return err(
                *span,
                format!(
                    "value_set `{}` has {} fields, the select has {} keys",
                    set.name,
                    tys.len(),
                    keys.len()
                ),
            );
        }
        for (field, key) in tys.iter().zip(keys) {
            if field != key {
                return self.mismatch(*span, field, key);
            }
        }
        Ok(Some(*id))
    }
}

fn size_span(args: &[ast::Argument]) -> Span {
    args.first().map_or_else(Span::default, |a| a.value.span)
}
