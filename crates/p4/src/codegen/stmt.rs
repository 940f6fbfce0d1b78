//! Statements to C: assignments in the representation of their target, control flow, actions inlined where they run.

use super::ctypes::{c_bits, c_const, c_type, mask};
use super::repr::loc_of;
use super::Gen;
use crate::diag::{Diagnostic, Span};
use crate::ir::{ActionId, Expr, ExprKind, Root, Stmt, Ty};

/// A span inside a statement, for diagnostics about statements (the IR keeps spans on expressions).
pub fn stmt_span(s: &Stmt) -> Option<Span> {
    match s {
        Stmt::Assign { lhs, .. } => Some(lhs.span),
        Stmt::Declare { init, .. } => init.as_ref().map(|e| e.span),
        Stmt::If { cond, .. } | Stmt::Verify { cond, .. } => Some(cond.span),
        Stmt::SetValid(e)
        | Stmt::SetInvalid(e)
        | Stmt::PerfOutput(e)
        | Stmt::Eval(e)
        | Stmt::Extract(e)
        | Stmt::Advance(e)
        | Stmt::Emit(e) => Some(e.span),
        Stmt::Count { index, .. } => Some(index.span),
        Stmt::CallAction { args, .. } => args.first().map(|e| e.span),
        _ => None,
    }
}

impl Gen<'_> {
    /// Statements in order.
    pub fn stmts(&mut self, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        match s {
            Stmt::Assign { lhs, rhs } => self.assign(lhs, rhs)?,
            Stmt::Declare { local, init } => {
                let lhs = Expr {
                    kind: ExprKind::Var(Root::Local(*local)),
                    ty: self.p.locals[*local].ty.clone(),
                    span: self.p.locals[*local].span,
                };
                match init {
                    Some(init) => self.assign(&lhs, init)?,
                    None => {
                        let name = self.local_name(*local);
                        self.line(&format!("__builtin_memset(&{name}, 0, sizeof({name}));"));
                    }
                }
            }
            Stmt::If { cond, then, els } => {
                let c = self.number(cond)?;
                self.line(&format!("if ({c}) {{"));
                self.stmts(then)?;
                if els.is_empty() {
                    self.line("}");
                } else {
                    self.line("} else {");
                    self.stmts(els)?;
                    self.line("}");
                }
            }
            Stmt::ApplyTable(t) => self.apply_table(*t)?,
            Stmt::SwitchAction { table, arms } => {
                self.apply_table(*table)?;
                self.line(&format!("switch (t{table}_act) {{"));
                for arm in arms {
                    match &arm.actions {
                        Some(actions) => {
                            for a in actions {
                                let pos = self.action_pos(*table, *a);
                                self.line(&format!("case {pos}:"));
                            }
                        }
                        None => self.line("default:"),
                    }
                    self.line("{");
                    self.stmts(&arm.body)?;
                    self.line("} break;");
                }
                self.line("}");
            }
            Stmt::CallAction { action, args } => {
                let params = self.p.control.actions[*action].params.clone();
                self.line("{");
                for (p, arg) in params.iter().zip(args) {
                    let lhs = Expr {
                        kind: ExprKind::Var(Root::Local(*p)),
                        ty: self.p.locals[*p].ty.clone(),
                        span: arg.span,
                    };
                    self.assign(&lhs, arg)?;
                }
                self.action_body(*action)?;
                self.line("}");
            }
            Stmt::SetValid(h) | Stmt::SetInvalid(h) => {
                let place = self.place(h)?;
                self.note_modified(h)?;
                let v = u8::from(matches!(s, Stmt::SetValid(_)));
                self.line(&format!("{place}.hwxdp_valid = {v};"));
            }
            Stmt::Return => {
                let label = self.return_labels.last().cloned();
                self.line(&format!("goto {};", label.as_deref().unwrap_or("ctl_end")));
            }
            Stmt::Exit => self.line("goto ctl_end;"),
            Stmt::Count {
                counter,
                index,
                amount,
            } => self.count(*counter, index, amount.as_ref())?,
            Stmt::PerfOutput(e) => {
                let t = c_type(self.p, &e.ty);
                let v = self.number(e)?;
                self.uses_perf = true;
                self.line(&format!(
                    "{{ {t} ev_ = {v}; bpf_ringbuf_output(&perf_events, &ev_, sizeof(ev_), 0); }}"
                ));
            }
            Stmt::PerfPacket => {
                // P4C-XDP's macro: the length as the sample's data, the packet as its context bytes. It names
                // perf event index 0; BPF_F_CURRENT_CPU writes to the ring of the CPU the program runs on, the
                // only one the kernel accepts.
                self.uses_perf_packet = true;
                self.line(
                    "{ u32 ps_ = (u32)(end - pkt); bpf_perf_event_output(ctx, &perf_event, \
                     ((u64)ps_ << 32) | BPF_F_CURRENT_CPU, &ps_, sizeof(ps_)); }",
                );
            }
            Stmt::Eval(e) => {
                let call = self.number(e)?;
                self.line(&format!("{call};"));
            }
            Stmt::Extract(e) => self.extract(e)?,
            Stmt::Advance(e) => self.advance(e)?,
            Stmt::Verify { cond, .. } => {
                let c = self.number(cond)?;
                self.line(&format!("if (!({c})) goto p_reject;"));
            }
            Stmt::Emit(e) => {
                return Err(self.error(e.span, "`emit` outside the deparser"));
            }
        }
        Ok(())
    }

    /// Runs an action's body (its parameters already set) with `return` leaving just the action.
    pub fn action_body(&mut self, action: ActionId) -> Result<(), Diagnostic> {
        let label = self.fresh("act_end");
        self.return_labels.push(label.clone());
        let body = self.p.control.actions[action].body.clone();
        self.line(&format!(
            "/* action {} */",
            self.p.control.actions[action].name
        ));
        self.stmts(&body)?;
        self.return_labels.pop();
        self.line(&format!("{label}: ;"));
        Ok(())
    }

    fn assign(&mut self, lhs: &Expr, rhs: &Expr) -> Result<(), Diagnostic> {
        self.note_modified(lhs)?;
        if let ExprKind::Slice { base, hi, lo } = &lhs.kind {
            let b = self.place(base)?;
            let w = hi - lo + 1;
            let bw = self.width(base)?;
            let v = self.number(rhs)?;
            let t = format!("u{}", c_bits(bw));
            let m = c_const(mask(w), bw);
            self.line(&format!(
                "{b} = ({b} & ~(({t}){m} << {lo})) | ((({t})({v}) & {m}) << {lo});"
            ));
            return Ok(());
        }
        if let (ExprKind::StructInit(elems), Ty::Header(_) | Ty::Struct(_)) = (&rhs.kind, &lhs.ty) {
            let fields = match lhs.ty {
                Ty::Header(h) => self.p.headers[h].fields.clone(),
                Ty::Struct(s) => self.p.structs[s].fields.clone(),
                _ => Vec::new(),
            };
            for (i, (f, e)) in fields.iter().zip(elems).enumerate() {
                let field = Expr {
                    kind: ExprKind::Field {
                        base: Box::new(lhs.clone()),
                        index: i,
                    },
                    ty: f.ty.clone(),
                    span: e.span,
                };
                self.assign(&field, e)?;
            }
            if matches!(lhs.ty, Ty::Header(_)) {
                let place = self.place(lhs)?;
                self.line(&format!("{place}.hwxdp_valid = 1;"));
            }
            return Ok(());
        }
        let place = self.place(lhs)?;
        let value = match loc_of(self.p, lhs) {
            Some(loc) if self.reprs.is_raw(loc) => self.raw(rhs)?,
            Some(_) => self.number(rhs)?,
            None if matches!(lhs.ty, Ty::Header(_) | Ty::Struct(_) | Ty::Stack { .. }) => {
                self.place(rhs)?
            }
            None => self.number(rhs)?,
        };
        self.line(&format!("{place} = {value};"));
        Ok(())
    }

    /// Records that the header instance an lvalue lies in may change, for the deparser's write-back.
    fn note_modified(&mut self, lhs: &Expr) -> Result<(), Diagnostic> {
        let mut e = lhs;
        let mut header: Option<&Expr> = None;
        loop {
            if matches!(e.ty, Ty::Header(_) | Ty::Stack { .. }) {
                header = Some(e);
            }
            match &e.kind {
                ExprKind::Field { base, .. }
                | ExprKind::StackElem { base, .. }
                | ExprKind::StackLast(base)
                | ExprKind::Slice { base, .. } => e = base,
                ExprKind::Var(Root::Headers) => break,
                _ => return Ok(()),
            }
        }
        match header {
            Some(h) => {
                // Stack elements are written back through the stack: mark the whole stack.
                let mut top = h;
                let mut cur = h;
                while let ExprKind::Field { base, .. }
                | ExprKind::StackElem { base, .. }
                | ExprKind::StackLast(base) = &cur.kind
                {
                    if matches!(base.ty, Ty::Stack { .. }) {
                        top = base;
                    }
                    cur = base;
                }
                let place = self.place(top)?;
                let mut target = lhs;
                if let ExprKind::Slice { base, .. } = &lhs.kind {
                    target = base;
                }
                match &target.kind {
                    // One field of a header outside any stack: only that field needs writing back.
                    ExprKind::Field { base, index } if std::ptr::eq(&**base, top) => {
                        self.modified_fields.insert((place, *index));
                    }
                    _ => {
                        self.modified.insert(place);
                    }
                }
            }
            None => self.all_modified = true,
        }
        Ok(())
    }

    /// The fields of the header at `place` that the program may change, when it changes only some of them (`None`:
    /// write the whole header, or nothing when [`Gen::is_modified`] is false too).
    pub fn modified_fields_of(&self, place: &str) -> Option<Vec<usize>> {
        if self.is_modified(place) {
            return None;
        }
        let mut fields: Vec<usize> = self
            .modified_fields
            .iter()
            .filter(|(p, _)| p == place)
            .map(|(_, i)| *i)
            .collect();
        fields.sort_unstable();
        (!fields.is_empty()).then_some(fields)
    }

    /// Whether the deparser must write back the header at `place` (a header, or an element of a stack).
    pub fn is_modified(&self, place: &str) -> bool {
        self.all_modified
            || self.modified.iter().any(|m| {
                place == m
                    || place.starts_with(&format!("{m}.e["))
                    || place.starts_with(&format!("{m}."))
            })
    }

    /// A label name not used before.
    pub fn fresh(&mut self, prefix: &str) -> String {
        self.labels += 1;
        format!("{prefix}_{}", self.labels)
    }
}
