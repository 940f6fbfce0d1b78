//! The checked program: what the type checker makes of an AST and what the code generator and the STF runner read.
//!
//! Everything here is resolved: typedefs are gone, constants are folded into [`ExprKind::Const`], every expression has
//! its [`Ty`], every name is an index into one of the tables of [`Checked`], and integer literals have taken the width
//! their context gives them. Table and action ids are indices into [`Control::tables`] and [`Control::actions`].

mod expr;
mod unit;

pub use expr::{Expr, ExprKind, ExternFn, KeysetElem, Root, Stmt, SwitchArm};
pub use unit::{
    Action, Arch, ConstEntry, Control, Counter, MatchKind, Parser, SelectCase, State, Storage,
    Table, TableImpl, TableKey, Target, Transition, ValueSet,
};

use crate::diag::{SourceMap, Span};

/// Index into [`Checked::headers`].
pub type HeaderId = usize;
/// Index into [`Checked::structs`].
pub type StructId = usize;
/// Index into [`Checked::enums`].
pub type EnumId = usize;
/// Index into [`Checked::locals`].
pub type LocalId = usize;
/// Index into [`Control::actions`].
pub type ActionId = usize;
/// Index into [`Control::tables`].
pub type TableId = usize;
/// Index into [`Control::counters`].
pub type CounterId = usize;
/// Index into [`Parser::states`].
pub type StateId = usize;

/// A resolved type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `bool`.
    Bool,
    /// `bit<N>`, 1 to 128 bits.
    Bit(u32),
    /// `int<N>`, two's complement, 1 to 128 bits.
    Int(u32),
    /// An integer literal whose width no context fixed (slice bounds, shift amounts, `advance` sizes after folding).
    InfInt,
    /// A header type.
    Header(HeaderId),
    /// A struct type.
    Struct(StructId),
    /// A header stack `H[size]`.
    Stack { elem: HeaderId, size: u32 },
    /// An enum, serializable or not.
    Enum(EnumId),
    /// `error`.
    Error,
    /// `void`: the type of calls that return nothing.
    Void,
}

impl Ty {
    /// The width in bits of a `bit<N>`, `int<N>`, `bool` (1) or serializable enum; `None` for other types.
    pub fn scalar_width(&self, program: &Checked) -> Option<u32> {
        match self {
            Ty::Bool => Some(1),
            Ty::Bit(w) | Ty::Int(w) => Some(*w),
            Ty::Enum(e) => program.enums[*e].repr_width,
            _ => None,
        }
    }
}

/// A field of a header or struct.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDef {
    /// The field's name.
    pub name: String,
    /// Its type: in a header, `Bit`, `Int`, `Bool` or a serializable enum.
    pub ty: Ty,
}

/// A header type; its fields laid out in order, most significant bit first, with no padding.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderDef {
    /// The header's name.
    pub name: String,
    /// The fields in declaration order.
    pub fields: Vec<FieldDef>,
}

impl HeaderDef {
    /// The header's size on the wire in bits (the sum of its field widths).
    pub fn width_bits(&self, program: &Checked) -> u32 {
        self.fields
            .iter()
            .map(|f| f.ty.scalar_width(program).unwrap_or(0))
            .sum()
    }
}

/// A struct type.
#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    /// The struct's name.
    pub name: String,
    /// The fields in declaration order.
    pub fields: Vec<FieldDef>,
}

/// An enum type.
#[derive(Clone, Debug, PartialEq)]
pub struct EnumDef {
    /// The enum's name.
    pub name: String,
    /// Member names in declaration order; a member's index is its value in a non-serializable enum.
    pub members: Vec<String>,
    /// The representation width of a serializable enum (`enum bit<8> E`), else `None`.
    pub repr_width: Option<u32>,
    /// Member values of a serializable enum, parallel to `members`; for other enums the member indices.
    pub values: Vec<u128>,
}

/// A variable: a local of the parser, control or deparser, an action parameter, or a local of an action.
#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    /// The name as written (not unique: the code generator makes C names unique with the id).
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Where it was declared.
    pub span: Span,
}

/// A checked program for one of the two architecture models.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// Which package `main` instantiates.
    pub arch: Arch,
    /// Every header type the program declares (including the models').
    pub headers: Vec<HeaderDef>,
    /// Every struct type (including `xdp_input` and `xdp_output` of the XDP model).
    pub structs: Vec<StructDef>,
    /// Every enum (including `xdp_action`).
    pub enums: Vec<EnumDef>,
    /// The members of `error`, in declaration order (core.p4's first); a member's index is its value.
    pub errors: Vec<String>,
    /// The type `H` the package is instantiated with: the struct of all headers ([`Root::Headers`]).
    pub headers_ty: StructId,
    /// Every variable of every block, parameters of actions included.
    pub locals: Vec<Local>,
    /// The parser.
    pub parser: Parser,
    /// The control (`xdp_switch` or `filter`).
    pub control: Control,
    /// The deparser's statements (only [`Stmt::Emit`], `if` and assignments); empty for the filter model.
    pub deparser: Vec<Stmt>,
    /// The user externs implemented in C (`--extern-c FILE`) the program calls ([`ExprKind::CExtern`]).
    pub c_externs: Vec<String>,
    /// The files the program came from, for diagnostics.
    pub sources: SourceMap,
}

impl Checked {
    /// The enum id of a named enum, e.g. `xdp_action`.
    pub fn enum_named(&self, name: &str) -> Option<EnumId> {
        self.enums.iter().position(|e| e.name == name)
    }

    /// The struct id of a named struct, e.g. `xdp_output`.
    pub fn struct_named(&self, name: &str) -> Option<StructId> {
        self.structs.iter().position(|s| s.name == name)
    }
}
