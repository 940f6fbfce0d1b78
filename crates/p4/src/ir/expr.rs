//! Checked expressions and statements.

use super::{ActionId, CounterId, LocalId, TableId, Ty};
use crate::ast::{BinaryOp, UnaryOp};
use crate::diag::Span;

/// Where a variable lives: the packet's headers, the architecture's metadata, or a local.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Root {
    /// The headers struct `H` shared by parser, control and deparser (type [`super::Checked::headers_ty`]).
    Headers,
    /// `in xdp_input` of the XDP model's control (struct `xdp_input`).
    XdpInput,
    /// `out xdp_output` of the XDP model's control (struct `xdp_output`).
    XdpOutput,
    /// `out bool accept` of the filter model's control.
    Accept,
    /// A local or action parameter.
    Local(LocalId),
}

/// A checked expression with its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Its type; for `bit<N>`/`int<N>` results the width the value is truncated to.
    pub ty: Ty,
    /// Where it was written.
    pub span: Span,
}

/// The extern functions of the models that code generation implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExternFn {
    /// `csum_replace2(csum, old, new)`: RFC 1624 incremental update for a 16-bit field.
    CsumReplace2,
    /// `csum_replace4(csum, old, new)`: RFC 1624 incremental update for a 32-bit field.
    CsumReplace4,
    /// `ebpf_ipv4_checksum(version, ihl, ..., dstAddr)`: the IPv4 header checksum of these fields.
    Ipv4Checksum,
    /// `BPF_KTIME_GET_NS()` (its low 32 bits, as `xdp_model.p4` declares it) or `hwxdp_ktime_get_ns()` (64 bits).
    KtimeGetNs,
}

/// Every checked expression form.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer of type `Bit`, `Int` (two's complement, truncated to the width), `InfInt`, or a serializable
    /// enum's member value.
    Const(u128),
    /// `true` or `false`.
    Bool(bool),
    /// A whole variable.
    Var(Root),
    /// Field `index` of a header or struct value.
    Field { base: Box<Expr>, index: usize },
    /// Element `index` (a constant) of a header stack.
    StackElem { base: Box<Expr>, index: u32 },
    /// `stack.next` (only as the argument of [`Stmt::Extract`]) .
    StackNext(Box<Expr>),
    /// `stack.last`: the last element extracted.
    StackLast(Box<Expr>),
    /// `h.isValid()` of a header.
    IsValid(Box<Expr>),
    /// A member of a non-serializable enum, by index (`xdp_action.XDP_TX` is member 3 of `xdp_action`).
    EnumMember(usize),
    /// `error.Name`, by index into [`super::Checked::errors`].
    ErrorMember(usize),
    /// `base[hi:lo]`, bounds folded.
    Slice { base: Box<Expr>, hi: u32, lo: u32 },
    /// `lhs ++ rhs`: `lhs` in the high bits.
    Concat(Box<Expr>, Box<Expr>),
    /// A prefix operator; the operand has the result type.
    Unary(UnaryOp, Box<Expr>),
    /// A binary operator. Both operands have the same type, except shifts (the right operand is any unsigned
    /// integer) and `++` (see [`ExprKind::Concat`], never `Binary`). Comparisons, `&&` and `||` have type `Bool`.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// A cast of the operand to this expression's type.
    Cast(Box<Expr>),
    /// `cond ? then : els`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A struct or header value built field by field, in field order.
    StructInit(Vec<Expr>),
    /// A call of an extern function.
    Extern(ExternFn, Vec<Expr>),
    /// A call of a user extern function implemented in C (`--extern-c FILE`), its arguments one per parameter, all
    /// `in`; of type `Void` or a scalar.
    CExtern { name: String, args: Vec<Expr> },
    /// `packet.lookahead<T>()`, of this expression's type; only in the parser.
    Lookahead,
    /// `packet.length()`: the packet's length in bytes, a `bit<32>`; only in the parser.
    PacketLength,
    /// Whether the last application of the table hit (`t.apply().hit`; the checker puts a
    /// [`Stmt::ApplyTable`] before the statement that reads it).
    TableHit(TableId),
}

/// A set of values of one select or table key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeysetElem {
    /// `default` or `_`.
    Any,
    /// Exactly this value.
    Value(u128),
    /// `value &&& mask`.
    Mask { value: u128, mask: u128 },
    /// `lo .. hi`, both included.
    Range { lo: u128, hi: u128 },
}

/// One arm of a `switch (t.apply().action_run)`: the actions it is written for (several when labels fall through),
/// or `None` for `default`.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchArm {
    /// The actions, or `None` for `default`.
    pub actions: Option<Vec<ActionId>>,
    /// What runs.
    pub body: Vec<Stmt>,
}

/// A checked statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `lhs = rhs;`, `lhs` an lvalue (a `Var`, `Field`, `StackElem` or `Slice` chain), types equal. Assigning a
    /// header copies its validity too (P4 semantics): a header stack's `push_front(n)`/`pop_front(n)` are lowered
    /// to element assignments and [`Stmt::SetInvalid`]s; a [`ExprKind::StructInit`] assigned to a header makes it
    /// valid.
    Assign { lhs: Expr, rhs: Expr },
    /// A local's declaration with its initial value; locals without one start as zero (header locals invalid).
    Declare { local: LocalId, init: Option<Expr> },
    /// `if (cond) { then } else { els }`.
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    /// Looks the table up and runs the action found (or the default action).
    ApplyTable(TableId),
    /// `switch (t.apply().action_run)`: applies the table, then runs the arm of the action that ran.
    SwitchAction {
        table: TableId,
        arms: Vec<SwitchArm>,
    },
    /// A direct call of an action with its arguments, one per parameter.
    CallAction { action: ActionId, args: Vec<Expr> },
    /// `h.setValid()`.
    SetValid(Expr),
    /// `h.setInvalid()`.
    SetInvalid(Expr),
    /// `return;` in an action or in the control's `apply`.
    Return,
    /// `exit;`.
    Exit,
    /// `counters.increment(index)` (`amount` is `None`) or `counters.add(index, amount)`.
    Count {
        counter: CounterId,
        index: Expr,
        amount: Option<Expr>,
    },
    /// `hwxdp_perf_event_output(data)` of `hwxdp_xdp.p4`.
    PerfOutput(Expr),
    /// `BPF_PERF_EVENT_OUTPUT()` of P4C-XDP's `xdp_model.p4`: a perf sample of the packet's length (`u32`, host
    /// order) followed by the whole packet, as P4C-XDP generates it.
    PerfPacket,
    /// A call whose result, if any, is unused: a C extern ([`ExprKind::CExtern`]) called as a statement.
    Eval(Expr),
    /// `packet.extract(h)`: `h` a header lvalue or a [`ExprKind::StackNext`].
    Extract(Expr),
    /// `packet.advance(bits)`.
    Advance(Expr),
    /// `verify(cond, error)`: rejects with the error unless `cond` holds.
    Verify { cond: Expr, error: usize },
    /// `packet.emit(h)` in the deparser: `h` a header, a header stack, or a struct of headers.
    Emit(Expr),
}
