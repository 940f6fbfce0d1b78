`default_nettype none
// eBPFlow per-port demux: whole packets from one RX port to the engines of that port, round robin over free engines.
//
// An engine is free when its s_axis_tready is high while no packet is open towards it (an idle engine takes a packet
// at once). At a packet's first beat the demux picks the first free engine at or after the round-robin pointer (the
// thesis's "if an engine cannot receive a packet, the register moves to the next engine"); the whole packet then goes
// to that engine, and after its last beat the pointer moves past it. With no free engine the port is back-pressured.
// Data, keep, last and user are broadcast to every engine; only the chosen one sees tvalid.
module ebpflow_demux #(
  parameter integer G  = 4,                       // engines of the port
  parameter integer UW = 128,                     // tuser bits
  parameter integer GW = (G > 1) ? $clog2(G) : 1  // engine index bits
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic [63:0]   s_axis_tdata_i,
  input  logic [7:0]    s_axis_tkeep_i,
  input  logic          s_axis_tvalid_i,
  output logic          s_axis_tready_o,
  input  logic          s_axis_tlast_i,
  input  logic [UW-1:0] s_axis_tuser_i,
  output logic [63:0]   m_axis_tdata_o,
  output logic [7:0]    m_axis_tkeep_o,
  output logic [G-1:0]  m_axis_tvalid_o,
  input  logic [G-1:0]  m_axis_tready_i,
  output logic          m_axis_tlast_o,
  output logic [UW-1:0] m_axis_tuser_o,
  output logic [GW-1:0] sel_o,                    // the engine the current (or next) beat goes to
  output logic          open_o                    // a packet is open: its first beat was taken, its last not yet
);

  logic [GW-1:0] rr_q;      // the engine tried first for the next packet
  logic [GW-1:0] cur_q;     // the engine of the open packet
  logic          open_q;
  logic [GW-1:0] pick;
  logic          any;
  logic [GW-1:0] sel;

  logic [GW:0]   idx;

  // The first engine at or after rr_q whose tready is high (walking backwards, the smallest distance wins).
  always_comb begin
    pick = rr_q;
    any  = 1'b0;
    idx  = '0;
    for (int k = G - 1; k >= 0; k--) begin
      idx = {1'b0, rr_q} + k[GW:0];
      if (idx >= G[GW:0]) idx = idx - G[GW:0];
      if (m_axis_tready_i[idx[GW-1:0]]) begin
        pick = idx[GW-1:0];
        any  = 1'b1;
      end
    end
  end

  assign sel = open_q ? cur_q : pick;

  always_comb begin
    m_axis_tvalid_o = '0;
    if (open_q || any) m_axis_tvalid_o[sel] = s_axis_tvalid_i;
  end

  assign s_axis_tready_o = (open_q || any) && m_axis_tready_i[sel];
  assign m_axis_tdata_o  = s_axis_tdata_i;
  assign m_axis_tkeep_o  = s_axis_tkeep_i;
  assign m_axis_tlast_o  = s_axis_tlast_i;
  assign m_axis_tuser_o  = s_axis_tuser_i;
  assign sel_o           = sel;
  assign open_o          = open_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rr_q   <= '0;
      cur_q  <= '0;
      open_q <= 1'b0;
    end else if (s_axis_tvalid_i && s_axis_tready_o) begin
      if (s_axis_tlast_i) begin
        open_q <= 1'b0;
        rr_q   <= (sel == GW'(G - 1)) ? '0 : sel + 1'b1;
      end else begin
        open_q <= 1'b1;
        cur_q  <= sel;
      end
    end
  end

endmodule
