//! Register ops: arithmetic (two- and three-operand), negation, byte swaps, sign-extending moves and 64-bit
//! constants (map value addresses included), all instances of the `ehdl_alu` template.

use super::stage::{hex64, Gen, StageCx};
use super::VerilogError;
use crate::ir::{Op, OpKind};
use hwxdp_ebpf::{ByteOrder, InsnKind};
use std::fmt::Write as _;

/// `ehdl_alu` operation of a move (`b` passes through, sign-extended from `OFF` bits when nonzero).
const ALU_MOV: u8 = 11;

/// The `ehdl_alu` parameters of operation `opn` (the instruction's opcode high nibble), 64- or 32-bit, with
/// offset `off`.
fn alu_params(opn: u8, wide: bool, off: i16) -> String {
    format!(".OP({opn}), .WIDE({}), .OFF({off})", wide as u8)
}

/// The register an ALU op reads as its first operand: its destination, or for a fused three-operand op the
/// register the fused move copied from.
fn first_operand(op: &Op, dst: u8) -> u8 {
    match op.kind {
        OpKind::Alu3 { a } => a,
        _ => dst,
    }
}

impl Gen<'_> {
    /// Emits an ALU op (`OpKind::Alu` or the fused `OpKind::Alu3`) of stage `cx`.
    pub(super) fn register_op(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        kind: InsnKind,
    ) -> Result<(), VerilogError> {
        match (&op.kind, kind) {
            (
                OpKind::Alu | OpKind::Alu3 { .. },
                InsnKind::Alu {
                    wide,
                    op: o,
                    dst,
                    src: s,
                },
            ) => {
                let (code, off) = o.encoding();
                let (a, bb) = (self.reg_in(cx, first_operand(op, dst)), self.operand(cx, s));
                self.set_reg(cx, op, dst, alu_params(code >> 4, wide, off), a, bb)
            }
            (OpKind::Alu | OpKind::Alu3 { .. }, InsnKind::Neg { wide, dst }) => {
                let a = self.reg_in(cx, first_operand(op, dst));
                self.set_reg(cx, op, dst, alu_params(8, wide, 0), a, "64'd0".into())
            }
            (OpKind::Alu | OpKind::Alu3 { .. }, InsnKind::Endian { order, bits, dst }) => {
                let a = self.reg_in(cx, first_operand(op, dst));
                let swap = matches!(order, ByteOrder::Be | ByteOrder::Swap) as u8;
                let params =
                    format!(".OP(13), .WIDE(1), .OFF(0), .END_BITS({bits}), .END_SWAP({swap})");
                self.set_reg(cx, op, dst, params, a, "64'd0".into())
            }
            (
                OpKind::Alu,
                InsnKind::MovSx {
                    wide,
                    from,
                    dst,
                    src: s,
                },
            ) => {
                let bb = self.reg_in(cx, s);
                let params = alu_params(ALU_MOV, wide, (from.bytes() * 8) as i16);
                self.set_reg(cx, op, dst, params, "64'd0".into(), bb)
            }
            (
                OpKind::Alu,
                InsnKind::LoadImm64 {
                    dst,
                    pseudo: hwxdp_ebpf::PSEUDO_MAP_VALUE,
                    imm,
                },
            ) => {
                // The address of a map's value (global data): a map pointer like the lookups'.
                let (m, off) = (imm as u64 & 0xffff_ffff, imm as u64 >> 32);
                self.set_const(cx, op, dst, hex64(((m + 1) << 32) + off))
            }
            (
                OpKind::Alu,
                InsnKind::LoadImm64 {
                    dst,
                    pseudo: 0,
                    imm,
                },
            ) => self.set_const(cx, op, dst, hex64(imm as u64)),
            _ => Err(self.mismatched(op, kind)),
        }
    }

    /// Writes register `dst` with an `ehdl_alu` instance of `params` on operands `a` and `b`, chained onto the
    /// value `dst` has so far in the stage, when the next stage reads `dst`.
    pub(super) fn set_reg(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        dst: u8,
        params: String,
        a: String,
        b: String,
    ) -> Result<(), VerilogError> {
        if !cx.live_reg(dst) {
            return Ok(());
        }
        let name = cx.name(op);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let old = self.old_reg_value(cx, dst);
        self.declare(&name, 64);
        let _ = writeln!(
            self.body,
            "  ehdl_alu #({params}) u_{name} (.en_i({en}), .a_i({a}), .b_i({b}), .old_i({old}), .res_o({name}));  // {}",
            op.text
        );
        cx.regs.insert(dst, name);
        Ok(())
    }

    /// Writes register `dst` with the 64-bit expression `value` (a move), when the next stage reads `dst`.
    pub(super) fn set_const(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        dst: u8,
        value: String,
    ) -> Result<(), VerilogError> {
        let params = alu_params(ALU_MOV, true, 0);
        self.set_reg(cx, op, dst, params, "64'd0".into(), value)
    }
}
