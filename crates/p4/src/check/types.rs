//! Top-level declarations: typedefs, headers, structs, enums, errors, match kinds, constants, and the names of
//! externs, packages, parsers, controls and actions for later; type resolution.

use super::{err, Binding, CResult, Checker};
use crate::ast::{Decl, DeclKind, Field, Type, TypeKind};
use crate::ir::{EnumDef, ExprKind, FieldDef, HeaderDef, StructDef, Ty};
use crate::lexer::MAX_WIDTH;

/// Structs nested deeper than this (a field of a struct type whose own field is a struct ...) are refused.
const MAX_STRUCT_DEPTH: u32 = 32;
/// A struct holding more than this many scalar fields, headers and stack elements, counting nested structs in full,
/// is refused.
const MAX_STRUCT_MEMBERS: u64 = 1 << 16;

impl<'a> Checker<'a> {
    /// Records one top-level declaration.
    pub(super) fn top_decl(&mut self, decl: &'a Decl) -> CResult<()> {
        match &decl.kind {
            DeclKind::Header { name, fields } => {
                let fields = self.fields(fields, true)?;
                self.new_type(name, Ty::Header(self.headers.len()))?;
                self.headers.push(HeaderDef {
                    name: name.name.clone(),
                    fields,
                });
            }
            DeclKind::Struct { name, fields } => {
                let fields = self.fields(fields, false)?;
                self.struct_extent(name, &fields)?;
                self.new_type(name, Ty::Struct(self.structs.len()))?;
                self.structs.push(StructDef {
                    name: name.name.clone(),
                    fields,
                });
            }
            DeclKind::HeaderUnion { name, .. } => {
                return err(name.span, "unsupported construct: header unions");
            }
            DeclKind::Typedef { ty, name } => {
                let ty = self.resolve_type(ty)?;
                self.new_type(name, ty)?;
            }
            DeclKind::Enum {
                repr,
                name,
                members,
            } => self.enum_decl(repr.as_ref(), name, members)?,
            DeclKind::Error { members } => {
                for m in members {
                    if !self.errors.contains(&m.name) {
                        self.errors.push(m.name.clone());
                    }
                }
            }
            DeclKind::MatchKind { members } => {
                for m in members {
                    self.match_kinds.push(m.name.clone());
                }
            }
            DeclKind::Const { ty, name, value } => {
                let v = self.const_value(ty, value)?;
                self.bind(name, Binding::Value(v))?;
            }
            DeclKind::ExternObject { name, .. } => {
                self.extern_objs.insert(name.name.clone());
            }
            DeclKind::ExternFunction { signature } => {
                self.extern_fns
                    .insert(signature.name.name.clone(), signature);
            }
            DeclKind::ParserType { .. } | DeclKind::ControlType { .. } => {}
            DeclKind::PackageType { signature } => {
                self.packages.insert(signature.name.name.clone());
            }
            DeclKind::Parser { signature, .. } | DeclKind::Control { signature, .. } => {
                if self.blocks.contains_key(&signature.name.name) {
                    return err(
                        signature.name.span,
                        format!("duplicate name `{}`", signature.name.name),
                    );
                }
                self.blocks.insert(signature.name.name.clone(), decl);
            }
            DeclKind::Action { name, .. } => {
                if self.top_actions.insert(name.name.clone(), decl).is_some() {
                    return err(name.span, format!("duplicate name `{}`", name.name));
                }
            }
            DeclKind::Function { signature, .. } => {
                return err(
                    signature.name.span,
                    "unsupported construct: function declarations",
                );
            }
            DeclKind::Instance { name, .. } if name.name == "main" => {
                if self.main.is_some() {
                    return err(name.span, "duplicate name `main`");
                }
                self.main = Some(decl);
            }
            DeclKind::Instance { name, .. } => {
                return err(
                    name.span,
                    "unsupported construct: instances other than `main` at top level",
                );
            }
            DeclKind::Variable { name, .. } => {
                return err(name.span, "unsupported construct: global variables");
            }
            DeclKind::Table { name, .. } => {
                return err(name.span, "unsupported construct: tables outside a control");
            }
        }
        Ok(())
    }

    /// Records how deeply a new struct nests structs and how many members it holds in full, and refuses it past
    /// [`MAX_STRUCT_DEPTH`] or [`MAX_STRUCT_MEMBERS`]: code generation walks nested structs recursively and emits
    /// code per header, and structs that hold the previous one twice would double both with every declaration.
    fn struct_extent(&mut self, name: &crate::ast::Ident, fields: &[FieldDef]) -> CResult<()> {
        let mut depth = 1;
        let mut members: u64 = 0;
        for f in fields {
            members = members.saturating_add(match &f.ty {
                Ty::Struct(inner) => {
                    let (d, m) = self.struct_extents[*inner];
                    depth = depth.max(d + 1);
                    m
                }
                Ty::Stack { size, .. } => u64::from(*size),
                _ => 1,
            });
        }
        if depth > MAX_STRUCT_DEPTH {
            return err(
                name.span,
                format!(
                    "struct `{}` nests structs deeper than {MAX_STRUCT_DEPTH} levels",
                    name.name
                ),
            );
        }
        if members > MAX_STRUCT_MEMBERS {
            return err(
                name.span,
                format!(
                    "struct `{}` holds more than {MAX_STRUCT_MEMBERS} fields and headers (nested structs and stacks counted in full)",
                    name.name
                ),
            );
        }
        self.struct_extents.push((depth, members));
        Ok(())
    }

    fn new_type(&mut self, name: &crate::ast::Ident, ty: Ty) -> CResult<()> {
        if self.types.insert(name.name.clone(), ty).is_some() {
            return err(name.span, format!("duplicate type `{}`", name.name));
        }
        Ok(())
    }

    /// The fields of a header (only scalar field types) or struct.
    fn fields(&mut self, fields: &[Field], header: bool) -> CResult<Vec<FieldDef>> {
        let mut out: Vec<FieldDef> = Vec::new();
        for f in fields {
            let ty = self.resolve_type(&f.ty)?;
            if header && !self.is_scalar(&ty) {
                return err(
                    f.ty.span,
                    format!("unsupported header field type {}", self.ty_name(&ty)),
                );
            }
            if matches!(ty, Ty::Void) {
                return err(f.ty.span, "unsupported field type void");
            }
            if out.iter().any(|o| o.name == f.name.name) {
                return err(f.name.span, format!("duplicate field `{}`", f.name.name));
            }
            out.push(FieldDef {
                name: f.name.name.clone(),
                ty,
            });
        }
        Ok(out)
    }

    /// `bit<N>`, `int<N>`, `bool` or a serializable enum: what headers, keys and selects hold.
    pub(super) fn is_scalar(&self, ty: &Ty) -> bool {
        self.scalar_width(ty).is_some()
    }

    /// The width of a scalar type (see [`Ty::scalar_width`]).
    pub(super) fn scalar_width(&self, ty: &Ty) -> Option<u32> {
        match ty {
            Ty::Bool => Some(1),
            Ty::Bit(w) | Ty::Int(w) => Some(*w),
            Ty::Enum(e) => self.enums[*e].repr_width,
            _ => None,
        }
    }

    fn enum_decl(
        &mut self,
        repr: Option<&Type>,
        name: &crate::ast::Ident,
        members: &[crate::ast::EnumMember],
    ) -> CResult<()> {
        let repr_ty = match repr {
            None => None,
            Some(t) => match self.resolve_type(t)? {
                ty @ (Ty::Bit(_) | Ty::Int(_)) => Some(ty),
                other => {
                    return err(
                        t.span,
                        format!("invalid enum representation {}", self.ty_name(&other)),
                    )
                }
            },
        };
        let mut names: Vec<String> = Vec::new();
        let mut values = Vec::new();
        for (i, m) in members.iter().enumerate() {
            if names.contains(&m.name.name) {
                return err(m.name.span, format!("duplicate name `{}`", m.name.name));
            }
            names.push(m.name.name.clone());
            match (&repr_ty, &m.value) {
                (Some(ty), Some(v)) => {
                    let e = self.expr(v, Some(ty))?;
                    let e = self.coerce(e, ty)?;
                    values.push(self.const_int(&e)?);
                }
                (Some(_), None) => {
                    return err(m.name.span, "missing value of serializable enum member");
                }
                (None, Some(v)) => {
                    return err(v.span, "unexpected value of a non-serializable enum member")
                }
                (None, None) => values.push(i as u128),
            }
        }
        let repr_width = repr_ty.map(|t| match t {
            Ty::Bit(w) | Ty::Int(w) => w,
            _ => 0,
        });
        self.new_type(name, Ty::Enum(self.enums.len()))?;
        self.enums.push(EnumDef {
            name: name.name.clone(),
            members: names,
            repr_width,
            values,
        });
        Ok(())
    }

    /// Folds a constant declaration's value to a constant expression of its type.
    pub(super) fn const_value(
        &mut self,
        ty: &Type,
        value: &crate::ast::Expr,
    ) -> CResult<crate::ir::Expr> {
        let ty = self.resolve_type(ty)?;
        let e = self.expr(value, Some(&ty))?;
        let e = self.coerce(e, &ty)?;
        match e.kind {
            ExprKind::Const(_)
            | ExprKind::Bool(_)
            | ExprKind::EnumMember(_)
            | ExprKind::ErrorMember(_) => Ok(e),
            _ => err(value.span, "not a constant"),
        }
    }

    /// The value of a folded integer constant.
    pub(super) fn const_int(&self, e: &crate::ir::Expr) -> CResult<u128> {
        match e.kind {
            ExprKind::Const(v) => Ok(v),
            _ => err(e.span, "not a constant"),
        }
    }

    /// A type as written to a resolved type.
    pub(super) fn resolve_type(&mut self, t: &Type) -> CResult<Ty> {
        Ok(match &t.kind {
            TypeKind::Bool => Ty::Bool,
            TypeKind::Error => Ty::Error,
            TypeKind::Void => Ty::Void,
            TypeKind::Bit(w) | TypeKind::Int(w) if *w == 0 || *w > MAX_WIDTH => {
                return err(
                    t.span,
                    format!("width {w} is not between 1 and {MAX_WIDTH}"),
                )
            }
            TypeKind::Bit(w) => Ty::Bit(*w),
            TypeKind::Int(w) => Ty::Int(*w),
            TypeKind::Varbit(_) => return err(t.span, "unsupported construct: varbit"),
            TypeKind::String => return err(t.span, "unsupported construct: strings"),
            TypeKind::MatchKind => return err(t.span, "unsupported construct: match_kind values"),
            TypeKind::DontCare => return err(t.span, "unsupported construct: type inference"),
            TypeKind::Tuple(_) => return err(t.span, "unsupported construct: tuples"),
            TypeKind::Named { name, args } => {
                if !args.is_empty() {
                    return err(t.span, "unsupported construct: generic types");
                }
                match self.types.get(&name.name) {
                    Some(ty) => ty.clone(),
                    None => return err(name.span, format!("unknown type `{}`", name.name)),
                }
            }
            TypeKind::Stack { elem, size } => {
                let elem_ty = self.resolve_type(elem)?;
                let Ty::Header(h) = elem_ty else {
                    return err(
                        elem.span,
                        format!("header stack of non-header type {}", self.ty_name(&elem_ty)),
                    );
                };
                let n = self.expr(size, None)?;
                let n = self.const_int(&n)?;
                if n == 0 || n > 4096 {
                    return err(size.span, format!("invalid header stack size {n}"));
                }
                Ty::Stack {
                    elem: h,
                    size: n as u32,
                }
            }
        })
    }
}
