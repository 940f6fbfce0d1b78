//! Which storage locations may keep network byte order.
//!
//! P4C-XDP converts every header field to host order when it parses and back when it deparses. A field that the
//! program only copies, compares for equality, or uses as a table or select key never needs host order: its bytes can
//! go from the packet to the key, or to another field, unchanged. This analysis groups locations that exchange values
//! (an assignment or an equality joins the two sides) and keeps a group in network order ("raw") when every member is
//! a whole number of bytes at a byte boundary and no member is ever used where its numeric value matters.

use crate::ast::BinaryOp;
use crate::ir::{
    Checked, Expr, ExprKind, HeaderId, KeysetElem, LocalId, Root, Stmt, StructId, Transition, Ty,
};
use std::collections::{HashMap, HashSet};

/// A storage location as the code generator lays it out: a field of every instance of a header or struct type, or a
/// local. All instances of a header type share one layout, so a header field is one location for all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    /// Field `.1` of header type `.0`.
    HeaderField(HeaderId, usize),
    /// Field `.1` of struct type `.0`.
    StructField(StructId, usize),
    /// A scalar local.
    Local(LocalId),
}

/// The locations kept in network byte order.
#[derive(Debug, Default)]
pub struct Reprs {
    raw: HashSet<Loc>,
}

impl Reprs {
    /// Every location in host order: the P4C-XDP baseline.
    pub fn all_host() -> Reprs {
        Reprs::default()
    }

    /// Runs the analysis over the whole program.
    pub fn analyse(program: &Checked) -> Reprs {
        let mut a = Analysis {
            program,
            parent: HashMap::new(),
            host: HashSet::new(),
            seen: HashSet::new(),
        };
        a.program_uses();
        // Fields the program never names are only carried from the parser to the deparser: bytes are enough.
        for (h, header) in program.headers.iter().enumerate() {
            for i in 0..header.fields.len() {
                a.seen.insert(Loc::HeaderField(h, i));
            }
        }
        let mut classes: HashMap<Loc, Vec<Loc>> = HashMap::new();
        for loc in a.seen.clone() {
            let root = a.find(loc);
            classes.entry(root).or_default().push(loc);
        }
        let mut raw = HashSet::new();
        for members in classes.values() {
            let ok = members
                .iter()
                .all(|l| !a.host.contains(l) && eligible(program, *l));
            if ok {
                raw.extend(members.iter().copied());
            }
        }
        Reprs { raw }
    }

    /// Whether a location keeps network byte order.
    pub fn is_raw(&self, loc: Loc) -> bool {
        self.raw.contains(&loc)
    }

    /// Whether an expression reads a location kept in network byte order.
    pub fn expr_is_raw(&self, program: &Checked, e: &Expr) -> bool {
        loc_of(program, e).is_some_and(|l| self.is_raw(l))
    }
}

/// The location an expression names, if it names a scalar one.
pub fn loc_of(program: &Checked, e: &Expr) -> Option<Loc> {
    e.ty.scalar_width(program)?;
    match &e.kind {
        ExprKind::Field { base, index } => match base.ty {
            Ty::Header(h) => Some(Loc::HeaderField(h, *index)),
            Ty::Struct(s) => Some(Loc::StructField(s, *index)),
            _ => None,
        },
        ExprKind::Var(Root::Local(id)) => Some(Loc::Local(*id)),
        _ => None,
    }
}

/// Bit offset of field `index` in a header.
pub fn field_offset(program: &Checked, header: HeaderId, index: usize) -> u32 {
    program.headers[header].fields[..index]
        .iter()
        .map(|f| f.ty.scalar_width(program).unwrap_or(0))
        .sum()
}

fn eligible(program: &Checked, loc: Loc) -> bool {
    let ty = match loc {
        Loc::HeaderField(h, i) => {
            if !field_offset(program, h, i).is_multiple_of(8) {
                return false;
            }
            &program.headers[h].fields[i].ty
        }
        Loc::StructField(s, i) => {
            let name = program.structs[s].name.as_str();
            if name == "xdp_input" || name == "xdp_output" {
                return false;
            }
            &program.structs[s].fields[i].ty
        }
        Loc::Local(id) => &program.locals[id].ty,
    };
    matches!(ty, Ty::Bit(w) if w % 8 == 0 && *w > 8)
}

struct Analysis<'a> {
    program: &'a Checked,
    parent: HashMap<Loc, Loc>,
    host: HashSet<Loc>,
    seen: HashSet<Loc>,
}

/// How the consumer of a value reads it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Need {
    /// Bytes are enough (a key, a copy, an equality).
    Bytes,
    /// The number itself (arithmetic, order, extern arguments).
    Number,
}

impl Analysis<'_> {
    /// The representative of `loc`'s class. Iterative: a chain of copies (`a = b; b = c; ...`) links as many
    /// locations as the program has, and the path is compressed afterwards.
    fn find(&mut self, loc: Loc) -> Loc {
        let mut root = loc;
        while let Some(&p) = self.parent.get(&root) {
            if p == root {
                break;
            }
            root = p;
        }
        let mut at = loc;
        while at != root {
            let next = self.parent.insert(at, root).unwrap_or(root);
            at = next;
        }
        root
    }

    fn union(&mut self, a: Loc, b: Loc) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra, rb);
        }
    }

    fn program_uses(&mut self) {
        let program = self.program;
        for state in &program.parser.states {
            self.stmts(&state.stmts);
            if let Transition::Select { keys, cases } = &state.transition {
                for (i, key) in keys.iter().enumerate() {
                    let ranged = cases
                        .iter()
                        .any(|c| matches!(c.keysets.get(i), Some(KeysetElem::Range { .. })));
                    self.expr(key, if ranged { Need::Number } else { Need::Bytes });
                }
            }
        }
        for action in &program.control.actions {
            self.stmts(&action.body);
        }
        for table in &program.control.tables {
            for key in &table.keys {
                self.expr(&key.expr, Need::Bytes);
            }
            for (_, copy_in, copy_out) in &table.bindings {
                self.stmts(copy_in);
                self.stmts(copy_out);
            }
        }
        self.stmts(&program.control.apply);
        self.stmts(&program.deparser);
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign { lhs, rhs } => self.assign(lhs, rhs),
            Stmt::Declare { local, init } => {
                if let Some(init) = init {
                    let lhs = Expr {
                        kind: ExprKind::Var(Root::Local(*local)),
                        ty: self.program.locals[*local].ty.clone(),
                        span: init.span,
                    };
                    self.assign(&lhs, init);
                }
            }
            Stmt::If { cond, then, els } => {
                self.expr(cond, Need::Number);
                self.stmts(then);
                self.stmts(els);
            }
            Stmt::SwitchAction { arms, .. } => {
                for arm in arms {
                    self.stmts(&arm.body);
                }
            }
            Stmt::CallAction { action, args } => {
                let params = self.program.control.actions[*action].params.clone();
                for (p, arg) in params.iter().zip(args) {
                    let lhs = Expr {
                        kind: ExprKind::Var(Root::Local(*p)),
                        ty: self.program.locals[*p].ty.clone(),
                        span: arg.span,
                    };
                    self.assign(&lhs, arg);
                }
            }
            Stmt::Count { index, amount, .. } => {
                self.expr(index, Need::Number);
                if let Some(a) = amount {
                    self.expr(a, Need::Number);
                }
            }
            Stmt::Advance(e) | Stmt::PerfOutput(e) | Stmt::Eval(e) => self.expr(e, Need::Number),
            Stmt::Verify { cond, .. } => self.expr(cond, Need::Number),
            Stmt::SetValid(_)
            | Stmt::SetInvalid(_)
            | Stmt::Extract(_)
            | Stmt::Emit(_)
            | Stmt::ApplyTable(_)
            | Stmt::Return
            | Stmt::PerfPacket
            | Stmt::Exit => {}
        }
    }

    fn assign(&mut self, lhs: &Expr, rhs: &Expr) {
        if let ExprKind::StructInit(elems) = &rhs.kind {
            if let Ty::Header(h) | Ty::Struct(h) = lhs.ty {
                let header = matches!(lhs.ty, Ty::Header(_));
                for (i, e) in elems.iter().enumerate() {
                    let loc = if header {
                        Loc::HeaderField(h, i)
                    } else {
                        Loc::StructField(h, i)
                    };
                    self.flows_into(loc, e);
                }
                return;
            }
        }
        match loc_of(self.program, lhs) {
            Some(l) => self.flows_into(l, rhs),
            None => {
                // A slice of a location, or a whole header or struct: slices need the number.
                self.lvalue_parts(lhs);
                self.expr(rhs, Need::Number);
            }
        }
    }

    fn flows_into(&mut self, l: Loc, rhs: &Expr) {
        self.seen.insert(l);
        if let Some(r) = loc_of(self.program, rhs) {
            self.seen.insert(r);
            self.union(l, r);
        } else if !matches!(rhs.kind, ExprKind::Const(_)) {
            self.host.insert(l);
            self.expr(rhs, Need::Number);
        }
    }

    fn lvalue_parts(&mut self, lhs: &Expr) {
        if let ExprKind::Slice { base, .. } = &lhs.kind {
            if let Some(l) = loc_of(self.program, base) {
                self.seen.insert(l);
                self.host.insert(l);
            }
        }
    }

    fn expr(&mut self, e: &Expr, need: Need) {
        if let Some(l) = loc_of(self.program, e) {
            self.seen.insert(l);
            if need == Need::Number {
                self.host.insert(l);
            }
            return;
        }
        match &e.kind {
            ExprKind::Binary(BinaryOp::Eq | BinaryOp::Ne, a, b) => {
                let (la, lb) = (loc_of(self.program, a), loc_of(self.program, b));
                let ca = matches!(a.kind, ExprKind::Const(_));
                let cb = matches!(b.kind, ExprKind::Const(_));
                match (la, lb) {
                    (Some(x), Some(y)) => {
                        self.seen.insert(x);
                        self.seen.insert(y);
                        self.union(x, y);
                    }
                    (Some(x), None) if cb => {
                        self.seen.insert(x);
                    }
                    (None, Some(y)) if ca => {
                        self.seen.insert(y);
                    }
                    _ => {
                        self.expr(a, Need::Number);
                        self.expr(b, Need::Number);
                    }
                }
            }
            ExprKind::Field { base, .. }
            | ExprKind::StackElem { base, .. }
            | ExprKind::StackNext(base)
            | ExprKind::StackLast(base)
            | ExprKind::IsValid(base) => self.expr(base, Need::Bytes),
            ExprKind::Slice { base, .. } => self.expr(base, Need::Number),
            ExprKind::Concat(a, b) | ExprKind::Binary(_, a, b) => {
                self.expr(a, Need::Number);
                self.expr(b, Need::Number);
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a, Need::Number),
            ExprKind::Cond(c, a, b) => {
                self.expr(c, Need::Number);
                self.expr(a, Need::Number);
                self.expr(b, Need::Number);
            }
            ExprKind::StructInit(es)
            | ExprKind::Extern(_, es)
            | ExprKind::CExtern { args: es, .. } => {
                for x in es {
                    self.expr(x, Need::Number);
                }
            }
            ExprKind::Const(_)
            | ExprKind::Bool(_)
            | ExprKind::Var(_)
            | ExprKind::EnumMember(_)
            | ExprKind::ErrorMember(_)
            | ExprKind::Lookahead
            | ExprKind::PacketLength
            | ExprKind::TableHit(_) => {}
        }
    }
}
