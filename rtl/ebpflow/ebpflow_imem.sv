`default_nettype none
// eBPFlow instruction memory, one bank: 64-bit eBPF slots written one at a time, read with a registered read
// (rtl/common/ram_sdp).
//
// The slot at rd_addr_i appears on rd_data_o after the clock edge at which rd_en_i is high and stays there while
// rd_en_i is low. The single-engine conformance top uses it; the NIC's engines share ebpflow_imem_db, two banks with
// a read port per engine.
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

  ram_sdp #(
    .WIDTH (64),
    .DEPTH (DEPTH),
    .AW    (IW)
  ) u_ram (
    .clk_i     (clk_i),
    .wr_en_i   (we_i),
    .wr_addr_i (wr_addr_i),
    .wr_data_i (wr_data_i),
    .wr_be_i   (8'hff),
    .rd_en_i   (rd_en_i),
    .rd_addr_i (rd_addr_i),
    .rd_data_o (rd_data_o)
  );

endmodule
