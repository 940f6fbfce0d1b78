//! Stage-by-stage emission: the predicates, templates and stage registers of every stage, then the frame chain and
//! the stream ports.

use super::adjust::first_tail_stage;
use super::flowkey::Probe;
use super::head::{head_room, moves_head, shift64, HeadAccess, HEAD_EXT, HEAD_SHIFT};
use super::helpers::{sideband_reads, Call};
use super::maps::{geometry, HashPort, MapPort, Stall};
use super::{VerilogError, DATA_BASE, FIDX_BITS, LEN_BITS};
use crate::ir::{Label, Op, OpKind, Pipeline};
use hwxdp_ebpf::{AtomicOp, ByteOrder, InsnKind, Source};
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

/// One register of a boundary: name, width, next value, and whether it is a control bit that resets to 0.
struct Reg {
    name: String,
    width: u32,
    d: String,
    reset: bool,
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
    last_len: Option<u32>,
    /// The last stage that loads each sideband context field (`xdp_md` offset: 4 data_end, 12 ingress_ifindex,
    /// 16 rx_queue_index).
    ctx_last: BTreeMap<i64, u32>,
    /// Port bits nothing reads.
    pub(super) unused_ports: Vec<String>,
    /// Flip-flops of the stage registers.
    pub(super) state_flops: u64,
    /// Bytes of head extension when the program calls `bpf_xdp_adjust_head` (see `verilog/head.rs`).
    pub(super) head_ext: Option<u32>,
}

pub(super) fn hex64(v: u64) -> String {
    format!("64'h{v:016x}")
}

/// The key of the packet's timestamp among the sideband fields (not an `xdp_md` offset).
pub(super) const SIDEBAND_TIME: i64 = -1;

/// Width of a sideband field.
fn ctx_width(offset: i64) -> u32 {
    match offset {
        4 => LEN_BITS,
        SIDEBAND_TIME => 65,
        _ => 32,
    }
}

/// The name of a sideband field in signal names.
fn ctx_tag(offset: i64) -> String {
    if offset == SIDEBAND_TIME {
        "time".into()
    } else {
        format!("ctx{offset}")
    }
}

/// A packet access's offset from `data` as a 64-bit expression: the constant `offset`, or the pointer register's
/// value `ptr` plus the instruction's `off`.
fn packet_rel(offset: Option<i64>, ptr: Option<String>, off: i16) -> String {
    match (offset, ptr) {
        (Some(o), _) => hex64(o as u64),
        (None, p) => format!(
            "{} + {} - {}",
            p.unwrap_or_else(|| "64'd0".into()),
            hex64(off as i64 as u64),
            hex64(DATA_BASE)
        ),
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

    /// The advance of stage register `s` (boundary and frame register): `adv`, or `go[s]` with stall checks.
    pub(super) fn go(&self, s: u32) -> String {
        if self.stalls.is_empty() {
            "adv".into()
        } else {
            format!("go[{s}]")
        }
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
        self.map_blocks();
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
        // Predicates formed here, in id order (a term may name one formed just before).
        let mut preds = b.preds.clone();
        for d in p.preds.iter().filter(|d| d.ready == k) {
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
        // The packet length including the frame now in frame register 0.
        let mut len_now = None;
        if let (Some(last), Some((len, ended))) = (self.last_len, &b.len) {
            if k <= last {
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
                len_now = Some((l, e));
            }
        }
        let next = p.stages.get(k as usize + 1);
        let live_next_reg = |r: u8| next.is_some_and(|s| s.live_regs.contains(r));
        let live_next_byte = |o: i64| next.is_some_and(|s| s.live_stack.contains(o));
        let mut regs = b.regs.clone();
        let mut stack = b.stack.clone();
        let mut verdict = b.verdict.clone();
        let mut redirect = b.redirect.clone();
        let mut ctx = b.ctx.clone();
        let mut misses: Vec<String> = b.fault.iter().cloned().collect();
        let mut conds: BTreeMap<u32, String> = BTreeMap::new();
        let mut ops: Vec<&Op> = st.ops.iter().map(|&o| &p.ops[o as usize]).collect();
        ops.sort_by_key(|o| o.insn);
        for op in ops {
            let name = format!("s{k}_o{}", op.id);
            let insn = p.insns.get(op.insn as usize).copied().unwrap_or_default();
            let kind = hwxdp_ebpf::kind(&insn)
                .map_err(|e| self.unsupported(op, format!("an invalid instruction ({e})")))?;
            let reg = |g: &mut Self, r: u8| -> String {
                match b.regs.get(&r) {
                    Some(s) => g.read(s),
                    None => "64'd0".into(),
                }
            };
            let src = |g: &mut Self, s: Source| match s {
                Source::Reg(r) => reg(g, r),
                Source::Imm(i) => hex64(i as i64 as u64),
            };
            // A template writing a register: (dst, instance text without the old value, which is chained here).
            let mut alu = |g: &mut Self,
                           dst: u8,
                           params: String,
                           a: String,
                           bb: String|
             -> Result<(), VerilogError> {
                if !live_next_reg(dst) {
                    return Ok(());
                }
                let en = g.pred_signal(&preds, op.pred, op)?;
                let old = regs.get(&dst).cloned().unwrap_or_else(|| "64'd0".into());
                let old = g.read(&old);
                g.declare(&name, 64);
                let _ = writeln!(
                    g.body,
                    "  ehdl_alu #({params}) u_{name} (.en_i({en}), .a_i({a}), .b_i({bb}), .old_i({old}), .res_o({name}));  // {}",
                    op.text
                );
                regs.insert(dst, name.clone());
                Ok(())
            };
            let alu_params = |opn: u8, wide: bool, off: i16| {
                format!(".OP({opn}), .WIDE({}), .OFF({off})", wide as u8)
            };
            match (&op.kind, kind) {
                (
                    OpKind::Alu,
                    InsnKind::Alu {
                        wide,
                        op: o,
                        dst,
                        src: s,
                    },
                ) => {
                    let (code, off) = o.encoding();
                    let (a, bb) = (reg(self, dst), src(self, s));
                    alu(self, dst, alu_params(code >> 4, wide, off), a, bb)?;
                }
                (
                    OpKind::Alu3 { a },
                    InsnKind::Alu {
                        wide,
                        op: o,
                        dst,
                        src: s,
                    },
                ) => {
                    let (code, off) = o.encoding();
                    let (a, bb) = (reg(self, *a), src(self, s));
                    alu(self, dst, alu_params(code >> 4, wide, off), a, bb)?;
                }
                (OpKind::Alu, InsnKind::Neg { wide, dst }) => {
                    let a = reg(self, dst);
                    alu(self, dst, alu_params(8, wide, 0), a, "64'd0".into())?;
                }
                (OpKind::Alu3 { a }, InsnKind::Neg { wide, dst }) => {
                    let a = reg(self, *a);
                    alu(self, dst, alu_params(8, wide, 0), a, "64'd0".into())?;
                }
                (OpKind::Alu | OpKind::Alu3 { .. }, InsnKind::Endian { order, bits, dst }) => {
                    let from = match op.kind {
                        OpKind::Alu3 { a } => a,
                        _ => dst,
                    };
                    let a = reg(self, from);
                    let swap = matches!(order, ByteOrder::Be | ByteOrder::Swap) as u8;
                    let params =
                        format!(".OP(13), .WIDE(1), .OFF(0), .END_BITS({bits}), .END_SWAP({swap})");
                    alu(self, dst, params, a, "64'd0".into())?;
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
                    let bb = reg(self, s);
                    alu(
                        self,
                        dst,
                        alu_params(11, wide, (from.bytes() * 8) as i16),
                        "64'd0".into(),
                        bb,
                    )?;
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
                    alu(
                        self,
                        dst,
                        alu_params(11, true, 0),
                        "64'd0".into(),
                        hex64(((m + 1) << 32) + off),
                    )?;
                }
                (
                    OpKind::Alu,
                    InsnKind::LoadImm64 {
                        dst,
                        pseudo: 0,
                        imm,
                    },
                ) => {
                    alu(
                        self,
                        dst,
                        alu_params(11, true, 0),
                        "64'd0".into(),
                        hex64(imm as u64),
                    )?;
                }
                (
                    OpKind::Load,
                    InsnKind::Load {
                        size,
                        signed,
                        dst,
                        base,
                        off: moff,
                    },
                ) => {
                    let size = size.bytes() as i64;
                    match op.label {
                        Label::MapValue {
                            map,
                            offset: Some(o),
                        } if self.rodata(map).is_some() => {
                            // Read-only global data (`.rodata`): the bytes are constants of the program.
                            let data = self.rodata(map).unwrap_or_default();
                            let raw = (0..size).fold(0u64, |v, i| {
                                v | (data.get((o + i) as usize).copied().unwrap_or(0) as u64)
                                    << (8 * i)
                            });
                            let bits = 8 * size as u32;
                            let value = if signed && bits < 64 {
                                (((raw << (64 - bits)) as i64) >> (64 - bits)) as u64
                            } else {
                                raw
                            };
                            alu(
                                self,
                                dst,
                                alu_params(11, true, 0),
                                "64'd0".into(),
                                hex64(value),
                            )?;
                        }
                        Label::MapValue { .. } | Label::Unknown => {
                            if !live_next_reg(dst) {
                                continue;
                            }
                            let en = self.pred_signal(&preds, op.pred, op)?;
                            let ptr = reg(self, base);
                            let rd =
                                self.map_port(op, &name, &en, ptr, moff, size as u32, None, 0)?;
                            let old = regs.get(&dst).cloned().unwrap_or_else(|| "64'd0".into());
                            let old = self.read(&old);
                            self.declare(&name, 64);
                            let _ = writeln!(
                                self.body,
                                "  ehdl_stack_load #(.SIZE({size}), .SIGNED({})) u_{name} (.en_i({en}), \
                                 .bytes_i({rd}), .old_i({old}), .res_o({name}));  // {}",
                                signed as u8, op.text
                            );
                            regs.insert(dst, name.clone());
                        }
                        Label::Packet { offset } if offset.is_none() || op.data_shift.is_none() => {
                            if !live_next_reg(dst) {
                                continue;
                            }
                            let en = self.pred_signal(&preds, op.pred, op)?;
                            let ptr = offset.is_none().then(|| reg(self, base));
                            let rel = packet_rel(offset, ptr, moff);
                            let shift = self.run_time_shift(&ctx);
                            let (addr, frames, nf) =
                                self.dyn_frames(op, &name, rel, shift, "data")?;
                            let old = regs.get(&dst).cloned().unwrap_or_else(|| "64'd0".into());
                            let old = self.read(&old);
                            let miss = format!("{name}_miss");
                            self.declare(&name, 64);
                            self.declare(&miss, 1);
                            let _ = writeln!(
                                self.body,
                                "  ehdl_pkt_load_dyn #(.DW(DataWidth), .NF({nf}), .SIZE({size}), .SIGNED({})) u_{name} \
                                 (.en_i({en}), .frames_i({frames}), .addr_i({addr}), .old_i({old}), .res_o({name}), \
                                 .miss_o({miss}));  // {}",
                                signed as u8, op.text
                            );
                            misses.push(miss);
                            regs.insert(dst, name.clone());
                        }
                        Label::Packet { offset: Some(o) } => {
                            if !live_next_reg(dst) {
                                continue;
                            }
                            let en = self.pred_signal(&preds, op.pred, op)?;
                            let (o, shifted) = self.static_position(op, o, &en, &ctx)?;
                            misses.extend(shifted);
                            if o < 0 {
                                let ext = ctx.get(&HEAD_EXT).cloned().unwrap_or_default();
                                let old = regs.get(&dst).cloned().unwrap_or_else(|| "64'd0".into());
                                let a = HeadAccess {
                                    op,
                                    name: &name,
                                    en: &en,
                                    at: o,
                                    size,
                                };
                                self.head_load(a, signed, &ext, &old)?;
                                regs.insert(dst, name.clone());
                                continue;
                            }
                            let (pos, off, span) = self.packet_at(op, o, size)?;
                            let lo = self.read(&format!("f{pos}_data"));
                            let hi = if span {
                                self.read(&format!("f{}_data", pos - 1))
                            } else {
                                lo.clone()
                            };
                            let old = regs.get(&dst).cloned().unwrap_or_else(|| "64'd0".into());
                            let old = self.read(&old);
                            self.declare(&name, 64);
                            let _ = writeln!(
                                self.body,
                                "  ehdl_pkt_load #(.DW(DataWidth), .OFF({off}), .SIZE({size}), .SIGNED({})) u_{name} \
                                 (.en_i({en}), .lo_i({lo}), .hi_i({hi}), .old_i({old}), .res_o({name}));  // {}",
                                signed as u8, op.text
                            );
                            regs.insert(dst, name.clone());
                        }
                        Label::Stack { offset: Some(o) } => {
                            if !live_next_reg(dst) {
                                continue;
                            }
                            let en = self.pred_signal(&preds, op.pred, op)?;
                            let bytes: Vec<String> = (0..size)
                                .rev()
                                .map(|i| {
                                    b.stack
                                        .get(&(o + i))
                                        .cloned()
                                        .unwrap_or_else(|| "8'd0".into())
                                })
                                .collect();
                            let bytes = self.read(&format!("{{{}}}", bytes.join(", ")));
                            let old = regs.get(&dst).cloned().unwrap_or_else(|| "64'd0".into());
                            let old = self.read(&old);
                            self.declare(&name, 64);
                            let _ = writeln!(
                                self.body,
                                "  ehdl_stack_load #(.SIZE({size}), .SIGNED({})) u_{name} (.en_i({en}), \
                                 .bytes_i({bytes}), .old_i({old}), .res_o({name}));  // {}",
                                signed as u8, op.text
                            );
                            regs.insert(dst, name.clone());
                        }
                        Label::Context {
                            offset: Some(0 | 8),
                        } if size == 4 => {
                            alu(
                                self,
                                dst,
                                alu_params(11, true, 0),
                                "64'd0".into(),
                                hex64(DATA_BASE),
                            )?;
                        }
                        Label::Context {
                            offset: Some(f @ (4 | 12 | 16)),
                        } if size == 4 => {
                            let Some(field) = b.ctx.get(&f).cloned() else {
                                return Err(self.internal(
                                    Some(op),
                                    format!("ctx+{f} not carried to stage {k}"),
                                ));
                            };
                            let value = if f == 4 {
                                format!("{} + {{{}'d0, {field}}}", hex64(DATA_BASE), 64 - LEN_BITS)
                            } else {
                                format!("{{32'd0, {field}}}")
                            };
                            let value = self.read(&value);
                            alu(self, dst, alu_params(11, true, 0), "64'd0".into(), value)?;
                        }
                        Label::Context { offset: Some(20) } if size == 4 => {
                            // egress_ifindex is 0 before a redirect, as in the reference machine.
                            alu(
                                self,
                                dst,
                                alu_params(11, true, 0),
                                "64'd0".into(),
                                "64'd0".into(),
                            )?;
                        }
                        l => return Err(self.unsupported(op, format!("a load from {}", l.name()))),
                    }
                }
                (
                    OpKind::Store,
                    InsnKind::Store {
                        size,
                        src: s,
                        base,
                        off: moff,
                    },
                ) => {
                    let size = size.bytes() as i64;
                    match op.label {
                        Label::MapValue { .. } | Label::Unknown => {
                            let en = self.pred_signal(&preds, op.pred, op)?;
                            let ptr = reg(self, base);
                            let val = src(self, s);
                            self.map_port(op, &name, &en, ptr, moff, size as u32, Some(val), 0)?;
                        }
                        Label::Packet { offset } if offset.is_none() || op.data_shift.is_none() => {
                            let en = self.pred_signal(&preds, op.pred, op)?;
                            let ptr = offset.is_none().then(|| reg(self, base));
                            let rel = packet_rel(offset, ptr, moff);
                            let val = src(self, s);
                            let shift = self.run_time_shift(&ctx);
                            let (addr, fidx, nf) =
                                self.dyn_frames(op, &name, rel, shift, "fidx")?;
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
                            misses.push(miss);
                        }
                        Label::Packet { offset: Some(o) } => {
                            let en = self.pred_signal(&preds, op.pred, op)?;
                            let val = src(self, s);
                            let (o, shifted) = self.static_position(op, o, &en, &ctx)?;
                            misses.extend(shifted);
                            if o < 0 {
                                let ext = ctx.get(&HEAD_EXT).cloned().unwrap_or_default();
                                let a = HeadAccess {
                                    op,
                                    name: &name,
                                    en: &en,
                                    at: o,
                                    size,
                                };
                                let nx = self.head_store(a, &val, &ext)?;
                                ctx.insert(HEAD_EXT, nx);
                                continue;
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
                            for (suffix, w) in [("ld", dwm), ("lm", fbm), ("hd", dwm), ("hm", fbm)]
                            {
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
                        }
                        Label::Stack { offset: Some(o) } => {
                            if !(0..size).any(|i| live_next_byte(o + i)) {
                                continue;
                            }
                            let en = self.pred_signal(&preds, op.pred, op)?;
                            let val = src(self, s);
                            let old: Vec<String> = (0..size)
                                .rev()
                                .map(|i| {
                                    stack
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
                                stack.insert(o + i, byte);
                            }
                        }
                        l => return Err(self.unsupported(op, format!("a store to {}", l.name()))),
                    }
                }
                (
                    OpKind::Cond,
                    InsnKind::Branch {
                        wide,
                        cond,
                        dst,
                        src: s,
                        ..
                    },
                ) => {
                    let en = self.pred_signal(&preds, op.pred, op)?;
                    let (a, bb) = (reg(self, dst), src(self, s));
                    let c = format!("s{k}_c{}", op.id);
                    self.declare(&c, 1);
                    let _ = writeln!(
                        self.body,
                        "  ehdl_cond #(.COND({}), .WIDE({})) u_{c} (.en_i({en}), .a_i({a}), .b_i({bb}), .taken_o({c}));  // {}",
                        cond.bits() >> 4,
                        wide as u8,
                        op.text
                    );
                    conds.insert(op.id, c);
                }
                (
                    OpKind::LenCheck {
                        ensured,
                        meta,
                        taken_if_short,
                    },
                    _,
                ) => {
                    let en = self.pred_signal(&preds, op.pred, op)?;
                    let short = if *meta {
                        // No metadata area: its length is 0.
                        if 0 < *ensured {
                            "1'b1".to_string()
                        } else {
                            "1'b0".to_string()
                        }
                    } else if *ensured <= 0 {
                        "1'b0".into()
                    } else if *ensured >= 1 << LEN_BITS {
                        "1'b1".into()
                    } else if let Some(l) = self.adjusted_len(k, &b) {
                        format!("({l} < {LEN_BITS}'d{ensured})")
                    } else {
                        let Some((l, _)) = &len_now else {
                            return Err(
                                self.internal(Some(op), format!("no packet length at stage {k}"))
                            );
                        };
                        let l = self.read(l);
                        format!("({l} < {LEN_BITS}'d{ensured})")
                    };
                    let c = format!("s{k}_c{}", op.id);
                    self.declare(&c, 1);
                    let pol = if *taken_if_short { "" } else { "~" };
                    let _ = writeln!(
                        self.body,
                        "  assign {c} = {en} & {pol}{short};  // {}",
                        op.text
                    );
                    conds.insert(op.id, c);
                }
                (OpKind::Exit { reg: r, imm }, _) => {
                    let en = self.pred_signal(&preds, op.pred, op)?;
                    let val = match imm {
                        Some(v) => hex64(*v as u64),
                        None => reg(self, *r),
                    };
                    let old = verdict.clone().unwrap_or_else(|| "32'd0".into());
                    let old = self.read(&old);
                    let v = format!("{name}_verdict");
                    self.declare(&v, 32);
                    let _ = writeln!(
                        self.body,
                        "  ehdl_exit u_{name} (.en_i({en}), .val_i({val}), .old_i({old}), .verdict_o({v}));  // {}",
                        op.text
                    );
                    verdict = Some(v);
                }
                (OpKind::Helper { .. }, _) => {
                    let mut cx = Call {
                        op,
                        name: &name,
                        preds: &preds,
                        b: &b,
                        regs: &mut regs,
                        stack: &mut stack,
                        ctx: &mut ctx,
                        redirect: &mut redirect,
                        next,
                    };
                    self.helper(&mut cx)?;
                }
                (
                    OpKind::Atomic,
                    InsnKind::Atomic {
                        size,
                        op: aop,
                        base,
                        off: moff,
                        src: sr,
                    },
                ) => {
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
                        AtomicOp::Cmpxchg => {
                            return Err(self.unsupported(op, "compare-and-exchange"))
                        }
                    };
                    if !matches!(op.label, Label::MapValue { .. } | Label::Unknown) {
                        return Err(self.unsupported(
                            op,
                            format!("an atomic operation on {}", op.label.name()),
                        ));
                    }
                    let size = size.bytes();
                    let en = self.pred_signal(&preds, op.pred, op)?;
                    let ptr = reg(self, base);
                    let val = reg(self, sr);
                    let rd = self.map_port(op, &name, &en, ptr, moff, size, Some(val), code)?;
                    if fetch && live_next_reg(sr) {
                        // The old value goes to the source register (zero-extended for 32-bit atomics).
                        let old = regs.get(&sr).cloned().unwrap_or_else(|| "64'd0".into());
                        let old = self.read(&old);
                        let res = format!("{name}_fetch");
                        self.declare(&res, 64);
                        let rd = self.read(&rd);
                        let _ = writeln!(
                            self.body,
                            "  ehdl_stack_load #(.SIZE({size}), .SIGNED(0)) u_{res} (.en_i({en}), .bytes_i({rd}), \
                             .old_i({old}), .res_o({res}));  // {}",
                            op.text
                        );
                        regs.insert(sr, res);
                    }
                }
                (k, i) => return Err(self.unsupported(op, format!("{k:?} ({i:?})"))),
            }
        }
        misses.append(&mut self.faults);
        let fault = if misses.is_empty() {
            None
        } else {
            let f = format!("s{k}_fault");
            self.declare(&f, 1);
            let e = self.read(&misses.join(" | "));
            let _ = writeln!(self.body, "  assign {f} = {e};");
            Some(f)
        };
        let b = Bound { ctx, ..b };
        self.boundary(
            k,
            &preds,
            &b,
            regs,
            stack,
            conds,
            (verdict, fault, redirect),
            len_now,
        )
    }

    /// One access to a map value: a port on the block of every map the pointer may name (one, or every looked-up
    /// ARRAY map when the region analysis could not place it), selected by the pointer's high half. `wdata` is the
    /// value to write (`None`: a load), `code` the block's operation. Returns the wire with the `size` bytes read.
    #[allow(clippy::too_many_arguments)]
    fn map_port(
        &mut self,
        op: &Op,
        name: &str,
        en: &str,
        ptr: String,
        off: i16,
        size: u32,
        wdata: Option<String>,
        code: u8,
    ) -> Result<String, VerilogError> {
        let cands: Vec<u32> = match op.label {
            Label::MapValue { map, .. } if self.arrays.contains(&map) => vec![map],
            Label::MapValue { map, .. } => {
                let m = self.maps.get(map as usize).map_or("?", |s| s.name.as_str());
                return Err(self.unsupported(
                    op,
                    format!("a value of map {m}, which is not an ARRAY map the program looks up"),
                ));
            }
            _ if self.arrays.is_empty() => {
                return Err(
                    self.unsupported(op, "a memory access the region analysis could not place")
                );
            }
            _ => self.arrays.iter().copied().collect(),
        };
        let p = format!("{name}_ptr");
        self.declare(&p, 64);
        let _ = writeln!(
            self.body,
            "  assign {p} = {ptr} + {};",
            hex64(off as i64 as u64)
        );
        self.read(&ptr);
        self.unused_ports.push(p.clone());
        let rd = format!("{name}_rd");
        self.declare(&rd, 8 * size);
        let mut reads = Vec::new();
        let mask = if size == 8 { 0xff } else { (1u32 << size) - 1 };
        for m in cands {
            let (_, aw) = geometry(&self.maps[m as usize]);
            let sel = format!("{name}_sel{m}");
            self.declare(&sel, 1);
            let _ = writeln!(self.body, "  assign {sel} = ({p}[63:32] == 32'd{});", m + 1);
            let rdm = format!("{name}_rd{m}");
            self.declare(&rdm, 64);
            self.unused_ports.push(rdm.clone());
            reads.push(format!(
                "({sel} ? {rdm}[{}:0] : {}'d0)",
                8 * size - 1,
                8 * size
            ));
            let (we, wd, wm) = match &wdata {
                Some(v) => (
                    format!("{} & {en} & {sel}", self.go(op.stage)),
                    v.clone(),
                    format!("8'h{mask:02x}"),
                ),
                None => ("1'b0".to_string(), "64'd0".to_string(), "8'h00".to_string()),
            };
            self.read(&we);
            self.read(&wd);
            self.map_ports.entry(m).or_default().push(MapPort {
                stage: op.stage,
                insn: op.insn,
                we,
                op: code,
                addr: format!("{p}[{}:0]", aw - 1),
                wdata: wd,
                wmask: wm,
                rdata: rdm,
            });
        }
        let expr = self.read(&reads.join(" | "));
        let _ = writeln!(self.body, "  assign {rd} = {expr};  // {}", op.text);
        if op.label == Label::Unknown {
            // An unplaced access whose pointer names no map block aborts the packet rather than touching nothing.
            let sels: Vec<String> = self
                .arrays
                .iter()
                .map(|m| format!("{name}_sel{m}"))
                .collect();
            let nomap = format!("{name}_nomap");
            self.declare(&nomap, 1);
            let e = self.read(&format!("{en} & ~({})", sels.join(" | ")));
            let _ = writeln!(self.body, "  assign {nomap} = {e};");
            self.faults.push(nomap);
        }
        let checked = self.stalls.iter().any(|st| st.early == op.id)
            || self
                .flushes
                .iter()
                .any(|st| st.early == op.id || st.late == op.id);
        if checked {
            self.early.insert(op.id, (p.clone(), en.to_string()));
        }
        Ok(rd)
    }

    /// For a packet access at a run-time offset: the byte address wire (from the pointer register, relative to
    /// `data`), the vector of the frame registers' `sig` ("data" or "fidx") for the frames the stage can see (frame
    /// 0 lowest), and how many frames that is.
    fn dyn_frames(
        &mut self,
        op: &Op,
        name: &str,
        rel: String,
        shift: Option<String>,
        sig: &str,
    ) -> Result<(String, String, u32), VerilogError> {
        let (vec, nf) = self.frame_vector(op, sig)?;
        let addr = format!("{name}_addr");
        self.declare(&addr, 16);
        let rel = self.read(&rel);
        let wide = format!("{name}_off");
        self.declare(&wide, 64);
        // After bpf_xdp_adjust_head the frames are where the bytes arrived: add the carried shift. A position before
        // the first arrived byte wraps far past the frames and misses.
        let shifted = shift.map_or_else(String::new, |s| format!(" + {}", shift64(&s)));
        let _ = writeln!(
            self.body,
            "  assign {wide} = {rel}{shifted};\n  assign {addr} = {wide}[15:0];"
        );
        self.unused_ports.push(wide);
        self.read(&addr);
        Ok((addr, vec, nf))
    }

    /// For an access at a run-time packet offset by `op`: the vector of the frame registers' `sig` ("data" or
    /// "fidx") for the frames its stage can see (frame 0 lowest), and how many frames that is.
    pub(super) fn frame_vector(
        &mut self,
        op: &Op,
        sig: &str,
    ) -> Result<(String, u32), VerilogError> {
        let k = op.stage;
        // The frames a header parser reaches: the first 256 bytes (or one frame), as far as they have arrived.
        let nf = (k + 1).min((256 / self.fb as u32).max(1));
        let parts: Vec<String> = (0..nf).rev().map(|f| format!("f{}_{sig}", k - f)).collect();
        let vec = self.read(&format!("{{{}}}", parts.join(", ")));
        Ok((vec, nf))
    }

    /// The stall checks (see `maps`): a valid bit per boundary, one wire per check, and `go`.
    fn stall_logic(&mut self, n: u32) {
        if self.stalls.is_empty() {
            return;
        }
        let mut s = String::from(
            "\n  // ---- stall checks between map accesses packets could reorder ----\n",
        );
        // Which boundaries hold a packet (the predicates are not carried everywhere).
        for j in 1..=n {
            let v = format!("b{j}_v_q");
            self.declare(&v, 1);
            let prev = if j == 1 {
                "b0_valid_q".to_string()
            } else {
                format!("b{}_v_q", j - 1)
            };
            self.read(&prev);
            let _ = writeln!(
                s,
                "  always_ff @(posedge clk_i or negedge rst_ni) begin\n    if (!rst_ni) begin\n      {v} <= 1'b0;\n    \
                 end else if (go[{j}]) begin\n      {v} <= {prev} & go[{}];\n    end\n  end",
                j - 1
            );
        }
        let mut holds: Vec<(u32, String)> = Vec::new();
        let stalls: Vec<(u32, u32, u32, u32)> = self
            .stalls
            .iter()
            .map(|t| (t.early, t.late, t.e, t.l))
            .collect();
        for (i, (early, late, e, l)) in stalls.into_iter().enumerate() {
            let Some((ptr, en)) = self.early.get(&early).cloned() else {
                continue; // the early access was dead (a load whose result nothing reads): nothing to order
            };
            let late_op = &self.p.ops[late as usize];
            // The late access's address, when both are memory ops with pointers (else any older packet waits it).
            let late_addr = match hwxdp_ebpf::kind(&self.p.insns[late_op.insn as usize]) {
                Ok(
                    InsnKind::Load { base, off, .. }
                    | InsnKind::Store { base, off, .. }
                    | InsnKind::Atomic { base, off, .. },
                ) if !ptr.is_empty() => Some((base, off)),
                _ => None,
            };
            let mut terms = Vec::new();
            for j in e + 1..l {
                let v = self.read(&format!("b{j}_v_q"));
                let late_reg = late_addr.and_then(|(base, off)| {
                    self.late_base(base, j, l).map(|(r, c)| (r, off as i64 + c))
                });
                match late_reg {
                    Some((r, off)) => {
                        // The same 8 bytes, give or take: |early - late| < 8.
                        let d = format!("stall{i}_d{j}");
                        self.declare(&d, 64);
                        let r = self.read(&r);
                        let _ =
                            writeln!(s, "  assign {d} = {ptr} - ({r} + {});", hex64(off as u64));
                        self.read(&ptr);
                        terms.push(format!("({v} & (({d} + 64'd7) < 64'd15))"));
                        self.read(&d);
                    }
                    None => match self
                        .same_flow(i, early, late, (j, l), &mut s)
                        .or_else(|| self.same_slot(i, early, late, j, &mut s))
                    {
                        Some(same) => terms.push(format!("({v} & {same})")),
                        None => terms.push(v),
                    },
                }
            }
            if terms.is_empty() {
                continue;
            }
            let w = format!("stall{i}");
            self.declare(&w, 1);
            let en = self.read(&en);
            let _ = writeln!(
                s,
                "  // {} (stage {e}) waits for older packets' {} (stage {l}).\n  assign {w} = {en} & ({});",
                self.p.ops[early as usize].text,
                late_op.text,
                terms.join(" | ")
            );
            holds.push((e, w));
        }
        self.busy_holds(&mut holds, &mut s);
        for st in 0..=n {
            let h: Vec<&str> = holds
                .iter()
                .filter(|(e, _)| *e >= st)
                .map(|(_, w)| w.as_str())
                .collect();
            if h.is_empty() {
                let _ = writeln!(s, "  assign go[{st}] = adv;");
            } else {
                let _ = writeln!(s, "  assign go[{st}] = adv & ~({});", h.join(" | "));
            }
        }
        self.body += &s;
    }

    /// Frame register position, offset in the frame and whether the access crosses into the next frame, for a
    /// packet access at position `o` (from the first arrived byte) of `size` bytes by `op`.
    fn packet_at(&self, op: &Op, o: i64, size: i64) -> Result<(u32, i64, bool), VerilogError> {
        if o < 0 {
            return Err(self.unsupported(op, "a packet access before data"));
        }
        let (f0, f1) = (o / self.fb, (o + size - 1) / self.fb);
        if f1 >= (1 << FIDX_BITS) - 1 {
            return Err(self.unsupported(op, format!("a packet access in frame {f1}")));
        }
        if f1 > op.stage as i64 {
            return Err(self.internal(Some(op), format!("frame {f1} needed at stage {}", op.stage)));
        }
        Ok(((op.stage as i64 - f0) as u32, o % self.fb, f1 > f0))
    }

    /// Registers boundary `k + 1` from stage `k`'s results.
    #[allow(clippy::too_many_arguments)]
    fn boundary(
        &mut self,
        k: u32,
        preds: &BTreeMap<u32, String>,
        b: &Bound,
        regs: BTreeMap<u8, String>,
        stack: BTreeMap<i64, String>,
        conds: BTreeMap<u32, String>,
        (verdict, fault, redirect): (Option<String>, Option<String>, Option<String>),
        len_now: Option<(String, String)>,
    ) -> Result<Bound, VerilogError> {
        let j = k + 1;
        let next = self.p.stages.get(j as usize);
        let mut out = Bound::default();
        let mut list: Vec<Reg> = Vec::new();
        if let Some(ns) = next {
            for r in ns.live_regs.iter().filter(|&r| r != 10) {
                let d = regs.get(&r).cloned().unwrap_or_else(|| "64'd0".into());
                let name = format!("b{j}_r{r}_q");
                list.push(Reg {
                    name: name.clone(),
                    width: 64,
                    d,
                    reset: false,
                });
                out.regs.insert(r, name);
            }
            for (lo, hi) in ns.live_stack.runs() {
                for o in lo..hi {
                    let d = stack.get(&o).cloned().unwrap_or_else(|| "8'd0".into());
                    let name = format!("b{j}_s{}_q", o + 512);
                    list.push(Reg {
                        name: name.clone(),
                        width: 8,
                        d,
                        reset: false,
                    });
                    out.stack.insert(o, name);
                }
            }
            for &pid in &ns.live_preds {
                if self.p.preds[pid as usize].ready >= j {
                    continue; // formed in stage j from the conditions carried to it
                }
                let Some(d) = preds.get(&pid).cloned() else {
                    return Err(self.internal(
                        None,
                        format!("p{pid} is live at boundary {j} but not formed"),
                    ));
                };
                let name = format!("b{j}_p{pid}_q");
                list.push(Reg {
                    name: name.clone(),
                    width: 1,
                    d,
                    reset: true,
                });
                out.preds.insert(pid, name);
            }
            for &c in &ns.live_conds {
                let Some(d) = conds.get(&c).or_else(|| b.conds.get(&c)).cloned() else {
                    return Err(self.internal(
                        None,
                        format!("c{c} is live at boundary {j} but not computed"),
                    ));
                };
                let name = format!("b{j}_c{c}_q");
                list.push(Reg {
                    name: name.clone(),
                    width: 1,
                    d,
                    reset: true,
                });
                out.conds.insert(c, name);
            }
            if let (Some(last), Some((l, e))) = (self.last_len, &len_now) {
                if j <= last {
                    let (ln, en) = (format!("b{j}_len_q"), format!("b{j}_ended_q"));
                    list.push(Reg {
                        name: ln.clone(),
                        width: LEN_BITS,
                        d: l.clone(),
                        reset: false,
                    });
                    list.push(Reg {
                        name: en.clone(),
                        width: 1,
                        d: e.clone(),
                        reset: false,
                    });
                    out.len = Some((ln, en));
                }
            }
        }
        // Sideband fields, to the last boundary when the output needs the packet's length.
        for (&f, &last) in &self.ctx_last {
            if j <= last {
                let Some(d) = b.ctx.get(&f).cloned() else {
                    return Err(self.internal(None, format!("ctx+{f} lost before boundary {j}")));
                };
                let name = format!("b{j}_{}_q", ctx_tag(f));
                list.push(Reg {
                    name: name.clone(),
                    width: ctx_width(f),
                    d,
                    reset: false,
                });
                out.ctx.insert(f, name);
            }
        }
        // The head state (verilog/head.rs), registered once an adjustment made it a signal.
        for (f, tag) in [(HEAD_SHIFT, "shift"), (HEAD_EXT, "ext")] {
            let Some(d) = b.ctx.get(&f).cloned() else {
                continue;
            };
            if !is_signal(&d) {
                out.ctx.insert(f, d);
                continue;
            }
            let width = if f == HEAD_SHIFT {
                LEN_BITS
            } else {
                8 * self.head_ext.unwrap_or(0)
            };
            let name = format!("b{j}_{tag}_q");
            list.push(Reg {
                name: name.clone(),
                width,
                d,
                reset: false,
            });
            out.ctx.insert(f, name);
        }
        if let Some(f) = fault {
            let name = format!("b{j}_fault_q");
            list.push(Reg {
                name: name.clone(),
                width: 1,
                d: f,
                reset: true,
            });
            out.fault = Some(name);
        }
        if let Some(r) = redirect {
            let name = format!("b{j}_redirect_q");
            list.push(Reg {
                name: name.clone(),
                width: 42,
                d: r,
                reset: false,
            });
            out.redirect = Some(name);
        }
        if let Some(v) = verdict {
            let name = format!("b{j}_verdict_q");
            list.push(Reg {
                name: name.clone(),
                width: 32,
                d: v,
                reset: false,
            });
            out.verdict = Some(name);
        }
        let _ = writeln!(
            self.body,
            "  // boundary {j}: {} bits",
            list.iter().map(|r| r.width as u64).sum::<u64>()
        );
        for r in &list {
            self.declare(&r.name, r.width);
            self.read(&r.d);
            self.state_flops += r.width as u64;
        }
        let resets: Vec<&Reg> = list.iter().filter(|r| r.reset).collect();
        if !resets.is_empty() {
            self.body +=
                "  always_ff @(posedge clk_i or negedge rst_ni) begin\n    if (!rst_ni) begin\n";
            for r in &resets {
                let _ = writeln!(self.body, "      {} <= 1'b0;", r.name);
            }
            let _ = writeln!(self.body, "    end else if ({}) begin", self.go(j));
            // With stall checks, stage k's results enter boundary k + 1 only if stage k moves too (else a bubble).
            let bubble = if self.stalls.is_empty() {
                String::new()
            } else {
                format!(" & {}", self.go(k))
            } + self.kill(k);
            for r in &resets {
                let _ = writeln!(self.body, "      {} <= {}{bubble};", r.name, r.d);
            }
            self.body += "    end\n  end\n";
        }
        let data: Vec<&Reg> = list.iter().filter(|r| !r.reset).collect();
        if !data.is_empty() {
            let _ = writeln!(
                self.body,
                "  always_ff @(posedge clk_i) begin\n    if ({}) begin",
                self.go(j)
            );
            for r in &data {
                let _ = writeln!(self.body, "      {} <= {};", r.name, r.d);
            }
            self.body += "    end\n  end\n";
        }
        Ok(out)
    }

    /// The input control, the frame chain with the stores' write ports, and the output with its verdict.
    fn ports(&mut self, n: u32, last: &Bound) {
        let dw = self.p.summary.data_width;
        let fb = dw / 8;
        let mut s = String::new();
        // With flush and replay the pipeline takes its beats from the input buffer, which keeps them until they
        // are past the flush stage (verilog/flush.rs); otherwise straight from s_axis.
        let (iv, il, idata, ikeep, iuser) = if self.flush_stage.is_some() {
            ("rp_valid", "rp_last", "rp_data", "rp_keep", "rp_user")
        } else {
            (
                "s_axis_tvalid_i",
                "s_axis_tlast_i",
                "s_axis_tdata_i",
                "s_axis_tkeep_i",
                "s_axis_tuser_i",
            )
        };
        let (ready, unflushed, flushed) = match self.flush_stage {
            Some(l) => {
                self.replay(&mut s, l);
                ("rp_s_ready".to_string(), " & ~flush", "\n      if (flush) begin\n        in_pkt_q  <= 1'b0;\n        in_fidx_q <= '0;\n      end else")
            }
            None => ("out_space".to_string(), "", "\n     "),
        };
        let _ = write!(
            s,
            "\n  // ---- stream ports and frame chain ----\n\
             \x20 // Everything moves while the output FIFO has space; a packet's frames stay adjacent, so a missing\n\
             \x20 // beat inside a packet holds the pipeline, and between packets it is a bubble.\n\
             \x20 assign s_axis_tready_o = {ready}{head}{hold0};\n\
             \x20 assign adv = out_space{head} & ({iv} | ~in_pkt_q);\n\
             \x20 always_ff @(posedge clk_i or negedge rst_ni) begin\n\
             \x20   if (!rst_ni) begin\n\
             \x20     in_pkt_q   <= 1'b0;\n\
             \x20     in_fidx_q  <= '0;\n\
             \x20     b0_valid_q <= 1'b0;\n\
             \x20   end else if ({go0}) begin\n\
             \x20     b0_valid_q <= {iv} & ~in_pkt_q{unflushed};{flushed} if ({iv}) begin\n\
             \x20       in_pkt_q  <= ~{il};\n\
             \x20       in_fidx_q <= {il} ? '0 : (&in_fidx_q ? in_fidx_q : in_fidx_q + 1'b1);\n\
             \x20     end\n\
             \x20   end\n\
             \x20 end\n",
            hold0 = if self.stalls.is_empty() { "" } else { " & go[0]" },
            head = if self.head_ext.is_some() {
                " & ~head_hold"
            } else {
                ""
            },
            go0 = self.go(0),
        );
        // The sideband of the first beat: {time_valid, time, rx_queue_index, ingress_ifindex, length}.
        let mut captured = Vec::new();
        for (f, lo) in [
            (4i64, 0u32),
            (12, LEN_BITS),
            (16, LEN_BITS + 32),
            (SIDEBAND_TIME, LEN_BITS + 64),
        ] {
            let bits = format!("{iuser}[{}:{lo}]", lo + ctx_width(f) - 1);
            if self.ctx_last.contains_key(&f) {
                captured.push(format!("      b0_{}_q <= {bits};", ctx_tag(f)));
            } else {
                self.unused_ports.push(bits);
            }
        }
        if !captured.is_empty() {
            let _ = write!(
                s,
                "  always_ff @(posedge clk_i) begin\n    if ({} & {iv} & ~in_pkt_q) begin\n{}\n    end\n  end\n",
                self.go(0),
                captured.join("\n")
            );
        }
        for j in 0..n {
            let w = self.writes.remove(&j).unwrap_or_default();
            let (data, mask) = if w.is_empty() {
                ("'0".to_string(), "'0".to_string())
            } else {
                (
                    w.iter()
                        .map(|x| x.0.clone())
                        .collect::<Vec<_>>()
                        .join(" | "),
                    w.iter()
                        .map(|x| x.1.clone())
                        .collect::<Vec<_>>()
                        .join(" | "),
                )
            };
            self.read(&data);
            self.read(&mask);
            let _ = writeln!(
                self.decls,
                "  logic [{}:0] w{j}_data;\n  logic [{}:0] w{j}_mask;",
                dw - 1,
                fb - 1
            );
            let _ = writeln!(
                s,
                "  assign w{j}_data = {data};\n  assign w{j}_mask = {mask};"
            );
        }
        for j in 0..=n {
            for (sig, w) in [
                ("valid", 1),
                ("data", dw),
                ("keep", fb),
                ("last", 1),
                ("fidx", FIDX_BITS),
            ] {
                self.declare(&format!("f{j}_{sig}"), w);
            }
            let inputs = if j == 0 {
                format!(
                    "    .valid_i({iv}{unflushed}), .data_i({idata}), .keep_i({ikeep}),\n    \
                     .last_i({il}), .fidx_i(in_fidx_q), .wdata_i('0), .wmask_i('0),"
                )
            } else {
                let i = j - 1;
                for sig in ["valid", "data", "keep", "last", "fidx"] {
                    self.read(&format!("f{i}_{sig}"));
                }
                // A frame register whose predecessor holds receives a bubble.
                let mut valid = if self.stalls.is_empty() {
                    format!("f{i}_valid")
                } else {
                    format!("f{i}_valid & go[{i}]")
                };
                if !self.kill(i).is_empty() {
                    // A flush empties the frame registers of packets younger than the writer.
                    valid += &format!(" & ~(flush & young[{i}])");
                }
                format!(
                    "    .valid_i({valid}), .data_i(f{i}_data), .keep_i(f{i}_keep), .last_i(f{i}_last),\n    \
                     .fidx_i(f{i}_fidx), .wdata_i(w{i}_data), .wmask_i(w{i}_mask),"
                )
            };
            let _ = writeln!(
                s,
                "  ehdl_frame_stage #(.DW(DataWidth), .FW(FrameIdxBits)) u_frame{j} (\n    .clk_i(clk_i), .rst_ni(rst_ni), \
                 .adv_i({go}),\n{inputs}\n    .valid_o(f{j}_valid), .data_o(f{j}_data), .keep_o(f{j}_keep), \
                 .last_o(f{j}_last), .fidx_o(f{j}_fidx)\n  );",
                go = self.go(j)
            );
        }
        let mut verdict = last.verdict.clone().unwrap_or_else(|| "32'd0".into());
        if let Some(f) = &last.fault {
            // A packet whose run-time access missed its frames is aborted (XDP_ABORTED).
            verdict = format!("({f} ? 32'd0 : {verdict})");
        }
        for sig in ["valid", "data", "keep", "last", "fidx"] {
            self.read(&format!("f{n}_{sig}"));
        }
        let push0 = format!("{} & f{n}_valid", self.go(n));
        let (push, odata, okeep, olast) = match (first_tail_stage(self.p), last.ctx.get(&4)) {
            (Some(_), Some(l)) => self.trimmed_output(n, &l.clone(), &push0),
            _ => (
                push0,
                format!("f{n}_data"),
                format!("f{n}_keep"),
                format!("f{n}_last"),
            ),
        };
        let (push, odata, okeep, olast, ouser) = match self.head_ext {
            Some(_) => self.realigned_output(n, last, &push, &mut s),
            None => (push, odata, okeep, olast, "out_user".to_string()),
        };
        let redirect = last.redirect.clone().unwrap_or_else(|| "42'd0".into());
        let verdict = format!("{{{redirect}, {verdict}}}");
        self.read(&verdict);
        self.read("f0_keep");
        self.read("f0_last");
        let _ = write!(
            s,
            "\n  // The verdict and redirect travel with frame 0 (the head); the packet's later beats repeat them.\n\
             \x20 logic [73:0] verdict_hold_q;\n\
             \x20 always_ff @(posedge clk_i or negedge rst_ni) begin\n\
             \x20   if (!rst_ni) begin\n\
             \x20     verdict_hold_q <= 74'd0;\n\
             \x20   end else if ({gon} & f{n}_valid & (f{n}_fidx == '0)) begin\n\
             \x20     verdict_hold_q <= {verdict};\n\
             \x20   end\n\
             \x20 end\n\
             \x20 assign out_user = (f{n}_fidx == '0) ? {verdict} : verdict_hold_q;\n\
             \x20 ehdl_axis_out #(.DW(DataWidth), .UW(74)) u_out (\n\
             \x20   .clk_i(clk_i), .rst_ni(rst_ni), .push_i({push}), .data_i({odata}),\n\
             \x20   .keep_i({okeep}), .last_i({olast}), .user_i({ouser}), .space_o(out_space),\n\
             \x20   .m_axis_tvalid_o(m_axis_tvalid_o), .m_axis_tdata_o(m_axis_tdata_o), .m_axis_tkeep_o(m_axis_tkeep_o),\n\
             \x20   .m_axis_tlast_o(m_axis_tlast_o), .m_axis_tuser_o({{m_axis_tdest_o, m_axis_tuser_o}}),\n\
             \x20   .m_axis_tready_i(m_axis_tready_i)\n\
             \x20 );\n",
            gon = self.go(n)
        );
        self.body += &s;
    }
}
