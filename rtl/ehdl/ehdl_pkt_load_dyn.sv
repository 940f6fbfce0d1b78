`default_nettype none
// eHDL template: a packet load at a run-time offset (after a variable-length header), from the frames that have
// arrived.
//
// The op in stage k sees frames 0 .. k in frame registers k .. 0; the generator passes the NF lowest of them as one
// vector (frame 0 in the low bits), so the packet's first NF * DW / 8 bytes are addressable by offset. A load that
// reaches past them raises miss_o (the generator turns it into an aborted packet) and reads 0 there.
module ehdl_pkt_load_dyn #(
  parameter integer DW     = 512,  // frame width in bits
  parameter integer NF     = 1,    // frames available
  parameter integer SIZE   = 1,    // bytes: 1, 2, 4 or 8
  parameter integer SIGNED = 0
) (
  input  logic             en_i,
  input  logic [NF*DW-1:0] frames_i,
  input  logic [15:0]      addr_i,   // byte offset from the packet's first byte
  input  logic [63:0]      old_i,
  output logic [63:0]      res_o,
  output logic             miss_o    // enabled and some byte beyond the NF frames
);

  localparam integer Bytes = NF * DW / 8;

  logic [8*SIZE-1:0] raw;
  logic              miss;
  integer            at;

  always_comb begin
    raw  = '0;
    miss = 1'b0;
    at   = {16'd0, addr_i};
    for (integer b = 0; b < SIZE; b = b + 1) begin
      if (at + b < Bytes) begin
        raw[8*b +: 8] = frames_i[8*(at + b) +: 8];
      end else begin
        miss = 1'b1;
      end
    end
  end

  logic [71:0] padded;
  assign padded = {{(72 - 8 * SIZE){(SIGNED == 1) & raw[8*SIZE-1]}}, raw};
  assign res_o  = en_i ? padded[63:0] : old_i;
  assign miss_o = en_i & miss;

  // A signed or 8-byte load never needs the top extension bits.
  logic unused_pad;
  assign unused_pad = ^padded[71:64];

endmodule
