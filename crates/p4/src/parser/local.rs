//! Bodies of parsers (locals, states, transitions) and controls (locals, actions, tables, `apply`).

use super::{PResult, Parser};
use crate::ast::{
    ActionRef, Block, Decl, DeclKind, Entry, KeyElement, ParserState, SelectCase, TableProperty,
    TablePropertyKind, Transition, Type,
};

impl Parser<'_> {
    /// `{ locals states }` of a parser.
    pub(super) fn parser_body(&mut self) -> PResult<(Vec<Decl>, Vec<ParserState>)> {
        self.expect_punct("{")?;
        let mut locals = Vec::new();
        let mut states = Vec::new();
        while !self.eat_punct("}") {
            let start = self.span();
            let annotations = self.annotations()?;
            if self.eat_word("state") {
                let name = self.ident()?;
                let (body, transition) = self.state_body()?;
                states.push(ParserState {
                    annotations,
                    name,
                    body,
                    transition,
                    span: start.to(self.prev_span()),
                });
            } else {
                let kind = self.local_decl_kind()?;
                locals.push(Decl {
                    annotations,
                    kind,
                    span: start.to(self.prev_span()),
                });
            }
        }
        Ok((locals, states))
    }

    fn state_body(&mut self) -> PResult<(Vec<crate::ast::Stmt>, Option<Transition>)> {
        self.expect_punct("{")?;
        let mut body = Vec::new();
        let mut transition = None;
        loop {
            if self.eat_punct("}") {
                break;
            }
            if self.eat_word("transition") {
                transition = Some(self.transition()?);
                self.expect_punct("}")?;
                break;
            }
            if self.at_eof() {
                return Err(self.unexpected("`}`"));
            }
            body.push(self.stmt()?);
        }
        Ok((body, transition))
    }

    fn transition(&mut self) -> PResult<Transition> {
        if !self.is_word("select") {
            let state = self.ident()?;
            self.expect_punct(";")?;
            return Ok(Transition::Direct(state));
        }
        let start = self.bump().span;
        self.expect_punct("(")?;
        let exprs = self.comma_list(")", Self::expr)?;
        self.expect_punct("{")?;
        let mut cases = Vec::new();
        while !self.eat_punct("}") {
            let case_start = self.span();
            let keyset = self.keyset()?;
            self.expect_punct(":")?;
            let state = self.ident()?;
            self.expect_punct(";")?;
            cases.push(SelectCase {
                keyset,
                state,
                span: case_start.to(self.prev_span()),
            });
        }
        Ok(Transition::Select {
            exprs,
            cases,
            span: start.to(self.prev_span()),
        })
    }

    /// `{ locals apply { ... } }` of a control.
    pub(super) fn control_body(&mut self) -> PResult<(Vec<Decl>, Block)> {
        self.expect_punct("{")?;
        let mut locals = Vec::new();
        while !self.is_word("apply") {
            let start = self.span();
            let annotations = self.annotations()?;
            let kind = self.local_decl_kind()?;
            locals.push(Decl {
                annotations,
                kind,
                span: start.to(self.prev_span()),
            });
        }
        self.bump();
        let apply = self.block()?;
        self.expect_punct("}")?;
        Ok((locals, apply))
    }

    /// A declaration local to a parser or control: constant, variable, instance, action or table.
    pub(super) fn local_decl_kind(&mut self) -> PResult<DeclKind> {
        if self.eat_word("action") {
            let name = self.ident()?;
            let params = self.params()?;
            let body = self.block()?;
            return Ok(DeclKind::Action { name, params, body });
        }
        if self.eat_word("table") {
            let name = self.ident()?;
            // `table t() { ... }`: the empty parameter list P4C-XDP's programs write (P4-14 style).
            if self.is_punct("(") && self.is_punct_at(1, ")") {
                self.bump();
                self.bump();
            }
            return Ok(DeclKind::Table {
                name,
                properties: self.table_properties()?,
            });
        }
        if self.eat_word("const") {
            let (ty, name, value) = self.const_rest()?;
            return Ok(DeclKind::Const { ty, name, value });
        }
        if !(self.is_ident() || self.at_type_keyword() || self.is_word("error")) {
            return Err(self.unexpected("declaration"));
        }
        let ty = self.ty()?;
        if self.is_punct("(") {
            return self.instance_rest(ty);
        }
        let name = self.ident()?;
        let init = if self.eat_punct("=") {
            Some(self.expr()?)
        } else {
            None
        };
        self.expect_punct(";")?;
        Ok(DeclKind::Variable { ty, name, init })
    }

    /// `(args) name;` after the instantiated type.
    pub(super) fn instance_rest(&mut self, ty: Type) -> PResult<DeclKind> {
        let args = self.args()?;
        let name = self.ident()?;
        self.expect_punct(";")?;
        Ok(DeclKind::Instance { ty, args, name })
    }

    fn table_properties(&mut self) -> PResult<Vec<TableProperty>> {
        self.expect_punct("{")?;
        let mut props = Vec::new();
        while !self.eat_punct("}") {
            let start = self.span();
            let annotations = self.annotations()?;
            let is_const = self.eat_word("const");
            let name = self.any_word()?;
            self.expect_punct("=")?;
            let kind = match name.name.as_str() {
                "key" => TablePropertyKind::Key(self.braced_items(|p| {
                    let start = p.span();
                    let mut annotations = p.annotations()?;
                    let expr = p.expr()?;
                    p.expect_punct(":")?;
                    let match_kind = p.ident()?;
                    // `key : exact @name("k")`: annotations may follow the match kind too.
                    annotations.extend(p.annotations()?);
                    Ok(KeyElement {
                        annotations,
                        expr,
                        match_kind,
                        span: start.to(p.prev_span()),
                    })
                })?),
                "actions" => TablePropertyKind::Actions(self.braced_items(Self::action_ref)?),
                "entries" => TablePropertyKind::Entries(self.braced_items(|p| {
                    let start = p.span();
                    let keyset = p.keyset()?;
                    p.expect_punct(":")?;
                    let action = p.action_ref()?;
                    Ok(Entry {
                        keyset,
                        action,
                        span: start.to(p.prev_span()),
                    })
                })?),
                "default_action" => {
                    let action = self.action_ref()?;
                    self.expect_punct(";")?;
                    TablePropertyKind::DefaultAction(action)
                }
                _ => {
                    let value = self.expr()?;
                    self.expect_punct(";")?;
                    TablePropertyKind::Other { name, value }
                }
            };
            let prop = TableProperty {
                annotations,
                is_const,
                kind,
                span: start.to(self.prev_span()),
            };
            props.push(prop);
        }
        Ok(props)
    }

    /// `{ item; item; }`: every item ends in `;`.
    fn braced_items<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        self.expect_punct("{")?;
        let mut out = Vec::new();
        while !self.eat_punct("}") {
            out.push(item(self)?);
            self.expect_punct(";")?;
        }
        Ok(out)
    }

    fn action_ref(&mut self) -> PResult<ActionRef> {
        let start = self.span();
        let annotations = self.annotations()?;
        let name = self.ident()?;
        let args = if self.is_punct("(") {
            Some(self.args()?)
        } else {
            None
        };
        Ok(ActionRef {
            annotations,
            name,
            args,
            span: start.to(self.prev_span()),
        })
    }
}
