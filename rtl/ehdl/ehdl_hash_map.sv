`default_nettype none
// eHDL map block: the keys of one HASH map as a CAM, for bpf_map_lookup_elem and bpf_map_update_elem from the
// pipeline and for the host.
//
// Slot s holds a key (KEY_BYTES) and a valid bit; the values live in an ehdl_map_mem block of ENTRIES * value_size
// bytes beside this one, addressed by slot. Ports act in index order within a cycle, each seeing the updates of
// the ports before it (the generator orders them later stage first, like the value ports). A lookup port
// (kind 0) gives hit and the lowest valid slot holding its key. An update port (kind 1, flags 0 any, 1 noexist,
// 2 exist), when en_i, finds its key: if present, NOEXIST fails with EEXIST, else the slot is the key's; if
// absent, EXIST fails with ENOENT, a full map fails with E2BIG, else the lowest free slot takes the key. hit_o is
// "the value is to be written at slot_o", err_o the positive errno (0 on success). Host port: with host_valid_i
// low, 8 bytes at a byte address of the key space, where slot s's key starts at s * KS (KS, the key stride, the
// smallest power of two of at least 8 and KEY_BYTES; bytes past KEY_BYTES read 0 and ignore writes); with
// host_valid_i high, the valid bit of slot host_addr_i in bit 0. The host reads the state before this cycle's
// writes and its write is applied last. Reset empties the map.
// With LPM = 1 the block is an LPM_TRIE map's: a key is {prefixlen (4 bytes, little-endian), data}, and a lookup
// finds the valid entry with the longest prefix (lowest slot on a tie) whose prefixlen is at most the key's and
// whose first prefixlen data bits (most significant bit of data byte 0 first) equal the key's. LPM blocks take no
// update ports.
module ehdl_hash_map #(
  parameter integer ENTRIES   = 4,   // max_entries
  parameter integer KEY_BYTES = 4,   // key_size
  parameter integer NP        = 1,   // pipeline ports
  parameter integer SW        = 2,   // slot index width, at least 1 and $clog2(ENTRIES)
  parameter integer AW        = 16,  // host address width, 1..31
  parameter integer LPM       = 0    // 1: longest-prefix match (LPM_TRIE), KEY_BYTES > 4
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic [NP-1:0]             kind_i,   // 0 lookup, 1 update
  input  logic [NP-1:0]             en_i,     // update ports: perform the update (gated by the advance)
  input  logic [NP*8*KEY_BYTES-1:0] key_i,
  input  logic [NP*2-1:0]           flags_i,
  output logic [NP-1:0]             hit_o,
  output logic [NP*SW-1:0]          slot_o,
  output logic [NP*8-1:0]           err_o,
  input  logic                      host_we_i,
  input  logic                      host_valid_i,
  input  logic [AW-1:0]             host_addr_i,
  input  logic [63:0]               host_wdata_i,
  input  logic [7:0]                host_wmask_i,
  output logic [63:0]               host_rdata_o
);

  localparam integer KS     = (KEY_BYTES <= 8) ? 8 : (KEY_BYTES <= 16) ? 16 : (KEY_BYTES <= 32) ? 32 : 64;
  localparam integer EEXIST = 17;
  localparam integer ENOENT = 2;
  localparam integer E2BIG  = 7;

  logic [ENTRIES-1:0]             valid_q;
  logic [ENTRIES-1:0]             valid_d;
  logic [8*KEY_BYTES*ENTRIES-1:0] keys_q;
  logic [8*KEY_BYTES*ENTRIES-1:0] keys_d;
  logic                           found;
  logic                           free;
  logic [SW-1:0]                  found_slot;
  logic [SW-1:0]                  free_slot;
  integer                         at;
  integer                         best;
  integer                         plen;
  integer                         klen;
  logic                           same;

  always_comb begin
    valid_d    = valid_q;
    keys_d     = keys_q;
    hit_o      = '0;
    slot_o     = '0;
    err_o      = '0;
    found      = 1'b0;
    free       = 1'b0;
    found_slot = '0;
    free_slot  = '0;
    best       = -1;
    plen       = 0;
    klen       = 0;
    same       = 1'b0;
    for (integer p = 0; p < NP; p = p + 1) begin
      found      = 1'b0;
      free       = 1'b0;
      found_slot = '0;
      free_slot  = '0;
      // Descending, so the lowest matching (and the lowest free) slot is the one left.
      for (integer e = ENTRIES - 1; e >= 0; e = e - 1) begin
        if (valid_d[e] && keys_d[8*KEY_BYTES*e +: 8*KEY_BYTES] == key_i[8*KEY_BYTES*p +: 8*KEY_BYTES]) begin
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
        klen       = key_i[8*KEY_BYTES*p +: 32];
        for (integer e = 0; e < ENTRIES; e = e + 1) begin
          plen = keys_d[8*KEY_BYTES*e +: 32];
          same = valid_d[e] && plen <= klen && plen <= 8 * (KEY_BYTES - 4) && plen > best;
          for (integer i = 0; i < 8 * (KEY_BYTES - 4); i = i + 1) begin
            if (i < plen && keys_d[8*KEY_BYTES*e + 32 + 8*(i/8) + 7 - i%8]
                != key_i[8*KEY_BYTES*p + 32 + 8*(i/8) + 7 - i%8]) begin
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
        hit_o[p]              = found;
        slot_o[SW*p +: SW]    = found_slot;
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
        if (en_i[p]) begin
          valid_d[free_slot] = 1'b1;
          keys_d[8*KEY_BYTES*free_slot +: 8*KEY_BYTES] = key_i[8*KEY_BYTES*p +: 8*KEY_BYTES];
        end
      end
    end
    host_rdata_o = '0;
    at           = {{(32 - AW){1'b0}}, host_addr_i};
    if (host_valid_i) begin
      if (at < ENTRIES) begin
        host_rdata_o[0] = valid_q[at];
        if (host_we_i && host_wmask_i[0]) begin
          valid_d[at] = host_wdata_i[0];
        end
      end
    end else begin
      for (integer b = 0; b < 8; b = b + 1) begin
        if ((at + b) / KS < ENTRIES && (at + b) % KS < KEY_BYTES) begin
          host_rdata_o[8*b +: 8] = keys_q[8*(KEY_BYTES*((at + b) / KS) + (at + b) % KS) +: 8];
          if (host_we_i && host_wmask_i[b]) begin
            keys_d[8*(KEY_BYTES*((at + b) / KS) + (at + b) % KS) +: 8] = host_wdata_i[8*b +: 8];
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
    end else begin
      valid_q <= valid_d;
    end
  end

  always_ff @(posedge clk_i) begin
    keys_q <= keys_d;
  end

endmodule
