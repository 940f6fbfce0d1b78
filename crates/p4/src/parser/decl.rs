//! Top-level declarations: types, constants, externs, parser/control/package types and definitions, instances.

use super::{PResult, Parser};
use crate::ast::{Decl, DeclKind, EnumMember, Field, Ident, Method, Signature};

impl Parser<'_> {
    /// One top-level declaration with its annotations.
    pub(super) fn top_decl(&mut self) -> PResult<Decl> {
        let start = self.span();
        let annotations = self.annotations()?;
        let kind = self.top_decl_kind()?;
        Ok(Decl {
            annotations,
            kind,
            span: start.to(self.prev_span()),
        })
    }

    fn top_decl_kind(&mut self) -> PResult<DeclKind> {
        if self.eat_word("header") {
            let name = self.ident()?;
            return Ok(DeclKind::Header {
                name,
                fields: self.fields()?,
            });
        }
        if self.eat_word("header_union") {
            let name = self.ident()?;
            return Ok(DeclKind::HeaderUnion {
                name,
                fields: self.fields()?,
            });
        }
        if self.eat_word("struct") {
            let name = self.ident()?;
            return Ok(DeclKind::Struct {
                name,
                fields: self.fields()?,
            });
        }
        if self.eat_word("typedef") {
            let ty = self.ty()?;
            let name = self.ident()?;
            self.expect_punct(";")?;
            return Ok(DeclKind::Typedef { ty, name });
        }
        if self.eat_word("enum") {
            return self.enum_decl();
        }
        if self.is_word("error") && self.is_punct_at(1, "{") {
            self.bump();
            return Ok(DeclKind::Error {
                members: self.member_list()?,
            });
        }
        if self.is_word("match_kind") && self.is_punct_at(1, "{") {
            self.bump();
            return Ok(DeclKind::MatchKind {
                members: self.member_list()?,
            });
        }
        if self.eat_word("extern") {
            return self.extern_decl();
        }
        if self.eat_word("parser") {
            return self.parser_decl();
        }
        if self.eat_word("control") {
            return self.control_decl();
        }
        if self.eat_word("package") {
            let signature = self.signature(None)?;
            self.expect_punct(";")?;
            return Ok(DeclKind::PackageType { signature });
        }
        if self.is_word("action") || self.is_word("const") {
            return self.local_decl_kind();
        }
        if !(self.is_ident() || self.at_type_keyword() || self.is_word("error")) {
            return Err(self.unexpected("declaration"));
        }
        let ty = self.ty()?;
        if self.is_punct("(") {
            return self.instance_rest(ty);
        }
        let name = self.ident()?;
        let type_params = self.type_params()?;
        let params = self.params()?;
        let body = self.block()?;
        Ok(DeclKind::Function {
            signature: Signature {
                ret: Some(ty),
                name,
                type_params,
                params,
            },
            body,
        })
    }

    /// `name<T>(params)` with the return type already read (or none).
    pub(super) fn signature(&mut self, ret: Option<crate::ast::Type>) -> PResult<Signature> {
        let name = self.ident()?;
        let type_params = self.type_params()?;
        let params = self.params()?;
        Ok(Signature {
            ret,
            name,
            type_params,
            params,
        })
    }

    /// `{ T name; ... }` of a header, header union or struct.
    fn fields(&mut self) -> PResult<Vec<Field>> {
        self.expect_punct("{")?;
        let mut fields = Vec::new();
        while !self.eat_punct("}") {
            let start = self.span();
            let annotations = self.annotations()?;
            let ty = self.ty()?;
            let name = self.ident()?;
            self.expect_punct(";")?;
            fields.push(Field {
                annotations,
                ty,
                name,
                span: start.to(self.prev_span()),
            });
        }
        Ok(fields)
    }

    /// `{ A, B, C }` of `error` and `match_kind`.
    fn member_list(&mut self) -> PResult<Vec<Ident>> {
        self.expect_punct("{")?;
        self.comma_list("}", Self::ident)
    }

    fn enum_decl(&mut self) -> PResult<DeclKind> {
        let repr = if self.is_word("bit") || self.is_word("int") {
            Some(self.ty()?)
        } else {
            None
        };
        let name = self.ident()?;
        self.expect_punct("{")?;
        let members = self.comma_list("}", |p| {
            let name = p.ident()?;
            let value = if p.eat_punct("=") {
                Some(p.expr()?)
            } else {
                None
            };
            Ok(EnumMember { name, value })
        })?;
        Ok(DeclKind::Enum {
            repr,
            name,
            members,
        })
    }

    fn extern_decl(&mut self) -> PResult<DeclKind> {
        let object_head = self.attempt("extern object", |p| {
            let name = p.ident()?;
            let type_params = p.type_params()?;
            p.expect_punct("{")?;
            Ok((name, type_params))
        });
        let Some((name, type_params)) = object_head else {
            let ret = self.ty()?;
            let signature = self.signature(Some(ret))?;
            self.expect_punct(";")?;
            return Ok(DeclKind::ExternFunction { signature });
        };
        let mut methods = Vec::new();
        while !self.eat_punct("}") {
            let start = self.span();
            let annotations = self.annotations()?;
            let is_abstract = self.eat_word("abstract");
            let is_constructor = self.is_word(&name.name) && self.is_punct_at(1, "(");
            let signature = if is_constructor {
                let name = self.ident()?;
                Signature {
                    ret: None,
                    name,
                    type_params: Vec::new(),
                    params: self.params()?,
                }
            } else {
                let ret = self.ty()?;
                self.signature(Some(ret))?
            };
            self.expect_punct(";")?;
            methods.push(Method {
                annotations,
                is_abstract,
                signature,
                span: start.to(self.prev_span()),
            });
        }
        Ok(DeclKind::ExternObject {
            name,
            type_params,
            methods,
        })
    }

    fn parser_decl(&mut self) -> PResult<DeclKind> {
        let signature = self.signature(None)?;
        if self.eat_punct(";") {
            return Ok(DeclKind::ParserType { signature });
        }
        let ctor_params = if self.is_punct("(") {
            self.params()?
        } else {
            Vec::new()
        };
        let (locals, states) = self.parser_body()?;
        Ok(DeclKind::Parser {
            signature,
            ctor_params,
            locals,
            states,
        })
    }

    fn control_decl(&mut self) -> PResult<DeclKind> {
        let signature = self.signature(None)?;
        if self.eat_punct(";") {
            return Ok(DeclKind::ControlType { signature });
        }
        let ctor_params = if self.is_punct("(") {
            self.params()?
        } else {
            Vec::new()
        };
        let (locals, apply) = self.control_body()?;
        Ok(DeclKind::Control {
            signature,
            ctor_params,
            locals,
            apply,
        })
    }
}
