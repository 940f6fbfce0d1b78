`default_nettype none
// eHDL template: a packet load at a constant offset, read from the frame registers the bypass network selects.
//
// The packet travels through the pipeline as frames of DW bits; an op in stage k that reads frame f finds it in the
// frame register k - f stages back (lo_i), and a load crossing into frame f + 1 takes the rest from the register one
// position earlier (hi_i). OFF is the load's first byte within frame f; bytes are little-endian in the frame (byte
// 0 of the frame is bits 7:0), as eBPF loads are. SIGNED sign-extends (ldsx), else the value is zero-extended.
module ehdl_pkt_load #(
  parameter integer DW     = 512,  // frame width in bits, a multiple of 64
  parameter integer OFF    = 0,    // first byte within frame f, 0 .. DW/8-1
  parameter integer SIZE   = 1,    // bytes: 1, 2, 4 or 8
  parameter integer SIGNED = 0
) (
  input  logic          en_i,   // the op's predicate
  input  logic [DW-1:0] lo_i,   // frame f
  input  logic [DW-1:0] hi_i,   // frame f + 1 (only read when the load crosses the frame's end)
  input  logic [63:0]   old_i,  // the destination when the op is disabled
  output logic [63:0]   res_o
);

  logic [2*DW-1:0]   both;
  logic [8*SIZE-1:0] raw;
  logic [63:0]       value;

  assign both = {hi_i, lo_i};
  assign raw  = both[8*OFF +: 8*SIZE];

  // Extended through 72 bits so that SIZE == 8 needs no zero-width replication.
  logic [71:0] padded;
  assign padded = {{(72 - 8 * SIZE){(SIGNED == 1) & raw[8*SIZE-1]}}, raw};
  assign value  = padded[63:0];

  assign res_o = en_i ? value : old_i;

  // A signed or 8-byte load never needs the top extension bits.
  logic unused_pad;
  assign unused_pad = ^padded[71:64];

  // Only the addressed bytes of the two frames are read.
  logic unused_bytes;
  assign unused_bytes = ^both;

endmodule
