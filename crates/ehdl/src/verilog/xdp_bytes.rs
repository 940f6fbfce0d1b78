//! `bpf_xdp_load_bytes` and `bpf_xdp_store_bytes`: packet bytes copied into or out of a stack buffer, at a packet
//! offset known when generating or only at run time. The copy is the run-time packet access of the templates
//! (`ehdl_pkt_load_dyn`, `ehdl_pkt_store_dyn`) in chunks of up to 8 bytes, over the frames the helper's stage sees.

use super::helpers::Call;
use super::stage::Gen;
use super::{VerilogError, LEN_BITS};
use crate::ir::{ArgConst, OpKind};
use std::fmt::Write as _;

/// Helper id of `bpf_xdp_load_bytes(ctx, offset, buf, len)`.
pub(super) const XDP_LOAD_BYTES: i32 = 189;
/// Helper id of `bpf_xdp_store_bytes(ctx, offset, buf, len)`.
pub(super) const XDP_STORE_BYTES: i32 = 190;

const EFAULT: u64 = 14;
const EINVAL: u64 = 22;

impl Gen<'_> {
    /// `bpf_xdp_load_bytes` (189) and `bpf_xdp_store_bytes` (190) with a constant stack buffer and length, as the
    /// reference machine does them: an offset or a length over 0xffff is -EFAULT, bytes past the packet's end
    /// -EINVAL (and nothing is copied), else R0 = 0 and the bytes are copied. The packet's length comes from the
    /// sideband of its first beat. Bytes beyond the frames the stage sees (the first 256) abort the packet, as a
    /// run-time packet access does.
    pub(super) fn xdp_bytes(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let h = cx.helper_label();
        let load = matches!(
            op.kind,
            OpKind::Helper {
                id: XDP_LOAD_BYTES,
                ..
            }
        );
        if super::head::moves_head(self.p) {
            return Err(self.unsupported(
                op,
                format!(
                    "helper {h} in a program that calls {}",
                    hwxdp_ebpf::helper_label(super::head::XDP_ADJUST_HEAD)
                ),
            ));
        }
        let (Some(ArgConst::Stack(buf)), Some(ArgConst::Scalar(len))) =
            (cx.arg_const(3), cx.arg_const(4))
        else {
            return Err(self.unsupported(
                op,
                format!("helper {h} with a buffer or length known only at run time"),
            ));
        };
        let off = match cx.arg_const(2) {
            Some(ArgConst::Scalar(v)) => format!("32'h{:08x}", v as u32),
            None => {
                let r = self.reg_in(cx, 2);
                self.unused_ports.push(r.clone()); // the helper takes the offset as a u32
                format!("{r}[31:0]")
            }
            Some(_) => {
                return Err(self.unsupported(op, format!("helper {h} with a pointer as offset")))
            }
        };
        let len = len as u32 as u64;
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let (status, go) = (format!("{name}_st"), format!("{name}_go"));
        self.declare(&status, 64);
        self.declare(&go, 1);
        if len > 0xffff {
            let _ = writeln!(
                self.body,
                "  assign {status} = 64'd0 - 64'd{EFAULT};  // {}\n  assign {go} = 1'b0;",
                op.text
            );
            self.unused_ports.push(go.clone());
        } else if buf < -512 || buf + len as i64 > 0 {
            return Err(self.unsupported(op, format!("helper {h} with a buffer outside the stack")));
        } else {
            let Some(plen) = cx.b.ctx.get(&4).cloned() else {
                return Err(
                    self.internal(Some(op), format!("no packet length at stage {}", op.stage))
                );
            };
            let (o, fault, fits) = (
                format!("{name}_at"),
                format!("{name}_efault"),
                format!("{name}_fits"),
            );
            self.declare(&o, 32);
            self.declare(&fault, 1);
            self.declare(&fits, 1);
            let off = self.read(&off);
            let plen = self.read(&plen);
            let _ = writeln!(
                self.body,
                "  assign {o} = {off};  // {}\n  \
                 assign {fault} = ({o}[31:16] != 16'd0);\n  \
                 assign {fits} = ({{16'd0, {o}[15:0]}} + 32'd{len} <= {{{}'d0, {plen}}});\n  \
                 assign {status} = {fault} ? 64'd0 - 64'd{EFAULT} : {fits} ? 64'd0 : 64'd0 - 64'd{EINVAL};\n  \
                 assign {go} = {en} & ~{fault} & {fits};",
                op.text,
                32 - LEN_BITS
            );
            self.read(&o);
            self.read(&fault);
            self.read(&fits);
            self.read(&go);
            if load {
                self.copy_in(cx, &o, &go, buf, len)?;
            } else {
                self.copy_out(cx, &o, &go, buf, len)?;
            }
        }
        if cx.live_reg(0) {
            let st = self.read(&status);
            self.set_r0(cx, name, &en, &st, "  // 0 or -errno");
        } else {
            self.unused_ports.push(status);
        }
        Ok(())
    }

    /// The packet bytes at `at` (a 32-bit wire) into the live stack bytes of the buffer at `buf`, when `go`.
    fn copy_in(
        &mut self,
        cx: &mut Call,
        at: &str,
        go: &str,
        buf: i64,
        len: u64,
    ) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let mut frames: Option<(String, u32)> = None;
        for c in 0..len.div_ceil(8) {
            let n = (len - 8 * c).min(8) as i64;
            let base = buf + 8 * c as i64;
            if !(0..n).any(|i| cx.live_byte(base + i)) {
                continue;
            }
            let (vec, nf) = match &frames {
                Some(f) => f.clone(),
                None => {
                    let f = self.frame_vector(op, "data")?;
                    frames = Some(f.clone());
                    f
                }
            };
            let old: Vec<String> = (0..n)
                .rev()
                .map(|i| {
                    cx.stack
                        .get(&(base + i))
                        .cloned()
                        .unwrap_or_else(|| "8'd0".into())
                })
                .collect();
            let old = if n == 8 {
                format!("{{{}}}", old.join(", "))
            } else {
                format!("{{{}'d0, {}}}", 64 - 8 * n, old.join(", "))
            };
            let old = self.read(&old);
            let (w, miss) = (format!("{name}_c{c}"), format!("{name}_c{c}_miss"));
            self.declare(&w, 64);
            self.declare(&miss, 1);
            let _ = writeln!(
                self.body,
                "  ehdl_pkt_load_dyn #(.DW(DataWidth), .NF({nf}), .SIZE({n}), .SIGNED(0)) u_{w} (.en_i({go}), \
                 .frames_i({vec}), .addr_i({at}[15:0] + 16'd{}), .old_i({old}), .res_o({w}), .miss_o({miss}));",
                8 * c
            );
            self.read(&w);
            self.read(&miss);
            if n < 8 {
                self.unused_ports.push(format!("{w}[63:{}]", 8 * n));
            }
            self.faults.push(miss);
            for i in 0..n {
                let byte = format!("{w}_b{i}");
                self.declare(&byte, 8);
                let _ = writeln!(self.body, "  assign {byte} = {w}[{}:{}];", 8 * i + 7, 8 * i);
                cx.stack.insert(base + i, byte);
            }
        }
        Ok(())
    }

    /// The stack bytes of the buffer at `buf` into the packet at `at`, when `go`: byte-enabled writes merged into
    /// the frames as they move on, as a run-time packet store.
    fn copy_out(
        &mut self,
        cx: &mut Call,
        at: &str,
        go: &str,
        buf: i64,
        len: u64,
    ) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let (fidx, nf) = self.frame_vector(op, "fidx")?;
        let fb = self.fb as u32;
        let k = op.stage;
        for c in 0..len.div_ceil(8) {
            let n = (len - 8 * c).min(8) as i64;
            let val = self.stack_bytes(cx.b, buf + 8 * c as i64, n);
            let val = if n < 8 {
                format!("{{{}'d0, {val}}}", 64 - 8 * n)
            } else {
                val
            };
            let w = format!("{name}_c{c}");
            let (sd, sk, miss) = (format!("{w}_sd"), format!("{w}_sk"), format!("{w}_miss"));
            self.declare(&sd, nf * fb * 8);
            self.declare(&sk, nf * fb);
            self.declare(&miss, 1);
            let _ = writeln!(
                self.body,
                "  ehdl_pkt_store_dyn #(.DW(DataWidth), .FW(FrameIdxBits), .NF({nf}), .SIZE({n})) u_{w} \
                 (.en_i({go}), .addr_i({at}[15:0] + 16'd{}), .val_i({val}), .fidx_i({fidx}), .data_o({sd}), \
                 .mask_o({sk}), .miss_o({miss}));",
                8 * c
            );
            self.read(&sd);
            self.read(&sk);
            self.read(&miss);
            for f in 0..nf {
                self.writes.entry(k - f).or_default().push((
                    format!("{sd}[{} +: {}]", f * fb * 8, fb * 8),
                    format!("{sk}[{} +: {fb}]", f * fb),
                ));
            }
            self.faults.push(miss);
        }
        Ok(())
    }
}
