`default_nettype none
// hXDP maps module: ARRAY, PERCPU_ARRAY, HASH, PERCPU_HASH, LRU_HASH, LPM_TRIE, PROG_ARRAY, DEVMAP, ARRAY_OF_MAPS and
// HASH_OF_MAPS maps shaped at load time, with crates/maps' kernel semantics; RINGBUF maps are accepted without storage
// (the helper module serves them). Maps of maps hold the inner map's index among the program's maps (its map table
// row) as their 4-byte value: ARRAY_OF_MAPS is laid out as a PROG_ARRAY (present entries, the host's fd-array rules;
// the helper module looks it up with a get), HASH_OF_MAPS as a HASH whose program lookups read the value (rsp_value_o)
// and whose program updates and deletes give -EINVAL; the helper module turns the index into the map handle.
//
// Load time: cfg_we_i writes one map's definition (the image's map table row); cfg_done_i lays every written map out
// (one cycle), flags cfg_error_o when a definition is invalid for the kernel (crates/maps/src/create.rs checks) or
// does not fit (type other than 1, 2, 3, 5, 6, 9, 11, 12, 13, 14, 27; key_size above KEY_BYTES; value_size above VALUE_BYTES
// (PROG_ARRAY, DEVMAP: at or above); more CAM entries, value rows, bucket slots, bucket rows or LRU nodes than
// ENTRIES / MEM_WORDS / HASH_SLOTS / HASH_ROWS / LRU_NODES; LRU_HASH with BPF_F_NO_COMMON_LRU, the per-CPU LRU, which
// is not built), then zeroes the value memory and builds the LRU lists (max(MEM_WORDS, LRU_NODES + 5 * MAPS,
// HASH_SLOTS, HASH_ROWS) cycles, requests wait). cfg_error_o stays set until reset. Maps not written do
// not exist: their operations give -EINVAL or a miss, as hwxdp_maps::Maps does for a map index it does not have.
//
// One CPU: hXDP is one core, so PERCPU_ARRAY and PERCPU_HASH are hwxdp_maps' per-CPU maps with one possible CPU,
// which behave as ARRAY and HASH except that a PERCPU_HASH update of a present key writes its element in place (no
// spare element: max_entries slots), as the kernel's per-CPU maps do (the same checks at run time;
// creation also refuses BPF_F_NUMA_NODE, and BPF_F_MMAPABLE / BPF_F_INNER_MAP for PERCPU_ARRAY). The host port shows
// CPU 0's value: value_size bytes, zero after them; the syscall view of one possible CPU is that value padded with
// zeros to a multiple of 8 bytes (hwxdp_maps with one CPU takes updates of that size, and its lookups and listings
// give the value_size bytes).
//
// Storage:
// - values: MEM_WORDS rows of 8 bytes (maps_values, eight byte banks: block RAM at the defaults). A map takes
//   `slots * ceil(value_size / 8)` rows from a base row; slot s's value starts at row base + s * ceil(value_size / 8).
// - HASH, PERCPU_HASH and LRU_HASH keys: hashed buckets in block RAM (HASH_ROWS rows of four ways, one RAM per way; a way
//   holds valid, home bucket, slot and key). A map takes a power of two of buckets at or above max_entries / 2 (so at
//   most half of its ways are used); a key's home is the CRC-32 of its key_size bytes (rtl/common/hash32.sv) modulo
//   the buckets. Linear probing over buckets: an operation reads rows from the home on, one per cycle, up to and
//   including the first row that is not full; a new key takes a free way of that row, so E2BIG comes exactly at
//   max_entries whatever the collisions. A delete of a key when more than one row was read shifts back: the rows
//   after the home are read again and one way per row moves into the hole when its home lies at or before the hole,
//   so the rows read depend only on the set of keys (crates/hxdp/src/timing/buckets.rs computes them). Slot keys
//   (valid byte and key, for host slot reads and LRU evictions) and the free-slot stacks of the HASH maps are block
//   RAM of HASH_SLOTS (an LRU map's slots are its list nodes; it has no free stack).
// - LPM_TRIE keys: a CAM of ENTRIES flip-flop entries (valid, key, prefix mask and length), each map a contiguous
//   range; entry base + s holds the key of slot s. Lookups compare every entry of the map in one cycle. A free-slot
//   stack per map (in the same ENTRIES-entry range) reuses slots last in, first out. Without LPM maps the CAM is
//   unused: build it with ENTRIES 2.
// - LRU lists: the five list heads of each map in registers; per node (LRU_NODES) its next link, prev link, a
//   first-in-its-list bit and its kind, reference and in-table bits as rows of four true dual-port block RAMs.
// Slots (what lookups return, rsp_slot_o) are numbered exactly as hwxdp_maps numbers them (one CPU):
// - ARRAY: the index; max_entries slots.
// - HASH: element numbers from a LIFO free list, then never-used ones; replacing a key's value moves it to the map's
//   spare element (one CPU, so one spare), the old element becoming the spare; max_entries + 1 slots. PERCPU_HASH:
//   the same numbering, replacements in place; max_entries slots.
// - LRU_HASH: the node numbers of the kernel's common LRU for one CPU (bpf_lru_list.c as crates/maps/src/lru ports
//   it): global active/inactive/free lists, the CPU's local free and pending lists, reference bits, rotation with
//   the inactive cursor, target_free = clamp(max_entries / POSSIBLE_CPUS / 2, 1, 128), 128 scans per walk,
//   shrinking and forced eviction; so the same operations evict the same entries. max_entries slots. The kernel
//   sizes target_free by its possible CPUs (bpf_common_lru_populate) although the program runs on CPU 0 only, so
//   POSSIBLE_CPUS is the host's count (hwxdp_maps built with that many CPUs); the other CPUs' local lists stay
//   empty, so nothing else of the LRU depends on it.
// - PROG_ARRAY, DEVMAP: the index; max_entries slots. Each slot's value is followed by a presence byte (so a slot takes
//   ceil((value_size + 1) / 8) rows; 1 for the 4-byte values of the examples), cleared at load: an entry is present
//   once the host stores it, absent after a delete (or a DEVMAP update with ifindex 0); its value bytes stay.
// - RINGBUF: no slots, no rows.
// - LPM_TRIE: a LIFO of freed value slots, then never-used ones (a failed update still writes its value into the slot
//   it took and gives it back, as trie_update_elem does); max_entries + 1 slots. The trie itself is replaced by a
//   longest-prefix compare over the CAM (entries with prefixlen <= the key's whose leading prefixlen bits agree, the
//   longest wins), which finds the entry the kernel's trie walk finds.
//
// Requests (req_*: the helper module; host_*: userspace and dumps) are served one at a time; req_ready_o and
// host_ready_o are high when the engine is idle (a request wins over a host operation offered in the same cycle).
// Request ops: 0 lookup (bpf_map_lookup_elem: rsp_hit_o, rsp_slot_o), 1 update, 2 delete (rsp_ret_o), 3 get: for a
// PROG_ARRAY or DEVMAP, whether entry req_key_i[31:0] is present (rsp_hit_o, rsp_slot_o = the index) and its value
// (rsp_value_o: the first 8 value bytes, zero past value_size; 0 on a miss), what bpf_tail_call (prog_array_get: the
// program index) and bpf_redirect_map (redirect_lookup) need; any other map, or an index at or above max_entries,
// misses with rsp_ret_o 0. Programs may only look DEVMAP entries up (PROG_ARRAY lookups miss); their updates and
// deletes of PROG_ARRAY, DEVMAP and RINGBUF maps give -EINVAL; RINGBUF lookups miss.
// Host operations have the syscall's checks: BPF_F_RDONLY / BPF_F_WRONLY maps give -EPERM, BPF_F_LOCK -EINVAL;
// host lookups of LRU entries leave the reference bit alone; PROG_ARRAY and DEVMAP updates and deletes follow
// crates/maps/src/devices.rs (PROG_ARRAY: flags other than BPF_ANY -EINVAL, index beyond -E2BIG, deleting an absent
// entry -ENOENT; DEVMAP: BPF_NOEXIST -EEXIST, ifindex 0 deletes (-EINVAL with a positive program fd), an 8-byte
// value's program fd reads back as itself when positive, else 0, deleting beyond max_entries -EINVAL); every RINGBUF
// host operation gives -ENOTSUPP (an update with BPF_F_LOCK -EINVAL). Host op 3 reads slot host_slot_i: hit = the
// slot holds an entry (always, below max_entries, for arrays), key (the index for arrays, PROG_ARRAY and DEVMAP,
// prefixlen + data for LPM), value.
// Latency, for a request accepted in cycle t (valid and ready), the response pulse (rsp_valid_o / host_rsp_valid_o)
// comes in cycle:
// - t + 2: lookups, deletes and every error found before a value is written (compare the hXDP model's 2 extra cycles
//   per map helper, crates/hxdp/src/timing.rs MAP_HELPER_CYCLES);
// - HASH_OF_MAPS program lookups that hit: t + 4 (the value's row read back, as a host lookup), plus the probe's
//   rows as HASH; its program updates and deletes: -EINVAL after the probe;
// - HASH and PERCPU_HASH lookups, updates and deletes (program or host) whose probe reads k bucket rows: k - 1 cycles
//   more than the figures here; a delete that removes a key with k > 1 a further k (k - 1 rows read again, one cycle
//   to clear the last hole);
// - t + 2 + R, R = ceil(value_size / 8): successful ARRAY/HASH updates (the value is written one row per cycle), and
//   every LPM update that gets past the -EINVAL checks;
// - LRU_HASH: lookups and deletes probe the buckets as HASH ones do (a delete t + 4 plus the probe's and shift's
//   cycles); update t + 7 + R when the CPU's local free list has a node and the key's home row is not full (k rows:
//   k - 1 more), else the kernel's refill adds 4 steps plus one per pending node flushed, per node (or head) rotated
//   or scanned and per node moved to the local free list (an empty map's first update: 4 + target_free), two cycles
//   a step (crates/hxdp/src/timing/buckets.rs LRU_STEP_CYCLES: the step's node row fetched, then the step), and each
//   node evicted 1 + k cycles more for its key's bucket delete (2k + 1 when k > 1: the shift); -EEXIST/-ENOENT
//   without the R;
// - host lookup hit and host slot read: t + 2 + 2R (the value is read back one row per two cycles);
// - PROG_ARRAY and DEVMAP, R = ceil((value_size + 1) / 8) (1 for 4-byte values): get, DEVMAP lookups and host
//   lookups of an index below max_entries t + 2 + 2R (the presence byte is read with the value); host updates that
//   store t + 2 + R; DEVMAP deletes and ifindex-0 updates t + 3 (the presence byte is written); PROG_ARRAY deletes
//   t + 2 + 2R (-ENOENT) or t + 3 + 2R.
// The engine's value-memory writes (clearing, updates) wait while vwr_en_i is high and its reads (host lookups, slot
// reads) while vrd_en_i is high: the lanes have priority on each port.
//
// Value ports (tag-4 data-bus accesses of the lanes; the core issues loads in ID and stores in IE, so one cycle may
// carry a load of bundle k + 1 and a store of bundle k): a read port vrd_* and a write port vwr_*, usable in the same
// cycle (the value memory is a simple-dual-port block RAM per byte bank). vrd_rdata_o (the addressed bytes, the rest
// zero) and vrd_fault_o are valid the cycle after vrd_en_i; vwr_fault_o the cycle after vwr_en_i, the bytes written
// at that clock edge. A load of bytes stored in the same cycle reads the old bytes (the core stalls that case). An
// access faults (and neither reads nor writes) when the map does not exist, the slot is not below its slot count,
// bytes is not 1..8, or the bytes do not lie wholly inside value_size.
//
// Yosys 0.23 synth_xilinx -family xcup: see docs/hxdp-module.md (Area) for the figures with and without LRU keys in
// the CAM (measured before the LRU lists moved to block RAM). The CAM (keys, masks and lengths in flip-flops,
// compared in parallel, LPM maps only now) and the per-map multiplexers dominate; the DSPs are the slot * rows-per-value products (one per value port and one
// for the engine).
module maps #(
  parameter integer MAPS        = 8,    // maps of one program (2 or more)
  parameter integer KEY_BYTES   = 16,   // widest key; a wider key_size is a configuration error
  parameter integer VALUE_BYTES = 64,   // widest value, a multiple of 8; a wider value_size is a configuration error
  parameter integer ENTRIES     = 32,   // CAM entries for all LPM_TRIE maps together (a power of two, >= 2)
  parameter integer MEM_WORDS   = 512,  // 8-byte value rows for all maps together (a power of two, >= ENTRIES)
  parameter integer POSSIBLE_CPUS = 1,  // the kernel's num_possible_cpus() the LRU's target_free is sized for
  parameter integer HASH_SLOTS  = ENTRIES,  // slots of all HASH and PERCPU_HASH maps together (block RAM)
  parameter integer HASH_ROWS   = (HASH_SLOTS >= 2) ? HASH_SLOTS : 2, // 4-way bucket rows of those maps (a map of
                                        // max_entries takes at most max_entries rows, so any maps that fit HASH_SLOTS fit)
  parameter integer LRU_NODES   = ENTRIES  // LRU list nodes of all LRU_HASH maps together (a power of two, >= 2)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  // configuration (load time)
  input  logic                     cfg_we_i,
  input  logic [7:0]               cfg_map_i,
  input  logic [31:0]              cfg_type_i,
  input  logic [31:0]              cfg_key_size_i,
  input  logic [31:0]              cfg_value_size_i,
  input  logic [31:0]              cfg_max_entries_i,
  input  logic [31:0]              cfg_flags_i,
  input  logic                     cfg_done_i,
  output logic                     cfg_error_o,
  // helper requests
  input  logic                     req_valid_i,
  output logic                     req_ready_o,
  input  logic [1:0]               req_op_i,
  input  logic [7:0]               req_map_i,
  input  logic [8*KEY_BYTES-1:0]   req_key_i,
  input  logic [8*VALUE_BYTES-1:0] req_value_i,
  input  logic [63:0]              req_flags_i,
  output logic                     rsp_valid_o,
  output logic [63:0]              rsp_ret_o,
  output logic                     rsp_hit_o,
  output logic [27:0]              rsp_slot_o,
  output logic [63:0]              rsp_value_o,
  // value loads (read port)
  input  logic                     vrd_en_i,
  input  logic [7:0]               vrd_map_i,
  input  logic [27:0]              vrd_slot_i,
  input  logic [11:0]              vrd_off_i,
  input  logic [3:0]               vrd_bytes_i,
  output logic [63:0]              vrd_rdata_o,
  output logic                     vrd_fault_o,
  // value stores (write port)
  input  logic                     vwr_en_i,
  input  logic [7:0]               vwr_map_i,
  input  logic [27:0]              vwr_slot_i,
  input  logic [11:0]              vwr_off_i,
  input  logic [3:0]               vwr_bytes_i,
  input  logic [63:0]              vwr_wdata_i,
  output logic                     vwr_fault_o,
  // host operations
  input  logic                     host_valid_i,
  output logic                     host_ready_o,
  input  logic [1:0]               host_op_i,
  input  logic [7:0]               host_map_i,
  input  logic [8*KEY_BYTES-1:0]   host_key_i,
  input  logic [8*VALUE_BYTES-1:0] host_value_i,
  input  logic [63:0]              host_flags_i,
  input  logic [27:0]              host_slot_i,
  output logic                     host_rsp_valid_o,
  output logic [63:0]              host_rsp_ret_o,
  output logic                     host_rsp_hit_o,
  output logic [8*KEY_BYTES-1:0]   host_rsp_key_o,
  output logic [8*VALUE_BYTES-1:0] host_rsp_value_o
);

  localparam integer MW = $clog2(MAPS);
  localparam integer EW = $clog2(ENTRIES);
  localparam integer AW = $clog2(MEM_WORDS);
  localparam integer SW = AW + 1;            // slot numbers and counts: up to MEM_WORDS
  localparam integer KB = 8 * KEY_BYTES;
  localparam integer VB = 8 * VALUE_BYTES;
  localparam integer PW = 16;                // LPM prefix lengths
  localparam integer EW1 = EW + 1;
  localparam integer NW  = $clog2(LRU_NODES);
  localparam integer LN  = LRU_NODES + 5 * MAPS;  // LRU list links: nodes, then five list heads per map
  localparam integer LW  = $clog2(LN);
  localparam integer SW0   = (MEM_WORDS > LN) ? MEM_WORDS : LN;
  localparam integer SW1   = (HASH_SLOTS > HASH_ROWS) ? HASH_SLOTS : HASH_ROWS;
  localparam integer SWEEP = (SW0 > SW1) ? SW0 : SW1;
  localparam integer CW  = $clog2(SWEEP) + 1;
  localparam integer AW3 = AW + 3;
  // hashed buckets of the HASH and PERCPU_HASH maps (maps_htab)
  localparam integer HWAYS = 4;
  localparam integer RW    = $clog2(HASH_ROWS);
  localparam integer HSA   = $clog2(HASH_SLOTS);

  localparam [1:0] OpLookup = 2'd0;
  localparam [1:0] OpUpdate = 2'd1;
  localparam [1:0] OpDelete = 2'd2;
  localparam [1:0] OpRead   = 2'd3;

  localparam [2:0] KindArray = 3'd0;       // ARRAY, PERCPU_ARRAY
  localparam [2:0] KindHash  = 3'd1;       // HASH, PERCPU_HASH
  localparam [2:0] KindLru   = 3'd2;
  localparam [2:0] KindLpm   = 3'd3;
  localparam [2:0] KindSlots = 3'd4;       // PROG_ARRAY, DEVMAP: entries present or absent
  localparam [2:0] KindRing  = 3'd5;       // RINGBUF: defined, no storage here

  localparam [63:0] Eperm  = 64'd1;
  localparam [63:0] Enoent = 64'd2;
  localparam [63:0] E2big  = 64'd7;
  localparam [63:0] Enomem = 64'd12;
  localparam [63:0] Eexist = 64'd17;
  localparam [63:0] Einval = 64'd22;
  localparam [63:0] Enospc = 64'd28;
  localparam [63:0] Enotsupp = 64'd524;

  // map_flags bits
  localparam [31:0] FNoPrealloc  = 32'h1;
  localparam [31:0] FNoCommonLru = 32'h2;
  localparam [31:0] FNumaNode    = 32'h4;
  localparam [31:0] FRdonly      = 32'h8;
  localparam [31:0] FWronly      = 32'h10;
  localparam [31:0] FZeroSeed    = 32'h40;
  localparam [31:0] FRdonlyProg  = 32'h80;
  localparam [31:0] FWronlyProg  = 32'h100;
  localparam [31:0] FMmapable    = 32'h400;
  localparam [31:0] FPreserve    = 32'h800;
  localparam [31:0] FInnerMap    = 32'h1000;
  localparam [31:0] FAccess      = FRdonly | FRdonlyProg | FWronly | FWronlyProg;
  localparam [31:0] ArrayFlags   = FNumaNode | FMmapable | FAccess | FPreserve | FInnerMap;
  localparam [31:0] HashFlags    = FNoPrealloc | FNoCommonLru | FNumaNode | FAccess | FZeroSeed;
  localparam [31:0] LpmFlags     = FNoPrealloc | FNumaNode | FAccess;
  localparam [31:0] DevmapFlags  = FNumaNode | FRdonly | FWronly;

  localparam [3:0] StIdle   = 4'd0;
  localparam [3:0] StLayout = 4'd1;
  localparam [3:0] StClear  = 4'd2;
  localparam [3:0] StExec   = 4'd3;
  localparam [3:0] StWrite  = 4'd4;
  localparam [3:0] StRead   = 4'd5;
  localparam [3:0] StReadW  = 4'd6;
  localparam [3:0] StResp   = 4'd7;
  localparam [3:0] StLru    = 4'd8;
  localparam [3:0] StShift  = 4'd9;        // hash delete: the backward shift over the probed rows
  localparam [3:0] StHClear = 4'd10;       // hash delete: the last hole's way cleared
  localparam [3:0] StEvict  = 4'd11;       // LRU eviction: the evicted node's key read, its home row asked
  localparam [3:0] StLProbe = 4'd12;       // LRU update: the key's rows probed after the node was taken

  // ---------------------------------------------------------------------------------------------------------------
  // Configuration as written, and the layout cfg_done_i computes from it.

  logic [MAPS-1:0] def_q;
  logic [31:0]     def_type_q  [MAPS];
  logic [31:0]     def_key_q   [MAPS];
  logic [31:0]     def_value_q [MAPS];
  logic [31:0]     def_max_q   [MAPS];
  logic [31:0]     def_flags_q [MAPS];

  logic [MAPS-1:0] live_q;                   // the map exists (configuration loaded without error)
  logic [2:0]      kind_q   [MAPS];
  logic [MAPS-1:0] progarr_q;                // a PROG_ARRAY (else a DEVMAP) among the KindSlots maps
  logic [7:0]      ksize_q  [MAPS];
  logic [15:0]     vsize_q  [MAPS];
  logic [SW-1:0]   max_q    [MAPS];
  logic [SW-1:0]   slots_q  [MAPS];
  logic [4:0]      stride_q [MAPS];          // rows per value
  logic [AW-1:0]   vbase_q  [MAPS];
  logic [EW:0]     ebase_q  [MAPS];
  logic [NW:0]     lbase_q  [MAPS];          // LRU maps: first list node
  logic [RW-1:0]   hbase_q  [MAPS];          // hash maps: first bucket row
  logic [RW-1:0]   hmask_q  [MAPS];          // hash maps: buckets - 1 (a power of two less one)
  logic [HSA:0]    hsbase_q [MAPS];          // hash maps: first slot in the slot-key and free-stack memories
  logic [MAPS-1:0] rdonly_q;
  logic [MAPS-1:0] wronly_q;
  logic            cfg_error_q;

  logic            lay_error;
  logic [2:0]      lay_kind   [MAPS];
  logic [SW-1:0]   lay_slots  [MAPS];
  logic [4:0]      lay_stride [MAPS];
  logic [AW-1:0]   lay_vbase  [MAPS];
  logic [EW:0]     lay_ebase  [MAPS];
  logic [NW:0]     lay_lbase  [MAPS];
  logic [RW-1:0]   lay_hbase  [MAPS];
  logic [RW-1:0]   lay_hmask  [MAPS];
  logic [HSA:0]    lay_hsbase [MAPS];

  always_comb begin : layout
    logic [40:0] rows;
    logic [40:0] cams;
    logic [40:0] nodes;
    logic [40:0] hslots;
    logic [40:0] hrows;
    logic [40:0] nb;
    logic [31:0] half;
    logic [40:0] slots;
    logic [4:0]  stride;
    logic        bad;
    logic [31:0] t;
    logic [31:0] ks;
    logic [31:0] vs;
    logic [31:0] mx;
    logic [31:0] fl;
    rows      = 41'd0;
    cams      = 41'd0;
    nodes     = 41'd0;
    hslots    = 41'd0;
    hrows     = 41'd0;
    lay_error = 1'b0;
    for (integer m = 0; m < MAPS; m = m + 1) begin
      t  = def_type_q[m];
      ks = def_key_q[m];
      vs = def_value_q[m];
      mx = def_max_q[m];
      fl = def_flags_q[m];
      lay_kind[m]   = KindArray;
      lay_slots[m]  = '0;
      lay_stride[m] = '0;
      lay_vbase[m]  = rows[AW-1:0];
      lay_ebase[m]  = cams[EW:0];
      lay_lbase[m]  = nodes[NW:0];
      lay_hbase[m]  = hrows[RW-1:0];
      lay_hsbase[m] = hslots[HSA:0];
      // buckets: the power of two at or above max_entries / 2 (4 ways: at most half full)
      half = (def_max_q[m] >> 1) + 32'(def_max_q[m][0]);
      nb   = 41'd1;
      for (integer i = 0; i < 32; i = i + 1) begin
        if (nb < 41'(half)) nb = nb << 1;
      end
      lay_hmask[m]  = RW'(nb - 41'd1);
      slots  = 41'd0;
      stride = 5'((vs + 32'd7) >> 3);  // vs above VALUE_BYTES is an error below
      bad    = 1'b0;
      if (def_q[m]) begin
        // check_access
        if ((fl & FRdonlyProg) != 0 && (fl & FWronlyProg) != 0) bad = 1'b1;
        if ((fl & FRdonly) != 0 && (fl & FWronly) != 0) bad = 1'b1;
        if (t == 32'd2 || t == 32'd6 || t == 32'd3 || t == 32'd12) begin
          // array_map_alloc_check (fd_array_map_alloc_check for PROG_ARRAY and ARRAY_OF_MAPS: 4-byte values, no
          // program flags)
          if (mx == 0 || ks != 32'd4 || vs == 0 || (fl & ~ArrayFlags) != 0 || (fl & FPreserve) != 0) bad = 1'b1;
          if (t == 32'd6 && (fl & FNumaNode) != 0) bad = 1'b1;
          if (t != 32'd2 && (fl & (FMmapable | FInnerMap)) != 0) bad = 1'b1;
          if ((t == 32'd3 || t == 32'd12) && (vs != 32'd4 || (fl & (FRdonlyProg | FWronlyProg)) != 0)) bad = 1'b1;
          slots = {9'd0, mx};
          if (t == 32'd3 || t == 32'd12) begin
            // the presence byte follows the value
            lay_kind[m] = KindSlots;
            stride      = 5'((vs + 32'd8) >> 3);
          end
        end else if (t == 32'd1 || t == 32'd5 || t == 32'd9 || t == 32'd13) begin
          // htab_map_alloc_check (fd_htab_map_alloc_check for HASH_OF_MAPS: 4-byte values, no program flags)
          if ((fl & ~HashFlags) != 0 || mx == 0 || ks == 0 || vs == 0) bad = 1'b1;
          if (t == 32'd13 && (vs != 32'd4 || (fl & (FRdonlyProg | FWronlyProg)) != 0)) bad = 1'b1;
          if (t != 32'd9 && (fl & FNoCommonLru) != 0) bad = 1'b1;
          if (t == 32'd5 && (fl & FNumaNode) != 0) bad = 1'b1;
          // LRU maps are preallocated; the per-CPU LRU variant (BPF_F_NO_COMMON_LRU) is not built in hardware
          if (t == 32'd9 && (fl & (FNoPrealloc | FNoCommonLru)) != 0) bad = 1'b1;
          lay_kind[m] = (t == 32'd9) ? KindLru : KindHash;
          // HASH keeps one spare element for replacements; per-CPU and LRU maps none
          slots = (t == 32'd9 || t == 32'd5) ? {9'd0, mx} : {9'd0, mx} + 41'd1;
        end else if (t == 32'd11) begin
          // trie_alloc
          if (mx == 0 || (fl & FNoPrealloc) == 0 || (fl & ~LpmFlags) != 0 || ks < 32'd5 || vs == 0) bad = 1'b1;
          lay_kind[m] = KindLpm;
          slots = {9'd0, mx} + 41'd1;
        end else if (t == 32'd14) begin
          // dev_map_alloc_check; the presence byte follows the value
          if (mx == 0 || ks != 32'd4 || (vs != 32'd4 && vs != 32'd8) || (fl & ~DevmapFlags) != 0) bad = 1'b1;
          lay_kind[m] = KindSlots;
          stride      = 5'((vs + 32'd8) >> 3);
          slots       = {9'd0, mx};
        end else if (t == 32'd27) begin
          // ringbuf_map_alloc: no rows here, the helper module holds the records
          if ((fl & ~FNumaNode) != 0 || ks != 0 || vs != 0 || mx == 0 || (mx & (mx - 32'd1)) != 0
              || mx[11:0] != 12'd0 || mx > 32'h4000_0000) bad = 1'b1;
          lay_kind[m] = KindRing;
          stride      = 5'd0;
        end else begin
          bad = 1'b1;
        end
        if (t != 32'd27) begin
          if (ks > KEY_BYTES || vs > VALUE_BYTES) bad = 1'b1;
          if (t == 32'd3 || t == 32'd12 || t == 32'd14) begin
            if (vs >= VALUE_BYTES) bad = 1'b1;  // the presence byte must fit the engine's value register
          end
          if (mx > MEM_WORDS) bad = 1'b1;
        end
        if (!bad) begin
          rows = rows + 41'(slots[SW:0] * stride);
          if (lay_kind[m] == KindLpm) cams = cams + slots;
          if (lay_kind[m] == KindLru) nodes = nodes + slots;
          if (lay_kind[m] == KindHash || lay_kind[m] == KindLru) begin
            hslots = hslots + slots;
            hrows  = hrows + nb;
          end
        end
        lay_slots[m]  = slots[SW-1:0];
        lay_stride[m] = stride;
      end
      lay_error = lay_error | bad;
    end
    if (rows > 41'(MEM_WORDS) || cams > 41'(ENTRIES) || nodes > 41'(LRU_NODES)) lay_error = 1'b1;
    if (hslots > 41'(HASH_SLOTS) || hrows > 41'(HASH_ROWS)) lay_error = 1'b1;
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Engine registers.

  logic [3:0]      state_q;
  logic            host_q;                   // the operation came from the host port
  logic [1:0]      op_q;
  logic [MW-1:0]   map_q;
  logic            map_ok_q;                 // map index names an existing map
  logic [KB-1:0]   key_q;                    // masked to the map's key_size
  logic [VB-1:0]   value_q;
  logic [63:0]     flags_q;
  logic [27:0]     slot_in_q;
  logic [63:0]     ret_q;
  logic            hit_q;
  logic [SW-1:0]   slot_q;
  logic [AW-1:0]   row_q;                    // value row being written or read
  logic [4:0]      word_q;                   // rows done
  logic            pres_q;                   // the write clears a KindSlots presence byte only
  logic            slot_present;             // the presence byte in the row read (b_rdata)
  logic [4:0]      last_word;                // rows per value of the current map, less one
  logic [CW-1:0]   clear_q;                  // clearing sweep: value rows, LRU links

  // CAM and slot allocation
  logic [ENTRIES-1:0] ent_valid_q;
  logic [KB-1:0]      ent_key_q   [ENTRIES];
  logic [KB-1:0]      ent_mask_q  [ENTRIES];
  logic [PW-1:0]      ent_plen_q  [ENTRIES];
  logic [SW-1:0]      stack_q     [ENTRIES];
  logic [SW-1:0]      sp_q        [MAPS];
  logic [SW-1:0]      fresh_q     [MAPS];
  logic [SW-1:0]      count_q     [MAPS];
  logic [SW-1:0]      spare_q     [MAPS];
  logic [MAPS-1:0]    spare_v_q;

  // ---------------------------------------------------------------------------------------------------------------
  // Value memory and the lanes' value ports: a read port (loads) and a write port (stores), usable in one cycle.

  logic          rp_fault;
  logic [AW+2:0] rp_addr;
  logic          rp_en;
  logic          rp_zero_q;
  logic          rp_fault_q;
  logic [3:0]    rp_bytes_q;
  logic [63:0]   rp_keep;
  logic [63:0]   r_rdata;
  logic          wp_fault;
  logic [AW+2:0] wp_addr;
  logic          wp_en;
  logic          wp_fault_q;
  logic          b_re;
  logic [7:0]    b_we;
  logic [AW-1:0] b_row;
  logic [63:0]   b_wdata;
  logic [63:0]   b_rdata;

  // Each port's access faults (and neither reads nor writes) when the map does not exist, the slot is not below its
  // slot count, bytes is not 1..8, or the bytes do not lie wholly inside value_size.
  always_comb begin : value_ports
    logic [MW-1:0] rm;
    logic [MW-1:0] wm;
    logic [AW-1:0] rrow;
    logic [AW-1:0] wrow;
    logic [16:0]   rend;
    logic [16:0]   wend;
    rm       = vrd_map_i[MW-1:0];
    wm       = vwr_map_i[MW-1:0];
    rend     = {5'd0, vrd_off_i} + {13'd0, vrd_bytes_i};
    wend     = {5'd0, vwr_off_i} + {13'd0, vwr_bytes_i};
    rp_fault = 32'(vrd_map_i) >= MAPS || !live_q[rm] || vrd_slot_i >= {{(28 - SW) {1'b0}}, slots_q[rm]}
               || vrd_bytes_i == 4'd0 || vrd_bytes_i > 4'd8 || rend > {1'b0, vsize_q[rm]};
    wp_fault = 32'(vwr_map_i) >= MAPS || !live_q[wm] || vwr_slot_i >= {{(28 - SW) {1'b0}}, slots_q[wm]}
               || vwr_bytes_i == 4'd0 || vwr_bytes_i > 4'd8 || wend > {1'b0, vsize_q[wm]};
    rrow     = vbase_q[rm] + AW'(vrd_slot_i[AW-1:0] * AW'(stride_q[rm]));
    wrow     = vbase_q[wm] + AW'(vwr_slot_i[AW-1:0] * AW'(stride_q[wm]));
    rp_addr  = {rrow, 3'b000} + AW3'(vrd_off_i);
    wp_addr  = {wrow, 3'b000} + AW3'(vwr_off_i);
    rp_en    = vrd_en_i && !rp_fault;
    wp_en    = vwr_en_i && !wp_fault;
  end

  maps_values #(
    .WORDS (MEM_WORDS),
    .AW    (AW)
  ) u_values (
    .clk_i     (clk_i),
    .r_en_i    (rp_en),
    .r_addr_i  (rp_addr),
    .r_rdata_o (r_rdata),
    .w_en_i    (wp_en),
    .w_addr_i  (wp_addr),
    .w_bytes_i (vwr_bytes_i),
    .w_wdata_i (vwr_wdata_i),
    .b_re_i    (b_re),
    .b_we_i    (b_we),
    .b_row_i   (b_row),
    .b_wdata_i (b_wdata),
    .b_rdata_o (b_rdata)
  );

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rp_zero_q  <= 1'b1;
      rp_fault_q <= 1'b0;
      rp_bytes_q <= 4'd0;
      wp_fault_q <= 1'b0;
    end else begin
      rp_zero_q  <= !rp_en;
      rp_fault_q <= vrd_en_i && rp_fault;
      rp_bytes_q <= vrd_bytes_i;
      wp_fault_q <= vwr_en_i && wp_fault;
    end
  end

  always_comb begin
    for (integer b = 0; b < 8; b = b + 1) begin
      rp_keep[8*b +: 8] = (4'(b) < rp_bytes_q) ? 8'hff : 8'h00;
    end
  end

  assign last_word    = stride_q[map_q] - 5'd1;
  assign slot_present = b_rdata[8*vsize_q[map_q][2:0] +: 8] != 8'd0;

  assign vrd_rdata_o = rp_zero_q ? 64'd0 : r_rdata & rp_keep;
  assign vrd_fault_o = rp_fault_q;
  assign vwr_fault_o = wp_fault_q;

  // The engine's memory cycles: clearing and value writes on the write port, value reads on the read port; each
  // waits while the lanes use that port.
  always_comb begin
    b_re    = 1'b0;
    b_we    = 8'h00;
    b_row   = row_q;
    // the row of the latched value being written: a multiplexer over all VALUE_BYTES / 8 words (a value can be wider
    // than 64 bytes, so no fixed-width slice of word_q)
    b_wdata = 64'd0;
    for (integer w = 0; w < VALUE_BYTES / 8; w = w + 1) begin
      if (word_q == 5'(w)) b_wdata = value_q[64*w +: 64];
    end
    if (state_q == StClear) begin
      b_we    = (32'(clear_q) < MEM_WORDS) ? 8'hff : 8'h00;
      b_row   = clear_q[AW-1:0];
      b_wdata = 64'd0;
    end else if (state_q == StWrite) begin
      b_we = pres_q ? 8'h01 << vsize_q[map_q][2:0] : 8'hff;
      if (pres_q) b_wdata = 64'd0;
    end else if (state_q == StRead) begin
      b_re = 1'b1;
    end
    if (vwr_en_i) b_we = 8'h00;
    if (vrd_en_i) b_re = 1'b0;
  end

  // ---------------------------------------------------------------------------------------------------------------
  // The CAM compare of the latched key against the latched map's entries.

  logic [KB-1:0]      key_in;                // the offered key masked to the map's key_size
  logic [MW-1:0]      map_in;
  logic               host_pick;
  logic [KB-1:0]      key_plen_mask;         // LPM: data bits below the key's prefix length
  logic [31:0]        key_plen;
  logic [PW-1:0]      max_plen;
  logic [ENTRIES-1:0] in_map;
  logic [ENTRIES-1:0] match;                 // lookup match (LPM: any covering prefix)
  logic [ENTRIES-1:0] exact;                 // the same key (LPM: the same prefix)
  logic               best_v;
  logic [EW-1:0]      best;
  logic               exact_v;
  logic [EW-1:0]      exact_i;

  assign host_pick = !req_valid_i;
  assign map_in    = host_pick ? host_map_i[MW-1:0] : req_map_i[MW-1:0];

  always_comb begin : key_mask
    logic [7:0] ks;
    ks     = ksize_q[map_in];
    key_in = host_pick ? host_key_i : req_key_i;
    for (integer b = 0; b < KEY_BYTES; b = b + 1) begin
      if (b >= ks) key_in[8*b +: 8] = 8'd0;
    end
  end

  assign key_plen = key_q[31:0];
  assign max_plen = PW'({ksize_q[map_q] - 8'd4, 3'b000});

  always_comb begin : prefix_mask
    key_plen_mask = '0;
    for (integer p = 32; p < KB; p = p + 1) begin
      // key bit p is data bit 8 * (p / 8 - 4) + 7 - p % 8 (bits are numbered from each byte's top, as extract_bit)
      if (32'((p / 8 - 4) * 8 + 7 - p % 8) < key_plen) key_plen_mask[p] = 1'b1;
    end
  end

  always_comb begin : cam
    logic [EW:0] lo;
    logic [EW:0] hi;
    logic        lpm;
    lo      = ebase_q[map_q];
    hi      = ebase_q[map_q] + slots_q[map_q][EW:0];
    lpm     = kind_q[map_q] == KindLpm;
    best_v  = 1'b0;
    best    = '0;
    exact_v = 1'b0;
    exact_i = '0;
    for (integer i = 0; i < ENTRIES; i = i + 1) begin
      in_map[i] = EW1'(i) >= lo && EW1'(i) < hi && lpm;
      match[i]  = in_map[i] && ent_valid_q[i] && ((ent_key_q[i] ^ key_q) & ent_mask_q[i]) == '0
                  && (!lpm || {16'd0, ent_plen_q[i]} <= key_plen);
      exact[i]  = match[i] && (!lpm || {16'd0, ent_plen_q[i]} == key_plen);
      if (match[i] && (!best_v || ent_plen_q[i] > ent_plen_q[best])) begin
        best_v = 1'b1;
        best   = EW'(i);
      end
      if (exact[i]) begin
        exact_v = 1'b1;
        exact_i = EW'(i);
      end
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // One operation's outcome, from the latched request and the CAM (state StExec).

  logic [63:0]   x_ret;                      // positive errno, negated at the response
  logic          x_hit;
  logic [SW-1:0] x_slot;
  logic [1:0]    x_next;                     // 0 respond, 1 write the value, 2 read the value, 3 LRU node
  logic          x_set;                      // enter key_q at slot x_slot
  logic          x_clr;                      // remove the key of slot x_old
  logic [SW-1:0] x_old;
  logic          x_pop;                      // x_slot came from the free stack (else maybe fresh)
  logic          x_fresh;                    // x_slot is the next never-used slot
  logic          x_push;                     // x_push_slot goes on the free stack
  logic [SW-1:0] x_push_slot;
  logic          x_spare;                    // the spare becomes x_old
  logic          x_inc;
  logic          x_dec;
  logic          x_lref;                     // an LRU lookup marks the node referenced
  logic          x_pres;                     // the write clears the slot's presence byte only (KindSlots)

  logic [SW-1:0] alloc_slot;
  logic          alloc_pop;
  logic [SW-1:0] exact_slot;
  logic [SW-1:0] best_slot;
  logic [EW-1:0] stack_top;
  logic          xe_v;                       // the key is present (CAM or buckets)
  logic          xb_v;                       // a lookup matches (LPM: the longest covering prefix)

  // ---------------------------------------------------------------------------------------------------------------
  // HASH and PERCPU_HASH maps: hashed buckets in block RAM. A map has a power of two of 4-way buckets (at least
  // twice its max_entries ways), one bucket a row of u_htab read whole; a key's home bucket is the CRC-32 of its
  // key_size bytes (hash32) modulo the buckets. Linear probing over buckets: an operation reads rows from the home on,
  // one per cycle, up to and including the first row that is not full (so the rows read depend only on the set of
  // keys in the map, not on the order they came in); a new key takes a free way of that last row, so the map takes
  // keys up to max_entries whatever their hashes. A delete keeps every key within the full rows after its home by the
  // backward shift: it reads the probed rows again (from the home's next row) and moves one way per row back into the
  // hole when its home allows. The slot numbering (free stack, never-used slots, the spare) is as before; the slot
  // keys (for host slot reads) and the free stacks are block RAM too.

  localparam integer WAYW = ((1 + RW + SW + KB + 7) / 8) * 8;   // a way: valid, home bucket, slot, key
  localparam integer ROWW = HWAYS * WAYW;
  localparam integer HKW  = KB + 8;                              // slot keys: a valid byte, the key
  localparam integer HSW8 = ((SW + 7) / 8) * 8;                  // free stack entries

  logic [31:0]      key_hash;
  logic [RW-1:0]    home_in;
  logic             accept;                  // StIdle takes an operation in this cycle
  logic             is_hash;                 // the latched map is a HASH or PERCPU_HASH map
  logic             is_bkt;                  // the latched map keeps its keys in the buckets (HASH kinds, LRU_HASH)
  logic             h_op;                    // the latched operation probes the buckets (lookup, update, delete)
  logic             probing;                 // this cycle sees a probed row (StExec of a bucket operation, StLProbe)
  logic             ev_q;                    // StExec..StHClear delete an evicted LRU node's key (then StLru)
  logic             ldel_q;                  // an LRU delete: its shift ends in StLru (the node given back)
  logic [KB-1:0]    ukey_q;                  // the LRU update's key and home, kept while an eviction probes
  logic [RW-1:0]    uhome_q;
  logic             ev_start;                // an LRU step evicts a node: its slot key is read
  logic             ev_end;                  // the eviction's delete settles: back to the LRU steps
  logic             lp_start;                // the LRU update took its node: its key's rows are probed
  logic             l_ins;                   // LDecide writes the key (a new way, or the old way's new node)
  logic [SW-1:0]    l_slot;                  // the slot of the node taken (lgot_q)
  logic [NW-1:0]    ev_rel;                  // the evicted node (a_node) and the node taken, less the map's base
  logic [NW-1:0]    got_rel;
  logic [NW-1:0]    x_node;                  // the node of the key found (exact_slot)
  logic [KB-1:0]    hash_key;                // what hash32 hashes: the offered key, or the evicted one
  logic             exec_go;                 // StExec settles the operation in this cycle (no more rows to read)
  logic [RW-1:0]    home_q;                  // the latched key's home bucket
  logic [RW-1:0]    probe_q;                 // rows read before the one StExec sees
  logic             hf_q;                    // the key was found in an earlier row: bucket, way, slot, position
  logic [RW-1:0]    hf_row_q;
  logic [1:0]       hf_way_q;
  logic [SW-1:0]    hf_slot_q;
  logic [RW-1:0]    hf_pos_q;
  logic [RW-1:0]    hole_row_q;              // shift: the hole's bucket, way and probe position
  logic [1:0]       hole_way_q;
  logic [RW-1:0]    hole_pos_q;
  logic [RW-1:0]    sh_pos_q;                // shift: probe position of the row seen in this cycle
  logic [RW-1:0]    sh_last_q;               // shift: the last probed row's position
  logic             hk_pend_q;               // a slot key's valid byte to clear in this cycle
  logic [SW-1:0]    hk_pend_slot_q;

  logic             ht_re;
  logic [RW-1:0]    ht_raddr;
  logic             ht_we;
  logic [RW-1:0]    ht_waddr;
  logic [WAYW-1:0]  ht_wdata;
  logic [HWAYS-1:0] ht_wway;                 // the ways written
  logic [ROWW-1:0]  ht_rdata;
  logic             hk_re;
  logic [HSA-1:0]   hk_raddr;
  logic             hk_we;
  logic [HSA-1:0]   hk_waddr;
  logic [HKW-1:0]   hk_wdata;
  logic [HKW/8-1:0] hk_wbe;
  logic [HKW-1:0]   hk_rdata;
  logic             hs_we;
  logic [HSA-1:0]   hs_waddr;
  logic [HSW8-1:0]  hs_wdata;
  logic [HSW8-1:0]  hs_rdata;

  logic [HWAYS-1:0] w_valid;
  logic [HWAYS-1:0] w_match;
  logic [RW-1:0]    w_home [HWAYS];
  logic [SW-1:0]    w_slot [HWAYS];
  logic             h_full;
  logic             h_cur_found;
  logic [1:0]       h_cur_way;
  logic [1:0]       h_free_way;
  logic [RW-1:0]    h_cur_row;               // bucket of the row read (home + probe position)
  logic             h_scan_more;
  logic             h_exact_v;
  logic [SW-1:0]    h_exact_slot;
  logic [RW-1:0]    h_exact_row;
  logic [1:0]       h_exact_way;
  logic [RW-1:0]    h_exact_pos;
  logic             h_move;                  // shift: way h_move_way of this row moves into the hole
  logic [1:0]       h_move_way;
  logic             h_shift;                 // the delete settled in this cycle shifts (more than one row probed)

  hash32 #(
    .BYTES (KEY_BYTES)
  ) u_hash (
    .data_i (hash_key),
    .hash_o (key_hash)
  );

  assign accept   = state_q == StIdle && !cfg_done_i && (req_valid_i || host_valid_i);
  assign hash_key = (state_q == StEvict) ? hk_rdata[8 +: KB] : key_in;
  assign home_in  = key_hash[RW-1:0] & hmask_q[map_in];
  assign is_hash  = kind_q[map_q] == KindHash;
  assign is_bkt   = is_hash || kind_q[map_q] == KindLru;
  // an LRU update probes only after its node is taken (StLProbe: evictions may remove keys first)
  assign h_op     = map_ok_q && is_bkt && op_q != OpRead
                    && (ev_q || !(kind_q[map_q] == KindLru && op_q == OpUpdate));
  assign probing  = (state_q == StExec && h_op) || state_q == StLProbe;

  always_comb begin : htab_row
    logic [RW-1:0] pos;
    logic [RW-1:0] dh;
    logic [RW-1:0] dw;
    pos         = (state_q == StShift) ? sh_pos_q : probe_q;
    h_cur_row   = (home_q + pos) & hmask_q[map_q];
    h_cur_found = 1'b0;
    h_cur_way   = 2'd0;
    h_free_way  = 2'd0;
    h_move      = 1'b0;
    h_move_way  = 2'd0;
    for (integer w = HWAYS - 1; w >= 0; w = w - 1) begin
      w_valid[w] = ht_rdata[w*WAYW];
      w_home[w]  = ht_rdata[w*WAYW + 1 +: RW];
      w_slot[w]  = ht_rdata[w*WAYW + 1 + RW +: SW];
      w_match[w] = w_valid[w] && ht_rdata[w*WAYW + 1 + RW + SW +: KB] == key_q;
      if (w_match[w]) begin
        h_cur_found = 1'b1;
        h_cur_way   = 2'(w);
      end
      if (!w_valid[w]) h_free_way = 2'(w);
      // a way may fill the hole when its home is no nearer to this row than the hole is
      dh = (h_cur_row - hole_row_q) & hmask_q[map_q];
      dw = (h_cur_row - w_home[w]) & hmask_q[map_q];
      if (w_valid[w] && dw >= dh) begin
        h_move     = 1'b1;
        h_move_way = 2'(w);
      end
    end
    if (state_q != StShift || sh_pos_q <= hole_pos_q) h_move = 1'b0;
    h_full       = &w_valid;
    h_scan_more  = probing && h_full && probe_q != hmask_q[map_q];
    h_exact_v    = hf_q || h_cur_found;
    h_exact_slot = hf_q ? hf_slot_q : w_slot[h_cur_way];
    h_exact_row  = hf_q ? hf_row_q : h_cur_row;
    h_exact_way  = hf_q ? hf_way_q : h_cur_way;
    h_exact_pos  = hf_q ? hf_pos_q : probe_q;
  end

  assign exec_go = state_q == StExec && !h_scan_more;

  // bits the hash maps do not read (the hash above the row bits, memory padding), named so the lint skips them
  logic unused_hash_bits;
  assign unused_hash_bits = ^{key_hash, hk_rdata[7:1], hs_rdata, hk_pend_slot_q};
  assign h_shift = exec_go && h_op && x_clr && !x_set && probe_q != '0;

  // Bucket rows: read at acceptance (the home row), while probing, while shifting; written once per cycle.
  always_comb begin : htab_ports
    logic [WAYW-1:0] way;
    logic [1:0]      wsel;
    ht_re    = 1'b0;
    ht_raddr = '0;
    if (accept) begin
      ht_re    = 1'b1;
      ht_raddr = hbase_q[map_in] + home_in;
    end else if (state_q == StEvict) begin
      ht_re    = 1'b1;                             // the evicted key's home row
      ht_raddr = hbase_q[map_q] + (key_hash[RW-1:0] & hmask_q[map_q]);
    end else if (lp_start) begin
      ht_re    = 1'b1;                             // the LRU update's home row
      ht_raddr = hbase_q[map_q] + home_q;
    end else if (h_scan_more) begin
      ht_re    = 1'b1;
      ht_raddr = hbase_q[map_q] + ((home_q + probe_q + RW'(1)) & hmask_q[map_q]);
    end else if (h_shift) begin
      ht_re    = 1'b1;
      ht_raddr = hbase_q[map_q] + ((home_q + RW'(1)) & hmask_q[map_q]);
    end else if (state_q == StShift && sh_pos_q != sh_last_q) begin
      ht_re    = 1'b1;
      ht_raddr = hbase_q[map_q] + ((home_q + sh_pos_q + RW'(1)) & hmask_q[map_q]);
    end
    way      = '0;
    way[0]   = 1'b1;
    way[1 +: RW] = home_q;
    way[1 + RW +: SW] = l_ins ? l_slot : x_slot;
    way[1 + RW + SW +: KB] = key_q;
    wsel     = 2'd0;
    ht_we    = 1'b0;
    ht_waddr = '0;
    if (state_q == StClear) begin
      ht_we    = 32'(clear_q) < HASH_ROWS;
      ht_waddr = clear_q[RW-1:0];
      way      = '0;
    end
    if (exec_go && h_op && x_set && !x_clr) begin
      ht_we    = 1'b1;                             // a new key: the free way of the last row read
      ht_waddr = hbase_q[map_q] + h_cur_row;
      wsel     = h_free_way;
    end else if (exec_go && h_op && x_set) begin
      ht_we    = 1'b1;                             // a replacement: the key's way names the new slot
      ht_waddr = hbase_q[map_q] + h_exact_row;
      wsel     = h_exact_way;
    end else if (exec_go && h_op && x_clr && !h_shift) begin
      ht_we    = 1'b1;                             // a delete within the home row
      ht_waddr = hbase_q[map_q] + h_exact_row;
      wsel     = h_exact_way;
      way      = '0;
    end else if (l_ins && !h_exact_v) begin
      ht_we    = 1'b1;                             // an LRU update's new key: the free way of the last row probed
      ht_waddr = hbase_q[map_q] + h_cur_row;
      wsel     = h_free_way;
    end else if (l_ins) begin
      ht_we    = 1'b1;                             // an LRU replacement: the key's way names the new node
      ht_waddr = hbase_q[map_q] + h_exact_row;
      wsel     = h_exact_way;
    end else if (state_q == StShift && h_move) begin
      ht_we    = 1'b1;                             // the way moves back into the hole
      ht_waddr = hbase_q[map_q] + hole_row_q;
      wsel     = hole_way_q;
      way      = ht_rdata[32'(h_move_way) * WAYW +: WAYW];
    end else if (state_q == StHClear) begin
      ht_we    = 1'b1;
      ht_waddr = hbase_q[map_q] + hole_row_q;
      wsel     = hole_way_q;
      way      = '0;
    end
    ht_wdata = way;
    for (integer w = 0; w < HWAYS; w = w + 1) begin
      ht_wway[w] = ht_we && (state_q == StClear || wsel == 2'(w));
    end
  end

  // one block RAM per way, read together as the bucket's row
  for (genvar w = 0; w < HWAYS; w = w + 1) begin : g_way
    ram_sdp #(
      .WIDTH (WAYW),
      .DEPTH (HASH_ROWS)
    ) u_htab (
      .clk_i     (clk_i),
      .wr_en_i   (ht_wway[w]),
      .wr_addr_i (ht_waddr),
      .wr_data_i (ht_wdata),
      .wr_be_i   ('1),
      .rd_en_i   (ht_re),
      .rd_addr_i (ht_raddr),
      .rd_data_o (ht_rdata[w*WAYW +: WAYW])
    );
  end

  // Slot keys (a valid byte, then the key) and free stacks of the hash maps: read at acceptance (the slot a host
  // slot read names; the map's free-stack top), written when StExec settles (or, for a slot key's clear, the cycle
  // after, as a replacement also writes the new slot's key).
  always_comb begin : hslot_ports
    hk_re    = accept || ev_start;
    hk_raddr = HSA'(hsbase_q[map_in] + (HSA + 1)'(host_slot_i[SW-1:0]));
    if (ev_start) hk_raddr = HSA'(hsbase_q[map_q] + (HSA + 1)'(SW'(ev_rel)));
    hk_we    = 1'b0;
    hk_waddr = '0;
    hk_wdata = '0;
    hk_wbe   = '0;
    if (state_q == StClear) begin
      hk_we    = 32'(clear_q) < HASH_SLOTS;
      hk_waddr = clear_q[HSA-1:0];
      hk_wbe   = '1;
    end else if (exec_go && h_op && x_set) begin
      hk_we    = 1'b1;
      hk_waddr = HSA'(hsbase_q[map_q] + (HSA + 1)'(x_slot));
      hk_wdata = {key_q, 8'h01};
      hk_wbe   = '1;
    end else if (l_ins) begin
      hk_we    = 1'b1;
      hk_waddr = HSA'(hsbase_q[map_q] + (HSA + 1)'(l_slot));
      hk_wdata = {key_q, 8'h01};
      hk_wbe   = '1;
    end else if (hk_pend_q) begin
      hk_we     = 1'b1;
      hk_waddr  = HSA'(hsbase_q[map_q] + (HSA + 1)'(hk_pend_slot_q));
      hk_wbe[0] = 1'b1;
    end
    hs_we    = exec_go && h_op && x_push;
    hs_waddr = HSA'(hsbase_q[map_q] + (HSA + 1)'(sp_q[map_q]) - (HSA + 1)'(x_pop));
    hs_wdata = HSW8'(x_push_slot);
  end

  ram_sdp #(
    .WIDTH (HKW),
    .DEPTH (HASH_SLOTS)
  ) u_hkey (
    .clk_i     (clk_i),
    .wr_en_i   (hk_we),
    .wr_addr_i (hk_waddr),
    .wr_data_i (hk_wdata),
    .wr_be_i   (hk_wbe),
    .rd_en_i   (hk_re),
    .rd_addr_i (hk_raddr),
    .rd_data_o (hk_rdata)
  );

  ram_sdp #(
    .WIDTH (HSW8),
    .DEPTH (HASH_SLOTS)
  ) u_hstack (
    .clk_i     (clk_i),
    .wr_en_i   (hs_we),
    .wr_addr_i (hs_waddr),
    .wr_data_i (hs_wdata),
    .wr_be_i   ('1),
    .rd_en_i   (accept),
    .rd_addr_i (HSA'(hsbase_q[map_in] + (HSA + 1)'(sp_q[map_in]) - (HSA + 1)'(1))),
    .rd_data_o (hs_rdata)
  );

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      home_q         <= '0;
      probe_q        <= '0;
      hf_q           <= 1'b0;
      hf_row_q       <= '0;
      hf_way_q       <= 2'd0;
      hf_slot_q      <= '0;
      hf_pos_q       <= '0;
      hole_row_q     <= '0;
      hole_way_q     <= 2'd0;
      hole_pos_q     <= '0;
      sh_pos_q       <= '0;
      sh_last_q      <= '0;
      hk_pend_q      <= 1'b0;
      hk_pend_slot_q <= '0;
      uhome_q        <= '0;
    end else begin
      hk_pend_q <= 1'b0;
      if (accept) begin
        home_q  <= home_in;
        probe_q <= '0;
        hf_q    <= 1'b0;
      end
      if (ev_start) uhome_q <= home_q;
      if (state_q == StEvict) begin
        home_q  <= key_hash[RW-1:0] & hmask_q[map_q];
        probe_q <= '0;
        hf_q    <= 1'b0;
      end
      if (ev_end) home_q <= uhome_q;
      if (lp_start) begin
        probe_q <= '0;
        hf_q    <= 1'b0;
      end
      if (l_ins && h_exact_v) begin
        hk_pend_q      <= 1'b1;              // the replaced node's slot key
        hk_pend_slot_q <= h_exact_slot;
      end
      if (h_scan_more) begin
        probe_q <= probe_q + RW'(1);
        if (h_cur_found) begin
          hf_q      <= 1'b1;
          hf_row_q  <= h_cur_row;
          hf_way_q  <= h_cur_way;
          hf_slot_q <= w_slot[h_cur_way];
          hf_pos_q  <= probe_q;
        end
      end
      if (exec_go && h_op && x_clr && !(x_set && x_old == x_slot)) begin
        hk_pend_q      <= 1'b1;
        hk_pend_slot_q <= x_old;
      end
      if (h_shift) begin
        hole_row_q <= h_exact_row;
        hole_way_q <= h_exact_way;
        hole_pos_q <= h_exact_pos;
        sh_pos_q   <= RW'(1);
        sh_last_q  <= probe_q;
      end
      if (state_q == StShift) begin
        sh_pos_q <= sh_pos_q + RW'(1);
        if (h_move) begin
          hole_row_q <= h_cur_row;
          hole_way_q <= h_move_way;
          hole_pos_q <= sh_pos_q;
        end
      end
    end
  end


  always_comb begin
    stack_top  = ebase_q[map_q][EW-1:0] + sp_q[map_q][EW-1:0] - EW'(1);
    alloc_pop  = sp_q[map_q] != '0;
    alloc_slot = alloc_pop ? stack_q[stack_top] : fresh_q[map_q];
    exact_slot = SW'(EW1'({1'b0, exact_i} - ebase_q[map_q]));
    best_slot  = SW'(EW1'({1'b0, best} - ebase_q[map_q]));
    xe_v       = exact_v;
    xb_v       = best_v;
    if (is_bkt) begin
      // the buckets, the block-RAM free stack (LRU maps take their nodes from the lists instead)
      alloc_slot = alloc_pop ? hs_rdata[SW-1:0] : fresh_q[map_q];
      exact_slot = h_exact_slot;
      best_slot  = h_exact_slot;
      xe_v       = h_exact_v;
      xb_v       = h_exact_v;
    end
  end

  // HASH_OF_MAPS (a HASH of 4-byte inner map indices): a program's lookup reads the value, its updates and deletes
  // give -EINVAL (the verifier allows programs only lookups of maps of maps)
  logic outer_hash;
  assign outer_hash = def_type_q[map_q] == 32'd13;

  always_comb begin : exec
    logic [2:0]  kind;
    logic [31:0] index;
    logic        host_ro;
    logic        host_wo;
    logic        in_range;
    logic        progarr;
    kind         = kind_q[map_q];
    in_range     = key_q[31:0] < {{(32 - SW) {1'b0}}, max_q[map_q]};
    progarr      = progarr_q[map_q];
    index        = key_q[31:0];
    host_ro      = host_q && rdonly_q[map_q];
    host_wo      = host_q && wronly_q[map_q];
    x_ret        = 64'd0;
    x_hit        = 1'b0;
    x_slot       = '0;
    x_next       = 2'd0;
    x_set        = 1'b0;
    x_clr        = 1'b0;
    x_old        = exact_slot;
    x_pop        = 1'b0;
    x_fresh      = 1'b0;
    x_push       = 1'b0;
    x_push_slot  = exact_slot;
    x_spare      = 1'b0;
    x_inc        = 1'b0;
    x_dec        = 1'b0;
    x_lref       = 1'b0;
    x_pres       = 1'b0;
    if (!map_ok_q) begin
      // a map that does not exist: program lookups and gets miss, everything else is -EINVAL
      x_ret = (!host_q && (op_q == OpLookup || op_q == OpRead)) ? 64'd0 : Einval;
    end else if (op_q == OpRead && !host_q) begin
      // get (request op 3): a PROG_ARRAY or DEVMAP entry, read with its presence byte; other maps miss
      if (kind == KindSlots && in_range) begin
        x_slot = index[SW-1:0];
        x_next = 2'd2;
      end
    end else if (kind == KindRing && op_q != OpRead) begin
      // no elements: program lookups miss, program updates and deletes give -EINVAL, host operations -ENOTSUPP
      // (an update with BPF_F_LOCK -EINVAL, checked first by the syscall)
      if (host_q) x_ret = (op_q == OpUpdate && flags_q[2]) ? Einval : Enotsupp;
      else if (op_q != OpLookup) x_ret = Einval;
    end else if (kind == KindSlots && op_q != OpRead) begin
      // PROG_ARRAY and DEVMAP (crates/maps/src/devices.rs): programs may only look DEVMAP entries up; the host's
      // operations follow the syscall. Presence is the byte after the value; reads set the hit from it.
      if (op_q == OpLookup) begin
        if (host_wo) begin
          x_ret = Eperm;
        end else if ((host_q || !progarr) && in_range) begin
          x_slot = index[SW-1:0];
          x_next = 2'd2;
        end
      end else if (!host_q) begin
        x_ret = Einval;
      end else if (host_ro) begin
        x_ret = Eperm;
      end else if (op_q == OpDelete) begin
        if (!in_range) begin
          x_ret = progarr ? E2big : Einval;
        end else begin
          // a PROG_ARRAY delete of an absent entry is -ENOENT: read the presence first
          x_slot = index[SW-1:0];
          x_next = progarr ? 2'd2 : 2'd1;
          x_pres = !progarr;
        end
      end else if (flags_q[2]) begin
        x_ret = Einval;
      end else if (progarr) begin
        if (flags_q != 64'd0) x_ret = Einval;
        else if (!in_range) x_ret = E2big;
        else begin
          x_slot = index[SW-1:0];
          x_next = 2'd1;
        end
      end else begin
        if (flags_q > 64'd2) x_ret = Einval;
        else if (!in_range) x_ret = E2big;
        else if (flags_q == 64'd1) x_ret = Eexist;
        else if (value_q[31:0] == 32'd0) begin
          // ifindex 0 removes the entry; with a program fd it is -EINVAL
          if (vsize_q[map_q] == 16'd8 && !value_q[63] && value_q[63:32] != 32'd0) begin
            x_ret = Einval;
          end else begin
            x_slot = index[SW-1:0];
            x_next = 2'd1;
            x_pres = 1'b1;
          end
        end else begin
          x_slot = index[SW-1:0];
          x_next = 2'd1;
        end
      end
    end else if (op_q == OpRead) begin
      x_slot = slot_in_q[SW-1:0];
      if (slot_in_q < {{(28 - SW) {1'b0}}, slots_q[map_q]}) begin
        x_hit  = (kind == KindArray) || ((kind == KindHash || kind == KindLru) && hk_rdata[0])
                 || (kind == KindLpm && ent_valid_q[ebase_q[map_q][EW-1:0] + slot_in_q[EW-1:0]]);
        x_next = 2'd2;
      end
    end else if (op_q == OpLookup) begin
      if (host_wo) begin
        x_ret = Eperm;
      end else if (kind == KindArray) begin
        x_hit  = index < {{(32 - SW) {1'b0}}, max_q[map_q]};
        x_slot = index[SW-1:0];
      end else begin
        x_hit  = xb_v;
        x_slot = best_slot;
        x_lref = xb_v && !host_q && kind == KindLru;
      end
      // a HASH_OF_MAPS lookup reads its value (the inner map's index) for the helper module, as a host lookup does
      if (x_hit && (host_q || outer_hash)) x_next = 2'd2;
    end else if (op_q == OpDelete) begin
      if (host_ro) begin
        x_ret = Eperm;
      end else if (kind == KindArray || (!host_q && outer_hash)) begin
        x_ret = Einval;                     // programs may only look maps of maps up
      end else if (kind == KindLpm && key_plen > {16'd0, max_plen}) begin
        x_ret = Einval;
      end else if (!xe_v) begin
        x_ret = Enoent;
      end else begin
        x_clr  = 1'b1;
        x_push = kind != KindLru;
        x_dec  = 1'b1;
        x_slot = exact_slot;
        if (kind == KindLru) x_next = 2'd3;  // bpf_lru_push_free
      end
    end else begin
      // update
      if (host_ro) begin
        x_ret = Eperm;
      end else if ((host_q && flags_q[2]) || (!host_q && outer_hash)) begin
        x_ret = Einval;
      end else if (kind == KindArray) begin
        if ((flags_q & ~64'd4) > 64'd2) x_ret = Einval;
        else if (index >= {{(32 - SW) {1'b0}}, max_q[map_q]}) x_ret = E2big;
        else if (flags_q[0]) x_ret = Eexist;
        else if (flags_q[2]) x_ret = Einval;
        else begin
          x_slot = index[SW-1:0];
          x_next = 2'd1;
        end
      end else if (flags_q > 64'd2) begin
        x_ret = Einval;
      end else if (kind == KindHash) begin
        if (xe_v && flags_q == 64'd1) begin
          x_ret = Eexist;
        end else if (!xe_v && flags_q == 64'd2) begin
          x_ret = Enoent;
        end else if (xe_v && def_type_q[map_q] == 32'd5) begin
          // a per-CPU element is updated in place (__htab_percpu_map_update_elem)
          x_slot = exact_slot;
          x_next = 2'd1;
        end else if (xe_v) begin
          // the new value goes to the spare element (or a new one); the old element becomes the spare
          x_spare      = 1'b1;
          x_slot       = spare_v_q[map_q] ? spare_q[map_q] : alloc_slot;
          x_pop        = !spare_v_q[map_q] && alloc_pop;
          x_fresh      = !spare_v_q[map_q] && !alloc_pop;
          x_set        = 1'b1;
          x_clr        = 1'b1;
          x_next       = 2'd1;
        end else if (count_q[map_q] >= max_q[map_q]) begin
          x_ret = E2big;
        end else begin
          x_slot  = alloc_slot;
          x_pop   = alloc_pop;
          x_fresh = !alloc_pop;
          x_set   = 1'b1;
          x_inc   = 1'b1;
          x_next  = 2'd1;
        end
      end else if (kind == KindLpm) begin
        if (key_plen > {16'd0, max_plen}) begin
          x_ret = Einval;
        end else begin
          // trie_update_elem takes a value slot (and writes the value into it) before it walks the trie; a failed
          // update gives the slot back to the free list.
          x_slot = alloc_slot;
          x_next = 2'd1;
          if (xe_v && flags_q == 64'd1) begin
            x_ret = Eexist;
          end else if (!xe_v && flags_q == 64'd2) begin
            x_ret = Enoent;
          end else if (!xe_v && count_q[map_q] == max_q[map_q]) begin
            x_ret = Enospc;
          end else begin
            x_pop   = alloc_pop;
            x_fresh = !alloc_pop;
            x_set   = 1'b1;
            if (xe_v) begin
              x_clr  = 1'b1;
              x_push = 1'b1;
            end else begin
              x_inc = 1'b1;
            end
          end
        end
      end else begin
        // LRU_HASH: the LRU steps take a node (maybe evicting), then settle the outcome
        x_next = 2'd3;
      end
    end
    if (ev_q) begin
      // an evicted node's key leaves the buckets (del_from_htab): nothing else of the operation happens here
      x_ret       = 64'd0;
      x_hit       = 1'b0;
      x_next      = 2'd0;
      x_set       = 1'b0;
      x_clr       = h_exact_v;
      x_old       = exact_slot;
      x_slot      = exact_slot;
      x_pop       = 1'b0;
      x_fresh     = 1'b0;
      x_push      = 1'b0;
      x_spare     = 1'b0;
      x_inc       = 1'b0;
      x_dec       = 1'b0;
      x_lref      = 1'b0;
      x_pres      = 1'b0;
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // LRU_HASH: the kernel's LRU lists (kernel/bpf/bpf_lru_list.c, as crates/maps/src/lru ports it) for one CPU and
  // the common LRU: per map the active, inactive and free lists, the CPU's local free and pending lists, the
  // active/inactive counts and the inactive rotation cursor, over doubly linked nodes with the list heads as
  // sentinels. Node n of a map is list node lbase + n (its slot is n; its key in the buckets and the slot keys, as a
  // HASH map's). The list heads' links are registers; the nodes' are block RAM rows (rtl/common/ram_tdp): next links,
  // prev links, a first-in-its-list bit (set, the prev link is the head of the node's kind: a move writes three prev
  // links, x's own among them, and a true dual-port RAM takes two a cycle) and the node's kind, reference and
  // in-table bits. Every step of the kernel's loops is two cycles here: the fetch reads the step's one node (its
  // subject: the node it examines or moves) on every RAM's port A, the execution decides with that row and the
  // heads and moves at most one node, its writes spread over both ports (next[prev x] and prev[next x] on A,
  // next[x] and prev[the head's old first] on B; the node's kind row on A, the taken node's on B). An eviction (del_from_htab) then deletes the node's key from the buckets
  // (StEvict reads the slot key and asks its home row, then the HASH delete's probe and backward shift, then the
  // steps go on: 1 + k cycles, 2k + 1 when the k rows read are more than one); once a node is taken the update probes
  // its own key's rows (StLProbe, k cycles) before LDecide settles it.


  // node kinds, also the offsets of the list heads
  localparam [2:0] KActive       = 3'd0;
  localparam [2:0] KInactive     = 3'd1;
  localparam [2:0] KFree         = 3'd2;
  localparam [2:0] KLocalFree    = 3'd3;
  localparam [2:0] KLocalPending = 3'd4;

  // steps
  localparam [3:0] LStart      = 4'd0;   // bpf_lru_pop_free: __local_list_pop_free
  localparam [3:0] LFlush      = 4'd1;   // __local_list_flush
  localparam [3:0] LRot        = 4'd2;   // __bpf_lru_list_rotate
  localparam [3:0] LRotA       = 4'd3;   // __bpf_lru_list_rotate_active
  localparam [3:0] LRotIInit   = 4'd4;
  localparam [3:0] LRotI       = 4'd5;   // __bpf_lru_list_rotate_inactive
  localparam [3:0] LFill       = 4'd6;   // free list to the local free list
  localparam [3:0] LShrinkInit = 4'd7;
  localparam [3:0] LShrink     = 4'd8;   // __bpf_lru_list_shrink_inactive
  localparam [3:0] LShrinkDone = 4'd9;
  localparam [3:0] LForce      = 4'd10;  // __bpf_lru_list_shrink: evict the oldest regardless
  localparam [3:0] LPop        = 4'd11;  // __local_list_pop_free again
  localparam [3:0] LDecide     = 4'd12;  // htab_lru_map_update_elem after the node is taken
  localparam [3:0] LPush       = 4'd13;  // bpf_lru_push_free of a deleted element

  // node moves, as the kernel's helpers
  localparam [2:0] ANone        = 3'd0;
  localparam [2:0] AMove        = 3'd1;  // __bpf_lru_node_move
  localparam [2:0] AToLocalFree = 3'd2;  // __bpf_lru_node_move_to_free(local free list)
  localparam [2:0] AMoveIn      = 3'd3;  // __bpf_lru_node_move_in
  localparam [2:0] APending     = 3'd4;  // __local_list_add_pending
  localparam [2:0] APushFree    = 3'd5;  // bpf_lru_push_free

  localparam [7:0] NrScans = 8'd128;     // LOCAL_NR_SCANS

  localparam integer HN = 5 * MAPS;         // list heads
  localparam integer LW8 = 8 * ((LW + 7) / 8);  // a link's RAM width
  localparam integer HW  = $clog2(HN);      // head numbers

  logic [LW-1:0]      hnext_q  [HN];        // the heads' links (head k of map m: list node LRU_NODES + 5m + k)
  logic [LW-1:0]      hprev_q  [HN];
  logic               lph_q;                // StLru: 0 the step's fetch, 1 its execution
  logic [LW-1:0]      subj_q;               // the step's subject (a node, or a head: then no row is used)
  logic               l_go;                 // the step's execution cycle
  logic [SW-1:0]      lact_q   [MAPS];
  logic [SW-1:0]      linact_q [MAPS];
  logic [LW-1:0]      lcur_q   [MAPS];      // next_inactive_rotation
  logic [3:0]         lst_q;
  logic [LW-1:0]      lnode_q;
  logic [LW-1:0]      lfirst_q;
  logic [LW-1:0]      llast_q;
  logic [LW-1:0]      lnxt_q;
  logic [LW-1:0]      llist_q;
  logic [NW-1:0]      lgot_q;               // the node taken for the update
  logic [7:0]         li_q;
  logic [7:0]         lmoved_q;
  logic [7:0]         lshrunk_q;

  logic [LW-1:0] hbase;                     // the current map's heads: hbase + kind
  logic [LW-1:0] h_act;
  logic [LW-1:0] h_inact;
  logic [LW-1:0] h_free;
  logic [LW-1:0] h_lfree;
  logic [LW-1:0] h_lpend;
  logic [7:0]    ltarget;                   // target_free: clamp(nodes / POSSIBLE_CPUS / 2, 1, 128)

  always_comb begin
    logic [31:0] half;
    hbase   = LW'(LRU_NODES) + LW'(map_q) * LW'(5);
    h_act   = hbase + LW'(KActive);
    h_inact = hbase + LW'(KInactive);
    h_free  = hbase + LW'(KFree);
    h_lfree = hbase + LW'(KLocalFree);
    h_lpend = hbase + LW'(KLocalPending);
    half    = (32'(slots_q[map_q]) / 32'(POSSIBLE_CPUS)) >> 1;
    if (half == 32'd0) half = 32'd1;
    if (half > 32'd128) half = 32'd128;
    ltarget = half[7:0];
  end

  // The current map's heads' links, by kind.
  logic [LW-1:0] hn [5];
  logic [LW-1:0] hp [5];

  always_comb begin
    for (integer k = 0; k < 5; k = k + 1) begin
      hn[k] = hnext_q[32'(map_q) * 5 + k];
      hp[k] = hprev_q[32'(map_q) * 5 + k];
    end
  end

  // The node rows (port A reads in the fetch cycle, the row out in the execution cycle) and the subject's links and
  // bits as the execution sees them: a head's from its registers.
  /* verilator lint_off UNUSEDSIGNAL */      // the rows' padding bits
  logic [LW8-1:0] nx_rd;                    // next link
  logic [LW8-1:0] pv_rd;                    // prev link (when the first bit is clear)
  logic [7:0]     fs_rd;                    // first in its list: the prev link is the head of its kind
  logic [23:0]    at_rd;                    // kind, reference bit, in-table bit (a byte each)
  /* verilator lint_on UNUSEDSIGNAL */
  logic           subj_head;
  logic [HW-1:0]  subj_hidx;
  logic [LW-1:0]  rec_next;
  logic [LW-1:0]  rec_prev;
  logic [2:0]     rec_kind;
  logic           rec_ref;
  logic           rec_val;                  // the node holds a key (in the buckets)

  assign l_go      = state_q == StLru && lph_q;
  assign subj_head = 32'(subj_q) >= LRU_NODES;
  assign subj_hidx = HW'(subj_q - LW'(LRU_NODES));
  assign rec_kind  = at_rd[2:0];
  assign rec_ref   = at_rd[8];
  assign rec_val   = at_rd[16];

  always_comb begin
    rec_next = nx_rd[LW-1:0];
    rec_prev = fs_rd[0] ? hbase + LW'(rec_kind) : pv_rd[LW-1:0];
    if (subj_head) begin
      rec_next = hnext_q[subj_hidx];
      rec_prev = hprev_q[subj_hidx];
    end
  end

  // One step: which node moves how, and what the step settles.
  logic [2:0]    a_op;
  logic [NW-1:0] a_node;
  logic [2:0]    a_to;
  logic          l_evict;                   // del_from_htab(a_node)
  logic          l_done;                    // respond with l_ret
  logic [63:0]   l_ret;
  logic          l_write;                   // success: the value goes to node lgot_q
  logic          l_old;                     // the key had an element (l_exact), which leaves the table
  logic          l_cur_set;                 // the rotation cursor becomes l_cur
  logic [LW-1:0] l_cur;
  logic [3:0]    lst_d;
  logic [LW-1:0] lnode_d;
  logic [LW-1:0] lfirst_d;
  logic [LW-1:0] llast_d;
  logic [LW-1:0] lnxt_d;
  logic [LW-1:0] llist_d;
  logic [NW-1:0] lgot_d;
  logic [NW-1:0] l_exact;                   // LDecide: the node holding the key (the probe found it)
  logic [7:0]    li_d;
  logic [7:0]    lmoved_d;
  logic [7:0]    lshrunk_d;

  always_comb begin : lru_step
    logic [LW-1:0] n;
    logic [LW-1:0] n1;
    n         = '0;
    n1        = '0;
    a_op      = ANone;
    a_node    = lnode_q[NW-1:0];
    a_to      = KActive;
    l_evict   = 1'b0;
    l_done    = 1'b0;
    l_ret     = 64'd0;
    l_write   = 1'b0;
    l_old     = 1'b0;
    l_cur_set = 1'b0;
    l_cur     = lnxt_q;
    lst_d     = lst_q;
    lnode_d   = lnode_q;
    lfirst_d  = lfirst_q;
    llast_d   = llast_q;
    lnxt_d    = lnxt_q;
    llist_d   = llist_q;
    lgot_d    = lgot_q;
    li_d      = li_q;
    lmoved_d  = lmoved_q;
    lshrunk_d = lshrunk_q;
    case (lst_q)
      LStart, LPop: begin
        n = hn[KLocalFree];
        if (n != h_lfree) begin
          a_op   = APending;
          a_node = n[NW-1:0];
          lgot_d = n[NW-1:0];
          lst_d  = LDecide;
        end else if (lst_q == LStart) begin
          lmoved_d = 8'd0;
          lst_d    = LFlush;
        end else begin
          // the steal from the (only) CPU's local lists finds them empty: they were just flushed
          l_done = 1'b1;
          l_ret  = Enomem;
        end
      end
      LFlush: begin
        n = hp[KLocalPending];
        if (n != h_lpend) begin
          a_op   = AMoveIn;
          a_node = n[NW-1:0];
          a_to   = rec_ref ? KActive : KInactive;
        end else begin
          lst_d = LRot;
        end
      end
      LRot: begin
        if (linact_q[map_q] < lact_q[map_q]) begin
          lfirst_d = hn[KActive];
          lnode_d  = hp[KActive];
          li_d     = 8'd0;
          lst_d    = LRotA;
        end else begin
          lst_d = LRotIInit;
        end
      end
      LRotA: begin
        if (lnode_q == h_act) begin
          lst_d = LRotIInit;
        end else begin
          a_op    = AMove;
          a_to    = rec_ref ? KActive : KInactive;
          li_d    = li_q + 8'd1;
          lnode_d = rec_prev;
          if (li_q + 8'd1 == NrScans || lnode_q == lfirst_q) lst_d = LRotIInit;
        end
      end
      LRotIInit: begin
        if (hn[KInactive] == h_inact) begin
          lst_d = LFill;
        end else begin
          n1      = rec_next;                  // the subject: the cursor
          llast_d = (n1 == h_inact) ? hn[KInactive] : n1;
          lnode_d = lcur_q[map_q];
          lnxt_d  = h_inact;
          li_d    = 8'd0;
          lst_d   = LRotI;
        end
      end
      LRotI: begin
        if (li_q >= NrScans) begin
          l_cur_set = 1'b1;
          l_cur     = lnxt_q;
          lst_d     = LFill;
        end else if (lnode_q == h_inact) begin
          lnode_d = rec_prev;
        end else begin
          lnxt_d = rec_prev;
          if (rec_ref) begin
            a_op = AMove;
            a_to = KActive;
          end
          if (lnode_q == llast_q) begin
            l_cur_set = 1'b1;
            l_cur     = rec_prev;
            lst_d     = LFill;
          end else begin
            lnode_d = rec_prev;
            li_d    = li_q + 8'd1;
          end
        end
      end
      LFill: begin
        n = hn[KFree];
        if (n == h_free) begin
          lst_d = (lmoved_q < ltarget) ? LShrinkInit : LPop;
        end else begin
          a_op     = AToLocalFree;
          a_node   = n[NW-1:0];
          lmoved_d = lmoved_q + 8'd1;
          if (lmoved_q + 8'd1 == ltarget) lst_d = LPop;
        end
      end
      LShrinkInit: begin
        lnode_d   = hp[KInactive];
        lshrunk_d = 8'd0;
        li_d      = 8'd0;
        lst_d     = LShrink;
      end
      LShrink: begin
        if (lnode_q == h_inact) begin
          lst_d = LShrinkDone;
        end else begin
          lnode_d = rec_prev;
          li_d    = li_q + 8'd1;
          if (li_q + 8'd1 == NrScans) lst_d = LShrinkDone;
          if (rec_ref) begin
            a_op = AMove;
            a_to = KActive;
          end else if (rec_val) begin
            l_evict   = 1'b1;
            a_op      = AToLocalFree;
            lshrunk_d = lshrunk_q + 8'd1;
            if (lshrunk_q + 8'd1 == ltarget - lmoved_q) lst_d = LPop;
          end
        end
      end
      LShrinkDone: begin
        if (lshrunk_q != 8'd0) begin
          lst_d = LPop;
        end else begin
          llist_d = (hn[KInactive] == h_inact) ? h_act : h_inact;
          lnode_d = (hn[KInactive] == h_inact) ? hp[KActive] : hp[KInactive];
          lst_d   = LForce;
        end
      end
      LForce: begin
        if (lnode_q == llist_q) begin
          lst_d = LPop;
        end else if (rec_val) begin
          l_evict = 1'b1;
          a_op    = AToLocalFree;
          lst_d   = LPop;
        end else begin
          lnode_d = rec_prev;
        end
      end
      LDecide: begin
        a_node = lgot_q;
        if (h_exact_v && flags_q == 64'd1) begin
          l_done = 1'b1;
          l_ret  = Eexist;
          a_op   = APushFree;
        end else if (!h_exact_v && flags_q == 64'd2) begin
          l_done = 1'b1;
          l_ret  = Enoent;
          a_op   = APushFree;
        end else begin
          l_write = 1'b1;
          if (h_exact_v) begin
            l_old  = 1'b1;
            a_op   = APushFree;
            a_node = l_exact;
          end
        end
      end
      default: begin
        // LPush: the deleted element's node goes back
        a_op   = APushFree;
        l_done = 1'b1;
      end
    endcase
  end

  assign l_exact  = NW'(lbase_q[map_q]) + NW'(h_exact_slot);
  assign ev_rel   = a_node - lbase_q[map_q][NW-1:0];
  assign got_rel  = lgot_q - lbase_q[map_q][NW-1:0];
  assign l_slot   = SW'(got_rel);
  assign x_node   = lbase_q[map_q][NW-1:0] + NW'(exact_slot);
  assign l_ins    = l_go && l_write;
  assign ev_start = l_go && l_evict;
  assign lp_start = l_go && a_op == APending;
  assign ev_end   = ev_q && ((state_q == StExec && exec_go && !h_shift) || state_q == StHClear);

  // The move's effect on kinds, reference bits, counts and the cursor.
  logic          mv_en;
  logic [LW-1:0] mv_x;
  logic [LW-1:0] mv_h;
  logic          k_en;
  logic [2:0]    k_val;
  logic          r_clr;
  logic          c_step;
  logic          inc_act;
  logic          inc_inact;
  logic          dec_act;
  logic          dec_inact;

  always_comb begin : lru_apply
    logic [2:0] from;
    logic [2:0] to;
    from      = rec_kind;
    to        = (a_op == APushFree) ? KFree : a_to;
    mv_en     = 1'b0;
    mv_x      = LW'(a_node);
    mv_h      = hbase + LW'(to);
    k_en      = 1'b0;
    k_val     = to;
    r_clr     = 1'b0;
    c_step    = 1'b0;
    inc_act   = 1'b0;
    inc_inact = 1'b0;
    dec_act   = 1'b0;
    dec_inact = 1'b0;
    case (a_op)
      AMove, APushFree: begin
        if (a_op == APushFree && from == KLocalPending) begin
          k_en  = 1'b1;
          k_val = KLocalFree;
          r_clr = 1'b1;
          mv_en = 1'b1;
          mv_h  = h_lfree;
        end else if ((a_op == AMove && from <= KFree) || (a_op == APushFree && from <= KInactive)) begin
          if (from != to) begin
            k_en      = 1'b1;
            dec_act   = from == KActive;
            dec_inact = from == KInactive;
            inc_act   = to == KActive;
            inc_inact = to == KInactive;
          end
          r_clr  = 1'b1;
          c_step = 1'b1;
          mv_en  = 1'b1;
        end
      end
      AToLocalFree: begin
        if (from <= KFree) begin
          c_step    = 1'b1;
          dec_act   = from == KActive;
          dec_inact = from == KInactive;
          k_en      = 1'b1;
          k_val     = KLocalFree;
          mv_en     = 1'b1;
          mv_h      = h_lfree;
        end
      end
      AMoveIn: begin
        if (from >= KLocalFree) begin
          inc_act   = to == KActive;
          inc_inact = to == KInactive;
          k_en      = 1'b1;
          r_clr     = 1'b1;
          mv_en     = 1'b1;
        end
      end
      APending: begin
        k_en  = 1'b1;
        k_val = KLocalPending;
        r_clr = 1'b1;
        mv_en = 1'b1;
        mv_h  = h_lpend;
      end
      default: begin
      end
    endcase
  end

  // bpf_lru_populate, one list link per clearing cycle: every node of an LRU map added at the head of its free list
  // in turn (node 0 ends up last); every other head and node links to itself.
  logic [LW-1:0] init_next;
  logic [LW-1:0] init_prev;

  always_comb begin : lru_populate
    logic [LW-1:0] c;
    logic [LW-1:0] free;
    logic [LW-1:0] first;
    logic [LW-1:0] last;
    c         = clear_q[LW-1:0];
    init_next = c;
    init_prev = c;
    for (integer m = 0; m < MAPS; m = m + 1) begin
      free  = LW'(LRU_NODES + 5 * m + 2);
      first = LW'(lbase_q[m]);
      last  = LW'(lbase_q[m]) + LW'(slots_q[m][NW:0]) - LW'(1);
      if (kind_q[m] == KindLru && live_q[m]) begin
        if (c >= first && c <= last) begin
          init_next = (c == first) ? free : c - LW'(1);
          init_prev = (c == last) ? free : c + LW'(1);
        end
        if (c == free) begin
          init_next = last;
          init_prev = first;
        end
      end
    end
  end

  // A move's links (list_move(x, h): list_del, then list_add right after h). p and n are x's neighbours, f the node
  // after h once x is out of its list (n when x already follows h), each a node row or a head register.
  logic [LW-1:0] mv_p;
  logic [LW-1:0] mv_n;
  logic [LW-1:0] mv_f;
  logic          mv_same;                   // x already follows h: only n's prev link changes (to x)

  logic          p_is_node;
  logic          n_is_node;
  logic          f_is_node;

  assign mv_p    = rec_prev;
  assign mv_n    = rec_next;
  assign mv_same = mv_h == mv_p;
  assign mv_f    = mv_same ? mv_n : hnext_q[HW'(mv_h - LW'(LRU_NODES))];
  assign p_is_node = 32'(mv_p) < LRU_NODES;
  assign n_is_node = 32'(mv_n) < LRU_NODES;
  assign f_is_node = 32'(mv_f) < LRU_NODES;

  // The subject of the step about to run: the node it reads or moves (its row is read in the fetch cycle).
  logic [LW-1:0] subj_d;

  always_comb begin
    case (lst_q)
      LStart, LPop: subj_d = hn[KLocalFree];
      LFlush:       subj_d = hp[KLocalPending];
      LRotIInit:    subj_d = lcur_q[map_q];
      LFill:        subj_d = hn[KFree];
      LDecide:      subj_d = (h_exact_v && flags_q != 64'd1) ? LW'(l_exact) : LW'(lgot_q);
      default:      subj_d = lnode_q;
    endcase
  end

  // Node-row ports. Port A: the sweep's writes, the fetch's read, the execution's writes of next[p], prev[n] (x
  // when x already follows h), x's first bit and x's kind row. Port B: next[x], prev[f] and f's first bit cleared,
  // the taken node's kind row (LDecide) and a request's reference and in-table bits (StExec).
  logic          ra_en;
  logic          ra_we;
  logic [NW-1:0] ra_addr;
  logic          nxa_we;
  logic [NW-1:0] nxa_addr;
  logic [LW-1:0] nxa_data;
  logic          pva_we;
  logic [NW-1:0] pva_addr;
  logic [LW-1:0] pva_data;
  logic          fsa_we;
  logic          fsa_data;
  logic [2:0]    ata_be;
  logic [23:0]   ata_data;
  logic          nxb_we;
  logic          pvb_we;
  logic          atb_we;
  logic [NW-1:0] atb_addr;
  logic [2:0]    atb_be;
  logic [23:0]   atb_data;
  logic          lsweep;                    // the sweep is at a node

  assign lsweep = state_q == StClear && 32'(clear_q) < LRU_NODES;

 always_comb begin : lru_ports
    ra_en    = 1'b0;
    ra_we    = 1'b0;
    ra_addr  = subj_d[NW-1:0];
    nxa_we   = 1'b0;
    nxa_addr = mv_p[NW-1:0];
    nxa_data = mv_n;
    pva_we   = 1'b0;
    pva_addr = mv_n[NW-1:0];
    pva_data = mv_same ? mv_x : mv_p;
    fsa_we   = 1'b0;
    fsa_data = 1'b1;
    ata_be   = 3'b000;
    ata_data = {7'd0, 1'b0, 7'd0, 1'b0, 5'd0, k_val};
    nxb_we   = l_go && mv_en;
    pvb_we   = l_go && mv_en && !mv_same && f_is_node;
    atb_we   = 1'b0;
    atb_addr = x_node;
    atb_be   = 3'b000;
    atb_data = {7'd0, 1'b1, 7'd0, 1'b1, 8'd0};
    if (lsweep) begin
      // bpf_lru_populate: links as lru_populate says, kind free, bits clear
      ra_en    = 1'b1;
      ra_we    = 1'b1;
      ra_addr  = clear_q[NW-1:0];
      nxa_we   = 1'b1;
      nxa_addr = clear_q[NW-1:0];
      nxa_data = init_next;
      pva_we   = 1'b1;
      pva_addr = clear_q[NW-1:0];
      pva_data = init_prev;
      fsa_we   = 1'b1;
      fsa_data = 1'b0;
      ata_be   = 3'b111;
      ata_data = {21'd0, KFree};
    end else if (state_q == StLru && !lph_q) begin
      ra_en = 1'b1;
    end else if (l_go) begin
      ra_en    = 1'b1;
      ra_we    = 1'b1;
      ra_addr  = a_node;
      nxa_we   = mv_en && p_is_node;
      pva_we   = mv_en && n_is_node;
      fsa_we   = mv_en;
      ata_be   = {l_evict || (l_write && l_old), r_clr, k_en};
      atb_we   = l_write;
      atb_addr = lgot_q;
      // the taken node holds the key; replacing an element sets its reference bit (set_ref)
      atb_be   = {1'b1, l_old, 1'b0};
    end else if (exec_go) begin
      // a lookup's hit sets the reference bit; a delete's found node leaves the table
      atb_we   = x_lref || (x_clr && !ev_q && kind_q[map_q] == KindLru);
      atb_be   = {x_clr && !ev_q && kind_q[map_q] == KindLru, x_lref, 1'b0};
      atb_data = {7'd0, 1'b0, 7'd0, 1'b1, 8'd0};
    end
  end

  /* verilator lint_off PINCONNECTEMPTY */
  ram_tdp #(
    .WIDTH (LW8),
    .DEPTH (LRU_NODES)
  ) u_lnext (
    .clk_i     (clk_i),
    .a_en_i    (ra_en),
    .a_we_i    (ra_we && nxa_we),
    .a_addr_i  (ra_we ? nxa_addr : ra_addr),
    .a_wdata_i (LW8'(nxa_data)),
    .a_be_i    ('1),
    .a_rdata_o (nx_rd),
    .b_en_i    (nxb_we),
    .b_we_i    (1'b1),
    .b_addr_i  (mv_x[NW-1:0]),
    .b_wdata_i (LW8'(mv_f)),
    .b_be_i    ('1),
    .b_rdata_o ()
  );

  ram_tdp #(
    .WIDTH (LW8),
    .DEPTH (LRU_NODES)
  ) u_lprev (
    .clk_i     (clk_i),
    .a_en_i    (ra_en),
    .a_we_i    (ra_we && pva_we),
    .a_addr_i  (ra_we ? pva_addr : ra_addr),
    .a_wdata_i (LW8'(pva_data)),
    .a_be_i    ('1),
    .a_rdata_o (pv_rd),
    .b_en_i    (pvb_we),
    .b_we_i    (1'b1),
    .b_addr_i  (mv_f[NW-1:0]),
    .b_wdata_i (LW8'(mv_x)),
    .b_be_i    ('1),
    .b_rdata_o ()
  );

  ram_tdp #(
    .WIDTH (8),
    .DEPTH (LRU_NODES)
  ) u_lfirst (
    .clk_i     (clk_i),
    .a_en_i    (ra_en),
    .a_we_i    (ra_we && fsa_we),
    .a_addr_i  (ra_addr),
    .a_wdata_i ({7'd0, fsa_data}),
    .a_be_i    ('1),
    .a_rdata_o (fs_rd),
    .b_en_i    (pvb_we),
    .b_we_i    (1'b1),
    .b_addr_i  (mv_f[NW-1:0]),
    .b_wdata_i (8'd0),
    .b_be_i    ('1),
    .b_rdata_o ()
  );

  ram_tdp #(
    .WIDTH (24),
    .DEPTH (LRU_NODES)
  ) u_lattr (
    .clk_i     (clk_i),
    .a_en_i    (ra_en),
    .a_we_i    (ra_we && ata_be != 3'b000),
    .a_addr_i  (ra_addr),
    .a_wdata_i (ata_data),
    .a_be_i    (ata_be),
    .a_rdata_o (at_rd),
    .b_en_i    (atb_we),
    .b_we_i    (1'b1),
    .b_addr_i  (atb_addr),
    .b_wdata_i (atb_data),
    .b_be_i    (atb_be),
    .b_rdata_o ()
  );
  /* verilator lint_on PINCONNECTEMPTY */

  // LRU registers (no reset: StClear builds the lists when a configuration is laid out).
  always_ff @(posedge clk_i) begin
    lph_q <= state_q == StLru && !lph_q;
    if (state_q == StLru && !lph_q) subj_q <= subj_d;
    if (state_q == StClear && 32'(clear_q) >= LRU_NODES && 32'(clear_q) < LN) begin
      hnext_q[HW'(clear_q[LW-1:0] - LW'(LRU_NODES))] <= init_next;
      hprev_q[HW'(clear_q[LW-1:0] - LW'(LRU_NODES))] <= init_prev;
    end
    if (state_q == StClear && clear_q == '0) begin
      for (integer m = 0; m < MAPS; m = m + 1) begin
        lact_q[m]   <= '0;
        linact_q[m] <= '0;
        lcur_q[m]   <= LW'(LRU_NODES + 5 * m + 1);
      end
    end
    if (exec_go && !ev_q) begin
      lst_q   <= (op_q == OpDelete) ? LPush : LStart;
      lnode_q <= LW'(x_node);
    end
    if (l_go) begin
      lst_q     <= lst_d;
      lnode_q   <= lnode_d;
      lfirst_q  <= lfirst_d;
      llast_q   <= llast_d;
      lnxt_q    <= lnxt_d;
      llist_q   <= llist_d;
      lgot_q    <= lgot_d;
      li_q      <= li_d;
      lmoved_q  <= lmoved_d;
      lshrunk_q <= lshrunk_d;
      if (mv_en) begin
        // the head registers' part of the move (the node rows': lru_ports), in list_move's order
        if (!p_is_node) hnext_q[HW'(mv_p - LW'(LRU_NODES))] <= mv_n;
        if (!n_is_node) hprev_q[HW'(mv_n - LW'(LRU_NODES))] <= mv_same ? mv_x : mv_p;
        if (!mv_same && !f_is_node) hprev_q[HW'(mv_f - LW'(LRU_NODES))] <= mv_x;
        hnext_q[HW'(mv_h - LW'(LRU_NODES))] <= mv_x;
      end
      if (inc_act) lact_q[map_q] <= lact_q[map_q] + SW'(1);
      if (dec_act && lact_q[map_q] != '0) lact_q[map_q] <= lact_q[map_q] - SW'(1);
      if (inc_inact) linact_q[map_q] <= linact_q[map_q] + SW'(1);
      if (dec_inact && linact_q[map_q] != '0) linact_q[map_q] <= linact_q[map_q] - SW'(1);
      if (c_step && lcur_q[map_q] == mv_x) lcur_q[map_q] <= mv_p;
      if (l_cur_set) lcur_q[map_q] <= l_cur;
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Sequencing.

  logic [7:0] map_raw;

  assign map_raw = host_pick ? host_map_i : req_map_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q     <= StIdle;
      def_q       <= '0;
      live_q      <= '0;
      rdonly_q    <= '0;
      progarr_q   <= '0;
      wronly_q    <= '0;
      cfg_error_q <= 1'b0;
      ent_valid_q <= '0;
      ev_q        <= 1'b0;
      ldel_q      <= 1'b0;
      spare_v_q   <= '0;
      host_q      <= 1'b0;
      op_q        <= OpLookup;
      map_q       <= '0;
      map_ok_q    <= 1'b0;
      flags_q     <= '0;
      slot_in_q   <= '0;
      ret_q       <= '0;
      hit_q       <= 1'b0;
      slot_q      <= '0;
      row_q       <= '0;
      word_q      <= '0;
      pres_q      <= 1'b0;
      clear_q     <= '0;
      for (integer m = 0; m < MAPS; m = m + 1) begin
        def_type_q[m]  <= '0;
        def_key_q[m]   <= '0;
        def_value_q[m] <= '0;
        def_max_q[m]   <= '0;
        def_flags_q[m] <= '0;
        kind_q[m]      <= KindArray;
        ksize_q[m]     <= '0;
        vsize_q[m]     <= '0;
        max_q[m]       <= '0;
        slots_q[m]     <= '0;
        stride_q[m]    <= '0;
        vbase_q[m]     <= '0;
        ebase_q[m]     <= '0;
        lbase_q[m]     <= '0;
        hbase_q[m]     <= '0;
        hmask_q[m]     <= '0;
        hsbase_q[m]    <= '0;
        sp_q[m]        <= '0;
        fresh_q[m]     <= '0;
        count_q[m]     <= '0;
        spare_q[m]     <= '0;
      end
    end else begin
      if (cfg_we_i && 32'(cfg_map_i) < MAPS) begin
        def_q[cfg_map_i[MW-1:0]]       <= 1'b1;
        def_type_q[cfg_map_i[MW-1:0]]  <= cfg_type_i;
        def_key_q[cfg_map_i[MW-1:0]]   <= cfg_key_size_i;
        def_value_q[cfg_map_i[MW-1:0]] <= cfg_value_size_i;
        def_max_q[cfg_map_i[MW-1:0]]   <= cfg_max_entries_i;
        def_flags_q[cfg_map_i[MW-1:0]] <= cfg_flags_i;
      end
      if (cfg_we_i && 32'(cfg_map_i) >= MAPS) cfg_error_q <= 1'b1;
      case (state_q)
        StIdle: begin
          if (cfg_done_i) begin
            state_q <= StLayout;
          end else if (req_valid_i || host_valid_i) begin
            host_q    <= host_pick;
            op_q      <= host_pick ? host_op_i : req_op_i;
            map_q     <= map_in;
            map_ok_q  <= 32'(map_raw) < MAPS && live_q[map_in];
            flags_q   <= host_pick ? host_flags_i : req_flags_i;
            slot_in_q <= host_slot_i;
            state_q   <= StExec;
          end
        end
        StLayout: begin
          cfg_error_q <= cfg_error_q | lay_error;
          for (integer m = 0; m < MAPS; m = m + 1) begin
            live_q[m]   <= def_q[m] && !lay_error && !cfg_error_q;
            kind_q[m]   <= lay_kind[m];
            ksize_q[m]  <= def_key_q[m][7:0];
            vsize_q[m]  <= def_value_q[m][15:0];
            max_q[m]    <= def_max_q[m][SW-1:0];
            slots_q[m]  <= lay_slots[m];
            stride_q[m] <= lay_stride[m];
            vbase_q[m]  <= lay_vbase[m];
            ebase_q[m]  <= lay_ebase[m];
            lbase_q[m]  <= lay_lbase[m];
            hbase_q[m]  <= lay_hbase[m];
            hmask_q[m]  <= lay_hmask[m];
            hsbase_q[m] <= lay_hsbase[m];
            rdonly_q[m] <= (def_flags_q[m] & FRdonly) != 0;
            progarr_q[m] <= def_type_q[m] == 32'd3 || def_type_q[m] == 32'd12;  // fd arrays: the same host rules
            wronly_q[m] <= (def_flags_q[m] & FWronly) != 0;
            sp_q[m]     <= '0;
            fresh_q[m]  <= '0;
            count_q[m]  <= '0;
          end
          ent_valid_q <= '0;
          spare_v_q   <= '0;
          clear_q     <= '0;
          state_q     <= StClear;
        end
        StClear: begin
          if (!vwr_en_i) begin
            clear_q <= clear_q + CW'(1);
            if (clear_q == CW'(SWEEP - 1)) state_q <= StIdle;
          end
        end
        StExec: if (exec_go && ev_q) begin
          // an eviction's delete settled (or shifts first): the LRU steps go on
          if (h_shift) begin
            state_q <= StShift;
          end else begin
            ev_q    <= 1'b0;
            state_q <= StLru;
          end
        end else if (exec_go) begin
          ldel_q <= x_next == 2'd3 && op_q == OpDelete;
          ret_q  <= x_ret;
          hit_q  <= x_hit;
          slot_q <= x_slot;
          // a presence-only write goes to the slot's last row (where the presence byte lies)
          row_q  <= vbase_q[map_q] + AW'(x_slot * SW'(stride_q[map_q])) + (x_pres ? AW'(last_word) : AW'(0));
          word_q <= x_pres ? last_word : 5'd0;
          pres_q <= x_pres;
          if (x_set && !is_bkt) begin
            ent_valid_q[ebase_q[map_q][EW-1:0] + x_slot[EW-1:0]] <= 1'b1;
          end
          if (x_clr && !is_bkt && !(x_set && x_old == x_slot)) begin
            ent_valid_q[ebase_q[map_q][EW-1:0] + x_old[EW-1:0]] <= 1'b0;
          end
          if (x_pop || x_push) begin
            sp_q[map_q] <= sp_q[map_q] - SW'(x_pop) + SW'(x_push);
          end
          if (x_fresh) fresh_q[map_q] <= fresh_q[map_q] + SW'(1);
          if (x_spare) begin
            spare_q[map_q]   <= x_old;
            spare_v_q[map_q] <= 1'b1;
          end
          if (x_inc) count_q[map_q] <= count_q[map_q] + SW'(1);
          if (x_dec) count_q[map_q] <= count_q[map_q] - SW'(1);
          case (x_next)
            2'd1: state_q <= StWrite;
            2'd2: state_q <= StRead;
            2'd3: state_q <= h_shift ? StShift : StLru;
            default: state_q <= h_shift ? StShift : StResp;
          endcase
        end
        StShift: begin
          if (sh_pos_q == sh_last_q) state_q <= StHClear;
        end
        StHClear: begin
          // an eviction's or an LRU delete's shift ends in the LRU steps
          state_q <= (ev_q || ldel_q) ? StLru : StResp;
          ev_q    <= 1'b0;
        end
        StEvict: begin
          state_q <= StExec;
        end
        StLProbe: begin
          if (!h_scan_more) state_q <= StLru;
        end
        StWrite: begin
          if (!vwr_en_i) begin
            row_q  <= row_q + AW'(1);
            word_q <= word_q + 5'd1;
            if (word_q + 5'd1 == stride_q[map_q]) state_q <= StResp;
          end
        end
        StRead: begin
          if (!vrd_en_i) state_q <= StReadW;
        end
        StReadW: begin
          row_q   <= row_q + AW'(1);
          word_q  <= word_q + 5'd1;
          state_q <= (word_q + 5'd1 == stride_q[map_q]) ? StResp : StRead;
          if (kind_q[map_q] == KindSlots && word_q + 5'd1 == stride_q[map_q]) begin
            // the last row holds the presence byte: a lookup hits on it; a PROG_ARRAY delete clears it or is -ENOENT
            hit_q <= slot_present && op_q != OpDelete;
            if (op_q == OpDelete) begin
              if (slot_present) begin
                row_q   <= row_q;
                word_q  <= word_q;
                pres_q  <= 1'b1;
                state_q <= StWrite;
              end else begin
                ret_q <= Enoent;
              end
            end
          end
        end
        StLru: if (lph_q) begin
          if (l_evict) begin
            ev_q    <= 1'b1;
            state_q <= StEvict;
          end
          if (lp_start) state_q <= StLProbe;
          if (l_done) begin
            ret_q   <= l_ret;
            state_q <= StResp;
          end
          if (l_write) begin
            slot_q  <= l_slot;
            row_q   <= vbase_q[map_q] + AW'(l_slot * SW'(stride_q[map_q]));
            state_q <= StWrite;
          end
        end
        default: begin
          state_q <= StIdle;
        end
      endcase
    end
  end

  // Registers without reset: the latched key and value, the CAM's keys and the free stacks.
  always_ff @(posedge clk_i) begin
    if (state_q == StIdle && !cfg_done_i && (req_valid_i || host_valid_i)) begin
      key_q   <= key_in;
      value_q <= host_pick ? host_value_i : req_value_i;
    end
    // an eviction probes with the evicted key, then the update's key comes back
    if (ev_start) ukey_q <= key_q;
    if (state_q == StEvict) key_q <= hk_rdata[8 +: KB];
    if (ev_end) key_q <= ukey_q;
    if (state_q == StReadW) begin
      for (integer w = 0; w < VALUE_BYTES / 8; w = w + 1) begin
        if (word_q == 5'(w)) value_q[64*w +: 64] <= b_rdata;
      end
    end
    if (exec_go && kind_q[map_q] == KindSlots && x_next == 2'd1 && !x_pres) begin
      // a stored entry: its presence byte set; a DEVMAP's program fd reads back as the program id, 0 without one
      for (integer b = 0; b < VALUE_BYTES; b = b + 1) begin
        if (16'(b) == vsize_q[map_q]) value_q[8*b +: 8] <= 8'd1;
      end
      if (!progarr_q[map_q] && vsize_q[map_q] == 16'd8 && value_q[63]) value_q[63:32] <= 32'd0;
    end
    if (exec_go && x_set && !is_bkt) begin
      ent_key_q[ebase_q[map_q][EW-1:0] + x_slot[EW-1:0]]  <= key_q;
      ent_mask_q[ebase_q[map_q][EW-1:0] + x_slot[EW-1:0]] <= (kind_q[map_q] == KindLpm) ? key_plen_mask : '1;
      ent_plen_q[ebase_q[map_q][EW-1:0] + x_slot[EW-1:0]] <= (kind_q[map_q] == KindLpm) ? key_plen[PW-1:0] : '0;
    end
    if (exec_go && x_push && !is_bkt) begin
      stack_q[ebase_q[map_q][EW-1:0] + sp_q[map_q][EW-1:0] - EW'(x_pop)] <= x_push_slot;
    end
  end

  assign req_ready_o  = state_q == StIdle && !cfg_done_i;
  assign host_ready_o = state_q == StIdle && !cfg_done_i && !req_valid_i;
  assign cfg_error_o  = cfg_error_q;

  // ---------------------------------------------------------------------------------------------------------------
  // Responses.

  always_comb begin : responses
    logic [VB-1:0] value;
    logic [KB-1:0] key;
    value = value_q;
    for (integer b = 0; b < VALUE_BYTES; b = b + 1) begin
      if (b >= vsize_q[map_q]) value[8*b +: 8] = 8'd0;
    end
    key = ent_key_q[ebase_q[map_q][EW-1:0] + slot_q[EW-1:0]];
    if (is_bkt) key = hk_rdata[8 +: KB];
    if (kind_q[map_q] == KindArray || kind_q[map_q] == KindSlots) key = {{(KB - SW) {1'b0}}, slot_q};
    if (op_q == OpLookup) key = key_q;
    rsp_valid_o      = state_q == StResp && !host_q;
    host_rsp_valid_o = state_q == StResp && host_q;
    rsp_ret_o        = 64'd0 - ret_q;
    host_rsp_ret_o   = 64'd0 - ret_q;
    rsp_hit_o        = hit_q;
    host_rsp_hit_o   = hit_q;
    rsp_slot_o       = hit_q ? {{(28 - SW) {1'b0}}, slot_q} : 28'd0;
    rsp_value_o      = (hit_q && (op_q == OpRead || (op_q == OpLookup && outer_hash))) ? value[63:0] : 64'd0;
    host_rsp_key_o   = key;
    host_rsp_value_o = hit_q ? value : '0;
  end

endmodule
