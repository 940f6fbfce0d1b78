`default_nettype none
// eHDL template: one register of the packet frame chain, with the byte-enabled write port of the stores.
//
// Frames move one register per cycle when adv_i is high (the whole pipeline advances together); the stores of the
// stages that reach the frame in the previous register merge their bytes (wmask_i) on the way in. The frame
// index (fidx) counts the frames of a packet, saturating, so stores and the output can tell the frames apart.
module ehdl_frame_stage #(
  parameter integer DW = 512,  // frame width in bits
  parameter integer FW = 8     // frame index width
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic            adv_i,
  input  logic            valid_i,
  input  logic [DW-1:0]   data_i,
  input  logic [DW/8-1:0] keep_i,
  input  logic            last_i,
  input  logic [FW-1:0]   fidx_i,
  input  logic [DW-1:0]   wdata_i,  // store bytes (zero where not written)
  input  logic [DW/8-1:0] wmask_i,
  output logic            valid_o,
  output logic [DW-1:0]   data_o,
  output logic [DW/8-1:0] keep_o,
  output logic            last_o,
  output logic [FW-1:0]   fidx_o
);

  logic [DW-1:0] merged;

  always_comb begin
    merged = data_i;
    for (integer b = 0; b < DW / 8; b = b + 1) begin
      if (wmask_i[b]) begin
        merged[8*b +: 8] = wdata_i[8*b +: 8];
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_o <= 1'b0;
    end else if (adv_i) begin
      valid_o <= valid_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (adv_i) begin
      data_o <= merged;
      keep_o <= keep_i;
      last_o <= last_i;
      fidx_o <= fidx_i;
    end
  end

endmodule
