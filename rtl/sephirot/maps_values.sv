`default_nettype none
// Map value storage for the maps module: eight byte-wide banks so that any 1-8 byte access at any offset is one cycle.
//
// Byte address A lives in bank A % 8, row A / 8. Each bank is a simple-dual-port block RAM (one write port, one read
// port), so a lane load and a lane store proceed in the same cycle:
// - lane read (r_*): eight consecutive bytes from any byte address; bank b serves byte (b - A) % 8 of the access, at
//   row A / 8, or the next row for banks below A % 8. r_rdata_o byte i is the byte at A + i, the cycle after r_en_i.
// - lane write (w_*): 1..8 consecutive bytes at any byte address, the same bank mapping.
// - engine (b_*): one aligned 64-bit row, read (b_re_i; b_rdata_o the next cycle) or written with byte enables
//   (b_we_i); the engine's read uses a bank's read port only when r_en_i is low and its write the write port only
//   when w_en_i is low (the lanes win; the engine retries, watching the same enables).
// A read of a byte written in the same cycle returns the byte as it was before the write (the core never does this:
// it stalls that case; an engine read racing a lane store sees either whole old bytes or, a cycle later, new ones).
// Each bank is a plain `if (we) mem[wa] <= wd; if (re) rd <= mem[ra];` block RAM (one RAMB18 per bank up to 2048
// rows).
module maps_values #(
  parameter integer WORDS = 512,             // rows of 8 bytes
  parameter integer AW    = $clog2(WORDS)    // row address width
) (
  input  logic          clk_i,
  input  logic          r_en_i,
  input  logic [AW+2:0] r_addr_i,            // byte address
  output logic [63:0]   r_rdata_o,
  input  logic          w_en_i,
  input  logic [AW+2:0] w_addr_i,            // byte address
  input  logic [3:0]    w_bytes_i,           // 1..8 bytes written
  input  logic [63:0]   w_wdata_i,           // byte 0 of the access in bits 7:0
  input  logic          b_re_i,
  input  logic [7:0]    b_we_i,              // byte enables of a row write
  input  logic [AW-1:0] b_row_i,
  input  logic [63:0]   b_wdata_i,
  output logic [63:0]   b_rdata_o
);

  logic [2:0]    shift_q;
  logic [63:0]   rd;      // the banks' read registers, bank b in bits 8b+7:8b
  logic [2:0]    r_lane;
  logic [AW-1:0] r_row;
  logic [2:0]    w_lane;
  logic [AW-1:0] w_row;

  assign r_lane = r_addr_i[2:0];
  assign r_row  = r_addr_i[AW+2:3];
  assign w_lane = w_addr_i[2:0];
  assign w_row  = w_addr_i[AW+2:3];

  always_ff @(posedge clk_i) begin
    if (r_en_i) begin
      shift_q <= r_lane;
    end
  end

  genvar b;
  generate
    for (b = 0; b < 8; b = b + 1) begin : g_bank
      // Block RAM at every size: Yosys 0.23 fails mapping a 512-deep bank to UltraScale+ LUT RAM
      (* ram_style = "block" *) logic [7:0] mem [WORDS];
      logic [AW-1:0] raddr;
      logic [AW-1:0] waddr;
      logic [2:0]    rindex;  // which byte of the lane read this bank serves
      logic [2:0]    windex;  // which byte of the lane write this bank serves
      logic          re;
      logic          we;
      logic [7:0]    wdata;
      logic [7:0]    rd_q;

      always_comb begin
        rindex = 3'(b) - r_lane;
        windex = 3'(b) - w_lane;
        if (r_en_i) begin
          // lane + index reaches 8: this bank's byte lies in the next row
          raddr = (({1'b0, r_lane} + {1'b0, rindex}) >= 4'd8) ? r_row + AW'(1) : r_row;
        end else begin
          raddr = b_row_i;
        end
        re = r_en_i || b_re_i;
        if (w_en_i) begin
          waddr = (({1'b0, w_lane} + {1'b0, windex}) >= 4'd8) ? w_row + AW'(1) : w_row;
          we    = {1'b0, windex} < w_bytes_i;
          wdata = w_wdata_i[8*windex +: 8];
        end else begin
          waddr = b_row_i;
          we    = b_we_i[b];
          wdata = b_wdata_i[8*b +: 8];
        end
      end

      always_ff @(posedge clk_i) begin
        if (we) begin
          mem[waddr] <= wdata;
        end
        if (re) begin
          rd_q <= mem[raddr];
        end
      end

      assign rd[8*b +: 8] = rd_q;
    end
  endgenerate

  logic [2:0] src;

  always_comb begin
    r_rdata_o = 64'd0;
    src       = 3'd0;
    for (integer i = 0; i < 8; i = i + 1) begin
      src = 3'(i) + shift_q;
      r_rdata_o[8*i +: 8] = rd[8*src +: 8];
    end
  end

  assign b_rdata_o = rd;

endmodule
