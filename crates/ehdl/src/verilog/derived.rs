//! A late access's address at a boundary where its base register is not carried yet.
//!
//! A stall check compares the younger packet's early address with the address each older packet in the window will
//! use for the late access. Where the late access's base register is not live at boundary `j` (pruning left it out),
//! every path from `j` to the access defines it in stages `j .. l - 1`. When every such definition is `base = a + c`
//! (a move, or a move fused with an immediate add) of one register `a` that boundary `j` carries and that nothing
//! in the window rewrites before the definition reads it, the older packet's address is `a + c + off` already at
//! `j`. rate_limiter's last token store (`*(u32 *)(r2 + 0)`, `r2 = r6 + 4` two stages before) is the case.

use super::stage::Gen;
use crate::ir::{Op, OpKind};
use hwxdp_ebpf::{AluOp, InsnKind, Source};

/// `dst = a + c` for a wide move or a move fused with an immediate add into `dst`.
fn offset_copy(op: &Op, insns: &[hwxdp_ebpf::Insn]) -> Option<(u8, u8, i64)> {
    match (&op.kind, hwxdp_ebpf::kind(&insns[op.insn as usize]).ok()?) {
        (
            OpKind::Alu,
            InsnKind::Alu {
                wide: true,
                op: AluOp::Mov,
                dst,
                src: Source::Reg(a),
            },
        ) => Some((dst, a, 0)),
        (
            OpKind::Alu3 { a },
            InsnKind::Alu {
                wide: true,
                op: AluOp::Add,
                dst,
                src: Source::Imm(c),
            },
        ) => Some((dst, *a, c as i64)),
        _ => None,
    }
}

impl Gen<'_> {
    /// The signal at boundary `j` holding the late access's base register `base`, and the offset to add to it
    /// besides the access's own: the register itself when carried, else the one it is derived from (see the
    /// module comment). `l` is the late access's stage.
    pub(super) fn late_base(&self, base: u8, j: u32, l: u32) -> Option<(String, i64)> {
        let carried = self.bound_regs.get(j as usize)?;
        if let Some(r) = carried.get(&base) {
            return Some((r.clone(), 0));
        }
        let p = self.p;
        let window = |o: &&Op| (j..l).contains(&o.stage);
        let defs: Vec<&Op> = p
            .ops
            .iter()
            .filter(window)
            .filter(|o| o.writes.contains(base))
            .collect();
        let mut source = None;
        for d in &defs {
            let (dst, a, c) = offset_copy(d, &p.insns)?;
            if dst != base || source.is_some_and(|s| s != (a, c)) {
                return None;
            }
            let rewritten = p
                .ops
                .iter()
                .any(|o| (j..d.stage).contains(&o.stage) && o.writes.contains(a));
            if rewritten {
                return None;
            }
            source = Some((a, c));
        }
        let (a, c) = source?;
        Some((carried.get(&a)?.clone(), c))
    }
}
