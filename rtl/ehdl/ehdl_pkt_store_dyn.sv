`default_nettype none
// eHDL template: a packet store at a run-time offset, as byte-enabled writes into the frames that have arrived.
//
// Like ehdl_pkt_load_dyn, frame f of the NF available ones is data_o/mask_o[f]; each frame's bytes are enabled only
// if the register holding it has frame index f (fidx_i[f]), so a short packet never writes another packet's frame.
// A store reaching past the NF frames raises miss_o and writes nothing there.
module ehdl_pkt_store_dyn #(
  parameter integer DW   = 512,  // frame width in bits
  parameter integer FW   = 8,    // frame index width
  parameter integer NF   = 1,    // frames available
  parameter integer SIZE = 1     // bytes: 1, 2, 4 or 8
) (
  input  logic               en_i,
  input  logic [15:0]        addr_i,
  input  logic [63:0]        val_i,
  input  logic [NF*FW-1:0]   fidx_i,
  output logic [NF*DW-1:0]   data_o,
  output logic [NF*DW/8-1:0] mask_o,
  output logic               miss_o
);

  localparam integer Bytes = NF * DW / 8;
  localparam integer FB    = DW / 8;

  logic   miss;
  integer at;
  integer frame;

  always_comb begin
    data_o = '0;
    mask_o = '0;
    miss   = 1'b0;
    at     = {16'd0, addr_i};
    frame  = 0;
    for (integer b = 0; b < SIZE; b = b + 1) begin
      frame = (at + b) / FB;
      if (at + b < Bytes) begin
        if (en_i && {{(32 - FW){1'b0}}, fidx_i[FW*frame +: FW]} == frame) begin
          data_o[8*(at + b) +: 8] = val_i[8*b +: 8];
          mask_o[at + b]          = 1'b1;
        end
      end else begin
        miss = 1'b1;
      end
    end
  end

  assign miss_o = en_i & miss;

  // Bytes above SIZE are not stored.
  logic unused_val;
  assign unused_val = ^val_i;

endmodule
