`default_nettype none
// eBPFlow output crossbar: N input streams (the ports' output arbiters) to M output streams (the TX queues), whole
// packets, round robin per output, multicast (a flood) and drop.
//
// Beside each input packet, s_mask_i names the outputs it goes to (held while the packet is offered). An output that
// is free grants, round robin from the input after the one it served last, an input that wants it and already holds
// every lower-numbered output it wants: outputs are taken in one global order, so two multicast packets cannot each
// hold what the other waits for. Once an input holds all its outputs the packet streams to all of them; a beat is
// taken from the input when every one of its outputs has taken it (an output that took it early waits, tvalid low,
// for the others: the AXI4-Stream broadcaster rule). After the last beat the outputs are free again. A packet with
// an empty mask is taken at once and goes nowhere (the drop). Outputs never interleave packets; the N x M points are
// independent, so packets to different outputs move in the same cycle.
module ebpflow_crossbar #(
  parameter integer N  = 4,                       // inputs
  parameter integer M  = 6,                       // outputs
  parameter integer UW = 128,                     // tuser bits
  parameter integer NW = (N > 1) ? $clog2(N) : 1  // input index bits
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic [N*64-1:0] s_axis_tdata_i,
  input  logic [N*8-1:0]  s_axis_tkeep_i,
  input  logic [N-1:0]    s_axis_tvalid_i,
  output logic [N-1:0]    s_axis_tready_o,
  input  logic [N-1:0]    s_axis_tlast_i,
  input  logic [N*UW-1:0] s_axis_tuser_i,
  input  logic [N*M-1:0]  s_mask_i,
  output logic [M*64-1:0] m_axis_tdata_o,
  output logic [M*8-1:0]  m_axis_tkeep_o,
  output logic [M-1:0]    m_axis_tvalid_o,
  input  logic [M-1:0]    m_axis_tready_i,
  output logic [M-1:0]    m_axis_tlast_o,
  output logic [M*UW-1:0] m_axis_tuser_o
);

  logic [M-1:0]    busy_q;   // output o is held by input own_q[o]
  logic [M*NW-1:0] own_q;
  logic [M-1:0]    sent_q;   // output o took the current beat, the input waits for its other outputs
  logic [M*NW-1:0] rr_q;     // the input output o tries first

  logic [N*M-1:0]  granted;  // input i holds output o
  logic [N-1:0]    all;      // input i holds every output it wants
  logic [N*M-1:0]  want;     // input i asks output o for a grant this cycle
  logic [N-1:0]    take;     // input i's beat is taken
  logic [M-1:0]    gnt_any;
  logic [M*NW-1:0] gnt_idx;
  logic [NW:0]     idx;
  logic            lower;

  always_comb begin
    for (int i = 0; i < N; i++) begin
      all[i] = 1'b1;
      lower  = 1'b1;
      for (int o = 0; o < M; o++) begin
        granted[i*M+o] = busy_q[o] && (own_q[o*NW +: NW] == i[NW-1:0]);
        want[i*M+o]    = s_axis_tvalid_i[i] && s_mask_i[i*M+o] && !granted[i*M+o] && lower;
        if (s_mask_i[i*M+o] && !granted[i*M+o]) begin
          all[i] = 1'b0;
          lower  = 1'b0;
        end
      end
    end
  end

  // Per free output: the first wanting input at or after rr_q[o].
  always_comb begin
    gnt_any = '0;
    gnt_idx = '0;
    idx     = '0;
    for (int o = 0; o < M; o++) begin
      for (int k = N - 1; k >= 0; k--) begin
        idx = {1'b0, rr_q[o*NW +: NW]} + k[NW:0];
        if (idx >= N[NW:0]) idx = idx - N[NW:0];
        if (!busy_q[o] && want[idx[NW-1:0]*M+o]) begin
          gnt_any[o]           = 1'b1;
          gnt_idx[o*NW +: NW]  = idx[NW-1:0];
        end
      end
    end
  end

  always_comb begin
    for (int i = 0; i < N; i++) begin
      s_axis_tready_o[i] = all[i];
      for (int o = 0; o < M; o++) begin
        if (s_mask_i[i*M+o] && !sent_q[o] && !m_axis_tready_i[o]) s_axis_tready_o[i] = 1'b0;
      end
      take[i] = s_axis_tvalid_i[i] && s_axis_tready_o[i];
    end
  end

  // Output o carries its owner's beat: an AND-OR over the inputs (a variable part-select becomes a shifter).
  always_comb begin
    m_axis_tdata_o = '0;
    m_axis_tkeep_o = '0;
    m_axis_tlast_o = '0;
    m_axis_tuser_o = '0;
    for (int o = 0; o < M; o++) begin
      m_axis_tvalid_o[o] = busy_q[o] && !sent_q[o] && s_axis_tvalid_i[own_q[o*NW +: NW]]
                           && all[own_q[o*NW +: NW]];
      for (int i = 0; i < N; i++) begin
        if (own_q[o*NW +: NW] == i[NW-1:0]) begin
          m_axis_tdata_o[o*64 +: 64] = m_axis_tdata_o[o*64 +: 64] | s_axis_tdata_i[i*64 +: 64];
          m_axis_tkeep_o[o*8 +: 8]   = m_axis_tkeep_o[o*8 +: 8] | s_axis_tkeep_i[i*8 +: 8];
          m_axis_tlast_o[o]          = m_axis_tlast_o[o] | s_axis_tlast_i[i];
          m_axis_tuser_o[o*UW +: UW] = m_axis_tuser_o[o*UW +: UW] | s_axis_tuser_i[i*UW +: UW];
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= '0;
      own_q  <= '0;
      sent_q <= '0;
      rr_q   <= '0;
    end else begin
      for (int o = 0; o < M; o++) begin
        if (!busy_q[o]) begin
          if (gnt_any[o]) begin
            busy_q[o]           <= 1'b1;
            own_q[o*NW +: NW]   <= gnt_idx[o*NW +: NW];
            sent_q[o]           <= 1'b0;
          end
        end else if (take[own_q[o*NW +: NW]]) begin
          sent_q[o] <= 1'b0;
          if (s_axis_tlast_i[own_q[o*NW +: NW]]) begin
            busy_q[o]         <= 1'b0;
            rr_q[o*NW +: NW]  <= (own_q[o*NW +: NW] == NW'(N - 1)) ? '0 : own_q[o*NW +: NW] + 1'b1;
          end
        end else if (m_axis_tvalid_o[o] && m_axis_tready_i[o]) begin
          sent_q[o] <= 1'b1;
        end
      end
    end
  end

endmodule
