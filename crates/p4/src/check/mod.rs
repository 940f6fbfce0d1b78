//! The type checker: resolves names and types of a parsed [`Program`], folds constants, infers literal widths, and
//! lowers the parser, control and deparser that `main` instantiates to the typed IR of [`crate::ir`].
//!
//! One pass over the top-level declarations fills the type tables ([`types`]); then the blocks named by `main` are
//! checked against the architecture model ([`arch`]) and lowered ([`parser`], [`control`]), expressions by [`expr`]
//! (folding in [`fold`]) and statements by [`stmt`]. The first error ends the check.

mod access;
mod arch;
mod calls;
mod cextern;
mod control;
mod expr;
mod fold;
mod ops;
mod parser;
mod stmt;
mod subparser;
mod table;
mod types;
mod valueset;

use std::collections::{HashMap, HashSet};

use crate::ast::{self, Decl, Program};
use crate::diag::{Diagnostic, Span, SpanError};
use crate::ir::{
    Action, ActionId, Checked, Counter, CounterId, EnumDef, Expr, HeaderDef, Local, LocalId, Root,
    Stmt, StructDef, Table, TableId, Ty, ValueSet,
};

type CResult<T> = Result<T, SpanError>;

/// Checks a parsed program against the architecture model its `main` instantiates and lowers it to the IR.
pub fn check(program: &Program) -> Result<Checked, Diagnostic> {
    Checker::new(program)
        .run()
        .map_err(|e| program.sources.diagnostic(e.span, e.message))
}

/// An error at `span`.
/// The name a `@name("...")` annotation gives, without a leading `.` (P4's mark of a global name).
fn annotated_name(annotations: &[ast::Annotation]) -> Option<String> {
    let a = annotations.iter().find(|a| a.name.name == "name")?;
    match a.args.as_deref() {
        Some(
            [ast::Expr {
                kind: ast::ExprKind::Str(s),
                ..
            }],
        ) => Some(s.trim_start_matches('.').to_string()),
        _ => None,
    }
}

fn err<T>(span: Span, message: impl Into<String>) -> CResult<T> {
    Err(SpanError::new(span, message))
}

/// How a variable may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    /// Freely.
    Write,
    /// Not at all: an `in` parameter.
    In,
    /// Not at all: a directionless action parameter.
    ActionParam,
}

/// What a name in scope stands for.
#[derive(Clone, Debug)]
enum Binding {
    /// A variable.
    Var { root: Root, ty: Ty, access: Access },
    /// A constant, already folded.
    Value(Expr),
    /// The `packet_in` (`input`) or `packet_out` parameter.
    Packet { input: bool },
    /// A table of the control.
    Table(TableId),
    /// An action of the control.
    Action(ActionId),
    /// A `CounterArray` instance.
    Counter(CounterId),
    /// An instance of another control (index into [`Checker::sub_controls`]), inlined where it is applied.
    SubControl(usize),
    /// A `value_set` of the parser (index into [`Checker::value_sets`]).
    ValueSet(usize),
}

/// Where the statements being checked are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctx {
    /// Top level: constants only.
    Global,
    /// A parser state.
    Parser,
    /// Declarations of the control (table keys, initialisers).
    Control,
    /// An action body.
    Action,
    /// The control's `apply` block.
    Apply,
    /// The deparser's `apply` block.
    Deparser,
}

/// The state of one check.
struct Checker<'a> {
    prog: &'a Program,
    headers: Vec<HeaderDef>,
    structs: Vec<StructDef>,
    /// Per struct: how deeply it nests structs (1 for none) and how many members it holds in full.
    struct_extents: Vec<(u32, u64)>,
    enums: Vec<EnumDef>,
    errors: Vec<String>,
    match_kinds: Vec<String>,
    /// Named types: headers, structs, enums, typedefs.
    types: HashMap<String, Ty>,
    /// Innermost last; `scopes[0]` holds the global constants.
    scopes: Vec<HashMap<String, Binding>>,
    extern_fns: HashMap<String, &'a ast::Signature>,
    extern_objs: HashSet<String>,
    packages: HashSet<String>,
    top_actions: HashMap<String, &'a Decl>,
    top_action_ids: HashMap<String, ActionId>,
    /// Parsers and controls by name.
    blocks: HashMap<String, &'a Decl>,
    main: Option<&'a Decl>,
    locals: Vec<Local>,
    actions: Vec<Action>,
    /// Per action (by id): its parameters as declared, name and type. A struct-typed parameter is one of them here
    /// and several leaf locals in [`Action::params`] ([`Checker::flatten_args`]).
    action_sigs: HashMap<ActionId, Vec<(String, Ty)>>,
    /// Per action (by id): its directional parameters (`in`, `out`, `inout`), which come before the action data and
    /// are bound by the call ([`calls`]): the local, its name and type, its direction.
    action_dirs: HashMap<ActionId, Vec<calls::DirParam>>,
    /// Control instances declared in controls: the instance's name, the control, and once it is applied, its
    /// inlined body.
    sub_controls: Vec<(String, &'a Decl, Option<control::AppliedControl>)>,
    /// Above zero while the body of an applied control instance is checked.
    sub_control_depth: u32,
    tables: Vec<Table>,
    counters: Vec<Counter>,
    /// The user externs implemented in C that the program calls, in order of first call.
    c_externs: Vec<String>,
    /// The parser's value sets, each with its fields' types (a select's keys must have them).
    value_sets: Vec<(ValueSet, Vec<Ty>)>,
    /// Statements to run before the statement being checked (`t.apply()` of `t.apply().hit`).
    hoist: Vec<Stmt>,
    ctx: Ctx,
    /// Above zero inside an operand that may not be evaluated (`&&`, `||`, `?:`).
    cond_depth: u32,
    /// True while checking the argument of `extract`, where `stack.next` is allowed.
    allow_next: bool,
}

impl<'a> Checker<'a> {
    fn new(prog: &'a Program) -> Checker<'a> {
        Checker {
            prog,
            headers: Vec::new(),
            structs: Vec::new(),
            struct_extents: Vec::new(),
            enums: Vec::new(),
            errors: Vec::new(),
            match_kinds: Vec::new(),
            types: HashMap::new(),
            scopes: vec![HashMap::new()],
            extern_fns: HashMap::new(),
            extern_objs: HashSet::new(),
            packages: HashSet::new(),
            top_actions: HashMap::new(),
            top_action_ids: HashMap::new(),
            blocks: HashMap::new(),
            main: None,
            locals: Vec::new(),
            actions: Vec::new(),
            action_sigs: HashMap::new(),
            action_dirs: HashMap::new(),
            sub_controls: Vec::new(),
            sub_control_depth: 0,
            tables: Vec::new(),
            counters: Vec::new(),
            value_sets: Vec::new(),
            c_externs: Vec::new(),
            hoist: Vec::new(),
            ctx: Ctx::Global,
            cond_depth: 0,
            allow_next: false,
        }
    }

    fn run(mut self) -> CResult<Checked> {
        for decl in &self.prog.decls {
            self.top_decl(decl)?;
        }
        let Some(main) = self.main else {
            return err(Span::new(crate::FileId(0), 0, 0), "no `main` instance");
        };
        let (arch, parts) = self.main_parts(main)?;
        let (headers_ty, parser, control, deparser) = self.lower_arch(arch, &parts)?;
        Ok(Checked {
            arch,
            headers: self.headers,
            structs: self.structs,
            enums: self.enums,
            errors: self.errors,
            headers_ty,
            locals: self.locals,
            parser,
            control,
            deparser,
            c_externs: self.c_externs,
            sources: self.prog.sources.clone(),
        })
    }

    /// Opens a scope.
    fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }

    /// Closes the innermost scope.
    fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Binds a name in the innermost scope; a name bound twice in one scope is an error.
    fn bind(&mut self, name: &ast::Ident, binding: Binding) -> CResult<()> {
        let scope = self
            .scopes
            .last_mut()
            .expect("the global scope is never popped");
        if scope.contains_key(&name.name) {
            return err(name.span, format!("duplicate name `{}`", name.name));
        }
        scope.insert(name.name.clone(), binding);
        Ok(())
    }

    /// The innermost binding of a name.
    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// A new local of this name and type.
    fn new_local(&mut self, name: &ast::Ident, ty: Ty) -> LocalId {
        self.locals.push(Local {
            name: name.name.clone(),
            ty,
            span: name.span,
        });
        self.locals.len() - 1
    }

    /// The type as P4 writes it, for diagnostics.
    fn ty_name(&self, ty: &Ty) -> String {
        match ty {
            Ty::Bool => "bool".into(),
            Ty::Bit(w) => format!("bit<{w}>"),
            Ty::Int(w) => format!("int<{w}>"),
            Ty::InfInt => "int".into(),
            Ty::Header(h) => self.headers[*h].name.clone(),
            Ty::Struct(s) => self.structs[*s].name.clone(),
            Ty::Stack { elem, size } => format!("{}[{size}]", self.headers[*elem].name),
            Ty::Enum(e) => self.enums[*e].name.clone(),
            Ty::Error => "error".into(),
            Ty::Void => "void".into(),
        }
    }

    /// "type mismatch: A and B".
    fn mismatch<T>(&self, span: Span, a: &Ty, b: &Ty) -> CResult<T> {
        err(
            span,
            format!("type mismatch: {} and {}", self.ty_name(a), self.ty_name(b)),
        )
    }
}
