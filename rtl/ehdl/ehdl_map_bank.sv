`default_nettype none
// eHDL map bank: ROWS consecutive 8-byte rows of an ehdl_map_mem, starting at row first_i.
//
// ehdl_map_mem splits a map's rows into banks of 16 so that synthesis works on one bank module, shared by every
// bank of that size, instead of one flat block whose logic grows with the map (a 1 KB map with four ports took
// Yosys minutes before ABC, and ABC tens of minutes). A bank sees every writer's lanes: lane k of writer p lies in
// row lane_row_i[p][k]; when wlane_i[p][k] is set, the row's byte k takes wdata_i[p][k], later writers winning.
// rlanes_o[p][k] is byte k of that row as stored (before this cycle's writes), or 0 when the row is not in the
// bank, so the block ORs its banks' outputs. first_i is a port rather than a parameter so that every full bank is
// the same module. Reset clears the rows.
module ehdl_map_bank #(
  parameter integer  ROWS   = 16,          // rows in this bank, 1..16
  parameter integer  RW     = 8,           // row index width
  parameter integer  NW     = 2,           // writers (the block's ports and its host)
  parameter [NW-1:0] WRITES = {NW{1'b1}}   // bit p: writer p may write (wlane_i[p] is ignored otherwise)
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic [RW-1:0]      first_i,
  input  logic [NW*8*RW-1:0] lane_row_i,
  input  logic [NW*64-1:0]   wdata_i,
  input  logic [NW*8-1:0]    wlane_i,
  output logic [NW*64-1:0]   rlanes_o
);

  logic [64*ROWS-1:0] rows_q;
  logic [64*ROWS-1:0] rows_d;
  // Each lane's row within the bank, once for both blocks; rows outside wrap to values no local row has.
  logic [NW*8*RW-1:0] rel;
  always_comb begin
    for (integer l = 0; l < NW*8; l = l + 1) rel[l*RW +: RW] = lane_row_i[l*RW +: RW] - first_i;
  end

  // Reads and writes in separate blocks: the block's write data depend on what its ports read.
  always_comb begin
    rlanes_o = '0;
    for (integer p = 0; p < NW; p = p + 1) begin
      for (integer k = 0; k < 8; k = k + 1) begin
        for (integer i = 0; i < ROWS; i = i + 1) begin
          if (rel[(p*8 + k)*RW +: RW] == RW'(i)) rlanes_o[p*64 + 8*k +: 8] = rows_q[64*i + 8*k +: 8];
        end
      end
    end
  end

  always_comb begin
    rows_d = rows_q;
    for (integer p = 0; p < NW; p = p + 1) begin
      for (integer k = 0; k < 8; k = k + 1) begin
        for (integer i = 0; i < ROWS; i = i + 1) begin
          if (WRITES[p] && wlane_i[p*8 + k] && rel[(p*8 + k)*RW +: RW] == RW'(i)) begin
            rows_d[64*i + 8*k +: 8] = wdata_i[p*64 + 8*k +: 8];
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rows_q <= '0;
    end else begin
      rows_q <= rows_d;
    end
  end

endmodule
