//! Helper blocks: one method per helper family, called from the stage emitter with the stage's state in a [`Call`].
//! A helper op is alone in its stage (rule 2 of docs/ehdl.md), so its inputs are the stage's input boundary and its
//! results chain onto the values the next boundary registers. The map helpers are in `map_calls.rs`.

use super::adjust::XDP_ADJUST_TAIL;
use super::csum::CSUM_DIFF;
use super::fib::FIB_LOOKUP;
use super::head::XDP_ADJUST_HEAD;
use super::maps::{geometry, MapPort};
use super::stage::{hex64, is_signal, Bound, Gen, StageCx, SIDEBAND_TIME};
use super::xdp_bytes::{XDP_LOAD_BYTES, XDP_STORE_BYTES};
use super::VerilogError;
use crate::ir::{ArgConst, Op, OpKind};
use crate::tailcall::TAIL_SLOT;
use std::fmt::Write as _;
use std::ops::{Deref, DerefMut};

/// A helper op and the state of the stage it sits in (through `Deref` to [`StageCx`]): what it reads, and what it
/// may change for the next boundary.
pub(super) struct Call<'c, 's> {
    /// The helper op.
    pub(super) op: &'c Op,
    /// The op's signal prefix (`s<stage>_o<id>`).
    pub(super) name: &'c str,
    stage: &'c mut StageCx<'s>,
}

impl<'s> Deref for Call<'_, 's> {
    type Target = StageCx<'s>;

    fn deref(&self) -> &StageCx<'s> {
        self.stage
    }
}

impl DerefMut for Call<'_, '_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.stage
    }
}

impl<'c, 's> Call<'c, 's> {
    /// Helper op `op`, named `name`, in stage `stage`.
    pub(super) fn new(op: &'c Op, name: &'c str, stage: &'c mut StageCx<'s>) -> Self {
        Call { op, name, stage }
    }

    /// The constant argument in register `r`, if the front end folded one.
    pub(super) fn arg_const(&self, r: u8) -> Option<ArgConst> {
        match &self.op.kind {
            OpKind::Helper { consts, .. } => consts.iter().find(|(x, _)| *x == r).map(|(_, c)| *c),
            _ => None,
        }
    }

    /// The constant arguments in R1-R4 (`None` where the front end folded none), for matching all at once.
    pub(super) fn args(&self) -> [Option<ArgConst>; 4] {
        [1, 2, 3, 4].map(|r| self.arg_const(r))
    }

    /// The helper as messages name it, with its id: `bpf_map_lookup_elem (1)`.
    pub(super) fn helper_label(&self) -> String {
        match &self.op.kind {
            OpKind::Helper { id, .. } => hwxdp_ebpf::helper_label(*id),
            _ => String::new(),
        }
    }
}

/// Helper id of `bpf_spin_lock`.
const SPIN_LOCK: i32 = 93;
/// Helper id of `bpf_spin_unlock`.
const SPIN_UNLOCK: i32 = 94;
/// Helper id of `bpf_ktime_get_ns`.
pub(super) const KTIME_GET_NS: i32 = 5;
/// Helper id of `bpf_tail_call`.
const TAIL_CALL: i32 = 12;

/// The sideband fields (`xdp_md` offsets, or [`SIDEBAND_TIME`]) helper op `op` reads in its stage, which the
/// stage registers carry to it.
pub(super) fn sideband_reads(op: &Op) -> Vec<i64> {
    match op.kind {
        OpKind::Helper {
            id: KTIME_GET_NS, ..
        } => vec![SIDEBAND_TIME],
        // The packet's length bounds the bytes copied.
        OpKind::Helper {
            id: XDP_LOAD_BYTES | XDP_STORE_BYTES,
            ..
        } => vec![4],
        _ => Vec::new(),
    }
}

impl Gen<'_> {
    /// Emits the block of helper op `cx.op`, or says which helper has none.
    pub(super) fn helper(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let OpKind::Helper { id, .. } = &cx.op.kind else {
            return Err(self.internal(Some(cx.op), "a helper block for a non-helper op".into()));
        };
        match *id {
            1 => self.map_lookup(cx),
            3 => self.map_delete(cx),
            130 => self.ringbuf_output(cx),
            KTIME_GET_NS => self.ktime(cx),
            XDP_LOAD_BYTES | XDP_STORE_BYTES => self.xdp_bytes(cx),
            XDP_ADJUST_TAIL => self.adjust_tail(cx),
            XDP_ADJUST_HEAD => self.adjust_head(cx),
            CSUM_DIFF => self.csum_diff(cx),
            // The front end inlines tail calls (crate::tailcall); one left here had no object to take callees from.
            TAIL_CALL => Err(self.unsupported(
                cx.op,
                format!(
                    "helper {} not inlined (compile the program with hwxdp_ehdl::compile_object)",
                    hwxdp_ebpf::helper_label(TAIL_CALL)
                ),
            )),
            TAIL_SLOT => self.tail_slot(cx),
            2 => self.map_update_call(cx),
            23 | 51 => self.redirect(cx),
            FIB_LOOKUP => self.fib_lookup(cx),
            SPIN_LOCK | SPIN_UNLOCK => self.spin_lock(cx),
            id => Err(self.unsupported(cx.op, format!("helper {}", hwxdp_ebpf::helper_label(id)))),
        }
    }

    /// The helper's `int` argument in register `r`, sign-extended to 64 bits: a constant the front end folded, or
    /// the low half of the register.
    pub(super) fn int_arg(&mut self, cx: &Call, r: u8) -> Result<String, VerilogError> {
        match cx.arg_const(r) {
            Some(ArgConst::Scalar(v)) => Ok(format!("64'h{:016x}", v as i32 as i64 as u64)),
            None => {
                let reg = self.reg_in(cx, r);
                self.unused_ports.push(reg.clone()); // only the low 32 bits count
                Ok(format!("{{{{32{{{reg}[31]}}}}, {reg}[31:0]}}"))
            }
            Some(_) => Err(self.unsupported(
                cx.op,
                format!(
                    "{} with a pointer as its int argument r{r}",
                    cx.helper_label()
                ),
            )),
        }
    }

    /// `n` stack bytes of the input boundary from r10-relative `at`, as a concatenation (highest byte first).
    pub(super) fn stack_bytes(&mut self, b: &Bound, at: i64, n: i64) -> String {
        let v: Vec<String> = (0..n)
            .rev()
            .map(|i| {
                b.stack
                    .get(&(at + i))
                    .cloned()
                    .unwrap_or_else(|| "8'd0".into())
            })
            .collect();
        self.read(&format!("{{{}}}", v.join(", ")))
    }

    /// `bpf_spin_lock` / `bpf_spin_unlock` (93, 94): R0 = 0 and nothing else. The pipeline already runs the
    /// accesses a lock guards in packet order (ports of one block act in stage order, stall checks hold a packet
    /// whose read could pass an older packet's write), which is what the lock buys on a CPU; the lock word itself
    /// is never written, as on the reference machine.
    fn spin_lock(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        if !cx.live_reg(0) {
            return Ok(());
        }
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        self.set_r0(cx, name, &en, "64'd0", &format!("  // {}", op.text));
        Ok(())
    }

    /// R0 = `value` under `en`, through a move in `ehdl_alu` so that a disabled op keeps R0 (the result of most
    /// helper blocks); `wire` names the result, `comment` ends the line.
    pub(super) fn set_r0(
        &mut self,
        cx: &mut Call,
        wire: &str,
        en: &str,
        value: &str,
        comment: &str,
    ) {
        let old = self.old_reg_value(cx, 0);
        self.declare(wire, 64);
        let _ = writeln!(
            self.body,
            "  ehdl_alu #(.OP(11), .WIDE(1), .OFF(0)) u_{wire} (.en_i({en}), .a_i(64'd0), .b_i({value}), \
             .old_i({old}), .res_o({wire}));{comment}"
        );
        cx.regs.insert(0, wire.to_string());
    }

    /// A read port on map `m`'s value block at slot `kw` (a 64-bit wire whose low `aw` bits index `vsize`-byte
    /// slots, assigned `key`), its data on `rd`: DEVMAP and PROG_ARRAY slots, which only the host writes.
    pub(super) fn slot_read_port(
        &mut self,
        op: &Op,
        m: u32,
        (kw, key): (&str, &str),
        rd: String,
        (vsize, aw): (u32, u32),
    ) {
        let early = self
            .early_of(key)
            .map(|e| (e, format!("@[{}:0] * {aw}'d{vsize}", aw - 1)));
        self.read(kw);
        self.read(&rd);
        self.unused_ports.push(rd.clone());
        self.unused_ports.push(kw.to_string());
        self.map_ports.entry(m).or_default().push(MapPort {
            stage: op.stage,
            insn: op.insn,
            we: "1'b0".into(),
            op: 0,
            addr: format!("{kw}[{}:0] * {aw}'d{vsize}", aw - 1),
            wdata: "64'd0".into(),
            wmask: "8'h00".into(),
            rdata: rd,
            reads: true,
            early,
        });
    }

    /// R0 = 0 or `-errno` from the 8-bit error wire `err` of a map block (`what` names the error in the comment),
    /// or `err` left unused when R0 is dead.
    pub(super) fn set_r0_errno(&mut self, cx: &mut Call, en: &str, err: String, what: &str) {
        if cx.live_reg(0) {
            let e = self.read(&err);
            let r0 = format!("{}_r0", cx.name);
            let text = &cx.op.text;
            self.set_r0(
                cx,
                &r0,
                en,
                &format!("64'd0 - {{56'd0, {e}}}"),
                &format!("  // {text}: 0 or {what}"),
            );
        } else {
            self.unused_ports.push(err);
        }
    }

    /// `bpf_ktime_get_ns` (5): the packet's timestamp when its first beat's sideband has one (a MAC that
    /// timestamps packets; the differential tests give the reference machine's clock there), else the module's
    /// nanosecond counter as the packet leaves the helper's stage.
    fn ktime(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        if !cx.live_reg(0) {
            return Ok(());
        }
        let Some(t) = cx.b.ctx.get(&SIDEBAND_TIME).cloned() else {
            return Err(self.internal(Some(op), format!("no timestamp at stage {}", op.stage)));
        };
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let now = format!("{name}_now");
        self.declare(&now, 64);
        let e = self.read(&format!("{t}[64] ? {t}[63:0] : ktime_q"));
        let _ = writeln!(self.body, "  assign {now} = {e};  // {}", op.text);
        self.read(&now);
        self.set_r0(cx, name, &en, &now, "");
        Ok(())
    }

    /// The nanosecond counter `bpf_ktime_get_ns` reads when a packet has no timestamp: `NsPerCycle` per clock from
    /// reset, whether the pipeline moves or not.
    pub(super) fn clock(&mut self) {
        let used = self.p.ops.iter().any(|o| {
            matches!(
                o.kind,
                OpKind::Helper {
                    id: KTIME_GET_NS,
                    ..
                }
            )
        });
        if !used {
            return;
        }
        self.declare("ktime_q", 64);
        self.body += "\n  // ---- nanosecond counter for bpf_ktime_get_ns ----\n\
                      \x20 always_ff @(posedge clk_i or negedge rst_ni) begin\n\
                      \x20   if (!rst_ni) begin\n\
                      \x20     ktime_q <= 64'd0;\n\
                      \x20   end else begin\n\
                      \x20     ktime_q <= ktime_q + NsPerCycle;\n\
                      \x20   end\n\
                      \x20 end\n";
    }

    /// `bpf_redirect` (23) and `bpf_redirect_map` (51) on a DEVMAP: the packet's target and R0's action.
    fn redirect(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let OpKind::Helper { id, .. } = &op.kind else {
            return Err(self.internal(Some(op), "a redirect block for a non-helper op".into()));
        };
        let h = cx.helper_label();
        let arg = |g: &mut Self, cx: &Call, r: u8| match cx.arg_const(r) {
            Some(ArgConst::Scalar(v)) => Some(hex64(v as u64)),
            Some(_) => None,
            None => Some(g.reg_in(cx, r)),
        };
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let old = cx.redirect.clone().unwrap_or_else(|| "42'd0".into());
        let old = self.read(&old);
        let (r0, target) = if *id == 23 {
            // bpf_redirect(ifindex, flags): XDP_REDIRECT, or XDP_ABORTED on nonzero flags.
            let (Some(ifx), Some(flags)) = (arg(self, cx, 1), arg(self, cx, 2)) else {
                return Err(self.unsupported(op, format!("helper {h} with a pointer argument")));
            };
            if is_signal(&ifx) {
                self.unused_ports.push(ifx.clone()); // only its low 32 bits are the ifindex
            }
            let ok = format!("{name}_ok");
            self.declare(&ok, 1);
            let _ = writeln!(
                self.body,
                "  assign {ok} = ({flags} == 64'd0);  // {}",
                op.text
            );
            (
                format!("({ok} ? 64'd4 : 64'd0)"),
                format!("{ok} ? {{2'b10, 8'd0, {ifx}[31:0]}} : {old}"),
            )
        } else {
            let (Some(ArgConst::Map(m)), Some(key), Some(ArgConst::Scalar(flags))) =
                (cx.arg_const(1), arg(self, cx, 2), cx.arg_const(3))
            else {
                return Err(self.unsupported(
                    op,
                    format!("helper {h} with a map or flags known only at run time"),
                ));
            };
            if !self.arrays.contains(&m) {
                return Err(self.unsupported_map(op, &h, m, "only DEVMAP has a block"));
            }
            let spec = self.maps.get(m as usize);
            let (entries, vsize) = spec.map_or((0, 4), |s| (s.max_entries, s.value_size));
            let (_, aw) = geometry(&self.maps[m as usize]);
            // A read port on the DEVMAP's block: the key's slot holds a nonzero ifindex when present.
            let (kw, rd, present) = (
                format!("{name}_key"),
                format!("{name}_rd{m}"),
                format!("{name}_present"),
            );
            self.declare(&kw, 64);
            self.declare(&rd, 64);
            self.declare(&present, 1);
            let _ = writeln!(self.body, "  assign {kw} = {key};  // {}", op.text);
            let _ = writeln!(
                self.body,
                "  assign {present} = ({kw}[31:0] < 32'd{entries}) & ({rd}[{}:0] != '0);",
                8 * vsize.min(8) - 1
            );
            self.slot_read_port(op, m, (&kw, &key), rd, (vsize, aw));
            let bad = flags as u64 & !(3 | 8 | 16) != 0;
            let bcast = flags as u64 & 8 != 0;
            let go = format!("{name}_go");
            self.declare(&go, 1);
            let _ = writeln!(
                self.body,
                "  assign {go} = 1'b{} & ({present} | 1'b{});",
                !bad as u8, bcast as u8
            );
            let fallback = if bad { 0 } else { flags as u64 & 3 };
            (
                format!("({go} ? 64'd4 : 64'd{fallback})"),
                format!("{go} ? {{2'b11, 8'd{m}, {kw}[31:0]}} : {old}"),
            )
        };
        let r = format!("{name}_redirect");
        self.declare(&r, 42);
        let e = self.read(&format!("{en} ? ({target}) : {old}"));
        let _ = writeln!(self.body, "  assign {r} = {e};");
        cx.redirect = Some(r);
        if cx.live_reg(0) {
            let r0v = self.read(&r0);
            self.set_r0(cx, &format!("{name}_r0"), &en, &r0v, "");
        }
        Ok(())
    }
}
