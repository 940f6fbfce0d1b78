`default_nettype none
// The Warp Engine's TCAM in block RAM: ENTRIES ternary lines over a KEY_BITS key, the lowest matching line wins.
//
// The key is cut into slices of 9 bits (key bit 8*b + i is bit i of key byte b; slice s is bits 9s..9s+8, the last
// one padded with zeros). Slice s has a 512-word RAM whose word A holds, bit e, whether line e accepts A in that slice
// ((A ^ value_s) & mask_s == 0); a key matches line e when every slice's word has bit e set. So one lookup is one
// read per slice (registered, first clock) and an AND with a priority encoder (registered, second clock): hit_o and
// index_o (the lowest matching line) are valid two en_i clocks after key_i. A line nobody configured has its bit
// clear in every slice and never matches.
//
// Configuration (load time): cfg_we_i writes cfg_data_i as word cfg_addr_i of slice cfg_slice_i. The host computes the
// words from the lines' (value, mask) pairs; docs/warp.md, "The engine in Verilog".
module warp_tcam #(
  parameter integer KEY_BITS = 128,  // key bits
  parameter integer ENTRIES  = 64,   // lines, a multiple of 8
  parameter integer IW       = $clog2(ENTRIES),
  parameter integer SLICES   = (KEY_BITS + 8) / 9
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                en_i,
  input  logic [KEY_BITS-1:0] key_i,
  output logic                hit_o,
  output logic [IW-1:0]       index_o,
  input  logic                cfg_we_i,
  input  logic [7:0]          cfg_slice_i,
  input  logic [8:0]          cfg_addr_i,
  input  logic [ENTRIES-1:0]  cfg_data_i
);

  logic [SLICES*9-1:0] key_pad;
  logic [ENTRIES-1:0]  accept [0:SLICES-1];
  logic [ENTRIES-1:0]  all_match;

  assign key_pad = {{(SLICES*9-KEY_BITS){1'b0}}, key_i};

  for (genvar s = 0; s < SLICES; s++) begin : g_slice
    ram_sdp #(
      .WIDTH(ENTRIES),
      .DEPTH(512)
    ) u_ram (
      .clk_i    (clk_i),
      .wr_en_i  (cfg_we_i && cfg_slice_i == s),
      .wr_addr_i(cfg_addr_i),
      .wr_data_i(cfg_data_i),
      .wr_be_i  ({(ENTRIES/8){1'b1}}),
      .rd_en_i  (en_i),
      .rd_addr_i(key_pad[9*s +: 9]),
      .rd_data_o(accept[s])
    );
  end

  always_comb begin
    all_match = {ENTRIES{1'b1}};
    for (integer s = 0; s < SLICES; s++) all_match = all_match & accept[s];
  end

  logic          hit_d;
  logic [IW-1:0] index_d;

  always_comb begin
    hit_d   = 1'b0;
    index_d = '0;
    for (integer e = ENTRIES - 1; e >= 0; e--) begin
      if (all_match[e]) begin
        hit_d   = 1'b1;
        index_d = e[IW-1:0];
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hit_o   <= 1'b0;
      index_o <= '0;
    end else if (en_i) begin
      hit_o   <= hit_d;
      index_o <= index_d;
    end
  end

endmodule
