//! Parser instances (sub-parsers, `sub() s;` among a parser's locals): each `s.apply(packet, args);` statement of a
//! state splits the state there. The part before it copies the arguments into the instance's parameters (copy-in of
//! `in`, `inout` and directionless ones) and goes to a copy of the sub-parser's states; their `accept` goes to a
//! continuation state that copies `out` and `inout` parameters back and runs the rest of the state; their `reject`
//! rejects the packet. Each application gets its own copy of the states and of the parameters.

use super::{err, Binding, CResult, Checker};
use crate::ast::{self, Argument, Decl, DeclKind, Direction, ParserState, StmtKind, TypeKind};
use crate::diag::Span;
use crate::ir::{Expr, ExprKind, Root, State, Stmt, Target, Transition};
use std::collections::HashMap;

/// One `inst.apply(args);` statement of a state.
struct Apply<'a, 's> {
    /// Its index in the state's body.
    at: usize,
    /// The instance's name.
    inst: String,
    /// The sub-parser.
    sub: &'a Decl,
    /// The arguments.
    args: &'s [Argument],
    /// The statement.
    span: Span,
    /// Where the copy of the sub-parser's states starts, and how many there are.
    base: usize,
    /// The continuation state.
    cont: usize,
}

/// How deeply parser instances may nest (an instance's parser applying an instance of its own, ...): far beyond any
/// real program, and it ends a parser that instantiates itself.
const MAX_INSTANCE_DEPTH: u32 = 32;

/// How many states a parser may have once its instances are copied in: applying an instance twice per level doubles
/// them, so a few levels of a hostile program would otherwise exhaust the memory.
const MAX_STATES: usize = 65_536;

/// The error when the copies of instances pass [`MAX_STATES`].
fn too_many_states<T>(span: Span) -> CResult<T> {
    err(
        span,
        format!("parser instances expand to more than {MAX_STATES} states"),
    )
}

/// Where one parser's copy of states goes: its first state's index among all states, where its `accept` goes, and
/// the prefix of its states' names (`inst$` for an instance, nested ones `outer$inner$`).
struct Frame {
    base: usize,
    accept: Target,
    prefix: String,
    depth: u32,
}

/// `inst` and the arguments of `inst.apply(args);`.
fn apply_call(s: &ast::Stmt) -> Option<(&str, &[Argument])> {
    let StmtKind::Call(call) = &s.kind else {
        return None;
    };
    let ast::ExprKind::Call { callee, args, .. } = &call.kind else {
        return None;
    };
    let ast::ExprKind::Member { base, member } = &callee.kind else {
        return None;
    };
    match &base.kind {
        ast::ExprKind::Name(n) if member.name == "apply" => Some((n.name.as_str(), args)),
        _ => None,
    }
}

impl<'a> Checker<'a> {
    /// The parser a type names (`sub` of `sub() s;`).
    pub(super) fn parser_named(&self, ty: &ast::Type) -> Option<&'a Decl> {
        let TypeKind::Named { name, .. } = &ty.kind else {
            return None;
        };
        self.blocks
            .get(&name.name)
            .copied()
            .filter(|d| matches!(d.kind, DeclKind::Parser { .. }))
    }

    /// The IR states of a parser's `order`ed states (start first), with the copies of the applied instances'
    /// states after them.
    pub(super) fn lower_states<'s>(
        &mut self,
        order: &[&'s ParserState],
        instances: &HashMap<String, &'a Decl>,
    ) -> CResult<Vec<State>> {
        let top = Frame {
            base: 0,
            accept: Target::Accept,
            prefix: String::new(),
            depth: 0,
        };
        self.lower_states_in(order, instances, &top)
    }

    /// The parser instances among a sub-parser's locals, by name.
    fn instances_of(&self, locals: &'a [Decl]) -> HashMap<String, &'a Decl> {
        let mut out = HashMap::new();
        for l in locals {
            if let DeclKind::Instance { ty, name, .. } = &l.kind {
                if let Some(sub) = self.parser_named(ty) {
                    out.insert(name.name.clone(), sub);
                }
            }
        }
        out
    }

    /// How many states one copy of parser `sub` takes: its own, and per application of an instance of its own, that
    /// instance's copy and a continuation state.
    fn instance_size(&self, sub: &'a Decl, depth: u32) -> CResult<usize> {
        let DeclKind::Parser {
            states,
            signature,
            locals,
            ..
        } = &sub.kind
        else {
            return err(sub.span, "expected a parser");
        };
        if depth > MAX_INSTANCE_DEPTH {
            return err(
                signature.name.span,
                format!("parser instances nest deeper than {MAX_INSTANCE_DEPTH} levels"),
            );
        }
        let instances = self.instances_of(locals);
        let mut n = Self::state_order(states, &signature.name)?.len();
        for s in states {
            for st in &s.body {
                if let Some(&inner) = apply_call(st).and_then(|(inst, _)| instances.get(inst)) {
                    n += self.instance_size(inner, depth + 1)? + 1;
                    if n > MAX_STATES {
                        return too_many_states(st.span);
                    }
                }
            }
        }
        Ok(n)
    }

    /// The states of one parser (the top one, or a copy of an instance's) at `frame`, split where they apply
    /// instances, with the copies of those instances after them.
    fn lower_states_in<'s>(
        &mut self,
        order: &[&'s ParserState],
        instances: &HashMap<String, &'a Decl>,
        frame: &Frame,
    ) -> CResult<Vec<State>> {
        let names: Vec<String> = order.iter().map(|s| s.name.name.clone()).collect();
        let mut total = order.len();
        let mut plans: Vec<Vec<Apply<'a, 's>>> = Vec::new();
        for s in order {
            let mut applies = Vec::new();
            for (at, st) in s.body.iter().enumerate() {
                let Some((inst, args)) = apply_call(st) else {
                    continue;
                };
                let Some(&sub) = instances.get(inst) else {
                    continue;
                };
                let n = self.instance_size(sub, frame.depth + 1)?;
                applies.push(Apply {
                    at,
                    inst: inst.to_string(),
                    sub,
                    args,
                    span: st.span,
                    base: total,
                    cont: total + n,
                });
                total += n + 1;
                if total > MAX_STATES {
                    return too_many_states(st.span);
                }
            }
            plans.push(applies);
        }
        let (base, accept) = (frame.base, frame.accept);
        let resolve = |t: &ast::Ident| -> CResult<Target> {
            match t.name.as_str() {
                "accept" => Ok(accept),
                "reject" => Ok(Target::Reject),
                n => match names.iter().position(|x| x == n) {
                    Some(i) => Ok(Target::State(base + i)),
                    None => err(t.span, format!("unknown state `{n}`")),
                },
            }
        };
        let mut out: Vec<Option<State>> = vec![None; total];
        for (i, (s, applies)) in order.iter().zip(&plans).enumerate() {
            self.scoped(|c| c.split_state(i, s, applies, &resolve, &mut out, frame))?;
        }
        out.into_iter()
            .map(|s| s.map_or_else(|| err(Span::default(), "parser state left out"), Ok))
            .collect()
    }

    /// State `index` (`s`), split at each of its `applies`.
    fn split_state(
        &mut self,
        index: usize,
        s: &ParserState,
        applies: &[Apply<'a, '_>],
        resolve: &dyn Fn(&ast::Ident) -> CResult<Target>,
        out: &mut [Option<State>],
        frame: &Frame,
    ) -> CResult<()> {
        let own = format!("{}{}", frame.prefix, s.name.name);
        let (mut slot, mut name, mut from) = (index, own.clone(), 0);
        let mut stmts = Vec::new();
        for (k, ap) in applies.iter().enumerate() {
            stmts.extend(self.state_stmts(&s.body[from..ap.at])?);
            let (copy_in, copy_out, bindings) = self.instance_args(ap)?;
            stmts.extend(copy_in);
            out[slot] = Some(State {
                name,
                stmts: std::mem::take(&mut stmts),
                transition: Transition::Direct(Target::State(frame.base + ap.base)),
            });
            self.lower_instance(ap, bindings, out, frame)?;
            (slot, name, from) = (ap.cont, format!("{own}${}", k + 1), ap.at + 1);
            stmts = copy_out;
        }
        stmts.extend(self.state_stmts(&s.body[from..])?);
        let transition = self.transition(&s.transition, resolve)?;
        out[slot] = Some(State {
            name,
            stmts,
            transition,
        });
        Ok(())
    }

    /// The copy-in and copy-out statements of an application and the bindings of the sub-parser's parameters.
    #[allow(clippy::type_complexity)]
    fn instance_args(
        &mut self,
        ap: &Apply<'a, '_>,
    ) -> CResult<(Vec<Stmt>, Vec<Stmt>, Vec<(ast::Ident, Binding)>)> {
        let DeclKind::Parser { signature, .. } = &ap.sub.kind else {
            return err(ap.span, "expected a parser");
        };
        if signature.params.len() != ap.args.len() {
            return err(
                ap.span,
                format!(
                    "wrong number of arguments: expected {}, got {}",
                    signature.params.len(),
                    ap.args.len()
                ),
            );
        }
        let (mut copy_in, mut copy_out, mut bindings) = (Vec::new(), Vec::new(), Vec::new());
        for (p, a) in signature.params.iter().zip(ap.args) {
            if matches!(&p.ty.kind, TypeKind::Named { name, .. } if name.name == "packet_in") {
                bindings.push((p.name.clone(), Binding::Packet { input: true }));
                continue;
            }
            let ty = self.resolve_type(&p.ty)?;
            let value = self.expr_as(&a.value, &ty)?;
            let local = self.new_local(&p.name, ty.clone());
            let var = Expr {
                kind: ExprKind::Var(Root::Local(local)),
                ty: ty.clone(),
                span: p.name.span,
            };
            if p.direction != Direction::Out {
                copy_in.push(Stmt::Assign {
                    lhs: var.clone(),
                    rhs: value.clone(),
                });
            }
            if matches!(p.direction, Direction::Out | Direction::InOut) {
                copy_out.push(Stmt::Assign {
                    lhs: value,
                    rhs: var,
                });
            }
            let access = match p.direction {
                Direction::In => super::Access::In,
                _ => super::Access::Write,
            };
            bindings.push((
                p.name.clone(),
                Binding::Var {
                    root: Root::Local(local),
                    ty,
                    access,
                },
            ));
        }
        Ok((copy_in, copy_out, bindings))
    }

    /// The copy of the sub-parser's states for one application, in `out[base..cont]` (with the copies of the
    /// instances it applies in turn), checked in a scope of their own (the globals and the parameters).
    fn lower_instance(
        &mut self,
        ap: &Apply<'a, '_>,
        bindings: Vec<(ast::Ident, Binding)>,
        out: &mut [Option<State>],
        frame: &Frame,
    ) -> CResult<()> {
        let DeclKind::Parser {
            signature,
            locals,
            states,
            ..
        } = &ap.sub.kind
        else {
            return err(ap.span, "expected a parser");
        };
        let order = Self::state_order(states, &signature.name)?;
        let instances = self.instances_of(locals);
        let inner = Frame {
            base: frame.base + ap.base,
            accept: Target::State(frame.base + ap.cont),
            prefix: format!("{}{}$", frame.prefix, ap.inst),
            depth: frame.depth + 1,
        };
        let globals = self.scopes[0].clone();
        let saved = std::mem::replace(&mut self.scopes, vec![globals]);
        let lowered = self.scoped(|c| {
            for (name, b) in bindings {
                c.bind(&name, b)?;
            }
            let mut prelude = Vec::new();
            for l in locals {
                let nested = matches!(&l.kind, DeclKind::Instance { name, .. } if instances.contains_key(&name.name));
                if !nested && !c.local_decl(l, &mut prelude)? {
                    return err(
                        l.span,
                        "unsupported construct: this declaration in an applied parser instance",
                    );
                }
            }
            let mut states = c.lower_states_in(&order, &instances, &inner)?;
            if let Some(first) = states.first_mut() {
                prelude.append(&mut first.stmts);
                first.stmts = prelude;
            }
            Ok(states)
        });
        self.scopes = saved;
        for (i, s) in lowered?.into_iter().enumerate() {
            out[ap.base + i] = Some(s);
        }
        Ok(())
    }
}
