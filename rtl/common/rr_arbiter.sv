`default_nettype none
// Round-robin arbiter: N requesters, one grant a cycle when the arbiter may grant, the first requester after the
// last granted one (index order, wrapping).
//
// In a cycle with en_i high and some req_i bit set, gnt_o is one-hot on the requester that comes first after the
// last granted (the last granted itself comes last), gnt_idx_o is its index and gnt_valid_o is high; the pointer
// moves to it at the clock edge. Before the first grant the pointer is at N-1, so requester 0 comes first. With
// en_i low or no request, nothing is granted and the pointer stays.
module rr_arbiter #(
  parameter integer N  = 4,
  parameter integer IW = (N > 1) ? $clog2(N) : 1   // index bits
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          en_i,
  input  logic [N-1:0]  req_i,
  output logic [N-1:0]  gnt_o,
  output logic [IW-1:0] gnt_idx_o,
  output logic          gnt_valid_o
);

  logic [IW-1:0] last_q;

  always_comb begin
    gnt_o       = '0;
    gnt_idx_o   = '0;
    gnt_valid_o = 1'b0;
    // Scan from last + 1 around to last; the first requester found wins.
    for (int k = 1; k <= N; k++) begin
      logic [IW:0] i;
      i = {1'b0, last_q} + (IW+1)'(k);
      if (i >= (IW+1)'(N)) i = i - (IW+1)'(N);
      if (en_i && !gnt_valid_o && req_i[i[IW-1:0]]) begin
        gnt_o[i[IW-1:0]] = 1'b1;
        gnt_idx_o        = i[IW-1:0];
        gnt_valid_o      = 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      last_q <= IW'(N - 1);
    end else if (gnt_valid_o) begin
      last_q <= gnt_idx_o;
    end
  end

endmodule
