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

  integer l;
  integer k;
  integer s;
  integer b;

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
  // This cycle's words, by half (the even and the odd word of an access): RAM (through the table) or the held
  // words, then the last edge's writes, then the helper's write of this cycle
  // ---------------------------------------------------------------------------------------------------------------
  logic [LANES*128-1:0]  ram_w;               // [lane][half] the RAM's words for the address read last edge
  logic [LANES*2*HW-1:0] cur_idx;             // [lane][half] the tracked words' indices within their half
  logic [LANES*128-1:0]  base;                // RAM or held, with the last edge's writes
  logic [LANES*128-1:0]  cur;                 // ... and the helper's write of this cycle
  logic [2*HW-1:0]       h_idx;               // the helper's access: its words, by half
  logic [127:0]          h_base;              // ... as the memory is (its read was issued in the last cycle)
  logic [127:0]          h_lohi;              // ... in address order
  logic [127:0]          h_win;
  logic [15:0]           h_be;
  logic [127:0]          h_merged;            // merged, in address order
  logic [127:0]          h_data;              // ... by half
  logic [1:0]            h_wen;               // the helper's write lands at this edge, by half
  logic [127:0]          h_shift;
  logic                  unused_h_shift;

  // The word of parity p among word lo_i and the next, as its index within half p.
  // (The word is lo_i or lo_i + 1, whichever has parity p_i: the next one's index is one higher only from odd.)
  function automatic [HW-1:0] half_index(input logic [WW-1:0] lo_i, input logic p_i);
    half_index = lo_i[WW-1:1] + {{(HW-1){1'b0}}, lo_i[0] & ~p_i};
  endfunction

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      for (s = 0; s < 2; s = s + 1) begin
        ram_w[l*128+s*64 +: 64] = 64'd0;
        for (k = 0; k < NC; k = k + 1) begin
          if (lk_valid_q[l*2+s] && lk_copy_q[(l*2+s)*CW +: CW] == k[CW-1:0]) begin
            ram_w[l*128+s*64 +: 64] = mq[((k*2+s)*LANES+l)*64 +: 64];
          end
        end
        cur_idx[(l*2+s)*HW +: HW] = half_index(ra_q[l*AW+3 +: WW], s[0]);
      end
    end
  end

  // A word of half p_i as this cycle sees it: v_i (as of the last cycle) after the last edge's writes to that half,
  // in their order (the helper's, then the lanes').
  function automatic [63:0] forwarded(input integer p_i, input logic [HW-1:0] idx_i, input logic [63:0] v_i);
    logic [63:0] v;
    integer f;
    integer c;
    v = v_i;
    for (f = 0; f < NC; f = f + 1) begin
      c = (f == 0) ? Helper : f - 1;
      if (fw_en_q[c*2+p_i] && fw_addr_q[(c*2+p_i)*HW +: HW] == idx_i) begin
        v = fw_data_q[(c*2+p_i)*64 +: 64];
      end
    end
    forwarded = v;
  endfunction

  // The helper's access of the last cycle: its words as they are, and the merged words of a write.
  always_comb begin
    for (s = 0; s < 2; s = s + 1) begin
      h_idx[s*HW +: HW] = half_index(haddr_q[AW-1:3], s[0]);
      h_base[s*64 +: 64] = forwarded(s, h_idx[s*HW +: HW], ram_w[s*64 +: 64]);
    end
    // Address order: the lowest word is the odd one when the address's word is odd.
    h_lohi = haddr_q[3] ? {h_base[63:0], h_base[127:64]} : h_base;
    h_shift = h_lohi >> {haddr_q[2:0], 3'b000};
    hrdata_o = h_shift[63:0];
    unused_h_shift = ^h_shift[127:64];
    h_win = {64'd0, hwdata_q} << {haddr_q[2:0], 3'b000};
    h_be = enables(haddr_q[2:0], hbytes_q);
    for (b = 0; b < 16; b = b + 1) begin
      h_merged[b*8 +: 8] = h_be[b] ? h_win[b*8 +: 8] : h_lohi[b*8 +: 8];
    end
    h_data = haddr_q[3] ? {h_merged[63:0], h_merged[127:64]} : h_merged;
    if (haddr_q[3]) begin
      h_wen = {|h_be[7:0], |h_be[15:8]};
    end else begin
      h_wen = {|h_be[15:8], |h_be[7:0]};
    end
    h_wen = h_wen & {2{hreq_q && hwe_q && !clear_i}};
  end

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      for (s = 0; s < 2; s = s + 1) begin
        base[l*128+s*64 +: 64] = forwarded(s, cur_idx[(l*2+s)*HW +: HW],
                                           fresh_q[l] ? ram_w[l*128+s*64 +: 64] : kd_q[l*128+s*64 +: 64]);
        cur[l*128+s*64 +: 64] = base[l*128+s*64 +: 64];
        if (h_wen[s] && h_idx[s*HW +: HW] == cur_idx[(l*2+s)*HW +: HW]) begin
          cur[l*128+s*64 +: 64] = h_data[s*64 +: 64];
        end
      end
    end
  end

  // Tracked bytes.
  logic [127:0] rd_lohi;
  logic [127:0] rd_shift;
  logic         unused_rd_shift;

  always_comb begin
    unused_rd_shift = 1'b0;
    for (l = 0; l < LANES; l = l + 1) begin
      rd_lohi = ra_q[l*AW+3] ? {cur[l*128 +: 64], cur[l*128+64 +: 64]} : cur[l*128 +: 128];
      rd_shift = rd_lohi >> {ra_q[l*AW +: 3], 3'b000};
      rd_data_o[l*64 +: 64] = rd_shift[63:0];
      unused_rd_shift = unused_rd_shift ^ (^rd_shift[127:64]);
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Lane stores: whole words, the bytes merged into the word after the lower lanes' stores of the bundle
  // ---------------------------------------------------------------------------------------------------------------
  logic [127:0]         st_lohi;
  logic [15:0]          st_be_lohi;
  logic [LANES*128-1:0] st_win;               // [lane][half]
  logic [LANES*16-1:0]  st_be;
  logic [LANES*128-1:0] st_merged;
  logic [LANES*2-1:0]   st_wen;
  logic [7:0]           chain;

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      st_lohi = {64'd0, wr_data_i[l*64 +: 64]} << {ra_q[l*AW +: 3], 3'b000};
      st_be_lohi = enables(ra_q[l*AW +: 3], wr_bytes_i[l*4 +: 4]);
      st_win[l*128 +: 128] = ra_q[l*AW+3] ? {st_lohi[63:0], st_lohi[127:64]} : st_lohi;
      st_be[l*16 +: 16] = ra_q[l*AW+3] ? {st_be_lohi[7:0], st_be_lohi[15:8]} : st_be_lohi;
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
            if (k < l && we_i[k] && st_be[k*16+s*8+b] && !clear_i
                && cur_idx[(k*2+s)*HW +: HW] == cur_idx[(l*2+s)*HW +: HW]) begin
              chain = st_win[k*128+s*64+b*8 +: 8];
            end
          end
          st_merged[l*128+s*64+b*8 +: 8] = st_be[l*16+s*8+b] ? st_win[l*128+s*64+b*8 +: 8] : chain;
        end
      end
    end
  end

  // The edge's writes to the copies (each writer writes at most one word of each half).
  always_comb begin
    for (s = 0; s < 2; s = s + 1) begin
      mwe[Helper*2+s] = h_wen[s];
      mwaddr[(Helper*2+s)*HW +: HW] = h_idx[s*HW +: HW];
      mwdata[(Helper*2+s)*64 +: 64] = h_data[s*64 +: 64];
      for (l = 0; l < LANES; l = l + 1) begin
        mwe[l*2+s] = st_wen[l*2+s];
        mwaddr[(l*2+s)*HW +: HW] = cur_idx[(l*2+s)*HW +: HW];
        mwdata[(l*2+s)*64 +: 64] = st_merged[l*128+s*64 +: 64];
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
          if (mwe[Helper*2+s] && mwaddr[(Helper*2+s)*HW +: HW] == b[HW-1:0]) begin
            valid_q[s*Half+b] <= 1'b1;
            for (l = 0; l < CW; l = l + 1) begin
              lvt_q[(s*CW+l)*Half+b] <= Helper[l];
            end
          end
          for (k = 0; k < LANES; k = k + 1) begin
            if (mwe[k*2+s] && mwaddr[(k*2+s)*HW +: HW] == b[HW-1:0]) begin
              valid_q[s*Half+b] <= 1'b1;
              for (l = 0; l < CW; l = l + 1) begin
                lvt_q[(s*CW+l)*Half+b] <= k[l];
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
