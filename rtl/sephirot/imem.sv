`default_nettype none
// Sephirot instruction memory: one 64-bit slot per lane and bundle, written slot by slot, read a bundle per cycle.
//
// One memory per lane (each maps to block RAM). The read is synchronous: the bundle at rd_addr_i appears on
// rd_slots_o after the clock edge at which rd_en_i is high, and stays there while rd_en_i is low.
module imem #(
  parameter integer LANES    = 4,     // slots per bundle, 1..8
  parameter integer BUNDLES  = 1024,  // depth in bundles
  parameter integer AW       = 10     // address bits, at least $clog2(BUNDLES)
) (
  input  logic                  clk_i,
  input  logic                  we_i,
  input  logic [AW-1:0]         wr_addr_i,
  input  logic [2:0]            wr_lane_i,
  input  logic [63:0]           wr_slot_i,
  input  logic                  rd_en_i,
  input  logic [AW-1:0]         rd_addr_i,
  output logic [LANES*64-1:0]   rd_slots_o
);

  genvar l;
  generate
    for (l = 0; l < LANES; l = l + 1) begin : g_lane
      logic [63:0] mem [0:BUNDLES-1];
      logic [63:0] rd_q;

      always_ff @(posedge clk_i) begin
        if (we_i && wr_lane_i == l[2:0]) begin
          mem[wr_addr_i] <= wr_slot_i;
        end
        if (rd_en_i) begin
          rd_q <= mem[rd_addr_i];
        end
      end

      assign rd_slots_o[l*64 +: 64] = rd_q;
    end
  endgenerate

endmodule
