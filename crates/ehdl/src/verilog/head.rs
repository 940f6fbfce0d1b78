//! `bpf_xdp_adjust_head`: the frames keep every byte where it arrived, and the packet's head state says where `data`
//! now is. Two values travel with the packet from boundary 0 to the output (constants until the first adjustment):
//!
//! - the *shift* (`LEN_BITS`, two's complement): `data` minus the position of the first byte that arrived; negative
//!   when bytes were prepended;
//! - the *head extension*: the `ext` bytes at positions `-ext .. -1`, zero as the reference machine's headroom is,
//!   until the program writes them.
//!
//! A packet access at a constant offset `o` whose shift `s` the front end knows reads position `o + s`: a frame byte
//! when non-negative, else an extension byte (an access may straddle both). If the helper failed at run time and the
//! shift is not `s`, the packet is aborted (a fault) rather than accessed at the wrong place. Accesses whose shift
//! is only known at run time add the carried shift to their offset and use the run-time offset templates (frame
//! bytes only: one that lands before the first arrived byte faults). The length (`xdp_md` field 4) is carried to
//! the end, as for `bpf_xdp_adjust_tail`, and `ehdl_head_realign` emits the extension and the frames from the new
//! `data` on. A move below `-ext` (run-time deltas past what the program's constants need) faults too.

use super::helpers::Call;
use super::stage::{is_signal, Gen};
use super::{VerilogError, LEN_BITS};
use crate::ir::{ArgConst, Label, Op, OpKind, Pipeline};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Helper id of `bpf_xdp_adjust_head(ctx, delta)`.
pub(super) const XDP_ADJUST_HEAD: i32 = 44;
/// Key of the packet's shift among the carried context fields (`Bound::ctx`).
pub(super) const HEAD_SHIFT: i64 = -2;
/// Key of the packet's head extension among the carried context fields.
pub(super) const HEAD_EXT: i64 = -3;
/// Headroom `bpf_xdp_adjust_head` may reach: `XDP_PACKET_HEADROOM` less `struct xdp_frame`.
const USABLE_HEADROOM: u64 = 216;
const ETH_HLEN: u64 = 14;
const EINVAL: u64 = 22;

/// Whether the program calls `bpf_xdp_adjust_head`.
pub(super) fn moves_head(p: &Pipeline) -> bool {
    p.ops.iter().any(|o| {
        matches!(
            o.kind,
            OpKind::Helper {
                id: XDP_ADJUST_HEAD,
                ..
            }
        )
    })
}

/// The head extension the program needs, in bytes (a multiple of 8): the largest constant prepend, and the farthest
/// constant access before the first arrived byte. `None` when the program never moves its head.
pub(super) fn head_room(p: &Pipeline) -> Option<u32> {
    if !moves_head(p) {
        return None;
    }
    let mut need = 8i64;
    for o in &p.ops {
        if let OpKind::Helper {
            id: XDP_ADJUST_HEAD,
            consts,
            ..
        } = &o.kind
        {
            if let Some((_, ArgConst::Scalar(d))) = consts.iter().find(|(r, _)| *r == 2) {
                need = need.max(-(*d as i32 as i64));
            }
        }
        if let (Label::Packet { offset: Some(off) }, Some(s)) = (o.label, o.data_shift) {
            need = need.max(-(off + s));
        }
    }
    Some(((need + 7) / 8 * 8) as u32)
}

/// A packet access at a position before the first arrived byte: the op, its signal prefix, its enable, the position
/// and the size in bytes.
pub(super) struct HeadAccess<'a> {
    pub(super) op: &'a Op,
    pub(super) name: &'a str,
    pub(super) en: &'a str,
    pub(super) at: i64,
    pub(super) size: i64,
}

/// Sign-extends a `LEN_BITS` shift to 64 bits (the only constant shift is boundary 0's zero).
pub(super) fn shift64(shift: &str) -> String {
    if !is_signal(shift) {
        return format!("{{{}'d0, {shift}}}", 64 - LEN_BITS);
    }
    format!(
        "{{{{{}{{{shift}[{}]}}}}, {shift}}}",
        64 - LEN_BITS,
        LEN_BITS - 1
    )
}

impl Gen<'_> {
    /// The head state of boundary 0: no shift, a zero extension.
    pub(super) fn head_init(&self, ctx: &mut BTreeMap<i64, String>) {
        if let Some(ext) = self.head_ext {
            ctx.insert(HEAD_SHIFT, format!("{LEN_BITS}'d0"));
            ctx.insert(HEAD_EXT, format!("{}'d0", 8 * ext));
        }
    }

    /// The carried shift at a stage whose context is `ctx`, when an adjustment may have run before it.
    pub(super) fn run_time_shift(&mut self, ctx: &BTreeMap<i64, String>) -> Option<String> {
        let s = ctx.get(&HEAD_SHIFT).filter(|s| is_signal(s))?.clone();
        Some(self.read(&s))
    }

    /// For a packet access by `op` at constant offset `o` from `data`: its position from the first arrived byte,
    /// and a fault wire for when the run-time shift is not the one the front end assumed (`None`: nothing to check).
    pub(super) fn static_position(
        &mut self,
        op: &Op,
        o: i64,
        en: &str,
        ctx: &BTreeMap<i64, String>,
    ) -> Result<(i64, Option<String>), VerilogError> {
        let Some(s) = op.data_shift else {
            return Err(self.internal(Some(op), "a constant access with no known shift".into()));
        };
        let Some(sh) = self.run_time_shift(ctx) else {
            if s != 0 {
                return Err(self.internal(
                    Some(op),
                    format!(
                        "shift {s} before any {}",
                        hwxdp_ebpf::helper_label(XDP_ADJUST_HEAD)
                    ),
                ));
            }
            return Ok((o, None));
        };
        let f = format!("s{}_o{}_shifted", op.stage, op.id);
        self.declare(&f, 1);
        let bits = LEN_BITS;
        let _ = writeln!(
            self.body,
            "  assign {f} = {en} & ({sh} != {bits}'h{:x});  // assumes data moved by {s}",
            (s as u64) & ((1u64 << bits) - 1)
        );
        self.read(&f);
        Ok((o + s, Some(f)))
    }

    /// A load of `size` bytes at position `at < 0` (it may reach into frame 0, which stage `k` finds in frame
    /// register `k`) into the 64-bit wire `name`.
    pub(super) fn head_load(
        &mut self,
        a: HeadAccess,
        signed: bool,
        ext: &str,
        old: &str,
    ) -> Result<(), VerilogError> {
        let HeadAccess {
            op,
            name,
            en,
            at,
            size,
        } = a;
        let e = self.ext_bytes(op)?;
        let (ext, old) = (self.read(ext), self.read(old));
        let hi = if at + size > 0 {
            self.read(&format!("f{}_data[{}:0]", op.stage, 8 * e - 1))
        } else {
            ext.clone()
        };
        self.declare(name, 64);
        let _ = writeln!(
            self.body,
            "  ehdl_pkt_load #(.DW({}), .OFF({}), .SIZE({size}), .SIGNED({})) u_{name} (.en_i({en}), .lo_i({ext}), \
             .hi_i({hi}), .old_i({old}), .res_o({name}));  // {} (head extension)",
            8 * e,
            at + e as i64,
            signed as u8,
            op.text
        );
        Ok(())
    }

    /// A store of `size` bytes of `val` at position `at < 0`: the extension bytes it covers change in the returned
    /// extension signal, and the bytes it writes at non-negative positions go into frame 0 (frame register `k`).
    pub(super) fn head_store(
        &mut self,
        a: HeadAccess,
        val: &str,
        ext: &str,
    ) -> Result<String, VerilogError> {
        let HeadAccess {
            op,
            name,
            en,
            at,
            size,
        } = a;
        let e = self.ext_bytes(op)? as i64;
        let k = op.stage;
        let (v, nx) = (format!("{name}_v"), format!("{name}_ext"));
        self.declare(&v, 64);
        self.declare(&nx, 8 * e as u32);
        let (val, ext) = (self.read(val), self.read(ext));
        let byte_of = |pos: i64| (pos >= at && pos < at + size).then(|| pos - at);
        let ext_bytes: Vec<String> = (0..e)
            .rev()
            .map(|b| match byte_of(b - e) {
                Some(i) => format!("{v}[{}:{}]", 8 * i + 7, 8 * i),
                // Only boundary 0's all-zero extension is a constant.
                None if !is_signal(&ext) => "8'd0".into(),
                None => format!("{ext}[{}:{}]", 8 * b + 7, 8 * b),
            })
            .collect();
        let _ = writeln!(
            self.body,
            "  assign {v} = {val};  // {} (head extension)\n  assign {nx} = {en} ? {{{}}} : {ext};",
            op.text,
            ext_bytes.join(", ")
        );
        self.read(&v);
        self.read(&nx);
        if size < 8 {
            self.unused_ports.push(format!("{v}[63:{}]", 8 * size));
        }
        if at + size > 0 {
            let fb = self.fb;
            let (hd, hm) = (format!("{name}_hd"), format!("{name}_hm"));
            self.declare(&hd, 8 * fb as u32);
            self.declare(&hm, fb as u32);
            let fidx = self.read(&format!("f{k}_fidx"));
            let (mut data, mut mask) = (Vec::new(), Vec::new());
            for b in (0..fb).rev() {
                match byte_of(b) {
                    Some(i) => {
                        data.push(format!("{v}[{}:{}]", 8 * i + 7, 8 * i));
                        mask.push("1'b1".to_string());
                    }
                    None => {
                        data.push("8'd0".into());
                        mask.push("1'b0".into());
                    }
                }
            }
            let _ = writeln!(
                self.body,
                "  assign {hd} = {{{}}};\n  assign {hm} = ({en} & ({fidx} == '0)) ? {{{}}} : '0;",
                data.join(", "),
                mask.join(", ")
            );
            self.read(&hd);
            self.read(&hm);
            self.writes.entry(k).or_default().push((hd, hm));
        }
        Ok(nx)
    }

    fn ext_bytes(&self, op: &Op) -> Result<u32, VerilogError> {
        match self.head_ext {
            Some(e) if e as i64 <= self.fb => Ok(e),
            Some(e) => Err(self.unsupported(
                op,
                format!(
                    "a head extension of {e} bytes, more than a frame of {} bytes",
                    self.fb
                ),
            )),
            None => Err(self.internal(Some(op), "a head access without adjust_head".into())),
        }
    }

    /// `bpf_xdp_adjust_head` (44): moves `data` by `delta` when at least 14 bytes stay and no more than the 216
    /// bytes of usable headroom are prepended (R0 = 0), else -EINVAL and no change, as the reference machine's
    /// buffer. Bytes prepended are the extension's (zero unless written). A move before the extension's first byte
    /// aborts the packet.
    pub(super) fn adjust_head(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let e = self.ext_bytes(op)?;
        let delta = self.int_arg(cx, 2)?;
        let (Some(len), Some(sh)) = (
            cx.b.ctx.get(&4).cloned(),
            cx.b.ctx.get(&HEAD_SHIFT).cloned(),
        ) else {
            return Err(self.internal(
                Some(op),
                format!("no packet length or shift at stage {}", op.stage),
            ));
        };
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let (d, nsh, room, top, low, ok, far, nlen, nshift) = (
            format!("{name}_d"),
            format!("{name}_nsh"),
            format!("{name}_room"),
            format!("{name}_top"),
            format!("{name}_low"),
            format!("{name}_ok"),
            format!("{name}_far"),
            format!("{name}_len"),
            format!("{name}_shift"),
        );
        for (w, bits) in [
            (&d, 64),
            (&nsh, 64),
            (&room, 64),
            (&top, 64),
            (&low, 64),
            (&ok, 1),
            (&far, 1),
            (&nlen, LEN_BITS),
            (&nshift, LEN_BITS),
        ] {
            self.declare(w, bits);
        }
        let (delta, len, sh) = (self.read(&delta), self.read(&len), self.read(&sh));
        let pad = 64 - LEN_BITS;
        let lm = LEN_BITS - 1;
        let _ = writeln!(
            self.body,
            "  assign {d} = {delta};  // {}\n  \
             assign {nsh} = {sh64} + {d};\n  \
             // len - 14 - delta >= 0 (14 bytes stay) and the new shift no more than the usable headroom before.\n  \
             assign {room} = {{{pad}'d0, {len}}} - 64'd{ETH_HLEN} - {d};\n  \
             assign {top} = {nsh} + 64'd{USABLE_HEADROOM};\n  \
             assign {low} = {nsh} + 64'd{e};\n  \
             assign {ok} = ~{room}[63] & ~{top}[63];\n  \
             assign {far} = {en} & {ok} & {low}[63];\n  \
             assign {nlen} = ({en} & {ok}) ? ({len} - {d}[{lm}:0]) : {len};\n  \
             assign {nshift} = ({en} & {ok}) ? {nsh}[{lm}:0] : {sh};",
            op.text,
            sh64 = shift64(&sh),
        );
        for w in [&d, &nsh, &room, &top, &low, &ok, &nlen, &nshift] {
            self.read(w);
        }
        self.unused_ports.push(format!("{nsh}[63:{LEN_BITS}]"));
        self.unused_ports.push(format!("{d}[63:{LEN_BITS}]"));
        for w in [&room, &top, &low] {
            self.unused_ports.push(format!("{w}[62:0]"));
        }
        self.faults.push(far.clone());
        self.read(&far);
        cx.ctx.insert(4, nlen);
        cx.ctx.insert(HEAD_SHIFT, nshift);
        self.set_r0_errno(cx, &en, format!("({ok} ? 8'd0 : 8'd{EINVAL})"), "-EINVAL");
        Ok(())
    }
}

impl Gen<'_> {
    /// The output of a program that moves its head: `ehdl_head_realign` between the last frame register and the
    /// output FIFO, fed the packet's shift, length and extension from the last boundary. It holds the pipeline
    /// (`head_hold`, in `adv`) for the one extra beat of a packet that grew. Returns the (push, data, keep, last,
    /// user) signals for the FIFO.
    pub(super) fn realigned_output(
        &mut self,
        n: u32,
        last: &super::stage::Bound,
        push: &str,
        s: &mut String,
    ) -> (String, String, String, String, String) {
        let e = self.head_ext.unwrap_or(8);
        let field = |f: i64, zero: String| last.ctx.get(&f).cloned().unwrap_or(zero);
        let len = field(4, format!("{LEN_BITS}'d0"));
        let shift = field(HEAD_SHIFT, format!("{LEN_BITS}'d0"));
        let ext = field(HEAD_EXT, format!("{}'d0", 8 * e));
        let (len, shift, ext, push) = (
            self.read(&len),
            self.read(&shift),
            self.read(&ext),
            self.read(push),
        );
        let fb = self.fb as u32;
        for (w, bits) in [
            ("head_hold", 1),
            ("head_push", 1),
            ("head_data", 8 * fb),
            ("head_keep", fb),
            ("head_last", 1),
            ("head_user", 74),
        ] {
            self.declare(w, bits);
            self.read(w);
        }
        self.read("out_space");
        self.read("out_user");
        // The length, not the frames' keep, says where the packet ends.
        self.unused_ports.push(format!("f{n}_keep"));
        let _ = write!(
            s,
            "\n  // bpf_xdp_adjust_head: the frames still hold the bytes where they arrived; the realigner emits the\n  \
             // packet from its new data on (head extension first), holding the pipeline for a grown packet's extra beat.\n  \
             ehdl_head_realign #(.DW(DataWidth), .EXT({e}), .LW({LEN_BITS}), .UW(74)) u_head (\n    \
             .clk_i(clk_i), .rst_ni(rst_ni), .push_i({push}), .data_i(f{n}_data), .first_i(f{n}_fidx == '0),\n    \
             .last_i(f{n}_last), .shift_i({shift}), .len_i({len}), .ext_i({ext}), .user_i(out_user),\n    \
             .space_i(out_space), .hold_o(head_hold), .push_o(head_push), .data_o(head_data), .keep_o(head_keep),\n    \
             .last_o(head_last), .user_o(head_user)\n  );\n"
        );
        (
            "head_push".into(),
            "head_data".into(),
            "head_keep".into(),
            "head_last".into(),
            "head_user".into(),
        )
    }
}
