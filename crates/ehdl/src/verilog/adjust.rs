//! `bpf_xdp_adjust_tail`: the packet's length is the sideband's (`xdp_md` field 4, carried to the end of the
//! pipeline in programs that adjust the tail), the helper block rewrites it, later length checks and `data_end`
//! loads read it, and the output trims the frames to it (or zero-fills up to it).

use super::head::XDP_ADJUST_HEAD;
use super::helpers::Call;
use super::stage::{Bound, Gen};
use super::{VerilogError, LEN_BITS};
use crate::ir::{OpKind, Pipeline};
use std::fmt::Write as _;

/// Helper id of `bpf_xdp_adjust_tail(ctx, delta)`.
pub(super) const XDP_ADJUST_TAIL: i32 = 65;

/// The linear packet room of the reference machine's buffer (`FRAME_SIZE - HEADROOM - TAILROOM`): the longest
/// packet `data_end` may move to while `data` is where the packet arrived.
const MAX_LINEAR: u32 = 3520;
/// The shortest packet: an Ethernet header.
const ETH_HLEN: u32 = 14;
const EINVAL: u64 = 22;

/// The first stage with an `bpf_xdp_adjust_tail` block, if the program has one.
pub(super) fn first_tail_stage(p: &Pipeline) -> Option<u32> {
    first_stage_of(p, &[XDP_ADJUST_TAIL])
}

/// The first stage with a block of one of the helpers `ids`.
fn first_stage_of(p: &Pipeline, ids: &[i32]) -> Option<u32> {
    p.ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Helper { id, .. } if ids.contains(&id)))
        .map(|o| o.stage)
        .min()
}

impl Gen<'_> {
    /// The packet's length as stage `k` must see it when a tail or head adjustment may have run before it: the
    /// carried sideband length, which the blocks rewrite. `None` when no adjustment comes before stage `k`.
    pub(super) fn adjusted_len(&mut self, k: u32, b: &Bound) -> Option<String> {
        if first_stage_of(self.p, &[XDP_ADJUST_TAIL, XDP_ADJUST_HEAD]).is_none_or(|t| t >= k) {
            return None;
        }
        let l = b.ctx.get(&4)?.clone();
        Some(self.read(&l))
    }

    /// `bpf_xdp_adjust_tail` (65): the new length `len + delta` when it lies in `[14, 3520]` (R0 = 0), else
    /// -EINVAL and no change, as the reference machine's buffer. Bytes a packet grows by are zero. Growing past
    /// the packet's last frame would need beats the stream does not have: such a packet is aborted (a fault).
    pub(super) fn adjust_tail(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        if self.p.ops.iter().any(|o| {
            matches!(
                o.kind,
                OpKind::Helper {
                    id: XDP_ADJUST_HEAD,
                    ..
                }
            )
        }) {
            return Err(self.unsupported(
                op,
                format!(
                    "helper {} in a program that also moves its head",
                    hwxdp_ebpf::helper_label(XDP_ADJUST_TAIL)
                ),
            ));
        }
        let delta = self.int_arg(cx, 2)?;
        let Some(len) = cx.b.ctx.get(&4).cloned() else {
            return Err(self.internal(Some(op), format!("no packet length at stage {}", op.stage)));
        };
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let fb = self.fb;
        let (nl, ok, far, nlen) = (
            format!("{name}_nl"),
            format!("{name}_ok"),
            format!("{name}_far"),
            format!("{name}_len"),
        );
        self.declare(&nl, 64);
        self.declare(&ok, 1);
        self.declare(&far, 1);
        self.declare(&nlen, LEN_BITS);
        let (delta, len) = (self.read(&delta), self.read(&len));
        let pad = 64 - LEN_BITS;
        let _ = writeln!(
            self.body,
            "  assign {nl} = {{{pad}'d0, {len}}} + {delta};  // {}\n  \
             assign {ok} = ~{nl}[63] & ({nl} >= 64'd{ETH_HLEN}) & ({nl} <= 64'd{MAX_LINEAR});\n  \
             assign {far} = {en} & {ok} & ({nl}[{lm}:0] > {len}) & \
             ((({nl}[{lm}:0] - {LEN_BITS}'d1) / {LEN_BITS}'d{fb}) != (({len} - {LEN_BITS}'d1) / {LEN_BITS}'d{fb}));\n  \
             assign {nlen} = ({en} & {ok}) ? {nl}[{lm}:0] : {len};",
            op.text,
            lm = LEN_BITS - 1,
        );
        self.read(&nl);
        self.read(&ok);
        self.read(&nlen);
        self.unused_ports.push(format!("{nl}[63:{LEN_BITS}]"));
        self.faults.push(far.clone());
        self.read(&far);
        cx.ctx.insert(4, nlen);
        if cx.live_reg(0) {
            let value = format!("{ok} ? 64'd0 : 64'd0 - 64'd{EINVAL}");
            self.set_r0(cx, name, &en, &value, "  // 0 or -EINVAL");
        }
        Ok(())
    }

    /// In programs that adjust their tail, the last frame register's beat as the output takes it: beats past the
    /// packet's length `len` (held from the head for the later beats) dropped, the last one's `tkeep` cut to the
    /// length and `tlast` set, bytes beyond the arrived ones zero. Returns the (push, data, keep, last) signals.
    pub(super) fn trimmed_output(
        &mut self,
        n: u32,
        len: &str,
        push: &str,
    ) -> (String, String, String, String) {
        let fb = self.fb;
        let fbits = fb * 8;
        let len = self.read(len);
        for f in ["data", "keep", "last", "fidx", "valid"] {
            self.read(&format!("f{n}_{f}"));
        }
        let _ = write!(
            self.body,
            "\n  // bpf_xdp_adjust_tail: the output cut (or zero-filled) to the packet's length, held from its head.\n\
             \x20 logic [{lm}:0] tail_len_hold_q;\n\
             \x20 logic [{lm}:0] tail_len;\n\
             \x20 logic [31:0]   tail_pos;\n\
             \x20 logic [31:0]   tail_left;\n\
             \x20 logic [{km}:0] tail_keep;\n\
             \x20 logic [{dm}:0] tail_data;\n\
             \x20 logic          tail_push;\n\
             \x20 logic          tail_last;\n\
             \x20 always_ff @(posedge clk_i or negedge rst_ni) begin\n\
             \x20   if (!rst_ni) begin\n\
             \x20     tail_len_hold_q <= '0;\n\
             \x20   end else if ({push} & (f{n}_fidx == '0)) begin\n\
             \x20     tail_len_hold_q <= {len};\n\
             \x20   end\n\
             \x20 end\n\
             \x20 assign tail_len  = (f{n}_fidx == '0) ? {len} : tail_len_hold_q;\n\
             \x20 assign tail_pos  = {{{fp}'d0, f{n}_fidx}} * 32'd{fb};\n\
             \x20 assign tail_left = {{{lp}'d0, tail_len}} - tail_pos;\n\
             \x20 assign tail_push = {push} & ({{{lp}'d0, tail_len}} > tail_pos);\n\
             \x20 assign tail_last = f{n}_last | (tail_left <= 32'd{fb});\n",
            lm = LEN_BITS - 1,
            km = fb - 1,
            dm = fbits - 1,
            fp = 32 - super::FIDX_BITS,
            lp = 32 - LEN_BITS,
        );
        for i in 0..fb {
            let _ = writeln!(
                self.body,
                "  assign tail_keep[{i}] = (tail_left > 32'd{i});\n  \
                 assign tail_data[{}:{}] = f{n}_keep[{i}] ? f{n}_data[{}:{}] : 8'd0;",
                8 * i + 7,
                8 * i,
                8 * i + 7,
                8 * i
            );
        }
        (
            "tail_push".into(),
            "tail_data".into(),
            "tail_keep".into(),
            "tail_last".into(),
        )
    }
}
