`default_nettype none
// Sephirot stack memory: FRAMES frames of 512 bytes in 64-bit words, one read and one write port per lane.
//
// Accesses are 1 to 8 bytes at any byte offset (an unaligned access touches two words). Reads are asynchronous:
// rd_data_o holds the eight bytes at rd_addr_i (little-endian, bit 0 = the lowest byte, whatever the access size)
// as the memory is before this cycle's writes, which take effect at the clock edge. Writes apply in lane order, so
// a later lane wins where two stores of one bundle overlap. clear_i makes the whole memory read as zero (a new
// packet) in one cycle: a valid bit per byte, cleared together, masks bytes the packet has not written.
module stack #(
  parameter integer LANES  = 4,
  parameter integer FRAMES = 8,
  parameter integer AW     = 12   // byte-address bits: $clog2(FRAMES * 512)
) (
  input  logic                 clk_i,
  input  logic                 clear_i,
  input  logic [LANES*AW-1:0]  rd_addr_i,
  output logic [LANES*64-1:0]  rd_data_o,
  input  logic [LANES-1:0]     we_i,
  input  logic [LANES*AW-1:0]  wr_addr_i,
  input  logic [LANES*4-1:0]   wr_bytes_i,
  input  logic [LANES*64-1:0]  wr_data_i
);

  localparam integer Words = FRAMES * 64;
  localparam integer WW    = AW - 3;

  logic [63:0] mem [0:Words-1];

  // Write side: each lane's bytes shifted into a two-word window with byte enables.
  logic [LANES*128-1:0] wr_win;
  logic [LANES*16-1:0]  wr_be;
  integer l;
    integer b;

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      wr_win[l*128 +: 128] = {64'd0, wr_data_i[l*64 +: 64]} << {wr_addr_i[l*AW +: 3], 3'b000};
      wr_be[l*16 +: 16]    = (16'hffff >> (5'd16 - {1'b0, wr_bytes_i[l*4 +: 4]})) << wr_addr_i[l*AW +: 3];
      if (wr_bytes_i[l*4 +: 4] == 4'd0) begin
        wr_be[l*16 +: 16] = 16'd0;
      end
    end
  end

  // Per-lane word indices of the window.
  logic [LANES*WW-1:0] wr_lo;
  logic [LANES*WW-1:0] wr_hi;
  logic [LANES*WW-1:0] rd_lo;
  logic [LANES*WW-1:0] rd_hi;

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      wr_lo[l*WW +: WW] = wr_addr_i[l*AW+3 +: WW];
      wr_hi[l*WW +: WW] = wr_addr_i[l*AW+3 +: WW] + 1'b1;
      rd_lo[l*WW +: WW] = rd_addr_i[l*AW+3 +: WW];
      rd_hi[l*WW +: WW] = rd_addr_i[l*AW+3 +: WW] + 1'b1;
    end
  end

  // A byte reads as zero until the packet writes it: clearing one valid bit per byte replaces clearing the memory.
  logic [Words*8-1:0] valid_q;

  always_ff @(posedge clk_i) begin
    for (l = 0; l < LANES; l = l + 1) begin
      if (we_i[l] && !clear_i) begin
        for (b = 0; b < 8; b = b + 1) begin
          if (wr_be[l*16 + b]) begin
            mem[wr_lo[l*WW +: WW]][b*8 +: 8] <= wr_win[l*128 + b*8 +: 8];
          end
          if (wr_be[l*16 + 8 + b]) begin
            mem[wr_hi[l*WW +: WW]][b*8 +: 8] <= wr_win[l*128 + 64 + b*8 +: 8];
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (clear_i) begin
      valid_q <= '0;
    end else begin
      for (l = 0; l < LANES; l = l + 1) begin
        if (we_i[l]) begin
          for (b = 0; b < 8; b = b + 1) begin
            if (wr_be[l*16 + b]) begin
              valid_q[{wr_lo[l*WW +: WW], b[2:0]}] <= 1'b1;
            end
            if (wr_be[l*16 + 8 + b]) begin
              valid_q[{wr_hi[l*WW +: WW], b[2:0]}] <= 1'b1;
            end
          end
        end
      end
    end
  end

  // Read side: asynchronous (the core reads in its execute stage, after the previous bundle's stores).
  logic [127:0] window;
  logic [127:0] shifted;
  logic         unused_shifted;

  always_comb begin
    window = '0;
    shifted = '0;
    for (l = 0; l < LANES; l = l + 1) begin
      for (b = 0; b < 8; b = b + 1) begin
        window[b*8 +: 8]      = valid_q[{rd_lo[l*WW +: WW], b[2:0]}] ? mem[rd_lo[l*WW +: WW]][b*8 +: 8] : 8'd0;
        window[64 + b*8 +: 8] = valid_q[{rd_hi[l*WW +: WW], b[2:0]}] ? mem[rd_hi[l*WW +: WW]][b*8 +: 8] : 8'd0;
      end
      shifted = window >> {rd_addr_i[l*AW +: 3], 3'b000};
      rd_data_o[l*64 +: 64] = shifted[63:0];
    end
    unused_shifted = ^shifted[127:64];
  end

endmodule
