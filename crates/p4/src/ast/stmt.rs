//! Statements and blocks.

use super::{Expr, Ident, Type};
use crate::diag::Span;

/// `{ statements }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The statements in order.
    pub stmts: Vec<Stmt>,
    /// From `{` to `}`.
    pub span: Span,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// The whole statement.
    pub span: Span,
}

/// Every statement form of the subset.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `lhs = rhs;`.
    Assign { lhs: Expr, rhs: Expr },
    /// `e.m(args);` or `f(args);`: the expression is always a [`ExprKind::Call`].
    Call(Expr),
    /// `if (cond) then else els`.
    If {
        cond: Expr,
        then: Box<Stmt>,
        els: Option<Box<Stmt>>,
    },
    /// `{ ... }`.
    Block(Block),
    /// `switch (expr) { label: { } ... }`.
    Switch { expr: Expr, cases: Vec<SwitchCase> },
    /// `return;` or `return e;`.
    Return(Option<Expr>),
    /// `exit;`.
    Exit,
    /// `;`.
    Empty,
    /// `T name;` or `T name = init;`.
    Variable {
        ty: Type,
        name: Ident,
        init: Option<Expr>,
    },
    /// `const T name = value;`.
    Const { ty: Type, name: Ident, value: Expr },
}

/// One case of a `switch`.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchCase {
    /// What it matches.
    pub label: SwitchLabel,
    /// Its block; `None` falls through to the next case.
    pub body: Option<Block>,
    /// The whole case.
    pub span: Span,
}

/// A `switch` case label.
#[derive(Clone, Debug, PartialEq)]
pub enum SwitchLabel {
    /// `default`.
    Default(Span),
    /// An action name or a constant.
    Expr(Expr),
}
