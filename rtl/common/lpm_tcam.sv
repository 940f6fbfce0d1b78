`default_nettype none
// Longest-prefix-match TCAM: N entries of a prefix (W data bits, most significant first as in an LPM_TRIE key: byte
// 0's bit 7 is bit 0 of the prefix) and its length, searched in parallel in one cycle.
//
// Search (combinational) among the entries whose sel_i bit is set and that are valid:
//  - longest match: an entry matches when its length is at most len_i and its first `length` bits equal data_i's;
//    lpm_hit_o / lpm_idx_o name the longest (the lowest index among equals);
//  - exact: exact_hit_o / exact_idx_o name an entry whose length is len_i and whose first len_i bits equal data_i's;
//  - free_o / free_idx_o: the lowest invalid entry.
// Write: at the clock edge with we_i, entry wr_idx_i takes wr_data_i (stored masked to wr_len_i), wr_len_i and
// wr_valid_i. entry_o / entry_len_o / valid_o read entry rd_idx_i (for dumps).
module lpm_tcam #(
  parameter integer N  = 32,
  parameter integer W  = 96,
  parameter integer LW = 8,                          // length bits: W fits in them
  parameter integer IW = (N > 1) ? $clog2(N) : 1
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic [N-1:0]  sel_i,
  input  logic [W-1:0]  data_i,
  input  logic [LW-1:0] len_i,
  output logic          lpm_hit_o,
  output logic [IW-1:0] lpm_idx_o,
  output logic          exact_hit_o,
  output logic [IW-1:0] exact_idx_o,
  output logic          free_o,
  output logic [IW-1:0] free_idx_o,
  input  logic          we_i,
  input  logic [IW-1:0] wr_idx_i,
  input  logic [W-1:0]  wr_data_i,
  input  logic [LW-1:0] wr_len_i,
  input  logic          wr_valid_i,
  input  logic [IW-1:0] rd_idx_i,
  output logic [W-1:0]  entry_o,
  output logic [LW-1:0] entry_len_o,
  output logic          valid_o
);

  logic [W-1:0]  data_q [0:N-1];
  logic [W-1:0]  mask_q [0:N-1];   // the first len_q bits, kept beside the entry
  logic [LW-1:0] len_q  [0:N-1];
  logic [N-1:0]  valid_q;

  // The first `len` bits of the prefix order: byte j's bit 7 - b is prefix bit 8j + b.
  function automatic [W-1:0] prefix_mask(input logic [LW-1:0] len);
    for (int j = 0; j < W / 8; j++) begin
      for (int b = 0; b < 8; b++) begin
        prefix_mask[8*j + 7 - b] = (32'(8*j + b) < 32'(len));
      end
    end
  endfunction

  // Which entries match, then the longest of them by a tree of comparisons (the lower index among equals).
  logic [N-1:0] lpm_match;
  logic [N-1:0] exact_match;
  logic [N-1:0] free_vec;
  always_comb begin
    for (int i = 0; i < N; i++) begin
      lpm_match[i]   = sel_i[i] && valid_q[i] && len_q[i] <= len_i && ((data_i & mask_q[i]) == data_q[i]);
      exact_match[i] = lpm_match[i] && len_q[i] == len_i;   // an equal length: the same mask
      free_vec[i]    = sel_i[i] && !valid_q[i];
    end
  end

  localparam integer NP = 1 << IW;   // N rounded up to a power of two
  logic          t_hit [0:2*NP-2];
  logic [LW-1:0] t_len [0:2*NP-2];
  logic [IW-1:0] t_idx [0:2*NP-2];
  always_comb begin
    // Leaves NP-1 .. 2NP-2, the root 0; node k's children are 2k+1 and 2k+2.
    for (int i = 0; i < NP; i++) begin
      t_hit[NP-1+i] = (i < N) && lpm_match[i % N];
      t_len[NP-1+i] = (i < N) ? len_q[i % N] : '0;
      t_idx[NP-1+i] = IW'(i);
    end
    for (int k = NP - 2; k >= 0; k--) begin
      if (t_hit[2*k+1] && (!t_hit[2*k+2] || t_len[2*k+1] >= t_len[2*k+2])) begin
        t_hit[k] = 1'b1;
        t_len[k] = t_len[2*k+1];
        t_idx[k] = t_idx[2*k+1];
      end else begin
        t_hit[k] = t_hit[2*k+2];
        t_len[k] = t_len[2*k+2];
        t_idx[k] = t_idx[2*k+2];
      end
    end
  end

  always_comb begin
    lpm_hit_o   = t_hit[0];
    lpm_idx_o   = t_idx[0];
    exact_hit_o = 1'b0;
    exact_idx_o = '0;
    free_o      = 1'b0;
    free_idx_o  = '0;
    for (int i = N - 1; i >= 0; i--) begin
      if (exact_match[i]) begin
        exact_hit_o = 1'b1;
        exact_idx_o = IW'(i);
      end
      if (free_vec[i]) begin
        free_o     = 1'b1;
        free_idx_o = IW'(i);
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
    end else if (we_i) begin
      valid_q[wr_idx_i] <= wr_valid_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (we_i) begin
      data_q[wr_idx_i] <= wr_data_i & prefix_mask(wr_len_i);
      mask_q[wr_idx_i] <= prefix_mask(wr_len_i);
      len_q[wr_idx_i]  <= wr_len_i;
    end
  end

  assign entry_o     = data_q[rd_idx_i];
  assign entry_len_o = len_q[rd_idx_i];
  assign valid_o     = valid_q[rd_idx_i];

endmodule
