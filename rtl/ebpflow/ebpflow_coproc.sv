`default_nettype none
// eBPFlow coprocessor: the maps every engine of the NIC shares, behind one round-robin arbiter.
//
// Requesters. Engine e (index port * G + engine) has a helper port (hlp_*[e]: ebpflow_engine's, plus the key and
// value bytes the engine gathered from its data memory at r2 and r3) and a map-value port (mv_*[e]: a load, store or
// atomic of the map-value window). The host port (host_*) is requester ENGINES, after the last engine. The
// coprocessor serves one request at a time: when it is free, the arbiter grants, in the same cycle, the requester
// that comes first after the last granted one; the granted request holds the coprocessor until its ack, and the next
// grant is in the cycle after the ack. Service time from the grant cycle (1) to the ack cycle: map lookup 4, update
// 4 + VAL_BYTES / 8 (8 at the default 32 bytes: one value word written a cycle), delete 8, any other helper 2,
// map-value load or store 2, atomic 3 (docs/ebpflow.md, "Coprocessor").
//
// Answers (hlp_r0_o, hlp_end_o, hlp_fault_o, rdr_*, mv_rdata_o, mv_fault_o, host_*) are valid in the ack cycle of
// their requester.
//
// Map table (mt_*): written at load time, map 0 first, in index order, after reset or mt_clear_i; each write gives a
// map its share of the exact-match store, the LPM store and the value memory (mt_err_o when it does not fit or the
// type is not one the coprocessor has). An ARRAY's values may be longer than VAL_BYTES (a table the program reads
// through the map-value window, such as a DPI automaton in .rodata): the host writes them word by word, and a
// program's bpf_map_update_elem on such a map faults, since the engine gathers at most VAL_BYTES at r3.
module ebpflow_coproc #(
  parameter integer ENGINES      = 16,
  parameter integer MAPS         = 8,     // map-table entries (at most 16: the window has 4 map bits)
  parameter integer MW           = 3,     // $clog2(MAPS)
  parameter integer KEY_BYTES    = 16,    // longest key (a multiple of 8, at most 64)
  parameter integer VAL_BYTES    = 32,    // longest value an update carries (a multiple of 8, at most 128)
  parameter integer CAM_ENTRIES  = 64,    // exact-match entries shared by the LRU_HASH maps (flip-flops)
  parameter integer HB_BUCKETS   = 64,    // HASH maps' buckets together (ebpflow_hbkt, block RAM)
  parameter integer HB_ENTRIES   = 128,   // HASH maps' max_entries together (their free-index stacks)
  parameter integer HB_WAYS      = 4,     // slots a bucket
  parameter integer HB_STASH     = 4,     // stash entries shared by the HASH maps
  parameter integer TCAM_ENTRIES = 32,    // LPM entries shared by the LPM_TRIE maps
  parameter integer VM_WORDS     = 4096   // value memory: 64-bit words shared by every map's values
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  // map table
  input  logic                          mt_clear_i,
  input  logic                          mt_we_i,
  input  logic [MW-1:0]                 mt_idx_i,
  input  logic [7:0]                    mt_type_i,         // BPF_MAP_TYPE_*
  input  logic [7:0]                    mt_key_size_i,
  input  logic [20:0]                   mt_value_size_i,   // at most the 1 MiB window of a map
  input  logic [31:0]                   mt_max_entries_i,
  output logic                          mt_err_o,          // the last map-table write was refused
  output logic                          mt_busy_o,         // zeroing the value memory (after reset, mt_clear_i)
  // helper ports, engine e at [e]
  input  logic [ENGINES-1:0]            hlp_req_i,
  input  logic [ENGINES-1:0]            hlp_kfunc_i,
  input  logic [ENGINES*32-1:0]         hlp_id_i,
  input  logic [ENGINES*320-1:0]        hlp_args_i,        // r1..r5, r1 in the low 64 bits
  input  logic [ENGINES*KEY_BYTES*8-1:0] hlp_key_i,        // the bytes at r2 (byte 0 in the low bits)
  input  logic [ENGINES*VAL_BYTES*8-1:0] hlp_val_i,        // the bytes at r3
  output logic [ENGINES-1:0]            hlp_ack_o,
  output logic [ENGINES*64-1:0]         hlp_r0_o,
  output logic [ENGINES-1:0]            hlp_end_o,
  output logic [ENGINES-1:0]            hlp_fault_o,
  output logic [ENGINES-1:0]            rdr_valid_o,       // with the ack of bpf_redirect(_map): the packet's target
  output logic [ENGINES*32-1:0]         rdr_port_o,        // ... ifindex (the devmap entry's value)
  // map-value ports, engine e at [e]
  input  logic [ENGINES-1:0]            mv_req_i,
  input  logic [ENGINES-1:0]            mv_we_i,
  input  logic [ENGINES*3-1:0]          mv_atomic_i,       // 0 none, 1 add, 2 or, 3 and, 4 xor, 5 xchg, 6 cmpxchg
  input  logic [ENGINES*24-1:0]         mv_addr_i,         // the address minus MAPV_BASE: map in [23:20]
  input  logic [ENGINES*2-1:0]          mv_size_i,         // log2 bytes
  input  logic [ENGINES*64-1:0]         mv_wdata_i,        // store data / atomic operand, low bytes
  input  logic [ENGINES*64-1:0]         mv_cmp_i,          // cmpxchg's r0
  output logic [ENGINES-1:0]            mv_ack_o,
  output logic [ENGINES*64-1:0]         mv_rdata_o,        // a load's bytes or an atomic's old value, zero-extended
  output logic [ENGINES-1:0]            mv_fault_o,
  // host port: helper ids 1/2/3 as the engines (r1 map, r4 flags), 256 read word, 257 write word, 258 entry
  input  logic                          host_req_i,
  input  logic [31:0]                   host_id_i,
  input  logic [319:0]                  host_args_i,
  input  logic [KEY_BYTES*8-1:0]        host_key_i,
  input  logic [VAL_BYTES*8-1:0]        host_val_i,
  output logic                          host_ack_o,
  output logic [63:0]                   host_r0_o,
  output logic [KEY_BYTES*8-1:0]        host_key_o
);

  // ---------------------------------------------------------------------------------------------------------------
  // Sizes and codes
  // ---------------------------------------------------------------------------------------------------------------
  localparam integer R    = ENGINES + 1;                    // requesters: the engines, then the host
  localparam integer RIW  = $clog2(R);
  localparam integer EIW  = (ENGINES > 1) ? $clog2(ENGINES) : 1;
  localparam integer KW   = KEY_BYTES * 8;
  localparam integer VW   = VAL_BYTES / 8;                  // value words an update writes at most
  localparam integer TDW  = (KEY_BYTES - 4) * 8;            // LPM data bits
  localparam integer CIW  = (CAM_ENTRIES > 1) ? $clog2(CAM_ENTRIES) : 1;
  localparam integer TIW  = (TCAM_ENTRIES > 1) ? $clog2(TCAM_ENTRIES) : 1;
  localparam integer VAW  = $clog2(VM_WORDS);
  localparam integer HBW  = (HB_BUCKETS > 1) ? $clog2(HB_BUCKETS) : 1;
  localparam integer HIW  = (HB_ENTRIES > 1) ? $clog2(HB_ENTRIES) : 1;
  localparam integer HXW  = 15;                             // a HASH entry's value index (KW + HXW + 1 bytes)
  localparam integer HDW  = (HB_WAYS > HB_STASH) ? $clog2(HB_WAYS) + 1 : $clog2(HB_STASH) + 1;
  localparam integer SWEEP = (HB_BUCKETS > VM_WORDS) ? HB_BUCKETS : VM_WORDS;   // the sweep's words
  localparam integer CLW  = $clog2(SWEEP);

  localparam logic [7:0] THash  = 8'd1;
  localparam logic [7:0] TArray = 8'd2;
  localparam logic [7:0] TLru   = 8'd9;
  localparam logic [7:0] TLpm   = 8'd11;
  localparam logic [7:0] TDev   = 8'd14;

  localparam logic [7:0] EPerm  = 8'd1;    // not an errno the maps return; unused
  localparam logic [7:0] ENoent = 8'd2;
  localparam logic [7:0] ENomem = 8'd12;
  localparam logic [7:0] E2big  = 8'd7;
  localparam logic [7:0] EExist = 8'd17;
  localparam logic [7:0] EInval = 8'd22;
  localparam logic [7:0] ENospc = 8'd28;

  localparam logic [63:0] MapvBase = 64'h0000_0000_0100_0000;

  // What a granted request is.
  localparam logic [2:0] OLookup = 3'd0;
  localparam logic [2:0] OUpdate = 3'd1;
  localparam logic [2:0] ODelete = 3'd2;
  localparam logic [2:0] OOther  = 3'd3;   // redirect, host word read/write, host entry dump, unknown helper
  localparam logic [2:0] OMv     = 3'd4;   // map-value load or store
  localparam logic [2:0] OAtom   = 3'd5;   // map-value atomic

  // ---------------------------------------------------------------------------------------------------------------
  // Map table
  // ---------------------------------------------------------------------------------------------------------------
  logic [MAPS-1:0]  mt_valid_q;
  logic [7:0]       mt_type_q  [0:MAPS-1];
  logic [7:0]       mt_ksz_q   [0:MAPS-1];
  logic [20:0]      mt_vsz_q   [0:MAPS-1];
  logic [31:0]      mt_max_q   [0:MAPS-1];
  logic [17:0]      mt_sw_q    [0:MAPS-1];   // words per entry: round_up(value_size, 8) / 8
  logic [VAW:0]     mt_vbase_q [0:MAPS-1];   // first value word
  logic [15:0]      mt_sbase_q [0:MAPS-1];   // first CAM or TCAM entry
  logic [20:0]      mt_lim_q   [0:MAPS-1];   // bytes of the map's part of the window
  logic [16:0]      mt_cnt_q   [0:MAPS-1];   // entries in use (HASH, LRU_HASH, LPM_TRIE)
  logic [HBW:0]     mt_bbase_q [0:MAPS-1];   // HASH: first bucket
  logic [15:0]      mt_bmask_q [0:MAPS-1];   // HASH: buckets - 1 (a power of two)
  logic [HIW:0]     mt_ibase_q [0:MAPS-1];   // HASH: first entry of its free-index stack
  logic [15:0]      mt_fresh_q [0:MAPS-1];   // HASH: value indices 0 .. fresh - 1 were ever used
  logic [15:0]      mt_sp_q    [0:MAPS-1];   // HASH: freed value indices on its stack
  logic [HBW:0]     next_b_q;
  logic [HIW:0]     next_i_q;
  logic [VAW:0]     next_v_q;
  logic [15:0]      next_c_q;
  logic [15:0]      next_t_q;
  logic             mt_err_q;
  logic [CLW:0]     clr_q;                   // the sweep's next word (value memory, buckets); SWEEP when done

  // The new map's share, and whether it fits.
  logic [17:0]  nw_sw;
  logic [47:0]  nw_words;
  logic         nw_cam;
  logic         nw_tcam;
  logic         nw_hash;
  logic [32:0]  nw_nb;      // HASH: buckets, the first power of two with 2 * max_entries slots
  logic         nw_ok;
  always_comb begin
    nw_sw    = 18'((32'(mt_value_size_i) + 32'd7) >> 3);
    nw_words = 48'(mt_max_entries_i) * 48'(nw_sw);
    nw_cam   = (mt_type_i == TLru);
    nw_tcam  = (mt_type_i == TLpm);
    nw_hash  = (mt_type_i == THash);
    nw_nb    = 33'd1;
    for (int k = 0; k < 32; k++) begin
      if (64'(nw_nb) * 64'(HB_WAYS) < 64'(mt_max_entries_i) * 64'd2) nw_nb = nw_nb << 1;
    end
    nw_ok    = (nw_cam || nw_tcam || nw_hash || mt_type_i == TArray || mt_type_i == TDev)
               && (!nw_hash || (33'(next_b_q) + nw_nb <= 33'(HB_BUCKETS) && nw_nb <= 33'h1_0000
                                && 33'(next_i_q) + 33'(mt_max_entries_i) <= 33'(HB_ENTRIES)
                                && mt_max_entries_i < 32'(1 << HXW)))
               && mt_key_size_i != 8'd0 && 32'(mt_key_size_i) <= 32'(KEY_BYTES)
               && mt_value_size_i != 21'd0
               && (32'(mt_value_size_i) <= 32'(VAL_BYTES) || mt_type_i == TArray)
               && mt_max_entries_i != 32'd0
               && (nw_words << 3) <= 48'h10_0000
               && 48'(next_v_q) + nw_words <= 48'(VM_WORDS)
               && (!nw_cam || 33'(next_c_q) + 33'(mt_max_entries_i) <= 33'(CAM_ENTRIES))
               && (!nw_tcam || (33'(next_t_q) + 33'(mt_max_entries_i) <= 33'(TCAM_ENTRIES)
                                && mt_key_size_i > 8'd4))
               && ((mt_type_i != TArray && mt_type_i != TDev) || mt_key_size_i == 8'd4);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      mt_valid_q <= '0;
      next_v_q   <= '0;
      next_c_q   <= '0;
      next_t_q   <= '0;
      next_b_q   <= '0;
      next_i_q   <= '0;
      mt_err_q   <= 1'b0;
    end else if (mt_clear_i) begin
      mt_valid_q <= '0;
      next_b_q   <= '0;
      next_i_q   <= '0;
      next_v_q   <= '0;
      next_c_q   <= '0;
      next_t_q   <= '0;
      mt_err_q   <= 1'b0;
    end else if (mt_we_i) begin
      mt_err_q <= !nw_ok;
      if (nw_ok) begin
        mt_valid_q[mt_idx_i] <= 1'b1;
        mt_type_q[mt_idx_i]  <= mt_type_i;
        mt_ksz_q[mt_idx_i]   <= mt_key_size_i;
        mt_vsz_q[mt_idx_i]   <= mt_value_size_i;
        mt_max_q[mt_idx_i]   <= mt_max_entries_i;
        mt_sw_q[mt_idx_i]    <= nw_sw;
        mt_vbase_q[mt_idx_i] <= next_v_q;
        mt_sbase_q[mt_idx_i] <= nw_tcam ? next_t_q : next_c_q;
        mt_lim_q[mt_idx_i]   <= 21'(nw_words << 3);
        mt_bbase_q[mt_idx_i] <= next_b_q;
        mt_bmask_q[mt_idx_i] <= 16'(nw_nb - 33'd1);
        mt_ibase_q[mt_idx_i] <= next_i_q;
        if (nw_hash) next_b_q <= next_b_q + (HBW+1)'(nw_nb);
        if (nw_hash) next_i_q <= next_i_q + (HIW+1)'(mt_max_entries_i);
        next_v_q             <= next_v_q + (VAW+1)'(nw_words);
        if (nw_cam) next_c_q <= next_c_q + 16'(mt_max_entries_i);
        if (nw_tcam) next_t_q <= next_t_q + 16'(mt_max_entries_i);
      end
    end
  end

  assign mt_err_o  = mt_err_q;
  assign mt_busy_o = (clr_q != (CLW+1)'(SWEEP));

  // ---------------------------------------------------------------------------------------------------------------
  // Arbiter and the granted request
  // ---------------------------------------------------------------------------------------------------------------
  logic             busy_q;
  logic [4:0]       cnt_q;       // the service cycle (grant = 1) while busy
  logic [4:0]       lat_q;       // the ack cycle
  logic [2:0]       op_q;
  logic [RIW-1:0]   who_q;
  logic             host_q;
  logic             kfunc_q;
  logic [31:0]      id_q;
  logic [319:0]     args_q;
  logic [KW-1:0]    key_q;
  logic [VAL_BYTES*8-1:0] val_q;
  logic             mvf_q;       // the map-value access faults
  logic             mvwe_q;
  logic [2:0]       mvat_q;
  logic [1:0]       mvsize_q;
  logic [2:0]       mvoff_q;
  logic [VAW-1:0]   mvword_q;
  logic [63:0]      mvw_q;
  logic [63:0]      mvcmp_q;

  logic [R-1:0]     req;
  logic [R-1:0]     gnt;
  logic [RIW-1:0]   gidx;
  logic             gvalid;
  logic             free;
  assign req  = {host_req_i, hlp_req_i | mv_req_i};
  assign free = !busy_q && !mt_busy_o;

  rr_arbiter #(
    .N  (R),
    .IW (RIW)
  ) u_arb (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .en_i        (free),
    .req_i       (req),
    .gnt_o       (gnt),
    .gnt_idx_o   (gidx),
    .gnt_valid_o (gvalid)
  );

  // The granted requester's fields (the host's, or engine ge's).
  logic                   g_host;
  logic [EIW-1:0]         ge;
  logic                   g_hlp;
  logic                   g_kfunc;
  logic [31:0]            g_id;
  logic [319:0]           g_args;
  logic [KW-1:0]          g_key;
  logic [VAL_BYTES*8-1:0] g_val;
  logic                   g_we;
  logic [2:0]             g_at;
  logic [23:0]            g_addr;
  logic [1:0]             g_size;
  logic [63:0]            g_wdata;
  logic [63:0]            g_cmp;
  always_comb begin
    g_host  = (gidx == RIW'(ENGINES));
    ge      = g_host ? '0 : EIW'(gidx);
    g_hlp   = g_host || hlp_req_i[ge];
    g_kfunc = !g_host && hlp_kfunc_i[ge];
    g_id    = g_host ? host_id_i : hlp_id_i[ge*32 +: 32];
    g_args  = g_host ? host_args_i : hlp_args_i[ge*320 +: 320];
    g_key   = g_host ? host_key_i : hlp_key_i[ge*KW +: KW];
    g_val   = g_host ? host_val_i : hlp_val_i[ge*VAL_BYTES*8 +: VAL_BYTES*8];
    g_we    = mv_we_i[ge];
    g_at    = mv_atomic_i[ge*3 +: 3];
    g_addr  = g_host ? host_args_i[23:0] : mv_addr_i[ge*24 +: 24];
    g_size  = g_host ? 2'd3 : mv_size_i[ge*2 +: 2];
    g_wdata = g_host ? host_args_i[64 +: 64] : mv_wdata_i[ge*64 +: 64];
    g_cmp   = mv_cmp_i[ge*64 +: 64];
  end

  // What the granted request is and how long it takes.
  logic [2:0] g_op;
  logic [4:0] g_lat;
  always_comb begin
    if (!g_hlp) begin
      g_op  = (g_at != 3'd0) ? OAtom : OMv;
      g_lat = (g_at != 3'd0) ? 5'd3 : 5'd2;
    end else if (!g_kfunc && g_id == 32'd1) begin
      g_op  = OLookup;
      g_lat = 5'd4;
    end else if (!g_kfunc && g_id == 32'd2) begin
      g_op  = OUpdate;
      g_lat = 5'(4 + VW);
    end else if (!g_kfunc && g_id == 32'd3) begin
      g_op  = ODelete;
      g_lat = 5'd8;
    end else begin
      g_op  = OOther;
      g_lat = 5'd2;
    end
  end

  // A map-value address (the window offset a): its map, its word, whether it lies inside the map's entries and in
  // one word.
  logic [3:0]     a_map;
  logic [MW-1:0]  a_m;
  logic           a_ok;
  logic [VAW-1:0] a_word;
  logic [3:0]     a_bytes;
  always_comb begin
    a_map   = g_addr[23:20];
    a_m     = MW'(a_map);
    a_bytes = 4'd1 << g_size;
    a_ok    = 32'(a_map) < 32'(MAPS) && mt_valid_q[a_m]
              && 21'(g_addr[19:0]) + 21'(a_bytes) <= mt_lim_q[a_m]
              && 4'(g_addr[2:0]) + a_bytes <= 4'd8;
    a_word  = VAW'(mt_vbase_q[a_m] + (VAW+1)'(g_addr[19:3]));
  end

  // ---------------------------------------------------------------------------------------------------------------
  // The map of a helper call (r1), its key masked to the key size, and the stores searched with it (service cycle 2)
  // ---------------------------------------------------------------------------------------------------------------
  logic [MW-1:0]  m;
  logic           m_ok;
  logic [7:0]     m_type;
  logic [31:0]    m_max;
  logic [15:0]    m_sbase;
  logic [KW-1:0]  keym;
  logic [31:0]    m_maxplen;
  logic [31:0]    q_plen;
  logic [63:0]    flags;
  logic           long_val;   // the map's values are longer than an update carries (an ARRAY's only)
  always_comb begin
    m         = MW'(args_q[63:0]);
    m_ok      = args_q[63:0] < 64'(MAPS) && mt_valid_q[m];
    m_type    = mt_type_q[m];
    m_max     = mt_max_q[m];
    m_sbase   = mt_sbase_q[m];
    for (int b = 0; b < KEY_BYTES; b++) begin
      keym[8*b +: 8] = (32'(b) < 32'(mt_ksz_q[m])) ? key_q[8*b +: 8] : 8'd0;
    end
    m_maxplen = (32'(mt_ksz_q[m]) - 32'd4) << 3;
    q_plen    = keym[31:0];
    flags     = args_q[3*64 +: 64];   // r4
    long_val  = 32'(mt_sw_q[m]) > 32'(VW);
  end

  logic [CAM_ENTRIES-1:0]  cam_sel;
  logic [TCAM_ENTRIES-1:0] tcam_sel;
  always_comb begin
    for (int i = 0; i < CAM_ENTRIES; i++) begin
      cam_sel[i] = m_ok && m_type == TLru
                   && 32'(i) >= 32'(m_sbase) && 33'(i) < 33'(m_sbase) + 33'(m_max);
    end
    for (int i = 0; i < TCAM_ENTRIES; i++) begin
      tcam_sel[i] = m_ok && m_type == TLpm && 32'(i) >= 32'(m_sbase) && 33'(i) < 33'(m_sbase) + 33'(m_max);
    end
  end

  // Store writes (service cycle 3, or the zeroing sweep for the CAM's valid bits).
  logic            cam_we;
  logic [CIW-1:0]  cam_widx;
  logic            cam_wvalid;
  logic            tcam_we;
  logic [TIW-1:0]  tcam_widx;
  logic            tcam_wvalid;
  logic [CIW-1:0]  cam_ridx;
  logic [TIW-1:0]  tcam_ridx;

  logic            cam_hit;
  logic [CIW-1:0]  cam_hit_idx;
  logic            cam_free;
  logic [CIW-1:0]  cam_free_idx;
  logic [KW-1:0]   cam_entry;
  logic            cam_entry_valid;
  logic [CAM_ENTRIES-1:0] cam_valid;

  cam #(
    .N  (CAM_ENTRIES),
    .W  (KW),
    .IW (CIW)
  ) u_cam (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .sel_i       (cam_sel),
    .key_i       (keym),
    .hit_o       (cam_hit),
    .hit_idx_o   (cam_hit_idx),
    .free_o      (cam_free),
    .free_idx_o  (cam_free_idx),
    .we_i        (cam_we),
    .wr_idx_i    (cam_widx),
    .wr_key_i    (keym),
    .wr_valid_i  (cam_wvalid),
    .rd_idx_i    (cam_ridx),
    .entry_o     (cam_entry),
    .valid_o     (cam_entry_valid),
    .valid_vec_o (cam_valid)
  );

  // HASH maps: hashed buckets in block RAM (ebpflow_hbkt). Both buckets of the granted request's key are read at the
  // grant (its key masked to the key size of the map in its r1), searched in service cycle 2.
  logic [MW-1:0]   g_hm;
  logic [KW-1:0]   g_keym;
  logic [31:0]     g_hash;
  logic [HBW:0]    hb_b1;
  logic [HBW:0]    hb_b2;
  logic            hb_hit;
  logic [HXW-1:0]  hb_hit_idx;
  logic            hb_free;
  logic            hb_we;
  logic            hb_clr;
  logic            hb_dump_stash;
  logic [HDW-1:0]  hb_dump_way;
  logic            hb_dump_valid;
  logic [KW-1:0]   hb_dump_key;
  logic [HXW-1:0]  hb_dump_idx;
  logic [31:0]     hb_dump_pos;    // a dump's position among the map's slots (bucket-major), then its stash's
  logic [31:0]     hb_slots;       // the map's slots: buckets x HB_WAYS
  logic [31:0]     hb_npos;        // ... and the stash's entries: the positions of its dumps
  always_comb begin
    g_hm = MW'(g_args[63:0]);
    for (int b = 0; b < KEY_BYTES; b++) begin
      g_keym[8*b +: 8] = (32'(b) < 32'(mt_ksz_q[g_hm])) ? g_key[8*b +: 8] : 8'd0;
    end
  end
  always_comb begin
    hb_b1 = mt_bbase_q[g_hm] + (HBW+1)'(g_hash[15:0] & mt_bmask_q[g_hm]);
    hb_b2 = mt_bbase_q[g_hm] + (HBW+1)'(g_hash[31:16] & mt_bmask_q[g_hm]);
    if (g_host && g_id == 32'd258) begin
      hb_b1 = mt_bbase_q[g_hm] + (HBW+1)'(g_args[64 +: 32] / 32'(HB_WAYS));
    end
  end

  hash32 #(
    .BYTES (KEY_BYTES)
  ) u_hash (
    .data_i (g_keym),
    .hash_o (g_hash)
  );

  assign hb_slots      = (32'(mt_bmask_q[m]) + 32'd1) * 32'(HB_WAYS);
  assign hb_npos       = hb_slots + 32'(HB_STASH);
  assign hb_dump_pos   = args_q[64 +: 32];
  assign hb_dump_stash = hb_dump_pos >= hb_slots;
  assign hb_dump_way   = hb_dump_stash ? HDW'(hb_dump_pos - hb_slots) : HDW'(hb_dump_pos % 32'(HB_WAYS));
  assign hb_clr        = mt_busy_o && 32'(clr_q) < 32'(HB_BUCKETS);

  // Each HASH map's free value indices: a stack in block RAM (fs_*), its top read at the grant; an insert takes the
  // top (or the next never used index), a delete pushes its entry's index.
  logic            fs_we;
  logic [HIW-1:0]  fs_waddr;
  logic [HIW-1:0]  fs_raddr;
  logic [15:0]     fs_rdata;
  logic [15:0]     hb_new_idx;     // cycle 2: the value index an insert takes
  assign fs_raddr   = HIW'(mt_ibase_q[g_hm] + (HIW+1)'(mt_sp_q[g_hm] - 16'd1));
  assign fs_waddr   = HIW'(mt_ibase_q[m] + (HIW+1)'(mt_sp_q[m]));
  assign hb_new_idx = (mt_sp_q[m] != 16'd0) ? fs_rdata : mt_fresh_q[m];

  logic            t_lpm_hit;
  logic [TIW-1:0]  t_lpm_idx;
  logic            t_exact_hit;
  logic [TIW-1:0]  t_exact_idx;
  logic            t_free;
  logic [TIW-1:0]  t_free_idx;
  logic [TDW-1:0]  t_entry;
  logic [7:0]      t_entry_len;
  logic            t_entry_valid;
  logic [7:0]      t_len;
  assign t_len = (q_plen > m_maxplen) ? 8'(m_maxplen) : 8'(q_plen);

  lpm_tcam #(
    .N  (TCAM_ENTRIES),
    .W  (TDW),
    .LW (8),
    .IW (TIW)
  ) u_tcam (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .sel_i       (tcam_sel),
    .data_i      (keym[32 +: TDW]),
    .len_i       (t_len),
    .lpm_hit_o   (t_lpm_hit),
    .lpm_idx_o   (t_lpm_idx),
    .exact_hit_o (t_exact_hit),
    .exact_idx_o (t_exact_idx),
    .free_o      (t_free),
    .free_idx_o  (t_free_idx),
    .we_i        (tcam_we),
    .wr_idx_i    (tcam_widx),
    .wr_data_i   (keym[32 +: TDW]),
    .wr_len_i    (t_len),
    .wr_valid_i  (tcam_wvalid),
    .rd_idx_i    (tcam_ridx),
    .entry_o     (t_entry),
    .entry_len_o (t_entry_len),
    .valid_o     (t_entry_valid)
  );

  // LRU: a stamp per CAM entry, the time of its last lookup or update; the victim is the oldest of the map's.
  logic [31:0]     stamp_q [0:CAM_ENTRIES-1];
  logic [31:0]     tick_q;
  logic [CIW-1:0]  victim;
  always_comb begin
    logic        seen;
    logic [31:0] oldest;
    seen   = 1'b0;
    oldest = '0;
    victim = '0;
    for (int i = 0; i < CAM_ENTRIES; i++) begin
      if (cam_sel[i] && cam_valid[i] && (!seen || stamp_q[i] < oldest)) begin
        seen   = 1'b1;
        oldest = stamp_q[i];
        victim = CIW'(i);
      end
    end
  end

  // Service cycle 2's decision for lookup, update and delete.
  logic        d_hit;      // the key is there (lookup: found)
  logic [31:0] d_slot;     // the entry's index in the map
  logic [15:0] d_abs;      // the CAM/TCAM entry to write (update) or clear (delete)
  logic        d_ins;      // the update adds an entry
  logic        d_evict;    // ... in place of the LRU victim
  logic [7:0]  d_err;      // errno, 0 for none
  always_comb begin
    d_hit   = 1'b0;
    d_slot  = '0;
    d_abs   = '0;
    d_ins   = 1'b0;
    d_evict = 1'b0;
    d_err   = 8'd0;
    if (m_type == THash) begin
      d_hit  = hb_hit;
      d_slot = hb_hit ? 32'(hb_hit_idx) : 32'(hb_new_idx);
      if (op_q == OUpdate) begin
        // htab_map_update_elem's order: flags, the old element (NOEXIST, EXIST), then the count; an entry the two
        // buckets and the stash have no room for: -ENOMEM (the kernel's answer when it cannot allocate one)
        if (flags > 64'd2) d_err = EInval;
        else if (hb_hit && flags == 64'd1) d_err = EExist;
        else if (!hb_hit && flags == 64'd2) d_err = ENoent;
        else if (!hb_hit && 32'(mt_cnt_q[m]) >= m_max) d_err = E2big;
        else if (!hb_hit && !hb_free) d_err = ENomem;
        d_ins = !hb_hit;
      end else if (op_q == ODelete && !hb_hit) begin
        d_err = ENoent;
      end
    end else if (m_type == TLru) begin
      d_hit  = cam_hit;
      d_abs  = cam_hit ? 16'(cam_hit_idx) : (cam_free ? 16'(cam_free_idx) : 16'(victim));
      d_slot = 32'(d_abs) - 32'(m_sbase);
      if (op_q == OUpdate) begin
        if (flags > 64'd2) d_err = EInval;
        else if (cam_hit && flags == 64'd1) d_err = EExist;
        else if (!cam_hit && flags == 64'd2) d_err = ENoent;
        d_ins   = !cam_hit;
        d_evict = !cam_hit && !cam_free;
      end else if (op_q == ODelete && !cam_hit) begin
        d_err = ENoent;
      end
    end else if (m_type == TLpm) begin
      if (op_q == OLookup) begin
        d_hit = t_lpm_hit;
        d_abs = 16'(t_lpm_idx);
      end else begin
        d_hit = t_exact_hit;
        d_abs = t_exact_hit ? 16'(t_exact_idx) : 16'(t_free_idx);
      end
      d_slot = 32'(d_abs) - 32'(m_sbase);
      if (op_q == OUpdate) begin
        if (flags > 64'd2 || q_plen > m_maxplen) d_err = EInval;
        else if (t_exact_hit && flags == 64'd1) d_err = EExist;
        else if (!t_exact_hit && flags == 64'd2) d_err = ENoent;
        else if (!t_exact_hit && !t_free) d_err = ENospc;
        d_ins = !t_exact_hit;
      end else if (op_q == ODelete) begin
        if (q_plen > m_maxplen) d_err = EInval;
        else if (!t_exact_hit) d_err = ENoent;
      end
    end else begin  // ARRAY, DEVMAP: the key is the index
      d_hit  = keym[31:0] < m_max;
      d_slot = keym[31:0];
      if (op_q == OUpdate) begin
        // array_map_update_elem's order: unknown flags, the index, NOEXIST, then BPF_F_LOCK (no spin lock here);
        // a value longer than an update carries is refused (the host writes it word by word)
        if (long_val) d_err = EInval;
        else if ((flags & ~64'd4) > 64'd2) d_err = EInval;
        else if (!d_hit) d_err = E2big;
        else if (flags[0]) d_err = EExist;
        else if (flags[2]) d_err = EInval;
      end else if (op_q == ODelete) begin
        d_err = EInval;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Service: what each cycle of a granted request does
  // ---------------------------------------------------------------------------------------------------------------
  logic        mapop;
  logic        s2;
  logic        s3;
  logic        ack;
  assign mapop = (op_q == OLookup) || (op_q == OUpdate) || (op_q == ODelete);
  assign s2    = busy_q && cnt_q == 5'd2 && mapop;
  assign s3    = busy_q && cnt_q == 5'd3 && mapop;
  assign ack   = busy_q && cnt_q == lat_q;

  logic        hit_q;
  logic [31:0] slot_q;
  logic [15:0] abs_q;
  logic        ins_q;
  logic        evict_q;
  logic [7:0]  err_q;
  logic [63:0] r0_q;
  logic [VAW:0] wbase_q;
  logic [63:0] old_q;
  logic        cam_map;
  logic        ok3;         // cycle 3: the call changes the store
  assign cam_map = (m_type == TLru);
  assign ok3     = s3 && m_ok && err_q == 8'd0;
  assign hb_we   = ok3 && m_type == THash && ((op_q == OUpdate && ins_q) || op_q == ODelete);
  assign fs_we   = ok3 && m_type == THash && op_q == ODelete;

  ebpflow_hbkt #(
    .KW      (KW),
    .XW      (HXW),
    .WAYS    (HB_WAYS),
    .BUCKETS (HB_BUCKETS),
    .BIW     (HBW),
    .STASH   (HB_STASH),
    .DW      (HDW)
  ) u_hbkt (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .rd_i         (gvalid),
    .b1_i         (HBW'(hb_b1)),
    .b2_i         (HBW'(hb_b2)),
    .map_i        (4'(m)),
    .key_i        (keym),
    .hit_o        (hb_hit),
    .hit_idx_o    (hb_hit_idx),
    .free_o       (hb_free),
    .srch_i       (s2),
    .we_i         (hb_we),
    .ins_i        (op_q == OUpdate),
    .idx_i        (HXW'(slot_q)),
    .clr_i        (hb_clr),
    .clr_bkt_i    (HBW'(clr_q)),
    .dump_way_i   (hb_dump_way),
    .dump_stash_i (hb_dump_stash),
    .dump_valid_o (hb_dump_valid),
    .dump_key_o   (hb_dump_key),
    .dump_idx_o   (hb_dump_idx)
  );

  ram_sdp #(
    .WIDTH (16),
    .DEPTH (HB_ENTRIES),
    .AW    (HIW)
  ) u_free (
    .clk_i     (clk_i),
    .wr_en_i   (fs_we),
    .wr_addr_i (fs_waddr),
    .wr_data_i (16'(slot_q)),
    .wr_be_i   (2'b11),
    .rd_en_i   (gvalid),
    .rd_addr_i (fs_raddr),
    .rd_data_o (fs_rdata)
  );


  always_comb begin
    cam_we      = 1'b0;
    cam_widx    = CIW'(abs_q);
    cam_wvalid  = (op_q == OUpdate);
    tcam_we     = 1'b0;
    tcam_widx   = TIW'(abs_q);
    tcam_wvalid = (op_q == OUpdate);
    if (mt_busy_o) begin
      // The sweep clears the stores' valid bits along with the value memory.
      cam_we      = 32'(clr_q) < 32'(CAM_ENTRIES);
      cam_widx    = CIW'(clr_q);
      cam_wvalid  = 1'b0;
      tcam_we     = 32'(clr_q) < 32'(TCAM_ENTRIES);
      tcam_widx   = TIW'(clr_q);
      tcam_wvalid = 1'b0;
    end else if (ok3 && ((op_q == OUpdate && ins_q) || op_q == ODelete)) begin
      cam_we  = cam_map;
      tcam_we = (m_type == TLpm);
    end
  end

  // Value memory: one write port, one read port (registered read).
  logic                  vm_we;
  logic [VAW-1:0]        vm_waddr;
  logic [63:0]           vm_wdata;
  logic [7:0]            vm_be;
  logic                  vm_re;
  logic [VAW-1:0]        vm_raddr;
  logic [63:0]           vm_rdata;

  // A map-value word's bytes at offset off of size size, zero-extended; and its inverse for stores.
  function automatic [63:0] extract(input logic [63:0] w, input logic [2:0] off, input logic [1:0] size);
    logic [63:0] s;
    s = w >> {off, 3'b000};
    case (size)
      2'd0:    extract = {56'd0, s[7:0]};
      2'd1:    extract = {48'd0, s[15:0]};
      2'd2:    extract = {32'd0, s[31:0]};
      default: extract = s;
    endcase
  endfunction

  function automatic [7:0] size_be(input logic [2:0] off, input logic [1:0] size);
    size_be = 8'((9'(1) << (4'd1 << size)) - 9'd1) << off;
  endfunction

  // The atomic's new value from the old one.
  logic [63:0] at_old;
  logic [63:0] at_new;
  logic        at_write;
  logic [63:0] at_cmp;
  always_comb begin
    at_old = extract(vm_rdata, mvoff_q, mvsize_q);
    at_cmp = (mvsize_q == 2'd2) ? {32'd0, mvcmp_q[31:0]} : mvcmp_q;
    case (mvat_q)
      3'd1:    at_new = at_old + mvw_q;
      3'd2:    at_new = at_old | mvw_q;
      3'd3:    at_new = at_old & mvw_q;
      3'd4:    at_new = at_old ^ mvw_q;
      default: at_new = mvw_q;   // xchg, cmpxchg
    endcase
    at_write = !mvf_q && (mvat_q != 3'd6 || at_old == at_cmp);
  end

  // An update's value words: word w in service cycle 4 + w.
  logic [4:0]  uw;
  logic [20:0] ubytes;
  assign uw     = cnt_q - 5'd4;
  assign ubytes = mt_vsz_q[m] - 21'({uw, 3'b000});

  // The redirect map's entry (bpf_redirect_map: r1 the map, r2 the key) and the host's word read and write.
  logic [MW-1:0]  g_m;
  logic [VAW-1:0] g_dev_word;
  assign g_m        = MW'(g_args[63:0]);
  assign g_dev_word = VAW'(mt_vbase_q[g_m] + (VAW+1)'(g_args[64 +: 32]));

  always_comb begin
    vm_we    = 1'b0;
    vm_waddr = a_word;
    vm_wdata = g_wdata << {g_addr[2:0], 3'b000};
    vm_be    = size_be(g_addr[2:0], g_size);
    vm_re    = 1'b0;
    vm_raddr = a_word;
    if (mt_busy_o) begin
      vm_we    = 32'(clr_q) < 32'(VM_WORDS);
      vm_waddr = VAW'(clr_q);
      vm_wdata = 64'd0;
      vm_be    = 8'hff;
    end else if (gvalid) begin
      if (!g_hlp) begin
        vm_we = g_we && a_ok && g_at == 3'd0;
        vm_re = !g_we || g_at != 3'd0;
      end else if (g_host && g_id == 32'd256) begin
        vm_re = 1'b1;
      end else if (g_host && g_id == 32'd257) begin
        vm_we = a_ok;
      end else if (!g_host && g_id == 32'd51) begin
        vm_re    = 1'b1;
        vm_raddr = g_dev_word;
      end
    end else if (busy_q && op_q == OAtom && cnt_q == 5'd2) begin
      vm_we    = at_write;
      vm_waddr = mvword_q;
      vm_wdata = at_new << {mvoff_q, 3'b000};
      vm_be    = size_be(mvoff_q, mvsize_q);
    end else if (busy_q && op_q == OUpdate && cnt_q >= 5'd4 && m_ok && err_q == 8'd0
                 && 32'(uw) < 32'(VW) && 18'(uw) < mt_sw_q[m]) begin
      vm_we    = 1'b1;
      vm_waddr = VAW'(wbase_q + (VAW+1)'(uw));
      vm_wdata = val_q[64*uw +: 64];
      vm_be    = (ubytes >= 21'd8) ? 8'hff : 8'((9'(1) << ubytes[3:0]) - 9'd1);
    end
  end

  ram_sdp #(
    .WIDTH (64),
    .DEPTH (VM_WORDS),
    .AW    (VAW)
  ) u_vm (
    .clk_i     (clk_i),
    .wr_en_i   (vm_we),
    .wr_addr_i (vm_waddr),
    .wr_data_i (vm_wdata),
    .wr_be_i   (vm_be),
    .rd_en_i   (vm_re),
    .rd_addr_i (vm_raddr),
    .rd_data_o (vm_rdata)
  );

  // The answers of the two-cycle requests (in their ack cycle, service cycle 2).
  logic [63:0]    o_r0;
  logic           o_fault;
  logic           o_rdr;
  logic [KW-1:0]  o_key;
  logic [15:0]    dump_idx;
  logic           dump_in;
  logic [63:0]    dump_at;
  assign dump_idx  = m_sbase + args_q[64 +: 16];
  assign dump_at   = {31'd0, args_q[64 +: 32], 1'b1};   // in use, at value index r2
  assign dump_in   = m_ok && args_q[64 +: 32] < m_max && args_q[64+32 +: 32] == 32'd0;
  assign cam_ridx  = CIW'(dump_idx);
  assign tcam_ridx = TIW'(dump_idx);
  always_comb begin
    o_r0    = 64'd0;
    o_fault = 1'b0;
    o_rdr   = 1'b0;
    o_key   = '0;
    if (host_q && id_q == 32'd256) begin
      o_r0 = vm_rdata;
    end else if (host_q && id_q == 32'd257) begin
      o_r0 = 64'd0;
    end else if (host_q && id_q == 32'd259) begin
      // the positions map r1's dumps take: a HASH map's slots and the stash, any other map's entries
      o_r0 = !m_ok ? 64'd0 : (m_type == THash) ? {32'd0, hb_npos} : {32'd0, m_max};
    end else if (host_q && id_q == 32'd258) begin
      if (m_type == THash) begin
        o_r0  = (m_ok && hb_dump_valid && hb_dump_pos < hb_npos && args_q[64+32 +: 32] == 32'd0)
                ? {48'd0, hb_dump_idx, 1'b1} : 64'd0;
        o_key = hb_dump_key;
      end else if (cam_map) begin
        o_r0  = (dump_in && cam_entry_valid) ? dump_at : 64'd0;
        o_key = cam_entry;
      end else if (m_type == TLpm) begin
        o_r0  = (dump_in && t_entry_valid) ? dump_at : 64'd0;
        o_key = KW'({t_entry, 24'd0, t_entry_len});
      end else begin
        o_r0  = dump_in ? dump_at : 64'd0;
        o_key = KW'(args_q[64 +: 32]);
      end
    end else if (!host_q && !kfunc_q && id_q == 32'd23) begin
      // bpf_redirect(ifindex, flags)
      o_r0  = (args_q[64 +: 64] != 64'd0) ? 64'd0 : 64'd4;
      o_rdr = (args_q[64 +: 64] == 64'd0);
    end else if (!host_q && !kfunc_q && id_q == 32'd51 && m_ok && m_type == TDev) begin
      // bpf_redirect_map(map, key, flags): an entry whose ifindex is not 0 redirects there
      if ((args_q[128 +: 64] & ~64'h1b) != 64'd0) begin
        o_r0 = 64'd0;
      end else if (args_q[128 + 3]) begin
        o_fault = 1'b1;   // BPF_F_BROADCAST: not built
      end else if (args_q[64 +: 32] < m_max && args_q[96 +: 32] == 32'd0 && vm_rdata[31:0] != 32'd0) begin
        o_r0  = 64'd4;
        o_rdr = 1'b1;
      end else begin
        o_r0 = args_q[128 +: 64] & 64'd3;
      end
    end else begin
      o_fault = 1'b1;      // a helper or runtime function the coprocessor does not have
    end
  end

  // The map-value window address a lookup returns.
  logic [63:0] look_addr;
  assign look_addr = MapvBase + {40'd0, 4'(m), 20'd0} + 64'(slot_q * 32'(mt_sw_q[m]) * 32'd8);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q   <= 1'b0;
      cnt_q    <= 5'd0;
      lat_q    <= 5'd0;
      op_q     <= OOther;
      who_q    <= '0;
      host_q   <= 1'b0;
      kfunc_q  <= 1'b0;
      id_q     <= '0;
      args_q   <= '0;
      key_q    <= '0;
      val_q    <= '0;
      mvf_q    <= 1'b0;
      mvwe_q   <= 1'b0;
      mvat_q   <= 3'd0;
      mvsize_q <= 2'd0;
      mvoff_q  <= 3'd0;
      mvword_q <= '0;
      mvw_q    <= '0;
      mvcmp_q  <= '0;
      hit_q    <= 1'b0;
      slot_q   <= '0;
      abs_q    <= '0;
      ins_q    <= 1'b0;
      evict_q  <= 1'b0;
      err_q    <= 8'd0;
      r0_q     <= '0;
      wbase_q  <= '0;
      old_q    <= '0;
      tick_q   <= 32'd1;
      clr_q    <= '0;
      for (int i = 0; i < MAPS; i++) begin
        mt_cnt_q[i]   <= '0;
        mt_fresh_q[i] <= '0;
        mt_sp_q[i]    <= '0;
      end
    end else begin
      if (mt_clear_i) begin
        clr_q <= '0;
      end else if (mt_busy_o) begin
        clr_q <= clr_q + 1'b1;
      end
      if (mt_we_i && nw_ok && !mt_clear_i) begin
        mt_cnt_q[mt_idx_i]   <= '0;
        mt_fresh_q[mt_idx_i] <= '0;
        mt_sp_q[mt_idx_i]    <= '0;
      end
      if (gvalid) begin
        busy_q   <= 1'b1;
        cnt_q    <= 5'd2;
        lat_q    <= g_lat;
        op_q     <= g_op;
        who_q    <= gidx;
        host_q   <= g_host;
        kfunc_q  <= g_kfunc;
        id_q     <= g_id;
        args_q   <= g_args;
        key_q    <= g_key;
        val_q    <= g_val;
        mvf_q    <= !a_ok;
        mvwe_q   <= g_we;
        mvat_q   <= g_at;
        mvsize_q <= g_size;
        mvoff_q  <= g_addr[2:0];
        mvword_q <= a_word;
        mvw_q    <= g_wdata;
        mvcmp_q  <= g_cmp;
      end else if (busy_q) begin
        cnt_q <= cnt_q + 1'b1;
        if (ack) busy_q <= 1'b0;
      end
      if (s2) begin
        hit_q   <= d_hit;
        slot_q  <= d_slot;
        abs_q   <= d_abs;
        ins_q   <= d_ins;
        evict_q <= d_evict;
        err_q   <= d_err;
      end
      if (busy_q && op_q == OAtom && cnt_q == 5'd2) begin
        old_q <= at_old;
      end
      if (s3) begin
        wbase_q <= mt_vbase_q[m] + (VAW+1)'(slot_q * 32'(mt_sw_q[m]));
        if (op_q == OLookup) begin
          r0_q <= hit_q ? look_addr : 64'd0;
        end else begin
          r0_q <= (err_q != 8'd0) ? 64'd0 - 64'(err_q) : 64'd0;
        end
        if (ok3 && op_q == OUpdate && ins_q && !evict_q) begin
          mt_cnt_q[m] <= mt_cnt_q[m] + 1'b1;
        end
        if (ok3 && op_q == ODelete && m_type != TArray && m_type != TDev) begin
          mt_cnt_q[m] <= mt_cnt_q[m] - 1'b1;
        end
        // A HASH insert takes its value index off the map's stack (or the next never used one); a delete pushes it.
        if (ok3 && m_type == THash && op_q == OUpdate && ins_q) begin
          if (mt_sp_q[m] != 16'd0) mt_sp_q[m] <= mt_sp_q[m] - 16'd1;
          else mt_fresh_q[m] <= mt_fresh_q[m] + 16'd1;
        end
        if (fs_we) begin
          mt_sp_q[m] <= mt_sp_q[m] + 16'd1;
        end
        if (m_ok && m_type == TLru && ((op_q == OLookup && hit_q) || (op_q == OUpdate && err_q == 8'd0))) begin
          stamp_q[CIW'(abs_q)] <= tick_q;
          tick_q               <= tick_q + 1'b1;
        end
      end
    end
  end

  // Answers, in the ack cycle of the granted requester.
  logic [63:0] a_r0;
  logic        a_fault;
  always_comb begin
    if (mapop) begin
      a_r0    = r0_q;
      a_fault = !m_ok || (op_q == OUpdate && long_val);   // the engine gathered only VAL_BYTES of the value
    end else begin
      a_r0    = o_r0;
      a_fault = o_fault;
    end
  end

  logic hlp_ans;
  logic mv_ans;
  assign hlp_ans = ack && !host_q && op_q != OMv && op_q != OAtom;
  assign mv_ans  = ack && !host_q && (op_q == OMv || op_q == OAtom);

  always_comb begin
    hlp_ack_o   = '0;
    hlp_fault_o = '0;
    rdr_valid_o = '0;
    mv_ack_o    = '0;
    mv_fault_o  = '0;
    for (int e = 0; e < ENGINES; e++) begin
      if (RIW'(e) == who_q) begin
        hlp_ack_o[e]   = hlp_ans;
        hlp_fault_o[e] = hlp_ans && a_fault;
        rdr_valid_o[e] = hlp_ans && !mapop && o_rdr;
        mv_ack_o[e]    = mv_ans;
        mv_fault_o[e]  = mv_ans && mvf_q;
      end
    end
  end

  assign hlp_r0_o   = {ENGINES{a_r0}};
  assign hlp_end_o  = '0;
  assign rdr_port_o = {ENGINES{(id_q == 32'd51) ? vm_rdata[31:0] : args_q[31:0]}};
  assign mv_rdata_o = {ENGINES{(op_q == OAtom) ? old_q : extract(vm_rdata, mvoff_q, mvsize_q)}};
  assign host_ack_o = ack && host_q;
  assign host_r0_o  = a_r0;
  assign host_key_o = o_key;

  logic unused;
  assign unused = ^{gnt, hb_b1[HBW], hb_b2[HBW], mvwe_q, EPerm, hit_q, cam_free, t_free, cam_entry_valid, g_args[319:96], args_q[319:256], abs_q, dump_idx};

endmodule
