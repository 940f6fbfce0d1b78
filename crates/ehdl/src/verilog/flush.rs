//! Flush and replay (`Hazards::Flush`), the eHDL paper's answer to RAW hazards (section 4.1.2, appendix A), as an
//! alternative to the stall checks of `verilog/maps.rs`.
//!
//! No packet waits. Each check's early access (a value load at stage `e`) carries its address and enable through
//! boundaries `e + 1 .. L - 1`; when the late access (a store or atomic at stage `L`) of the packet at boundary `L`
//! touches the same 8 bytes as a younger packet's carried load (a *flush evaluation block*), every packet younger
//! than the writer is dropped from the pipeline (boundaries `1 .. L` receive bubbles, the frame registers below
//! `L` lose the younger packets' frames) and the input buffer (`ehdl_replay`) feeds their beats again. Replaying a
//! packet repeats what it did before the flush, so when an op with an effect beyond the packet (map writes, LRU
//! lookups, ring records, the free-running clock) sits before stage `L`, the flush restarts behind it instead: an
//! *elastic buffer* (the paper's appendix A.2) at boundary `B`, one past the last such effect and at most the
//! earliest check's first access, keeps every beat that enters stage register `B` (its frame and the boundary's
//! registers) until it is past stage `L`. A flush then empties registers `B .. L - 1` and the buffer feeds their
//! beats again, while the beats of the stages before `B` queue behind them, so the effects before `B` happen once.
//! Those stages run ahead of the ones after `B` while the buffer holds beats, so a stage at or after `B` may not
//! reach a frame register before `B`: such a program is refused.

use super::lru::is_lru;
use super::maps::Stall;
use super::stage::Gen;
use super::xdp_bytes::{XDP_LOAD_BYTES, XDP_STORE_BYTES};
use super::VerilogError;
use crate::ir::{Label, Op, OpKind, Pipeline};
use hwxdp_object::MapSpec;
use std::fmt::Write as _;

/// How the generated pipeline keeps the map accesses of packets in flight in program order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Hazards {
    /// Stall checks: a packet waits while an older one may still make a conflicting access (one cycle per stage
    /// of the check's window at worst).
    #[default]
    Stall,
    /// Flush evaluation and replay from an input buffer (the paper's design); programs with an effect beyond the
    /// packet before the late access are refused.
    Flush,
}

/// Whether `op` does something a replay would repeat outside the packet: writes a map value, updates, deletes,
/// outputs a ring record, marks an LRU entry or reads the free-running clock.
fn outside_effect(op: &Op, maps: &[MapSpec]) -> bool {
    match &op.kind {
        OpKind::Store | OpKind::Atomic => {
            matches!(op.label, Label::MapValue { .. } | Label::Unknown)
        }
        OpKind::Helper { id, .. } => {
            let map = op.map_arg().and_then(|m| maps.get(m as usize));
            matches!(*id, 2 | 3 | 130 | super::helpers::KTIME_GET_NS)
                || (*id == 1 && map.is_none_or(is_lru))
        }
        _ => false,
    }
}

/// What flush and replay watches and where it restarts.
pub(super) struct FlushPlan {
    /// The checks flush evaluation blocks watch.
    pub(super) checks: Vec<Stall>,
    /// The stage `L` of their late accesses.
    pub(super) late: u32,
    /// The boundary `B` a flush replays from: 0 for the input buffer, else the elastic buffer's.
    pub(super) base: u32,
}

/// The last frame of its packet `op` may reach: its known frames, or every frame a run-time offset can see at its
/// stage, or for a length check the frame in frame register 0 (the length adds up the frames as they arrive);
/// `None` when it reads no frame.
fn frame_reach(op: &Op, frame_bytes: u32) -> Option<u32> {
    if matches!(op.kind, OpKind::LenCheck { meta: false, .. }) {
        return Some(op.stage);
    }
    if let Some((_, last)) = op.frames {
        return Some(last);
    }
    let dynamic = matches!(op.label, Label::Packet { .. })
        || matches!(
            op.kind,
            OpKind::Helper {
                id: XDP_LOAD_BYTES | XDP_STORE_BYTES,
                ..
            }
        );
    dynamic.then(|| op.stage.min((256 / frame_bytes).max(1) - 1))
}

/// The checks to flush for, the stage `L` of their late accesses and the boundary a flush replays from; `None` when
/// there is no check. Refuses what flush and replay cannot keep in order.
pub(super) fn plan(
    p: &Pipeline,
    maps: &[MapSpec],
    checks: Vec<Stall>,
    moves_head: bool,
) -> Result<Option<FlushPlan>, VerilogError> {
    if checks.is_empty() {
        return Ok(None);
    }
    let refuse = |op: &Op, what: String| VerilogError::Unsupported {
        program: p.summary.program.clone(),
        origin: op.origin,
        text: op.text.clone(),
        what: format!("flush and replay (--hazards flush) {what}"),
    };
    let late_stage = checks.iter().map(|c| c.l).min().unwrap_or(0);
    for c in &checks {
        let (early, late) = (&p.ops[c.early as usize], &p.ops[c.late as usize]);
        if c.l == c.e || !matches!(early.kind, OpKind::Load) {
            return Err(refuse(
                early,
                format!(
                    "of a check whose first access is not a value load (its second: {})",
                    late.text
                ),
            ));
        }
        if !matches!(late.kind, OpKind::Store | OpKind::Atomic) {
            return Err(refuse(
                late,
                "of a check whose second access is not a store or atomic".into(),
            ));
        }
        if c.l != late_stage {
            return Err(refuse(
                late,
                format!(
                    "with checks ending at stages {late_stage} and {} (one flush stage only)",
                    c.l
                ),
            ));
        }
    }
    if moves_head {
        let op = &p.ops[checks[0].early as usize];
        return Err(refuse(
            op,
            format!(
                "in a program that calls {}",
                hwxdp_ebpf::helper_label(super::head::XDP_ADJUST_HEAD)
            ),
        ));
    }
    // The elastic buffer goes right after the last effect a replay must not repeat.
    let effect = p
        .ops
        .iter()
        .filter(|o| o.stage < late_stage && outside_effect(o, maps))
        .max_by_key(|o| o.stage);
    let base = effect.map_or(0, |o| o.stage + 1);
    if let Some(op) = effect {
        let first = checks
            .iter()
            .min_by_key(|c| c.e)
            .expect("checks is not empty");
        if first.e < base {
            return Err(refuse(
                op,
                format!(
                    "of an effect beyond the packet at stage {}, at or after the first access of a check (stage \
                     {}: {}), with no boundary between them for an elastic buffer",
                    op.stage, first.e, p.ops[first.early as usize].text
                ),
            ));
        }
        let fb = p.summary.data_width / 8;
        for o in p.ops.iter().filter(|o| o.stage >= base) {
            if let Some(f) = frame_reach(o, fb).filter(|&f| o.stage < base + f) {
                return Err(refuse(
                    o,
                    format!(
                        "of a packet access at stage {} reaching frame {f}, still before the elastic buffer at \
                         boundary {base} (after {})",
                        o.stage, op.text
                    ),
                ));
            }
        }
    }
    Ok(Some(FlushPlan {
        checks,
        late: late_stage,
        base,
    }))
}

/// Entries of a replay buffer: a power of two above the beats stage registers `B .. L - 1` hold (`span`, `L - B`),
/// with room for the input to run ahead.
fn replay_depth(span: u32) -> u32 {
    (span + 4).next_power_of_two()
}

impl Gen<'_> {
    /// The flush evaluation blocks, the flush signal, which frame registers a flush empties, how many beats it
    /// takes back, and the input buffer's commit.
    pub(super) fn flush_logic(&mut self) {
        let Some(late_stage) = self.flush_stage else {
            let _ = writeln!(self.body, "  assign flush_o = 1'b0;");
            return;
        };
        let mut s = String::from(
            "\n  // ---- flush evaluation and replay (see crates/ehdl/src/verilog/flush.rs) ----\n",
        );
        let mut hits = Vec::new();
        let checks: Vec<(u32, u32, u32)> = self
            .flushes
            .iter()
            .map(|c| (c.early, c.late, c.e))
            .collect();
        for (i, (early, late, e)) in checks.into_iter().enumerate() {
            let (Some((eptr, een)), Some((lptr, len))) = (
                self.early.get(&early).cloned(),
                self.early.get(&late).cloned(),
            ) else {
                continue; // a dead access: nothing to order
            };
            let mut terms = Vec::new();
            for j in e + 1..late_stage {
                let (a, v) = (format!("fl{i}_a{j}"), format!("fl{i}_v{j}"));
                self.declare(&a, 64);
                self.declare(&v, 1);
                self.state_flops += 65;
                let (pa, pv) = if j == e + 1 {
                    (self.read(&eptr), self.read(&een))
                } else {
                    (format!("fl{i}_a{}", j - 1), format!("fl{i}_v{}", j - 1))
                };
                let _ = writeln!(
                    s,
                    "  always_ff @(posedge clk_i) begin\n    if (adv) {a} <= {pa};\n  end\n  \
                     always_ff @(posedge clk_i or negedge rst_ni) begin\n    if (!rst_ni) {v} <= 1'b0;\n    \
                     else if (adv) {v} <= {pv} & ~flush;\n  end"
                );
                let d = format!("fl{i}_d{j}");
                self.declare(&d, 64);
                let _ = writeln!(s, "  assign {d} = {a} - {};", self.read(&lptr));
                terms.push(format!("({v} & {})", super::stalls::near(&d)));
                for w in [&a, &v, &d] {
                    self.read(w);
                }
            }
            if terms.is_empty() {
                continue;
            }
            let h = format!("fl{i}_hit");
            self.declare(&h, 1);
            let _ = writeln!(
                s,
                "  // {} (stage {e}) of a younger packet read what {} (stage {late_stage}) writes now.\n  \
                 assign {h} = {} & ({});",
                self.p.ops[early as usize].text,
                self.p.ops[late as usize].text,
                self.read(&len),
                terms.join(" | ")
            );
            hits.push(h);
        }
        let any = if hits.is_empty() {
            "1'b0".to_string()
        } else {
            hits.join(" | ")
        };
        self.read(&any);
        let _ = writeln!(
            s,
            "  assign flush = adv & ({any});\n  assign flush_o = flush;"
        );
        // Frame register q holds a younger packet's frame when a packet starts at q .. L - 1 (frames are adjacent).
        let (l, base) = (late_stage, self.flush_base);
        s += "  always_comb begin\n";
        for q in (base..l).rev() {
            let next = if q + 1 == l {
                String::new()
            } else {
                format!(" | {}", self.young(q + 1))
            };
            let _ = writeln!(
                s,
                "    {} = (f{q}_valid & (f{q}_fidx == '0)){next};",
                self.young(q)
            );
            self.read(&format!("f{q}_valid"));
            self.read(&format!("f{q}_fidx"));
        }
        s += "  end\n";
        let valids: Vec<String> = (base..l).rev().map(|q| format!("f{q}_valid")).collect();
        let _ = writeln!(
            s,
            "  assign killed = young & {{{}}};\n  always_comb begin\n    flush_n = '0;\n    \
             for (integer q = 0; q < {}; q = q + 1) flush_n = flush_n + ReplayPtrBits'(killed[q]);\n  end\n  \
             assign replay_commit = adv & f{}_valid & ~(flush & {});",
            valids.join(", "),
            l - base,
            l - 1,
            self.young(l - 1)
        );
        for w in ["young", "killed", "flush_n", "replay_commit", "flush"] {
            self.read(w);
        }
        self.body += &s;
    }

    /// The wires [`Gen::flush_logic`] assigns, for a replay buffer (the input's or an elastic one) behind `span`
    /// frame registers, and the buffer's pointer width `ReplayPtrBits`; returns the buffer's depth.
    pub(super) fn declare_flush_wires(&mut self, span: u32) -> u32 {
        let depth = replay_depth(span);
        let pw = depth.trailing_zeros() + 1;
        let _ = writeln!(self.decls, "  localparam integer ReplayPtrBits = {pw};");
        for (name, width) in [
            ("flush", 1),
            ("young", span),
            ("killed", span),
            ("flush_n", pw),
            ("replay_commit", 1),
        ] {
            self.declare(name, width);
        }
        depth
    }

    /// The input buffer between s_axis and the pipeline, and the flush wires the frame chain and the boundaries
    /// use (assigned by [`Gen::flush_logic`]).
    pub(super) fn replay(&mut self, s: &mut String, late_stage: u32) {
        let depth = self.declare_flush_wires(late_stage);
        let dw = self.p.summary.data_width;
        for (name, width) in [
            ("rp_valid", 1),
            ("rp_data", dw),
            ("rp_keep", dw / 8),
            ("rp_last", 1),
            ("rp_user", 145),
            ("rp_s_ready", 1),
        ] {
            self.declare(name, width);
        }
        for w in ["rp_valid", "rp_data", "rp_keep", "rp_last", "rp_s_ready"] {
            self.read(w);
        }
        let _ = writeln!(
            s,
            "\n  // The input buffer: beats stay until they are past stage {late_stage}, where a flush may send them again.\n  \
             ehdl_replay #(.DW(DataWidth), .UW(145), .DEPTH({depth}), .PW(ReplayPtrBits)) u_replay (\n    \
             .clk_i(clk_i), .rst_ni(rst_ni), .s_valid_i(s_axis_tvalid_i), .s_data_i(s_axis_tdata_i),\n    \
             .s_keep_i(s_axis_tkeep_i), .s_last_i(s_axis_tlast_i), .s_user_i(s_axis_tuser_i), .s_ready_o(rp_s_ready),\n    \
             .valid_o(rp_valid), .data_o(rp_data), .keep_o(rp_keep), .last_o(rp_last), .user_o(rp_user),\n    \
             .take_i(adv & ~flush), .pass_i(1'b0), .commit_i(replay_commit), .rewind_i(flush), .rewind_n_i(flush_n)\n  );"
        );
        // The sideband bits the stages do not read pass through the buffer unread.
        self.unused_ports.push("rp_user".into());
    }

    /// Whether frame register `q` (`B .. L - 1`) holds a frame of a packet younger than the one at stage `L`.
    pub(super) fn young(&self, q: u32) -> String {
        format!("young[{}]", q - self.flush_base)
    }

    /// The bubble mask of stage `k`'s results on their way into boundary `k + 1` when a flush empties it.
    pub(super) fn kill(&self, k: u32) -> &'static str {
        match self.flush_stage {
            Some(l) if k >= self.flush_base && k < l => " & ~flush",
            _ => "",
        }
    }
}
