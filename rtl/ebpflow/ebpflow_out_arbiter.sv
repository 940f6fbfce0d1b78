`default_nettype none
// eBPFlow per-port output arbiter: the engines' outgoing packets onto one stream, round robin, whole packets.
//
// When no packet is open, the first engine at or after the round-robin pointer with tvalid high is chosen; from the
// cycle its first beat is offered until its last beat is taken, the choice holds (the offered beat stays put, as
// AXI4-Stream wants, and packets never interleave). After the last beat the pointer moves past that engine. tuser
// carries whatever the NIC puts beside a packet (the header and the action module's TX queues).
module ebpflow_out_arbiter #(
  parameter integer G  = 4,                       // engines of the port
  parameter integer UW = 128,                     // tuser bits
  parameter integer GW = (G > 1) ? $clog2(G) : 1  // engine index bits
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic [G*64-1:0] s_axis_tdata_i,
  input  logic [G*8-1:0]  s_axis_tkeep_i,
  input  logic [G-1:0]    s_axis_tvalid_i,
  output logic [G-1:0]    s_axis_tready_o,
  input  logic [G-1:0]    s_axis_tlast_i,
  input  logic [G*UW-1:0] s_axis_tuser_i,
  output logic [63:0]     m_axis_tdata_o,
  output logic [7:0]      m_axis_tkeep_o,
  output logic            m_axis_tvalid_o,
  input  logic            m_axis_tready_i,
  output logic            m_axis_tlast_o,
  output logic [UW-1:0]   m_axis_tuser_o,
  output logic [GW-1:0]   sel_o                   // the engine whose beat is offered
);

  logic [GW-1:0] rr_q;
  logic [GW-1:0] cur_q;
  logic          hold_q;   // a beat of cur_q's packet was offered and its last beat is not taken yet
  logic [GW-1:0] pick;
  logic          any;
  logic [GW:0]   idx;
  logic [GW-1:0] sel;

  always_comb begin
    pick = rr_q;
    any  = 1'b0;
    idx  = '0;
    for (int k = G - 1; k >= 0; k--) begin
      idx = {1'b0, rr_q} + k[GW:0];
      if (idx >= G[GW:0]) idx = idx - G[GW:0];
      if (s_axis_tvalid_i[idx[GW-1:0]]) begin
        pick = idx[GW-1:0];
        any  = 1'b1;
      end
    end
  end

  assign sel = hold_q ? cur_q : pick;

  // The chosen engine's beat: an AND-OR over the engines (a variable part-select becomes a shifter in Yosys).
  always_comb begin
    m_axis_tdata_o = '0;
    m_axis_tkeep_o = '0;
    m_axis_tlast_o = 1'b0;
    m_axis_tuser_o = '0;
    for (int g = 0; g < G; g++) begin
      if (sel == g[GW-1:0]) begin
        m_axis_tdata_o = m_axis_tdata_o | s_axis_tdata_i[g*64 +: 64];
        m_axis_tkeep_o = m_axis_tkeep_o | s_axis_tkeep_i[g*8 +: 8];
        m_axis_tlast_o = m_axis_tlast_o | s_axis_tlast_i[g];
        m_axis_tuser_o = m_axis_tuser_o | s_axis_tuser_i[g*UW +: UW];
      end
    end
  end

  assign m_axis_tvalid_o = (hold_q || any) && s_axis_tvalid_i[sel];
  assign sel_o           = sel;

  always_comb begin
    s_axis_tready_o      = '0;
    s_axis_tready_o[sel] = (hold_q || any) && m_axis_tready_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rr_q   <= '0;
      cur_q  <= '0;
      hold_q <= 1'b0;
    end else if (m_axis_tvalid_o) begin
      if (m_axis_tready_i && m_axis_tlast_o) begin
        hold_q <= 1'b0;
        rr_q   <= (sel == GW'(G - 1)) ? '0 : sel + 1'b1;
      end else begin
        hold_q <= 1'b1;
        cur_q  <= sel;
      end
    end
  end

endmodule
