`default_nettype none
// Active Packet Selector of the hXDP module: one packet page at a time, from the input queue through the core to
// the output stream, with the data bus, the packet bounds and the helpers' packet adjustments.
//
// A packet (docs/hxdp-module.md, "Packet flow and timing"):
// - Idle, with a descriptor offered (d_valid_i) and the last emission finished: the page is cleared, the descriptor
//   popped and the first frame popped from the queue (cycle 0). Frames then move one per cycle into pkt_buffer
//   (frame k written in cycle 1 + k); start_o is high in cycle 1, the cycle of the first frame's write.
//   data_meta = data = 256 and data_end = 256 + length (page offsets, docs/memory-model.md); ctx_*_o carry them as
//   region-tagged packet pointers ((2 << 60) | offset) and follow every adjustment.
// - pkt_ready_o: page offsets below it hold stored bytes: 256 + 32 * (frames written), 4096 once every frame is in.
// - Running: the core's done_i ends the packet (from the cycle after start_o); so does BUDGET cycles without it
//   (XDP_ABORTED with fault, the model's bundle budget: the program loops). Once every frame is in, the bytes
//   data_meta..data_end leave on m_* (pkt_buffer's emission, first beat two cycles after) with m_user_o, and done_o
//   pulses once with verdict_o for the counters. When the emission's last beat is taken the APS is idle again.
// - Result (m_user_o, held from the end of the packet until the next one ends): verdict [31:0], fault [32], redirect
//   set [33], redirect through a map [34], redirect map [47:40], cycles [95:64] (the core's cycles_o, or the
//   APS's own count on a budget abort), redirect key or ifindex [159:96]; the other bits zero. A fault forces the
//   verdict to XDP_ABORTED (0). A difference-buffer overflow (more written words than DIFF_ENTRIES) makes the packet
//   XDP_ABORTED with fault: the store that overflowed, and every later store, answers with a fault, so the core
//   ends the packet, and the result is forced whatever the core ends with.
//
// Data bus (sephirot.sv's protocol: latency 1, one port per lane), per lane, by the address's region tag:
// - 2, packet: offset = address bits 59:0; the access must lie in data_meta..data_end (and be 1 to 8 bytes), else
//   it faults; a faulting write changes nothing. Reads and writes go to pkt_buffer's lane ports.
// - 4, map value: map = bits 59:52, slot = bits 51:24, offset = bits 23:0 (below 4096, else a fault). The lowest
//   lane with a map-value load takes the maps module's read port (vrd_*), the lowest with a map-value store its
//   write port (vwr_*); the compiler never puts more in one cycle's bundle, and any other lane's map access that
//   cycle faults (never lost silently). Fault answers come from the maps module (vrd_fault_i, vwr_fault_i).
// - any other tag faults.
// Only while a packet runs (after start_o until its end) are requests served; outside, none reaches memory.
//
// Helper memory port (hm_*, the data-bus shape, latency 1; the top sends tag-3 addresses to the core's stack port
// instead): takes lane 0's path in the cycles it requests (the core waits on the helper bus then, so lane 0's own
// request can only be a speculative read whose answer the core drops). Its tag-2 reads see stored bytes only: a
// helper reading the packet must wait until the bytes are below pkt_ready_o.
//
// Adjust port (the helper module's bpf_xdp_adjust_head/tail/meta): adj_valid_i is one cycle with adj_kind_i
// (0 head, 1 tail, 2 meta) and adj_delta_i (the helper's int argument, sign-extended); adj_done_o pulses later with
// adj_ret_o (0, -EINVAL or -EACCES as a 64-bit two's complement), exactly crates/xdp/src/buff.rs's rules: head moves
// data by delta with the metadata (its bytes copied, as copy_within does, through the lane ports: read, then
// written the next cycle; a move with metadata first waits until those bytes are stored), meta moves data_meta,
// tail moves data_end and zeroes the grown bytes that may hold data (those below the highest data_end so far; above
// it the page reads zero) with zero writes through the difference buffer (which overlays frames stored later),
// 8 * LANES bytes per cycle. adj_done_o comes in the cycle after the request, one cycle more for a metadata copy,
// one more per zero-write cycle. One request at a time; the core's bus lanes are taken by these reads and writes
// while the helper waits (the 32 bytes of metadata need LANES >= 4).
//
// Warp Engine records (WARP = 1, rtl/warp/warp_hxdp.sv; with WARP = 0 the rs_* inputs are ignored and the APS is
// exactly the one above): the packet at the head of the queue is taken only with its record (rs_valid_i), the record
// of the oldest packet not yet started. A verdict (rs_verdict_i) is taken as above but Sephirot is not started: the
// packet goes straight to its emission with verdict rs_retval_i, cycles 0, no fault and no redirect. A restore
// (rs_restore_i) first clears the core's stack (stk_clear_o, one cycle), then makes the record's stack writes, one a
// cycle (stk_we_o for write rs_widx_o while rs_wvalid_i says it exists), and only then takes the packet, whose
// start_o comes with resume_o (r1-r9 and the entry bundle from the record, the stack as written). So the packet's
// frames arrive relative to start_o as for any packet, and its cycles count as the model counts a resumed run. A
// miss (neither) runs as above. rs_pop_o consumes the record: with start_o, or at the take of a verdict.
//
// Yosys 0.23 synth_xilinx -family xcup, DIFF_ENTRIES 8 (2.4 CPU minutes): the APS's own logic about 2.2k LUTs,
// 510 FFs, 280 CARRY4; with pkt_buffer and diff_buffer about 41k LUTs, 3.9k FFs, 370 RAM64M8 (the page copies).
module aps #(
  parameter integer LANES        = 4,         // Sephirot's lanes (data-bus ports), 1..8
  parameter integer DIFF_ENTRIES = 32,        // the difference buffer's 8-byte words
  parameter integer BUDGET       = 4194304,   // cycles a packet may run (crates/hxdp BUNDLE_BUDGET)
  parameter integer WARP         = 0          // 1: packets come with Warp Engine records (rs_*)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,

  // input queue
  input  logic                 d_valid_i,
  input  logic [11:0]          d_len_i,
  input  logic [31:0]          d_ifindex_i,
  input  logic [31:0]          d_rxq_i,
  input  logic [63:0]          d_ts_i,
  output logic                 d_pop_o,
  output logic                 f_pop_o,
  input  logic [255:0]         f_data_i,

  // Warp Engine record of the packet at the head of the queue (WARP = 1)
  input  logic                 rs_valid_i,
  input  logic                 rs_verdict_i,
  input  logic                 rs_restore_i,
  input  logic [31:0]          rs_retval_i,
  output logic                 rs_pop_o,
  output logic [4:0]           rs_widx_o,
  input  logic                 rs_wvalid_i,
  output logic                 stk_clear_o,
  output logic                 stk_we_o,
  output logic                 resume_o,

  // core
  output logic                 start_o,
  output logic [63:0]          ctx_data_o,
  output logic [63:0]          ctx_data_end_o,
  output logic [63:0]          ctx_data_meta_o,
  output logic [31:0]          ctx_ifindex_o,
  output logic [31:0]          ctx_rxq_o,
  output logic [63:0]          pkt_ts_o,        // the packet's timestamp (s_user_i), for the helpers
  output logic [12:0]          pkt_ready_o,
  input  logic                 core_done_i,
  input  logic [31:0]          core_verdict_i,
  input  logic                 core_fault_i,
  input  logic [31:0]          core_cycles_i,

  // core data bus
  input  logic [LANES-1:0]     dbus_req_i,
  input  logic [LANES-1:0]     dbus_we_i,
  input  logic [LANES*64-1:0]  dbus_addr_i,
  input  logic [LANES*4-1:0]   dbus_bytes_i,
  input  logic [LANES*64-1:0]  dbus_wdata_i,
  output logic [LANES*64-1:0]  dbus_rdata_o,
  output logic [LANES-1:0]     dbus_fault_o,

  // helper memory (tags 2 and 4)
  input  logic                 hm_req_i,
  input  logic                 hm_we_i,
  input  logic [63:0]          hm_addr_i,
  input  logic [3:0]           hm_bytes_i,
  input  logic [63:0]          hm_wdata_i,
  output logic [63:0]          hm_rdata_o,
  output logic                 hm_fault_o,

  // helper adjust port
  input  logic                 adj_valid_i,
  input  logic [1:0]           adj_kind_i,
  input  logic [31:0]          adj_delta_i,
  output logic                 adj_done_o,
  output logic [63:0]          adj_ret_o,

  // the helper module's redirect record, sampled when the packet ends
  input  logic                 redir_set_i,
  input  logic                 redir_by_map_i,
  input  logic [7:0]           redir_map_i,
  input  logic [63:0]          redir_key_i,

  // maps module value ports
  output logic                 vrd_en_o,
  output logic [7:0]           vrd_map_o,
  output logic [27:0]          vrd_slot_o,
  output logic [11:0]          vrd_off_o,
  output logic [3:0]           vrd_bytes_o,
  input  logic [63:0]          vrd_rdata_i,
  input  logic                 vrd_fault_i,
  output logic                 vwr_en_o,
  output logic [7:0]           vwr_map_o,
  output logic [27:0]          vwr_slot_o,
  output logic [11:0]          vwr_off_o,
  output logic [3:0]           vwr_bytes_o,
  output logic [63:0]          vwr_wdata_o,
  input  logic                 vwr_fault_i,

  // output stream
  output logic                 m_valid_o,
  input  logic                 m_ready_i,
  output logic [255:0]         m_data_o,
  output logic [31:0]          m_keep_o,
  output logic                 m_last_o,
  output logic [159:0]         m_user_o,

  output logic                 running_o,       // between start_o and the packet's end: requests are served
  output logic                 done_o,          // one cycle per packet, when its emission starts
  output logic [31:0]          verdict_o,       // with done_o
  output logic                 busy_o
);

  localparam [12:0] Headroom  = 13'd256;
  localparam [12:0] PageEnd   = 13'd4096;
  localparam [12:0] FrameMin  = 13'd40;       // XDP_FRAME_SIZE: data_meta and data stay at or above
  localparam [12:0] TailLimit = 13'd3776;     // FRAME_SIZE - TAILROOM: data_end stays at or below
  localparam [12:0] EthHlen   = 13'd14;
  localparam [63:0] Einval    = 64'hffff_ffff_ffff_ffea;  // -22
  localparam [63:0] Eacces    = 64'hffff_ffff_ffff_fff3;  // -13
  localparam [3:0]  TagPacket = 4'd2;
  localparam [3:0]  TagMap    = 4'd4;
  localparam integer BW       = $clog2(BUDGET + 1);

  // Packet states.
  localparam [2:0] SIdle   = 3'd0;
  localparam [2:0] SStart  = 3'd1;
  localparam [2:0] SRun    = 3'd2;
  localparam [2:0] SFinish = 3'd3;  // the result is in; waiting for the last frames
  localparam [2:0] SEmit   = 3'd4;  // emission under way
  localparam [2:0] SRest   = 3'd5;  // a restore's stack writes (WARP)
  localparam bit   Warp    = WARP != 0;

  // Adjust states.
  localparam [2:0] AIdle  = 3'd0;
  localparam [2:0] AWait  = 3'd1;  // a head move waits for its metadata bytes to be stored
  localparam [2:0] ACopy  = 3'd2;  // metadata read in the last cycle: write it at its new place
  localparam [2:0] AZero  = 3'd3;  // zero writes of the grown tail

  // Bus answer kinds per lane.
  localparam [1:0] KNone = 2'd0;
  localparam [1:0] KPkt  = 2'd1;
  localparam [1:0] KMapR = 2'd2;
  localparam [1:0] KMapW = 2'd3;

  integer l;

  // ---------------------------------------------------------------------------------------------------------------
  // Packet state
  logic [2:0]    state_q;
  logic [12:0]   meta_q, data_q, end_q;
  logic [12:0]   high_q;          // the highest data_end so far: bytes at or above it read zero
  logic [31:0]   ifindex_q, rxq_q;
  logic [63:0]   ts_q;
  logic [7:0]    frames_left_q;   // frames still to pop from the queue
  logic [7:0]    frames_in_q;     // frames written into the page
  logic          fv_q;            // f_data_i holds a popped frame, written this cycle
  logic [12:0]   bytes_left_q;    // bytes of the packet not yet written (for the frame's keep and last)
  logic          complete_q;      // every frame is in
  logic [BW-1:0] run_cnt_q;       // cycles since start_o
  logic          abort_q;         // difference-buffer overflow: the packet ends XDP_ABORTED
  logic [159:0]  user_q;

  logic          running;
  logic          take;
  logic          w_idle_ok;       // SIdle may take the head packet: its record is there and it needs no restore
  logic          w_rest_go;       // SIdle starts a restore
  logic          w_rest_done;     // SRest's writes are made: take the packet now
  logic          w_verdict;       // the packet taken now is the engine's verdict
  logic          resume_q;        // the packet taken was restored
  logic [4:0]    widx_q;
  logic          end_now;
  logic          budget_hit;
  logic [7:0]    len_frames;

  assign running    = state_q == SRun;
  assign w_idle_ok   = !Warp || (rs_valid_i && !rs_restore_i);
  assign w_rest_go   = Warp && state_q == SIdle && d_valid_i && rs_valid_i && rs_restore_i;
  assign w_rest_done = Warp && state_q == SRest && !rs_wvalid_i;
  assign take        = (state_q == SIdle && d_valid_i && w_idle_ok) || w_rest_done;
  assign w_verdict   = Warp && state_q == SIdle && rs_verdict_i;
  assign stk_clear_o = w_rest_go;
  assign stk_we_o    = Warp && state_q == SRest && rs_wvalid_i;
  assign rs_widx_o   = widx_q;
  assign rs_pop_o    = Warp && ((state_q == SStart) || (take && w_verdict));
  assign resume_o    = Warp && state_q == SStart && resume_q;
  assign budget_hit = run_cnt_q >= BW'(BUDGET);
  assign end_now    = running && (core_done_i || budget_hit);
  assign len_frames = 8'((d_len_i + 12'd31) >> 5);

  // pkt_buffer
  logic                 pb_clear;
  logic                 pb_in_valid;
  logic [31:0]          pb_in_keep;
  logic                 pb_in_last;
  logic                 pb_in_ready;
  logic [11:0]          pb_len;
  logic                 pb_complete;
  logic [LANES-1:0]     pb_rd_en;
  logic [LANES*12-1:0]  pb_rd_addr;
  logic [LANES*4-1:0]   pb_rd_bytes;
  logic [LANES*64-1:0]  pb_rd_data;
  logic [LANES-1:0]     pb_wr_en;
  logic [LANES*12-1:0]  pb_wr_addr;
  logic [LANES*4-1:0]   pb_wr_bytes;
  logic [LANES*64-1:0]  pb_wr_data;
  logic                 pb_overflow;
  logic                 pb_emit;
  logic                 pb_emit_busy;

  logic unused;
  assign unused = ^{pb_in_ready, pb_len, pb_complete};

  assign pb_clear    = take;
  assign d_pop_o     = take;
  assign f_pop_o     = take || (frames_left_q != 8'd0);
  assign pb_in_valid = fv_q;
  assign pb_in_last  = bytes_left_q <= 13'd32;

  always_comb begin
    for (l = 0; l < 32; l = l + 1) begin
      pb_in_keep[l] = 13'(l) < bytes_left_q;
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Adjust state
  logic [2:0]   adj_q;
  logic [1:0]   akind_q;
  logic [63:0]  adelta_q;
  logic [12:0]  a_nmeta_q, a_ndata_q;  // a head move in progress: the new data_meta and data
  logic [5:0]   a_mlen_q;              // its metadata bytes
  logic [12:0]  z_pos_q, z_end_q;      // zeroing: next byte, end
  logic [12:0]  z_newend_q;
  logic         adone_q;
  logic [63:0]  aret_q;

  // A request is decided (checked, and applied or its copy or zeroing started) in the cycle it arrives, or, for a
  // head move with metadata not yet stored, in the cycle it is (AWait); a_kind/a_delta are the request decided.
  logic               a_decide;
  logic [1:0]         a_kind;
  logic [63:0]        a_delta;

  // Only a head move that copies metadata reads the page (the bytes below data): it waits until they are stored.
  // Tail zeroing writes through the difference buffer, which overlays frames stored later.
  logic               a_ready;

  assign a_ready  = a_kind != 2'd0 || meta_q == data_q || {3'd0, data_q} <= {3'd0, pkt_ready_o};
  assign a_decide = a_ready && ((adj_q == AIdle && adj_valid_i && running) || adj_q == AWait);
  assign a_kind   = (adj_q == AIdle) ? adj_kind_i : akind_q;
  assign a_delta  = (adj_q == AIdle) ? {{32{adj_delta_i[31]}}, adj_delta_i} : adelta_q;

  // Checks of the request against the current bounds, in 64-bit signed arithmetic as buff.rs computes them.
  logic signed [63:0] s_meta, s_data, s_end, s_new;
  logic [12:0]        metalen;
  logic               head_ok, meta_inval, meta_acces, tail_ok;
  logic [12:0]        new_pos;

  always_comb begin
    s_meta     = $signed({51'd0, meta_q});
    s_data     = $signed({51'd0, data_q});
    s_end      = $signed({51'd0, end_q});
    metalen    = data_q - meta_q;
    s_new      = 64'sd0;
    case (a_kind)
      2'd0:    s_new = s_data + $signed(a_delta);
      2'd1:    s_new = s_end + $signed(a_delta);
      default: s_new = s_meta + $signed(a_delta);
    endcase
    new_pos    = s_new[12:0];
    head_ok    = !(s_new < $signed({51'd0, FrameMin + metalen}) || s_new > s_end - 64'sd14);
    meta_inval = s_new < $signed({51'd0, FrameMin}) || s_new > s_data;
    meta_acces = (data_q - new_pos) > 13'd32 || (data_q[1:0] != new_pos[1:0]);
    tail_ok    = !(s_new > $signed({51'd0, TailLimit}) || s_new < s_data + $signed({51'd0, EthHlen}));
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Data bus: each lane's request (lane 0 carries the helper's while it asks), routed by tag.
  logic [LANES-1:0]     q_req, q_we;
  logic [LANES*64-1:0]  q_addr, q_wdata;
  logic [LANES*4-1:0]   q_bytes;
  logic [LANES-1:0]     is_pkt, pkt_in, is_map, map_ok;
  logic [LANES-1:0]     f_d;            // the answer is a fault decided here
  logic [LANES*2-1:0]   k_d;            // what answers
  logic [LANES-1:0]     f_q;
  logic [LANES*2-1:0]   k_q;
  logic [LANES-1:0]     w_q;            // the lane wrote the packet
  logic                 rd_taken, wr_taken;
  logic [63:0]          a;
  logic [3:0]           nb;
  logic [60:0]          off, last;

  always_comb begin
    q_req   = dbus_req_i & {LANES{running}};
    q_we    = dbus_we_i;
    q_addr  = dbus_addr_i;
    q_bytes = dbus_bytes_i;
    q_wdata = dbus_wdata_i;
    if (hm_req_i && running) begin
      q_req[0]         = 1'b1;
      q_we[0]          = hm_we_i;
      q_addr[63:0]     = hm_addr_i;
      q_bytes[3:0]     = hm_bytes_i;
      q_wdata[63:0]    = hm_wdata_i;
    end
    // The adjust port's copies and zeroing own the lanes (the core and the helper both wait for it).
    if (a_decide || adj_q == ACopy || adj_q == AZero) begin
      q_req = '0;
    end

    rd_taken    = 1'b0;
    wr_taken    = 1'b0;
    vrd_en_o    = 1'b0;
    vrd_map_o   = '0;
    vrd_slot_o  = '0;
    vrd_off_o   = '0;
    vrd_bytes_o = '0;
    vwr_en_o    = 1'b0;
    vwr_map_o   = '0;
    vwr_slot_o  = '0;
    vwr_off_o   = '0;
    vwr_bytes_o = '0;
    vwr_wdata_o = '0;
    a           = '0;
    nb          = '0;
    off         = '0;
    last        = '0;
    for (l = 0; l < LANES; l = l + 1) begin
      a         = q_addr[64*l +: 64];
      nb        = q_bytes[4*l +: 4];
      off       = {1'b0, a[59:0]};
      last      = off + {57'd0, nb};
      is_pkt[l] = a[63:60] == TagPacket;
      is_map[l] = a[63:60] == TagMap;
      pkt_in[l] = nb != 4'd0 && nb <= 4'd8 && off >= {48'd0, meta_q} && last <= {48'd0, end_q};
      map_ok[l] = a[23:12] == 12'd0;
      pb_rd_en[l]            = q_req[l] && !q_we[l] && is_pkt[l];
      pb_rd_addr[12*l +: 12] = a[11:0];
      pb_rd_bytes[4*l +: 4]  = nb;
      pb_wr_en[l]            = q_req[l] && q_we[l] && is_pkt[l] && pkt_in[l];
      pb_wr_addr[12*l +: 12] = a[11:0];
      pb_wr_bytes[4*l +: 4]  = nb;
      pb_wr_data[64*l +: 64] = q_wdata[64*l +: 64];
      f_d[l]                 = 1'b0;
      k_d[2*l +: 2]          = KNone;
      if (q_req[l]) begin
        if (is_pkt[l]) begin
          k_d[2*l +: 2] = KPkt;
          f_d[l]        = !pkt_in[l];
        end else if (is_map[l] && !q_we[l] && !rd_taken) begin
          rd_taken      = 1'b1;
          k_d[2*l +: 2] = KMapR;
          f_d[l]        = !map_ok[l];
          vrd_en_o      = map_ok[l];
          vrd_map_o     = a[59:52];
          vrd_slot_o    = a[51:24];
          vrd_off_o     = a[11:0];
          vrd_bytes_o   = nb;
        end else if (is_map[l] && q_we[l] && !wr_taken) begin
          wr_taken      = 1'b1;
          k_d[2*l +: 2] = KMapW;
          f_d[l]        = !map_ok[l];
          vwr_en_o      = map_ok[l];
          vwr_map_o     = a[59:52];
          vwr_slot_o    = a[51:24];
          vwr_off_o     = a[11:0];
          vwr_bytes_o   = nb;
          vwr_wdata_o   = q_wdata[64*l +: 64];
        end else begin
          f_d[l] = 1'b1;  // another region, or a second map access of one kind in this cycle
        end
      end
    end

    // Adjust: the metadata read (when a request is decided), its write (ACopy), or zeroes (AZero) on every lane.
    if (a_decide) begin
      for (l = 0; l < LANES; l = l + 1) begin
        pb_rd_en[l]            = 1'b1;
        pb_rd_addr[12*l +: 12] = 12'(meta_q + 13'(8 * l));
        pb_rd_bytes[4*l +: 4]  = 4'd8;
      end
    end
    if (adj_q == ACopy) begin
      for (l = 0; l < LANES; l = l + 1) begin
        pb_wr_en[l]            = 6'(8 * l) < a_mlen_q;
        pb_wr_addr[12*l +: 12] = 12'(a_nmeta_q + 13'(8 * l));
        pb_wr_bytes[4*l +: 4]  = (a_mlen_q - 6'(8 * l) >= 6'd8) ? 4'd8 : 4'(a_mlen_q - 6'(8 * l));
        pb_wr_data[64*l +: 64] = pb_rd_data[64*l +: 64];
      end
    end
    if (adj_q == AZero) begin
      for (l = 0; l < LANES; l = l + 1) begin
        pb_wr_en[l]            = z_pos_q + 13'(8 * l) < z_end_q;
        pb_wr_addr[12*l +: 12] = 12'(z_pos_q + 13'(8 * l));
        pb_wr_bytes[4*l +: 4]  = (z_end_q - z_pos_q - 13'(8 * l) >= 13'd8) ? 4'd8
                                 : 4'(z_end_q - z_pos_q - 13'(8 * l));
        pb_wr_data[64*l +: 64] = 64'd0;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      f_q <= '0;
      k_q <= '0;
      w_q <= '0;
    end else begin
      f_q <= f_d;
      k_q <= k_d;
      w_q <= pb_wr_en;
    end
  end

  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      dbus_rdata_o[64*l +: 64] = 64'd0;
      dbus_fault_o[l]          = f_q[l];
      case (k_q[2*l +: 2])
        KPkt: begin
          dbus_rdata_o[64*l +: 64] = pb_rd_data[64*l +: 64];
          dbus_fault_o[l]          = f_q[l] | (w_q[l] & pb_overflow);
        end
        KMapR: begin
          dbus_rdata_o[64*l +: 64] = vrd_rdata_i;
          dbus_fault_o[l]          = f_q[l] | vrd_fault_i;
        end
        KMapW: dbus_fault_o[l] = f_q[l] | vwr_fault_i;
        default: ;
      endcase
    end
  end

  assign hm_rdata_o = dbus_rdata_o[63:0];
  assign hm_fault_o = dbus_fault_o[0];

  // ---------------------------------------------------------------------------------------------------------------
  // Adjust port
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      adj_q      <= AIdle;
      akind_q    <= '0;
      adelta_q   <= '0;
      a_nmeta_q  <= '0;
      a_ndata_q  <= '0;
      a_mlen_q   <= '0;
      z_pos_q    <= '0;
      z_end_q    <= '0;
      z_newend_q <= '0;
      adone_q    <= 1'b0;
      aret_q     <= '0;
      meta_q     <= Headroom;
      data_q     <= Headroom;
      end_q      <= Headroom;
      high_q     <= Headroom;
    end else begin
      adone_q <= 1'b0;
      if (take) begin
        adj_q  <= AIdle;
        meta_q <= Headroom;
        data_q <= Headroom;
        end_q  <= Headroom + {1'b0, d_len_i};
        high_q <= Headroom + {1'b0, d_len_i};
      end else begin
        if (a_decide) begin
          // The metadata words are read on every lane this cycle, whatever the request (reads are harmless).
          adj_q   <= AIdle;
          adone_q <= 1'b1;
          aret_q  <= 64'd0;
          case (a_kind)
            2'd0: begin
              if (!head_ok) begin
                aret_q <= Einval;
              end else if (metalen != 13'd0) begin
                adj_q     <= ACopy;
                adone_q   <= 1'b0;
                a_ndata_q <= new_pos;
                a_nmeta_q <= new_pos - metalen;
                a_mlen_q  <= metalen[5:0];
              end else begin
                meta_q <= new_pos;
                data_q <= new_pos;
              end
            end
            2'd1: begin
              if (!tail_ok) begin
                aret_q <= Einval;
              end else if (new_pos > end_q && end_q < high_q) begin
                adj_q      <= AZero;
                adone_q    <= 1'b0;
                z_pos_q    <= end_q;
                z_end_q    <= (new_pos < high_q) ? new_pos : high_q;
                z_newend_q <= new_pos;
              end else begin
                end_q  <= new_pos;
                high_q <= (new_pos > high_q) ? new_pos : high_q;
              end
            end
            default: begin
              if (meta_inval) begin
                aret_q <= Einval;
              end else if (meta_acces) begin
                aret_q <= Eacces;
              end else begin
                meta_q <= new_pos;
              end
            end
          endcase
        end else begin
          case (adj_q)
            AIdle: begin
              if (adj_valid_i && running) begin
                adj_q    <= AWait;
                akind_q  <= adj_kind_i;
                adelta_q <= {{32{adj_delta_i[31]}}, adj_delta_i};
              end
            end
            ACopy: begin
              adj_q   <= AIdle;
              adone_q <= 1'b1;
              meta_q  <= a_nmeta_q;
              data_q  <= a_ndata_q;
            end
            AZero: begin
              if (z_pos_q + 13'(8 * LANES) >= z_end_q) begin
                adj_q   <= AIdle;
                adone_q <= 1'b1;
                end_q   <= z_newend_q;
                high_q  <= (z_newend_q > high_q) ? z_newend_q : high_q;
              end else begin
                z_pos_q <= z_pos_q + 13'(8 * LANES);
              end
            end
            default: ;  // AWait: the metadata is not stored yet
          endcase
        end
      end
    end
  end

  assign adj_done_o = adone_q;
  assign adj_ret_o  = aret_q;

  // ---------------------------------------------------------------------------------------------------------------
  // Packet sequence
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q       <= SIdle;
      ifindex_q     <= '0;
      rxq_q         <= '0;
      ts_q          <= '0;
      frames_left_q <= '0;
      frames_in_q   <= '0;
      fv_q          <= 1'b0;
      bytes_left_q  <= '0;
      complete_q    <= 1'b0;
      run_cnt_q     <= '0;
      abort_q       <= 1'b0;
      user_q        <= '0;
      resume_q      <= 1'b0;
      widx_q        <= '0;
    end else begin
      if (w_rest_go) begin
        widx_q <= '0;
      end else if (stk_we_o) begin
        widx_q <= widx_q + 5'd1;
      end
      if (take) begin
        resume_q <= w_rest_done;
      end
      fv_q <= f_pop_o;
      if (take) begin
        ifindex_q     <= d_ifindex_i;
        rxq_q         <= d_rxq_i;
        ts_q          <= d_ts_i;
        frames_left_q <= len_frames - 8'd1;
        frames_in_q   <= '0;
        bytes_left_q  <= {1'b0, d_len_i};
        complete_q    <= 1'b0;
        abort_q       <= 1'b0;
      end else if (frames_left_q != 8'd0) begin
        frames_left_q <= frames_left_q - 8'd1;
      end
      if (fv_q) begin
        frames_in_q  <= frames_in_q + 8'd1;
        bytes_left_q <= (bytes_left_q > 13'd32) ? bytes_left_q - 13'd32 : 13'd0;
        if (pb_in_last) begin
          complete_q <= 1'b1;
        end
      end
      if (pb_overflow && state_q != SIdle) begin
        abort_q <= 1'b1;
      end

      run_cnt_q <= (state_q == SStart) ? BW'(1) : ((run_cnt_q < BW'(BUDGET)) ? run_cnt_q + 1'b1 : run_cnt_q);

      case (state_q)
        SIdle: begin
          if (take && w_verdict) begin
            // The engine's verdict: no core; the result is the record's r0.
            state_q        <= SFinish;
            user_q         <= '0;
            user_q[31:0]   <= rs_retval_i;
          end else if (take) begin
            state_q <= SStart;
          end else if (w_rest_go) begin
            state_q <= SRest;
          end
        end
        SRest:   if (take) state_q <= SStart;
        SStart:  state_q <= SRun;
        SRun: begin
          if (end_now) begin
            state_q <= SFinish;
            // Verdict [31:0], fault [32], redirect set [33], through a map [34], map [47:40], cycles [95:64],
            // key or ifindex [159:96].
            user_q <= '0;
            if (!budget_hit && !core_fault_i && !abort_q && !pb_overflow) begin
              user_q[31:0] <= core_verdict_i;
            end
            user_q[32]      <= budget_hit | core_fault_i | abort_q | pb_overflow;
            user_q[33]      <= redir_set_i;
            user_q[34]      <= redir_by_map_i;
            user_q[47:40]   <= redir_map_i;
            user_q[95:64]   <= budget_hit ? 32'(run_cnt_q) : core_cycles_i;
            user_q[159:96]  <= redir_key_i;
          end
        end
        SFinish: if (complete_q && adj_q == AIdle) state_q <= SEmit;
        SEmit:   if (!pb_emit && !pb_emit_busy) state_q <= SIdle;
        default: state_q <= SIdle;
      endcase
    end
  end

  // Emission starts in SFinish's last cycle (emit_i with the final bounds); emit_busy_o covers SEmit from then on.
  assign pb_emit   = state_q == SFinish && complete_q && adj_q == AIdle;
  assign done_o    = pb_emit;
  assign verdict_o = user_q[31:0];
  assign start_o   = state_q == SStart;
  assign running_o = running;
  assign busy_o    = state_q != SIdle;
  assign m_user_o  = user_q;

  assign ctx_data_o      = {4'h2, 47'd0, data_q};
  assign ctx_data_end_o  = {4'h2, 47'd0, end_q};
  assign ctx_data_meta_o = {4'h2, 47'd0, meta_q};
  assign ctx_ifindex_o   = ifindex_q;
  assign ctx_rxq_o       = rxq_q;
  assign pkt_ts_o        = ts_q;
  assign pkt_ready_o     = complete_q ? PageEnd : Headroom + {frames_in_q, 5'd0};

  // ---------------------------------------------------------------------------------------------------------------
  pkt_buffer #(
    .LANES       (LANES),
    .FRAME_BYTES (32),
    .PAGE_BYTES  (4096),
    .HEADROOM    (256),
    .ENTRIES     (DIFF_ENTRIES)
  ) u_page (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .clear_i     (pb_clear),
    .in_valid_i  (pb_in_valid),
    .in_ready_o  (pb_in_ready),
    .in_data_i   (f_data_i),
    .in_keep_i   (pb_in_keep),
    .in_last_i   (pb_in_last),
    .len_o       (pb_len),
    .complete_o  (pb_complete),
    .rd_en_i     (pb_rd_en),
    .rd_addr_i   (pb_rd_addr),
    .rd_bytes_i  (pb_rd_bytes),
    .rd_data_o   (pb_rd_data),
    .wr_en_i     (pb_wr_en),
    .wr_addr_i   (pb_wr_addr),
    .wr_bytes_i  (pb_wr_bytes),
    .wr_data_i   (pb_wr_data),
    .overflow_o  (pb_overflow),
    .emit_i      (pb_emit),
    .emit_lo_i   (meta_q[11:0]),
    .emit_hi_i   (end_q[11:0]),
    .emit_busy_o (pb_emit_busy),
    .out_valid_o (m_valid_o),
    .out_ready_i (m_ready_i),
    .out_data_o  (m_data_o),
    .out_keep_o  (m_keep_o),
    .out_last_o  (m_last_o)
  );

endmodule
