//! A cursor over the tokens of one line, with the operand parsers every instruction form shares.

use super::lexer::Tok;
use crate::kind::{InsnKind, Source, Width};

/// Why one instruction does not parse; the caller adds the line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// The tokens form no instruction.
    Syntax,
    /// A number does not fit its field.
    Range { value: i128, field: &'static str },
    /// Registers of an instruction mix `r` and `w`, or repeat where they must not differ.
    Registers,
}

/// A jump or call whose offset is a label, resolved once every label's slot is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LabelRef {
    pub(crate) label: String,
}

/// One parsed instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stmt {
    pub(crate) kind: InsnKind,
    pub(crate) target: Option<LabelRef>,
}

pub(super) type Parsed<T> = Result<T, ParseError>;

/// A position in the token list; every method consumes on success only.
#[derive(Clone, Copy)]
pub(super) struct Cursor<'t, 'a> {
    pub(super) toks: &'t [Tok<'a>],
}

impl<'t, 'a> Cursor<'t, 'a> {
    pub(super) fn peek(&self) -> Option<Tok<'a>> {
        self.toks.first().copied()
    }

    pub(super) fn bump(&mut self) -> Option<Tok<'a>> {
        let (first, rest) = self.toks.split_first()?;
        self.toks = rest;
        Some(*first)
    }

    pub(super) fn punct(&mut self, p: &str) -> Parsed<()> {
        match self.peek() {
            Some(Tok::Punct(q)) if q == p => {
                self.bump();
                Ok(())
            }
            _ => Err(ParseError::Syntax),
        }
    }

    pub(super) fn eat_punct(&mut self, p: &str) -> bool {
        self.punct(p).is_ok()
    }

    pub(super) fn ident(&mut self) -> Parsed<&'a str> {
        match self.bump() {
            Some(Tok::Ident(s)) => Ok(s),
            _ => Err(ParseError::Syntax),
        }
    }

    pub(super) fn keyword(&mut self, word: &str) -> Parsed<()> {
        match self.peek() {
            Some(Tok::Ident(s)) if s == word => {
                self.bump();
                Ok(())
            }
            _ => Err(ParseError::Syntax),
        }
    }

    pub(super) fn reg(&mut self) -> Parsed<(bool, u8)> {
        match self.bump() {
            Some(Tok::Reg { wide, n }) => Ok((wide, n)),
            _ => Err(ParseError::Syntax),
        }
    }

    pub(super) fn num(&mut self) -> Parsed<i128> {
        match self.bump() {
            Some(Tok::Num(n)) => Ok(n),
            _ => Err(ParseError::Syntax),
        }
    }

    pub(super) fn end(&self) -> Parsed<()> {
        if self.toks.is_empty() {
            Ok(())
        } else {
            Err(ParseError::Syntax)
        }
    }

    /// `+ 8`, `- 8` or `+ -8` after a base register.
    pub(super) fn displacement(&mut self) -> Parsed<i128> {
        let negative = if self.eat_punct("-") {
            true
        } else {
            self.punct("+")?;
            false
        };
        let n = self.num()?;
        Ok(if negative { -n } else { n })
    }

    /// `r1 - 8`, the pointer operand of xchg and cmpxchg.
    pub(super) fn pointer(&mut self) -> Parsed<(u8, i16)> {
        let (_, base) = self.reg()?;
        let off = off16(self.displacement()?)?;
        Ok((base, off))
    }

    /// `(u32 *)`: the width and whether it sign-extends.
    pub(super) fn ty(&mut self) -> Parsed<(Width, bool)> {
        self.punct("(")?;
        let ty = match self.ident()? {
            "u8" => (Width::B, false),
            "u16" => (Width::H, false),
            "u32" => (Width::W, false),
            "u64" => (Width::DW, false),
            "s8" => (Width::B, true),
            "s16" => (Width::H, true),
            "s32" => (Width::W, true),
            _ => return Err(ParseError::Syntax),
        };
        self.punct("*")?;
        self.punct(")")?;
        Ok(ty)
    }

    /// `(u32 *)(r1 + 8)`.
    pub(super) fn typed_mem(&mut self) -> Parsed<(Width, bool, u8, i16)> {
        let (size, signed) = self.ty()?;
        self.punct("(")?;
        let (base, off) = self.pointer()?;
        self.punct(")")?;
        Ok((size, signed, base, off))
    }

    /// A register or immediate second operand, checked against the width of the first.
    pub(super) fn source(&mut self, wide: bool) -> Parsed<Source> {
        match self.peek() {
            Some(Tok::Reg { wide: w, n }) if w == wide => {
                self.bump();
                Ok(Source::Reg(n))
            }
            Some(Tok::Reg { .. }) => Err(ParseError::Registers),
            Some(Tok::Num(n)) => {
                self.bump();
                Ok(Source::Imm(imm32(n)?))
            }
            _ => Err(ParseError::Syntax),
        }
    }

    /// A jump target: a number of slots (`+3`, `-2`, `3`) or a label.
    pub(super) fn target(&mut self) -> Parsed<Target<'a>> {
        match self.bump() {
            Some(Tok::Num(n)) => Ok(Target::Rel(n)),
            Some(Tok::Ident(label)) => Ok(Target::Label(label)),
            _ => Err(ParseError::Syntax),
        }
    }
}

pub(super) enum Target<'a> {
    Rel(i128),
    Label(&'a str),
}

/// Accepts -2^31..2^32-1, wrapping the upper half as llvm-mc does.
pub(super) fn imm32(n: i128) -> Parsed<i32> {
    if (i32::MIN as i128..=u32::MAX as i128).contains(&n) {
        Ok(n as u32 as i32)
    } else {
        Err(ParseError::Range {
            value: n,
            field: "imm",
        })
    }
}

pub(super) fn off16(n: i128) -> Parsed<i16> {
    i16::try_from(n).map_err(|_| ParseError::Range {
        value: n,
        field: "off",
    })
}

pub(super) fn imm64(n: i128) -> Parsed<i64> {
    if (i64::MIN as i128..=u64::MAX as i128).contains(&n) {
        Ok(n as u64 as i64)
    } else {
        Err(ParseError::Range {
            value: n,
            field: "imm",
        })
    }
}

impl Cursor<'_, '_> {
    /// `(s8)` of a sign-extending move.
    pub(super) fn ty_no_star(&mut self) -> Parsed<(Width, bool)> {
        self.punct("(")?;
        let ty = match self.ident()? {
            "s8" => (Width::B, true),
            "s16" => (Width::H, true),
            "s32" => (Width::W, true),
            _ => return Err(ParseError::Syntax),
        };
        self.punct(")")?;
        Ok(ty)
    }
}
