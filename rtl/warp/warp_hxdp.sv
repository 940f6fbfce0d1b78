`default_nettype none
// The Warp Engine hooked into the hXDP module (docs/warp.md, "The hook into hXDP"): AXI4-Stream in, the engine
// (warp_engine, IN_W-bit beats: 64 bytes by default), then the hXDP module (hxdp, WARP = 1, 32-byte beats: a 64-byte
// beat goes in as two), whose output is this module's output.
//
// Per packet the engine's record (held on its m_* for every beat) is turned into what the processor needs and goes
// into a record FIFO (warp_fifo, block RAM) with the packet's last beat as the hXDP module takes it (not for a packet
// its input queue refuses): hit, verdict and r0 (a verdict's return value, or the r0 a restore sets,
// zero-extended), the slot, r1-r9 as addresses (kind 2 the context, 3 data + v, 4
// data_end + v, 5 r10 + v, 6 the map handle, as crates/hxdp's run_resumed resolves them: data = page offset 256,
// data_end = 256 + length, r10 = stack byte 512), and each stack write as (size, stack byte 512 + offset, value). The
// head of the FIFO is the record of the oldest packet the APS has not started (aps.sv, WARP): a forwarding verdict
// is emitted with r0 = retval without starting Sephirot; a restore makes its stack writes and starts Sephirot at the entry
// bundle of its slot, read from the entry table (ent_*: slot -> bundle, the image's `entries.json`, written at load
// time like the engine's configuration, wcfg_*: warp_engine's cfg_*); a miss starts at the program's entry.
//
// An engine verdict of XDP_ABORTED or XDP_DROP never enters the module: its beats are taken from the engine one a
// clock and discarded, and it counts in rx_packets_o and drop_packets_o (e_out_o and e_drop_o tell a test bench,
// which sees no output for it). Forwarding verdicts, restores and misses keep the module's order.
//
// The hXDP module's s_user_i (ifindex, rx queue, timestamp) travels beside the engine in a second FIFO: pushed with
// a packet's first beat into the engine, popped with its last beat out. Every other port is the hXDP module's
// (hxdp.sv's header). Back-pressure: the engine's input waits for room in the user FIFO at a first beat; its output
// waits for the hXDP module, for room in its input queue's frames (a count of the beats it took, less the frames
// the APS popped, less a refused packet's beats: never more than the queue holds, so the queue never refuses a packet
// for want of room) and, at a last beat, for room in the record FIFO, which holds no more records than the queue
// descriptors (a record leaves when its packet starts, after its descriptor): the engine's packets wait for the
// module instead of being dropped, as a MAC's would be.
module warp_hxdp #(
  parameter integer LANES          = 4, // slots per bundle (data-bus ports), 1..8
  parameter integer IMEM_BUNDLES   = 1024, // instruction memory depth
  parameter integer STACK_FRAMES   = 8, // 512-byte stack frames (call depth)
  parameter integer PROGS          = 16, // program table entries (tail-call targets); prog_idx_i beyond is ignored
  parameter integer MAPS           = 8, // maps.sv's parameters
  parameter integer KEY_BYTES      = 16,
  parameter integer VALUE_BYTES    = 64,
  parameter integer ENTRIES        = 32, // CAM entries of the LRU_HASH and LPM_TRIE maps only (a power of two, >= 2)
  parameter integer MEM_WORDS      = 512,
  parameter integer HASH_SLOTS     = ENTRIES, // slots of the HASH and PERCPU_HASH maps (hashed buckets in block RAM)
  parameter integer HASH_ROWS      = (HASH_SLOTS >= 2) ? HASH_SLOTS : 2, // their 4-way bucket rows
  parameter integer POSSIBLE_CPUS  = 1, // the host kernel's possible CPUs (maps.sv: the LRU's target_free)
  parameter integer LRU_NODES      = ENTRIES, // LRU list nodes of the LRU_HASH maps (a power of two, >= 2)
  parameter integer DIFF_ENTRIES   = 32, // the APS difference buffer's 8-byte words
  parameter integer PIQ_FRAMES     = 256, // input queue frames of 32 bytes (at least 110: one 3520-byte packet)
  parameter integer PIQ_DESCS      = 16, // input queue packets
  parameter integer ROUTES         = 32, // fib.sv's tables
  parameter integer DEVICES        = 4,
  parameter integer NEIGHBORS      = 16,
  parameter integer RB_BYTES       = 4096, // the helper module's ring buffer storage (one RINGBUF map)
  parameter integer BUDGET         = 4194304, // cycles a packet may run before it is aborted
  // the Warp Engine (warp_engine's parameters): its data path, the input's, IN_W bits (256: the module's; 512: a
  // 64-byte frame a clock, each beat split in two for the module)
  parameter integer IN_W             = 512,
  parameter integer W_CHUNK          = 128,
  parameter integer W_KEY_BYTES      = 16,
  parameter integer W_KEY_EXTRACTORS = 12,
  parameter integer W_KEY_READ       = 2,
  parameter integer W_TCAM_ENTRIES   = 64,
  parameter integer W_STACK_EXTRACTORS = 10,
  parameter integer W_PKT_DEPTH      = 512,
  parameter integer ENTRY_SLOTS      = 4096, // entry table: slots (eBPF instruction indices) it maps to bundles
  parameter integer FLIGHT           = 64,   // packets the engine may hold (the user FIFO's depth)
  parameter integer REC_DEPTH        = PIQ_DESCS  // record FIFO depth: at most the input queue's descriptors
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     imem_we_i,
  input  logic [15:0]              imem_addr_i,
  input  logic [2:0]               imem_lane_i,
  input  logic [63:0]              imem_slot_i,
  input  logic                     prog_we_i,
  input  logic [7:0]               prog_idx_i,
  input  logic [15:0]              prog_entry_i,
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
  input  logic                     s_valid_i,
  output logic                     s_ready_o,
  input  logic [IN_W-1:0]          s_data_i,
  input  logic [IN_W/8-1:0]        s_keep_i,
  input  logic                     s_last_i,
  input  logic [127:0]             s_user_i,
  output logic                     s_refused_o,  // with the handshake of a last beat: that packet is refused
  output logic                     m_valid_o,
  input  logic                     m_ready_i,
  output logic [255:0]             m_data_o,
  output logic [31:0]              m_keep_o,
  output logic                     m_last_o,
  output logic [159:0]             m_user_o,
  output logic [63:0]              rx_packets_o,
  output logic [63:0]              tx_packets_o,
  output logic [63:0]              drop_packets_o,
  output logic                     busy_o,
  output logic                     core_start_o,  // Sephirot starts a packet (one cycle)
  output logic                     e_out_o,       // a packet's last beat left the engine (to the module or dropped)
  output logic                     e_drop_o,      // with e_out_o: the engine dropped it (its verdict e_drop_ret_o)
  output logic [31:0]              e_drop_ret_o,

  // Warp Engine configuration (warp_engine's cfg_*) and the entry table
  input  logic                     wcfg_we_i,
  input  logic [2:0]               wcfg_sel_i,
  input  logic [15:0]              wcfg_addr_i,
  input  logic [7:0]               wcfg_word_i,
  input  logic [63:0]              wcfg_wdata_i,
  input  logic                     ent_we_i,
  input  logic [15:0]              ent_slot_i,
  input  logic [15:0]              ent_bundle_i
);

  localparam integer STK     = W_STACK_EXTRACTORS;
  localparam integer EAW     = $clog2(ENTRY_SLOTS);
  // The record FIFO's word: hit, verdict, r0, slot, r1-r9, then per stack write size, stack byte and value.
  localparam integer R_VERD  = 1;
  localparam integer R_RET   = 2;
  localparam integer R_SLOT  = 34;
  localparam integer R_REGS  = 50;
  localparam integer R_STK   = R_REGS + 9 * 64;
  localparam integer SW_W    = 4 + 16 + 64;
  localparam integer REC_RAW = R_STK + STK * SW_W;
  localparam integer REC_W   = (REC_RAW + 7) / 8 * 8;
  localparam [63:0]  CtxPtr  = 64'h1000_0000_0000_0000;  // region::context()
  localparam [63:0]  DataPtr = 64'h2000_0000_0000_0100;  // region::packet(256): data at the start
  localparam [63:0]  R10Ptr  = 64'h3000_0000_0000_0200;  // region::stack(512)
  localparam [63:0]  MapTag  = 64'h5000_0000_0000_0000;  // region::map_handle(0)

  // A restored value as the processor sees it: kind (warp_engine's record) and value, for a frame of len bytes.
  function automatic [63:0] resolve(input logic [3:0] kind, input logic [63:0] v, input logic [15:0] len);
    case (kind)
      4'd1:    resolve = v;
      4'd2:    resolve = CtxPtr;
      4'd3:    resolve = DataPtr + v;
      4'd4:    resolve = DataPtr + {48'd0, len} + v;
      4'd5:    resolve = R10Ptr + v;
      4'd6:    resolve = MapTag | v;
      default: resolve = 64'd0;
    endcase
  endfunction

  // ---------------------------------------------------------------------------------------------------------------
  // Engine input and the user FIFO
  logic          in_mid_q;        // a packet's first beat went in, not its last
  logic          user_full, user_valid, user_pop;
  logic [127:0]  user_head;
  logic          e_s_ready;

  assign s_ready_o = e_s_ready && (in_mid_q || !user_full);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      in_mid_q <= 1'b0;
    end else if (s_valid_i && s_ready_o) begin
      in_mid_q <= !s_last_i;
    end
  end

  warp_fifo #(
    .WIDTH(128),
    .DEPTH(FLIGHT)
  ) u_user (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .push_i (s_valid_i && s_ready_o && !in_mid_q),
    .wdata_i(s_user_i),
    .full_o (user_full),
    .valid_o(user_valid),
    .pop_i  (user_pop),
    .rdata_o(user_head)
  );

  // ---------------------------------------------------------------------------------------------------------------
  // The engine
  logic [IN_W-1:0]   e_data;
  logic [IN_W/8-1:0] e_keep;
  logic              e_valid, e_last, e_ready;
  logic              e_hit, e_verdict;
  logic [15:0]       e_rule, e_len;
  logic [31:0]       e_retval, e_slot, e_warped;
  logic [9*4-1:0]    e_reg_kind;
  logic [9*64-1:0]   e_reg_value;
  logic [STK*4-1:0]  e_stk_size, e_stk_kind;
  logic [STK*16-1:0] e_stk_off;
  logic [STK*64-1:0] e_stk_value;

  warp_engine #(
    .DATA_W          (IN_W),
    .CHUNK           (W_CHUNK),
    .KEY_BYTES       (W_KEY_BYTES),
    .KEY_EXTRACTORS  (W_KEY_EXTRACTORS),
    .KEY_READ        (W_KEY_READ),
    .TCAM_ENTRIES    (W_TCAM_ENTRIES),
    .REG_EXTRACTORS  (9),
    .STACK_EXTRACTORS(STK),
    .PKT_DEPTH       (W_PKT_DEPTH)
  ) u_engine (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .s_axis_tdata_i (s_data_i),
    .s_axis_tkeep_i (s_keep_i),
    .s_axis_tvalid_i(s_valid_i && (in_mid_q || !user_full)),
    .s_axis_tlast_i (s_last_i),
    .s_axis_tready_o(e_s_ready),
    .m_axis_tdata_o (e_data),
    .m_axis_tkeep_o (e_keep),
    .m_axis_tvalid_o(e_valid),
    .m_axis_tlast_o (e_last),
    .m_axis_tready_i(e_ready),
    .m_hit_o        (e_hit),
    .m_verdict_o    (e_verdict),
    .m_rule_o       (e_rule),
    .m_retval_o     (e_retval),
    .m_slot_o       (e_slot),
    .m_warped_o     (e_warped),
    .m_len_o        (e_len),
    .m_reg_kind_o   (e_reg_kind),
    .m_reg_value_o  (e_reg_value),
    .m_stack_size_o (e_stk_size),
    .m_stack_off_o  (e_stk_off),
    .m_stack_kind_o (e_stk_kind),
    .m_stack_value_o(e_stk_value),
    .cfg_we_i       (wcfg_we_i),
    .cfg_sel_i      (wcfg_sel_i),
    .cfg_addr_i     (wcfg_addr_i),
    .cfg_word_i     (wcfg_word_i),
    .cfg_wdata_i    (wcfg_wdata_i)
  );

  // The rule number and the warped count are the engine's report; the processor does not need them.
  logic unused;
  assign unused = ^{e_rule, e_warped, e_slot[31:16]};

  // ---------------------------------------------------------------------------------------------------------------
  // Engine output -> hXDP input, and the record FIFO
  logic             h_valid, h_ready, h_refused;
  logic             rec_full, rec_valid, rec_pop;
  logic [REC_W-1:0] rec_in, rec_head;

  localparam integer QW = $clog2(PIQ_FRAMES + 1);
  logic [QW-1:0] q_frames_q;      // frames in the hXDP module's input queue, at least
  logic [15:0]   q_beats_q;       // beats of the packet entering it, taken so far
  logic          q_room, q_pop, h_beat;

  // A verdict of XDP_ABORTED (0) or XDP_DROP (1) from the engine is discarded here, a beat a clock, and counted: it
  // never takes the module's input queue, its APS or its output. Every other packet, forwarding verdicts included,
  // goes through the module in order.
  logic e_drop, d_beat;
  logic [63:0] e_drops_q;
  logic [63:0] h_rx_packets, h_drop_packets;

  // The module takes 256-bit beats: at IN_W = 512 an engine beat goes in as its low half, then its high half when
  // that holds bytes (half_q), and the engine's beat is taken with its last half.
  logic [255:0] h_data;
  logic [31:0]  h_keep;
  logic         h_last, half_last;

  if (IN_W == 512) begin : g_split
    logic half_q;  // the high half of the engine's beat goes next
    assign half_last = half_q || e_keep[63:32] == 32'd0;
    assign h_data    = half_q ? e_data[511:256] : e_data[255:0];
    assign h_keep    = half_q ? e_keep[63:32] : e_keep[31:0];
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        half_q <= 1'b0;
      end else if (h_beat) begin
        half_q <= !half_last;
      end
    end
  end else begin : g_whole
    assign half_last = 1'b1;
    assign h_data    = e_data[255:0];
    assign h_keep    = e_keep[31:0];
  end
  assign h_last = e_last && half_last;

  assign e_drop   = e_hit && e_verdict && e_retval[31:1] == 31'd0;
  assign d_beat   = e_valid && e_drop && user_valid;
  assign q_room   = q_frames_q < QW'(PIQ_FRAMES);
  assign h_valid  = e_valid && !e_drop && user_valid && q_room && (!h_last || !rec_full);
  assign e_ready  = e_drop ? user_valid
                  : h_ready && user_valid && q_room && (!h_last || !rec_full) && half_last;
  assign h_beat   = h_valid && h_ready;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      q_frames_q <= '0;
      q_beats_q  <= 16'd0;
    end else begin
      if (h_beat) q_beats_q <= h_last ? 16'd0 : q_beats_q + 16'd1;
      // A refused packet's frames are rewound (its last beat is not stored); every other beat is one frame.
      q_frames_q <= q_frames_q + QW'(h_beat && !h_refused) - QW'(q_pop)
                    - ((h_beat && h_refused) ? q_beats_q[QW-1:0] : '0);
    end
  end
  assign user_pop = (h_beat && h_last) || (d_beat && e_last);
  assign e_out_o      = user_pop;
  assign e_drop_o     = d_beat && e_last;
  assign e_drop_ret_o = e_retval;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      e_drops_q <= 64'd0;
    end else if (d_beat && e_last) begin
      e_drops_q <= e_drops_q + 64'd1;
    end
  end
  // The engine's drops count as received and dropped, as the module counts its own.
  assign rx_packets_o   = h_rx_packets + e_drops_q;
  assign drop_packets_o = h_drop_packets + e_drops_q;

  always_comb begin
    rec_in = '0;
    rec_in[0]              = e_hit;
    rec_in[R_VERD]         = e_hit && e_verdict;
    rec_in[R_RET +: 32]    = e_retval;
    rec_in[R_SLOT +: 16]   = e_slot[15:0];
    for (integer r = 0; r < 9; r++) begin
      rec_in[R_REGS + 64 * r +: 64] = resolve(e_reg_kind[4 * r +: 4], e_reg_value[64 * r +: 64], e_len);
    end
    for (integer w = 0; w < STK; w++) begin
      rec_in[R_STK + SW_W * w +: 4]       = e_stk_size[4 * w +: 4];
      rec_in[R_STK + SW_W * w + 4 +: 16]  = 16'd512 + e_stk_off[16 * w +: 16];
      rec_in[R_STK + SW_W * w + 20 +: 64] = resolve(e_stk_kind[4 * w +: 4], e_stk_value[64 * w +: 64], e_len);
    end
  end

  warp_fifo #(
    .WIDTH(REC_W),
    .DEPTH(REC_DEPTH)
  ) u_rec (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .push_i (h_beat && h_last && !h_refused),
    .wdata_i(rec_in),
    .full_o (rec_full),
    .valid_o(rec_valid),
    .pop_i  (rec_pop),
    .rdata_o(rec_head)
  );

  // The entry table, read every cycle at the head record's slot: the APS starts a restored packet at least two
  // cycles after its record reached the head (the stack clear, then its writes), so the bundle is there by then.
  logic [15:0] entry_bundle;

  ram_sdp #(
    .WIDTH(16),
    .DEPTH(ENTRY_SLOTS)
  ) u_entries (
    .clk_i    (clk_i),
    .wr_en_i  (ent_we_i && {16'd0, ent_slot_i} < ENTRY_SLOTS),
    .wr_addr_i(ent_slot_i[EAW-1:0]),
    .wr_data_i(ent_bundle_i),
    .wr_be_i  (2'b11),
    .rd_en_i  (1'b1),
    .rd_addr_i(rec_head[R_SLOT +: EAW]),
    .rd_data_o(entry_bundle)
  );

  // The stack write the APS asks for.
  logic [4:0]  widx;
  logic        w_valid;
  logic [15:0] w_addr;
  logic [3:0]  w_bytes;
  logic [63:0] w_data;

  always_comb begin
    w_valid = 1'b0;
    w_addr  = 16'd0;
    w_bytes = 4'd0;
    w_data  = 64'd0;
    for (integer w = 0; w < STK; w++) begin
      if ({27'd0, widx} == w) begin
        w_bytes = rec_head[R_STK + SW_W * w +: 4];
        w_addr  = rec_head[R_STK + SW_W * w + 4 +: 16];
        w_data  = rec_head[R_STK + SW_W * w + 20 +: 64];
        w_valid = w_bytes != 4'd0;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  hxdp #(
    .LANES        (LANES),
    .IMEM_BUNDLES (IMEM_BUNDLES),
    .STACK_FRAMES (STACK_FRAMES),
    .PROGS        (PROGS),
    .MAPS         (MAPS),
    .KEY_BYTES    (KEY_BYTES),
    .VALUE_BYTES  (VALUE_BYTES),
    .ENTRIES      (ENTRIES),
    .MEM_WORDS    (MEM_WORDS),
    .HASH_SLOTS   (HASH_SLOTS),
    .HASH_ROWS    (HASH_ROWS),
    .POSSIBLE_CPUS(POSSIBLE_CPUS),
    .LRU_NODES    (LRU_NODES),
    .DIFF_ENTRIES (DIFF_ENTRIES),
    .PIQ_FRAMES   (PIQ_FRAMES),
    .PIQ_DESCS    (PIQ_DESCS),
    .ROUTES       (ROUTES),
    .DEVICES      (DEVICES),
    .NEIGHBORS    (NEIGHBORS),
    .RB_BYTES     (RB_BYTES),
    .BUDGET       (BUDGET),
    .WARP         (1)
  ) u_hxdp (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .imem_we_i        (imem_we_i),
    .imem_addr_i      (imem_addr_i),
    .imem_lane_i      (imem_lane_i),
    .imem_slot_i      (imem_slot_i),
    .prog_we_i        (prog_we_i),
    .prog_idx_i       (prog_idx_i),
    .prog_entry_i     (prog_entry_i),
    .cfg_we_i         (cfg_we_i),
    .cfg_map_i        (cfg_map_i),
    .cfg_type_i       (cfg_type_i),
    .cfg_key_size_i   (cfg_key_size_i),
    .cfg_value_size_i (cfg_value_size_i),
    .cfg_max_entries_i(cfg_max_entries_i),
    .cfg_flags_i      (cfg_flags_i),
    .cfg_done_i       (cfg_done_i),
    .cfg_error_o      (cfg_error_o),
    .host_valid_i     (host_valid_i),
    .host_ready_o     (host_ready_o),
    .host_op_i        (host_op_i),
    .host_map_i       (host_map_i),
    .host_key_i       (host_key_i),
    .host_value_i     (host_value_i),
    .host_flags_i     (host_flags_i),
    .host_slot_i      (host_slot_i),
    .host_rsp_valid_o (host_rsp_valid_o),
    .host_rsp_ret_o   (host_rsp_ret_o),
    .host_rsp_hit_o   (host_rsp_hit_o),
    .host_rsp_key_o   (host_rsp_key_o),
    .host_rsp_value_o (host_rsp_value_o),
    .fib_clear_i      (fib_clear_i),
    .fib_we_i         (fib_we_i),
    .fib_kind_i       (fib_kind_i),
    .fib_ifindex_i    (fib_ifindex_i),
    .fib_mac_i        (fib_mac_i),
    .fib_mtu_i        (fib_mtu_i),
    .fib_v6_i         (fib_v6_i),
    .fib_addr_i       (fib_addr_i),
    .fib_len_i        (fib_len_i),
    .fib_type_i       (fib_type_i),
    .fib_metric_i     (fib_metric_i),
    .fib_gw_valid_i   (fib_gw_valid_i),
    .fib_gw_v6_i      (fib_gw_v6_i),
    .fib_gw_i         (fib_gw_i),
    .fib_error_o      (fib_error_o),
    .rb_present_o     (rb_present_o),
    .rb_map_o         (rb_map_o),
    .rb_cfg_error_o   (rb_cfg_error_o),
    .rb_overflow_o    (rb_overflow_o),
    .rb_avail_o       (rb_avail_o),
    .rb_len_o         (rb_len_o),
    .rb_rd_i          (rb_rd_i),
    .rb_word_i        (rb_word_i),
    .rb_rdata_o       (rb_rdata_o),
    .rb_pop_i         (rb_pop_i),
    .m_valid_o        (m_valid_o),
    .m_ready_i        (m_ready_i),
    .m_data_o         (m_data_o),
    .m_keep_o         (m_keep_o),
    .m_last_o         (m_last_o),
    .m_user_o         (m_user_o),
    .rx_packets_o     (h_rx_packets),
    .tx_packets_o     (tx_packets_o),
    .drop_packets_o   (h_drop_packets),
    .busy_o           (busy_o),
    .core_start_o     (core_start_o),
    .q_frame_pop_o    (q_pop),
    .s_valid_i        (h_valid),
    .s_ready_o        (h_ready),
    .s_data_i         (h_data),
    .s_keep_i         (h_keep),
    .s_last_i         (h_last),
    .s_user_i         (user_head),
    .s_refused_o      (h_refused),
    .rs_valid_i       (rec_valid),
    .rs_verdict_i     (rec_head[0] && rec_head[R_VERD]),
    .rs_restore_i     (rec_head[0] && !rec_head[R_VERD]),
    .rs_retval_i      (rec_head[R_RET +: 32]),
    .rs_entry_i       (entry_bundle),
    .rs_regs_i        ({rec_head[R_REGS +: 9 * 64], 32'd0, rec_head[R_RET +: 32]}),
    .rs_pop_o         (rec_pop),
    .rs_widx_o        (widx),
    .rs_wvalid_i      (w_valid),
    .rs_waddr_i       (w_addr),
    .rs_wbytes_i      (w_bytes),
    .rs_wdata_i       (w_data)
  );

  assign s_refused_o = h_refused;

endmodule
