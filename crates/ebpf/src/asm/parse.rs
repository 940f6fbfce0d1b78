//! Parses the tokens of one instruction into an [`InsnKind`], leaving label references for the second pass.

use super::cursor::{imm32, imm64, off16, Cursor, LabelRef, ParseError, Parsed, Stmt, Target};
use super::lexer::Tok;
use crate::kind::{AluOp, AtomicOp, ByteOrder, CallKind, InsnKind, JmpCond, Source, Width};

fn plain(kind: InsnKind) -> Stmt {
    Stmt { kind, target: None }
}

/// Builds a jump whose offset is either known now or patched later from a label.
fn jump(target: Target<'_>, build: impl Fn(i128) -> Parsed<InsnKind>) -> Parsed<Stmt> {
    match target {
        Target::Rel(n) => Ok(plain(build(n)?)),
        Target::Label(label) => Ok(Stmt {
            kind: build(0)?,
            target: Some(LabelRef {
                label: label.to_string(),
            }),
        }),
    }
}

/// Parses one instruction.
pub(crate) fn parse(toks: &[Tok<'_>]) -> Parsed<Stmt> {
    let mut c = Cursor { toks };
    let stmt = match c.peek() {
        Some(Tok::Ident(word)) => {
            c.bump();
            keyword_insn(word, &mut c)?
        }
        Some(Tok::Punct("*")) => {
            c.bump();
            let (size, signed, base, off) = c.typed_mem()?;
            c.punct("=")?;
            // Stores take an `r` register, or a `w` one as llvm-objdump prints them for alu32 targets.
            let src = match c.peek() {
                Some(Tok::Reg { n, .. }) => {
                    c.bump();
                    Source::Reg(n)
                }
                _ => c.source(true)?,
            };
            if signed {
                return Err(ParseError::Syntax);
            }
            plain(InsnKind::Store {
                size,
                base,
                off,
                src,
            })
        }
        Some(Tok::Reg { wide, n }) => {
            c.bump();
            plain(assignment(wide, n, &mut c)?)
        }
        _ => return Err(ParseError::Syntax),
    };
    c.end()?;
    Ok(stmt)
}

fn keyword_insn(word: &str, c: &mut Cursor<'_, '_>) -> Parsed<Stmt> {
    match word {
        "exit" => Ok(plain(InsnKind::Exit)),
        "callx" => Ok(plain(InsnKind::CallReg { reg: c.reg()?.1 })),
        "call" => call(c),
        "goto" => jump(c.target()?, |n| Ok(InsnKind::Ja { off: off16(n)? })),
        "gotol" => jump(c.target()?, |n| Ok(InsnKind::JaLong { imm: imm32(n)? })),
        "if" => {
            let (wide, dst) = c.reg()?;
            let cond = match c.bump() {
                Some(Tok::Punct(p)) => JmpCond::ALL.into_iter().find(|cond| cond.symbol() == p),
                _ => None,
            }
            .ok_or(ParseError::Syntax)?;
            let src = c.source(wide)?;
            c.keyword("goto")?;
            jump(c.target()?, |n| {
                Ok(InsnKind::Branch {
                    wide,
                    cond,
                    dst,
                    src,
                    off: off16(n)?,
                })
            })
        }
        "lock" => {
            c.punct("*")?;
            let (size, signed, base, off) = c.typed_mem()?;
            let op = match c.bump() {
                Some(Tok::Punct("+=")) => AtomicOp::Add,
                Some(Tok::Punct("|=")) => AtomicOp::Or,
                Some(Tok::Punct("&=")) => AtomicOp::And,
                Some(Tok::Punct("^=")) => AtomicOp::Xor,
                _ => return Err(ParseError::Syntax),
            };
            let (_, src) = c.reg()?;
            if signed {
                return Err(ParseError::Syntax);
            }
            Ok(plain(InsnKind::Atomic {
                size,
                op,
                base,
                off,
                src,
            }))
        }
        "ld_pseudo" => {
            let (_, dst) = c.reg()?;
            c.punct(",")?;
            let pseudo = u8::try_from(c.num()?).map_err(|_| ParseError::Syntax)?;
            c.punct(",")?;
            let imm = imm64(c.num()?)?;
            Ok(plain(InsnKind::LoadImm64 { dst, pseudo, imm }))
        }
        _ => Err(ParseError::Syntax),
    }
}

/// `call 7` (helper), `call label` or `call pc+N` (bpf-to-bpf), `call kfunc N` (kernel function by BTF id).
fn call(c: &mut Cursor<'_, '_>) -> Parsed<Stmt> {
    let call_of = |kind: CallKind| {
        move |n: i128| {
            Ok(InsnKind::Call {
                kind,
                imm: imm32(n)?,
            })
        }
    };
    match c.bump() {
        Some(Tok::Num(n)) => Ok(plain(call_of(CallKind::Helper)(n)?)),
        Some(Tok::Ident("pc")) => Ok(plain(call_of(CallKind::Local)(c.num()?)?)),
        Some(Tok::Ident("kfunc")) => Ok(plain(call_of(CallKind::Kfunc)(c.num()?)?)),
        Some(Tok::Ident(label)) => jump(Target::Label(label), call_of(CallKind::Local)),
        _ => Err(ParseError::Syntax),
    }
}

/// Everything that starts with a destination register.
fn assignment(wide: bool, dst: u8, c: &mut Cursor<'_, '_>) -> Parsed<InsnKind> {
    let op = match c.bump() {
        Some(Tok::Punct(p)) => p,
        _ => return Err(ParseError::Syntax),
    };
    if op != "=" {
        let op = AluOp::ALL
            .into_iter()
            .find(|o| o.symbol() == op)
            .ok_or(ParseError::Syntax)?;
        let src = c.source(wide)?;
        return Ok(InsnKind::Alu { wide, op, dst, src });
    }
    match c.peek().ok_or(ParseError::Syntax)? {
        Tok::Punct("*") => {
            c.bump();
            load(dst, c)
        }
        Tok::Punct("-") => {
            c.bump();
            let (w, n) = c.reg()?;
            if (w, n) != (wide, dst) {
                return Err(ParseError::Registers);
            }
            Ok(InsnKind::Neg { wide, dst })
        }
        Tok::Punct("(") => {
            let (from, signed) = c.ty_no_star()?;
            let (w, src) = c.reg()?;
            if !signed || w != wide {
                return Err(ParseError::Registers);
            }
            Ok(InsnKind::MovSx {
                wide,
                from,
                dst,
                src,
            })
        }
        Tok::Num(n) => {
            c.bump();
            if c.keyword("ll").is_ok() {
                if !wide {
                    return Err(ParseError::Registers);
                }
                return Ok(InsnKind::LoadImm64 {
                    dst,
                    pseudo: 0,
                    imm: imm64(n)?,
                });
            }
            Ok(InsnKind::Alu {
                wide,
                op: AluOp::Mov,
                dst,
                src: Source::Imm(imm32(n)?),
            })
        }
        Tok::Reg { .. } => {
            let src = c.source(wide)?;
            Ok(InsnKind::Alu {
                wide,
                op: AluOp::Mov,
                dst,
                src,
            })
        }
        Tok::Ident(name) => {
            c.bump();
            named_rhs(name, wide, dst, c)
        }
        _ => Err(ParseError::Syntax),
    }
}

/// `r1 = *(u32 *)(r2 + 8)`, `r1 = *(s8 *)(...)` and the legacy `r0 = *(u32 *)skb[...]`.
fn load(dst: u8, c: &mut Cursor<'_, '_>) -> Parsed<InsnKind> {
    let (size, signed) = c.ty()?;
    if c.keyword("skb").is_ok() {
        c.punct("[")?;
        let (index, imm) = match c.peek() {
            Some(Tok::Reg { n, .. }) => {
                c.bump();
                let imm = if c.peek() == Some(Tok::Punct("]")) {
                    0
                } else {
                    imm32(c.displacement()?)?
                };
                (Some(n), imm)
            }
            _ => (None, imm32(c.num()?)?),
        };
        c.punct("]")?;
        if dst != 0 || signed {
            return Err(ParseError::Registers);
        }
        return Ok(InsnKind::LoadPacket { size, index, imm });
    }
    c.punct("(")?;
    let (base, off) = c.pointer()?;
    c.punct(")")?;
    Ok(InsnKind::Load {
        size,
        signed,
        dst,
        base,
        off,
    })
}

/// Right-hand sides that start with a name: byte swaps and atomics with a result.
fn named_rhs(name: &str, wide: bool, dst: u8, c: &mut Cursor<'_, '_>) -> Parsed<InsnKind> {
    let swap = [
        ("le", ByteOrder::Le),
        ("be", ByteOrder::Be),
        ("bswap", ByteOrder::Swap),
    ]
    .into_iter()
    .find_map(|(prefix, order)| Some((order, name.strip_prefix(prefix)?.parse::<u8>().ok()?)));
    if let Some((order, bits)) = swap {
        let (_, n) = c.reg()?;
        if n != dst {
            return Err(ParseError::Registers);
        }
        return Ok(InsnKind::Endian { order, bits, dst });
    }
    let size = if wide { Width::DW } else { Width::W };
    let fetch = [
        ("atomic_fetch_add", AtomicOp::FetchAdd),
        ("atomic_fetch_or", AtomicOp::FetchOr),
        ("atomic_fetch_and", AtomicOp::FetchAnd),
        ("atomic_fetch_xor", AtomicOp::FetchXor),
    ]
    .into_iter()
    .find(|(n, _)| *n == name);
    c.punct("(")?;
    let kind = if let Some((_, op)) = fetch {
        let (mem_size, signed, base, off) = c.typed_mem()?;
        c.punct(",")?;
        let src = same_reg(c, wide, dst)?;
        if mem_size != size || signed {
            return Err(ParseError::Syntax);
        }
        InsnKind::Atomic {
            size,
            op,
            base,
            off,
            src,
        }
    } else {
        let (want_wide, op) = match name {
            "xchg_64" => (true, AtomicOp::Xchg),
            "xchg32_32" => (false, AtomicOp::Xchg),
            "cmpxchg_64" => (true, AtomicOp::Cmpxchg),
            "cmpxchg32_32" => (false, AtomicOp::Cmpxchg),
            _ => return Err(ParseError::Syntax),
        };
        if want_wide != wide {
            return Err(ParseError::Registers);
        }
        let (base, off) = c.pointer()?;
        c.punct(",")?;
        let src = if op == AtomicOp::Cmpxchg {
            if dst != 0 {
                return Err(ParseError::Registers);
            }
            same_reg(c, wide, 0)?;
            c.punct(",")?;
            let (w, src) = c.reg()?;
            if w != wide {
                return Err(ParseError::Registers);
            }
            src
        } else {
            same_reg(c, wide, dst)?
        };
        InsnKind::Atomic {
            size,
            op,
            base,
            off,
            src,
        }
    };
    c.punct(")")?;
    Ok(kind)
}

/// A register that must repeat an earlier one (`r2 = atomic_fetch_add(..., r2)`).
fn same_reg(c: &mut Cursor<'_, '_>, wide: bool, n: u8) -> Parsed<u8> {
    match c.reg()? {
        (w, m) if w == wide && m == n => Ok(n),
        _ => Err(ParseError::Registers),
    }
}
