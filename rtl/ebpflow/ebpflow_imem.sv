`default_nettype none
// eBPFlow instruction memory, one bank: 64-bit eBPF slots written one at a time, read with a registered read.
//
// The slot at rd_addr_i appears on rd_data_o after the clock edge at which rd_en_i is high and stays there while
// rd_en_i is low. (The NIC's double-buffered memory, shared by the engines, will be two of these behind a bank
// select; an engine only sees this read port.)
module ebpflow_imem #(
  parameter integer DEPTH = 4096,   // slots
  parameter integer IW    = 12      // address bits: $clog2(DEPTH)
) (
  input  logic          clk_i,
  input  logic          we_i,
  input  logic [IW-1:0] wr_addr_i,
  input  logic [63:0]   wr_data_i,
  input  logic          rd_en_i,
  input  logic [IW-1:0] rd_addr_i,
  output logic [63:0]   rd_data_o
);

  logic [63:0] mem [0:DEPTH-1];
  logic [63:0] rd_q;

  always_ff @(posedge clk_i) begin
    if (we_i) begin
      mem[wr_addr_i] <= wr_data_i;
    end
    if (rd_en_i) begin
      rd_q <= mem[rd_addr_i];
    end
  end

  assign rd_data_o = rd_q;

endmodule
