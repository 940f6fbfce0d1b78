`default_nettype none
// eHDL template: the packet length as its frames arrive, for the length checks that replace bounds checks.
//
// Stage k sees the packet's frame k in frame register 0 (when the packet has one). len_i/ended_i are the bytes and
// end-of-packet seen before; the outputs include the frame now in register 0 unless the packet already ended.
// A length check needing frame (N - 1) / (DW / 8) is scheduled no earlier, so by then len_o is either at least N or
// the whole length.
module ehdl_pkt_len #(
  parameter integer DW = 512,  // frame width in bits
  parameter integer LW = 16    // length width
) (
  input  logic [LW-1:0]   len_i,
  input  logic            ended_i,
  input  logic [DW/8-1:0] keep_i,   // the frame in register 0 (contiguous low bytes)
  input  logic            last_i,
  output logic [LW-1:0]   len_o,
  output logic            ended_o
);

  logic [LW-1:0] bytes;

  always_comb begin
    bytes = '0;
    for (integer b = 0; b < DW / 8; b = b + 1) begin
      bytes = bytes + {{(LW - 1){1'b0}}, keep_i[b]};
    end
  end

  assign len_o   = ended_i ? len_i : len_i + bytes;
  assign ended_o = ended_i | last_i;

endmodule
