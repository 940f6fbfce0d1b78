`default_nettype none
// eHDL map block: the keys of one HASH map as hashed buckets in block RAM (the alternative to ehdl_hash_map's CAM
// for large maps), for bpf_map_lookup_elem, bpf_map_update_elem and bpf_map_delete_elem from the pipeline and for
// the host.
//
// Slots: BUCKETS buckets of WAYS ways (slot = bucket * WAYS + way), then STASH overflow slots (slot = BUCKETS *
// WAYS + i). A key lives in a way of bucket hash32(key) mod BUCKETS, or, when all of that bucket's ways are taken,
// in the stash: a lookup compares WAYS + STASH keys, a bounded probe. The values live in a value block of
// (BUCKETS * WAYS + STASH) * value_size bytes beside this one, addressed by slot. The map holds at most ENTRIES keys
// (a counter of valid slots): an insert into a map of ENTRIES keys fails with E2BIG exactly as the kernel's does.
// An insert that finds its bucket and the stash full while the map holds fewer than ENTRIES keys cannot be stored
// either; it fails with E2BIG too and sets overflow_o (sticky until reset), where the kernel would have succeeded:
// the harness reports it rather than differ silently. With BUCKETS * WAYS of at least 2 * ENTRIES and 8 ways, as
// the generator sizes it, that takes WAYS + STASH + 1 keys hashing to one bucket.
//
// Ports behave as ehdl_hash_map's (HASH: LRU = 0, LPM = 0): they act in index order within a cycle, each seeing the
// changes of the ports before it. A lookup (kind 0) gives hit and the slot holding its key; an update (kind 1, del 0;
// flags 0 any, 1 noexist, 2 exist), when en_i, finds its key: if present, NOEXIST fails with EEXIST, else the slot
// is the key's; if absent, EXIST fails with ENOENT, a full map with E2BIG, else the lowest free way of its bucket
// (the lowest free stash slot when there is none) takes the key. A delete (kind 1, del 1) clears its key's slot when
// en_i, or fails with ENOENT. hit_o is "the value is to be written at slot_o", err_o the positive errno.
//
// Keys in RAM read registered, so each port presents its key a cycle early: rkey_i[p] is the key key_i[p] will
// have in the next cycle (the generator computes it from the next value of the stage's boundary registers; a held
// stage presents its own key again). Each reader (the ports, the probes, the host) has a copy of each bank's RAMs,
// one RAM of BUCKETS keys per way, read at the bucket of its early key. What a RAM returns misses the writes made at
// the same edge: delay registers keep each bank's write for a cycle, and a port's compare takes a slot's key from
// this cycle's earlier ports' inserts first, then the delay registers, then the RAM of the bank the live value table
// names. Keys are written only into free slots, so one bank per writing port (WRITES) and a live value table of
// (BUCKETS * WAYS) * ceil(log2(writers)) flip-flops give each slot's key; the valid bits, the count and the stash
// keys are flip-flops.
//
// Probe ports (NQ, for the generator's stall checks): whether a key is present before this cycle's writes and its
// slot, its key presented a cycle early too (rprobe_key_i).
//
// Host port, one cycle of latency like ehdl_map_ram's: with host_valid_i low, the 8-byte word at a byte address of
// the key space, where slot s's key starts at s * KS (KS the key stride: the smallest of 8, 16, 32, 64 holding
// KEY_BYTES; bytes past KEY_BYTES read 0 and ignore writes; addresses are taken 8-byte aligned); with host_valid_i
// high, the valid bit of slot host_addr_i in bit 0. host_rdata_o is the word at the previous cycle's address, with
// the writes up to that cycle. A host key write goes through bank 0 and is dropped in a cycle bank 0's port inserts
// (host_drop_o); the host writes whole keys, into the slots its own hashing chooses (hwxdp_rtlsim's host loader), and
// loads the map before traffic. The key RAMs start zeroed; rst_ni empties the map.
module ehdl_hash_bkt #(
  parameter integer  ENTRIES   = 4,            // max_entries
  parameter integer  KEY_BYTES = 4,            // key_size
  parameter integer  NP        = 1,            // pipeline ports
  parameter integer  BUCKETS   = 4,            // buckets, a power of two (at least 2)
  parameter integer  WAYS      = 4,            // ways per bucket
  parameter integer  STASH     = 4,            // overflow slots (flip-flops), at least 1
  parameter integer  SW        = 5,            // slot width: at least $clog2(BUCKETS * WAYS + STASH)
  parameter integer  AW        = 16,           // host address width, 1..31
  parameter [NP-1:0] WRITES    = {NP{1'b1}},   // bit p: port p may insert (an update port)
  parameter integer  NQ        = 1             // probe ports
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic [NP-1:0]             kind_i,   // 0 lookup, 1 update or delete
  input  logic [NP-1:0]             del_i,    // with kind 1: delete
  input  logic [NP-1:0]             en_i,     // perform (gated by the advance)
  input  logic [NP*8*KEY_BYTES-1:0] rkey_i,   // next cycle's key_i
  input  logic [NP*8*KEY_BYTES-1:0] key_i,
  input  logic [NP*2-1:0]           flags_i,
  output logic [NP-1:0]             hit_o,
  output logic [NP*SW-1:0]          slot_o,
  output logic [NP*8-1:0]           err_o,
  input  logic [NQ*8*KEY_BYTES-1:0] rprobe_key_i,
  input  logic [NQ*8*KEY_BYTES-1:0] probe_key_i,
  output logic [NQ-1:0]             probe_hit_o,
  output logic [NQ*SW-1:0]          probe_slot_o,
  output logic                      overflow_o,
  input  logic                      host_we_i,
  input  logic                      host_valid_i,
  input  logic [AW-1:0]             host_addr_i,
  input  logic [63:0]               host_wdata_i,
  input  logic [7:0]                host_wmask_i,
  output logic [63:0]               host_rdata_o,
  output logic                      host_drop_o
);

  function automatic integer count_writers();
    count_writers = 0;
    for (integer p = 0; p < NP; p = p + 1) count_writers = count_writers + (WRITES[p] ? 1 : 0);
  endfunction
  // The bank of port p: how many writing ports come before it.
  function automatic integer bank_of(input integer p);
    bank_of = 0;
    for (integer j = 0; j < p; j = j + 1) bank_of = bank_of + (WRITES[j] ? 1 : 0);
  endfunction

  localparam integer KB     = 8 * KEY_BYTES;
  localparam integer KS     = (KEY_BYTES <= 8) ? 8 : (KEY_BYTES <= 16) ? 16 : (KEY_BYTES <= 32) ? 32 : 64;
  localparam integer KWORDS = KS / 8;
  localparam integer NWR    = count_writers();
  localparam integer NB     = (NWR < 1) ? 1 : NWR;
  localparam integer LB     = (NB < 2) ? 1 : $clog2(NB);
  localparam integer BW     = $clog2(BUCKETS);
  localparam integer WAYW   = (WAYS < 2) ? 1 : $clog2(WAYS);
  localparam integer RAMS   = BUCKETS * WAYS;           // slots in RAM
  localparam integer SLOTS  = RAMS + STASH;
  localparam integer NR     = NP + NQ + 1;              // readers: ports, probes, host
  localparam integer CW     = $clog2(SLOTS + 1);        // the count's width
  localparam integer EEXIST = 17;
  localparam integer ENOENT = 2;
  localparam integer E2BIG  = 7;

  // ---- State in flip-flops. ----
  logic [SLOTS-1:0]      valid_q, valid_d;
  logic [CW-1:0]         cnt_q, cnt_d;
  logic [STASH*KB-1:0]   stash_q, stash_d;
  logic [RAMS*LB-1:0]    lvt_q;
  logic                  overflow_q, overflow_d;
  // Delay registers: each bank's write of the last edge.
  logic [NB-1:0]         d_we_q;
  logic [NB*SW-1:0]      d_slot_q;
  logic [NB*KB-1:0]      d_key_q;
  logic [NB*KEY_BYTES-1:0] d_mask_q;

  // ---- The readers' buckets: hashed from the early keys (the host's from its address), registered. ----
  logic [NR*BW-1:0]      bkt_e, bkt_q;
  logic [NR*NB*WAYS*KB-1:0] q;   // reader r, bank b, way w at ((r * NB + b) * WAYS + w) * KB

  for (genvar r = 0; r < NP + NQ; r = r + 1) begin : g_hash
    logic [31:0] h;
    if (r < NP) begin : g_port
      hash32 #(.BYTES(KEY_BYTES)) u_hash (.data_i(rkey_i[r*KB +: KB]), .hash_o(h));
    end else begin : g_probe
      hash32 #(.BYTES(KEY_BYTES)) u_hash (.data_i(rprobe_key_i[(r - NP)*KB +: KB]), .hash_o(h));
    end
    assign bkt_e[r*BW +: BW] = h[BW-1:0];
    logic unused_h;
    assign unused_h = ^h;
  end

  // The host's slot (valid space: the address; key space: the 8-byte word's slot) and word within the key.
  logic [31:0] host_slot, host_word;
  assign host_word = {{(32 - AW){1'b0}}, host_addr_i} >> 3;
  assign host_slot = host_valid_i ? {{(32 - AW){1'b0}}, host_addr_i} : host_word / KWORDS;
  assign bkt_e[(NR - 1)*BW +: BW] = BW'(host_slot / WAYS);

  always_ff @(posedge clk_i) bkt_q <= bkt_e;

  // ---- Writes to the RAMs: one per bank (a port's insert, or the host's key word through bank 0). ----
  logic [NB-1:0]            w_en;
  logic [NB*SW-1:0]         w_slot;
  logic [NB*KB-1:0]         w_key;
  logic [NB*KEY_BYTES-1:0]  w_mask;

  // The key of RAM slot s as reader r sees it at the start of the cycle: the delay registers' bytes over the RAM
  // word of the bank the live value table names.
  function automatic logic [KB-1:0] stored(input integer r, input logic [BW-1:0] b, input integer w);
    logic [SW-1:0] s;
    logic [LB-1:0] src;
    logic [KB-1:0] k;
    s   = SW'({{(32 - BW){1'b0}}, b} * WAYS + w);
    src = (NB > 1) ? lvt_q[({{(32 - SW){1'b0}}, s})*LB +: LB] : '0;
    k   = '0;
    for (integer n = 0; n < NB; n = n + 1) begin
      if (NB == 1 || src == LB'(n)) k = q[((r * NB + n) * WAYS + w) * KB +: KB];
    end
    // Banks 1, 2, ... then bank 0 (m % NB for m = 1 .. NB): in a cycle two banks wrote one slot, one was the host's
    // write (through bank 0), applied last (two inserts never take one slot in a cycle).
    for (integer m = 1; m <= NB; m = m + 1) begin
      if (d_we_q[m % NB] && d_slot_q[(m % NB)*SW +: SW] == s) begin
        for (integer j = 0; j < KEY_BYTES; j = j + 1) begin
          if (d_mask_q[(m % NB)*KEY_BYTES + j]) k[8*j +: 8] = d_key_q[(m % NB)*KB + 8*j +: 8];
        end
      end
    end
    stored = k;
  endfunction

  // ---- The ports, in order. ----
  logic [SW-1:0]  sl, found_slot, free_slot, sslot;
  logic           found, free, ins, sfound;
  logic [KB-1:0]  kw;
  logic [BW-1:0]  bk;
  integer         nb;
  always_comb begin
    valid_d    = valid_q;
    cnt_d      = cnt_q;
    stash_d    = stash_q;
    overflow_d = overflow_q;
    w_en       = '0;
    w_slot     = '0;
    w_key      = '0;
    w_mask     = '0;
    hit_o      = '0;
    slot_o     = '0;
    err_o      = '0;
    sl         = '0;
    kw         = '0;
    bk         = '0;
    found      = 1'b0;
    free       = 1'b0;
    ins        = 1'b0;
    found_slot = '0;
    free_slot  = '0;
    sfound     = 1'b0;
    sslot      = '0;
    nb         = 0;
    for (integer p = 0; p < NP; p = p + 1) begin
      bk         = bkt_q[p*BW +: BW];
      found      = 1'b0;
      free       = 1'b0;
      ins        = 1'b0;
      found_slot = '0;
      free_slot  = '0;
      // Ways of the port's bucket, lowest first: the key as this cycle's earlier inserts left it.
      for (integer w = WAYS - 1; w >= 0; w = w - 1) begin
        sl = SW'({{(32 - BW){1'b0}}, bk} * WAYS + w);
        kw = stored(p, bk, w);
        for (integer n = 0; n < NB; n = n + 1) begin
          if (w_en[n] && w_slot[n*SW +: SW] == sl) kw = w_key[n*KB +: KB];
        end
        if (valid_d[sl] && kw == key_i[p*KB +: KB]) begin
          found      = 1'b1;
          found_slot = sl;
        end
        if (!valid_d[sl]) begin
          free      = 1'b1;
          free_slot = sl;
        end
      end
      // Then the stash (only where no way of the bucket holds the key, or has room).
      sfound = 1'b0;
      sslot  = '0;
      for (integer i = STASH - 1; i >= 0; i = i - 1) begin
        if (valid_d[RAMS + i] && stash_d[i*KB +: KB] == key_i[p*KB +: KB]) begin
          sfound = 1'b1;
          sslot  = SW'(RAMS + i);
        end
      end
      if (!found) begin
        found      = sfound;
        found_slot = sslot;
      end
      if (!free) begin
        for (integer i = STASH - 1; i >= 0; i = i - 1) begin
          if (!valid_d[RAMS + i]) begin
            free      = 1'b1;
            free_slot = SW'(RAMS + i);
          end
        end
      end
      if (!kind_i[p]) begin
        hit_o[p]           = found;
        slot_o[SW*p +: SW] = found_slot;
      end else if (del_i[p]) begin
        if (found) begin
          if (en_i[p]) begin
            valid_d[found_slot] = 1'b0;
            cnt_d               = cnt_d - 1'b1;
          end
        end else begin
          err_o[8*p +: 8] = ENOENT[7:0];
        end
      end else if (found) begin
        if (flags_i[2*p +: 2] == 2'd1) begin
          err_o[8*p +: 8] = EEXIST[7:0];
        end else begin
          hit_o[p]           = en_i[p];
          slot_o[SW*p +: SW] = found_slot;
        end
      end else if (flags_i[2*p +: 2] == 2'd2) begin
        err_o[8*p +: 8] = ENOENT[7:0];
      end else if ({{(32 - CW){1'b0}}, cnt_d} >= ENTRIES || !free || !WRITES[p]) begin
        err_o[8*p +: 8] = E2BIG[7:0];
        if ({{(32 - CW){1'b0}}, cnt_d} < ENTRIES && en_i[p]) overflow_d = 1'b1;
      end else begin
        hit_o[p]           = en_i[p];
        slot_o[SW*p +: SW] = free_slot;
        ins                = en_i[p];
      end
      if (ins) begin
        valid_d[free_slot] = 1'b1;
        cnt_d              = cnt_d + 1'b1;
        if ({{(32 - SW){1'b0}}, free_slot} >= RAMS) begin
          for (integer i = 0; i < STASH; i = i + 1) begin
            if ({{(32 - SW){1'b0}}, free_slot} == RAMS + i) stash_d[i*KB +: KB] = key_i[p*KB +: KB];
          end
        end else begin
          w_en[nb]                    = 1'b1;
          w_slot[nb*SW +: SW]         = free_slot;
          w_key[nb*KB +: KB]          = key_i[p*KB +: KB];
          w_mask[nb*KEY_BYTES +: KEY_BYTES] = '1;
        end
      end
      if (WRITES[p]) nb = nb + 1;
    end
  end

  // ---- The host's writes, applied after the ports'. ----
  logic             h_key_we;     // a key word into a RAM slot, through bank 0
  logic [KB-1:0]    h_key;
  logic [KEY_BYTES-1:0] h_mask;
  logic [SLOTS-1:0] valid_h;
  logic [CW-1:0]    cnt_h;
  logic [STASH*KB-1:0] stash_h;
  always_comb begin
    h_key  = '0;
    h_mask = '0;
    for (integer j = 0; j < KEY_BYTES; j = j + 1) begin
      if (j / 8 == host_word % KWORDS) begin
        h_key[8*j +: 8] = host_wdata_i[8*(j % 8) +: 8];
        h_mask[j]       = host_wmask_i[j % 8];
      end
    end
    h_key_we = host_we_i && !host_valid_i && host_slot < RAMS && |h_mask && !w_en[0];
    valid_h  = valid_d;
    cnt_h    = cnt_d;
    stash_h  = stash_d;
    if (host_we_i && host_valid_i && host_wmask_i[0] && host_slot < SLOTS) begin
      if (valid_d[host_slot] && !host_wdata_i[0]) cnt_h = cnt_d - 1'b1;
      if (!valid_d[host_slot] && host_wdata_i[0]) cnt_h = cnt_d + 1'b1;
      valid_h[host_slot] = host_wdata_i[0];
    end
    if (host_we_i && !host_valid_i && host_slot >= RAMS && host_slot < SLOTS) begin
      for (integer i = 0; i < STASH; i = i + 1) begin
        if (host_slot == RAMS + i) begin
          for (integer j = 0; j < KEY_BYTES; j = j + 1) begin
            if (h_mask[j]) stash_h[i*KB + 8*j +: 8] = h_key[8*j +: 8];
          end
        end
      end
    end
  end
  assign host_drop_o = host_we_i && !host_valid_i && host_slot < RAMS && |h_mask && w_en[0];

  // Bank 0 writes the host's word when its port does not insert.
  logic [NB-1:0]           b_en;
  logic [NB*SW-1:0]        b_slot;
  logic [NB*KB-1:0]        b_key;
  logic [NB*KEY_BYTES-1:0] b_mask;
  always_comb begin
    b_en   = w_en;
    b_slot = w_slot;
    b_key  = w_key;
    b_mask = w_mask;
    if (h_key_we) begin
      b_en[0]                 = 1'b1;
      b_slot[SW-1:0]          = SW'(host_slot);
      b_key[KB-1:0]           = h_key;
      b_mask[KEY_BYTES-1:0]   = h_mask;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q    <= '0;
      cnt_q      <= '0;
      stash_q    <= '0;
      overflow_q <= 1'b0;
      d_we_q     <= '0;
      d_slot_q   <= '0;
      d_key_q    <= '0;
      d_mask_q   <= '0;
    end else begin
      valid_q    <= valid_h;
      cnt_q      <= cnt_h;
      stash_q    <= stash_h;
      overflow_q <= overflow_d;
      d_we_q     <= b_en;
      d_slot_q   <= b_slot;
      d_key_q    <= b_key;
      d_mask_q   <= b_mask;
    end
  end
  assign overflow_o = overflow_q;

  // ---- The live value table: the bank that wrote each RAM slot's key last. ----
  if (NB > 1) begin : g_lvt
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        lvt_q <= '0;
      end else begin
        // Bank 0 last, as in stored().
        for (integer m = 1; m <= NB; m = m + 1) begin
          for (integer s = 0; s < RAMS; s = s + 1) begin
            if (b_en[m % NB] && b_slot[(m % NB)*SW +: SW] == SW'(s)) lvt_q[s*LB +: LB] <= LB'(m % NB);
          end
        end
      end
    end
  end else begin : g_no_lvt
    assign lvt_q = '0;
  end

  // ---- The RAMs: reader r, bank b, way w, BUCKETS keys each, read at the reader's early bucket. ----
  for (genvar r = 0; r < NR; r = r + 1) begin : g_reader
    for (genvar b = 0; b < NB; b = b + 1) begin : g_bank
      logic [SW-1:0] ws;
      assign ws = b_slot[b*SW +: SW];
      for (genvar w = 0; w < WAYS; w = w + 1) begin : g_way
        logic we;
        assign we = b_en[b] && {{(32 - SW){1'b0}}, ws} < RAMS && {{(32 - SW){1'b0}}, ws} % WAYS == w;
        ram_sdp #(.WIDTH(KB), .DEPTH(BUCKETS)) u_ram (
          .clk_i(clk_i), .wr_en_i(we), .wr_addr_i(BW'({{(32 - SW){1'b0}}, ws} / WAYS)),
          .wr_data_i(b_key[b*KB +: KB]), .wr_be_i(b_mask[b*KEY_BYTES +: KEY_BYTES]), .rd_en_i(1'b1),
          .rd_addr_i(bkt_e[r*BW +: BW]), .rd_data_o(q[((r * NB + b) * WAYS + w) * KB +: KB])
        );
      end
    end
  end

  // ---- Probes: the table before this cycle's writes. ----
  always_comb begin
    probe_hit_o  = '0;
    probe_slot_o = '0;
    for (integer k = 0; k < NQ; k = k + 1) begin
      for (integer w = WAYS - 1; w >= 0; w = w - 1) begin
        if (valid_q[{{(32 - BW){1'b0}}, bkt_q[(NP + k)*BW +: BW]} * WAYS + w]
            && stored(NP + k, bkt_q[(NP + k)*BW +: BW], w) == probe_key_i[k*KB +: KB]) begin
          probe_hit_o[k]            = 1'b1;
          probe_slot_o[k*SW +: SW]  = SW'({{(32 - BW){1'b0}}, bkt_q[(NP + k)*BW +: BW]} * WAYS + w);
        end
      end
      if (!probe_hit_o[k]) begin
        for (integer i = STASH - 1; i >= 0; i = i - 1) begin
          if (valid_q[RAMS + i] && stash_q[i*KB +: KB] == probe_key_i[k*KB +: KB]) begin
            probe_hit_o[k]           = 1'b1;
            probe_slot_o[k*SW +: SW] = SW'(RAMS + i);
          end
        end
      end
    end
  end

  // ---- Host reads: the previous cycle's address, the state after that cycle's writes. ----
  logic [31:0] hq_slot, hq_word;
  logic        hq_valid;
  always_ff @(posedge clk_i) begin
    hq_slot  <= host_slot;
    hq_word  <= host_word;
    hq_valid <= host_valid_i;
  end
  logic [KB-1:0]  hk;
  logic [511:0]   hk_wide;
  always_comb begin
    hk = '0;
    if (hq_slot < RAMS) begin
      for (integer w = 0; w < WAYS; w = w + 1) begin
        if (hq_slot % WAYS == w) hk = stored(NR - 1, bkt_q[(NR - 1)*BW +: BW], w);
      end
    end else if (hq_slot < SLOTS) begin
      for (integer i = 0; i < STASH; i = i + 1) begin
        if (hq_slot == RAMS + i) hk = stash_q[i*KB +: KB];
      end
    end
    hk_wide = 512'(hk);
    host_rdata_o = '0;
    if (hq_valid) begin
      host_rdata_o[0] = (hq_slot < SLOTS) ? valid_q[hq_slot[SW-1:0]] : 1'b0;
    end else begin
      for (integer k = 0; k < KWORDS; k = k + 1) begin
        if (hq_word % KWORDS == k) host_rdata_o = hk_wide[64*k +: 64];
      end
    end
  end

  logic unused;
  assign unused = ^{host_addr_i[2:0], host_wmask_i[7:1], WAYW[0], hq_word, hq_slot, host_word, host_slot};

endmodule
