`default_nettype none
// eHDL map block: the keys of one HASH, LRU_HASH or LPM_TRIE map as a CAM, for bpf_map_lookup_elem,
// bpf_map_update_elem and bpf_map_delete_elem from the pipeline and for the host.
//
// Slot s holds a key (KEY_BYTES, one word per slot compared whole) and a valid bit; the values live in an
// ehdl_map_mem block of ENTRIES * value_size bytes beside this one, addressed by slot. Ports act in index order
// within a cycle, each seeing the changes of the ports before it (the generator orders them later stage first, like
// the value ports). A lookup port (kind 0) gives hit and the lowest valid slot holding its key. An update port
// (kind 1, del 0; flags 0 any, 1 noexist, 2 exist), when en_i, finds its key: if present, NOEXIST fails with EEXIST,
// else the slot is the key's; if absent, EXIST fails with ENOENT, a full map fails with E2BIG, else the lowest free
// slot takes the key. A delete port (kind 1, del 1) clears its key's slot when en_i, or fails with ENOENT. hit_o is
// "the value is to be written at slot_o", err_o the positive errno (0 on success). req_i and busy_o are for LRU
// blocks only (busy_o is 0 otherwise).
//
// With LRU = 1 (LRU_HASH and LRU_PERCPU_HASH; PERCPU and CPUS as ehdl_lru's) the slots are the reference machine's LRU
// nodes and an ehdl_lru block keeps its lists: a lookup that hits marks its node referenced when en_i; updates and
// deletes take several cycles, one at a time. A port with kind 1 and req_i (its stage would move but for this block)
// starts the operation when the block is idle (the lowest such port first) and keeps busy_o high until the outcome is
// there (the stage must hold; busy_o never depends on en_i); then hit_o, slot_o and err_o show it until en_i commits
// it. The table changes (evictions, the new key, the replaced element) happen during the operation; no other port of
// the block may act meanwhile, which the generator's stall checks guarantee.
//
// Host port: with host_valid_i low, 8 bytes at a byte address of the key space, where slot s's key starts at
// s * KS (KS, the key stride, the smallest power of two of at least 8 and KEY_BYTES; bytes past KEY_BYTES read 0 and
// ignore writes); with host_valid_i high, the valid bit of slot host_addr_i in bit 0. The host reads the state before
// this cycle's writes and its write is applied last. LRU blocks ignore host writes (an entry the host put in would
// be missing from the LRU lists). Reset empties the map.
// Probe ports (NQ of them, for the generator's stall checks): whether a key is present before this cycle's writes and
// its slot, computed apart from the pipeline ports so that a check may hold a stage whose own port feeds the block.
// With LPM = 1 the block is an LPM_TRIE map's: a key is {prefixlen (4 bytes, little-endian), data}, and a lookup
// finds the valid entry with the longest prefix (lowest slot on a tie) whose prefixlen is at most the key's and
// whose first prefixlen data bits (most significant bit of data byte 0 first) equal the key's. LPM blocks take no
// update or delete ports.
//
// The keys live in banks of 16 slots (ehdl_cam_bank), which compare every key a cycle needs against the stored keys;
// this block keeps the valid bits and applies the ports in order on top of the banks' matches: a port sees the
// valid bits as the ports before it left them, and a slot whose key one of them (or the LRU operation) wrote this
// cycle matches by that writer's key, not the stale stored one. Lowest-slot choices are x & -x on the candidate
// vector, encoded by OR trees, rather than ENTRIES-deep mux chains. Keys are unique in the table (an update finds a
// present key before it inserts), which the host must keep too.
module ehdl_hash_map #(
  parameter integer ENTRIES   = 4,   // max_entries
  parameter integer KEY_BYTES = 4,   // key_size
  parameter integer NP        = 1,   // pipeline ports
  parameter integer SW        = 2,   // slot index width, at least 1 and $clog2(ENTRIES)
  parameter integer AW        = 16,  // host address width, 1..31
  parameter integer LPM       = 0,   // 1: longest-prefix match (LPM_TRIE), KEY_BYTES > 4
  parameter integer LRU       = 0,   // 1: LRU_HASH (ehdl_lru lists)
  parameter integer PERCPU    = 0,   // with LRU: LRU_PERCPU_HASH update semantics
  parameter integer CPUS      = 1,   // with LRU: the possible CPUs the LRU's target_free is sized for
  parameter integer NQ        = 1    // probe ports (exact match; unused ones tied off)
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic [NP-1:0]             kind_i,   // 0 lookup, 1 update or delete
  input  logic [NP-1:0]             del_i,    // with kind 1: delete
  input  logic [NP-1:0]             en_i,     // perform (gated by the advance)
  input  logic [NP-1:0]             req_i,    // LRU: the port's stage wants to move
  input  logic [NP*8*KEY_BYTES-1:0] key_i,
  input  logic [NP*2-1:0]           flags_i,
  output logic [NP-1:0]             hit_o,
  output logic [NP*SW-1:0]          slot_o,
  output logic [NP*8-1:0]           err_o,
  output logic [NP-1:0]             busy_o,
  input  logic [NQ*8*KEY_BYTES-1:0] probe_key_i,
  output logic [NQ-1:0]             probe_hit_o,
  output logic [NQ*SW-1:0]          probe_slot_o,
  input  logic                      host_we_i,
  input  logic                      host_valid_i,
  input  logic [AW-1:0]             host_addr_i,
  input  logic [63:0]               host_wdata_i,
  input  logic [7:0]                host_wmask_i,
  output logic [63:0]               host_rdata_o
);

  localparam integer KS     = (KEY_BYTES <= 8) ? 8 : (KEY_BYTES <= 16) ? 16 : (KEY_BYTES <= 32) ? 32 : 64;
  localparam integer KB     = 8 * KEY_BYTES;
  localparam integer KWORDS = KS / 8;        // host words per slot
  localparam integer WW     = AW - 3 + 1;    // host word address width, one spare bit for the next word
  localparam integer EEXIST = 17;
  localparam integer ENOENT = 2;
  localparam integer E2BIG  = 7;
  localparam integer BANK_SLOTS = 16;
  localparam integer FULL_BANKS = ENTRIES / BANK_SLOTS;
  localparam integer LAST_SLOTS = ENTRIES - FULL_BANKS * BANK_SLOTS;
  localparam integer BANKS      = FULL_BANKS + ((LAST_SLOTS > 0) ? 1 : 0);
  // Keys compared against the table: the ports', the probes' and (LRU) the operation's.
  localparam integer NK  = NP + NQ + ((LRU == 1) ? 1 : 0);
  // Key writers, in order: the LRU operation, the ports, the host's two words.
  localparam integer NWR = 1 + NP + 2;

  logic [ENTRIES-1:0]    valid_q;
  logic [ENTRIES-1:0]    valid_d;
  logic                  found;
  logic                  free;
  logic [SW-1:0]         found_slot;
  logic [SW-1:0]         free_slot;
  logic                  wr;
  logic                  clr;
  logic [SW-1:0]         clr_slot;
  logic [ENTRIES-1:0]    ref_set;
  integer                best;
  logic [ENTRIES-1:0]    written;  // slots whose key a writer before the port wrote this cycle
  logic [ENTRIES-1:0]    fresh;    // those of them now holding the port's key
  logic [ENTRIES-1:0]    cand;
  logic [ENTRIES-1:0]    oh;       // one writer's slot, one-hot

  // SlotBits[j * ENTRIES + e] is bit j of slot number e: the slots each index bit's OR tree collects. A constant,
  // so that lowest() is SW AND-OR reductions; a loop over the slots inside lowest() had Yosys' front end unroll
  // SW * ENTRIES statements per call (over an hour for nat's five-port 1024-entry map).
  function automatic logic [SW*ENTRIES-1:0] slot_bits();
    for (integer j = 0; j < SW; j = j + 1) begin
      for (integer e = 0; e < ENTRIES; e = e + 1) slot_bits[j*ENTRIES + e] = ((e >> j) & 1) == 1;
    end
  endfunction
  localparam logic [SW*ENTRIES-1:0] SlotBits = slot_bits();

  // The lowest set bit of v (bit SW: any set).
  function automatic logic [SW:0] lowest(input logic [ENTRIES-1:0] v);
    logic [ENTRIES-1:0] one;
    logic [SW-1:0]      slot;
    one = v & (~v + 1'b1);
    for (integer j = 0; j < SW; j = j + 1) slot[j] = |(one & SlotBits[j*ENTRIES +: ENTRIES]);
    lowest = {|v, slot};
  endfunction

  // Slot s as a one-hot vector (0 past ENTRIES): an AND of index-bit masks rather than ENTRIES'(1) << s, because
  // Yosys' share pass weighs every variable shift against the others by the conditions their results are used
  // under, and behind the banks' per-slot, per-byte key writes those run to millions (hours on nat's maps).
  function automatic logic [ENTRIES-1:0] onehot(input logic [SW-1:0] s);
    onehot = '1;
    for (integer j = 0; j < SW; j = j + 1) onehot = onehot & ~(SlotBits[j*ENTRIES +: ENTRIES] ^ {ENTRIES{s[j]}});
  endfunction

  // LRU: the operation's key, latched when it starts, its entry in the table, and the lists' table changes.
  logic                  l_idle;
  logic                  l_done;
  logic                  l_ok;
  logic [SW-1:0]         l_slot;
  logic [7:0]            l_err;
  logic                  l_clr;
  logic [SW-1:0]         l_clr_slot;
  logic                  l_set;
  logic [SW-1:0]         l_set_slot;
  logic                  l_start;
  logic                  l_del;
  logic [1:0]            l_flags;
  logic                  l_exact;
  logic [SW-1:0]         l_exact_slot;
  integer                l_pick;
  integer                owner_q;
  logic [KB-1:0]         lkey_q;
  logic [KB-1:0]         l_key;
  logic [ENTRIES-1:0]    lru_valid;

  always_comb begin
    l_pick  = -1;
    l_start = 1'b0;
    l_del   = 1'b0;
    l_flags = 2'd0;
    l_key   = lkey_q;
    for (integer p = NP - 1; p >= 0; p = p - 1) begin
      if (LRU == 1 && kind_i[p] && req_i[p]) begin
        l_pick = p;
      end
    end
    if (LRU == 1 && l_idle && l_pick >= 0) begin
      l_start = 1'b1;
      l_del   = del_i[l_pick];
      l_flags = flags_i[2*l_pick +: 2];
      l_key   = key_i[KB*l_pick +: KB];
    end
  end

  // The banks: every compare key against every stored key, and the key writes.
  logic [NK*KB-1:0]         cmp_key;
  logic [NK*ENTRIES-1:0]    match;       // compare key k against slot e at k * ENTRIES + e
  logic [ENTRIES*NK-1:0]    slot_match;  // the banks' outputs, slot-major: at e * NK + k
  logic [BANKS*NP-1:0]      bank_lpm_found;
  logic [BANKS*NP*32-1:0]   bank_lpm_plen;
  logic [BANKS*NP*SW-1:0]   bank_lpm_slot;
  logic [BANKS*128-1:0]     bank_pair;
  logic [NWR-1:0]           wr_en;
  logic [NWR*SW-1:0]        wr_slot;
  logic [NWR*KEY_BYTES-1:0] wr_mask;
  logic [NWR*KB-1:0]        wr_data;
  logic [WW-1:0]            hw0;          // the host's first word address
  assign hw0 = {1'b0, host_addr_i[AW-1:3]};

  if (LRU == 1) begin : g_cmp_lru
    assign cmp_key = {lkey_q, probe_key_i, key_i};
  end else begin : g_cmp
    assign cmp_key = {probe_key_i, key_i};
  end

  for (genvar b = 0; b < BANKS; b = b + 1) begin : g_bank
    localparam integer SLOTS = (b < FULL_BANKS) ? BANK_SLOTS : LAST_SLOTS;
    ehdl_cam_bank #(
      .SLOTS(SLOTS), .KEY_BYTES(KEY_BYTES), .NK(NK), .NWR(NWR), .SW(SW), .LPM(LPM), .NL(NP), .KWORDS(KWORDS),
      .WW(WW)
    ) u_bank (
      .clk_i(clk_i), .first_i(SW'(b * BANK_SLOTS)), .valid_i(valid_q[b*BANK_SLOTS +: SLOTS]), .key_i(cmp_key),
      .match_o(slot_match[b*BANK_SLOTS*NK +: SLOTS*NK]), .lpm_found_o(bank_lpm_found[b*NP +: NP]),
      .lpm_plen_o(bank_lpm_plen[b*NP*32 +: NP*32]), .lpm_slot_o(bank_lpm_slot[b*NP*SW +: NP*SW]),
      .wr_en_i(wr_en), .wr_slot_i(wr_slot), .wr_mask_i(wr_mask), .wr_data_i(wr_data), .host_word_i(hw0),
      .host_pair_o(bank_pair[b*128 +: 128])
    );
  end

  // Key-major, so that a key's matches over the table are one vector.
  always_comb begin
    for (integer k = 0; k < NK; k = k + 1) begin
      for (integer e = 0; e < ENTRIES; e = e + 1) match[k*ENTRIES + e] = slot_match[e*NK + k];
    end
  end

  always_comb begin
    {l_exact, l_exact_slot} = lowest(valid_q & match[(NK - 1)*ENTRIES +: ENTRIES]);
    if (LRU == 0) begin
      l_exact      = 1'b0;
      l_exact_slot = '0;
    end
  end

  always_comb begin
    probe_hit_o  = '0;
    probe_slot_o = '0;
    for (integer q = 0; q < NQ; q = q + 1) begin
      {probe_hit_o[q], probe_slot_o[SW*q +: SW]} = lowest(valid_q & match[(NP + q)*ENTRIES +: ENTRIES]);
    end
  end

  // The table as the LRU lists have changed it this cycle (evictions, the operation's own changes).
  always_comb begin
    lru_valid = (valid_q & ~(onehot(l_clr_slot) & {ENTRIES{LRU == 1 && l_clr}}))
              | (onehot(l_set_slot) & {ENTRIES{LRU == 1 && l_set}});
  end

  if (LRU == 1) begin : g_lru
    ehdl_lru #(.ENTRIES(ENTRIES), .SW(SW), .CPUS(CPUS), .PERCPU(PERCPU)) u_lru (
      .clk_i(clk_i), .rst_ni(rst_ni), .start_i(l_start), .del_i(l_del), .flags_i(l_flags),
      .commit_i(owner_q >= 0 && owner_q < NP && en_i[owner_q]), .exact_i(l_exact), .exact_slot_i(l_exact_slot),
      .valid_i(valid_q), .ref_set_i(ref_set), .idle_o(l_idle), .done_o(l_done), .ok_o(l_ok), .slot_o(l_slot),
      .err_o(l_err), .tbl_clr_o(l_clr), .tbl_clr_slot_o(l_clr_slot), .tbl_set_o(l_set),
      .tbl_set_slot_o(l_set_slot)
    );
  end else begin : g_no_lru
    assign l_idle     = 1'b1;
    assign l_done     = 1'b0;
    assign l_ok       = 1'b0;
    assign l_slot     = '0;
    assign l_err      = '0;
    assign l_clr      = 1'b0;
    assign l_clr_slot = '0;
    assign l_set      = 1'b0;
    assign l_set_slot = '0;
    logic unused_lru;
    assign unused_lru = ^{ref_set, l_del, l_flags, l_exact, l_exact_slot, PERCPU[0], CPUS[0]};
  end

  // Apart from the ports' outcomes, which depend on en_i: a stage's enable may depend on busy_o.
  always_comb begin
    busy_o = '0;
    for (integer p = 0; p < NP; p = p + 1) begin
      if (LRU == 1 && kind_i[p] && !(l_done && owner_q == p)) busy_o[p] = req_i[p];
    end
  end

  always_comb begin
    valid_d    = lru_valid;
    written    = '0;
    oh         = '0;
    fresh      = '0;
    cand       = '0;
    wr_en      = '0;
    wr_slot    = '0;
    wr_mask    = '0;
    wr_data    = '0;
    if (LRU == 1 && l_set) begin
      wr_en[0]         = 1'b1;
      wr_slot[SW-1:0]  = l_set_slot;
      wr_mask[KEY_BYTES-1:0] = '1;
      wr_data[KB-1:0]  = lkey_q;
    end
    hit_o      = '0;
    slot_o     = '0;
    err_o      = '0;
    ref_set    = '0;
    found      = 1'b0;
    free       = 1'b0;
    found_slot = '0;
    free_slot  = '0;
    wr         = 1'b0;
    clr        = 1'b0;
    clr_slot   = '0;
    best       = -1;
    for (integer p = 0; p < NP; p = p + 1) begin
      wr       = 1'b0;
      clr      = 1'b0;
      clr_slot = '0;
      // Slots written this cycle by the writers before this port (the LRU operation, then ports 0..p-1) hold the
      // last writer's key; the banks still compare the stored one.
      written = '0;
      fresh   = '0;
      // Whole vectors per writer, not a statement per slot (which Yosys' front end unrolls).
      for (integer w = 0; w <= p; w = w + 1) begin
        oh      = onehot(wr_slot[SW*w +: SW]) & {ENTRIES{wr_en[w]}};
        written = written | oh;
        fresh   = (wr_data[KB*w +: KB] == key_i[KB*p +: KB]) ? fresh | oh : fresh & ~oh;
      end
      cand                = valid_d & ((match[p*ENTRIES +: ENTRIES] & ~written) | fresh);
      {found, found_slot} = lowest(cand);
      {free, free_slot}   = lowest(~valid_d);
      if (LPM == 1) begin
        // Longest prefix over the banks, ascending, so a tie keeps the lowest slot.
        best       = -1;
        found      = 1'b0;
        found_slot = '0;
        for (integer b = 0; b < BANKS; b = b + 1) begin
          if (bank_lpm_found[b*NP + p] && $signed(bank_lpm_plen[(b*NP + p)*32 +: 32]) > best) begin
            best       = bank_lpm_plen[(b*NP + p)*32 +: 32];
            found      = 1'b1;
            found_slot = bank_lpm_slot[(b*NP + p)*SW +: SW];
          end
        end
      end
      if (!kind_i[p]) begin
        hit_o[p]           = found;
        slot_o[SW*p +: SW] = found_slot;
        ref_set            = ref_set | (onehot(found_slot) & {ENTRIES{LRU == 1 && en_i[p] && found}});
      end else if (LRU == 1) begin
        if (l_done && owner_q == p) begin
          hit_o[p]           = en_i[p] && l_ok;
          slot_o[SW*p +: SW] = l_slot;
          err_o[8*p +: 8]    = l_err;
        end
      end else if (del_i[p]) begin
        if (found) begin
          clr      = en_i[p];
          clr_slot = found_slot;
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
      end else if (!free) begin
        err_o[8*p +: 8] = E2BIG[7:0];
      end else begin
        hit_o[p]           = en_i[p];
        slot_o[SW*p +: SW] = free_slot;
        wr                 = en_i[p];
      end
      if (wr) begin
        wr_en[1 + p]                        = 1'b1;
        wr_slot[SW*(1 + p) +: SW]           = free_slot;
        wr_mask[KEY_BYTES*(1 + p) +: KEY_BYTES] = '1;
        wr_data[KB*(1 + p) +: KB]           = key_i[KB*p +: KB];
      end
      // The port's change as one-hot vectors (no slot-indexed writes): a set, then a clear that wins over it.
      valid_d = (valid_d | (onehot(free_slot) & {ENTRIES{wr}})) & ~(onehot(clr_slot) & {ENTRIES{clr}});
    end
    // The host's key bytes: the words at hw0 and hw0 + 1, each in its slot (LRU blocks ignore host writes).
    for (integer h = 0; h < 2; h = h + 1) begin
      if (LRU == 0 && host_we_i && !host_valid_i && (32'(hw0) + h) / KWORDS < ENTRIES) begin
        wr_en[1 + NP + h]               = 1'b1;
        wr_slot[SW*(1 + NP + h) +: SW] = SW'((32'(hw0) + h) / KWORDS);
        for (integer j = 0; j < KEY_BYTES; j = j + 1) begin
          wr_mask[KEY_BYTES*(1 + NP + h) + j] = (j / 8 == ((32'(hw0) + h) % KWORDS)) && hmask[64*h + 8*(j%8)];
          wr_data[KB*(1 + NP + h) + 8*j +: 8] = hdata[64*h + 8*(j%8) +: 8];
        end
      end
    end
  end

  // Host port: the key space as 8-byte words, slot s's word w at word address s * KWORDS + w; an access at byte
  // address a covers words a / 8 and a / 8 + 1, shifted by a % 8.
  logic [2:0]     hsh;
  logic [127:0]   hpair;
  logic [127:0]   hmask;
  logic [127:0]   hdata;
  logic [ENTRIES-1:0] host_slot;      // the slot host_addr_i names, one-hot (none past the table)
  logic [ENTRIES-1:0] host_valid_we;  // host_slot when the host writes its valid bit
  assign host_slot     = onehot(SW'(host_addr_i)) & {ENTRIES{32'(host_addr_i) < ENTRIES}};
  assign host_valid_we = host_slot & {ENTRIES{LRU == 0 && host_we_i && host_valid_i && host_wmask_i[0]}};

  always_comb begin
    hsh   = host_addr_i[2:0];
    hpair = '0;
    for (integer b = 0; b < BANKS; b = b + 1) begin
      hpair = hpair | bank_pair[b*128 +: 128];
    end
    hmask = '0;
    for (integer b = 0; b < 8; b = b + 1) begin
      hmask[8*b +: 8] = {8{host_wmask_i[b]}};
    end
    hdata = {64'd0, host_wdata_i};
    // Byte shifts by hsh as three constant steps, not variable shifts, for the reason onehot() gives.
    for (integer k = 0; k < 3; k = k + 1) begin
      if (hsh[k]) begin
        hmask = hmask << (8 << k);
        hdata = hdata << (8 << k);
        hpair = hpair >> (8 << k);
      end
    end
    host_rdata_o = '0;
    if (host_valid_i) begin
      host_rdata_o[0] = |(valid_q & host_slot);
    end else begin
      host_rdata_o = hpair[63:0];
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
      owner_q <= -1;
    end else begin
      valid_q <= (valid_d & ~host_valid_we) | (host_valid_we & {ENTRIES{host_wdata_i[0]}});
      if (l_start) owner_q <= l_pick;
    end
  end

  always_ff @(posedge clk_i) begin
    if (l_start) lkey_q <= l_key;
  end

endmodule
