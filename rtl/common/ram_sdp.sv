`default_nettype none
// Simple dual-port RAM: one write port with byte enables, one read port with a registered read (BRAM/URAM).
//
// Write: on the rising edge with wr_en_i high, the bytes of wr_data_i whose wr_be_i bit is set go to wr_addr_i.
// Read: on the rising edge with rd_en_i high, the word at rd_addr_i is registered onto rd_data_o, which holds while
// rd_en_i is low. A read of the address written at the same edge returns the old word (read-first): a caller that
// needs the new one forwards it itself. WIDTH must be a multiple of 8.
module ram_sdp #(
  parameter integer WIDTH = 64,            // bits per word
  parameter integer DEPTH = 512,           // words
  parameter integer AW    = $clog2(DEPTH)  // address bits
) (
  input  logic               clk_i,
  input  logic               wr_en_i,
  input  logic [AW-1:0]      wr_addr_i,
  input  logic [WIDTH-1:0]   wr_data_i,
  input  logic [WIDTH/8-1:0] wr_be_i,
  input  logic               rd_en_i,
  input  logic [AW-1:0]      rd_addr_i,
  output logic [WIDTH-1:0]   rd_data_o
);

  logic [WIDTH-1:0] mem_q [0:DEPTH-1];
  logic [WIDTH-1:0] rd_q;

  // One process per byte lane rather than a loop in one: Verilator 5.006 refuses delayed assignments to an array
  // inside a for loop once the word is wider than 512 bits; Yosys merges the lanes into one byte-enabled port.
  for (genvar b = 0; b < WIDTH / 8; b++) begin : g_lane
    always_ff @(posedge clk_i) begin
      if (wr_en_i && wr_be_i[b]) mem_q[wr_addr_i][8*b +: 8] <= wr_data_i[8*b +: 8];
    end
  end

  always_ff @(posedge clk_i) begin
    if (rd_en_i) rd_q <= mem_q[rd_addr_i];
  end

  assign rd_data_o = rd_q;

endmodule
