//! The AST printed back as P4 source. Parsing the output again gives the same tree up to spans, which the golden
//! tests check on every example; includes appear expanded, so the output stands alone.

mod expr;

pub use expr::{pretty_expr, pretty_type};

use crate::ast::{
    Block, Decl, DeclKind, Field, ParserState, Program, Stmt, StmtKind, SwitchLabel, TableProperty,
    TablePropertyKind, Transition,
};
use expr::{annotations, args, keyset, params, signature};

/// The whole program as P4 source, one declaration after another.
pub fn pretty(program: &Program) -> String {
    let mut w = Writer::default();
    for d in &program.decls {
        w.decl(d);
    }
    w.out
}

/// One declaration as P4 source.
pub fn pretty_decl(decl: &Decl) -> String {
    let mut w = Writer::default();
    w.decl(decl);
    w.out
}

#[derive(Default)]
struct Writer {
    out: String,
    indent: usize,
}

impl Writer {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Writes `head {`, the body one level deeper, then `}`.
    fn braced(&mut self, head: &str, body: impl FnOnce(&mut Self)) {
        if head.is_empty() {
            self.line("{");
        } else {
            self.line(&format!("{head} {{"));
        }
        self.indent += 1;
        body(self);
        self.indent -= 1;
        self.line("}");
    }

    fn decl(&mut self, d: &Decl) {
        let ann = annotations(&d.annotations);
        match &d.kind {
            DeclKind::Header { name, fields } => {
                self.fields(&format!("{ann}header {}", name.name), fields)
            }
            DeclKind::HeaderUnion { name, fields } => {
                self.fields(&format!("{ann}header_union {}", name.name), fields)
            }
            DeclKind::Struct { name, fields } => {
                self.fields(&format!("{ann}struct {}", name.name), fields)
            }
            DeclKind::Typedef { ty, name } => {
                self.line(&format!("{ann}typedef {} {};", pretty_type(ty), name.name))
            }
            DeclKind::Const { ty, name, value } => self.line(&format!(
                "{ann}const {} {} = {};",
                pretty_type(ty),
                name.name,
                pretty_expr(value)
            )),
            DeclKind::Variable { ty, name, init } => {
                let init = init
                    .as_ref()
                    .map(|e| format!(" = {}", pretty_expr(e)))
                    .unwrap_or_default();
                self.line(&format!("{ann}{} {}{init};", pretty_type(ty), name.name))
            }
            DeclKind::Enum {
                repr,
                name,
                members,
            } => {
                let repr = repr
                    .as_ref()
                    .map(|t| format!("{} ", pretty_type(t)))
                    .unwrap_or_default();
                self.braced(&format!("{ann}enum {repr}{}", name.name), |w| {
                    for (i, m) in members.iter().enumerate() {
                        let value = m
                            .value
                            .as_ref()
                            .map(|v| format!(" = {}", pretty_expr(v)))
                            .unwrap_or_default();
                        let comma = if i + 1 < members.len() { "," } else { "" };
                        w.line(&format!("{}{value}{comma}", m.name.name));
                    }
                });
            }
            DeclKind::Error { members } | DeclKind::MatchKind { members } => {
                let kw = if matches!(d.kind, DeclKind::Error { .. }) {
                    "error"
                } else {
                    "match_kind"
                };
                let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
                self.line(&format!("{ann}{kw} {{ {} }}", names.join(", ")));
            }
            DeclKind::ExternObject {
                name,
                type_params,
                methods,
            } => {
                let tps = if type_params.is_empty() {
                    String::new()
                } else {
                    format!(
                        "<{}>",
                        type_params
                            .iter()
                            .map(|t| t.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                self.braced(&format!("{ann}extern {}{tps}", name.name), |w| {
                    for m in methods {
                        let abs = if m.is_abstract { "abstract " } else { "" };
                        w.line(&format!(
                            "{}{abs}{};",
                            annotations(&m.annotations),
                            signature(&m.signature)
                        ));
                    }
                });
            }
            DeclKind::ExternFunction { signature: s } => {
                self.line(&format!("{ann}extern {};", signature(s)))
            }
            DeclKind::ParserType { signature: s } => {
                self.line(&format!("{ann}parser {};", signature(s)))
            }
            DeclKind::ControlType { signature: s } => {
                self.line(&format!("{ann}control {};", signature(s)))
            }
            DeclKind::PackageType { signature: s } => {
                self.line(&format!("{ann}package {};", signature(s)))
            }
            DeclKind::Parser {
                signature: s,
                ctor_params,
                locals,
                states,
            } => {
                let ctor = if ctor_params.is_empty() {
                    String::new()
                } else {
                    params(ctor_params)
                };
                self.braced(&format!("{ann}parser {}{ctor}", signature(s)), |w| {
                    locals.iter().for_each(|l| w.decl(l));
                    states.iter().for_each(|st| w.state(st));
                });
            }
            DeclKind::Control {
                signature: s,
                ctor_params,
                locals,
                apply,
            } => {
                let ctor = if ctor_params.is_empty() {
                    String::new()
                } else {
                    params(ctor_params)
                };
                self.braced(&format!("{ann}control {}{ctor}", signature(s)), |w| {
                    locals.iter().for_each(|l| w.decl(l));
                    w.block("apply", apply);
                });
            }
            DeclKind::Action {
                name,
                params: ps,
                body,
            } => self.block(&format!("{ann}action {}{}", name.name, params(ps)), body),
            DeclKind::Function { signature: s, body } => {
                self.block(&format!("{ann}{}", signature(s)), body)
            }
            DeclKind::Table { name, properties } => {
                self.braced(&format!("{ann}table {}", name.name), |w| {
                    properties.iter().for_each(|p| w.table_property(p));
                })
            }
            DeclKind::Instance { ty, args: a, name } => self.line(&format!(
                "{ann}{}({}) {};",
                pretty_type(ty),
                args(a),
                name.name
            )),
        }
    }

    fn fields(&mut self, head: &str, fields: &[Field]) {
        self.braced(head, |w| {
            for f in fields {
                w.line(&format!(
                    "{}{} {};",
                    annotations(&f.annotations),
                    pretty_type(&f.ty),
                    f.name.name
                ));
            }
        });
    }

    fn state(&mut self, st: &ParserState) {
        self.braced(
            &format!("{}state {}", annotations(&st.annotations), st.name.name),
            |w| {
                st.body.iter().for_each(|s| w.stmt(s));
                match &st.transition {
                    None => {}
                    Some(Transition::Direct(to)) => w.line(&format!("transition {};", to.name)),
                    Some(Transition::Select { exprs, cases, .. }) => {
                        let sel: Vec<String> = exprs.iter().map(pretty_expr).collect();
                        w.braced(&format!("transition select({})", sel.join(", ")), |w| {
                            for c in cases {
                                w.line(&format!("{} : {};", keyset(&c.keyset), c.state.name));
                            }
                        });
                    }
                }
            },
        );
    }

    fn table_property(&mut self, p: &TableProperty) {
        let head = format!(
            "{}{}",
            annotations(&p.annotations),
            if p.is_const { "const " } else { "" }
        );
        let action = |a: &crate::ast::ActionRef| {
            let bound = a
                .args
                .as_ref()
                .map(|x| format!("({})", args(x)))
                .unwrap_or_default();
            format!("{}{}{bound}", annotations(&a.annotations), a.name.name)
        };
        match &p.kind {
            TablePropertyKind::Key(keys) => self.braced(&format!("{head}key ="), |w| {
                for k in keys {
                    let ann = annotations(&k.annotations);
                    w.line(&format!(
                        "{ann}{} : {};",
                        pretty_expr(&k.expr),
                        k.match_kind.name
                    ));
                }
            }),
            TablePropertyKind::Actions(actions) => self.braced(&format!("{head}actions ="), |w| {
                actions
                    .iter()
                    .for_each(|a| w.line(&format!("{};", action(a))));
            }),
            TablePropertyKind::DefaultAction(a) => {
                self.line(&format!("{head}default_action = {};", action(a)))
            }
            TablePropertyKind::Entries(entries) => self.braced(&format!("{head}entries ="), |w| {
                for e in entries {
                    w.line(&format!("{} : {};", keyset(&e.keyset), action(&e.action)));
                }
            }),
            TablePropertyKind::Other { name, value } => {
                self.line(&format!("{head}{} = {};", name.name, pretty_expr(value)))
            }
        }
    }

    fn block(&mut self, head: &str, b: &Block) {
        self.braced(head, |w| b.stmts.iter().for_each(|s| w.stmt(s)));
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign { lhs, rhs } => {
                self.line(&format!("{} = {};", pretty_expr(lhs), pretty_expr(rhs)))
            }
            StmtKind::Call(e) => self.line(&format!("{};", pretty_expr(e))),
            StmtKind::If { cond, then, els } => {
                self.branch(&format!("if ({})", pretty_expr(cond)), then);
                if let Some(els) = els {
                    self.branch("else", els);
                }
            }
            StmtKind::Block(b) => self.block("", b),
            StmtKind::Switch { expr, cases } => {
                self.braced(&format!("switch ({})", pretty_expr(expr)), |w| {
                    for c in cases {
                        let label = match &c.label {
                            SwitchLabel::Default(_) => "default".to_string(),
                            SwitchLabel::Expr(e) => pretty_expr(e),
                        };
                        match &c.body {
                            Some(b) => w.block(&format!("{label}:"), b),
                            None => w.line(&format!("{label}:")),
                        }
                    }
                })
            }
            StmtKind::Return(None) => self.line("return;"),
            StmtKind::Return(Some(e)) => self.line(&format!("return {};", pretty_expr(e))),
            StmtKind::Exit => self.line("exit;"),
            StmtKind::Empty => self.line(";"),
            StmtKind::Variable { ty, name, init } => {
                let init = init
                    .as_ref()
                    .map(|e| format!(" = {}", pretty_expr(e)))
                    .unwrap_or_default();
                self.line(&format!("{} {}{init};", pretty_type(ty), name.name));
            }
            StmtKind::Const { ty, name, value } => self.line(&format!(
                "const {} {} = {};",
                pretty_type(ty),
                name.name,
                pretty_expr(value)
            )),
        }
    }

    /// `head { ... }` for a block branch, `head` then the statement one level deeper otherwise.
    fn branch(&mut self, head: &str, s: &Stmt) {
        if let StmtKind::Block(b) = &s.kind {
            self.block(head, b);
        } else {
            self.line(head);
            self.indent += 1;
            self.stmt(s);
            self.indent -= 1;
        }
    }
}
