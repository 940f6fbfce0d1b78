`default_nettype none
// eHDL CAM bank: the keys of SLOTS consecutive slots of an ehdl_hash_map, starting at slot first_i.
//
// ehdl_hash_map splits its keys into banks of 16 slots so that synthesis works on one bank module, shared by every
// bank of that shape, instead of one flat block whose logic grows with max_entries (a 256-entry CAM was still in
// ABC after five minutes). The block keeps the valid bits and decides; a bank stores keys and compares.
//
// match_o[i*NK + k] (slot-major, so the block concatenates its banks): compare key k equals slot i's stored key (valid
// bits are the block's business). With LPM = 1 the first NL compare keys are lookups of an LPM_TRIE map instead: their
// match bits are 0 and lpm_*_o give the valid slot (valid_i) with the longest prefix that covers the key, the lowest on
// a tie (see ehdl_hash_map). Writers act in index order, later ones winning: writer w, when wr_en_i[w], puts the bytes
// wr_mask_i[w] selects of wr_data_i[w] into slot wr_slot_i[w]. host_word_i addresses the key space as 8-byte words
// (slot s's word j at s * KWORDS + j); host_pair_o is {word host_word_i + 1, word host_word_i} for the words in this
// bank, 0 elsewhere. Reads show the keys before this cycle's writes. Keys are not reset (the block's valid bits are).
module ehdl_cam_bank #(
  parameter integer SLOTS     = 16,  // slots in this bank, 1..16
  parameter integer KEY_BYTES = 4,
  parameter integer NK        = 1,   // compare keys
  parameter integer NWR       = 1,   // key writers
  parameter integer SW        = 4,   // slot index width
  parameter integer LPM       = 0,
  parameter integer NL        = 1,   // with LPM: the compare keys that are LPM lookups
  parameter integer KWORDS    = 1,   // host words per slot
  parameter integer WW        = 8    // host word address width
) (
  input  logic                       clk_i,
  input  logic [SW-1:0]              first_i,
  input  logic [SLOTS-1:0]           valid_i,
  input  logic [NK*8*KEY_BYTES-1:0]  key_i,
  output logic [NK*SLOTS-1:0]        match_o,
  output logic [NL-1:0]              lpm_found_o,
  output logic [NL*32-1:0]           lpm_plen_o,
  output logic [NL*SW-1:0]           lpm_slot_o,
  input  logic [NWR-1:0]             wr_en_i,
  input  logic [NWR*SW-1:0]          wr_slot_i,
  input  logic [NWR*KEY_BYTES-1:0]   wr_mask_i,
  input  logic [NWR*8*KEY_BYTES-1:0] wr_data_i,
  input  logic [WW-1:0]              host_word_i,
  output logic [127:0]               host_pair_o
);

  localparam integer KB = 8 * KEY_BYTES;

  logic [KB*SLOTS-1:0] keys_q;
  logic [KB*SLOTS-1:0] keys_d;

  always_comb begin
    match_o = '0;
    for (integer k = 0; k < NK; k = k + 1) begin
      for (integer i = 0; i < SLOTS; i = i + 1) begin
        if (!(LPM == 1 && k < NL)) match_o[i*NK + k] = (keys_q[KB*i +: KB] == key_i[KB*k +: KB]);
      end
    end
  end

  integer best;
  integer plen;
  integer klen;
  logic   same;
  always_comb begin
    lpm_found_o = '0;
    lpm_plen_o  = '0;
    lpm_slot_o  = '0;
    best        = -1;
    plen        = 0;
    klen        = 0;
    same        = 1'b0;
    if (LPM == 1) begin
      for (integer k = 0; k < NL; k = k + 1) begin
        // Longest prefix: ascending, so a tie keeps the lowest slot.
        best = -1;
        klen = key_i[KB*k +: 32];
        for (integer i = 0; i < SLOTS; i = i + 1) begin
          plen = keys_q[KB*i +: 32];
          same = valid_i[i] && plen <= klen && plen <= 8 * (KEY_BYTES - 4) && plen > best;
          for (integer j = 0; j < 8 * (KEY_BYTES - 4); j = j + 1) begin
            if (j < plen && keys_q[KB*i + 32 + 8*(j/8) + 7 - j%8] != key_i[KB*k + 32 + 8*(j/8) + 7 - j%8]) begin
              same = 1'b0;
            end
          end
          if (same) begin
            best                   = plen;
            lpm_found_o[k]         = 1'b1;
            lpm_plen_o[32*k +: 32] = plen;
            lpm_slot_o[SW*k +: SW] = first_i + SW'(i);
          end
        end
      end
    end
  end

  logic [8*KWORDS*8-1:0] kpad;
  always_comb begin
    host_pair_o = '0;
    kpad        = '0;
    for (integer i = 0; i < SLOTS; i = i + 1) begin
      kpad         = '0;
      kpad[KB-1:0] = keys_q[KB*i +: KB];
      for (integer j = 0; j < KWORDS; j = j + 1) begin
        if ({1'b0, host_word_i} == (WW + 1)'(({{(32 - SW){1'b0}}, first_i} + i) * KWORDS + j)) begin
          host_pair_o[63:0] = kpad[64*j +: 64];
        end
        if ({1'b0, host_word_i} + (WW + 1)'(1) == (WW + 1)'(({{(32 - SW){1'b0}}, first_i} + i) * KWORDS + j)) begin
          host_pair_o[127:64] = kpad[64*j +: 64];
        end
      end
    end
  end

  always_comb begin
    keys_d = keys_q;
    for (integer w = 0; w < NWR; w = w + 1) begin
      for (integer i = 0; i < SLOTS; i = i + 1) begin
        if (wr_en_i[w] && wr_slot_i[SW*w +: SW] == first_i + SW'(i)) begin
          for (integer b = 0; b < KEY_BYTES; b = b + 1) begin
            if (wr_mask_i[w*KEY_BYTES + b]) keys_d[KB*i + 8*b +: 8] = wr_data_i[KB*w + 8*b +: 8];
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i) begin
    keys_q <= keys_d;
  end

endmodule
