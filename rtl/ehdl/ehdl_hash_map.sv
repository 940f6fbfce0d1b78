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
// With LRU = 1 (LRU_HASH and LRU_PERCPU_HASH; PERCPU and CPUS as ehdl_lru's) the slots are the reference machine's LRU nodes and an
// ehdl_lru block keeps its lists: a lookup that hits marks its node referenced when en_i; updates and deletes take
// several cycles, one at a time. A port with kind 1 and req_i (its stage would move but for this block) starts the
// operation when the block is idle (the lowest such port first) and keeps busy_o high until the outcome is there
// (the stage must hold; busy_o never depends on en_i); then hit_o, slot_o and err_o show it until en_i commits it.
// The table changes (evictions, the new key, the replaced element) happen during the operation; no other port of
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

  logic [ENTRIES-1:0]    valid_q;
  logic [ENTRIES-1:0]    valid_d;
  logic [KB*ENTRIES-1:0] keys_q;
  logic [KB*ENTRIES-1:0] keys_d;
  logic                  found;
  logic                  free;
  logic [SW-1:0]         found_slot;
  logic [SW-1:0]         free_slot;
  logic                  wr;
  logic [SW-1:0]         wr_slot;
  logic                  clr;
  logic [SW-1:0]         clr_slot;
  logic [ENTRIES-1:0]    ref_set;
  integer                best;
  integer                plen;
  integer                klen;
  logic                  same;

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
    l_exact      = 1'b0;
    l_exact_slot = '0;
    for (integer e = ENTRIES - 1; e >= 0; e = e - 1) begin
      if (valid_q[e] && keys_q[KB*e +: KB] == lkey_q) begin
        l_exact      = 1'b1;
        l_exact_slot = e[SW-1:0];
      end
    end
  end

  always_comb begin
    probe_hit_o  = '0;
    probe_slot_o = '0;
    for (integer q = 0; q < NQ; q = q + 1) begin
      // Descending, so the lowest matching slot is the one left.
      for (integer e = ENTRIES - 1; e >= 0; e = e - 1) begin
        if (valid_q[e] && keys_q[KB*e +: KB] == probe_key_i[KB*q +: KB]) begin
          probe_hit_o[q]           = 1'b1;
          probe_slot_o[SW*q +: SW] = e[SW-1:0];
        end
      end
    end
  end

  // The table as the LRU lists have changed it this cycle (evictions, the operation's own changes).
  always_comb begin
    lru_valid = valid_q;
    for (integer e = 0; e < ENTRIES; e = e + 1) begin
      if (LRU == 1 && l_clr && l_clr_slot == e[SW-1:0]) lru_valid[e] = 1'b0;
      if (LRU == 1 && l_set && l_set_slot == e[SW-1:0]) lru_valid[e] = 1'b1;
    end
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

  always_comb begin
    valid_d    = lru_valid;
    keys_d     = keys_q;
    for (integer e = 0; e < ENTRIES; e = e + 1) begin
      if (LRU == 1 && l_set && l_set_slot == e[SW-1:0]) keys_d[KB*e +: KB] = lkey_q;
    end
    hit_o      = '0;
    slot_o     = '0;
    err_o      = '0;
    busy_o     = '0;
    ref_set    = '0;
    found      = 1'b0;
    free       = 1'b0;
    found_slot = '0;
    free_slot  = '0;
    wr         = 1'b0;
    wr_slot    = '0;
    clr        = 1'b0;
    clr_slot   = '0;
    best       = -1;
    plen       = 0;
    klen       = 0;
    same       = 1'b0;
    for (integer p = 0; p < NP; p = p + 1) begin
      found      = 1'b0;
      free       = 1'b0;
      found_slot = '0;
      free_slot  = '0;
      wr         = 1'b0;
      wr_slot    = '0;
      clr        = 1'b0;
      clr_slot   = '0;
      // Descending, so the lowest matching (and the lowest free) slot is the one left.
      for (integer e = ENTRIES - 1; e >= 0; e = e - 1) begin
        if (valid_d[e] && keys_d[KB*e +: KB] == key_i[KB*p +: KB]) begin
          found      = 1'b1;
          found_slot = e[SW-1:0];
        end
        if (!valid_d[e]) begin
          free      = 1'b1;
          free_slot = e[SW-1:0];
        end
      end
      if (LPM == 1) begin
        // Longest prefix: ascending, so a tie keeps the lowest slot.
        best       = -1;
        found      = 1'b0;
        found_slot = '0;
        klen       = key_i[KB*p +: 32];
        for (integer e = 0; e < ENTRIES; e = e + 1) begin
          plen = keys_d[KB*e +: 32];
          same = valid_d[e] && plen <= klen && plen <= 8 * (KEY_BYTES - 4) && plen > best;
          for (integer i = 0; i < 8 * (KEY_BYTES - 4); i = i + 1) begin
            if (i < plen && keys_d[KB*e + 32 + 8*(i/8) + 7 - i%8] != key_i[KB*p + 32 + 8*(i/8) + 7 - i%8]) begin
              same = 1'b0;
            end
          end
          if (same) begin
            best       = plen;
            found      = 1'b1;
            found_slot = e[SW-1:0];
          end
        end
      end
      if (!kind_i[p]) begin
        hit_o[p]           = found;
        slot_o[SW*p +: SW] = found_slot;
        if (LRU == 1 && en_i[p] && found) begin
          for (integer e = 0; e < ENTRIES; e = e + 1) begin
            if (found_slot == e[SW-1:0]) ref_set[e] = 1'b1;
          end
        end
      end else if (LRU == 1) begin
        if (l_done && owner_q == p) begin
          hit_o[p]           = en_i[p] && l_ok;
          slot_o[SW*p +: SW] = l_slot;
          err_o[8*p +: 8]    = l_err;
        end else begin
          busy_o[p] = req_i[p];
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
        wr_slot            = free_slot;
      end
      // The port's change, slot by slot (no slot-indexed writes).
      for (integer e = 0; e < ENTRIES; e = e + 1) begin
        if (wr && wr_slot == e[SW-1:0]) begin
          valid_d[e]         = 1'b1;
          keys_d[KB*e +: KB] = key_i[KB*p +: KB];
        end
        if (clr && clr_slot == e[SW-1:0]) begin
          valid_d[e] = 1'b0;
        end
      end
    end
  end

  // Host port: the key space as 8-byte words, slot s's word w at word address s * KWORDS + w; an access at byte
  // address a covers words a / 8 and a / 8 + 1, shifted by a % 8.
  logic [WW-1:0]  hw0;
  logic [2:0]     hsh;
  logic [127:0]   hpair;
  logic [127:0]   hmask;
  logic [127:0]   hdata;
  logic [8*KS-1:0] kpad;

  always_comb begin
    hw0   = {1'b0, host_addr_i[AW-1:3]};
    hsh   = host_addr_i[2:0];
    hpair = '0;
    kpad  = '0;
    for (integer e = 0; e < ENTRIES; e = e + 1) begin
      kpad     = '0;
      kpad[KB-1:0] = keys_q[KB*e +: KB];
      for (integer w = 0; w < KWORDS; w = w + 1) begin
        if (hw0 == WW'(e * KWORDS + w)) hpair[63:0] = kpad[64*w +: 64];
        if (hw0 + WW'(1) == WW'(e * KWORDS + w)) hpair[127:64] = kpad[64*w +: 64];
      end
    end
    hmask = '0;
    for (integer b = 0; b < 8; b = b + 1) begin
      hmask[8*b +: 8] = {8{host_wmask_i[b]}};
    end
    hmask = hmask << (8 * hsh);
    hdata = {64'd0, host_wdata_i} << (8 * hsh);
    host_rdata_o = '0;
    if (host_valid_i) begin
      for (integer e = 0; e < ENTRIES; e = e + 1) begin
        if (host_addr_i == AW'(e)) host_rdata_o[0] = valid_q[e];
      end
    end else begin
      host_rdata_o = 64'(hpair >> (8 * hsh));
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
      owner_q <= -1;
    end else begin
      valid_q <= valid_d;
      if (LRU == 0 && host_we_i && host_valid_i && host_wmask_i[0]) begin
        for (integer e = 0; e < ENTRIES; e = e + 1) begin
          if (host_addr_i == AW'(e)) valid_q[e] <= host_wdata_i[0];
        end
      end
      if (l_start) owner_q <= l_pick;
    end
  end

  always_ff @(posedge clk_i) begin
    keys_q <= keys_d;
    if (l_start) lkey_q <= l_key;
    if (LRU == 0 && host_we_i && !host_valid_i) begin
      for (integer e = 0; e < ENTRIES; e = e + 1) begin
        for (integer w = 0; w < KWORDS; w = w + 1) begin
          for (integer b = 0; b < 8; b = b + 1) begin
            if (8 * w + b < KEY_BYTES) begin
              if (hw0 == WW'(e * KWORDS + w) && hmask[8*b]) begin
                keys_q[KB*e + 64*w + 8*b +: 8] <= hdata[8*b +: 8];
              end
              if (hw0 + WW'(1) == WW'(e * KWORDS + w) && hmask[64 + 8*b]) begin
                keys_q[KB*e + 64*w + 8*b +: 8] <= hdata[64 + 8*b +: 8];
              end
            end
          end
        end
      end
    end
  end

endmodule
