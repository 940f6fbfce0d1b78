`default_nettype none
// Difference buffer of the Active Packet Selector: packet writes held as 8-byte words and overlaid on reads.
//
// The packet page itself is written only by the input queue, one frame at a time; every store of the eBPF program
// lands here instead (hXDP, section 4.1.2), and reads and emission substitute the buffered bytes for the page's.
//
// - Each of the ENTRIES entries holds one 8-byte-aligned word of the page: a valid bit, the word address (page
//   offset / 8, 9 bits), 64 data bits and an 8-bit byte mask (bit i: byte i of the word has been written; data
//   bytes outside the mask are don't-care). No two valid entries hold the same word.
// - Writes: LANES write ports; lane l writes wr_bytes_i[l] bytes (0 to 8; larger values act as 8) of
//   wr_data_i[l], little-endian from its low byte, at page offset wr_addr_i[l] (any alignment; offsets wrap
//   modulo 4096). A write touches one or two words. Within a cycle the lanes apply in lane order: on overlapping
//   bytes the higher lane wins. A touched word merges into the entry holding it; the words no entry holds take
//   the free entries in order of lane (the first such word the lowest free entry).
// - Overflow: when a cycle's writes need more free entries than there are, the words that fit are stored, the
//   others are dropped and overflow_o rises and stays high until clear_i. The buffer's contents are then
//   incomplete: the core must abort the packet (XDP_ABORTED), as it does on an out-of-bounds access.
// - Overlays are combinational and see the state at the start of the cycle (not the same cycle's writes):
//   ov_data_o[l] is ov_base_i[l] (the page's bytes at ov_addr_i[l]) with the buffered bytes substituted, its bytes
//   from ov_bytes_i[l] up (0 to 8; larger values act as 8) zero; fr_data_o is the same for FRAME_BYTES bytes from
//   fr_addr_i, for emission.
// - clear_i empties the buffer (a new packet); writes in the same cycle are dropped.
module diff_buffer #(
  parameter integer LANES       = 4,   // parallel write and overlay ports (Sephirot's lanes)
  parameter integer ENTRIES     = 32,  // 8-byte words held (any number from 1)
  parameter integer FRAME_BYTES = 32   // width of the emission overlay, a multiple of 8
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     clear_i,

  input  logic [LANES-1:0]         wr_en_i,
  input  logic [LANES*12-1:0]      wr_addr_i,
  input  logic [LANES*4-1:0]       wr_bytes_i,
  input  logic [LANES*64-1:0]      wr_data_i,
  output logic                     overflow_o,

  input  logic [LANES*12-1:0]      ov_addr_i,
  input  logic [LANES*4-1:0]       ov_bytes_i,
  input  logic [LANES*64-1:0]      ov_base_i,
  output logic [LANES*64-1:0]      ov_data_o,

  input  logic [11:0]              fr_addr_i,
  input  logic [8*FRAME_BYTES-1:0] fr_base_i,
  output logic [8*FRAME_BYTES-1:0] fr_data_o
);

  localparam integer Slots   = 2 * LANES;           // words a cycle's writes can touch
  localparam integer CountW  = $clog2(ENTRIES + 1); // holds 0..ENTRIES
  localparam integer FrWords = FRAME_BYTES / 8 + 1; // words an unaligned frame spans

  // The entries, flattened: entry e is valid_q[e], word_q[9*e +: 9], mask_q[8*e +: 8], data_q[64*e +: 64].
  logic [ENTRIES-1:0]    valid_q;
  logic [ENTRIES*9-1:0]  word_q;
  logic [ENTRIES*8-1:0]  mask_q;
  logic [ENTRIES*64-1:0] data_q;
  logic                  overflow_q;

  // A byte count as a mask of the low bytes of a word.
  function automatic logic [7:0] low_bytes(input logic [3:0] count);
    low_bytes = (count >= 4'd8) ? 8'hff : ((8'h01 << count) - 8'h01);
  endfunction

  // Each write split into its two word slots: slot 2l is lane l's first word, slot 2l+1 the following one.
  logic [Slots-1:0]    slot_valid;
  logic [Slots*9-1:0]  slot_word;
  logic [Slots*8-1:0]  slot_mask;
  logic [Slots*64-1:0] slot_data;
  logic [15:0]         span_mask;
  logic [127:0]        span_data;
  logic [11:0]         lane_addr;
  integer              l;

  always_comb begin
    slot_valid = '0;
    slot_word  = '0;
    slot_mask  = '0;
    slot_data  = '0;
    span_mask  = '0;
    span_data  = '0;
    lane_addr  = '0;
    for (l = 0; l < LANES; l = l + 1) begin
      lane_addr = wr_addr_i[12*l +: 12];
      span_mask = {8'd0, low_bytes(wr_bytes_i[4*l +: 4])} << lane_addr[2:0];
      span_data = {64'd0, wr_data_i[64*l +: 64]} << {lane_addr[2:0], 3'd0};
      slot_word[9*(2*l) +: 9]        = lane_addr[11:3];
      slot_word[9*(2*l+1) +: 9]      = lane_addr[11:3] + 9'd1;
      slot_mask[8*(2*l) +: 8]        = span_mask[7:0];
      slot_mask[8*(2*l+1) +: 8]      = span_mask[15:8];
      slot_data[64*(2*l) +: 64]      = span_data[63:0];
      slot_data[64*(2*l+1) +: 64]    = span_data[127:64];
      slot_valid[2*l]                = wr_en_i[l] & (|span_mask[7:0]);
      slot_valid[2*l+1]              = wr_en_i[l] & (|span_mask[15:8]);
    end
  end

  // Slots of one word are merged, in slot (= lane) order, into the first of them, the leader; the later ones are
  // absorbed. merged_mask/merged_data of a leader hold the word's bytes written this cycle.
  logic [Slots-1:0]    leader;
  logic [Slots*8-1:0]  merged_mask;
  logic [Slots*64-1:0] merged_data;

  genvar gs;
  generate
    for (gs = 0; gs < Slots; gs = gs + 1) begin : g_slot
      logic        lead;
      logic        same;
      logic [7:0]  mmask;
      logic [63:0] mdata;
      integer      t, b;

      always_comb begin
        lead  = slot_valid[gs];
        same  = 1'b0;
        mmask = '0;
        mdata = '0;
        for (t = 0; t < Slots; t = t + 1) begin
          same = slot_valid[t] && (slot_word[9*t +: 9] == slot_word[9*gs +: 9]);
          if (t < gs) begin
            lead = lead & ~same;
          end else begin
            for (b = 0; b < 8; b = b + 1) begin
              mdata[8*b +: 8] = (same && slot_mask[8*t + b]) ? slot_data[64*t + 8*b +: 8] : mdata[8*b +: 8];
              mmask[b]        = mmask[b] | (same & slot_mask[8*t + b]);
            end
          end
        end
      end

      assign leader[gs]               = lead;
      assign merged_mask[8*gs +: 8]   = mmask;
      assign merged_data[64*gs +: 64] = mdata;
    end
  endgenerate

  // Leaders whose word an entry holds merge into it; the others (misses) take free entries: the miss of rank r
  // (r misses before it in slot order) takes the free entry of rank r (r free entries below it).
  logic [Slots*ENTRIES-1:0] hit;        // bit s*ENTRIES+e: leader s's word is in entry e
  logic [Slots-1:0]         miss;
  logic [Slots*CountW-1:0]  miss_rank;  // misses before slot s
  logic [ENTRIES*CountW-1:0] free_rank; // free entries before entry e
  logic [CountW-1:0]        misses;
  logic [CountW-1:0]        frees;
  integer                   hs, he;

  always_comb begin
    hit       = '0;
    miss      = '0;
    miss_rank = '0;
    free_rank = '0;
    misses    = '0;
    frees     = '0;
    for (he = 0; he < ENTRIES; he = he + 1) begin
      free_rank[CountW*he +: CountW] = frees;
      frees                          = frees + {{(CountW-1){1'b0}}, ~valid_q[he]};
    end
    for (hs = 0; hs < Slots; hs = hs + 1) begin
      for (he = 0; he < ENTRIES; he = he + 1) begin
        hit[hs*ENTRIES + he] = leader[hs] & valid_q[he] & (word_q[9*he +: 9] == slot_word[9*hs +: 9]);
      end
      miss[hs]                       = leader[hs] & ~(|hit[hs*ENTRIES +: ENTRIES]);
      miss_rank[CountW*hs +: CountW] = misses;
      misses                         = misses + {{(CountW-1){1'b0}}, miss[hs]};
    end
  end

  // Each entry's next state: a merge of the leader holding its word, or the leader it is allocated to (at most one
  // of either, as leaders' words differ and entries' words differ).
  genvar ge;
  generate
    for (ge = 0; ge < ENTRIES; ge = ge + 1) begin : g_entry
      logic        valid_e;
      logic [8:0]  word_e;
      logic [7:0]  mask_e;
      logic [63:0] data_e;
      logic [Slots-1:0] alloc;
      logic [Slots-1:0] touch;     // the leader merging into or allocating this entry (at most one)
      logic [8:0]  new_word;
      logic [7:0]  upd_mask;
      logic [63:0] upd_data;
      logic [7:0]  mask_d;
      logic [63:0] data_d;
      integer      s, b;

      always_comb begin
        alloc    = '0;
        touch    = '0;
        new_word = '0;
        upd_mask = '0;
        upd_data = '0;
        for (s = 0; s < Slots; s = s + 1) begin
          alloc[s] = miss[s] & ~valid_e & (free_rank[CountW*ge +: CountW] == miss_rank[CountW*s +: CountW]);
          touch[s] = alloc[s] | hit[s*ENTRIES + ge];
          new_word = new_word | ({9{alloc[s]}} & slot_word[9*s +: 9]);
          upd_mask = upd_mask | ({8{touch[s]}} & merged_mask[8*s +: 8]);
          upd_data = upd_data | ({64{touch[s]}} & merged_data[64*s +: 64]);
        end
        // A new entry's mask is the written bytes alone; its other data bytes are don't-care (they stay masked).
        mask_d = ((|alloc) ? 8'd0 : mask_e) | upd_mask;
        for (b = 0; b < 8; b = b + 1) begin
          data_d[8*b +: 8] = upd_mask[b] ? upd_data[8*b +: 8] : data_e[8*b +: 8];
        end
      end

      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          valid_e <= 1'b0;
        end else if (clear_i) begin
          valid_e <= 1'b0;
        end else if (|alloc) begin
          valid_e <= 1'b1;
        end
      end

      // Word, mask and data of a free entry are don't-care, so they need no reset; clear_i drops the cycle's
      // writes with the valid bits.
      always_ff @(posedge clk_i) begin
        if (!clear_i) begin
          if (|alloc) begin
            word_e <= new_word;
          end
          mask_e <= mask_d;
          data_e <= data_d;
        end
      end

      assign valid_q[ge]          = valid_e;
      assign word_q[9*ge +: 9]    = word_e;
      assign mask_q[8*ge +: 8]    = mask_e;
      assign data_q[64*ge +: 64]  = data_e;
    end
  endgenerate

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      overflow_q <= 1'b0;
    end else if (clear_i) begin
      overflow_q <= 1'b0;
    end else if (misses > frees) begin
      overflow_q <= 1'b1;
    end
  end

  assign overflow_o = overflow_q;

  // Lane overlays: the two words an 8-byte access can span, gathered from the entries (at most one holds each
  // word), then shifted to the access's first byte.
  genvar gl;
  generate
    for (gl = 0; gl < LANES; gl = gl + 1) begin : g_overlay
      logic [11:0]  addr;
      logic [8:0]   word0;
      logic [8:0]   word1;
      logic [127:0] win_data;
      logic [15:0]  win_mask;
      logic [63:0]  sel_data;
      logic [7:0]   sel_mask;
      logic [7:0]   want;
      logic         h0;
      logic         h1;
      logic [63:0]  result;
      integer       e, b, k;

      always_comb begin
        addr     = ov_addr_i[12*gl +: 12];
        word0    = addr[11:3];
        word1    = addr[11:3] + 9'd1;
        win_data = '0;
        win_mask = '0;
        h0       = 1'b0;
        h1       = 1'b0;
        for (e = 0; e < ENTRIES; e = e + 1) begin
          h0       = valid_q[e] & (word_q[9*e +: 9] == word0);
          h1       = valid_q[e] & (word_q[9*e +: 9] == word1);
          win_data = win_data | {{64{h1}} & data_q[64*e +: 64], {64{h0}} & data_q[64*e +: 64]};
          win_mask = win_mask | {{8{h1}} & mask_q[8*e +: 8], {8{h0}} & mask_q[8*e +: 8]};
        end
        // The access's bytes start at byte addr[2:0] of the window: an AND-OR over the eight offsets.
        sel_data = '0;
        sel_mask = '0;
        for (k = 0; k < 8; k = k + 1) begin
          sel_data = sel_data | ({64{addr[2:0] == k[2:0]}} & win_data[8*k +: 64]);
          sel_mask = sel_mask | ({8{addr[2:0] == k[2:0]}} & win_mask[k +: 8]);
        end
        want   = low_bytes(ov_bytes_i[4*gl +: 4]);
        result = '0;
        for (b = 0; b < 8; b = b + 1) begin
          result[8*b +: 8] = ~want[b] ? 8'd0 : (sel_mask[b] ? sel_data[8*b +: 8] : ov_base_i[64*gl + 8*b +: 8]);
        end
      end

      assign ov_data_o[64*gl +: 64] = result;
    end
  endgenerate

  // Frame overlay: the same over the FrWords words a FRAME_BYTES access from fr_addr_i spans.
  logic [64*FrWords-1:0] fr_win_data;
  logic [8*FrWords-1:0]  fr_win_mask;
  logic [8:0]            fr_word;
  logic                  fr_hit;
  logic [8*FRAME_BYTES-1:0] fr_sel_data;
  logic [FRAME_BYTES-1:0]   fr_sel_mask;
  integer                fe, ft, fb, fk;

  always_comb begin
    fr_win_data = '0;
    fr_win_mask = '0;
    fr_word     = '0;
    fr_hit      = 1'b0;
    for (fe = 0; fe < ENTRIES; fe = fe + 1) begin
      for (ft = 0; ft < FrWords; ft = ft + 1) begin
        fr_word                   = fr_addr_i[11:3] + ft[8:0];
        fr_hit                    = valid_q[fe] & (word_q[9*fe +: 9] == fr_word);
        fr_win_data[64*ft +: 64]  = fr_win_data[64*ft +: 64] | ({64{fr_hit}} & data_q[64*fe +: 64]);
        fr_win_mask[8*ft +: 8]    = fr_win_mask[8*ft +: 8] | ({8{fr_hit}} & mask_q[8*fe +: 8]);
      end
    end
    fr_sel_data = '0;
    fr_sel_mask = '0;
    for (fk = 0; fk < 8; fk = fk + 1) begin
      fr_sel_data = fr_sel_data | ({(8*FRAME_BYTES){fr_addr_i[2:0] == fk[2:0]}} & fr_win_data[8*fk +: 8*FRAME_BYTES]);
      fr_sel_mask = fr_sel_mask | ({FRAME_BYTES{fr_addr_i[2:0] == fk[2:0]}} & fr_win_mask[fk +: FRAME_BYTES]);
    end
    for (fb = 0; fb < FRAME_BYTES; fb = fb + 1) begin
      fr_data_o[8*fb +: 8] = fr_sel_mask[fb] ? fr_sel_data[8*fb +: 8] : fr_base_i[8*fb +: 8];
    end
  end

endmodule
