`default_nettype none
// Content-addressable memory: N entries of a W-bit key and a valid bit, searched in parallel in one cycle.
//
// Search (combinational): among the entries whose sel_i bit is set, hit_o says whether a valid one holds key_i and
// hit_idx_o is the lowest such; free_o says whether an invalid one exists and free_idx_o is the lowest. Write: at
// the clock edge with we_i, entry wr_idx_i takes wr_key_i and wr_valid_i (wr_valid_i low deletes it). entry_o is
// entry rd_idx_i's key and valid_o its valid bit (for dumps). Keys live in flip-flops: the search reads every one.
module cam #(
  parameter integer N  = 64,
  parameter integer W  = 128,
  parameter integer IW = (N > 1) ? $clog2(N) : 1
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic [N-1:0]  sel_i,
  input  logic [W-1:0]  key_i,
  output logic          hit_o,
  output logic [IW-1:0] hit_idx_o,
  output logic          free_o,
  output logic [IW-1:0] free_idx_o,
  input  logic          we_i,
  input  logic [IW-1:0] wr_idx_i,
  input  logic [W-1:0]  wr_key_i,
  input  logic          wr_valid_i,
  input  logic [IW-1:0] rd_idx_i,
  output logic [W-1:0]  entry_o,
  output logic          valid_o,
  output logic [N-1:0]  valid_vec_o
);

  logic [W-1:0] key_q [0:N-1];
  logic [N-1:0] valid_q;

  always_comb begin
    hit_o      = 1'b0;
    hit_idx_o  = '0;
    free_o     = 1'b0;
    free_idx_o = '0;
    for (int i = N - 1; i >= 0; i--) begin
      if (sel_i[i] && valid_q[i] && key_q[i] == key_i) begin
        hit_o     = 1'b1;
        hit_idx_o = IW'(i);
      end
      if (sel_i[i] && !valid_q[i]) begin
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
      key_q[wr_idx_i] <= wr_key_i;
    end
  end

  assign entry_o     = key_q[rd_idx_i];
  assign valid_o     = valid_q[rd_idx_i];
  assign valid_vec_o = valid_q;

endmodule
