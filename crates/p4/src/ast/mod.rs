//! The typed syntax tree. Every node carries a [`Span`]; names are [`Ident`]s so that later passes can point at them.
//! Nothing is resolved here: `xdp_action.XDP_DROP` is a member access on a name, `t.apply()` a call of a member.

mod expr;
mod stmt;

use crate::diag::{SourceMap, Span};
pub use crate::lexer::IntLit;
pub use expr::{Argument, BinaryOp, Expr, ExprKind, Keyset, UnaryOp};
pub use stmt::{Block, Stmt, StmtKind, SwitchCase, SwitchLabel};

/// A parsed program: its declarations, includes expanded in place, and the files they came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Top-level declarations in source order.
    pub decls: Vec<Decl>,
    /// The program file (id 0) and every include, for turning spans into diagnostics.
    pub sources: SourceMap,
}

/// A name and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it was written.
    pub span: Span,
}

/// `@name` or `@name(args)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// The annotation's name, without `@`.
    pub name: Ident,
    /// The arguments between parentheses; `None` when there were no parentheses.
    pub args: Option<Vec<Expr>>,
    /// The whole annotation.
    pub span: Span,
}

/// A declaration with its annotations.
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// What it declares.
    pub kind: DeclKind,
    /// The whole declaration.
    pub span: Span,
}

/// Every kind of declaration, top-level or local to a parser or control.
#[derive(Clone, Debug, PartialEq)]
pub enum DeclKind {
    /// `header H { fields }`.
    Header { name: Ident, fields: Vec<Field> },
    /// `header_union U { fields }`.
    HeaderUnion { name: Ident, fields: Vec<Field> },
    /// `struct S { fields }`.
    Struct { name: Ident, fields: Vec<Field> },
    /// `typedef T name;`.
    Typedef { ty: Type, name: Ident },
    /// `const T name = value;`.
    Const { ty: Type, name: Ident, value: Expr },
    /// `T name;` or `T name = init;` (a local of a parser or control).
    Variable {
        ty: Type,
        name: Ident,
        init: Option<Expr>,
    },
    /// `enum E { A, B }` or, with a representation type, `enum bit<8> E { A = 1 }`.
    Enum {
        repr: Option<Type>,
        name: Ident,
        members: Vec<EnumMember>,
    },
    /// `error { A, B }`: adds members to the error type.
    Error { members: Vec<Ident> },
    /// `match_kind { exact, lpm }`.
    MatchKind { members: Vec<Ident> },
    /// `extern E<T> { E(args); R m<U>(params); }`.
    ExternObject {
        name: Ident,
        type_params: Vec<Ident>,
        methods: Vec<Method>,
    },
    /// `extern R f<T>(params);`.
    ExternFunction { signature: Signature },
    /// `parser P<H>(params);`: a parser type.
    ParserType { signature: Signature },
    /// `control C<H>(params);`: a control type.
    ControlType { signature: Signature },
    /// `package Pkg<H>(params);`.
    PackageType { signature: Signature },
    /// A parser with its locals and states.
    Parser {
        signature: Signature,
        ctor_params: Vec<Param>,
        locals: Vec<Decl>,
        states: Vec<ParserState>,
    },
    /// A control with its locals and `apply` block.
    Control {
        signature: Signature,
        ctor_params: Vec<Param>,
        locals: Vec<Decl>,
        apply: Block,
    },
    /// `action a(params) { body }`.
    Action {
        name: Ident,
        params: Vec<Param>,
        body: Block,
    },
    /// `R f<T>(params) { body }`.
    Function { signature: Signature, body: Block },
    /// `table t { properties }`.
    Table {
        name: Ident,
        properties: Vec<TableProperty>,
    },
    /// `T(args) name;`: an extern, parser, control or package instance.
    Instance {
        ty: Type,
        args: Vec<Argument>,
        name: Ident,
    },
}

/// A name, type parameters, parameters, and a return type where there is one.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    /// The return type: `None` for parsers, controls, packages and constructors.
    pub ret: Option<Type>,
    /// The declared name.
    pub name: Ident,
    /// `<H, T>`.
    pub type_params: Vec<Ident>,
    /// The parameters.
    pub params: Vec<Param>,
}

/// One method of an extern object; a constructor has no return type and the extern's name.
#[derive(Clone, Debug, PartialEq)]
pub struct Method {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// True for `abstract` methods.
    pub is_abstract: bool,
    /// Name, type parameters, parameters, return type.
    pub signature: Signature,
    /// The whole method declaration.
    pub span: Span,
}

/// `T name;` in a header, header union or struct.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// Its type.
    pub ty: Type,
    /// Its name.
    pub name: Ident,
    /// The whole field.
    pub span: Span,
}

/// A member of an enum, with its value for serializable enums.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumMember {
    /// Its name.
    pub name: Ident,
    /// `= value`, only in serializable enums.
    pub value: Option<Expr>,
}

/// `in`, `out`, `inout`, or none (directionless action data and constructor parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// No direction written.
    None,
    /// `in`.
    In,
    /// `out`.
    Out,
    /// `inout`.
    InOut,
}

/// One parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// Its direction.
    pub direction: Direction,
    /// Its type.
    pub ty: Type,
    /// Its name.
    pub name: Ident,
    /// `= default`, if given.
    pub default: Option<Expr>,
    /// The whole parameter.
    pub span: Span,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    /// What type.
    pub kind: TypeKind,
    /// Where it was written.
    pub span: Span,
}

/// Every type form of the subset.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `bool`.
    Bool,
    /// `error`.
    Error,
    /// `void`.
    Void,
    /// `string`.
    String,
    /// `match_kind`.
    MatchKind,
    /// `bit<N>` (`bit` alone is `bit<1>`).
    Bit(u32),
    /// `int<N>`.
    Int(u32),
    /// `varbit<N>`.
    Varbit(u32),
    /// `_`: a type left for inference.
    DontCare,
    /// A declared type, type parameter or typedef, with type arguments: `H`, `Foo<bit<8>>`.
    Named { name: Ident, args: Vec<Type> },
    /// A header stack `T[size]`.
    Stack { elem: Box<Type>, size: Box<Expr> },
    /// `tuple<T, U>`.
    Tuple(Vec<Type>),
}

/// A parser state: statements and the transition that ends it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParserState {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// The state's name.
    pub name: Ident,
    /// Its statements.
    pub body: Vec<Stmt>,
    /// `transition ...;`; `None` when omitted (which P4 reads as `transition reject`).
    pub transition: Option<Transition>,
    /// The whole state.
    pub span: Span,
}

/// Where a parser state goes next.
#[derive(Clone, Debug, PartialEq)]
pub enum Transition {
    /// `transition name;`.
    Direct(Ident),
    /// `transition select(exprs) { cases }`.
    Select {
        exprs: Vec<Expr>,
        cases: Vec<SelectCase>,
        span: Span,
    },
}

/// `keyset : state;`.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectCase {
    /// The values this case matches.
    pub keyset: Keyset,
    /// The next state.
    pub state: Ident,
    /// The whole case.
    pub span: Span,
}

/// One property of a table: `[const] name = value;` with its annotations.
#[derive(Clone, Debug, PartialEq)]
pub struct TableProperty {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// True when written with `const`.
    pub is_const: bool,
    /// Which property and its value.
    pub kind: TablePropertyKind,
    /// The whole property.
    pub span: Span,
}

/// The value of a table property, by property.
#[derive(Clone, Debug, PartialEq)]
pub enum TablePropertyKind {
    /// `key = { expr: match_kind; ... }`.
    Key(Vec<KeyElement>),
    /// `actions = { a; b; }`.
    Actions(Vec<ActionRef>),
    /// `default_action = a(args);`.
    DefaultAction(ActionRef),
    /// `entries = { keyset : a(args); ... }`.
    Entries(Vec<Entry>),
    /// Any other `name = value;`, such as `size` and `implementation`.
    Other { name: Ident, value: Expr },
}

/// `expr : match_kind;` in a table key.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyElement {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// The value matched.
    pub expr: Expr,
    /// `exact`, `lpm`, `ternary`, ...
    pub match_kind: Ident,
    /// The whole element.
    pub span: Span,
}

/// An action named in a table, with arguments where they are bound.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionRef {
    /// Annotations written before it.
    pub annotations: Vec<Annotation>,
    /// The action.
    pub name: Ident,
    /// Arguments bound here; `None` when written without parentheses.
    pub args: Option<Vec<Argument>>,
    /// The whole reference.
    pub span: Span,
}

/// `keyset : action(args);` in `entries`.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The key values.
    pub keyset: Keyset,
    /// The action run on a match.
    pub action: ActionRef,
    /// The whole entry.
    pub span: Span,
}
