//! Stage-by-stage emission: the generator's state ([`Gen`]), and for every stage its predicates, its packet
//! length and its ops in program order, each handed to the emitter of its kind with the stage's state in a
//! [`StageCx`] (`alu.rs`, `load.rs`, `store.rs`, `control.rs`, `helpers.rs`, `map_calls.rs`), then its boundary
//! registers (`boundary.rs`). The stream ports and frame chain (`ports.rs`), the stall checks (`stalls.rs`) and the map
//! blocks follow the last stage.

use super::adjust::first_tail_stage;
use super::flowkey::Probe;
use super::head::{head_room, moves_head};
use super::helpers::{sideband_reads, Call};
use super::maps::{HashPort, MapPort, Stall};
use super::{VerilogError, FIDX_BITS, LEN_BITS};
use crate::ir::{Label, Op, OpKind, Pipeline, Stage};
use hwxdp_ebpf::{InsnKind, Source};
use hwxdp_object::MapSpec;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The signals of one stage boundary: what the stage reads. Values are signal names or Verilog constants.
#[derive(Clone, Default)]
pub(super) struct Bound {
    pub(super) regs: BTreeMap<u8, String>,
    /// Stack bytes by r10-relative offset.
    pub(super) stack: BTreeMap<i64, String>,
    pub(super) preds: BTreeMap<u32, String>,
    pub(super) conds: BTreeMap<u32, String>,
    pub(super) verdict: Option<String>,
    /// Length so far and whether the packet's last frame was seen.
    pub(super) len: Option<(String, String)>,
    /// Context fields from the packet's sideband (`s_axis_tuser_i` of its first beat), by `xdp_md` offset, and the
    /// packet's timestamp `{valid, ns[63:0]}` under [`SIDEBAND_TIME`].
    pub(super) ctx: BTreeMap<i64, String>,
    /// Whether a run-time packet access reached past the frames it could see (the packet is aborted).
    pub(super) fault: Option<String>,
    /// Where a redirect helper sent the packet: `{valid, is_map, map[7:0], key[31:0]}` (42 bits).
    pub(super) redirect: Option<String>,
}

/// Stage `k` while its ops are emitted: what they read, and the values they build up for boundary `k + 1`.
pub(super) struct StageCx<'s> {
    pub(super) k: u32,
    /// The stage's input boundary.
    pub(super) b: &'s Bound,
    /// The next stage, whose live sets say which results are worth computing (`None` after the last stage).
    pub(super) next: Option<&'s Stage>,
    /// The stage's predicates, those formed in it included.
    pub(super) preds: BTreeMap<u32, String>,
    /// The packet length including the frame now in frame register 0, and whether its last frame was seen (while
    /// a length check is still ahead).
    pub(super) len_now: Option<(String, String)>,
    /// Register values for the next boundary (a result chains onto the old value).
    pub(super) regs: BTreeMap<u8, String>,
    /// Stack bytes for the next boundary, by r10-relative offset.
    pub(super) stack: BTreeMap<i64, String>,
    /// Sideband fields and head state for the next boundary (see [`Bound::ctx`]).
    pub(super) ctx: BTreeMap<i64, String>,
    /// The verdict so far, once an exit may have run.
    pub(super) verdict: Option<String>,
    /// The redirect target so far (see [`Bound::redirect`]).
    pub(super) redirect: Option<String>,
    /// Wires that abort the packet: the input boundary's fault and the run-time accesses that missed their frames.
    pub(super) misses: Vec<String>,
    /// Condition outputs computed in this stage, by op id.
    pub(super) conds: BTreeMap<u32, String>,
}

impl StageCx<'_> {
    /// The signal prefix of op `op` (`s<stage>_o<id>`).
    pub(super) fn name(&self, op: &Op) -> String {
        format!("s{}_o{}", self.k, op.id)
    }

    /// Whether register `r` is live at the next boundary.
    pub(super) fn live_reg(&self, r: u8) -> bool {
        self.next.is_some_and(|s| s.live_regs.contains(r))
    }

    /// Whether stack byte `o` (r10-relative) is live at the next boundary.
    pub(super) fn live_byte(&self, o: i64) -> bool {
        self.next.is_some_and(|s| s.live_stack.contains(o))
    }
}

/// The generator's state: declarations and logic as text, which signals are read, where stores write.
pub(super) struct Gen<'a> {
    pub(super) p: &'a Pipeline,
    /// The object's maps, the ARRAY maps with a block, and each block's ports.
    pub(super) maps: &'a [MapSpec],
    pub(super) arrays: BTreeSet<u32>,
    pub(super) map_ports: BTreeMap<u32, Vec<MapPort>>,
    pub(super) hash_ports: BTreeMap<u32, Vec<HashPort>>,
    pub(super) ring_ports: BTreeMap<u32, Vec<super::ringbuf::RingPort>>,
    /// LRU updates and deletes: (stage, free wire, busy wire), see `verilog/lru.rs`.
    pub(super) lru_ops: Vec<(u32, String, String)>,
    /// Stall checks, and for each early op (and, with flush checks, each late op) its address and enable wires once
    /// emitted.
    pub(super) stalls: Vec<Stall>,
    /// With `Hazards::Flush`: the checks a flush evaluation block watches, and the stage of their late accesses.
    pub(super) flushes: Vec<Stall>,
    pub(super) flush_stage: Option<u32>,
    /// With `Hazards::Flush`: the boundary a flush replays from (0: the input buffer; else the elastic buffer's,
    /// see `verilog/flush.rs`).
    pub(super) flush_base: u32,
    pub(super) early: BTreeMap<u32, (String, String)>,
    /// Register names of every boundary (index = boundary), for the stall checks.
    pub(super) bound_regs: Vec<BTreeMap<u8, String>>,
    /// Stack byte registers of every boundary, for the checks that compare keys (`verilog/flowkey.rs`).
    pub(super) bound_stack: Vec<BTreeMap<i64, String>>,
    /// Predicate registers of every boundary, for the same checks.
    pub(super) bound_preds: Vec<BTreeMap<u32, String>>,
    /// The key bytes (a concatenation) each early HASH lookup of a stall check reads.
    pub(super) early_keys: BTreeMap<u32, String>,
    /// Probe ports of the CAM blocks (see `flowkey`): per early HASH update of a stall check, its map and the
    /// probe's key, hit and slot.
    pub(super) probes: BTreeMap<u32, Probe>,
    /// Fault wires of the stage being emitted (run-time checks that abort the packet).
    pub(super) faults: Vec<String>,
    /// Frame bytes.
    pub(super) fb: i64,
    pub(super) decls: String,
    pub(super) body: String,
    /// Signals declared here (in order), and those something reads.
    produced: Vec<String>,
    used: BTreeSet<String>,
    /// Store bytes for each frame register position: (data, mask) signals merged into the next register.
    pub(super) writes: BTreeMap<u32, Vec<(String, String)>>,
    /// The last stage that needs the packet length.
    pub(super) last_len: Option<u32>,
    /// The last stage that loads each sideband context field (`xdp_md` offset: 4 data_end, 12 ingress_ifindex,
    /// 16 rx_queue_index).
    pub(super) ctx_last: BTreeMap<i64, u32>,
    /// Port bits nothing reads.
    pub(super) unused_ports: Vec<String>,
    /// Flip-flops of the stage registers.
    pub(super) state_flops: u64,
    /// Bytes of head extension when the program calls `bpf_xdp_adjust_head` (see `verilog/head.rs`).
    pub(super) head_ext: Option<u32>,
    /// Each data register of a boundary with its next value (`go ? d : q`), for RAM addresses presented a cycle
    /// early (`verilog/mem.rs`).
    pub(super) next_vals: BTreeMap<String, String>,
    /// The same registers' advance condition and input (`go`, `d`): an early address over one boundary's registers
    /// alone is computed on both sides of one multiplexer (`verilog/mem.rs`).
    pub(super) next_split: BTreeMap<String, (String, String)>,
    /// Where each map block's values live, in block order.
    pub(super) storage: Vec<super::mem::MapStorage>,
}

pub(super) fn hex64(v: u64) -> String {
    format!("64'h{v:016x}")
}

/// The key of the packet's timestamp among the sideband fields (not an `xdp_md` offset).
pub(super) const SIDEBAND_TIME: i64 = -1;

/// Width of a sideband field.
pub(super) fn ctx_width(offset: i64) -> u32 {
    match offset {
        4 => LEN_BITS,
        SIDEBAND_TIME => 65,
        _ => 32,
    }
}

/// The name of a sideband field in signal names.
pub(super) fn ctx_tag(offset: i64) -> String {
    if offset == SIDEBAND_TIME {
        "time".into()
    } else {
        format!("ctx{offset}")
    }
}

pub(super) fn is_signal(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

impl<'a> Gen<'a> {
    pub(super) fn new(
        p: &'a Pipeline,
        maps: &'a [MapSpec],
        arrays: BTreeSet<u32>,
        stalls: Vec<Stall>,
    ) -> Self {
        let last_len = p
            .ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::LenCheck { meta: false, .. }))
            .map(|o| o.stage)
            .max();
        let mut ctx_last: BTreeMap<i64, u32> = BTreeMap::new();
        for o in &p.ops {
            if let (
                OpKind::Load,
                Label::Context {
                    offset: Some(f @ (4 | 12 | 16)),
                },
            ) = (&o.kind, o.label)
            {
                let e = ctx_last.entry(f).or_insert(o.stage);
                *e = (*e).max(o.stage);
            }
            for f in sideband_reads(o) {
                let e = ctx_last.entry(f).or_insert(o.stage);
                *e = (*e).max(o.stage);
            }
        }
        if first_tail_stage(p).is_some() || moves_head(p) {
            // The length reaches the output, which trims or realigns the frames to it.
            ctx_last.insert(4, p.stages.len() as u32);
        }
        Gen {
            p,
            maps,
            arrays,
            map_ports: BTreeMap::new(),
            hash_ports: BTreeMap::new(),
            ring_ports: BTreeMap::new(),
            lru_ops: Vec::new(),
            stalls,
            flushes: Vec::new(),
            flush_stage: None,
            flush_base: 0,
            early: BTreeMap::new(),
            bound_regs: Vec::new(),
            bound_stack: Vec::new(),
            bound_preds: Vec::new(),
            early_keys: BTreeMap::new(),
            probes: BTreeMap::new(),
            faults: Vec::new(),
            fb: p.summary.data_width as i64 / 8,
            decls: String::new(),
            body: String::new(),
            produced: Vec::new(),
            used: BTreeSet::new(),
            writes: BTreeMap::new(),
            last_len,
            ctx_last,
            unused_ports: Vec::new(),
            state_flops: 0,
            head_ext: head_room(p),
            next_vals: BTreeMap::new(),
            next_split: BTreeMap::new(),
            storage: Vec::new(),
        }
    }

    /// The advance of stage register `s` (boundary and frame register): `adv`, `go[s]` with stall checks, or
    /// before an elastic buffer `go_front` (held while the buffer replays).
    pub(super) fn go(&self, s: u32) -> String {
        if !self.stalls.is_empty() {
            format!("go[{s}]")
        } else if s < self.elastic().unwrap_or(0) {
            "go_front".into()
        } else {
            "adv".into()
        }
    }

    /// The boundary of the elastic buffer, if the pipeline has one.
    pub(super) fn elastic(&self) -> Option<u32> {
        (self.flush_stage.is_some() && self.flush_base > 0).then_some(self.flush_base)
    }

    pub(super) fn declare(&mut self, name: &str, width: u32) {
        if width == 1 {
            let _ = writeln!(self.decls, "  logic {name};");
        } else {
            let _ = writeln!(self.decls, "  logic [{}:0] {name};", width - 1);
        }
        self.produced.push(name.to_string());
    }

    /// Marks a signal (or each signal of a concatenation) as read; constants are ignored.
    pub(super) fn read(&mut self, expr: &str) -> String {
        for part in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '\'')) {
            if is_signal(part) {
                self.used.insert(part.to_string());
            }
        }
        expr.to_string()
    }

    pub(super) fn unsupported(&self, op: &Op, what: impl Into<String>) -> VerilogError {
        VerilogError::Unsupported {
            program: self.p.summary.program.clone(),
            origin: op.origin,
            text: op.text.clone(),
            what: what.into(),
        }
    }

    /// The refusal of helper `helper` on map `m`, a map type without a block for it (`blocks` says which have one).
    pub(super) fn unsupported_map(
        &self,
        op: &Op,
        helper: &str,
        m: u32,
        blocks: &str,
    ) -> VerilogError {
        let spec = self.maps.get(m as usize);
        self.unsupported(
            op,
            format!(
                "helper {helper} on map {} of type {} ({blocks})",
                spec.map_or("?", |s| s.name.as_str()),
                spec.map_or_else(
                    || "?".to_string(),
                    |s| hwxdp_ebpf::map_type_label(s.map_type)
                )
            ),
        )
    }

    pub(super) fn internal(&self, op: Option<&Op>, what: String) -> VerilogError {
        VerilogError::Unsupported {
            program: self.p.summary.program.clone(),
            origin: op.map_or(0, |o| o.origin),
            text: op.map_or_else(String::new, |o| o.text.clone()),
            what: format!("an inconsistent pipeline IR ({what})"),
        }
    }

    /// Emits every stage, the frame chain and the ports; returns the module body.
    pub(super) fn stages(&mut self) -> Result<String, VerilogError> {
        let n = self.p.stages.len();
        // Boundary 0: the packet's valid bit; r1 (the context) and anything else read before being written are
        // constants, as there is no state before the first stage.
        self.declare("b0_valid_q", 1);
        self.state_flops += 1;
        let mut b = Bound::default();
        if let Some(s0) = self.p.stages.first() {
            for r in s0.live_regs.iter() {
                b.regs.insert(r, "64'd0".into());
            }
        }
        if self.last_len.is_some() {
            b.len = Some((format!("{LEN_BITS}'d0"), "1'b0".into()));
        }
        for (&f, _) in self.ctx_last.clone().iter() {
            let name = format!("b0_{}_q", ctx_tag(f));
            self.declare(&name, ctx_width(f));
            self.state_flops += ctx_width(f) as u64;
            b.ctx.insert(f, name);
        }
        self.head_init(&mut b.ctx);
        self.bound_regs.push(b.regs.clone());
        self.bound_stack.push(b.stack.clone());
        self.bound_preds.push(b.preds.clone());
        for k in 0..n {
            b = self.stage(k as u32, b)?;
            self.bound_regs.push(b.regs.clone());
            self.bound_stack.push(b.stack.clone());
            self.bound_preds.push(b.preds.clone());
        }
        self.ports(n as u32, &b);
        self.stall_logic(n as u32);
        self.flush_logic();
        self.map_blocks()?;
        self.clock();
        let mut out = String::new();
        out += "\n  // Flow control: everything advances together.\n  logic adv;\n  logic in_pkt_q;\n  logic out_space;\n  logic [73:0] out_user;\n";
        if !self.stalls.is_empty() {
            let _ = writeln!(out, "  // Stage register s moves when go[s]; a stall holds a prefix of the pipeline.\n  logic [{n}:0] go;");
        }
        let _ = writeln!(out, "  logic [{}:0] in_fidx_q;", FIDX_BITS - 1);
        out += &self.decls;
        out += &self.body;
        let mut unused: Vec<String> = self
            .produced
            .iter()
            .filter(|s| !self.used.contains(*s))
            .cloned()
            .collect();
        unused.extend(self.unused_ports.iter().cloned());
        if !unused.is_empty() {
            let _ = write!(
                out,
                "\n  // Computed but not read by a later stage (dead halves of stores, last length updates, ...).\n  \
                 logic unused_signals;\n  assign unused_signals = ^{{{}}};\n",
                unused.join(", ")
            );
        }
        Ok(out)
    }

    pub(super) fn pred_signal(
        &mut self,
        preds: &BTreeMap<u32, String>,
        id: u32,
        op: &Op,
    ) -> Result<String, VerilogError> {
        match preds.get(&id) {
            Some(s) => Ok(self.read(s)),
            None => Err(self.internal(
                Some(op),
                format!("predicate p{id} is not live at stage {}", op.stage),
            )),
        }
    }

    /// Emits stage `k` reading boundary `b`; returns boundary `k + 1`.
    fn stage(&mut self, k: u32, b: Bound) -> Result<Bound, VerilogError> {
        let p = self.p;
        let st = &p.stages[k as usize];
        let _ = writeln!(
            self.body,
            "\n  // ---- stage {k}{} ----",
            if st.nop {
                " (NOP: waits for a frame)"
            } else {
                ""
            }
        );
        let preds = self.form_preds(k, &b)?;
        let len_now = self.len_now(k, &b);
        let mut cx = StageCx {
            k,
            b: &b,
            next: p.stages.get(k as usize + 1),
            preds,
            len_now,
            regs: b.regs.clone(),
            stack: b.stack.clone(),
            ctx: b.ctx.clone(),
            verdict: b.verdict.clone(),
            redirect: b.redirect.clone(),
            misses: b.fault.iter().cloned().collect(),
            conds: BTreeMap::new(),
        };
        let mut ops: Vec<&Op> = st.ops.iter().map(|&o| &p.ops[o as usize]).collect();
        ops.sort_by_key(|o| o.insn);
        for op in ops {
            self.op(&mut cx, op)?;
        }
        cx.misses.append(&mut self.faults);
        let fault = if cx.misses.is_empty() {
            None
        } else {
            let f = format!("s{k}_fault");
            self.declare(&f, 1);
            let e = self.read(&cx.misses.join(" | "));
            let _ = writeln!(self.body, "  assign {f} = {e};");
            Some(f)
        };
        self.boundary(cx, fault)
    }

    /// The predicates of stage `k`: those of boundary `b`, and those formed here, in id order (a term may name one
    /// formed just before).
    fn form_preds(&mut self, k: u32, b: &Bound) -> Result<BTreeMap<u32, String>, VerilogError> {
        let mut preds = b.preds.clone();
        for d in self.p.preds.iter().filter(|d| d.ready == k) {
            let expr = if d.terms.is_empty() {
                if k != 0 {
                    return Err(self.internal(
                        None,
                        format!("p{} has no terms but is ready at stage {k}", d.id),
                    ));
                }
                self.read("b0_valid_q")
            } else {
                let mut terms = Vec::new();
                for &(src, cond) in &d.terms {
                    let Some(ps) = preds.get(&src).cloned() else {
                        return Err(
                            self.internal(None, format!("p{} needs p{src} at stage {k}", d.id))
                        );
                    };
                    let t = match cond {
                        None => ps,
                        Some((c, pol)) => {
                            let Some(cs) = b.conds.get(&c).cloned() else {
                                return Err(self
                                    .internal(None, format!("p{} needs c{c} at stage {k}", d.id)));
                            };
                            format!("({ps} & {}{cs})", if pol { "" } else { "~" })
                        }
                    };
                    terms.push(self.read(&t));
                }
                terms.join(" | ")
            };
            let name = format!("s{k}_p{}", d.id);
            self.declare(&name, 1);
            let _ = writeln!(self.body, "  assign {name} = {expr};");
            preds.insert(d.id, name);
        }
        Ok(preds)
    }

    /// The packet length including the frame now in frame register 0, and whether the packet's last frame was
    /// seen, while a length check is still ahead of stage `k`.
    fn len_now(&mut self, k: u32, b: &Bound) -> Option<(String, String)> {
        let (Some(last), Some((len, ended))) = (self.last_len, &b.len) else {
            return None;
        };
        if k > last {
            return None;
        }
        let (l, e) = (format!("s{k}_len"), format!("s{k}_ended"));
        self.declare(&l, LEN_BITS);
        self.declare(&e, 1);
        let (len, ended) = (self.read(len), self.read(ended));
        self.read("f0_keep");
        self.read("f0_last");
        let _ = writeln!(
            self.body,
            "  ehdl_pkt_len #(.DW(DataWidth), .LW(LenBits)) u_s{k}_len (.len_i({len}), .ended_i({ended}), \
             .keep_i(f0_keep), .last_i(f0_last), .len_o({l}), .ended_o({e}));"
        );
        Some((l, e))
    }

    /// Emits op `op` of stage `cx`: the template of its kind, or the helper block of a call.
    fn op(&mut self, cx: &mut StageCx, op: &Op) -> Result<(), VerilogError> {
        let insn = self
            .p
            .insns
            .get(op.insn as usize)
            .copied()
            .unwrap_or_default();
        let kind = hwxdp_ebpf::kind(&insn)
            .map_err(|e| self.unsupported(op, format!("an invalid instruction ({e})")))?;
        match op.kind {
            OpKind::Alu | OpKind::Alu3 { .. } => self.register_op(cx, op, kind),
            OpKind::Load => self.load(cx, op, kind),
            OpKind::Store => self.store(cx, op, kind),
            OpKind::Atomic => self.atomic(cx, op, kind),
            OpKind::Cond => self.cond(cx, op, kind),
            OpKind::LenCheck {
                ensured,
                meta,
                taken_if_short,
            } => self.len_check(cx, op, ensured, meta, taken_if_short),
            OpKind::Exit { reg, imm } => self.exit(cx, op, reg, imm),
            OpKind::Helper { .. } => {
                let name = cx.name(op);
                self.helper(&mut Call::new(op, &name, cx))
            }
        }
    }

    /// The error for an op whose instruction is not one its kind is made from.
    pub(super) fn mismatched(&self, op: &Op, kind: InsnKind) -> VerilogError {
        self.unsupported(op, format!("{:?} ({kind:?})", op.kind))
    }

    /// The value of register `r` at the stage's input boundary, marked as read (0 when nothing carries it).
    pub(super) fn reg_in(&mut self, cx: &StageCx, r: u8) -> String {
        match cx.b.regs.get(&r) {
            Some(s) => self.read(s),
            None => "64'd0".into(),
        }
    }

    /// A source operand: register `r` at the stage's input boundary, or a sign-extended immediate.
    pub(super) fn operand(&mut self, cx: &StageCx, s: Source) -> String {
        match s {
            Source::Reg(r) => self.reg_in(cx, r),
            Source::Imm(i) => hex64(i as i64 as u64),
        }
    }

    /// The value register `r` has so far in the stage (the `old` a result chains onto), marked as read.
    pub(super) fn old_reg_value(&mut self, cx: &StageCx, r: u8) -> String {
        let old = cx.regs.get(&r).cloned().unwrap_or_else(|| "64'd0".into());
        self.read(&old)
    }

    /// Register `dst` takes `size` little-endian `bytes` (sign-extended when `signed`) as wire `res` when `en`:
    /// a load from a map value or the stack, or an atomic's fetched old value.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bytes_into_reg(
        &mut self,
        cx: &mut StageCx,
        op: &Op,
        dst: u8,
        res: String,
        (size, signed): (i64, bool),
        en: &str,
        bytes: &str,
    ) {
        let old = self.old_reg_value(cx, dst);
        self.declare(&res, 64);
        let _ = writeln!(
            self.body,
            "  ehdl_stack_load #(.SIZE({size}), .SIGNED({})) u_{res} (.en_i({en}), .bytes_i({bytes}), \
             .old_i({old}), .res_o({res}));  // {}",
            signed as u8,
            op.text
        );
        cx.regs.insert(dst, res);
    }
}
