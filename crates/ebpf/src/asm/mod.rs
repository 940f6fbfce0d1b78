//! An assembler for the text [`crate::format_insn`] prints, for writing programs by hand in tests.
//!
//! One instruction per line; `;` and `#` start comments; blank lines are ignored. A line may start with labels
//! (`name:`), which `goto name`, `if ... goto name`, `gotol name` and `call name` (a bpf-to-bpf call) refer to.
//! Besides llvm-objdump's text it reads: hexadecimal numbers (`0x10`, as LLVM 19 prints by default), a trailing
//! target label after a jump (`goto +2 <f+0x48>`, ignored), `w` registers where alu32 llvm-objdump prints them
//! (`w1 = *(u32 *)(r2 + 0)`, `*(u32 *)(r1 + 0) = w2`), and `call pc+N` and `call kfunc N` for the bpf-to-bpf and
//! kfunc calls whose llvm-objdump text is indistinguishable from a helper call.

mod cursor;
mod lexer;
mod parse;

use crate::kind::InsnKind;
use crate::valid::{validate, InvalidInsn};
use crate::Insn;
use cursor::{ParseError, Stmt};
use lexer::{lex, LexError, Tok};
use parse::parse;
use std::collections::HashMap;
use thiserror::Error;

/// Why a text does not assemble. Line numbers start at 1.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum AsmError {
    /// The line is no instruction.
    #[error("line {line}: cannot parse `{text}`")]
    Syntax {
        /// Line number.
        line: usize,
        /// The instruction text.
        text: String,
    },
    /// A character that starts no token.
    #[error("line {line}: unexpected character `{ch}`")]
    Char {
        /// Line number.
        line: usize,
        /// The character.
        ch: char,
    },
    /// A malformed number, or one above 64 bits.
    #[error("line {line}: bad number `{text}`")]
    Number {
        /// Line number.
        line: usize,
        /// The number as written.
        text: String,
    },
    /// A register above r10.
    #[error("line {line}: no register `{name}`")]
    Register {
        /// Line number.
        line: usize,
        /// The register as written.
        name: String,
    },
    /// The registers of an instruction mix `r` and `w` or differ where they must be the same.
    #[error("line {line}: registers do not fit `{text}`")]
    Registers {
        /// Line number.
        line: usize,
        /// The instruction text.
        text: String,
    },
    /// A number does not fit the field it goes into.
    #[error("line {line}: {value} does not fit the {field} field")]
    Range {
        /// Line number.
        line: usize,
        /// The number.
        value: i128,
        /// `imm` or `off`.
        field: &'static str,
    },
    /// A label is defined twice.
    #[error("line {line}: label `{label}` is already defined")]
    DuplicateLabel {
        /// Line number.
        line: usize,
        /// The label.
        label: String,
    },
    /// A jump or call names a label that is never defined.
    #[error("line {line}: unknown label `{label}`")]
    UnknownLabel {
        /// Line number.
        line: usize,
        /// The label.
        label: String,
    },
    /// The text parses but encodes no valid instruction (for example `w1 = (s32)w2`).
    #[error("line {line}: {source}")]
    Invalid {
        /// Line number.
        line: usize,
        /// What is wrong with the instruction.
        source: InvalidInsn,
    },
}

/// Assembles `text` into instructions.
pub fn assemble(text: &str) -> Result<Vec<Insn>, AsmError> {
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut stmts: Vec<(usize, usize, Stmt)> = Vec::new();
    let mut slot = 0;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let code = strip_target_label(strip_comment(raw)).trim();
        let toks = lex(code).map_err(|e| lex_error(line, e))?;
        let mut rest = toks.as_slice();
        while let [Tok::Ident(name), Tok::Punct(":"), tail @ ..] = rest {
            if labels.insert(name.to_string(), slot).is_some() {
                return Err(AsmError::DuplicateLabel {
                    line,
                    label: name.to_string(),
                });
            }
            rest = tail;
        }
        if rest.is_empty() {
            continue;
        }
        let stmt = parse(rest).map_err(|e| parse_error(line, code, e))?;
        let insn = stmt.kind.to_insn();
        validate(&insn).map_err(|source| AsmError::Invalid { line, source })?;
        stmts.push((line, slot, stmt));
        slot += insn.slots();
    }
    stmts
        .into_iter()
        .map(|(line, slot, stmt)| {
            let mut kind = stmt.kind;
            if let Some(target) = stmt.target {
                let to = *labels.get(&target.label).ok_or(AsmError::UnknownLabel {
                    line,
                    label: target.label.clone(),
                })?;
                let rel = to as i128 - (slot as i128 + 1);
                set_offset(&mut kind, rel).map_err(|field| AsmError::Range {
                    line,
                    value: rel,
                    field,
                })?;
            }
            Ok(kind.to_insn())
        })
        .collect()
}

fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(at) => &line[..at],
        None => line,
    }
}

/// Drops the ` <sym+0x10>` that llvm-objdump appends to jumps.
fn strip_target_label(code: &str) -> &str {
    let Some(goto) = code.find("goto") else {
        return code;
    };
    match code[goto..].find('<') {
        Some(at) if code.trim_end().ends_with('>') => &code[..goto + at],
        _ => code,
    }
}

fn set_offset(kind: &mut InsnKind, rel: i128) -> Result<(), &'static str> {
    match kind {
        InsnKind::Ja { off } | InsnKind::Branch { off, .. } => {
            *off = i16::try_from(rel).map_err(|_| "off")?
        }
        InsnKind::JaLong { imm } | InsnKind::Call { imm, .. } => {
            *imm = i32::try_from(rel).map_err(|_| "imm")?
        }
        _ => return Err("off"),
    }
    Ok(())
}

fn lex_error(line: usize, e: LexError) -> AsmError {
    match e {
        LexError::Char(ch) => AsmError::Char { line, ch },
        LexError::Number(text) => AsmError::Number { line, text },
        LexError::Register(name) => AsmError::Register { line, name },
    }
}

fn parse_error(line: usize, code: &str, e: ParseError) -> AsmError {
    let text = code.to_string();
    match e {
        ParseError::Syntax => AsmError::Syntax { line, text },
        ParseError::Registers => AsmError::Registers { line, text },
        ParseError::Range { value, field } => AsmError::Range { line, value, field },
    }
}
