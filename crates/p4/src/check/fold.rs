//! Constant folding of integer operations with P4's semantics: `bit<W>` wraps modulo 2^W, `int<W>` is two's
//! complement in W bits, and an infinite-precision integer (`InfInt`, held as an `i128`'s bits) must not overflow.

use crate::ast::{BinaryOp, UnaryOp};

/// The arithmetic an integer type does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Num {
    /// `bit<W>`.
    Unsigned(u32),
    /// `int<W>`.
    Signed(u32),
    /// An integer literal of no width.
    Inf,
}

/// A folded value: an integer (truncated to its width) or a boolean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Folded {
    /// An integer.
    Int(u128),
    /// A boolean.
    Bool(bool),
}

/// All ones in the low `w` bits.
pub(super) fn mask(w: u32) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

/// `v` sign-extended from `w` bits.
pub(super) fn sext(v: u128, w: u32) -> i128 {
    if w == 0 || w >= 128 {
        return v as i128;
    }
    let shift = 128 - w;
    ((v << shift) as i128) >> shift
}

impl Num {
    /// `v` truncated to this type's width.
    pub(super) fn trunc(self, v: u128) -> u128 {
        match self {
            Num::Unsigned(w) | Num::Signed(w) => v & mask(w),
            Num::Inf => v,
        }
    }

    /// The value as a signed number (for `bit<W>` only when it fits, which `bit<128>` may not).
    fn signed(self, v: u128) -> i128 {
        match self {
            Num::Unsigned(_) => v as i128,
            Num::Signed(w) => sext(v, w),
            Num::Inf => v as i128,
        }
    }

    fn is_signed(self) -> bool {
        !matches!(self, Num::Unsigned(_))
    }
}

const OVERFLOW: &str = "constant overflow";

/// `a op b` for operands of type `num` (for shifts, `b` is the unsigned amount).
pub(super) fn binary(op: BinaryOp, num: Num, a: u128, b: u128) -> Result<Folded, &'static str> {
    use BinaryOp::*;
    let (sa, sb) = (num.signed(a), num.signed(b));
    let cmp = |o: std::cmp::Ordering| -> Folded {
        Folded::Bool(match op {
            Lt => o.is_lt(),
            Gt => o.is_gt(),
            Le => o.is_le(),
            _ => o.is_ge(),
        })
    };
    let order = if num.is_signed() {
        sa.cmp(&sb)
    } else {
        a.cmp(&b)
    };
    let inf = num == Num::Inf;
    let int = |v: u128| Ok(Folded::Int(num.trunc(v)));
    match op {
        Eq => Ok(Folded::Bool(a == b)),
        Ne => Ok(Folded::Bool(a != b)),
        Lt | Gt | Le | Ge => Ok(cmp(order)),
        BitOr => int(a | b),
        BitXor => int(a ^ b),
        BitAnd => int(a & b),
        Add if inf => int(sa.checked_add(sb).ok_or(OVERFLOW)? as u128),
        Sub if inf => int(sa.checked_sub(sb).ok_or(OVERFLOW)? as u128),
        Mul if inf => int(sa.checked_mul(sb).ok_or(OVERFLOW)? as u128),
        Add => int(a.wrapping_add(b)),
        Sub => int(a.wrapping_sub(b)),
        Mul => int(a.wrapping_mul(b)),
        Div | Mod if b == 0 => Err("division by zero"),
        Div | Mod if num.is_signed() => {
            let r = if op == Div {
                sa.checked_div(sb)
            } else {
                sa.checked_rem(sb)
            };
            int(r.ok_or(OVERFLOW)? as u128)
        }
        Div => int(a / b),
        Mod => int(a % b),
        Shl => match num {
            Num::Inf => {
                if sa == 0 {
                    return int(0);
                }
                let amount = u32::try_from(b).ok().filter(|&s| s < 127).ok_or(OVERFLOW)?;
                let r = sa << amount;
                if r >> amount != sa {
                    return Err(OVERFLOW);
                }
                int(r as u128)
            }
            Num::Unsigned(w) | Num::Signed(w) => int(if b >= w as u128 { 0 } else { a << b }),
        },
        Shr => {
            let amount = b.min(127) as u32;
            match num {
                Num::Unsigned(w) => int(if b >= w as u128 { 0 } else { a >> b }),
                Num::Signed(_) | Num::Inf => int((sa >> amount) as u128),
            }
        }
        AddSat | SubSat => Ok(Folded::Int(saturate(op, num, a, b))),
        Or | And | Concat => Err("not a constant"),
    }
}

fn saturate(op: BinaryOp, num: Num, a: u128, b: u128) -> u128 {
    match num {
        Num::Unsigned(w) => {
            if op == BinaryOp::AddSat {
                a.checked_add(b)
                    .filter(|&r| r <= mask(w))
                    .unwrap_or(mask(w))
            } else {
                a.saturating_sub(b)
            }
        }
        Num::Signed(w) => {
            let (sa, sb) = (sext(a, w), sext(b, w));
            let max = (mask(w) >> 1) as i128;
            let min = -max - 1;
            let r = if op == BinaryOp::AddSat {
                sa.saturating_add(sb)
            } else {
                sa.saturating_sub(sb)
            };
            num.trunc(r.clamp(min, max) as u128)
        }
        Num::Inf => a,
    }
}

/// `op v` for an operand of type `num`.
pub(super) fn unary(op: UnaryOp, num: Num, v: u128) -> Result<u128, &'static str> {
    Ok(match op {
        UnaryOp::Neg if num == Num::Inf => (v as i128).checked_neg().ok_or(OVERFLOW)? as u128,
        UnaryOp::Neg => num.trunc(v.wrapping_neg()),
        UnaryOp::Complement => num.trunc(!v),
        UnaryOp::Plus | UnaryOp::Not => v,
    })
}

/// An integer of type `from` converted to `to`: signed sources are sign-extended, then truncated.
pub(super) fn convert(from: Num, to: Num, v: u128) -> u128 {
    to.trunc(from.signed(v) as u128)
}
