`default_nettype none
// One Warp Engine context-restore extractor (combinational, two halves for two pipeline stages): the 8 bytes read
// from the chunk, then the restored value from them, the configuration and the length.
//
// Configuration (two 64-bit words, as the register- and stack-configuration memories hold them per extractor):
//   cfg_a_i[3:0]   kind: 0 none, 1 constant, 2 extraction, 3 length + k, 4 context, 5 data + k, 6 data_end + k,
//                  7 r10 + k, 8 map (k its index); anything else is none
//   cfg_a_i[15:8]  extraction: first chunk byte read
//   cfg_a_i[19:16] extraction: bytes read (1 to 8)
//   cfg_a_i[20]    extraction: big-endian (the first byte is the most significant)
//   cfg_a_i[31:24] extraction: shift, two's complement (positive: left, negative: right)
//   cfg_b_i        the constant, the extraction's mask after the shift, or k
// Output: kind_o 0 none, 1 scalar, 2 context, 3 data + k, 4 data_end + k, 5 r10 + k, 6 map; value_o the scalar, k
// or the map index. An extraction reads `shift(read(offset, length, order), shift) & mask`, bytes past the chunk
// reading 0 (the chunk itself is zero past the packet's end); length + k is the packet length plus k, modulo 2^64.
//
// First half: window_o, the 8 bytes from the extraction's offset (byte 0 lowest), from chunk_i and rd_cfg_a_i.
// Second half: kind_o and value_o from window_i (the first half's window, registered by the caller), len_i, cfg_a_i
// and cfg_b_i. A caller without a register between them connects window_o to window_i.
module warp_extract #(
  parameter integer CHUNK = 128  // chunk bytes, a multiple of 8, at most 256
) (
  input  logic [CHUNK*8-1:0] chunk_i,
  input  logic [63:0]        rd_cfg_a_i,
  output logic [63:0]        window_o,
  input  logic [63:0]        window_i,
  input  logic [15:0]        len_i,
  input  logic [63:0]        cfg_a_i,
  input  logic [63:0]        cfg_b_i,
  output logic [3:0]         kind_o,
  output logic [63:0]        value_o
);

  logic [63:0] le_q, be_q, read, moved;
  logic [7:0]  shift;
  logic [3:0]  length;

  assign length = cfg_a_i[19:16];
  assign shift  = cfg_a_i[31:24];

  // The window: the two aligned 8-byte words the offset falls in (words past the chunk read 0), then a byte shift
  // by the offset's low 3 bits, so the eight output bytes share one 16-way word select instead of eight 128-way
  // byte selects.
  // Offsets reach 255: the chunk is padded with zero words up to word 33.
  logic [64*34-1:0] padded;
  logic [5:0]       word;
  logic [63:0]      lo_w, hi_w;
  logic [127:0]     pair;

  assign padded = {{(64*34-CHUNK*8){1'b0}}, chunk_i};
  assign word   = {1'b0, rd_cfg_a_i[15:11]};

  always_comb begin
    lo_w     = padded[64*word +: 64];
    hi_w     = padded[64*(word+6'd1) +: 64];
    pair     = {hi_w, lo_w} >> {rd_cfg_a_i[10:8], 3'b000};
    window_o = pair[63:0];
  end


  always_comb begin
    le_q = 64'd0;
    be_q = 64'd0;
    for (integer i = 0; i < 8; i++) begin
      if (i < {28'd0, length}) begin
        le_q[8*i +: 8] = window_i[8*i +: 8];
        be_q = {be_q[55:0], window_i[8*i +: 8]};
      end
    end
    read = cfg_a_i[20] ? be_q : le_q;
    if (shift[7]) begin
      moved = read >> (~shift + 8'd1);
    end else begin
      moved = read << shift;
    end
  end

  always_comb begin
    kind_o  = 4'd0;
    value_o = cfg_b_i;
    case (cfg_a_i[3:0])
      4'd1: kind_o = 4'd1;
      4'd2: begin
        kind_o  = 4'd1;
        value_o = moved & cfg_b_i;
      end
      4'd3: begin
        kind_o  = 4'd1;
        value_o = {48'd0, len_i} + cfg_b_i;
      end
      4'd4: kind_o = 4'd2;
      4'd5: kind_o = 4'd3;
      4'd6: kind_o = 4'd4;
      4'd7: kind_o = 4'd5;
      4'd8: kind_o = 4'd6;
      default: value_o = 64'd0;
    endcase
  end

  logic unused;
  assign unused = ^{pair[127:64], cfg_a_i[63:32], cfg_a_i[23:21], cfg_a_i[15:4], rd_cfg_a_i};

endmodule
