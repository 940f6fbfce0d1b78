//! Stores, by the region their label places them in (map values, the packet at a constant position or a run-time
//! address, the stack), and atomic read-modify-writes on map values.

use super::access::packet_rel;
use super::head::{HeadAccess, HEAD_EXT};
use super::stage::{Gen, StageCx};
use super::VerilogError;
use crate::ir::{Label, Op};
use hwxdp_ebpf::{AtomicOp, InsnKind, Source};
use std::fmt::Write as _;

/// A store instruction's operands; `size` in bytes.
#[derive(Clone, Copy)]
struct StoreInsn {
    src: Source,
    base: u8,
    off: i16,
    size: i64,
}

impl Gen<'_> {
    /// Emits store op `op` of stage `cx`.
    pub(super) fn store(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        kind: InsnKind,
    ) -> Result<(), VerilogError> {
        let InsnKind::Store {
            size,
            src,
            base,
            off,
        } = kind
        else {
            return Err(self.mismatched(op, kind));
        };
        let insn = StoreInsn {
            src,
            base,
            off,
            size: size.bytes() as i64,
        };
        match op.label {
            Label::MapValue { .. } | Label::Unknown => {
                let name = cx.name(op);
                let en = self.pred_signal(&cx.preds, op.pred, op)?;
                let ptr = self.reg_in(cx, base);
                let val = self.operand(cx, src);
                self.map_port(op, &name, &en, ptr, off, insn.size as u32, Some(val), 0)?;
                Ok(())
            }
            Label::Packet { offset } if offset.is_none() || op.data_shift.is_none() => {
                self.packet_store_dyn(cx, op, insn, offset)
            }
            Label::Packet { offset: Some(o) } => self.packet_store(cx, op, insn, o),
            Label::Stack { offset: Some(o) } => self.stack_store(cx, op, insn, o),
            l => Err(self.unsupported(op, format!("a store to {}", l.name()))),
        }
    }

    /// A packet store at a run-time address (or at a constant offset whose shift is only known at run time): its
    /// bytes merge into every frame the stage can see, guarded by their frame indices; one that misses them aborts
    /// the packet.
    fn packet_store_dyn(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        insn: StoreInsn,
        offset: Option<i64>,
    ) -> Result<(), VerilogError> {
        let (k, name, size) = (cx.k, cx.name(op), insn.size);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let ptr = offset.is_none().then(|| self.reg_in(cx, insn.base));
        let rel = packet_rel(offset, ptr, insn.off);
        let val = self.operand(cx, insn.src);
        let shift = self.run_time_shift(&cx.ctx);
        let (addr, fidx, nf) = self.dyn_frames(op, &name, rel, shift, "fidx")?;
        let fb = self.fb as u32;
        let (sd, sk, miss) = (
            format!("{name}_sd"),
            format!("{name}_sk"),
            format!("{name}_miss"),
        );
        self.declare(&sd, nf * fb * 8);
        self.declare(&sk, nf * fb);
        self.declare(&miss, 1);
        let _ = writeln!(
            self.body,
            "  ehdl_pkt_store_dyn #(.DW(DataWidth), .FW(FrameIdxBits), .NF({nf}), .SIZE({size})) \
             u_{name} (.en_i({en}), .addr_i({addr}), .val_i({val}), .fidx_i({fidx}), .data_o({sd}), \
             .mask_o({sk}), .miss_o({miss}));  // {}",
            op.text
        );
        self.read(&sd);
        self.read(&sk);
        for f in 0..nf {
            self.writes.entry(k - f).or_default().push((
                format!("{sd}[{} +: {}]", f * fb * 8, fb * 8),
                format!("{sk}[{} +: {fb}]", f * fb),
            ));
        }
        cx.misses.push(miss);
        Ok(())
    }

    /// A packet store at constant offset `o` from `data`: write ports of the frame registers holding its bytes, or
    /// a new head extension when `bpf_xdp_adjust_head` moved `data` before the first arrived byte.
    fn packet_store(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        insn: StoreInsn,
        o: i64,
    ) -> Result<(), VerilogError> {
        let (name, size) = (cx.name(op), insn.size);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let val = self.operand(cx, insn.src);
        let (o, shifted) = self.static_position(op, o, &en, &cx.ctx)?;
        cx.misses.extend(shifted);
        if o < 0 {
            let ext = cx.ctx.get(&HEAD_EXT).cloned().unwrap_or_default();
            let a = HeadAccess {
                op,
                name: &name,
                en: &en,
                at: o,
                size,
            };
            let nx = self.head_store(a, &val, &ext)?;
            cx.ctx.insert(HEAD_EXT, nx);
            return Ok(());
        }
        let (pos, off, span) = self.packet_at(op, o, size)?;
        let lo_fidx = self.read(&format!("f{pos}_fidx"));
        let hi_fidx = if span {
            self.read(&format!("f{}_fidx", pos - 1))
        } else {
            lo_fidx.clone()
        };
        let frame = (o / self.fb) as u32;
        let fbm = self.fb - 1;
        let dwm = self.fb * 8 - 1;
        for (suffix, w) in [("ld", dwm), ("lm", fbm), ("hd", dwm), ("hm", fbm)] {
            self.declare(&format!("{name}_{suffix}"), w as u32 + 1);
        }
        let _ = writeln!(
            self.body,
            "  ehdl_pkt_store #(.DW(DataWidth), .FW(FrameIdxBits), .OFF({off}), .SIZE({size}), \
             .FIDX({frame})) u_{name} (.en_i({en}), .val_i({val}), .lo_fidx_i({lo_fidx}), \
             .hi_fidx_i({hi_fidx}), .lo_data_o({name}_ld), .lo_mask_o({name}_lm), \
             .hi_data_o({name}_hd), .hi_mask_o({name}_hm));  // {}",
            op.text
        );
        self.writes
            .entry(pos)
            .or_default()
            .push((format!("{name}_ld"), format!("{name}_lm")));
        if span {
            self.writes
                .entry(pos - 1)
                .or_default()
                .push((format!("{name}_hd"), format!("{name}_hm")));
        }
        Ok(())
    }

    /// A stack store at r10-relative offset `o`: new byte signals for the next boundary, when it reads any of them.
    fn stack_store(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        insn: StoreInsn,
        o: i64,
    ) -> Result<(), VerilogError> {
        let (name, size) = (cx.name(op), insn.size);
        if !(0..size).any(|i| cx.live_byte(o + i)) {
            return Ok(());
        }
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let val = self.operand(cx, insn.src);
        let old: Vec<String> = (0..size)
            .rev()
            .map(|i| {
                cx.stack
                    .get(&(o + i))
                    .cloned()
                    .unwrap_or_else(|| "8'd0".into())
            })
            .collect();
        let old = self.read(&format!("{{{}}}", old.join(", ")));
        let bytes = format!("{name}_bytes");
        self.declare(&bytes, 8 * size as u32);
        let _ = writeln!(
            self.body,
            "  ehdl_stack_store #(.SIZE({size})) u_{name} (.en_i({en}), .val_i({val}), \
             .old_i({old}), .bytes_o({bytes}));  // {}",
            op.text
        );
        self.read(&bytes);
        for i in 0..size {
            let byte = format!("{name}_b{i}");
            self.declare(&byte, 8);
            let _ = writeln!(
                self.body,
                "  assign {byte} = {bytes}[{}:{}];",
                8 * i + 7,
                8 * i
            );
            cx.stack.insert(o + i, byte);
        }
        Ok(())
    }

    /// Emits atomic op `op` of stage `cx`: a read-modify-write on a map value block's port, and with a fetch the
    /// old value into the source register.
    pub(super) fn atomic(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        kind: InsnKind,
    ) -> Result<(), VerilogError> {
        let InsnKind::Atomic {
            size,
            op: aop,
            base,
            off,
            src: sr,
        } = kind
        else {
            return Err(self.mismatched(op, kind));
        };
        let (code, fetch) = match aop {
            AtomicOp::Add => (1, false),
            AtomicOp::Or => (2, false),
            AtomicOp::And => (3, false),
            AtomicOp::Xor => (4, false),
            AtomicOp::FetchAdd => (1, true),
            AtomicOp::FetchOr => (2, true),
            AtomicOp::FetchAnd => (3, true),
            AtomicOp::FetchXor => (4, true),
            AtomicOp::Xchg => (0, true),
            AtomicOp::Cmpxchg => return Err(self.unsupported(op, "compare-and-exchange")),
        };
        if !matches!(op.label, Label::MapValue { .. } | Label::Unknown) {
            return Err(self.unsupported(op, format!("an atomic operation on {}", op.label.name())));
        }
        let name = cx.name(op);
        let size = size.bytes();
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let ptr = self.reg_in(cx, base);
        let val = self.reg_in(cx, sr);
        let rd = self.map_port(op, &name, &en, ptr, off, size, Some(val), code)?;
        if fetch && cx.live_reg(sr) {
            // The old value goes to the source register (zero-extended for 32-bit atomics).
            let rd = self.read(&rd);
            let res = format!("{name}_fetch");
            self.bytes_into_reg(cx, op, sr, res, (size as i64, false), &en, &rd);
        }
        Ok(())
    }
}
