//! The architecture models: which blocks `main` instantiates, and whether their parameters are those of the model's
//! parser and control types (`xdp_parse`, `xdp_switch`, `xdp_deparse`; `parse`, `filter`).

use super::{err, Access, Binding, CResult, Checker, Ctx};
use crate::ast::{Decl, DeclKind, Direction, Signature, TypeKind};
use crate::ir::{Arch, Control, Parser, Root, Stmt, StructId, Ty};

/// What a model's parameter must be.
#[derive(Clone, Copy)]
enum Want {
    /// `packet_in`.
    PacketIn,
    /// `packet_out`.
    PacketOut,
    /// The headers type `H`.
    Headers,
    /// A struct of the model, e.g. `xdp_input`.
    Named(&'static str, Root),
    /// `bool`.
    Bool(Root),
}

const PARSE: &[(Direction, Want)] = &[
    (Direction::None, Want::PacketIn),
    (Direction::Out, Want::Headers),
];
const SWITCH: &[(Direction, Want)] = &[
    (Direction::InOut, Want::Headers),
    (Direction::In, Want::Named("xdp_input", Root::XdpInput)),
    (Direction::Out, Want::Named("xdp_output", Root::XdpOutput)),
];
const DEPARSE: &[(Direction, Want)] = &[
    (Direction::In, Want::Headers),
    (Direction::None, Want::PacketOut),
];
const FILTER: &[(Direction, Want)] = &[
    (Direction::InOut, Want::Headers),
    (Direction::Out, Want::Bool(Root::Accept)),
];

fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::None => "no direction",
        Direction::In => "`in`",
        Direction::Out => "`out`",
        Direction::InOut => "`inout`",
    }
}

/// The lowered blocks of the model.
type Lowered = (StructId, Parser, Control, Vec<Stmt>);

impl<'a> Checker<'a> {
    /// The model `main` instantiates and the parser and controls it is given.
    pub(super) fn main_parts(&self, main: &'a Decl) -> CResult<(Arch, Vec<&'a Decl>)> {
        let DeclKind::Instance { ty, args, .. } = &main.kind else {
            return err(main.span, "`main` must be an instance");
        };
        let TypeKind::Named { name: pkg, .. } = &ty.kind else {
            return err(ty.span, "`main` must instantiate a package");
        };
        let (arch, n) = match pkg.name.as_str() {
            "xdp" if self.packages.contains("xdp") => (Arch::Xdp, 3),
            "ebpfFilter" if self.packages.contains("ebpfFilter") => (Arch::EbpfFilter, 2),
            p if self.packages.contains(p) => {
                return err(pkg.span, format!("unsupported package `{p}`"))
            }
            p => return err(pkg.span, format!("unknown package `{p}`")),
        };
        if args.len() != n {
            return err(
                ty.span,
                format!(
                    "wrong number of arguments: expected {n}, got {}",
                    args.len()
                ),
            );
        }
        let mut parts = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let crate::ast::ExprKind::Call {
                callee, args: ctor, ..
            } = &a.value.kind
            else {
                return err(a.value.span, "expected an instance of a parser or control");
            };
            let crate::ast::ExprKind::Name(b) = &callee.kind else {
                return err(callee.span, "expected an instance of a parser or control");
            };
            let Some(decl) = self.blocks.get(&b.name) else {
                return err(b.span, format!("unknown name `{}`", b.name));
            };
            if !ctor.is_empty() {
                return err(a.value.span, "unsupported construct: constructor arguments");
            }
            let is_parser = matches!(decl.kind, DeclKind::Parser { .. });
            if (i == 0) != is_parser {
                let what = if i == 0 { "parser" } else { "control" };
                return err(b.span, format!("`{}` is not a {what}", b.name));
            }
            parts.push(*decl);
        }
        Ok((arch, parts))
    }

    /// Checks the blocks against the model and lowers them.
    pub(super) fn lower_arch(&mut self, arch: Arch, parts: &[&'a Decl]) -> CResult<Lowered> {
        let mut headers = None;
        let (control_spec, deparse) = match arch {
            Arch::Xdp => (SWITCH, parts.get(2).copied()),
            Arch::EbpfFilter => (FILTER, None),
        };
        let parser = self.scoped(|c| {
            c.bind_params(parts[0], PARSE, &mut headers)?;
            c.ctx = Ctx::Parser;
            c.lower_parser(parts[0])
        })?;
        let control = self.scoped(|c| {
            c.bind_params(parts[1], control_spec, &mut headers)?;
            c.lower_control(parts[1])
        })?;
        let deparser = match deparse {
            Some(d) => self.scoped(|c| {
                c.bind_params(d, DEPARSE, &mut headers)?;
                c.lower_deparser(d)
            })?,
            None => Vec::new(),
        };
        let Some(h) = headers else {
            return err(parts[0].span, "missing headers parameter");
        };
        Ok((h, parser, control, deparser))
    }

    fn bind_params(
        &mut self,
        decl: &Decl,
        spec: &[(Direction, Want)],
        headers: &mut Option<StructId>,
    ) -> CResult<()> {
        let (sig, ctor): (&Signature, _) = match &decl.kind {
            DeclKind::Parser {
                signature,
                ctor_params,
                ..
            }
            | DeclKind::Control {
                signature,
                ctor_params,
                ..
            } => (signature, ctor_params),
            _ => return err(decl.span, "expected a parser or control"),
        };
        if let Some(p) = ctor.first() {
            return err(p.span, "unsupported construct: constructor parameters");
        }
        if let Some(t) = sig.type_params.first() {
            return err(
                t.span,
                "unsupported construct: generic parsers and controls",
            );
        }
        if sig.params.len() != spec.len() {
            let msg = format!(
                "wrong number of parameters: expected {}, got {}",
                spec.len(),
                sig.params.len()
            );
            return err(sig.name.span, msg);
        }
        for (p, (dir, want)) in sig.params.iter().zip(spec) {
            if p.direction != *dir {
                let msg = format!(
                    "direction mismatch: expected {}, got {}",
                    dir_name(*dir),
                    dir_name(p.direction)
                );
                return err(p.span, msg);
            }
            let access = if *dir == Direction::In {
                Access::In
            } else {
                Access::Write
            };
            let binding = match want {
                Want::PacketIn | Want::PacketOut => {
                    let name = if matches!(want, Want::PacketIn) {
                        "packet_in"
                    } else {
                        "packet_out"
                    };
                    match &p.ty.kind {
                        TypeKind::Named { name: n, args } if n.name == name && args.is_empty() => {}
                        _ => return err(p.ty.span, format!("type mismatch: expected {name}")),
                    }
                    Binding::Packet {
                        input: matches!(want, Want::PacketIn),
                    }
                }
                Want::Headers => {
                    let ty = self.resolve_type(&p.ty)?;
                    let s =
                        match ty {
                            Ty::Struct(s)
                                if self.structs[s]
                                    .fields
                                    .iter()
                                    .all(|f| matches!(f.ty, Ty::Header(_) | Ty::Stack { .. })) =>
                            {
                                s
                            }
                            _ => return err(
                                p.ty.span,
                                "the headers type must be a struct of headers and header stacks",
                            ),
                        };
                    match *headers {
                        Some(h) if h != s => return self.mismatch(p.ty.span, &Ty::Struct(h), &ty),
                        _ => *headers = Some(s),
                    }
                    Binding::Var {
                        root: Root::Headers,
                        ty,
                        access,
                    }
                }
                Want::Named(n, root) => {
                    let ty = self.resolve_type(&p.ty)?;
                    let want_ty = self.types.get(*n).cloned().unwrap_or(Ty::Void);
                    if ty != want_ty {
                        return err(p.ty.span, format!("type mismatch: expected {n}"));
                    }
                    Binding::Var {
                        root: *root,
                        ty,
                        access,
                    }
                }
                Want::Bool(root) => {
                    let ty = self.resolve_type(&p.ty)?;
                    if ty != Ty::Bool {
                        return self.mismatch(p.ty.span, &Ty::Bool, &ty);
                    }
                    Binding::Var {
                        root: *root,
                        ty,
                        access,
                    }
                }
            };
            self.bind(&p.name, binding)?;
        }
        Ok(())
    }
}
