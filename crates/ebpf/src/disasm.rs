//! Disassembly in the syntax `llvm-objdump -d` prints.
//!
//! The text is what LLVM 19's `llvm-objdump -d --no-print-imm-hex` prints (identical to LLVM 14's default output
//! for the pre-v4 instructions, except `callx`, where LLVM 14 reads the register from the immediate). Where the
//! default LLVM decoder has no text, or its text drops a field, we print an extension that the assembler reads back:
//! - 32-bit atomics other than `lock ... +=` use the alu32 text of `llvm-objdump --mcpu=v3`
//!   (`w2 = atomic_fetch_add((u32 *)(r1 - 8), w2)`, `lock *(u32 *)(r1 - 8) |= w2`, `w2 = xchg32_32(r1 - 8, w2)`);
//! - `ld_pseudo` prints its whole 64-bit immediate (LLVM prints only the low 32 bits, which is the same text
//!   whenever the high half is zero);
//! - `skb[r3 + 4]` for an indirect packet load with a non-zero immediate (LLVM prints `skb[r3]`).
//!
//! `call` prints its immediate whatever the call kind, as LLVM does, so the text of a bpf-to-bpf or kfunc call reads
//! back as a helper call. Instructions that fail [`crate::validate`] print as `<unknown>`.

use crate::kind::{AtomicOp, InsnKind, Source, Width};
use crate::valid::kind;
use crate::Insn;
use std::fmt::Write;

/// The instruction text llvm-objdump prints for `insn`, without a jump-target label.
pub fn format_insn(insn: &Insn) -> String {
    match kind(insn) {
        Ok(k) => format_kind(&k),
        Err(_) => "<unknown>".to_string(),
    }
}

/// The text of a classified instruction.
pub fn format_kind(k: &InsnKind) -> String {
    match *k {
        InsnKind::Alu { wide, op, dst, src } => {
            format!("{} {} {}", reg(wide, dst), op.symbol(), source(wide, src))
        }
        InsnKind::Neg { wide, dst } => format!("{0} = -{0}", reg(wide, dst)),
        InsnKind::MovSx {
            wide,
            from,
            dst,
            src,
        } => {
            format!(
                "{} = (s{}){}",
                reg(wide, dst),
                from.bytes() * 8,
                reg(wide, src)
            )
        }
        InsnKind::Endian { order, bits, dst } => format!("r{dst} = {}{bits} r{dst}", order.name()),
        InsnKind::LoadImm64 {
            dst,
            pseudo: 0,
            imm,
        } => format!("r{dst} = {imm} ll"),
        InsnKind::LoadImm64 { dst, pseudo, imm } => {
            format!("ld_pseudo\tr{dst}, {pseudo}, {}", imm as u64)
        }
        InsnKind::LoadPacket { size, index, imm } => {
            let at = match index {
                None => imm.to_string(),
                Some(r) if imm == 0 => format!("r{r}"),
                Some(r) => format!("r{r} {}", signed_term(imm as i64)),
            };
            format!("r0 = *({} *)skb[{at}]", unsigned(size))
        }
        InsnKind::Load {
            size,
            signed,
            dst,
            base,
            off,
        } => {
            let ty = if signed {
                signed_ty(size)
            } else {
                unsigned(size)
            };
            format!("r{dst} = *({ty} *){}", address(base, off))
        }
        InsnKind::Store {
            size,
            base,
            off,
            src,
        } => {
            format!(
                "*({} *){} = {}",
                unsigned(size),
                address(base, off),
                source(true, src)
            )
        }
        InsnKind::Atomic {
            size,
            op,
            base,
            off,
            src,
        } => atomic(size, op, base, off, src),
        InsnKind::Ja { off } => format!("goto {off:+}"),
        InsnKind::JaLong { imm } => format!("gotol {imm:+}"),
        InsnKind::Branch {
            wide,
            cond,
            dst,
            src,
            off,
        } => {
            format!(
                "if {} {} {} goto {off:+}",
                reg(wide, dst),
                cond.symbol(),
                source(wide, src)
            )
        }
        InsnKind::Call { imm, .. } => format!("call {imm}"),
        InsnKind::CallReg { reg } => format!("callx r{reg}"),
        InsnKind::Exit => "exit".to_string(),
    }
}

fn reg(wide: bool, n: u8) -> String {
    format!("{}{n}", if wide { 'r' } else { 'w' })
}

fn source(wide: bool, src: Source) -> String {
    match src {
        Source::Reg(r) => reg(wide, r),
        Source::Imm(imm) => imm.to_string(),
    }
}

/// `+ 8` or `- 8`, the way llvm-objdump writes a displacement.
fn signed_term(value: i64) -> String {
    if value < 0 {
        format!("- {}", value.unsigned_abs())
    } else {
        format!("+ {value}")
    }
}

fn address(base: u8, off: i16) -> String {
    format!("(r{base} {})", signed_term(off as i64))
}

fn unsigned(size: Width) -> &'static str {
    match size {
        Width::B => "u8",
        Width::H => "u16",
        Width::W => "u32",
        Width::DW => "u64",
    }
}

fn signed_ty(size: Width) -> &'static str {
    match size {
        Width::B => "s8",
        Width::H => "s16",
        Width::W => "s32",
        Width::DW => "s64",
    }
}

fn atomic(size: Width, op: AtomicOp, base: u8, off: i16, src: u8) -> String {
    let wide = size == Width::DW;
    let bits = if wide { 64 } else { 32 };
    let at = address(base, off);
    let ptr = format!("r{base} {}", signed_term(off as i64));
    // LLVM's default decoder knows the 32-bit `lock +=` with an r register; every other 32-bit atomic only has the
    // alu32 text with w registers.
    let lock_reg = if wide || op == AtomicOp::Add {
        reg(true, src)
    } else {
        reg(false, src)
    };
    let s = reg(wide, src);
    let fetch = |name: &str| format!("{s} = atomic_fetch_{name}((u{bits} *){at}, {s})");
    match op {
        AtomicOp::Add => format!("lock *(u{bits} *){at} += {lock_reg}"),
        AtomicOp::Or => format!("lock *(u{bits} *){at} |= {lock_reg}"),
        AtomicOp::And => format!("lock *(u{bits} *){at} &= {lock_reg}"),
        AtomicOp::Xor => format!("lock *(u{bits} *){at} ^= {lock_reg}"),
        AtomicOp::FetchAdd => fetch("add"),
        AtomicOp::FetchOr => fetch("or"),
        AtomicOp::FetchAnd => fetch("and"),
        AtomicOp::FetchXor => fetch("xor"),
        AtomicOp::Xchg if wide => format!("{s} = xchg_64({ptr}, {s})"),
        AtomicOp::Xchg => format!("{s} = xchg32_32({ptr}, {s})"),
        AtomicOp::Cmpxchg if wide => format!("r0 = cmpxchg_64({ptr}, r0, {s})"),
        AtomicOp::Cmpxchg => format!("w0 = cmpxchg32_32({ptr}, w0, {s})"),
    }
}

/// The body llvm-objdump prints after a section's `Disassembly of section NAME:` line.
///
/// `symbols` are `(slot, name)` pairs. Each symbol that starts an instruction gets a header: a blank line, then
/// `{byte address:016x} <name>:`. When several share a slot llvm-objdump shows one; so do we, the greatest name.
/// Every instruction is one line `{slot:>8}:\t{bytes}\t{text}` (an `lddw` shows all 16 bytes). A jump is followed by
/// ` <sym>` or ` <sym+0xN>` naming the nearest symbol at or before its target (N in bytes), as llvm-objdump does,
/// and by nothing when no symbol precedes the target.
pub fn listing(insns: &[Insn], symbols: &[(usize, String)]) -> String {
    let mut sorted: Vec<(u64, &str)> = symbols
        .iter()
        .map(|(slot, name)| ((*slot as u64) * 8, name.as_str()))
        .collect();
    sorted.sort();
    let mut out = String::new();
    let mut slot = 0usize;
    for insn in insns {
        let addr = slot as u64 * 8;
        if let Some((_, name)) = sorted.iter().rev().find(|(a, _)| *a == addr) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\n{addr:016x} <{name}>:\n");
        }
        let bytes: Vec<String> = crate::encode(std::slice::from_ref(insn))
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let _ = write!(
            out,
            "{slot:>8}:\t{}\t{}",
            bytes.join(" "),
            format_insn(insn)
        );
        if let Some(rel) = kind(insn).ok().and_then(|k| k.jump_offset()) {
            // llvm-objdump computes the target in wrapping 64-bit byte addresses, so a jump before the section start
            // is labelled relative to the last symbol.
            let target = addr
                .wrapping_add(8)
                .wrapping_add((rel as u64).wrapping_mul(8));
            if let Some((sym_addr, name)) = sorted.iter().rev().find(|(a, _)| *a <= target) {
                match target - sym_addr {
                    0 => {
                        let _ = write!(out, " <{name}>");
                    }
                    disp => {
                        let _ = write!(out, " <{name}+0x{disp:x}>");
                    }
                }
            }
        }
        out.push('\n');
        slot += insn.slots();
    }
    out
}
