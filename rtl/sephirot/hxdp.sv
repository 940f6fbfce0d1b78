`default_nettype none
// The hXDP module: input queue, Active Packet Selector, Sephirot core, maps, helper module and routes, wired as
// docs/hxdp-module.md describes (its port table is this module's contract with the harness and the driver).
//
// - Image loading: imem_* writes one slot of the core's instruction memory; prog_* writes the entry bundle of
//   program prog_idx_i (program 0 runs per packet; the helper module's tail calls read the others); cfg_* and
//   host_* are the maps module's (passed through); fib_* is fib.sv's table port (tbl_*).
// - Packets: s_* (AXI4-Stream, 32-byte beats) in, m_* out, one result per packet on m_user_o (aps.sv's header).
// - Counters: rx_packets_o counts every packet whose last beat arrived (kept or refused); tx_packets_o the packets
//   that left with XDP_PASS, XDP_TX or XDP_REDIRECT; drop_packets_o those refused at the queue or that left with any
//   other verdict (XDP_DROP, XDP_ABORTED, a fault, or a value the kernel does not know, which it drops too).
// - busy_o: a packet is in the queue, the APS or the core. s_refused_o is high with the handshake of a refused
//   packet's last beat (too short, too long, or no room in the queue: piq.sv), so a sender knows no result comes.
// - Warp Engine records (WARP = 1; rtl/warp/warp_hxdp.sv drives them, docs/warp.md): rs_* is the record of the oldest
//   packet not yet started (aps.sv's header): a verdict, or a restore with the entry bundle rs_entry_i, r0-r9
//   (rs_regs_i, r0 in the low 64 bits, pointers as addresses already) and the stack writes, write rs_widx_o given
//   by rs_wvalid_i, rs_waddr_i (stack byte, r10 = 512), rs_wbytes_i and rs_wdata_i. With WARP = 0 they are ignored
//   and the module is unchanged.
//
// Yosys 0.23 synth_xilinx -family xcup at small parameters (LANES 2, IMEM_BUNDLES 64, STACK_FRAMES 1, MAPS 2,
// KEY_BYTES 8, VALUE_BYTES 8, ENTRIES 4, MEM_WORDS 16, DIFF_ENTRIES 4, PIQ_FRAMES 128, PIQ_DESCS 4, ROUTES 2,
// DEVICES 1, NEIGHBORS 2, RB_BYTES 256, PROGS 2; 7.3 CPU minutes): about 77k LUTs, 14k FFs, 3.0k CARRY4, 32 DSP48E2,
// 242 RAM64M8, 80 RAM32M16, 8 RAMB18, 4 RAMB36, no latches. The core's dividers and stack, the page copies and the
// difference buffer dominate (their headers give their own figures).
module hxdp #(
  parameter integer LANES        = 4,      // slots per bundle (data-bus ports), 1..8
  parameter integer IMEM_BUNDLES = 1024,   // instruction memory depth
  parameter integer STACK_FRAMES = 8,      // 512-byte stack frames (call depth)
  parameter integer PROGS        = 16,     // program table entries (tail-call targets); prog_idx_i beyond is ignored
  parameter integer MAPS         = 8,      // maps.sv's parameters
  parameter integer KEY_BYTES    = 16,
  parameter integer VALUE_BYTES  = 64,
  parameter integer ENTRIES      = 32,     // CAM entries of the LPM_TRIE maps only (a power of two, >= 2)
  parameter integer MEM_WORDS    = 512,
  parameter integer HASH_SLOTS   = ENTRIES, // slots of the HASH, PERCPU_HASH and LRU_HASH maps (hashed buckets, BRAM)
  parameter integer HASH_ROWS    = (HASH_SLOTS >= 2) ? HASH_SLOTS : 2,  // their 4-way bucket rows
  parameter integer POSSIBLE_CPUS = 1,     // the host kernel's possible CPUs (maps.sv: the LRU's target_free)
  parameter integer LRU_NODES    = ENTRIES, // LRU list nodes of the LRU_HASH maps (a power of two, >= 2)
  parameter integer DIFF_ENTRIES = 32,     // the APS difference buffer's 8-byte words
  parameter integer PIQ_FRAMES   = 256,    // input queue frames of 32 bytes (at least 110: one 3520-byte packet)
  parameter integer PIQ_DESCS    = 16,     // input queue packets
  parameter integer ROUTES       = 32,     // fib.sv's tables
  parameter integer DEVICES      = 4,
  parameter integer NEIGHBORS    = 16,
  parameter integer RB_BYTES     = 4096,   // the helper module's ring buffer storage (one RINGBUF map)
  parameter integer BUDGET       = 4194304, // cycles a packet may run before it is aborted
  parameter integer WARP         = 0        // 1: packets come with Warp Engine records (rs_*)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,

  // image
  input  logic                     imem_we_i,
  input  logic [15:0]              imem_addr_i,
  input  logic [2:0]               imem_lane_i,
  input  logic [63:0]              imem_slot_i,
  input  logic                     prog_we_i,
  input  logic [7:0]               prog_idx_i,
  input  logic [15:0]              prog_entry_i,

  // maps configuration and host port (maps.sv)
  input  logic                     cfg_we_i,
  input  logic [7:0]               cfg_map_i,
  input  logic [31:0]              cfg_type_i,
  input  logic [31:0]              cfg_key_size_i,
  input  logic [31:0]              cfg_value_size_i,
  input  logic [31:0]              cfg_max_entries_i,
  input  logic [31:0]              cfg_flags_i,
  input  logic                     cfg_done_i,
  output logic                     cfg_error_o,
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
  output logic [8*VALUE_BYTES-1:0] host_rsp_value_o,

  // routes (fib.sv's table port)
  input  logic                     fib_clear_i,
  input  logic                     fib_we_i,
  input  logic [1:0]               fib_kind_i,
  input  logic [31:0]              fib_ifindex_i,
  input  logic [47:0]              fib_mac_i,
  input  logic [31:0]              fib_mtu_i,
  input  logic                     fib_v6_i,
  input  logic [127:0]             fib_addr_i,
  input  logic [7:0]               fib_len_i,
  input  logic [1:0]               fib_type_i,
  input  logic [31:0]              fib_metric_i,
  input  logic                     fib_gw_valid_i,
  input  logic                     fib_gw_v6_i,
  input  logic [127:0]             fib_gw_i,
  output logic                     fib_error_o,

  // ring buffer drain (helpers.sv's rb_*: the one RINGBUF map's records, read by the host between packets)
  output logic                     rb_present_o,
  output logic [7:0]               rb_map_o,
  output logic                     rb_cfg_error_o,
  output logic                     rb_overflow_o,
  output logic                     rb_avail_o,
  output logic [31:0]              rb_len_o,
  input  logic                     rb_rd_i,
  input  logic [15:0]              rb_word_i,
  output logic [63:0]              rb_rdata_o,
  input  logic                     rb_pop_i,

  // packets in
  input  logic                     s_valid_i,
  output logic                     s_ready_o,
  input  logic [255:0]             s_data_i,
  input  logic [31:0]              s_keep_i,
  input  logic                     s_last_i,
  input  logic [127:0]             s_user_i,
  output logic                     s_refused_o,  // with the handshake of a last beat: that packet is refused

  // Warp Engine records (WARP = 1)
  input  logic                     rs_valid_i,
  input  logic                     rs_verdict_i,
  input  logic                     rs_restore_i,
  input  logic [31:0]              rs_retval_i,
  input  logic [15:0]              rs_entry_i,
  input  logic [10*64-1:0]         rs_regs_i,
  output logic                     rs_pop_o,
  output logic [4:0]               rs_widx_o,
  input  logic                     rs_wvalid_i,
  input  logic [15:0]              rs_waddr_i,
  input  logic [3:0]               rs_wbytes_i,
  input  logic [63:0]              rs_wdata_i,

  // packets out
  output logic                     m_valid_o,
  input  logic                     m_ready_i,
  output logic [255:0]             m_data_o,
  output logic [31:0]              m_keep_o,
  output logic                     m_last_o,
  output logic [159:0]             m_user_o,

  // counters and status
  output logic [63:0]              rx_packets_o,
  output logic [63:0]              tx_packets_o,
  output logic [63:0]              drop_packets_o,
  output logic                     busy_o,
  output logic                     core_start_o, // Sephirot starts a packet (one cycle)
  output logic                     q_frame_pop_o // a frame leaves the input queue for the APS's page
);

  localparam integer PW = (PROGS > 1) ? $clog2(PROGS) : 1;

  // ---------------------------------------------------------------------------------------------------------------
  // Program table
  logic [15:0] prog_q [PROGS];
  integer      p;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (p = 0; p < PROGS; p = p + 1) begin
        prog_q[p] <= 16'd0;
      end
    end else if (prog_we_i && {24'd0, prog_idx_i} < PROGS) begin
      prog_q[prog_idx_i[PW-1:0]] <= prog_entry_i;
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Input queue
  logic         d_valid, d_pop, f_pop;
  logic [11:0]  d_len;
  logic [31:0]  d_ifindex, d_rxq;
  logic [63:0]  d_ts;
  logic [255:0] f_data;
  logic         q_rx, q_drop, q_busy;

  piq #(
    .FRAME_BYTES (32),
    .FRAMES      (PIQ_FRAMES),
    .DESCS       (PIQ_DESCS),
    .MIN_BYTES   (14),
    .MAX_BYTES   (3520)
  ) u_piq (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .s_valid_i   (s_valid_i),
    .s_ready_o   (s_ready_o),
    .s_data_i    (s_data_i),
    .s_keep_i    (s_keep_i),
    .s_last_i    (s_last_i),
    .s_user_i    (s_user_i),
    .d_valid_o   (d_valid),
    .d_len_o     (d_len),
    .d_ifindex_o (d_ifindex),
    .d_rxq_o     (d_rxq),
    .d_ts_o      (d_ts),
    .d_pop_i     (d_pop),
    .f_pop_i     (f_pop),
    .f_data_o    (f_data),
    .rx_o        (q_rx),
    .drop_o      (q_drop),
    .busy_o      (q_busy)
  );

  // ---------------------------------------------------------------------------------------------------------------
  // Core
  logic                 start;
  logic                 resume, stk_clear, stk_we;
  logic [63:0]          ctx_data, ctx_data_end, ctx_data_meta;
  logic [31:0]          ctx_ifindex, ctx_rxq;
  logic [63:0]          pkt_ts;
  logic [12:0]          pkt_ready;
  logic                 core_busy, core_done, core_fault;
  logic [31:0]          core_verdict, core_cycles, run_cycles;
  logic [LANES-1:0]     dbus_req, dbus_we, dbus_fault;
  logic [LANES*64-1:0]  dbus_addr, dbus_wdata, dbus_rdata;
  logic [LANES*4-1:0]   dbus_bytes;
  logic                 hcall;
  logic [31:0]          hcall_id;
  logic [5*64-1:0]      hcall_args;
  logic                 hret_valid, hret_fault, hret_tail;
  logic [63:0]          hret;
  logic [15:0]          hret_entry;
  logic                 hmem_req, hmem_we, hmem_fault;
  logic [63:0]          hmem_addr, hmem_wdata, hmem_rdata;
  logic [3:0]           hmem_bytes;

  sephirot #(
    .LANES        (LANES),
    .IMEM_BUNDLES (IMEM_BUNDLES),
    .STACK_FRAMES (STACK_FRAMES)
  ) u_core (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .imem_we_i       (imem_we_i),
    .imem_addr_i     (imem_addr_i),
    .imem_lane_i     (imem_lane_i),
    .imem_slot_i     (imem_slot_i),
    .entry_i         (resume ? rs_entry_i : prog_q[0]),
    .start_i         (start),
    .resume_i        (resume),
    .resume_regs_i   (rs_regs_i),
    .sclear_i        (stk_clear),
    .swr_i           (stk_we),
    .swr_addr_i      (rs_waddr_i),
    .swr_bytes_i     (rs_wbytes_i),
    .swr_data_i      (rs_wdata_i),
    .ctx_data_i      (ctx_data),
    .ctx_data_end_i  (ctx_data_end),
    .ctx_data_meta_i (ctx_data_meta),
    .ctx_ifindex_i   (ctx_ifindex),
    .ctx_rxq_i       (ctx_rxq),
    .pkt_ready_i     (pkt_ready),
    .busy_o          (core_busy),
    .done_o          (core_done),
    .verdict_o       (core_verdict),
    .fault_o         (core_fault),
    .cycles_o        (core_cycles),
    .run_cycles_o    (run_cycles),
    .dbus_req_o      (dbus_req),
    .dbus_we_o       (dbus_we),
    .dbus_addr_o     (dbus_addr),
    .dbus_bytes_o    (dbus_bytes),
    .dbus_wdata_o    (dbus_wdata),
    .dbus_rdata_i    (dbus_rdata),
    .dbus_fault_i    (dbus_fault),
    .hcall_o         (hcall),
    .hcall_id_o      (hcall_id),
    .hcall_args_o    (hcall_args),
    .hret_valid_i    (hret_valid),
    .hret_i          (hret),
    .hret_fault_i    (hret_fault),
    .hret_tail_i     (hret_tail),
    .hret_entry_i    (hret_entry),
    .hmem_req_i      (hmem_req),
    .hmem_we_i       (hmem_we),
    .hmem_addr_i     (hmem_addr),
    .hmem_bytes_i    (hmem_bytes),
    .hmem_wdata_i    (hmem_wdata),
    .hmem_rdata_o    (hmem_rdata),
    .hmem_fault_o    (hmem_fault)
  );

  // ---------------------------------------------------------------------------------------------------------------
  // Helper module. A call reaches it one cycle after the core makes it (hcall registered): the helper module may
  // access memory in the cycle a call reaches it, and the core's stack port (hmem_*) serves a helper only from the
  // cycle after hcall_o (in hcall_o's cycle the stack's lane-0 read belongs to the calling bundle's own load; taking it
  // would also close a combinational loop hcall_o -> mem_req_o -> stack read -> hcall_o). One cycle per call. Calls
  // of a core the APS has stopped (a packet aborted at BUDGET keeps looping until the next start) are dropped.
  logic            hcall_q;
  logic            aps_running;
  logic [31:0]     hcall_id_q;
  logic [5*64-1:0] hcall_args_q;
  logic [31:0]     hcall_cycles_q;   // the cycle of the call, for bpf_ktime_get_ns (the model's time of the call)

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hcall_q        <= 1'b0;
      hcall_id_q     <= 32'd0;
      hcall_args_q   <= '0;
      hcall_cycles_q <= 32'd0;
    end else begin
      hcall_q        <= hcall && aps_running;
      hcall_id_q     <= hcall_id;
      hcall_args_q   <= hcall_args;
      hcall_cycles_q <= run_cycles;
    end
  end

  // Its memory port goes by the address's tag: 3 (stack) to the core's hmem_* port, anything else to
  // the APS's lane-0 path (which serves 2 and 4 and faults the rest); the answer comes from whichever took the
  // request of the previous cycle.
  logic        mem_req, mem_we, mem_fault;
  logic [63:0] mem_addr, mem_wdata, mem_rdata;
  logic [3:0]  mem_bytes;
  logic        mem_stack, mem_stack_q;

  logic        hm_req, hm_fault;
  logic [63:0] hm_rdata;
  logic        adj_valid, adj_done;
  logic [1:0]  adj_kind;
  logic [31:0] adj_delta;
  logic [63:0] adj_ret;
  logic        redir_set, redir_by_map;
  logic [7:0]  redir_map;
  logic [63:0] redir_key;

  assign mem_stack  = mem_addr[63:60] == 4'd3;
  assign hmem_req   = mem_req && mem_stack;
  assign hmem_we    = mem_we;
  assign hmem_addr  = mem_addr;
  assign hmem_bytes = mem_bytes;
  assign hmem_wdata = mem_wdata;
  assign hm_req     = mem_req && !mem_stack;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      mem_stack_q <= 1'b0;
    end else begin
      mem_stack_q <= mem_stack;
    end
  end
  assign mem_rdata = mem_stack_q ? hmem_rdata : hm_rdata;
  assign mem_fault = mem_stack_q ? hmem_fault : hm_fault;

  // ---------------------------------------------------------------------------------------------------------------
  // Maps
  logic                     req_valid, req_ready, rsp_valid, rsp_hit;
  logic [1:0]               req_op;
  logic [7:0]               req_map;
  logic [8*KEY_BYTES-1:0]   req_key;
  logic [8*VALUE_BYTES-1:0] req_value;
  logic [63:0]              req_flags, rsp_ret;
  logic [27:0]              rsp_slot;
  logic [63:0]              rsp_value;
  logic                     vrd_en, vrd_fault, vwr_en, vwr_fault;
  logic [7:0]               vrd_map, vwr_map;
  logic [27:0]              vrd_slot, vwr_slot;
  logic [11:0]              vrd_off, vwr_off;
  logic [3:0]               vrd_bytes, vwr_bytes;
  logic [63:0]              vrd_rdata, vwr_wdata;

  maps #(
    .MAPS        (MAPS),
    .KEY_BYTES   (KEY_BYTES),
    .VALUE_BYTES (VALUE_BYTES),
    .ENTRIES     (ENTRIES),
    .MEM_WORDS   (MEM_WORDS),
    .POSSIBLE_CPUS (POSSIBLE_CPUS),
    .HASH_SLOTS  (HASH_SLOTS),
    .HASH_ROWS   (HASH_ROWS),
    .LRU_NODES   (LRU_NODES)
  ) u_maps (
    .clk_i             (clk_i),
    .rst_ni            (rst_ni),
    .cfg_we_i          (cfg_we_i),
    .cfg_map_i         (cfg_map_i),
    .cfg_type_i        (cfg_type_i),
    .cfg_key_size_i    (cfg_key_size_i),
    .cfg_value_size_i  (cfg_value_size_i),
    .cfg_max_entries_i (cfg_max_entries_i),
    .cfg_flags_i       (cfg_flags_i),
    .cfg_done_i        (cfg_done_i),
    .cfg_error_o       (cfg_error_o),
    .req_valid_i       (req_valid),
    .req_ready_o       (req_ready),
    .req_op_i          (req_op),
    .req_map_i         (req_map),
    .req_key_i         (req_key),
    .req_value_i       (req_value),
    .req_flags_i       (req_flags),
    .rsp_valid_o       (rsp_valid),
    .rsp_ret_o         (rsp_ret),
    .rsp_hit_o         (rsp_hit),
    .rsp_slot_o        (rsp_slot),
    .rsp_value_o       (rsp_value),
    .vrd_en_i          (vrd_en),
    .vrd_map_i         (vrd_map),
    .vrd_slot_i        (vrd_slot),
    .vrd_off_i         (vrd_off),
    .vrd_bytes_i       (vrd_bytes),
    .vrd_rdata_o       (vrd_rdata),
    .vrd_fault_o       (vrd_fault),
    .vwr_en_i          (vwr_en),
    .vwr_map_i         (vwr_map),
    .vwr_slot_i        (vwr_slot),
    .vwr_off_i         (vwr_off),
    .vwr_bytes_i       (vwr_bytes),
    .vwr_wdata_i       (vwr_wdata),
    .vwr_fault_o       (vwr_fault),
    .host_valid_i      (host_valid_i),
    .host_ready_o      (host_ready_o),
    .host_op_i         (host_op_i),
    .host_map_i        (host_map_i),
    .host_key_i        (host_key_i),
    .host_value_i      (host_value_i),
    .host_flags_i      (host_flags_i),
    .host_slot_i       (host_slot_i),
    .host_rsp_valid_o  (host_rsp_valid_o),
    .host_rsp_ret_o    (host_rsp_ret_o),
    .host_rsp_hit_o    (host_rsp_hit_o),
    .host_rsp_key_o    (host_rsp_key_o),
    .host_rsp_value_o  (host_rsp_value_o)
  );

  // ---------------------------------------------------------------------------------------------------------------
  // Routes
  logic         fib_req_valid, fib_req_ready, fib_rsp_valid;
  logic [511:0] fib_req_params, fib_rsp_params;
  logic [31:0]  fib_req_flags;
  logic [63:0]  fib_rsp_ret;

  fib #(
    .ROUTES    (ROUTES),
    .DEVICES   (DEVICES),
    .NEIGHBORS (NEIGHBORS)
  ) u_fib (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .tbl_clear_i    (fib_clear_i),
    .tbl_we_i       (fib_we_i),
    .tbl_kind_i     (fib_kind_i),
    .tbl_ifindex_i  (fib_ifindex_i),
    .tbl_mac_i      (fib_mac_i),
    .tbl_mtu_i      (fib_mtu_i),
    .tbl_v6_i       (fib_v6_i),
    .tbl_addr_i     (fib_addr_i),
    .tbl_len_i      (fib_len_i),
    .tbl_type_i     (fib_type_i),
    .tbl_metric_i   (fib_metric_i),
    .tbl_gw_valid_i (fib_gw_valid_i),
    .tbl_gw_v6_i    (fib_gw_v6_i),
    .tbl_gw_i       (fib_gw_i),
    .tbl_error_o    (fib_error_o),
    .req_valid_i    (fib_req_valid),
    .req_ready_o    (fib_req_ready),
    .req_params_i   (fib_req_params),
    .req_flags_i    (fib_req_flags),
    .rsp_valid_o    (fib_rsp_valid),
    .rsp_ret_o      (fib_rsp_ret),
    .rsp_params_o   (fib_rsp_params)
  );

  // ---------------------------------------------------------------------------------------------------------------
  // Helpers
  helpers #(
    .MAPS        (MAPS),
    .KEY_BYTES   (KEY_BYTES),
    .VALUE_BYTES (VALUE_BYTES),
    .PROGS       (PROGS),
    .RB_BYTES    (RB_BYTES)
  ) u_helpers (
    .clk_i             (clk_i),
    .rst_ni            (rst_ni),
    .start_i           (start),
    .time_ns_i         (pkt_ts),
    .cycles_i          (hcall_cycles_q),
    .hcall_i           (hcall_q),
    .hcall_id_i        (hcall_id_q),
    .hcall_args_i      (hcall_args_q),
    .hret_valid_o      (hret_valid),
    .hret_o            (hret),
    .hret_fault_o      (hret_fault),
    .hret_tail_o       (hret_tail),
    .hret_entry_o      (hret_entry),
    .mem_req_o         (mem_req),
    .mem_we_o          (mem_we),
    .mem_addr_o        (mem_addr),
    .mem_bytes_o       (mem_bytes),
    .mem_wdata_o       (mem_wdata),
    .mem_rdata_i       (mem_rdata),
    .mem_fault_i       (mem_fault),
    .data_meta_i       (ctx_data_meta[12:0]),
    .data_i            (ctx_data[12:0]),
    .data_end_i        (ctx_data_end[12:0]),
    .pkt_ready_i       (pkt_ready),
    .cfg_we_i          (cfg_we_i),
    .cfg_map_i         (cfg_map_i),
    .cfg_type_i        (cfg_type_i),
    .cfg_key_size_i    (cfg_key_size_i),
    .cfg_value_size_i  (cfg_value_size_i),
    .cfg_max_entries_i (cfg_max_entries_i),
    .prog_we_i         (prog_we_i),
    .prog_idx_i        (prog_idx_i),
    .prog_entry_i      (prog_entry_i),
    .mreq_valid_o      (req_valid),
    .mreq_ready_i      (req_ready),
    .mreq_op_o         (req_op),
    .mreq_map_o        (req_map),
    .mreq_key_o        (req_key),
    .mreq_value_o      (req_value),
    .mreq_flags_o      (req_flags),
    .mrsp_valid_i      (rsp_valid),
    .mrsp_ret_i        (rsp_ret),
    .mrsp_hit_i        (rsp_hit),
    .mrsp_slot_i       (rsp_slot),
    .mrsp_value_i      (rsp_value),
    .adj_valid_o       (adj_valid),
    .adj_kind_o        (adj_kind),
    .adj_delta_o       (adj_delta),
    .adj_done_i        (adj_done),
    .adj_ret_i         (adj_ret),
    .redirect_valid_o  (redir_set),
    .redirect_by_map_o (redir_by_map),
    .redirect_map_o    (redir_map),
    .redirect_key_o    (redir_key),
    .fib_req_valid_o   (fib_req_valid),
    .fib_req_ready_i   (fib_req_ready),
    .fib_req_params_o  (fib_req_params),
    .fib_req_flags_o   (fib_req_flags),
    .fib_rsp_valid_i   (fib_rsp_valid),
    .fib_rsp_ret_i     (fib_rsp_ret),
    .fib_rsp_params_i  (fib_rsp_params),
    .rb_present_o      (rb_present_o),
    .rb_map_o          (rb_map_o),
    .rb_cfg_error_o    (rb_cfg_error_o),
    .rb_overflow_o     (rb_overflow_o),
    .rb_avail_o        (rb_avail_o),
    .rb_len_o          (rb_len_o),
    .rb_rd_i           (rb_rd_i),
    .rb_word_i         (rb_word_i),
    .rb_rdata_o        (rb_rdata_o),
    .rb_pop_i          (rb_pop_i)
  );

  // ---------------------------------------------------------------------------------------------------------------
  // APS
  logic        aps_done, aps_busy;
  logic [31:0] aps_verdict;

  aps #(
    .LANES        (LANES),
    .DIFF_ENTRIES (DIFF_ENTRIES),
    .BUDGET       (BUDGET),
    .WARP         (WARP)
  ) u_aps (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .d_valid_i       (d_valid),
    .d_len_i         (d_len),
    .d_ifindex_i     (d_ifindex),
    .d_rxq_i         (d_rxq),
    .d_ts_i          (d_ts),
    .d_pop_o         (d_pop),
    .f_pop_o         (f_pop),
    .f_data_i        (f_data),
    .rs_valid_i      (rs_valid_i),
    .rs_verdict_i    (rs_verdict_i),
    .rs_restore_i    (rs_restore_i),
    .rs_retval_i     (rs_retval_i),
    .rs_pop_o        (rs_pop_o),
    .rs_widx_o       (rs_widx_o),
    .rs_wvalid_i     (rs_wvalid_i),
    .stk_clear_o     (stk_clear),
    .stk_we_o        (stk_we),
    .resume_o        (resume),
    .start_o         (start),
    .ctx_data_o      (ctx_data),
    .ctx_data_end_o  (ctx_data_end),
    .ctx_data_meta_o (ctx_data_meta),
    .ctx_ifindex_o   (ctx_ifindex),
    .ctx_rxq_o       (ctx_rxq),
    .pkt_ts_o        (pkt_ts),
    .pkt_ready_o     (pkt_ready),
    .core_done_i     (core_done),
    .core_verdict_i  (core_verdict),
    .core_fault_i    (core_fault),
    .core_cycles_i   (core_cycles),
    .dbus_req_i      (dbus_req),
    .dbus_we_i       (dbus_we),
    .dbus_addr_i     (dbus_addr),
    .dbus_bytes_i    (dbus_bytes),
    .dbus_wdata_i    (dbus_wdata),
    .dbus_rdata_o    (dbus_rdata),
    .dbus_fault_o    (dbus_fault),
    .hm_req_i        (hm_req),
    .hm_we_i         (mem_we),
    .hm_addr_i       (mem_addr),
    .hm_bytes_i      (mem_bytes),
    .hm_wdata_i      (mem_wdata),
    .hm_rdata_o      (hm_rdata),
    .hm_fault_o      (hm_fault),
    .adj_valid_i     (adj_valid),
    .adj_kind_i      (adj_kind),
    .adj_delta_i     (adj_delta),
    .adj_done_o      (adj_done),
    .adj_ret_o       (adj_ret),
    .redir_set_i     (redir_set),
    .redir_by_map_i  (redir_by_map),
    .redir_map_i     (redir_map),
    .redir_key_i     (redir_key),
    .vrd_en_o        (vrd_en),
    .vrd_map_o       (vrd_map),
    .vrd_slot_o      (vrd_slot),
    .vrd_off_o       (vrd_off),
    .vrd_bytes_o     (vrd_bytes),
    .vrd_rdata_i     (vrd_rdata),
    .vrd_fault_i     (vrd_fault),
    .vwr_en_o        (vwr_en),
    .vwr_map_o       (vwr_map),
    .vwr_slot_o      (vwr_slot),
    .vwr_off_o       (vwr_off),
    .vwr_bytes_o     (vwr_bytes),
    .vwr_wdata_o     (vwr_wdata),
    .vwr_fault_i     (vwr_fault),
    .m_valid_o       (m_valid_o),
    .m_ready_i       (m_ready_i),
    .m_data_o        (m_data_o),
    .m_keep_o        (m_keep_o),
    .m_last_o        (m_last_o),
    .m_user_o        (m_user_o),
    .running_o       (aps_running),
    .done_o          (aps_done),
    .verdict_o       (aps_verdict),
    .busy_o          (aps_busy)
  );

  // The helper module takes the bounds as page offsets; the tag and high bits are the APS's constant ones.
  logic unused;
  assign unused = ^{ctx_data_meta[63:13], ctx_data[63:13], ctx_data_end[63:13]};

  // ---------------------------------------------------------------------------------------------------------------
  // Counters
  logic [63:0] rx_q, tx_q, drop_q;
  logic        pass_like;

  // XDP_PASS 2, XDP_TX 3, XDP_REDIRECT 4 leave; everything else is dropped (m_user_o's verdict is 0 on a fault).
  assign pass_like = aps_verdict == 32'd2 || aps_verdict == 32'd3 || aps_verdict == 32'd4;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rx_q   <= '0;
      tx_q   <= '0;
      drop_q <= '0;
    end else begin
      rx_q   <= rx_q + {63'd0, q_rx};
      tx_q   <= tx_q + {63'd0, aps_done && pass_like};
      drop_q <= drop_q + {63'd0, q_drop} + {63'd0, aps_done && !pass_like};
    end
  end

  assign rx_packets_o   = rx_q;
  assign tx_packets_o   = tx_q;
  assign drop_packets_o = drop_q;
  assign busy_o         = q_busy | aps_busy | core_busy;
  assign core_start_o   = start;
  assign q_frame_pop_o  = f_pop;
  assign s_refused_o    = q_drop;

endmodule
