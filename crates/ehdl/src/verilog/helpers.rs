//! Helper blocks: one method per helper family, called from the stage emitter with the stage's state in a [`Call`].
//! A helper op is alone in its stage (rule 2 of docs/ehdl.md), so its inputs are the stage's input boundary and its
//! results chain onto the values the next boundary registers.

use super::adjust::XDP_ADJUST_TAIL;
use super::csum::CSUM_DIFF;
use super::fib::FIB_LOOKUP;
use super::head::XDP_ADJUST_HEAD;
use super::lru::is_lru;
use super::maps::{geometry, is_cam, is_hash, slot_width, HashPort, MapPort};
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

    /// The helper's name.
    pub(super) fn helper_name(&self) -> &str {
        match &self.op.kind {
            OpKind::Helper { name, .. } => name,
            _ => "",
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
        let OpKind::Helper { id, name: h, .. } = &cx.op.kind else {
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
                "bpf_tail_call not inlined (compile the program with hwxdp_ehdl::compile_object)",
            )),
            TAIL_SLOT => self.tail_slot(cx),
            2 => self.map_update_call(cx),
            23 | 51 => self.redirect(cx),
            FIB_LOOKUP => self.fib_lookup(cx),
            SPIN_LOCK | SPIN_UNLOCK => self.spin_lock(cx),
            id => Err(self.unsupported(cx.op, format!("helper {h} (call {id})"))),
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
                    cx.helper_name()
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
    /// slots), its data on `rd`: DEVMAP and PROG_ARRAY slots, which only the host writes.
    pub(super) fn slot_read_port(
        &mut self,
        op: &Op,
        m: u32,
        kw: &str,
        rd: String,
        (vsize, aw): (u32, u32),
    ) {
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
        });
    }

    /// A write port on map `m`'s CAM for `key` under `en` (an update with `flags`, or a delete with `del`), held by
    /// the block's busy signal on LRU maps; returns the port's hit, slot and error wires.
    pub(super) fn cam_write_port(
        &mut self,
        op: &Op,
        name: &str,
        m: u32,
        en: &str,
        key: String,
        (flags, del): (u8, bool),
    ) -> (String, String, String) {
        let spec = &self.maps[m as usize];
        let (sw, lru) = (slot_width(spec.max_entries), is_lru(spec));
        let (hit, slot, err) = (
            format!("{name}_hit"),
            format!("{name}_slot"),
            format!("{name}_err"),
        );
        self.declare(&hit, 1);
        self.declare(&slot, sw);
        self.declare(&err, 8);
        let we = format!("{} & {en}", self.go(op.stage));
        self.read(&we);
        let (req, busy) = if lru {
            let (r, b) = self.lru_wires(name, en, op.stage);
            (r, Some(b))
        } else {
            ("1'b0".to_string(), None)
        };
        self.hash_ports.entry(m).or_default().push(HashPort {
            stage: op.stage,
            insn: op.insn,
            update: true,
            del,
            req,
            busy,
            en: we,
            key: key.clone(),
            flags,
            hit: hit.clone(),
            slot: slot.clone(),
            err: err.clone(),
        });
        if self.stalls.iter().any(|st| st.early == op.id) {
            self.early.insert(op.id, (String::new(), en.to_string()));
            self.early_keys.insert(op.id, key);
        }
        (hit, slot, err)
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

    /// `bpf_map_lookup_elem` (1): an `ehdl_array_lookup` block, fed by the map's CAM for HASH and LPM_TRIE maps.
    fn map_lookup(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let h = cx.helper_name().to_string();
        let map = match cx.arg_const(1) {
            Some(ArgConst::Map(m)) => Some(m),
            _ => None,
        };
        let key = match cx.arg_const(2) {
            Some(ArgConst::Stack(o)) => Some(o),
            _ => None,
        };
        let (Some(m), Some(ko)) = (map, key) else {
            return Err(self.unsupported(
                op,
                format!("helper {h} with a map or key pointer known only at run time"),
            ));
        };
        if !self.arrays.contains(&m) {
            let spec = self.maps.get(m as usize);
            return Err(self.unsupported(
                op,
                format!(
                    "helper {h} on map {} of type {} (only ARRAY, HASH and LPM_TRIE maps have blocks yet)",
                    spec.map_or("?", |s| s.name.as_str()),
                    spec.map_or(0, |s| s.map_type)
                ),
            ));
        }
        // An LRU lookup marks its entry referenced, so it acts even when nothing reads R0.
        let lru = is_lru(&self.maps[m as usize]);
        if !cx.live_reg(0) && !lru {
            return Ok(());
        }
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let spec = &self.maps[m as usize];
        let hash = is_cam(spec);
        let kbytes = if hash { spec.key_size as i64 } else { 4 };
        let mut key = self.stack_bytes(cx.b, ko, kbytes);
        if hash {
            // The CAM finds the slot; the pointer is the slot's value, as for an ARRAY index.
            let sw = slot_width(spec.max_entries);
            let (hit, slot, err) = (
                format!("{name}_hit"),
                format!("{name}_slot"),
                format!("{name}_err"),
            );
            self.declare(&hit, 1);
            self.declare(&slot, sw);
            self.declare(&err, 8);
            let port_en = if lru {
                let we = format!("{} & {en}", self.go(op.stage));
                self.read(&we)
            } else {
                "1'b0".into()
            };
            self.unused_ports.push(err.clone());
            self.hash_ports.entry(m).or_default().push(HashPort {
                stage: op.stage,
                insn: op.insn,
                update: false,
                del: false,
                req: "1'b0".into(),
                busy: None,
                en: port_en,
                key: key.clone(),
                flags: 0,
                hit: hit.clone(),
                slot: slot.clone(),
                err,
            });
            if self.stalls.iter().any(|st| st.early == op.id) {
                self.early.insert(op.id, (String::new(), en.clone()));
                self.early_keys.insert(op.id, key.clone());
            }
            if !cx.live_reg(0) {
                self.unused_ports.push(hit);
                self.unused_ports.push(slot);
                return Ok(());
            }
            key = self.read(&format!(
                "{hit} ? {{{}'d0, {slot}}} : 32'hffff_ffff",
                32 - sw
            ));
        }
        let old = self.old_reg_value(cx, 0);
        let spec = &self.maps[m as usize];
        let (entries, vsize) = (spec.max_entries, spec.value_size);
        self.declare(name, 64);
        let _ = writeln!(
            self.body,
            "  ehdl_array_lookup #(.MAP_ID({m}), .ENTRIES({entries}), .VALUE_SIZE({vsize})) u_{name} \
             (.en_i({en}), .key_i({key}), .old_i({old}), .r0_o({name}));  // {}",
            op.text
        );
        cx.regs.insert(0, name.to_string());
        Ok(())
    }

    /// `bpf_map_update_elem` (2) with constant map, key and value pointers and flags, on a HASH map.
    fn map_update_call(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let op = cx.op;
        let h = cx.helper_name().to_string();
        let (
            Some(ArgConst::Map(m)),
            Some(ArgConst::Stack(ko)),
            Some(ArgConst::Stack(vo)),
            Some(ArgConst::Scalar(flags @ 0..=2)),
        ) = (
            cx.arg_const(1),
            cx.arg_const(2),
            cx.arg_const(3),
            cx.arg_const(4),
        )
        else {
            return Err(self.unsupported(
                op,
                format!("helper {h} with arguments known only at run time"),
            ));
        };
        let spec = self.maps.get(m as usize);
        if !self.arrays.contains(&m) || !spec.is_some_and(|s| is_hash(s) || is_lru(s)) {
            return Err(self.unsupported(
                op,
                format!(
                    "helper {h} on map {} (only HASH and LRU_HASH maps take updates yet)",
                    spec.map_or("?", |s| s.name.as_str())
                ),
            ));
        }
        self.map_update(cx, (m, ko, vo, flags as u8))
    }

    /// `bpf_map_update_elem` on HASH map `m` with the key at stack offset `ko`, the value at `vo` and `flags`: an
    /// update port on the map's CAM, value ports writing the slot it gives, and R0 = 0 or -errno.
    fn map_update(
        &mut self,
        cx: &mut Call,
        (m, ko, vo, flags): (u32, i64, i64, u8),
    ) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let en = self.pred_signal(&cx.preds, op.pred, op)?;
        let spec = &self.maps[m as usize];
        let (kb, vsize, entries) = (
            spec.key_size as i64,
            spec.value_size as i64,
            spec.max_entries,
        );
        let (_, aw) = geometry(spec);
        let sw = slot_width(entries);
        let key = self.stack_bytes(cx.b, ko, kb);
        let (hit, slot, err) = self.cam_write_port(op, name, m, &en, key, (flags, false));
        // The value, 8 bytes per port, at slot * value_size.
        let base = format!("{name}_vbase");
        self.declare(&base, aw);
        let wide_slot = if aw > sw {
            format!("{{{}'d0, {slot}}}", aw - sw)
        } else {
            slot.clone()
        };
        let _ = writeln!(
            self.body,
            "  assign {base} = {wide_slot} * {aw}'d{vsize};  // {}",
            op.text
        );
        self.read(&slot);
        self.read(&base);
        for i in 0..(vsize + 7) / 8 {
            let n = (vsize - 8 * i).min(8);
            let chunk = self.stack_bytes(cx.b, vo + 8 * i, n);
            let rd = format!("{name}_v{i}_rd");
            self.declare(&rd, 64);
            self.unused_ports.push(rd.clone());
            let mask = if n == 8 { 0xff } else { (1u32 << n) - 1 };
            self.read(&hit);
            self.map_ports.entry(m).or_default().push(MapPort {
                stage: op.stage,
                insn: op.insn,
                we: hit.clone(),
                op: 0,
                addr: format!("({base} + {aw}'d{})", 8 * i),
                wdata: if n == 8 {
                    chunk
                } else {
                    format!("{{{}'d0, {chunk}}}", 64 - 8 * n)
                },
                wmask: format!("8'h{mask:02x}"),
                rdata: rd,
            });
        }
        self.set_r0_errno(cx, &en, err, "-errno");
        Ok(())
    }

    /// `bpf_redirect` (23) and `bpf_redirect_map` (51) on a DEVMAP: the packet's target and R0's action.
    fn redirect(&mut self, cx: &mut Call) -> Result<(), VerilogError> {
        let (op, name) = (cx.op, cx.name);
        let OpKind::Helper { id, name: h, .. } = &op.kind else {
            return Err(self.internal(Some(op), "a redirect block for a non-helper op".into()));
        };
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
            let spec = self.maps.get(m as usize);
            if !self.arrays.contains(&m) {
                return Err(self.unsupported(
                    op,
                    format!(
                        "helper {h} on map {} of type {} (only DEVMAP has a block)",
                        spec.map_or("?", |s| s.name.as_str()),
                        spec.map_or(0, |s| s.map_type)
                    ),
                ));
            }
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
            self.slot_read_port(op, m, &kw, rd, (vsize, aw));
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
