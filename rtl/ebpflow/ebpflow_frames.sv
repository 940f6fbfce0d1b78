`default_nettype none
// eBPFlow engine call frames: per bpf-to-bpf call, the return slot and the caller's r6-r9, in a synchronous RAM
// (rtl/common/ram_sdp).
//
// A call writes entry wr_idx_i (the caller's depth) at the clock edge of we_i; an exit reads entry rd_idx_i at the
// edge of rd_en_i and finds it on rd_data_o ({r9, r8, r7, r6, return slot}, the slot in the low 32 bits) in the next
// cycle, until the next read. FRAMES - 1 entries are used: the main program's frame saves nothing.
module ebpflow_frames #(
  parameter integer FRAMES = 8,
  parameter integer FW     = 3    // index bits: $clog2(FRAMES)
) (
  input  logic           clk_i,
  input  logic           we_i,
  input  logic [FW-1:0]  wr_idx_i,
  input  logic [287:0]   wr_data_i,
  input  logic           rd_en_i,
  input  logic [FW-1:0]  rd_idx_i,
  output logic [287:0]   rd_data_o
);

  ram_sdp #(
    .WIDTH (288),
    .DEPTH (FRAMES),
    .AW    (FW)
  ) u_ram (
    .clk_i     (clk_i),
    .wr_en_i   (we_i),
    .wr_addr_i (wr_idx_i),
    .wr_data_i (wr_data_i),
    .wr_be_i   ({36{1'b1}}),
    .rd_en_i   (rd_en_i),
    .rd_addr_i (rd_idx_i),
    .rd_data_o (rd_data_o)
  );

endmodule
