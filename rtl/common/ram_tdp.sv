`default_nettype none
// True dual-port RAM: two ports, each reading or writing one word per clock, registered reads (BRAM).
//
// Port p (a, b): on the rising edge with en high, a write (we high) stores the bytes of wdata whose be bit is set and
// a read (we low) registers the word at addr onto rdata, which holds until the port's next read. Both ports writing
// one address at the same edge is undefined, as in the device; a read of the address the other port writes at the
// same edge returns the old word. WIDTH must be a multiple of 8.
module ram_tdp #(
  parameter integer WIDTH = 64,            // bits per word
  parameter integer DEPTH = 512,           // words
  parameter integer AW    = $clog2(DEPTH)  // address bits
) (
  input  logic               clk_i,
  input  logic               a_en_i,
  input  logic               a_we_i,
  input  logic [AW-1:0]      a_addr_i,
  input  logic [WIDTH-1:0]   a_wdata_i,
  input  logic [WIDTH/8-1:0] a_be_i,
  output logic [WIDTH-1:0]   a_rdata_o,
  input  logic               b_en_i,
  input  logic               b_we_i,
  input  logic [AW-1:0]      b_addr_i,
  input  logic [WIDTH-1:0]   b_wdata_i,
  input  logic [WIDTH/8-1:0] b_be_i,
  output logic [WIDTH-1:0]   b_rdata_o
);

  logic [WIDTH-1:0] mem_q [0:DEPTH-1];
  logic [WIDTH-1:0] a_rd_q, b_rd_q;

  // One process per byte lane and port rather than a loop in one: Verilator 5.006 refuses delayed assignments to an
  // array inside a for loop once the word is wider than 512 bits; Yosys merges the lanes into byte-enabled ports.
  for (genvar i = 0; i < WIDTH / 8; i++) begin : g_lane
    always_ff @(posedge clk_i) begin
      if (a_en_i && a_we_i && a_be_i[i]) mem_q[a_addr_i][8*i +: 8] <= a_wdata_i[8*i +: 8];
    end
    always_ff @(posedge clk_i) begin
      if (b_en_i && b_we_i && b_be_i[i]) mem_q[b_addr_i][8*i +: 8] <= b_wdata_i[8*i +: 8];
    end
  end

  always_ff @(posedge clk_i) begin
    if (a_en_i && !a_we_i) a_rd_q <= mem_q[a_addr_i];
  end

  always_ff @(posedge clk_i) begin
    if (b_en_i && !b_we_i) b_rd_q <= mem_q[b_addr_i];
  end

  assign a_rdata_o = a_rd_q;
  assign b_rdata_o = b_rd_q;

endmodule
