//! The stream ports: the input control with the first beat's sideband, the frame chain with the stores' write
//! ports, and the output with the packet's verdict and redirect.

use super::adjust::first_tail_stage;
use super::stage::{ctx_tag, ctx_width, Bound, Gen, SIDEBAND_TIME};
use super::{FIDX_BITS, LEN_BITS};
use std::fmt::Write as _;

/// Where the pipeline takes its beats from: with flush and replay the input buffer, which keeps them until they
/// are past the flush stage (verilog/flush.rs); otherwise straight from s_axis.
struct Input {
    valid: &'static str,
    last: &'static str,
    data: &'static str,
    keep: &'static str,
    user: &'static str,
    /// What gates the first frame register's valid: a flush drops the beat being taken.
    unflushed: &'static str,
}

impl Gen<'_> {
    /// The input control, the frame chain with the stores' write ports, and the output with its verdict.
    pub(super) fn ports(&mut self, n: u32, last: &Bound) {
        let mut s = String::new();
        let input = self.input_control(&mut s);
        self.write_ports(n, &mut s);
        self.frame_chain(n, &input, &mut s);
        self.output(n, last, &mut s);
        self.body += &s;
    }

    /// The input control (`s_axis_tready_o`, `adv`, the packet's first beat into boundary 0) and the capture of
    /// the first beat's sideband; returns where the beats come from.
    fn input_control(&mut self, s: &mut String) -> Input {
        // With an elastic buffer the flush replays from it, and the input is straight from s_axis.
        let replays_input = self.flush_stage.is_some() && self.elastic().is_none();
        let input = if replays_input {
            Input {
                valid: "rp_valid",
                last: "rp_last",
                data: "rp_data",
                keep: "rp_keep",
                user: "rp_user",
                unflushed: " & ~flush",
            }
        } else {
            Input {
                valid: "s_axis_tvalid_i",
                last: "s_axis_tlast_i",
                data: "s_axis_tdata_i",
                keep: "s_axis_tkeep_i",
                user: "s_axis_tuser_i",
                unflushed: "",
            }
        };
        let (iv, il, iuser) = (input.valid, input.last, input.user);
        let (ready, flushed) = match self.flush_stage {
            Some(l) if replays_input => {
                self.replay(s, l);
                ("rp_s_ready".to_string(), "\n      if (flush) begin\n        in_pkt_q  <= 1'b0;\n        in_fidx_q <= '0;\n      end else")
            }
            _ => ("out_space".to_string(), "\n     "),
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
            hold0 = match self.go(0) {
                go if go == "adv" => String::new(),
                go => format!(" & {go}"),
            },
            head = if self.head_ext.is_some() {
                " & ~head_hold"
            } else {
                ""
            },
            go0 = self.go(0),
            unflushed = input.unflushed,
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
        input
    }

    /// The store bytes (data and mask) merged into each frame as it moves from frame register j to j + 1.
    fn write_ports(&mut self, n: u32, s: &mut String) {
        let dw = self.p.summary.data_width;
        let fb = dw / 8;
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
    }

    /// The frame registers `f0 .. fn`, each fed by the one before (the first by the input).
    fn frame_chain(&mut self, n: u32, input: &Input, s: &mut String) {
        let dw = self.p.summary.data_width;
        let fb = dw / 8;
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
                let Input {
                    valid,
                    last,
                    data,
                    keep,
                    unflushed,
                    ..
                } = input;
                format!(
                    "    .valid_i({valid}{unflushed}), .data_i({data}), .keep_i({keep}),\n    \
                     .last_i({last}), .fidx_i(in_fidx_q), .wdata_i('0), .wmask_i('0),"
                )
            } else if self.elastic() == Some(j) {
                let i = j - 1;
                for sig in ["valid", "keep", "last", "fidx"] {
                    self.read(&format!("f{i}_{sig}"));
                }
                // While the elastic buffer replays, its beats; else stage j - 1's, with its stores (eb_fdata).
                format!(
                    "    .valid_i(eb_replaying ? ~flush : f{i}_valid & go_front),\n    \
                     .data_i(eb_replaying ? eb_data : eb_fdata), .keep_i(eb_replaying ? eb_keep : f{i}_keep),\n    \
                     .last_i(eb_replaying ? eb_last : f{i}_last),\n    \
                     .fidx_i(eb_replaying ? eb_ruser[FrameIdxBits-1:0] : f{i}_fidx), .wdata_i('0), .wmask_i('0),"
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
                    valid += &format!(" & ~(flush & {})", self.young(i));
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
    }

    /// The output: the verdict and redirect with frame 0, kept for the packet's later beats, and the output FIFO
    /// fed from the last frame register (trimmed or realigned when a helper changed the packet's extent).
    fn output(&mut self, n: u32, last: &Bound, s: &mut String) {
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
            Some(_) => self.realigned_output(n, last, &push, s),
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
    }
}
