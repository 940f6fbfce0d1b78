`default_nettype none
// Difference buffer of the Active Packet Selector: packet writes held as 8-byte words and overlaid on reads.
//
// The packet page itself is written only by the input queue, one frame at a time; every store of the eBPF program
// lands here instead (hXDP, section 4.1.2), and reads and emission substitute the buffered bytes for the page's.
//
// - Each of the ENTRIES entries holds one 8-byte-aligned word of the page: a valid bit, the word address (page
//   offset / 8, 9 bits), 64 data bits and an 8-bit byte mask (bit i: byte i of the word has been written; data
//   bytes outside the mask are don't-care). No two valid entries hold the same word.
// - Storage: valid bits and word addresses in flip-flops (compared associatively); data and mask in distributed
//   RAM, one bank of ENTRIES x 72 bits per write slot (2 * LANES), each written only by its slot, so each has one
//   write port; a write stores its entry's whole merged word in its slot's bank and a 3-bit live-value table per
//   entry names the bank holding the entry's word. Readers (the write slots' read-modify-writes, two words per lane
//   overlay, FRAME_BYTES / 8 + 1 for the frame) find their entry by tag and read its row from the bank the table
//   names (asynchronous reads, one LUTRAM copy per reader and bank); the overlays never depend on the cycle's
//   writes, so the top has no combinational path from its lanes' stores to their loads. The entries' bytes no longer sit in
//   flip-flops behind per-entry merge multiplexers and 32-way AND-OR read trees. Yosys 0.23 synth_xilinx -family
//   xcup at LANES 4, ENTRIES 32: 29,306 LUTs as logic, 864 RAM32M16 (6,912 LUTs as distributed RAM: the eight
//   banks, copied per reader), 417 FFs, 118 CARRY4, no block RAM (about 13 minutes on the loaded machine), where
//   the flip-flop entries took 57,263 LUTs and 2,625 FFs.
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

  // The entries' tags, flattened: entry e is valid_q[e], word_q[9*e +: 9] (its bytes: the banks below).
  logic [ENTRIES-1:0]    valid_q;
  logic [ENTRIES*9-1:0]  word_q;
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

  // Storage. Entry e's tag (valid_q[e], word_q) lives in flip-flops (the associative compares); its bytes and mask
  // live in distributed RAM: one bank per write slot, ENTRIES rows of {mask, data}, written only by its slot, so
  // every bank has one write port. A write stores the entry's whole merged word (its old bytes, read from the bank
  // that holds them, under this cycle's), and lvt_q[e] (a live-value table) names the bank holding entry e's word.
  // Every reader (the leaders' read-modify-writes, the lane and frame overlays) finds its entry by tag, then reads
  // that row from every bank (asynchronous LUTRAM reads, one copy per reader) and keeps the bank lvt_q names.
  localparam integer EW      = (ENTRIES > 1) ? $clog2(ENTRIES) : 1;
  localparam integer SW      = (Slots > 1) ? $clog2(Slots) : 1;
  localparam integer RowW    = 72;                           // {mask, data}

  logic [SW-1:0] lvt_q [ENTRIES];

  // One-hot entry vectors as an entry index (the vectors have at most one bit set).
  function automatic logic [EW-1:0] index_of(input logic [ENTRIES-1:0] onehot);
    integer i;
    index_of = '0;
    for (i = 0; i < ENTRIES; i = i + 1) begin
      if (onehot[i]) index_of = index_of | EW'(i);
    end
  endfunction

  // The bank holding the word of the entry a one-hot vector names.
  function automatic logic [SW-1:0] bank_of(input logic [ENTRIES-1:0] onehot,
                                            input logic [ENTRIES*SW-1:0] lvt);
    integer i;
    bank_of = '0;
    for (i = 0; i < ENTRIES; i = i + 1) begin
      if (onehot[i]) bank_of = bank_of | lvt[SW*i +: SW];
    end
  endfunction

  logic [ENTRIES*SW-1:0] lvt_flat;
  genvar gv;
  generate
    for (gv = 0; gv < ENTRIES; gv = gv + 1) begin : g_lvt_flat
      assign lvt_flat[SW*gv +: SW] = lvt_q[gv];
    end
  endgenerate

  // Leaders: the entry each merges into (a hit) or is allocated (a miss that fits).
  logic [Slots*ENTRIES-1:0] tgt;     // bit s*ENTRIES+e: leader s writes entry e
  logic [Slots*ENTRIES-1:0] alloc;   // the same, for allocations only
  logic [ENTRIES-1:0]       alloc_any;
  logic [ENTRIES-1:0]       tgt_any;  // some leader writes entry e
  integer                   as, ae;

  always_comb begin
    alloc     = '0;
    alloc_any = '0;
    tgt_any   = '0;
    for (as = 0; as < Slots; as = as + 1) begin
      for (ae = 0; ae < ENTRIES; ae = ae + 1) begin
        alloc[as*ENTRIES + ae] = miss[as] & ~valid_q[ae]
                                 & (free_rank[CountW*ae +: CountW] == miss_rank[CountW*as +: CountW]);
        alloc_any[ae]          = alloc_any[ae] | alloc[as*ENTRIES + ae];
        tgt_any[ae]            = tgt_any[ae] | alloc[as*ENTRIES + ae] | hit[as*ENTRIES + ae];
      end
    end
    tgt = hit | alloc;
  end

  // Readers come in two groups with separate signals, so that no overlay output depends (even as a whole vector)
  // on this cycle's writes: the leaders' read-modify-writes (NL = Slots, reader s = leader s) and the lookups
  // (NO: lane l's two words at 2l and 2l+1, then the frame's words). Each reader has a one-hot entry vector, its
  // index, the bank the table names and whether any entry matched.
  localparam integer NL = Slots;
  localparam integer NO = 2 * LANES + FrWords;

  logic [NL*EW-1:0] l_idx;
  logic [NL*SW-1:0] l_bank;
  logic [NL-1:0]    l_any;
  logic [NO*EW-1:0] o_idx;
  logic [NO*SW-1:0] o_bank;
  logic [NO-1:0]    o_any;
  logic [8:0]       look_word;
  logic [ENTRIES-1:0] o_hot;
  integer           rr, re, rl;

  always_comb begin
    for (rr = 0; rr < NL; rr = rr + 1) begin
      // an allocation reads nothing old: only a hit's entry
      l_idx[EW*rr +: EW]  = index_of(hit[rr*ENTRIES +: ENTRIES]);
      l_bank[SW*rr +: SW] = bank_of(hit[rr*ENTRIES +: ENTRIES], lvt_flat);
      l_any[rr]           = |hit[rr*ENTRIES +: ENTRIES];
    end
  end

  always_comb begin
    look_word = '0;
    o_hot     = '0;
    for (rl = 0; rl < NO; rl = rl + 1) begin
      if (rl < 2 * LANES) look_word = ov_addr_i[12*(rl/2) + 3 +: 9] + 9'(rl % 2);
      else                look_word = fr_addr_i[11:3] + 9'(rl - 2 * LANES);
      for (re = 0; re < ENTRIES; re = re + 1) begin
        o_hot[re] = valid_q[re] & (word_q[9*re +: 9] == look_word);
      end
      o_idx[EW*rl +: EW]  = index_of(o_hot);
      o_bank[SW*rl +: SW] = bank_of(o_hot, lvt_flat);
      o_any[rl]           = |o_hot;
    end
  end

  // The banks: bank b is written by leader b at its entry, read by every reader at the reader's entry.
  logic [Slots-1:0]           bank_we;
  logic [Slots*EW-1:0]        bank_widx;
  logic [Slots*RowW-1:0]      bank_wrow;
  logic [Slots*NL*RowW-1:0]   l_rd;  // bank b, leader r at RowW*(b*NL + r)
  logic [Slots*NO*RowW-1:0]   o_rd;  // bank b, lookup r at RowW*(b*NO + r)

  genvar gb, gr;
  generate
    for (gb = 0; gb < Slots; gb = gb + 1) begin : g_bank
      logic [RowW-1:0] mem [ENTRIES];
      always_ff @(posedge clk_i) begin
        if (bank_we[gb]) mem[bank_widx[EW*gb +: EW]] <= bank_wrow[RowW*gb +: RowW];
      end
      for (gr = 0; gr < NL; gr = gr + 1) begin : g_lread
        assign l_rd[RowW*(gb*NL + gr) +: RowW] = mem[l_idx[EW*gr +: EW]];
      end
      for (gr = 0; gr < NO; gr = gr + 1) begin : g_oread
        assign o_rd[RowW*(gb*NO + gr) +: RowW] = mem[o_idx[EW*gr +: EW]];
      end
    end
  endgenerate

  // A reader's row: its entry's word from the bank the table names; mask zero when no entry holds the word.
  // (An AND-OR over the banks: with a multiplexer here Yosys' SAT-based SHARE pass analysed the 168 read ports
  // about two to three times more slowly.)
  logic [NL*RowW-1:0] l_row;
  logic [NO*RowW-1:0] o_row;
  integer             sr, sb, tr, tb;

  always_comb begin
    l_row = '0;
    for (sr = 0; sr < NL; sr = sr + 1) begin
      for (sb = 0; sb < Slots; sb = sb + 1) begin
        l_row[RowW*sr +: RowW] = l_row[RowW*sr +: RowW]
                                 | ({RowW{l_bank[SW*sr +: SW] == SW'(sb)}} & l_rd[RowW*(sb*NL + sr) +: RowW]);
      end
      l_row[RowW*sr + 64 +: 8] = l_row[RowW*sr + 64 +: 8] & {8{l_any[sr]}};
    end
  end

  always_comb begin
    o_row = '0;
    for (tr = 0; tr < NO; tr = tr + 1) begin
      for (tb = 0; tb < Slots; tb = tb + 1) begin
        o_row[RowW*tr +: RowW] = o_row[RowW*tr +: RowW]
                                 | ({RowW{o_bank[SW*tr +: SW] == SW'(tb)}} & o_rd[RowW*(tb*NO + tr) +: RowW]);
      end
      o_row[RowW*tr + 64 +: 8] = o_row[RowW*tr + 64 +: 8] & {8{o_any[tr]}};
    end
  end

  // Leader s's write: its merged bytes over the entry's old word (none for an allocation), into bank s.
  integer ws, wb;

  always_comb begin
    bank_we   = '0;
    bank_widx = '0;
    bank_wrow = '0;
    for (ws = 0; ws < Slots; ws = ws + 1) begin
      bank_we[ws]               = ~clear_i & (|tgt[ws*ENTRIES +: ENTRIES]);
      bank_widx[EW*ws +: EW]    = index_of(tgt[ws*ENTRIES +: ENTRIES]);
      bank_wrow[RowW*ws + 64 +: 8] = l_row[RowW*ws + 64 +: 8] | merged_mask[8*ws +: 8];
      for (wb = 0; wb < 8; wb = wb + 1) begin
        bank_wrow[RowW*ws + 8*wb +: 8] = merged_mask[8*ws + wb] ? merged_data[64*ws + 8*wb +: 8]
                                                                 : l_row[RowW*ws + 8*wb +: 8];
      end
    end
  end

  // Tags and the live-value table. Word and table entries of a free entry are don't-care (no reset); clear_i
  // drops the cycle's writes with the valid bits.
  genvar ge;
  generate
    for (ge = 0; ge < ENTRIES; ge = ge + 1) begin : g_entry
      logic [8:0]    new_word;
      logic [SW-1:0] new_bank;
      integer        s;

      always_comb begin
        new_word = '0;
        new_bank = '0;
        for (s = 0; s < Slots; s = s + 1) begin
          new_word = new_word | ({9{alloc[s*ENTRIES + ge]}} & slot_word[9*s +: 9]);
          new_bank = new_bank | ({SW{tgt[s*ENTRIES + ge]}} & SW'(s));
        end
      end

      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          valid_q[ge] <= 1'b0;
        end else if (clear_i) begin
          valid_q[ge] <= 1'b0;
        end else if (alloc_any[ge]) begin
          valid_q[ge] <= 1'b1;
        end
      end

      always_ff @(posedge clk_i) begin
        if (!clear_i) begin
          if (alloc_any[ge]) word_q[9*ge +: 9] <= new_word;
          if (tgt_any[ge]) lvt_q[ge] <= new_bank;
        end
      end
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

  // Lane overlays: the two words an 8-byte access can span, then shifted to the access's first byte.
  genvar gl;
  generate
    for (gl = 0; gl < LANES; gl = gl + 1) begin : g_overlay
      logic [2:0]   addr;  // the access's first byte in its first word
      logic [127:0] win_data;
      logic [15:0]  win_mask;
      logic [63:0]  sel_data;
      logic [7:0]   sel_mask;
      logic [7:0]   want;
      logic [63:0]  result;
      integer       b, k;

      always_comb begin
        addr     = ov_addr_i[12*gl +: 3];
        win_data = {o_row[RowW*(2*gl + 1) +: 64], o_row[RowW*(2*gl) +: 64]};
        win_mask = {o_row[RowW*(2*gl + 1) + 64 +: 8], o_row[RowW*(2*gl) + 64 +: 8]};
        // The access's bytes start at byte addr[2:0] of the window: an AND-OR over the eight offsets.
        sel_data = '0;
        sel_mask = '0;
        for (k = 0; k < 8; k = k + 1) begin
          sel_data = sel_data | ({64{addr == k[2:0]}} & win_data[8*k +: 64]);
          sel_mask = sel_mask | ({8{addr == k[2:0]}} & win_mask[k +: 8]);
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
  logic [8*FRAME_BYTES-1:0] fr_sel_data;
  logic [FRAME_BYTES-1:0]   fr_sel_mask;
  integer                ft, fb, fk;

  always_comb begin
    for (ft = 0; ft < FrWords; ft = ft + 1) begin
      fr_win_data[64*ft +: 64] = o_row[RowW*(2*LANES + ft) +: 64];
      fr_win_mask[8*ft +: 8]   = o_row[RowW*(2*LANES + ft) + 64 +: 8];
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
