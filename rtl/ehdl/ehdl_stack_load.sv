`default_nettype none
// eHDL template: a stack load at a constant offset from the stage's carried stack bytes.
//
// State pruning keeps only the live stack bytes in each stage register, so the generator hands this template the
// SIZE bytes the load reads (bytes_i[7:0] the lowest address); a byte that no store reaches is a constant.
module ehdl_stack_load #(
  parameter integer SIZE   = 1,  // bytes: 1, 2, 4 or 8
  parameter integer SIGNED = 0   // ldsx: sign-extend
) (
  input  logic                en_i,
  input  logic [8*SIZE-1:0]   bytes_i,
  input  logic [63:0]         old_i,
  output logic [63:0]         res_o
);

  logic [63:0] value;

  // Extended through 72 bits so that SIZE == 8 needs no zero-width replication.
  logic [71:0] padded;
  assign padded = {{(72 - 8 * SIZE){(SIGNED == 1) & bytes_i[8*SIZE-1]}}, bytes_i};
  assign value  = padded[63:0];

  assign res_o = en_i ? value : old_i;

  // A signed or 8-byte load never needs the top extension bits.
  logic unused_pad;
  assign unused_pad = ^padded[71:64];

endmodule
