`default_nettype none
// One Warp Engine key-extractor stage (a clock): up to READ bytes of the chunk or of the packet length, ANDed with a
// mask, written into the lookup key; the chunk, the length and the rest of the packet's state go on to the next stage.
//
// Configuration word cfg_i (the same for every packet, written through the engine's configuration port):
//   [0] enabled, [1] reads the length (16 bits, most significant byte first, saturated at 65535) instead of the
//   chunk, [15:8] first byte read, [19:16] bytes read (at most READ), [31:24] key offset, [32+8*i +: 8] byte i's mask.
// Bytes past the chunk read 0; key bytes past KEY_BYTES are not written. All registers advance only with en_i (the
// engine's global advance).
module warp_key_stage #(
  parameter integer CHUNK     = 128,  // chunk bytes, a multiple of 8, at most 256
  parameter integer KEY_BYTES = 16,   // key bytes
  parameter integer READ      = 2,    // bytes one stage reads (at most 4)
  parameter integer TAG_W     = 8     // bits of state carried along unchanged
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   en_i,
  input  logic [63:0]            cfg_i,
  input  logic                   valid_i,
  input  logic [CHUNK*8-1:0]     chunk_i,
  input  logic [15:0]            len_i,
  input  logic [KEY_BYTES*8-1:0] key_i,
  input  logic [TAG_W-1:0]       tag_i,
  output logic                   valid_o,
  output logic [CHUNK*8-1:0]     chunk_o,
  output logic [15:0]            len_o,
  output logic [KEY_BYTES*8-1:0] key_o,
  output logic [TAG_W-1:0]       tag_o
);

  logic [KEY_BYTES*8-1:0] key_d;
  logic [7:0]             src, at;
  logic [3:0]             width;

  assign src   = cfg_i[15:8];
  assign width = cfg_i[19:16];
  assign at    = cfg_i[31:24];

  // The bytes read: the two aligned 8-byte words the offset falls in (words past the chunk read 0), shifted by the
  // offset's low 3 bits (one shared word select instead of a 128-way byte select per byte).
  logic [64*34-1:0] padded;
  logic [5:0]       word;
  logic [127:0]     pair;
  logic [63:0]      got;

  assign padded = {{(64*34-CHUNK*8){1'b0}}, chunk_i};
  assign word   = {1'b0, src[7:3]};

  always_comb begin
    pair = {padded[64*(word+6'd1) +: 64], padded[64*word +: 64]} >> {src[2:0], 3'b000};
    got  = pair[63:0];
    if (cfg_i[1]) got = {48'd0, src == 8'd0 ? {len_i[7:0], len_i[15:8]} : (src == 8'd1 ? {8'd0, len_i[7:0]} : 16'd0)};
    key_d = key_i;
    for (integer i = 0; i < READ; i++) begin
      if (cfg_i[0] && i < {28'd0, width} && {24'd0, at} + i < KEY_BYTES) begin
        key_d[8*(at + i[7:0]) +: 8] = got[8*i +: 8] & cfg_i[32+8*i +: 8];
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_o <= 1'b0;
    end else if (en_i) begin
      valid_o <= valid_i;
    end
  end

  always_ff @(posedge clk_i) begin
    if (en_i) begin
      chunk_o <= chunk_i;
      len_o   <= len_i;
      key_o   <= key_d;
      tag_o   <= tag_i;
    end
  end

  logic unused;
  assign unused = ^{cfg_i[23:20], cfg_i[7:2], pair[127:64], got[63:8*READ]};

endmodule
