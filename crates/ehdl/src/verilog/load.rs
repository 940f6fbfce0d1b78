//! Loads, by the region their label places them in: map values (constants for read-only global data), the packet
//! (at a constant position or a run-time address), the stack, and the `xdp_md` context.

use super::access::packet_rel;
use super::head::{HeadAccess, HEAD_EXT};
use super::stage::{hex64, Gen, StageCx};
use super::{VerilogError, DATA_BASE, LEN_BITS};
use crate::ir::{Label, Op};
use hwxdp_ebpf::InsnKind;
use std::fmt::Write as _;

/// A load instruction's operands; `size` in bytes.
#[derive(Clone, Copy)]
struct LoadInsn {
    dst: u8,
    base: u8,
    off: i16,
    size: i64,
    signed: bool,
}

impl Gen<'_> {
    /// Emits load op `op` of stage `cx`.
    pub(super) fn load(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        kind: InsnKind,
    ) -> Result<(), VerilogError> {
        let InsnKind::Load {
            size,
            signed,
            dst,
            base,
            off,
        } = kind
        else {
            return Err(self.mismatched(op, kind));
        };
        let ld = LoadInsn {
            dst,
            base,
            off,
            size: size.bytes() as i64,
            signed,
        };
        match op.label {
            Label::MapValue {
                map,
                offset: Some(o),
            } if self.rodata(map).is_some() => self.rodata_load(cx, op, ld, map, o),
            Label::MapValue { .. } | Label::Unknown => self.map_load(cx, op, ld),
            Label::Packet { offset } if offset.is_none() || op.data_shift.is_none() => {
                self.packet_load_dyn(cx, op, ld, offset)
            }
            Label::Packet { offset: Some(o) } => self.packet_load(cx, op, ld, o),
            Label::Stack { offset: Some(o) } => self.stack_load(cx, op, ld, o),
            Label::Context {
                offset: Some(0 | 8),
            } if ld.size == 4 => self.set_const(cx, op, dst, hex64(DATA_BASE)),
            Label::Context {
                offset: Some(f @ (4 | 12 | 16)),
            } if ld.size == 4 => self.sideband_load(cx, op, dst, f),
            Label::Context { offset: Some(20) } if ld.size == 4 => {
                // egress_ifindex is 0 before a redirect, as in the reference machine.
                self.set_const(cx, op, dst, "64'd0".into())
            }
            l => Err(self.unsupported(op, format!("a load from {}", l.name()))),
        }
    }

    /// The bytes of map `m` when it is read-only global data (`.rodata`), whose loads are constants.
    fn rodata(&self, m: u32) -> Option<Vec<u8>> {
        const BPF_F_RDONLY_PROG: u32 = 0x80;
        let spec = self.maps.get(m as usize)?;
        if spec.map_flags & BPF_F_RDONLY_PROG == 0 {
            return None;
        }
        spec.initial_value.clone()
    }

    /// A load from read-only global data (`.rodata`) at offset `o` of map `map`: the bytes are constants of the
    /// program.
    fn rodata_load(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        ld: LoadInsn,
        map: u32,
        o: i64,
    ) -> Result<(), VerilogError> {
        let size = ld.size;
        let data = self.rodata(map).unwrap_or_default();
        let raw = (0..size).fold(0u64, |v, i| {
            v | (data.get((o + i) as usize).copied().unwrap_or(0) as u64) << (8 * i)
        });
        let bits = 8 * size as u32;
        let value = if ld.signed && bits < 64 {
            (((raw << (64 - bits)) as i64) >> (64 - bits)) as u64
        } else {
            raw
        };
        self.set_const(cx, op, ld.dst, hex64(value))
    }

    /// A load from a map value, through a port of the map's value block.
    fn map_load(&mut self, cx: &mut StageCx, op: &Op, ld: LoadInsn) -> Result<(), VerilogError> {
        if !cx.live_reg(ld.dst) {
            return Ok(());
        }
        let (name, size) = (cx.name(op), ld.size);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let ptr = self.reg_in(cx, ld.base);
        let rd = self.map_port(op, &name, &en, ptr, ld.off, size as u32, None, 0)?;
        self.bytes_into_reg(cx, op, ld.dst, name, (size, ld.signed), &en, &rd);
        Ok(())
    }

    /// A packet load at a run-time address (or at a constant offset whose shift is only known at run time), from
    /// the frames the stage can see; one that misses them aborts the packet.
    fn packet_load_dyn(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        ld: LoadInsn,
        offset: Option<i64>,
    ) -> Result<(), VerilogError> {
        if !cx.live_reg(ld.dst) {
            return Ok(());
        }
        let (name, size) = (cx.name(op), ld.size);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let ptr = offset.is_none().then(|| self.reg_in(cx, ld.base));
        let rel = packet_rel(offset, ptr, ld.off);
        let shift = self.run_time_shift(&cx.ctx);
        let (addr, frames, nf) = self.dyn_frames(op, &name, rel, shift, "data")?;
        let old = self.old_reg_value(cx, ld.dst);
        let miss = format!("{name}_miss");
        self.declare(&name, 64);
        self.declare(&miss, 1);
        let _ = writeln!(
            self.body,
            "  ehdl_pkt_load_dyn #(.DW(DataWidth), .NF({nf}), .SIZE({size}), .SIGNED({})) u_{name} \
             (.en_i({en}), .frames_i({frames}), .addr_i({addr}), .old_i({old}), .res_o({name}), \
             .miss_o({miss}));  // {}",
            ld.signed as u8, op.text
        );
        cx.misses.push(miss);
        cx.regs.insert(ld.dst, name);
        Ok(())
    }

    /// A packet load at constant offset `o` from `data`: taps of the frame registers holding its bytes, or of the
    /// head extension when `bpf_xdp_adjust_head` moved `data` before the first arrived byte.
    fn packet_load(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        ld: LoadInsn,
        o: i64,
    ) -> Result<(), VerilogError> {
        if !cx.live_reg(ld.dst) {
            return Ok(());
        }
        let (name, size) = (cx.name(op), ld.size);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let (o, shifted) = self.static_position(op, o, &en, &cx.ctx)?;
        cx.misses.extend(shifted);
        if o < 0 {
            let ext = cx.ctx.get(&HEAD_EXT).cloned().unwrap_or_default();
            let old = cx
                .regs
                .get(&ld.dst)
                .cloned()
                .unwrap_or_else(|| "64'd0".into());
            let a = HeadAccess {
                op,
                name: &name,
                en: &en,
                at: o,
                size,
            };
            self.head_load(a, ld.signed, &ext, &old)?;
            cx.regs.insert(ld.dst, name);
            return Ok(());
        }
        let (pos, off, span) = self.packet_at(op, o, size)?;
        let lo = self.read(&format!("f{pos}_data"));
        let hi = if span {
            self.read(&format!("f{}_data", pos - 1))
        } else {
            lo.clone()
        };
        let old = self.old_reg_value(cx, ld.dst);
        self.declare(&name, 64);
        let _ = writeln!(
            self.body,
            "  ehdl_pkt_load #(.DW(DataWidth), .OFF({off}), .SIZE({size}), .SIGNED({})) u_{name} \
             (.en_i({en}), .lo_i({lo}), .hi_i({hi}), .old_i({old}), .res_o({name}));  // {}",
            ld.signed as u8, op.text
        );
        cx.regs.insert(ld.dst, name);
        Ok(())
    }

    /// A stack load at r10-relative offset `o`, from the input boundary's stack bytes.
    fn stack_load(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        ld: LoadInsn,
        o: i64,
    ) -> Result<(), VerilogError> {
        if !cx.live_reg(ld.dst) {
            return Ok(());
        }
        let (name, size) = (cx.name(op), ld.size);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let bytes = self.stack_bytes(cx.b, o, size);
        self.bytes_into_reg(cx, op, ld.dst, name, (size, ld.signed), &en, &bytes);
        Ok(())
    }

    /// A load of the sideband context field at `xdp_md` offset `f` (`data_end`, `ingress_ifindex`,
    /// `rx_queue_index`) into `dst`.
    fn sideband_load(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        dst: u8,
        f: i64,
    ) -> Result<(), VerilogError> {
        let Some(field) = cx.b.ctx.get(&f).cloned() else {
            return Err(self.internal(Some(op), format!("ctx+{f} not carried to stage {}", cx.k)));
        };
        let value = if f == 4 {
            format!("{} + {{{}'d0, {field}}}", hex64(DATA_BASE), 64 - LEN_BITS)
        } else {
            format!("{{32'd0, {field}}}")
        };
        let value = self.read(&value);
        self.set_const(cx, op, dst, value)
    }
}
