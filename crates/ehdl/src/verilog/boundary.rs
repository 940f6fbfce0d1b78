//! The stage registers: boundary `k + 1` holds what stage `k` computed and later stages still need, as the IR's
//! live sets say, plus the packet state that travels with the head (sideband, head state, fault, redirect, verdict).

use super::head::{HEAD_EXT, HEAD_SHIFT};
use super::stage::{ctx_tag, ctx_width, is_signal, Bound, Gen, StageCx};
use super::{VerilogError, LEN_BITS};
use std::fmt::Write as _;

/// One register of a boundary: name, width, next value, and whether it is a control bit that resets to 0.
struct Reg {
    name: String,
    width: u32,
    d: String,
    reset: bool,
}

/// The registers of one boundary, in declaration order.
#[derive(Default)]
struct Regs(Vec<Reg>);

impl Regs {
    /// Adds register `name` with next value `d`; returns the name, which the next stage reads.
    fn add(&mut self, name: String, width: u32, d: String, reset: bool) -> String {
        self.0.push(Reg {
            name: name.clone(),
            width,
            d,
            reset,
        });
        name
    }
}

impl Gen<'_> {
    /// Registers boundary `k + 1` from the results of stage `k` (`cx`) and its fault wire, if any.
    pub(super) fn boundary(
        &mut self,
        cx: StageCx,
        fault: Option<String>,
    ) -> Result<Bound, VerilogError> {
        let mut out = Bound::default();
        let mut list = Regs::default();
        self.live_state(&cx, &mut list, &mut out)?;
        self.packet_state(&cx, fault, &mut list, &mut out)?;
        self.register_boundary(cx.k, &list.0);
        Ok(out)
    }

    /// The registers, stack bytes, predicates, conditions and packet length the next stage's live sets name.
    fn live_state(
        &self,
        cx: &StageCx,
        list: &mut Regs,
        out: &mut Bound,
    ) -> Result<(), VerilogError> {
        let j = cx.k + 1;
        let Some(ns) = self.p.stages.get(j as usize) else {
            return Ok(());
        };
        for r in ns.live_regs.iter().filter(|&r| r != 10) {
            let d = cx.regs.get(&r).cloned().unwrap_or_else(|| "64'd0".into());
            out.regs
                .insert(r, list.add(format!("b{j}_r{r}_q"), 64, d, false));
        }
        for (lo, hi) in ns.live_stack.runs() {
            for o in lo..hi {
                let d = cx.stack.get(&o).cloned().unwrap_or_else(|| "8'd0".into());
                out.stack
                    .insert(o, list.add(format!("b{j}_s{}_q", o + 512), 8, d, false));
            }
        }
        for &pid in &ns.live_preds {
            if self.p.preds[pid as usize].ready >= j {
                continue; // formed in stage j from the conditions carried to it
            }
            let Some(d) = cx.preds.get(&pid).cloned() else {
                return Err(self.internal(
                    None,
                    format!("p{pid} is live at boundary {j} but not formed"),
                ));
            };
            out.preds
                .insert(pid, list.add(format!("b{j}_p{pid}_q"), 1, d, true));
        }
        for &c in &ns.live_conds {
            let Some(d) = cx.conds.get(&c).or_else(|| cx.b.conds.get(&c)).cloned() else {
                return Err(self.internal(
                    None,
                    format!("c{c} is live at boundary {j} but not computed"),
                ));
            };
            out.conds
                .insert(c, list.add(format!("b{j}_c{c}_q"), 1, d, true));
        }
        if let (Some(last), Some((l, e))) = (self.last_len, &cx.len_now) {
            if j <= last {
                let ln = list.add(format!("b{j}_len_q"), LEN_BITS, l.clone(), false);
                let en = list.add(format!("b{j}_ended_q"), 1, e.clone(), false);
                out.len = Some((ln, en));
            }
        }
        Ok(())
    }

    /// The state that travels with the packet's head whatever the live sets say: sideband fields (to the last
    /// boundary when the output needs the packet's length), the head state, the fault, the redirect and the verdict.
    fn packet_state(
        &self,
        cx: &StageCx,
        fault: Option<String>,
        list: &mut Regs,
        out: &mut Bound,
    ) -> Result<(), VerilogError> {
        let j = cx.k + 1;
        for (&f, &last) in &self.ctx_last {
            if j <= last {
                let Some(d) = cx.ctx.get(&f).cloned() else {
                    return Err(self.internal(None, format!("ctx+{f} lost before boundary {j}")));
                };
                let name = format!("b{j}_{}_q", ctx_tag(f));
                out.ctx.insert(f, list.add(name, ctx_width(f), d, false));
            }
        }
        // The head state (verilog/head.rs), registered once an adjustment made it a signal.
        for (f, tag) in [(HEAD_SHIFT, "shift"), (HEAD_EXT, "ext")] {
            let Some(d) = cx.ctx.get(&f).cloned() else {
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
            out.ctx
                .insert(f, list.add(format!("b{j}_{tag}_q"), width, d, false));
        }
        if let Some(f) = fault {
            out.fault = Some(list.add(format!("b{j}_fault_q"), 1, f, true));
        }
        if let Some(r) = cx.redirect.clone() {
            out.redirect = Some(list.add(format!("b{j}_redirect_q"), 42, r, false));
        }
        if let Some(v) = cx.verdict.clone() {
            out.verdict = Some(list.add(format!("b{j}_verdict_q"), 32, v, false));
        }
        Ok(())
    }

    /// Declares the registers of boundary `k + 1` and emits their flip-flops: the control bits with a reset, the
    /// rest without.
    fn register_boundary(&mut self, k: u32, list: &[Reg]) {
        let j = k + 1;
        let _ = writeln!(
            self.body,
            "  // boundary {j}: {} bits",
            list.iter().map(|r| r.width as u64).sum::<u64>()
        );
        for r in list {
            self.declare(&r.name, r.width);
            self.read(&r.d);
            self.state_flops += r.width as u64;
        }
        if self.elastic() == Some(j) {
            self.elastic_boundary(list);
            return;
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
        for r in &data {
            let next = format!("{} ? {}'({}) : {}", self.go(j), r.width, r.d, r.name);
            self.next_vals.insert(r.name.clone(), next);
            let d = format!("{}'({})", r.width, r.d);
            self.next_split.insert(r.name.clone(), (self.go(j), d));
        }
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
    }
}

impl Gen<'_> {
    /// Boundary `B` behind the elastic buffer (see `verilog/flush.rs`): the buffer keeps each beat entering stage
    /// register `B`, its frame (with stage `B - 1`'s stores merged) and this boundary's next values. Empty, it
    /// passes the beat straight on; holding beats (a replay, or the beats queued behind one), frame register `B`
    /// and this boundary load from it in order while stage `B - 1`'s beats join the queue (the stages before `B`
    /// hold only when it is full, and in a flush cycle).
    fn elastic_boundary(&mut self, list: &[Reg]) {
        let (j, i) = (self.flush_base, self.flush_base - 1);
        let late = self.flush_stage.unwrap_or(j);
        let depth = self.declare_flush_wires(late - j);
        let bits: u32 = list.iter().map(|r| r.width).sum();
        // The user word: the boundary's registers (first one lowest) above the frame index.
        let uw = bits + super::FIDX_BITS;
        // Each next value at its register's width (an expression's own width may differ).
        let ds: Vec<String> = list
            .iter()
            .rev()
            .map(|r| format!("{}'({})", r.width, r.d))
            .collect();
        let state = if ds.is_empty() {
            String::new()
        } else {
            format!("{}, ", ds.join(", "))
        };
        for (name, width) in [
            ("eb_fdata", self.p.summary.data_width),
            ("eb_user", uw),
            ("eb_replaying", 1),
            ("eb_s_ready", 1),
            ("eb_data", self.p.summary.data_width),
            ("eb_keep", self.p.summary.data_width / 8),
            ("eb_last", 1),
            ("eb_ruser", uw),
            ("go_front", 1),
        ] {
            self.declare(name, width);
        }
        for w in [
            "eb_fdata",
            "eb_user",
            "eb_replaying",
            "eb_s_ready",
            "eb_data",
            "eb_keep",
            "eb_last",
            "eb_ruser",
            "go_front",
        ] {
            self.read(w);
        }
        for sig in ["valid", "data", "keep", "last", "fidx"] {
            self.read(&format!("f{i}_{sig}"));
        }
        self.read(&format!("w{i}_data"));
        self.read(&format!("w{i}_mask"));
        let _ = writeln!(
            self.body,
            "  // The elastic buffer: beats entering stage register {j} stay until they are past stage {late}; the \
             stages before it queue their beats behind a replay.\n  \
             always_comb begin\n    eb_fdata = f{i}_data;\n    \
             for (integer b = 0; b < DataWidth / 8; b = b + 1) begin\n      \
             if (w{i}_mask[b]) eb_fdata[8*b +: 8] = w{i}_data[8*b +: 8];\n    end\n  end\n  \
             assign eb_user = {{{state}f{i}_fidx}};\n  \
             assign go_front = adv & ~flush & eb_s_ready;\n  \
             ehdl_replay #(.DW(DataWidth), .UW({uw}), .DEPTH({depth}), .PW(ReplayPtrBits)) u_elastic (\n    \
             .clk_i(clk_i), .rst_ni(rst_ni), .s_valid_i(go_front & f{i}_valid), .s_data_i(eb_fdata),\n    \
             .s_keep_i(f{i}_keep), .s_last_i(f{i}_last), .s_user_i(eb_user), .s_ready_o(eb_s_ready),\n    \
             .valid_o(eb_replaying), .data_o(eb_data), .keep_o(eb_keep), .last_o(eb_last), .user_o(eb_ruser),\n    \
             .take_i(adv & ~flush), .pass_i(1'b1), .commit_i(replay_commit), .rewind_i(flush), \
             .rewind_n_i(flush_n)\n  );"
        );
        let mut lo = super::FIDX_BITS;
        let mut resets = Vec::new();
        let mut data = Vec::new();
        for r in list {
            let replayed = format!("eb_ruser[{}:{lo}]", lo + r.width - 1);
            lo += r.width;
            if r.reset {
                resets.push(format!(
                    "      {} <= eb_replaying ? {replayed} & ~flush : {} & go_front;",
                    r.name, r.d
                ));
            } else {
                data.push(format!(
                    "      {} <= eb_replaying ? {replayed} : {};",
                    r.name, r.d
                ));
            }
        }
        if !resets.is_empty() {
            let names: Vec<String> = list
                .iter()
                .filter(|r| r.reset)
                .map(|r| format!("      {} <= 1'b0;", r.name))
                .collect();
            let _ = writeln!(
                self.body,
                "  always_ff @(posedge clk_i or negedge rst_ni) begin\n    if (!rst_ni) begin\n{}\n    end else if \
                 (adv) begin\n{}\n    end\n  end",
                names.join("\n"),
                resets.join("\n")
            );
        }
        if !data.is_empty() {
            let _ = writeln!(
                self.body,
                "  always_ff @(posedge clk_i) begin\n    if (adv) begin\n{}\n    end\n  end",
                data.join("\n")
            );
        }
    }
}
