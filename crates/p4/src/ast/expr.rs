//! Expressions, operators, call arguments and keysets.

use super::{Ident, IntLit, Type};
use crate::diag::Span;

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// The whole expression.
    pub span: Span,
}

/// Every expression form of the subset.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal.
    Int(IntLit),
    /// `true` or `false`.
    Bool(bool),
    /// A string literal (annotations only, in practice).
    Str(String),
    /// A name; `error` in `error.NoMatch` is a name too.
    Name(Ident),
    /// `_`: a don't-care argument.
    DontCare,
    /// `base.member`.
    Member { base: Box<Expr>, member: Ident },
    /// `base[index]`.
    Index { base: Box<Expr>, index: Box<Expr> },
    /// `base[hi:lo]`.
    Slice {
        base: Box<Expr>,
        hi: Box<Expr>,
        lo: Box<Expr>,
    },
    /// `callee<type_args>(args)`.
    Call {
        callee: Box<Expr>,
        type_args: Vec<Type>,
        args: Vec<Argument>,
    },
    /// A prefix operator.
    Unary { op: UnaryOp, operand: Box<Expr> },
    /// A binary operator.
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `cond ? then : els`.
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Box<Expr>,
    },
    /// `(T) expr`.
    Cast { ty: Type, expr: Box<Expr> },
    /// `{ a, b }`: a tuple or positional struct initialiser.
    List(Vec<Expr>),
    /// `{ f = a, g = b }`.
    StructInit(Vec<(Ident, Expr)>),
}

/// One argument of a call or instantiation.
#[derive(Clone, Debug, PartialEq)]
pub struct Argument {
    /// `name = ` for named arguments.
    pub name: Option<Ident>,
    /// The value.
    pub value: Expr,
}

/// Prefix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `!`.
    Not,
    /// `~`.
    Complement,
    /// `-`.
    Neg,
    /// `+`.
    Plus,
}

/// Binary operators, from loosest to tightest binding group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `||`.
    Or,
    /// `&&`.
    And,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `>=`.
    Ge,
    /// `|`.
    BitOr,
    /// `^`.
    BitXor,
    /// `&`.
    BitAnd,
    /// `<<`.
    Shl,
    /// `>>`.
    Shr,
    /// `++`.
    Concat,
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `|+|`.
    AddSat,
    /// `|-|`.
    SubSat,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `%`.
    Mod,
}

impl BinaryOp {
    /// Binding strength: higher binds tighter. Unlike C, bitwise operators bind tighter than comparisons.
    pub fn precedence(self) -> u8 {
        use BinaryOp::*;
        match self {
            Or => 1,
            And => 2,
            Eq | Ne => 3,
            Lt | Gt | Le | Ge => 4,
            BitOr => 5,
            BitXor => 6,
            BitAnd => 7,
            Shl | Shr => 8,
            Concat | Add | Sub | AddSat | SubSat => 9,
            Mul | Div | Mod => 10,
        }
    }

    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Or => "||",
            And => "&&",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            BitOr => "|",
            BitXor => "^",
            BitAnd => "&",
            Shl => "<<",
            Shr => ">>",
            Concat => "++",
            Add => "+",
            Sub => "-",
            AddSat => "|+|",
            SubSat => "|-|",
            Mul => "*",
            Div => "/",
            Mod => "%",
        }
    }
}

impl UnaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Not => "!",
            UnaryOp::Complement => "~",
            UnaryOp::Neg => "-",
            UnaryOp::Plus => "+",
        }
    }
}

/// A set of values in a `select` case or a table entry.
#[derive(Clone, Debug, PartialEq)]
pub enum Keyset {
    /// `default`.
    Default(Span),
    /// `_`.
    DontCare(Span),
    /// A single value.
    Value(Expr),
    /// `value &&& mask`.
    Mask { value: Expr, mask: Expr },
    /// `lo .. hi`.
    Range { lo: Expr, hi: Expr },
    /// `(k1, k2, ...)`: one keyset per selected expression.
    Tuple(Vec<Keyset>, Span),
}
