`default_nettype none
// eBPFlow coprocessor's exact-match store for HASH maps: hashed buckets in block RAM, two choices, and a stash.
//
// Each HASH map owns 2^k buckets of WAYS slots (ebpflow_coproc gives it the first power of two of buckets with at
// least twice max_entries slots); a slot is {valid, the entry's value index, the key} in one word of WAYS true-dual-
// port RAMs (rtl/common/ram_tdp, way w in RAM w, a bucket a word address). A key may live in one of two buckets
// (the coprocessor's b1_i and b2_i, from two bit fields of its hash32) or in the stash, STASH flip-flop entries
// shared by every map (tagged with the map), which takes a key whose two buckets are both full. A request of the
// coprocessor:
//
// - cycle 1 (the grant): rd_i reads bucket b1_i on every way's port A and b2_i on port B (a registered read);
// - cycle 2: the slots are out; hit_o/hit_idx_o say whether key_i of map map_i is in either bucket or the stash, and
//   its value index; free_o whether there is a place to insert it: the less full of the two buckets' first free
//   way (b1 on a tie), else the other's, else a free stash entry. srch_i (the coprocessor's cycle 2) latches where;
// - cycle 3: we_i writes there: ins_i the key (key_i, held) with value index idx_i, else (a delete) clears the slot
//   or stash entry of the hit.
//
// clr_i zeroes bucket clr_bkt_i in every way (the coprocessor's sweep after reset) and clears the stash. Dumps: rd_i
// with b1_i the bucket, then in cycle 2 dump_way_i picks the way (dump_stash_i: stash entry dump_way_i, which must
// belong to map_i): dump_valid_o, dump_key_o, dump_idx_o.
module ebpflow_hbkt #(
  parameter integer KW      = 128,                               // key bits
  parameter integer XW      = 15,                                // value-index bits (KW + XW + 1 a multiple of 8)
  parameter integer WAYS    = 4,
  parameter integer BUCKETS = 64,                                // buckets of every HASH map together
  parameter integer BIW     = (BUCKETS > 1) ? $clog2(BUCKETS) : 1,
  parameter integer STASH   = 4,
  parameter integer DW      = (WAYS > STASH) ? $clog2(WAYS) + 1 : $clog2(STASH) + 1  // dump_way_i bits
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          rd_i,
  input  logic [BIW-1:0] b1_i,
  input  logic [BIW-1:0] b2_i,
  input  logic [3:0]    map_i,
  input  logic [KW-1:0] key_i,
  output logic          hit_o,
  output logic [XW-1:0] hit_idx_o,
  output logic          free_o,
  input  logic          srch_i,
  input  logic          we_i,
  input  logic          ins_i,
  input  logic [XW-1:0] idx_i,
  input  logic          clr_i,
  input  logic [BIW-1:0] clr_bkt_i,
  input  logic [DW-1:0] dump_way_i,
  input  logic          dump_stash_i,
  output logic          dump_valid_o,
  output logic [KW-1:0] dump_key_o,
  output logic [XW-1:0] dump_idx_o
);

  localparam integer SW  = KW + XW + 1;                          // slot bits
  localparam integer WIW = (WAYS > 1) ? $clog2(WAYS) : 1;
  localparam integer SIW = (STASH > 1) ? $clog2(STASH) : 1;

  // Where a key is or goes: a way of bucket 1 or 2, or a stash entry.
  localparam logic [1:0] LB1 = 2'd0;
  localparam logic [1:0] LB2 = 2'd1;
  localparam logic [1:0] LST = 2'd2;

  logic [BIW-1:0] b1_q;
  logic [BIW-1:0] b2_q;
  logic [WAYS*SW-1:0] a_slot;                                    // [way] bucket 1's slots (or the dump's bucket)
  logic [WAYS*SW-1:0] b_slot;                                    // [way] bucket 2's slots

  // The stash.
  logic [STASH-1:0] st_valid_q;
  logic [3:0]       st_map_q [STASH];
  logic [KW-1:0]    st_key_q [STASH];
  logic [XW-1:0]    st_idx_q [STASH];

  // Cycle 3's place: where the hit is (a delete clears it) and where an insert goes.
  logic [1:0]     hloc_q;
  logic [WIW-1:0] hway_q;
  logic [SIW-1:0] hst_q;
  logic [1:0]     floc_q;
  logic [WIW-1:0] fway_q;
  logic [SIW-1:0] fst_q;

  // Cycle 3's write of one slot, or the sweep's.
  logic           wr;
  logic [BIW-1:0] wr_bkt;
  logic [WIW-1:0] wr_way;
  logic [SW-1:0]  wr_slot;
  logic           wr_stash;
  logic [SIW-1:0] wr_st;
  always_comb begin
    wr       = we_i && ((ins_i ? floc_q : hloc_q) != LST);
    wr_stash = we_i && ((ins_i ? floc_q : hloc_q) == LST);
    wr_bkt   = ((ins_i ? floc_q : hloc_q) == LB2) ? b2_q : b1_q;
    wr_way   = ins_i ? fway_q : hway_q;
    wr_st    = ins_i ? fst_q : hst_q;
    wr_slot  = ins_i ? {1'b1, idx_i, key_i} : '0;
  end

  for (genvar w = 0; w < WAYS; w++) begin : g_way
    logic a_we;
    assign a_we = clr_i || (wr && wr_way == WIW'(w));
    ram_tdp #(
      .WIDTH (SW),
      .DEPTH (BUCKETS),
      .AW    (BIW)
    ) u_ram (
      .clk_i     (clk_i),
      .a_en_i    (a_we || rd_i),
      .a_we_i    (a_we),
      .a_addr_i  (clr_i ? clr_bkt_i : (a_we ? wr_bkt : b1_i)),
      .a_wdata_i (clr_i ? '0 : wr_slot),
      .a_be_i    ({(SW/8){1'b1}}),
      .a_rdata_o (a_slot[w*SW +: SW]),
      .b_en_i    (rd_i),
      .b_we_i    (1'b0),
      .b_addr_i  (b2_i),
      .b_wdata_i ('0),
      .b_be_i    ('0),
      .b_rdata_o (b_slot[w*SW +: SW])
    );
  end

  // Cycle 2: the search over both buckets and the stash, and the place for an insert.
  logic           hit;
  logic [XW-1:0]  hit_idx;
  logic [1:0]     hloc;
  logic [WIW-1:0] hway;
  logic [SIW-1:0] hst;
  logic           f1;
  logic [WIW-1:0] f1_way;
  logic           f2;
  logic [WIW-1:0] f2_way;
  logic           fs;
  logic [SIW-1:0] fs_idx;
  logic [WIW:0]   n1;
  logic [WIW:0]   n2;
  logic [1:0]     floc;
  logic           free;
  always_comb begin
    hit     = 1'b0;
    hit_idx = '0;
    hloc    = LB1;
    hway    = '0;
    hst     = '0;
    f1      = 1'b0;
    f1_way  = '0;
    f2      = 1'b0;
    f2_way  = '0;
    fs      = 1'b0;
    fs_idx  = '0;
    n1      = '0;
    n2      = '0;
    for (int w = WAYS - 1; w >= 0; w--) begin
      logic [SW-1:0] sa;
      logic [SW-1:0] sb;
      sa = a_slot[w*SW +: SW];
      sb = b_slot[w*SW +: SW];
      if (sa[SW-1]) begin
        n1 = n1 + 1'b1;
        if (sa[KW-1:0] == key_i) begin
          hit     = 1'b1;
          hit_idx = sa[KW +: XW];
          hloc    = LB1;
          hway    = WIW'(w);
        end
      end else begin
        f1     = 1'b1;
        f1_way = WIW'(w);
      end
      if (sb[SW-1]) begin
        n2 = n2 + 1'b1;
        if (sb[KW-1:0] == key_i && !(sa[SW-1] && sa[KW-1:0] == key_i)) begin
          hit     = 1'b1;
          hit_idx = sb[KW +: XW];
          hloc    = LB2;
          hway    = WIW'(w);
        end
      end else begin
        f2     = 1'b1;
        f2_way = WIW'(w);
      end
    end
    for (int s = STASH - 1; s >= 0; s--) begin
      if (st_valid_q[s]) begin
        if (st_map_q[s] == map_i && st_key_q[s] == key_i) begin
          hit     = 1'b1;
          hit_idx = st_idx_q[s];
          hloc    = LST;
          hst     = SIW'(s);
        end
      end else begin
        fs     = 1'b1;
        fs_idx = SIW'(s);
      end
    end
    // Bucket 1 when it is no fuller than bucket 2 (or bucket 2 is full), else bucket 2, else the stash.
    if (f1 && (!f2 || n1 <= n2)) begin
      floc = LB1;
    end else if (f2) begin
      floc = LB2;
    end else begin
      floc = LST;
    end
    free = f1 || f2 || fs;
  end

  assign hit_o     = hit;
  assign hit_idx_o = hit_idx;
  assign free_o    = free;

  // Dumps: a way of the bucket read at rd_i, or a stash entry.
  always_comb begin
    logic [SW-1:0] sd;
    sd           = a_slot[WIW'(dump_way_i)*SW +: SW];
    dump_valid_o = sd[SW-1];
    dump_key_o   = sd[KW-1:0];
    dump_idx_o   = sd[KW +: XW];
    if (dump_stash_i) begin
      dump_valid_o = st_valid_q[SIW'(dump_way_i)] && st_map_q[SIW'(dump_way_i)] == map_i;
      dump_key_o   = st_key_q[SIW'(dump_way_i)];
      dump_idx_o   = st_idx_q[SIW'(dump_way_i)];
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      b1_q       <= '0;
      b2_q       <= '0;
      hloc_q     <= LB1;
      hway_q     <= '0;
      hst_q      <= '0;
      floc_q     <= LB1;
      fway_q     <= '0;
      fst_q      <= '0;
      st_valid_q <= '0;
      for (int s = 0; s < STASH; s++) begin
        st_map_q[s] <= '0;
        st_key_q[s] <= '0;
        st_idx_q[s] <= '0;
      end
    end else begin
      if (rd_i) begin
        b1_q <= b1_i;
        b2_q <= b2_i;
      end
      if (srch_i) begin
        hloc_q <= hloc;
        hway_q <= hway;
        hst_q  <= hst;
        floc_q <= floc;
        fway_q <= (floc == LB2) ? f2_way : f1_way;
        fst_q  <= fs_idx;
      end
      if (clr_i) begin
        st_valid_q <= '0;
      end else if (wr_stash) begin
        st_valid_q[wr_st] <= ins_i;
        if (ins_i) begin
          st_map_q[wr_st] <= map_i;
          st_key_q[wr_st] <= key_i;
          st_idx_q[wr_st] <= idx_i;
        end
      end
    end
  end

  logic unused;
  assign unused = ^{dump_way_i};

endmodule
