`default_nettype none
// eHDL template: a packet store at a constant offset, as byte-enabled writes into the frame registers.
//
// The store's frame f sits in frame register k - f when the op runs in stage k; its bytes are merged into that
// frame as it moves to the next register (ehdl_frame_stage's write port), and a store crossing the frame's end
// writes the rest into frame f + 1, one register earlier. A frame register holds frame f of this packet only if the
// packet has that many frames (else it holds an earlier frame of a later packet), so each half is enabled only when
// the register's frame index is the expected one: a store never touches another packet.
module ehdl_pkt_store #(
  parameter integer DW   = 512,  // frame width in bits, a multiple of 64
  parameter integer FW   = 8,    // frame index width
  parameter integer OFF  = 0,    // first byte within frame f
  parameter integer SIZE = 1,    // bytes: 1, 2, 4 or 8
  parameter integer FIDX = 0     // f, the frame index the low part expects
) (
  input  logic            en_i,       // the op's predicate
  input  logic [63:0]     val_i,      // the value; its low SIZE bytes are stored
  input  logic [FW-1:0]   lo_fidx_i,  // frame index in the register holding frame f
  input  logic [FW-1:0]   hi_fidx_i,  // frame index in the register holding frame f + 1
  output logic [DW-1:0]   lo_data_o,  // bytes for frame f (zero where not written)
  output logic [DW/8-1:0] lo_mask_o,
  output logic [DW-1:0]   hi_data_o,  // bytes for frame f + 1
  output logic [DW/8-1:0] hi_mask_o
);

  localparam integer Bytes = DW / 8;

  logic [2*DW-1:0]    data;
  logic [2*Bytes-1:0] mask;
  logic               lo_ok;
  logic               hi_ok;

  always_comb begin
    data = '0;
    mask = '0;
    data[8*OFF +: 8*SIZE] = val_i[8*SIZE-1:0];
    mask[OFF +: SIZE]     = {SIZE{1'b1}};
  end

  assign lo_ok     = en_i & (lo_fidx_i == FIDX[FW-1:0]);
  assign hi_ok     = en_i & (hi_fidx_i == FIDX[FW-1:0] + 1'b1);
  assign lo_data_o = lo_ok ? data[DW-1:0] : '0;
  assign lo_mask_o = lo_ok ? mask[Bytes-1:0] : '0;
  assign hi_data_o = hi_ok ? data[2*DW-1:DW] : '0;
  assign hi_mask_o = hi_ok ? mask[2*Bytes-1:Bytes] : '0;

  // Bytes above SIZE are not stored.
  logic unused_val;
  assign unused_val = ^val_i;

endmodule
