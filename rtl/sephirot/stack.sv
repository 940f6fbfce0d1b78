`default_nettype none
// Sephirot stack memory: FRAMES frames of 512 bytes in 64-bit words, in synchronous RAM (block RAM or LUT RAM, as
// synthesis picks), with one read and one write port per lane and the helper's port.
//
// Timing, as the core sees it. A lane's read address is issued a cycle ahead (rd_addr_i, in the core's decode
// stage, where addresses are formed); from the next cycle on the lane tracks that address until the next edge
// without hold_i. rd_data_o holds the eight bytes at the tracked address (little-endian, bit 0 = the lowest byte,
// whatever the access size) as the memory is in this cycle: after every earlier edge's writes, before this cycle's
// lane writes. A lane store (we_i, 1 to 8 bytes, at any byte offset: an unaligned access touches two words) writes at
// the lane's tracked address at the clock edge; stores of one bundle apply in lane order, so a later lane wins where
// two overlap. The helper's port (hreq_i with hwe_i, haddr_i, hbytes_i, hwdata_i) makes one access a cycle: a read
// answers on hrdata_o in the next cycle (the memory as it is in the request's cycle), a write acts in its cycle as
// far as every reader can tell (it lands a cycle later, forwarded meanwhile). It borrows lane 0's read port, whose
// tracked data then holds (the core uses it only while lane 0 waits on the helper). clear_i makes the whole memory
// read as zero (a new packet) in one cycle.
//
// Structure. Synchronous RAM has one write port, so every writer (each lane, the helper) owns a copy of the memory,
// split into even and odd words so that an access touches at most one word of each half; a live-value table in
// flip-flops (a copy number and a valid bit per 8-byte word) says which copy holds a word's current value, and a
// cleared valid bit makes the word read as zero. Writes are whole words: a store merges its bytes into the word as the
// lane reads it (the read it issued in decode), after the lower lanes' stores of the same bundle; the helper's writes
// are read, merged and written a cycle later. A read of a word written at the edge it is issued at gets the written
// word from a register of that edge's writes (the RAM's read-during-write value is never used). Each copy has one
// read port per lane: synthesis replicates it per port.
module stack #(
  parameter integer LANES  = 4,
  parameter integer FRAMES = 8,
  parameter integer AW     = 12   // byte-address bits: $clog2(FRAMES * 512)
) (
  input  logic                 clk_i,
  input  logic                 clear_i,
  // lanes: read addresses issued a cycle ahead, tracked data, stores at the tracked address
  input  logic [LANES*AW-1:0]  rd_addr_i,
  input  logic                 hold_i,       // keep tracking the current addresses (the core's execute stage waits)
  output logic [LANES*64-1:0]  rd_data_o,
  input  logic [LANES-1:0]     we_i,
  input  logic [LANES*4-1:0]   wr_bytes_i,
  input  logic [LANES*64-1:0]  wr_data_i,
  // the helper's port
  input  logic                 hreq_i,
  input  logic                 hwe_i,
  input  logic [AW-1:0]        haddr_i,
  input  logic [3:0]           hbytes_i,
  input  logic [63:0]          hwdata_i,
  output logic [63:0]          hrdata_o
);

  localparam integer Words = FRAMES * 64;
  localparam integer Half  = Words / 2;
  localparam integer WW    = AW - 3;         // word index bits
  localparam integer HW    = WW - 1;         // index bits within a half
  localparam integer NC    = LANES + 1;      // copies: one per lane, the helper's last
  localparam integer CW    = $clog2(NC);
  localparam integer Helper = LANES;
  localparam integer NF    = 2 * NC;         // writes of one edge: two words per writer (helper's first)

  integer l;
  integer k;
  integer s;
  integer b;
  integer e;

  // Byte window of an access at byte offset off_i of 1..8 bytes: enables over the two words it touches.
  function automatic [15:0] enables(input logic [2:0] off_i, input logic [3:0] bytes_i);
    enables = (bytes_i == 4'd0) ? 16'd0 : ((16'hffff >> (5'd16 - {1'b0, bytes_i})) << off_i);
  endfunction

  // ---------------------------------------------------------------------------------------------------------------
  // Issue: the addresses read at this edge (lane 0's is the helper's while it asks)
  // ---------------------------------------------------------------------------------------------------------------
  logic [LANES*AW-1:0]  iss_addr;
  logic [LANES*WW-1:0]  iss_word;             // per lane and half: the word read
  logic [2*LANES*WW-1:0] iss_half_word;
  logic [LANES-1:0]     keep;                 // the lane's tracked address and data stay

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      iss_addr[l*AW +: AW] = rd_addr_i[l*AW +: AW];
      keep[l] = hold_i;
    end
    if (hreq_i) begin
      iss_addr[0 +: AW] = haddr_i;
      keep[0] = 1'b1;
    end
    for (l = 0; l < LANES; l = l + 1) begin
      iss_word[l*WW +: WW] = iss_addr[l*AW+3 +: WW];
      // Half p gets the word of parity p among lo and lo + 1.
      for (s = 0; s < 2; s = s + 1) begin
        iss_half_word[(l*2+s)*WW +: WW] = (iss_word[l*WW] == s[0]) ? iss_word[l*WW +: WW]
                                                                    : iss_word[l*WW +: WW] + 1'b1;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Copies: one write port (their writer's), one synchronous read port per lane
  // ---------------------------------------------------------------------------------------------------------------
  logic [NC*2-1:0]      mwe;
  logic [NC*2*HW-1:0]   mwaddr;
  logic [NC*2*64-1:0]   mwdata;
  logic [NC*2*LANES*64-1:0] mq;               // [copy][half][lane]: the word read at the last edge

  genvar gc;
  genvar gp;
  genvar gl;
  generate
    for (gc = 0; gc < NC; gc = gc + 1) begin : g_copy
      for (gp = 0; gp < 2; gp = gp + 1) begin : g_half
        logic [63:0] mem [0:Half-1];

        always_ff @(posedge clk_i) begin
          if (mwe[gc*2+gp]) begin
            mem[mwaddr[(gc*2+gp)*HW +: HW]] <= mwdata[(gc*2+gp)*64 +: 64];
          end
        end

        for (gl = 0; gl < LANES; gl = gl + 1) begin : g_rd
          always_ff @(posedge clk_i) begin
            mq[((gc*2+gp)*LANES+gl)*64 +: 64] <= mem[iss_half_word[(gl*2+gp)*WW+1 +: HW]];
          end
        end
      end
    end
  endgenerate

  // ---------------------------------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------------------------------
  // The table in bit planes, [half][copy bit][word within the half] and [half][word within the half], so that a
  // lookup is a plain multiplexer on one plane.
  logic [2*CW*Half-1:0]   lvt_q;              // the copy holding each word
  logic [2*Half-1:0]      valid_q;            // the word was written in this packet
  logic [LANES*AW-1:0]    ra_q;               // tracked addresses
  logic [LANES-1:0]       fresh_q;            // the RAM output is for the tracked address (read at the last edge)
  logic [LANES*2*CW-1:0]  lk_copy_q;          // [lane][half] table lookups of the words read at the last edge
  logic [LANES*2-1:0]     lk_valid_q;
  logic [LANES*128-1:0]   kd_q;               // tracked words (lo, hi) as they were in the last cycle
  logic [NC*2-1:0]        fw_en_q;            // the last edge's writes, [copy][half]: word and value
  logic [NC*2*HW-1:0]     fw_addr_q;
  logic [NC*2*64-1:0]     fw_data_q;
  logic                   hreq_q;             // the helper's access of the last cycle
  logic                   hwe_q;
  logic [AW-1:0]          haddr_q;
  logic [3:0]             hbytes_q;
  logic [63:0]            hwdata_q;

  // ---------------------------------------------------------------------------------------------------------------
  // This cycle's words: RAM (through the table) or the held words, then the last edge's writes, then the helper's
  // write of this cycle
  // ---------------------------------------------------------------------------------------------------------------
  logic [LANES*128-1:0] ram_w;                // [lane][lo, hi] the RAM's words for the address read last edge
  logic [LANES*2*WW-1:0] cur_word;            // [lane][lo, hi] the tracked words' indices
  logic [LANES*128-1:0] base;                 // RAM or held, with the last edge's writes
  logic [LANES*128-1:0] cur;                  // ... and the helper's write of this cycle
  logic [2*WW-1:0]      h_word;               // the helper's access: its words
  logic [127:0]         h_base;               // ... as the memory is (its read was issued in the last cycle)
  logic [127:0]         h_win;
  logic [15:0]          h_be;
  logic [127:0]         h_merged;
  logic [1:0]           h_wen;                // the helper's write lands at this edge, per word (lo, hi)
  logic [127:0]         h_shift;
  logic                 par;
  logic [CW-1:0]        cp;
  logic                 hv;
  logic                 unused_h_shift;

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      for (s = 0; s < 2; s = s + 1) begin
        // Word s (lo, hi) of the address read at the last edge (lane 0's is the helper's when it asked): the half
        // of its parity holds it.
        par = ((l == 0 && hreq_q) ? haddr_q[3] : ra_q[l*AW+3]) ^ s[0];
        cp = par ? lk_copy_q[(l*2+1)*CW +: CW] : lk_copy_q[l*2*CW +: CW];
        hv = par ? lk_valid_q[l*2+1] : lk_valid_q[l*2];
        ram_w[l*128+s*64 +: 64] = 64'd0;
        for (k = 0; k < NC; k = k + 1) begin
          if (hv && cp == k[CW-1:0]) begin
            ram_w[l*128+s*64 +: 64] = par ? mq[((k*2+1)*LANES+l)*64 +: 64] : mq[(k*2*LANES+l)*64 +: 64];
          end
        end
        cur_word[(l*2+s)*WW +: WW] = ra_q[l*AW+3 +: WW] + {{(WW-1){1'b0}}, s[0]};
      end
    end
  end

  // A word as this cycle sees it: v_i (as of the last cycle) after the last edge's writes, in their order (the
  // helper's, then the lanes').
  function automatic [63:0] forwarded(input logic [WW-1:0] word_i, input logic [63:0] v_i);
    logic [63:0] v;
    integer f;
    integer c;
    v = v_i;
    for (f = 0; f < NC; f = f + 1) begin
      c = (f == 0) ? Helper : f - 1;
      if (word_i[0] ? (fw_en_q[c*2+1] && fw_addr_q[(c*2+1)*HW +: HW] == word_i[WW-1:1])
                    : (fw_en_q[c*2] && fw_addr_q[c*2*HW +: HW] == word_i[WW-1:1])) begin
        v = word_i[0] ? fw_data_q[(c*2+1)*64 +: 64] : fw_data_q[c*2*64 +: 64];
      end
    end
    forwarded = v;
  endfunction

  // The helper's access of the last cycle: its words as they are, and the merged words of a write.
  always_comb begin
    for (s = 0; s < 2; s = s + 1) begin
      h_word[s*WW +: WW] = haddr_q[AW-1:3] + {{(WW-1){1'b0}}, s[0]};
      h_base[s*64 +: 64] = forwarded(h_word[s*WW +: WW], ram_w[s*64 +: 64]);
    end
    h_shift = h_base >> {haddr_q[2:0], 3'b000};
    hrdata_o = h_shift[63:0];
    unused_h_shift = ^h_shift[127:64];
    h_win = {64'd0, hwdata_q} << {haddr_q[2:0], 3'b000};
    h_be = enables(haddr_q[2:0], hbytes_q);
    for (b = 0; b < 16; b = b + 1) begin
      h_merged[b*8 +: 8] = h_be[b] ? h_win[b*8 +: 8] : h_base[b*8 +: 8];
    end
    for (s = 0; s < 2; s = s + 1) begin
      h_wen[s] = hreq_q && hwe_q && |h_be[s*8 +: 8] && !clear_i;
    end
  end

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      for (s = 0; s < 2; s = s + 1) begin
        base[l*128+s*64 +: 64] = forwarded(cur_word[(l*2+s)*WW +: WW],
                                           fresh_q[l] ? ram_w[l*128+s*64 +: 64] : kd_q[l*128+s*64 +: 64]);
        cur[l*128+s*64 +: 64] = base[l*128+s*64 +: 64];
        for (k = 0; k < 2; k = k + 1) begin
          if (h_wen[k] && h_word[k*WW +: WW] == cur_word[(l*2+s)*WW +: WW]) begin
            cur[l*128+s*64 +: 64] = h_merged[k*64 +: 64];
          end
        end
      end
    end
  end

  // Tracked bytes.
  logic [127:0] rd_shift;
  logic         unused_rd_shift;

  always_comb begin
    unused_rd_shift = 1'b0;
    for (l = 0; l < LANES; l = l + 1) begin
      rd_shift = cur[l*128 +: 128] >> {ra_q[l*AW +: 3], 3'b000};
      rd_data_o[l*64 +: 64] = rd_shift[63:0];
      unused_rd_shift = unused_rd_shift ^ (^rd_shift[127:64]);
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Lane stores: whole words, the bytes merged into the word after the lower lanes' stores of the bundle
  // ---------------------------------------------------------------------------------------------------------------
  logic [LANES*128-1:0] st_win;
  logic [LANES*16-1:0]  st_be;
  logic [LANES*128-1:0] st_merged;
  logic [LANES*2-1:0]   st_wen;               // [lane][lo, hi]
  logic [7:0]           chain;

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      st_win[l*128 +: 128] = {64'd0, wr_data_i[l*64 +: 64]} << {ra_q[l*AW +: 3], 3'b000};
      st_be[l*16 +: 16] = enables(ra_q[l*AW +: 3], wr_bytes_i[l*4 +: 4]);
      for (s = 0; s < 2; s = s + 1) begin
        st_wen[l*2+s] = we_i[l] && |st_be[l*16+s*8 +: 8] && !clear_i;
      end
    end
    // Byte by byte: the lane's own byte, else the highest lower lane's store to that byte, else the memory's.
    for (l = 0; l < LANES; l = l + 1) begin
      for (s = 0; s < 2; s = s + 1) begin
        for (b = 0; b < 8; b = b + 1) begin
          chain = cur[l*128+s*64+b*8 +: 8];
          for (k = 0; k < LANES; k = k + 1) begin
            for (e = 0; e < 2; e = e + 1) begin
              if (k < l && we_i[k] && st_be[k*16+e*8+b] && !clear_i
                  && cur_word[(k*2+e)*WW +: WW] == cur_word[(l*2+s)*WW +: WW]) begin
                chain = st_win[k*128+e*64+b*8 +: 8];
              end
            end
          end
          st_merged[l*128+s*64+b*8 +: 8] = st_be[l*16+s*8+b] ? st_win[l*128+s*64+b*8 +: 8] : chain;
        end
      end
    end
  end

  // The edge's writes, in order (the helper's first, then the lanes'), to the copies, the table and the forwarding.
  logic [NF-1:0]    ed_en;
  logic [NF*WW-1:0] ed_word;
  logic [NF*64-1:0] ed_data;

  always_comb begin
    for (s = 0; s < 2; s = s + 1) begin
      ed_en[s] = h_wen[s];
      ed_word[s*WW +: WW] = h_word[s*WW +: WW];
      ed_data[s*64 +: 64] = h_merged[s*64 +: 64];
    end
    for (l = 0; l < LANES; l = l + 1) begin
      for (s = 0; s < 2; s = s + 1) begin
        ed_en[2+l*2+s] = st_wen[l*2+s];
        ed_word[(2+l*2+s)*WW +: WW] = cur_word[(l*2+s)*WW +: WW];
        ed_data[(2+l*2+s)*64 +: 64] = st_merged[l*128+s*64 +: 64];
      end
    end
    // Copy of writer k (the helper is entry 0, copy Helper), half p: the one of its two words of parity p.
    for (k = 0; k < NC; k = k + 1) begin
      for (s = 0; s < 2; s = s + 1) begin
        e = (k == Helper) ? 0 : 2 + k * 2;
        if (ed_word[e*WW] == s[0]) begin
          mwe[k*2+s] = ed_en[e];
          mwaddr[(k*2+s)*HW +: HW] = ed_word[e*WW+1 +: HW];
          mwdata[(k*2+s)*64 +: 64] = ed_data[e*64 +: 64];
        end else begin
          mwe[k*2+s] = ed_en[e+1];
          mwaddr[(k*2+s)*HW +: HW] = ed_word[(e+1)*WW+1 +: HW];
          mwdata[(k*2+s)*64 +: 64] = ed_data[(e+1)*64 +: 64];
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Sequential
  // ---------------------------------------------------------------------------------------------------------------
  // Lookups for the words read at this edge: one plane at a time.
  logic [LANES*2*CW-1:0] lk_copy_d;
  logic [LANES*2-1:0]    lk_valid_d;
  logic [Half-1:0]       plane;
  logic [HW-1:0]         lk_at;

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      for (s = 0; s < 2; s = s + 1) begin
        lk_at = iss_half_word[(l*2+s)*WW+1 +: HW];
        for (k = 0; k < CW; k = k + 1) begin
          plane = lvt_q[(s*CW+k)*Half +: Half];
          lk_copy_d[(l*2+s)*CW+k] = plane[lk_at];
        end
        plane = valid_q[s*Half +: Half];
        lk_valid_d[l*2+s] = plane[lk_at] && !clear_i;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    // The table: cleared per packet through the valid bits; the edge's writes in order, the lanes' after the
    // helper's, a higher lane's after a lower one's.
    for (s = 0; s < 2; s = s + 1) begin
      for (b = 0; b < Half; b = b + 1) begin
        if (clear_i) begin
          valid_q[s*Half+b] <= 1'b0;
        end else begin
          for (k = 0; k < NC; k = k + 1) begin
            e = (k == 0) ? Helper : k - 1;
            if (mwe[e*2+s] && mwaddr[(e*2+s)*HW +: HW] == b[HW-1:0]) begin
              valid_q[s*Half+b] <= 1'b1;
              for (l = 0; l < CW; l = l + 1) begin
                lvt_q[(s*CW+l)*Half+b] <= e[l];
              end
            end
          end
        end
      end
    end
    // Lookups for the words read at this edge; they see the table before this edge's writes, as the RAM does.
    lk_copy_q  <= lk_copy_d;
    lk_valid_q <= lk_valid_d;
    for (l = 0; l < LANES; l = l + 1) begin
      if (!keep[l]) begin
        ra_q[l*AW +: AW] <= iss_addr[l*AW +: AW];
      end
      fresh_q[l] <= !keep[l];
      kd_q[l*128 +: 128] <= cur[l*128 +: 128];
    end
    fw_en_q   <= clear_i ? '0 : mwe;
    fw_addr_q <= mwaddr;
    fw_data_q <= mwdata;
    hreq_q    <= hreq_i && !clear_i;
    hwe_q     <= hwe_i;
    haddr_q   <= haddr_i;
    hbytes_q  <= hbytes_i;
    hwdata_q  <= hwdata_i;
  end

endmodule
