//! Control ops: conditional jumps and packet length checks, which become condition outputs for the predicates of
//! later stages, and `exit`, which sets the packet's verdict.

use super::stage::{hex64, Gen, StageCx};
use super::{VerilogError, LEN_BITS};
use crate::ir::Op;
use hwxdp_ebpf::InsnKind;
use std::fmt::Write as _;

impl Gen<'_> {
    /// Emits condition op `op` of stage `cx`: an `ehdl_cond` on the jump's two operands.
    pub(super) fn cond(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        kind: InsnKind,
    ) -> Result<(), VerilogError> {
        let InsnKind::Branch {
            wide,
            cond,
            dst,
            src,
            ..
        } = kind
        else {
            return Err(self.mismatched(op, kind));
        };
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let (a, b) = (self.reg_in(cx, dst), self.operand(cx, src));
        let c = format!("s{}_c{}", cx.k, op.id);
        self.declare(&c, 1);
        let _ = writeln!(
            self.body,
            "  ehdl_cond #(.COND({}), .WIDE({})) u_{c} (.en_i({en}), .a_i({a}), .b_i({b}), .taken_o({c}));  // {}",
            cond.bits() >> 4,
            wide as u8,
            op.text
        );
        cx.conds.insert(op.id, c);
        Ok(())
    }

    /// Emits length check `op` of stage `cx`: a compare of the packet length (as adjusted, or as counted so far)
    /// with the `ensured` bytes the passing side may access (see `OpKind::LenCheck`).
    pub(super) fn len_check(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        ensured: i64,
        meta: bool,
        taken_if_short: bool,
    ) -> Result<(), VerilogError> {
        let k = cx.k;
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let short = if meta {
            // No metadata area: its length is 0.
            if 0 < ensured {
                "1'b1".to_string()
            } else {
                "1'b0".to_string()
            }
        } else if ensured <= 0 {
            "1'b0".into()
        } else if ensured >= 1 << LEN_BITS {
            "1'b1".into()
        } else if let Some(l) = self.adjusted_len(k, cx.b) {
            format!("({l} < {LEN_BITS}'d{ensured})")
        } else {
            let Some((l, _)) = &cx.len_now else {
                return Err(self.internal(Some(op), format!("no packet length at stage {k}")));
            };
            let l = self.read(l);
            format!("({l} < {LEN_BITS}'d{ensured})")
        };
        let c = format!("s{k}_c{}", op.id);
        self.declare(&c, 1);
        let pol = if taken_if_short { "" } else { "~" };
        let _ = writeln!(
            self.body,
            "  assign {c} = {en} & {pol}{short};  // {}",
            op.text
        );
        cx.conds.insert(op.id, c);
        Ok(())
    }

    /// Emits exit `op` of stage `cx`: an `ehdl_exit` of register `reg` (or the constant `imm`) chained onto the
    /// verdict so far.
    pub(super) fn exit(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        reg: u8,
        imm: Option<i64>,
    ) -> Result<(), VerilogError> {
        let name = cx.name(op);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let val = match imm {
            Some(v) => hex64(v as u64),
            None => self.reg_in(cx, reg),
        };
        let old = cx.verdict.clone().unwrap_or_else(|| "32'd0".into());
        let old = self.read(&old);
        let v = format!("{name}_verdict");
        self.declare(&v, 32);
        let _ = writeln!(
            self.body,
            "  ehdl_exit u_{name} (.en_i({en}), .val_i({val}), .old_i({old}), .verdict_o({v}));  // {}",
            op.text
        );
        cx.verdict = Some(v);
        Ok(())
    }
}
