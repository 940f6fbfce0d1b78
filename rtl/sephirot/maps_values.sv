`default_nettype none
// Map value storage for the maps module: eight byte-wide banks so that any 1-8 byte access at any offset is one cycle.
//
// Byte address A lives in bank A % 8, row A / 8. Port A (the lanes' value loads and stores) reaches eight consecutive
// bytes at any byte address: bank b serves byte (b - A) % 8 of the access, at row A / 8, or the next row for banks
// below A % 8. Port B (the maps engine: clearing, whole-value writes and reads) moves one aligned 64-bit row. The banks
// are single-ported; port A wins a cycle in which both are enabled, and the engine retries (it watches the same
// enable). Reads return in the next cycle: a_rdata_o byte i is the byte at A + i, b_rdata_o the row. Each bank is a
// plain `mem[addr] <= ...; rd <= mem[addr]` block RAM (one RAMB18 per bank up to 2048 rows).
module maps_values #(
  parameter integer WORDS = 512,             // rows of 8 bytes
  parameter integer AW    = $clog2(WORDS)    // row address width
) (
  input  logic          clk_i,
  input  logic          a_en_i,
  input  logic          a_we_i,
  input  logic [AW+2:0] a_addr_i,            // byte address
  input  logic [3:0]    a_bytes_i,           // 1..8 bytes written; reads always return 8
  input  logic [63:0]   a_wdata_i,           // byte 0 of the access in bits 7:0
  output logic [63:0]   a_rdata_o,
  input  logic          b_en_i,
  input  logic          b_we_i,
  input  logic [AW-1:0] b_row_i,
  input  logic [63:0]   b_wdata_i,
  output logic [63:0]   b_rdata_o
);

  logic [2:0]  shift_q;
  logic [63:0] rd;      // the banks' read registers, bank b in bits 8b+7:8b
  logic [2:0]  lane;
  logic [AW-1:0] a_row;

  assign lane  = a_addr_i[2:0];
  assign a_row = a_addr_i[AW+2:3];

  always_ff @(posedge clk_i) begin
    if (a_en_i) begin
      shift_q <= lane;
    end
  end

  genvar b;
  generate
    for (b = 0; b < 8; b = b + 1) begin : g_bank
      // Block RAM at every size: Yosys 0.23 fails mapping a 512-deep bank to UltraScale+ LUT RAM
      (* ram_style = "block" *) logic [7:0] mem [WORDS];
      logic [AW-1:0] addr;
      logic [2:0]    index;   // which byte of the access this bank serves
      logic          we;
      logic          carry;   // lane + index reaches 8: this bank's byte lies in the next row
      logic [7:0]    wdata;
      logic [7:0]    rd_q;

      always_comb begin
        index = 3'(b) - lane;
        carry = ({1'b0, lane} + {1'b0, index}) >= 4'd8;
        if (a_en_i) begin
          addr  = carry ? a_row + AW'(1) : a_row;
          we    = a_we_i && ({1'b0, index} < a_bytes_i);
          wdata = a_wdata_i[8*index +: 8];
        end else begin
          addr  = b_row_i;
          we    = b_en_i && b_we_i;
          wdata = b_wdata_i[8*b +: 8];
        end
      end

      always_ff @(posedge clk_i) begin
        if (we) begin
          mem[addr] <= wdata;
        end
        if (a_en_i || b_en_i) begin
          rd_q <= mem[addr];
        end
      end

      assign rd[8*b +: 8] = rd_q;
    end
  endgenerate

  logic [2:0] src;

  always_comb begin
    a_rdata_o = 64'd0;
    src       = 3'd0;
    for (integer i = 0; i < 8; i = i + 1) begin
      src = 3'(i) + shift_q;
      a_rdata_o[8*i +: 8] = rd[8*src +: 8];
    end
  end

  assign b_rdata_o = rd;

endmodule
