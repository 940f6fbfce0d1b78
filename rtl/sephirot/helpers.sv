`default_nettype none
// hXDP helper module: serves Sephirot's helper bus with the reference machine's helpers (crates/xdp/src/helpers.rs).
//
// Helper bus: hcall_i is high for one cycle with hcall_id_i and hcall_args_i (r1..r5, r1 in bits 63:0). The answer
// is one hret_valid_o pulse with hret_o (r0), hret_fault_o (the reference machine faults: the core ends the packet
// with XDP_ABORTED), hret_tail_o and hret_entry_o (a successful bpf_tail_call: continue at that bundle). Helpers
// without memory traffic answer in the cycle after hcall_i (the model's HELPER_CYCLES = 1).
//
// Memory port (mem_*): one access per cycle, the data-bus shape: mem_req_o with mem_we_o, mem_addr_o (region-tagged:
// 2 packet, 3 stack, 4 map value), mem_bytes_o (1, 2, 4 or 8), mem_wdata_o (low bytes); mem_rdata_i (bytes from bit
// 0) and mem_fault_i answer in the next cycle. A faulting write must not change memory. Tag-2 accesses are checked
// here against data_meta_i..data_end_i and never issued outside; any other tag than 2, 3, 4 faults without an access.
// A tag-2 read whose last byte is at or beyond pkt_ready_i waits (the APS is still storing the packet's frames).
// Buffers are moved in chunks of 8 bytes, then 4, 2, 1 for the rest; reads are pipelined one per cycle, copies take
// two cycles per chunk (read, then write). A range is known to lie wholly inside its region once its first chunk and
// its last byte have been accessed (regions are intervals and no length reaches 64 KiB), so a copy first reads the
// byte of its source or destination that the copy reaches last: nothing is written when the reference faults.
//
// Helpers (r0 and faults as the reference machine's; "fault" = hret_fault_o):
// - 1, 2, 3 map lookup/update/delete: the map handle (tag 5, a configured map, else fault), the key (key_size bytes)
//   and for 2 the value (value_size bytes) read into registers (fault outside their regions), then one request on
//   mreq_* (maps.sv req_*; op 0 lookup, 1 update with flags r4, 2 delete). r0: lookup hit -> region::map_value(map,
//   slot, 0), miss -> 0; update/delete -> mrsp_ret_i.
// - 5 bpf_ktime_get_ns: time_ns_i + cycles_i as sampled with hcall_i (the model passes its cycle count).
// - 12 bpf_tail_call: r2 must be a PROG_ARRAY handle (else fault). Below 33 tail calls this packet, a get request
//   (op 3, key r3[31:0]); an entry present names a program: in the program table (prog_*) -> hret_tail_o with its
//   entry bundle in hret_entry_o (the core restarts there with r1 = context), else fault (the reference's
//   program_ok). Absent, or 33 calls made: no tail. r0 is 0 either way, where the kernel leaves r0 alone: the verifier
//   marks r0 unreadable after bpf_tail_call (RET_VOID), so no verified program can tell.
// - 23 bpf_redirect: flags r2 != 0 -> XDP_ABORTED (0); else records (ifindex r1[31:0]) -> XDP_REDIRECT (4).
// - 51 bpf_redirect_map: r1 a DEVMAP, DEVMAP_HASH, CPUMAP or XSKMAP handle (else fault); flags r3 beyond the action
//   bits 1:0 (and BROADCAST 8, EXCLUDE_INGRESS 16 for DEVMAPs) -> XDP_ABORTED (0); a get request (key r2[31:0]): absent
//   and no BROADCAST -> r3 & 3; else records (map, key) -> XDP_REDIRECT (4).
// - 28 bpf_csum_diff: -EINVAL unless both sizes (u32) are multiples of 4 summing to at most 512; x86-64
//   csum_partial of `to` (seeded) minus that of `from`, folded to 16 bits (the kernel's 6.12+ result).
// - 44, 54, 65 adjust head/meta/tail: one adj_valid_o pulse with adj_kind_o (0 head, 1 tail, 2 meta) and
//   adj_delta_o = r2[31:0] (signed); r0 = adj_ret_i with the adj_done_i pulse (the APS checks and moves, as XdpBuff).
// - 69 bpf_fib_lookup: r3 as i32 below 64 or flags r4[31:0] beyond 0x3f -> -EINVAL (fib::check_call); SRC, TBID or
//   MARK (8, 16, 32) -> fault (not modelled, as in the reference); else the 64-byte struct at r2 is read (fault
//   outside its region), handed to fib.sv (fib_req_*, flags r4[31:0]), all 64 bytes of its answer written back, and
//   r0 = fib_rsp_ret_i.
// - 93, 94 spin lock/unlock: r1 must be a map value whose 4 bytes are readable, else fault; r0 = 0.
// - 188 bpf_xdp_get_buff_len: data_end_i - data_i.
// - 189, 190 bpf_xdp_load_bytes/store_bytes: -EFAULT when off or len (u32) exceed 0xffff, -EINVAL past data_end,
//   else the copy (packet -> r3, or r3 -> packet; backward when the destination lies above the source, as memmove)
//   and 0. A 0-byte load still checks r3 (the byte at r3 or the one before it must be readable).
// - 130 bpf_ringbuf_output: r1 the RINGBUF handle (else fault); flags r4 beyond 3 -> -EINVAL; r3 bytes at r2 read
//   (fault outside the region; r3 of 64 KiB or more always faults: no region is that large), then the record is
//   appended (ringbuf.sv) -> 0, or -EAGAIN when the reference's reserve fails. One RINGBUF map is served (another
//   raises rb_cfg_error_o and its calls fault); records the map has room for but RB_BYTES has not are dropped with
//   rb_overflow_o (sticky), r0 still 0 as in the reference. The host drains the records through rb_* (ringbuf.sv)
//   while no helper runs.
// - anything else: fault.
//
// Outcome record (cleared by start_i, the APS's new packet): redirect_valid_o, redirect_by_map_o, redirect_map_o,
// redirect_key_o, as the reference's Outcome::redirect (the last bpf_redirect/bpf_redirect_map that redirected).
//
// The maps configuration port (cfg_*, as maps.sv's) is watched for each map's type, key_size and value_size; a map
// never written does not exist (its handle faults, as the reference's map_arg).
//
// Latency, hcall_i to hret_valid_o (crates/rtlsim/tests/helpers.rs measures it with maps answering 2 cycles after
// acceptance, fib 4, the APS's adjust 1): 1 for 5, 23, 188 and every check that fails before memory is touched. A
// memory pass issues one access per cycle (a copy: two per chunk) and ends with the last answer; the call's first pass
// starts in the cycle after the call, later passes in the cycle they are decided. Map helpers 4-8 (a lookup with a key
// of up to 8 bytes: 5, its request going out with the key's last chunk; the model charges 2), 93/94 3, csum_diff up to
// 66, load/store_bytes up to 31 on 96 bytes, fib 20 + fib's latency, tail call and redirect_map 4-6, ringbuf_output up
// to 151 (1200 bytes), adjusts 2 + the APS's answer. The call's own cycle cannot issue an access: the core's call
// comes through its stack reads, which the stack port shares, so that would close a combinational loop through the
// core; hence the call decode is a block of its own, apart from what drives the memory port.
//
// Synthesis (Yosys 0.23 synth_xilinx -family xcup, defaults, with ringbuf.sv; 30 s): about 5.3k LUTs, 2.1k FFs,
// 270 CARRY4, 1 RAMB36 (the ring). The key and value registers with their byte merges and the 64-bit address adders
// dominate.
module helpers #(
  parameter integer MAPS        = 8,    // maps.sv MAPS
  parameter integer KEY_BYTES   = 16,   // maps.sv KEY_BYTES (here a multiple of 8)
  parameter integer VALUE_BYTES = 64,   // maps.sv VALUE_BYTES (a multiple of 8)
  parameter integer PROGS       = 16,   // program table entries (bpf_tail_call targets)
  parameter integer RB_BYTES    = 4096  // ring buffer storage (ringbuf.sv), a power of two
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     start_i,        // a new packet: clears the outcome record
  input  logic [63:0]              time_ns_i,      // the packet's timestamp
  input  logic [31:0]              cycles_i,       // the core's run_cycles_o
  // helper bus (from the core)
  input  logic                     hcall_i,
  input  logic [31:0]              hcall_id_i,
  input  logic [5*64-1:0]          hcall_args_i,
  output logic                     hret_valid_o,
  output logic [63:0]              hret_o,
  output logic                     hret_fault_o,
  output logic                     hret_tail_o,
  output logic [15:0]              hret_entry_o,
  // memory (tag 3 -> the core's hmem_*, tags 2 and 4 -> the APS's lane-0 path)
  output logic                     mem_req_o,
  output logic                     mem_we_o,
  output logic [63:0]              mem_addr_o,
  output logic [3:0]               mem_bytes_o,
  output logic [63:0]              mem_wdata_o,
  input  logic [63:0]              mem_rdata_i,
  input  logic                     mem_fault_i,
  // the packet's current page offsets
  input  logic [12:0]              data_meta_i,
  input  logic [12:0]              data_i,
  input  logic [12:0]              data_end_i,
  input  logic [12:0]              pkt_ready_i,    // page offsets below this hold the packet's stored bytes
  // maps configuration (watched)
  input  logic                     cfg_we_i,
  input  logic [7:0]               cfg_map_i,
  input  logic [31:0]              cfg_type_i,
  input  logic [31:0]              cfg_key_size_i,
  input  logic [31:0]              cfg_value_size_i,
  input  logic [31:0]              cfg_max_entries_i,
  // program table: entry bundle of each program of the image
  input  logic                     prog_we_i,
  input  logic [7:0]               prog_idx_i,
  input  logic [15:0]              prog_entry_i,
  // maps requests (maps.sv req_* / rsp_*)
  output logic                     mreq_valid_o,
  input  logic                     mreq_ready_i,
  output logic [1:0]               mreq_op_o,
  output logic [7:0]               mreq_map_o,
  output logic [8*KEY_BYTES-1:0]   mreq_key_o,
  output logic [8*VALUE_BYTES-1:0] mreq_value_o,
  output logic [63:0]              mreq_flags_o,
  input  logic                     mrsp_valid_i,
  input  logic [63:0]              mrsp_ret_i,
  input  logic                     mrsp_hit_i,
  input  logic [27:0]              mrsp_slot_i,
  input  logic [63:0]              mrsp_value_i,
  // APS adjust port
  output logic                     adj_valid_o,
  output logic [1:0]               adj_kind_o,
  output logic [31:0]              adj_delta_o,
  input  logic                     adj_done_i,
  input  logic [63:0]              adj_ret_i,
  // outcome record
  output logic                     redirect_valid_o,
  output logic                     redirect_by_map_o,
  output logic [7:0]               redirect_map_o,
  output logic [63:0]              redirect_key_o,
  // fib.sv request port
  output logic                     fib_req_valid_o,
  input  logic                     fib_req_ready_i,
  output logic [511:0]             fib_req_params_o,
  output logic [31:0]              fib_req_flags_o,
  input  logic                     fib_rsp_valid_i,
  input  logic [63:0]              fib_rsp_ret_i,
  input  logic [511:0]             fib_rsp_params_i,
  // ring buffer drain (host)
  output logic                     rb_present_o,   // a RINGBUF map is configured
  output logic [7:0]               rb_map_o,       // ... its index
  output logic                     rb_cfg_error_o, // sticky: a second RINGBUF map (one is served)
  output logic                     rb_overflow_o,  // sticky: a record the map had room for was dropped
  output logic                     rb_avail_o,
  output logic [31:0]              rb_len_o,
  input  logic                     rb_rd_i,
  input  logic [15:0]              rb_word_i,
  output logic [63:0]              rb_rdata_o,
  input  logic                     rb_pop_i
);

  localparam integer KW = KEY_BYTES / 8;          // key register words
  localparam integer VW = VALUE_BYTES / 8;        // value words sent to the maps module
  localparam integer BW = (VW > 8) ? VW : 8;      // the value register: values and the 64-byte fib struct
  localparam integer LW = 17;                     // lengths: up to 0x10000

  localparam [63:0] Efault = 64'hffff_ffff_ffff_fff2;  // -14
  localparam [63:0] Einval = 64'hffff_ffff_ffff_ffea;  // -22
  localparam [63:0] Eagain = 64'hffff_ffff_ffff_fff5;  // -11
  localparam [5:0]  MaxTailCalls = 6'd33;

  // States: idle, the memory passes, the maps request, the adjust request.
  localparam [4:0] StIdle   = 5'd0;
  localparam [4:0] StKey    = 5'd2;   // key -> key register
  localparam [4:0] StVal    = 5'd3;   // value -> value register
  localparam [4:0] StMreq   = 5'd4;   // maps request offered
  localparam [4:0] StMrsp   = 5'd5;   // maps response awaited
  localparam [4:0] StCsumF  = 5'd6;   // csum_diff `from`
  localparam [4:0] StCsumT  = 5'd7;   // csum_diff `to`
  localparam [4:0] StProbe  = 5'd8;   // one read whose data is dropped (lock word, copy's far byte)
  localparam [4:0] StProbe0 = 5'd9;   // 0-byte load_bytes: the byte at r3 (else the one before, in StProbe)
  localparam [4:0] StCopy   = 5'd10;  // load_bytes/store_bytes copy
  localparam [4:0] StAdj    = 5'd11;  // adjust request out, waiting for adj_done_i
  localparam [4:0] StLbPrep = 5'd12;  // load/store_bytes: the copy's geometry from the registered call
  localparam [4:0] StCsumM  = 5'd13;  // csum_diff: `from` folded, `to` starts
  localparam [4:0] StCsumE  = 5'd14;  // csum_diff: the result from the registered sums
  localparam [4:0] StFibRd  = 5'd15;  // bpf_fib_lookup: the struct -> value register
  localparam [4:0] StFibReq = 5'd16;  // fib request offered
  localparam [4:0] StFibRsp = 5'd17;  // fib response awaited
  localparam [4:0] StFibWr  = 5'd18;  // the struct as fib answered it -> memory
  localparam [4:0] StRing   = 5'd19;  // bpf_ringbuf_output: the data into the ring (or only read)
  localparam [4:0] StRingC  = 5'd20;  // commit and answer

  // Engine modes.
  localparam [1:0] ModeRead  = 2'd0;
  localparam [1:0] ModeCopy  = 2'd1;
  localparam [1:0] ModeWrite = 2'd2;  // the value register (fib struct) to memory, 8-byte chunks


  // ---------------------------------------------------------------------------------------------------------------
  // Maps as configured: present, key and value sizes (saturated at 0x10000: no region holds that many bytes).

  logic [MAPS-1:0] mdef_q;
  logic [MAPS-1:0] mprog_q;          // PROG_ARRAY (3)
  logic [MAPS-1:0] mredir_q;         // DEVMAP (14), CPUMAP (16), XSKMAP (17), DEVMAP_HASH (25)
  logic [MAPS-1:0] mdev_q;           // DEVMAP, DEVMAP_HASH: bpf_redirect_map takes BROADCAST, EXCLUDE_INGRESS
  logic [MAPS-1:0] mring_q;          // RINGBUF (27)
  logic [LW-1:0]   mks_q [MAPS];
  logic [LW-1:0]   mvs_q [MAPS];

  function automatic logic [LW-1:0] sat_len(input logic [31:0] v);
    sat_len = (v[31:16] != 16'd0) ? 17'h10000 : {1'b0, v[15:0]};
  endfunction

  integer m;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      mdef_q   <= '0;
      mprog_q  <= '0;
      mredir_q <= '0;
      mdev_q   <= '0;
      mring_q  <= '0;
      for (m = 0; m < MAPS; m = m + 1) begin
        mks_q[m] <= '0;
        mvs_q[m] <= '0;
      end
    end else if (cfg_we_i) begin
      for (m = 0; m < MAPS; m = m + 1) begin
        if (cfg_map_i == m[7:0]) begin
          mdef_q[m]   <= 1'b1;
          mprog_q[m]  <= cfg_type_i == 32'd3;
          mredir_q[m] <= cfg_type_i == 32'd14 || cfg_type_i == 32'd16 || cfg_type_i == 32'd17 ||
                         cfg_type_i == 32'd25;
          mdev_q[m]   <= cfg_type_i == 32'd14 || cfg_type_i == 32'd25;
          mring_q[m]  <= cfg_type_i == 32'd27;
          mks_q[m]    <= sat_len(cfg_key_size_i);
          mvs_q[m]  <= sat_len(cfg_value_size_i);
        end
      end
    end
  end

  // The ring buffer: the first RINGBUF map configured is served; another one is a configuration error.
  logic       ring_def_q, rb_cfg_error_q;
  logic [7:0] ring_map_q;
  logic       ring_cfg;
  assign ring_cfg = cfg_we_i && cfg_type_i == 32'd27 && (!ring_def_q || cfg_map_i == ring_map_q);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ring_def_q     <= 1'b0;
      ring_map_q     <= 8'd0;
      rb_cfg_error_q <= 1'b0;
    end else if (cfg_we_i && cfg_type_i == 32'd27) begin
      if (ring_cfg) begin
        ring_def_q <= 1'b1;
        ring_map_q <= cfg_map_i;
      end else begin
        rb_cfg_error_q <= 1'b1;
      end
    end
  end

  // Program table.
  logic [PROGS-1:0] prog_ok_q;
  logic [15:0]      prog_entry_q [PROGS];
  integer pg;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      prog_ok_q <= '0;
      for (pg = 0; pg < PROGS; pg = pg + 1) prog_entry_q[pg] <= 16'd0;
    end else if (prog_we_i) begin
      for (pg = 0; pg < PROGS; pg = pg + 1) begin
        if (prog_idx_i == pg[7:0]) begin
          prog_ok_q[pg]    <= 1'b1;
          prog_entry_q[pg] <= prog_entry_i;
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Call decode (combinational on the call's arguments).

  logic [63:0] c_a1, c_a2, c_a3, c_a4;
  logic [31:0] c_a5;                                   // only csum_diff's seed (u32) is used
  assign c_a1 = hcall_args_i[63:0];
  assign c_a2 = hcall_args_i[127:64];
  assign c_a3 = hcall_args_i[191:128];
  assign c_a4 = hcall_args_i[255:192];
  assign c_a5 = hcall_args_i[287:256];

  logic unused_args;
  assign unused_args = ^hcall_args_i[319:288];

  // The map handle (r2 for bpf_tail_call, else r1): tag 5 and a configured map, as the reference's map_arg.
  logic [63:0]     c_h;
  logic            c_map_ok, c_prog, c_redir, c_dev, c_ringt, c_ring;
  logic [7:0]      c_map;
  logic [LW-1:0]   c_ks, c_vs;
  integer cm;
  assign c_h = (hcall_id_i == 32'd12) ? c_a2 : c_a1;
  always_comb begin
    c_map_ok = 1'b0;
    c_prog   = 1'b0;
    c_redir  = 1'b0;
    c_dev    = 1'b0;
    c_ringt  = 1'b0;
    c_ring   = 1'b0;
    c_map    = c_h[7:0];
    c_ks     = '0;
    c_vs     = '0;
    for (cm = 0; cm < MAPS; cm = cm + 1) begin
      if (c_h[63:60] == 4'd5 && c_h[59:8] == 52'd0 && c_h[7:0] == cm[7:0] && mdef_q[cm]) begin
        c_map_ok = 1'b1;
        c_prog   = mprog_q[cm];
        c_redir  = mredir_q[cm];
        c_dev    = mdev_q[cm];
        c_ringt  = mring_q[cm];
        c_ring   = mring_q[cm] && ring_def_q && ring_map_q == cm[7:0];
        c_ks     = mks_q[cm];
        c_vs     = mvs_q[cm];
      end
    end
  end

  // bpf_redirect_map flags: the action in bits 1:0, BROADCAST (8) and EXCLUDE_INGRESS (16) for DEVMAPs only.
  logic c_rm_bad;
  assign c_rm_bad = (c_a3 & ~(64'd3 | (c_dev ? 64'h18 : 64'h0))) != 64'd0;

  // bpf_fib_lookup: fib::check_call (plen = r3 as i32 below 64, flags beyond the six known: -EINVAL); SRC, TBID,
  // MARK (8, 16, 32) are not modelled: the reference machine faults on them.
  logic c_fib_einval, c_fib_unsup;
  assign c_fib_einval = ($signed(c_a3[31:0]) < 32'sd64) || (c_a4[31:6] != 26'd0);
  assign c_fib_unsup  = c_a4[5:3] != 3'd0;

  // csum_diff sizes (u32).
  logic [32:0] c_csum_total;
  logic        c_csum_bad;
  assign c_csum_total = {1'b0, c_a2[31:0]} + {1'b0, c_a4[31:0]};
  assign c_csum_bad   = (c_a2[1:0] != 2'd0) || (c_a4[1:0] != 2'd0) || (c_csum_total > 33'd512);

  // load/store_bytes: offset r2 and length r4 as u32.
  logic        c_lb_efault, c_lb_einval;
  logic [13:0] c_lb_room;
  logic [16:0] c_lb_need;
  assign c_lb_efault = (c_a2[31:16] != 16'd0) || (c_a4[31:16] != 16'd0);
  assign c_lb_room   = {1'b0, data_end_i} - {1'b0, data_i};
  assign c_lb_need   = {1'b0, c_a2[15:0]} + {1'b0, c_a4[15:0]};
  assign c_lb_einval = c_lb_need > {3'b0, c_lb_room};

  // ---------------------------------------------------------------------------------------------------------------
  // State

  logic [4:0]    st_q;
  logic [7:0]    id_q;           // the helper being served (ids above 255 fault at the call)
  logic [63:0]   a2_q;           // r2: csum from_size, adjust delta, load/store_bytes offset, fib struct
  logic [63:0]   a3_q, a4_q;
  logic [31:0]   a5_q;           // r5: csum seed
  logic [7:0]    map_q;
  logic [LW-1:0] vs_q;           // value_size of map_q (update)
  logic [1:0]    mop_q;          // maps request op
  logic [63:0]   key_q [KW];
  logic [63:0]   val_q [BW];
  logic [5:0]    tc_q;           // tail calls this packet
  logic [63:0]   fib_ret_q;
  logic          ring_keep_q;    // the record fits: its data goes into the ring
  logic          ring_fit_q;     // the reference's reserve succeeds
  logic          rb_overflow_q;
  logic [63:0]   cs_q;           // csum_partial accumulator
  logic [31:0]   cs_from_q;      // csum_partial of `from`, folded to 32 bits

  logic          hret_valid_q, hret_fault_q, hret_tail_q;
  logic [63:0]   hret_q;
  logic [15:0]   hret_entry_q;

  logic          rd_valid_q, rd_by_map_q;
  logic [7:0]    rd_map_q;
  logic [63:0]   rd_key_q;

  logic          adj_valid_q;
  logic [1:0]    adj_kind_q;

  // Memory engine: a pass over [base, base + len): reads (ModeRead) or a copy to dst (ModeCopy).
  logic [1:0]    e_mode_q;
  logic [63:0]   e_src_q;        // source base
  logic [63:0]   e_dst_q;        // copy destination base
  logic [LW-1:0] e_rem_q;        // bytes not yet read
  logic [LW-1:0] e_pos_q;        // forward: bytes read so far
  logic          e_back_q;       // copy backward (from the end)
  logic          e_wr_q;         // copy: a read's data arrives, its write goes out now
  logic          fl_q;           // an access issued last cycle answers now
  logic          fl_bad_q;       // ... refused here: it faults
  logic [LW-1:0] fl_pos_q;       // its position in the buffer
  logic [3:0]    fl_size_q;      // its bytes

  // ---------------------------------------------------------------------------------------------------------------
  // Engine datapath

  // A pass starts. From the call (i_start, the call decode below): reads of i_len bytes at i_src, the first access in
  // the next cycle. From the control (p_start): reads of p_len bytes at p_src (forward), a copy to p_dst, or a write
  // of the value register; a read or copy issues its first access in this very cycle (p_launch).
  logic          p_start;
  logic [1:0]    p_mode;
  logic [63:0]   p_src, p_dst;
  logic [LW-1:0] p_len;
  logic          p_back;
  logic          p_launch;

  logic          e_on;           // a pass is running this cycle
  logic [3:0]    e_size;         // next read's bytes
  logic [LW-1:0] e_pos;          // next read's position
  logic [63:0]   e_rd_addr;
  logic [63:0]   e_wr_addr;
  logic [63:0]   e_rdata;        // the answer's bytes, the rest zero
  logic          e_fault;        // the answer due now faults
  logic          e_done;         // the pass ends this cycle without a fault
  logic          acc_req, acc_we, acc_ok, acc_wait;
  logic          acc_new;        // the access starts a new chunk (not a copy's write of the chunk just read)
  logic [63:0]   e_wword;        // write mode: the value register's word at e_pos
  logic [63:0]   acc_addr, acc_wdata;
  logic [3:0]    acc_bytes;

  assign e_on = (st_q == StKey) || (st_q == StVal) || (st_q == StCsumF) || (st_q == StCsumT) ||
                (st_q == StProbe) || (st_q == StProbe0) || (st_q == StCopy) || (st_q == StFibRd) ||
                (st_q == StFibWr) || (st_q == StRing);
  // StLbPrep, StCsumM start a pass (p_start) without running one.

  // The next chunk: of the pass the control starts now, else of the running one.
  logic [LW-1:0] g_rem, g_pos;
  logic          g_back;
  logic [63:0]   g_src;
  assign p_launch = p_start && p_mode != ModeWrite && p_len != '0;
  assign g_rem    = p_start ? p_len : e_rem_q;
  assign g_pos    = p_start ? '0 : e_pos_q;
  assign g_back   = p_start ? p_back : e_back_q;
  assign g_src    = p_start ? p_src : e_src_q;

  always_comb begin
    if (g_back) begin
      e_size = g_rem[0] ? 4'd1 : g_rem[1] ? 4'd2 : g_rem[2] ? 4'd4 : 4'd8;
      e_pos  = g_rem - {13'b0, e_size};
    end else begin
      e_size = (g_rem >= 17'd8) ? 4'd8 : (g_rem >= 17'd4) ? 4'd4 : (g_rem >= 17'd2) ? 4'd2 : 4'd1;
      e_pos  = g_pos;
    end
  end

  assign e_rd_addr = g_src + {47'b0, e_pos};
  assign e_wr_addr = e_dst_q + {47'b0, fl_pos_q};

  integer rb;
  always_comb begin
    for (rb = 0; rb < 8; rb = rb + 1) begin
      e_rdata[8*rb +: 8] = (rb[3:0] < fl_size_q) ? mem_rdata_i[8*rb +: 8] : 8'h00;
    end
  end

  assign e_fault = e_on && fl_q && (fl_bad_q || mem_fault_i);

  // The pass is over when nothing is left to read and no write is to go out; the answer due now (the last read's
  // data, or the last write's) is taken in this cycle.
  assign e_done = e_on && !e_fault && (e_rem_q == '0) && !e_wr_q;

  // The access of this cycle.
  always_comb begin
    acc_req   = 1'b0;
    acc_we    = 1'b0;
    acc_addr  = e_rd_addr;
    acc_bytes = e_size;
    acc_wdata = 64'd0;
    if (p_start) begin
      acc_req = p_launch;                                  // the new pass's first read
    end else if (e_on && !e_fault) begin
      if (e_mode_q == ModeCopy && e_wr_q) begin
        acc_req   = 1'b1;
        acc_we    = 1'b1;
        acc_addr  = e_wr_addr;
        acc_bytes = fl_size_q;
        acc_wdata = e_rdata;
      end else if (e_rem_q != '0) begin
        acc_req = 1'b1;
        if (e_mode_q == ModeWrite) begin
          acc_we    = 1'b1;
          acc_wdata = e_wword;
        end
      end
    end
  end
  assign acc_new = acc_req && !(e_mode_q == ModeCopy && e_wr_q);

  integer ew;
  always_comb begin
    e_wword = 64'd0;
    for (ew = 0; ew < BW; ew = ew + 1) begin
      if (e_pos[LW-1:3] == ew[LW-4:0]) e_wword = val_q[ew];
    end
  end

  // Region check: tags 2, 3, 4 only; packet accesses wholly inside data_meta..data_end.
  logic [13:0] acc_pkt_end;
  assign acc_pkt_end = {1'b0, acc_addr[12:0]} + {10'b0, acc_bytes};
  always_comb begin
    case (acc_addr[63:60])
      4'd2: acc_ok = (acc_addr[59:13] == '0) && (acc_addr[12:0] >= data_meta_i) &&
                     (acc_pkt_end <= {1'b0, data_end_i});
      4'd3, 4'd4: acc_ok = 1'b1;
      default: acc_ok = 1'b0;
    endcase
  end

  // a packet read of bytes not stored yet waits (reads of unstored frames give zeros)
  assign acc_wait    = acc_req && !acc_we && acc_ok && acc_addr[63:60] == 4'd2 && acc_pkt_end > {1'b0, pkt_ready_i};

  assign mem_req_o   = acc_req && acc_ok && !acc_wait;
  assign mem_we_o    = acc_we;
  assign mem_addr_o  = acc_addr;
  assign mem_bytes_o = acc_bytes;
  assign mem_wdata_o = acc_wdata;

  // ---------------------------------------------------------------------------------------------------------------
  // Checksum arithmetic

  // One's complement (end-around carry) additions.
  function automatic logic [63:0] add64c(input logic [63:0] a, input logic [63:0] b);
    logic [64:0] s;
    s = {1'b0, a} + {1'b0, b};
    add64c = s[63:0] + {63'b0, s[64]};
  endfunction

  function automatic logic [31:0] add32c(input logic [31:0] a, input logic [31:0] b);
    logic [32:0] s;
    s = {1'b0, a} + {1'b0, b};
    add32c = s[31:0] + {31'b0, s[32]};
  endfunction

  logic [31:0] cs_fold;        // csum_partial's result from the accumulator
  logic [31:0] cs_sum;         // the 32-bit partial sum csum_diff folds
  logic [31:0] cs_rot;
  logic [15:0] cs_result;
  assign cs_fold = add32c(cs_q[63:32], cs_q[31:0]);
  always_comb begin
    if (a2_q[31:0] == 32'd0 && a4_q[31:0] == 32'd0) cs_sum = a5_q[31:0];
    else if (a2_q[31:0] == 32'd0) cs_sum = cs_fold;
    else if (a4_q[31:0] == 32'd0) cs_sum = ~cs_from_q;
    else cs_sum = add32c(cs_fold, ~cs_from_q);
  end
  // csum_from32to16: the high half of sum + ror(sum, 16)
  assign cs_rot    = cs_sum + {cs_sum[15:0], cs_sum[31:16]};
  assign cs_result = cs_rot[31:16];
  logic unused_rot;
  assign unused_rot = ^cs_rot[15:0];

  // ---------------------------------------------------------------------------------------------------------------
  // Control

  logic [4:0]    st_d;
  logic          reply;          // answer this cycle's decision next cycle
  logic [63:0]   reply_r0;
  logic          reply_fault;
  logic          m_reply, m_fault, m_rec_set;
  logic [63:0]   m_r0, m_rec_key;
  logic [4:0]    m_st;
  logic          reply_tail;     // a successful bpf_tail_call, to reply_entry
  logic [15:0]   reply_entry;
  logic          tail_taken;
  logic          fib_take;       // the fib response goes into the value register
  logic          ring_commit;
  logic          ring_drop;      // a record the map has room for but the storage has not
  logic          rec_set;        // record a redirect
  logic          rec_by_map;
  logic [7:0]    rec_map;
  logic [63:0]   rec_key;
  logic          adj_go;
  logic [1:0]    adj_kind;
  logic          cs_init_to;     // StCsumM: keep the `from` sum, seed the accumulator

  // copy geometry for 189/190 (r2 offset in the packet, r3 the other buffer, r4 length)
  logic [63:0]   lb_pkt;
  logic [63:0]   lb_src, lb_dst;
  logic          lb_back;
  logic [63:0]   lb_far;
  assign lb_pkt  = {4'd2, 47'b0, data_i} + {48'b0, a2_q[15:0]};
  assign lb_src  = (id_q == 8'd189) ? lb_pkt : a3_q;
  assign lb_dst  = (id_q == 8'd189) ? a3_q : lb_pkt;
  assign lb_back = lb_dst > lb_src;
  // the byte of r3's range the copy reaches last
  assign lb_far  = lb_back ? a3_q : a3_q + {48'b0, a4_q[15:0]} - 64'd1;

  // The call decode, in a block of its own: what reads hcall_* must not feed the memory port (p_*, acc_*), or the
  // core's call, which comes through its stack reads, would loop back through the shared stack port.
  logic          i_reply, i_fault, i_rec_set, i_adj_go, i_start;
  logic [4:0]    i_st;
  logic [63:0]   i_r0, i_rec_key, i_src;
  logic [1:0]    i_adj_kind;
  logic [LW-1:0] i_len;
  always_comb begin
    i_st       = StIdle;
    i_reply    = 1'b0;
    i_r0       = 64'd0;
    i_fault    = 1'b0;
    i_rec_set  = 1'b0;
    i_rec_key  = 64'd0;
    i_adj_go   = 1'b0;
    i_adj_kind = 2'd0;
    i_start    = 1'b0;
    i_src      = 64'd0;
    i_len      = '0;
      if (hcall_i) begin
        if (hcall_id_i[31:8] != 24'd0) begin
          i_reply       = 1'b1;
          i_fault = 1'b1;
        end else begin
          case (hcall_id_i[7:0])
            8'd1, 8'd2, 8'd3: begin
              if (!c_map_ok) begin
                i_reply       = 1'b1;
                i_fault = 1'b1;
              end else begin
                i_st    = StKey;
                i_start = 1'b1;
                i_src   = c_a2;
                i_len   = c_ks;
              end
            end
            8'd5: begin
              i_reply    = 1'b1;
              i_r0 = time_ns_i + {32'b0, cycles_i};
            end
            8'd12: begin
              if (!c_map_ok || !c_prog) begin
                i_reply       = 1'b1;
                i_fault = 1'b1;
              end else if (tc_q >= MaxTailCalls) begin
                i_reply = 1'b1;                          // falls through: r0 is not the kernel's (see header)
              end else begin
                i_st = StMreq;                         // get entry r3 of the PROG_ARRAY
              end
            end
            8'd51: begin
              if (!c_map_ok || !c_redir) begin
                i_reply       = 1'b1;
                i_fault = 1'b1;
              end else if (c_rm_bad) begin
                i_reply = 1'b1;                          // XDP_ABORTED
              end else begin
                i_st = StMreq;                         // get entry r2: is it present?
              end
            end
            8'd69: begin
              if (c_fib_einval) begin
                i_reply    = 1'b1;
                i_r0 = Einval;
              end else if (c_fib_unsup) begin
                i_reply       = 1'b1;
                i_fault = 1'b1;
              end else begin
                i_st    = StFibRd;
                i_start = 1'b1;
                i_src   = c_a2;
                i_len   = 17'd64;
              end
            end
            8'd130: begin
              if (!c_map_ok || !c_ringt || !c_ring) begin
                i_reply       = 1'b1;                    // not a RINGBUF map (or one not served)
                i_fault = 1'b1;
              end else if (c_a4[63:2] != 62'd0) begin
                i_reply    = 1'b1;
                i_r0 = Einval;
              end else if (c_a3[63:16] != 48'd0) begin
                i_reply       = 1'b1;                    // no region holds that many bytes: the read faults
                i_fault = 1'b1;
              end else begin
                i_st    = StRing;
                i_start = 1'b1;
                i_src   = c_a2;
                i_len   = {1'b0, c_a3[15:0]};
              end
            end
            8'd23: begin
              i_reply = 1'b1;
              if (c_a2 != 64'd0) begin
                i_r0 = 64'd0;                      // XDP_ABORTED
              end else begin
                i_r0 = 64'd4;                      // XDP_REDIRECT
                i_rec_set  = 1'b1;
                i_rec_key  = {32'b0, c_a1[31:0]};
              end
            end
            8'd28: begin
              if (c_csum_bad) begin
                i_reply    = 1'b1;
                i_r0 = Einval;
              end else begin
                i_st    = StCsumF;
                i_start = 1'b1;
                i_src   = c_a1;
                i_len   = c_a2[LW-1:0];
              end
            end
            8'd44, 8'd54, 8'd65: begin
              i_st     = StAdj;
              i_adj_go   = 1'b1;
              i_adj_kind = (hcall_id_i[7:0] == 8'd44) ? 2'd0 : (hcall_id_i[7:0] == 8'd65) ? 2'd1 : 2'd2;
            end
            8'd93, 8'd94: begin
              if (c_a1[63:60] != 4'd4) begin
                i_reply       = 1'b1;
                i_fault = 1'b1;
              end else begin
                i_st    = StProbe;
                i_start = 1'b1;
                i_src   = c_a1;
                i_len   = 17'd4;
              end
            end
            8'd188: begin
              i_reply    = 1'b1;
              i_r0 = {50'b0, c_lb_room};
            end
            8'd189, 8'd190: begin
              if (c_lb_efault) begin
                i_reply    = 1'b1;
                i_r0 = Efault;
              end else if (c_lb_einval) begin
                i_reply    = 1'b1;
                i_r0 = Einval;
              end else if (c_a4[15:0] == 16'd0) begin
                if (hcall_id_i[7:0] == 8'd190) begin
                  i_reply = 1'b1;                        // nothing read, nothing written
                end else begin
                  i_st    = StProbe0;                  // the 0-byte store to r3 is still checked
                  i_start = 1'b1;
                  i_src   = c_a3;
                  i_len   = 17'd1;
                end
              end else begin
                i_st = StLbPrep;                       // lb_* follow from the registered call next cycle
              end
            end
            default: begin
              i_reply       = 1'b1;
              i_fault = 1'b1;
            end
          endcase
        end
      end
  end

  always_comb begin
    m_st        = st_q;
    m_reply       = 1'b0;
    m_r0    = 64'd0;
    m_fault = 1'b0;
    reply_tail  = 1'b0;
    reply_entry = 16'd0;
    tail_taken  = 1'b0;
    fib_take    = 1'b0;
    ring_commit = 1'b0;
    ring_drop   = 1'b0;
    m_rec_set     = 1'b0;
    rec_by_map  = 1'b0;
    rec_map     = 8'd0;
    m_rec_key     = 64'd0;
    p_start     = 1'b0;
    p_mode      = ModeRead;
    p_src       = 64'd0;
    p_dst       = 64'd0;
    p_len       = '0;
    p_back      = 1'b0;
    cs_init_to  = 1'b0;

    if (start_i) begin
      m_st = StIdle;                                       // a new packet: whatever ran is abandoned
    end else if (e_fault && st_q != StProbe0) begin
      m_reply       = 1'b1;
      m_fault = 1'b1;
    end else begin
      case (st_q)
        StIdle: ;                                          // the call decode below

        StKey: begin
          if (e_done) begin
            if (id_q == 8'd2) begin
              m_st    = StVal;
              p_start = 1'b1;
              p_src   = a3_q;
              p_len   = vs_q;
            end else begin
              m_st = mreq_ready_i ? StMrsp : StMreq;      // offered in this cycle already (m_early)
            end
          end
        end

        StVal: if (e_done) m_st = mreq_ready_i ? StMrsp : StMreq;

        StMreq: if (mreq_ready_i) m_st = StMrsp;

        StMrsp: begin
          if (mrsp_valid_i) begin
            m_reply = 1'b1;
            if (id_q == 8'd12) begin
              if (mrsp_hit_i) begin
                if (m_prog_ok) begin
                  reply_tail  = 1'b1;
                  reply_entry = m_prog_entry;
                  tail_taken  = 1'b1;
                end else begin
                  m_fault = 1'b1;                      // the program array names a program not loaded
                end
              end
            end else if (id_q == 8'd51) begin
              if (!mrsp_hit_i && !a3_q[3]) begin
                m_r0 = {62'd0, a3_q[1:0]};             // absent, no BROADCAST: the action in the flags
              end else begin
                m_r0   = 64'd4;                        // XDP_REDIRECT
                m_rec_set    = 1'b1;
                rec_by_map = 1'b1;
                rec_map    = map_q;
                m_rec_key    = {32'b0, a2_q[31:0]};
              end
            end else if (mop_q == 2'd0) begin
              m_r0 = mrsp_hit_i ? {4'd4, map_q, mrsp_slot_i, 24'd0} : 64'd0;
            end else begin
              m_r0 = mrsp_ret_i;
            end
          end
        end

        StFibRd: if (e_done) m_st = StFibReq;

        StFibReq: if (fib_req_ready_i) m_st = StFibRsp;

        StFibRsp: begin
          if (fib_rsp_valid_i) begin
            m_st     = StFibWr;                            // all 64 bytes back, whatever the answer
            fib_take = 1'b1;
            p_start  = 1'b1;
            p_mode   = ModeWrite;
            p_src    = a2_q;
            p_len    = 17'd64;
          end
        end

        StFibWr: begin
          if (e_done) begin
            m_reply    = 1'b1;
            m_r0 = fib_ret_q;
          end
        end

        StRing: if (e_done) m_st = StRingC;

        StRingC: begin
          m_reply       = 1'b1;
          m_r0    = ring_fit_q ? 64'd0 : Eagain;
          ring_commit = ring_keep_q;
          ring_drop   = ring_fit_q && !ring_keep_q;
        end

        StCsumF: if (e_done) m_st = StCsumM;

        StCsumM: begin
          m_st       = StCsumT;
          p_start    = 1'b1;
          p_src      = a3_q;
          p_len      = a4_q[LW-1:0];
          cs_init_to = 1'b1;
        end

        StCsumT: if (e_done) m_st = StCsumE;

        StCsumE: begin
          m_reply    = 1'b1;
          m_r0 = {48'b0, cs_result};
        end

        StLbPrep: begin
          m_st    = StProbe;                               // r3's far byte first
          p_start = 1'b1;
          p_src   = lb_far;
          p_len   = 17'd1;
        end

        StProbe: begin
          if (e_done) begin
            if ((id_q == 8'd189 || id_q == 8'd190) && a4_q[15:0] != 16'd0) begin
              m_st    = StCopy;
              p_start = 1'b1;
              p_mode  = ModeCopy;
              p_src   = lb_src;
              p_dst   = lb_dst;
              p_len   = {1'b0, a4_q[15:0]};
              p_back  = lb_back;
            end else begin
              m_reply = 1'b1;                                // lock word readable, or 0-byte store at r3 - 1
            end
          end
        end

        StProbe0: begin
          if (e_fault) begin
            m_st    = StProbe;                             // r3 itself is past the region's end: r3 - 1?
            p_start = 1'b1;
            p_src   = a3_q - 64'd1;
            p_len   = 17'd1;
          end else if (e_done) begin
            m_reply = 1'b1;
          end
        end

        StCopy: if (e_done) m_reply = 1'b1;

        StAdj: begin
          if (adj_done_i) begin
            m_reply    = 1'b1;
            m_r0 = adj_ret_i;
          end
        end

        default: m_st = StIdle;
      endcase
    end
    if (m_reply) m_st = StIdle;
  end

  // the call decode in the idle state, the control in every other
  logic idle;
  assign idle        = st_q == StIdle && !start_i;
  assign reply       = idle ? i_reply : m_reply;
  assign reply_r0    = idle ? i_r0 : m_r0;
  assign reply_fault = idle ? i_fault : m_fault;
  assign rec_set     = idle ? i_rec_set : m_rec_set;
  assign rec_key     = idle ? i_rec_key : m_rec_key;
  assign adj_go      = idle && i_adj_go;
  assign adj_kind    = i_adj_kind;
  assign st_d        = idle ? (i_reply ? StIdle : i_st) : m_st;

  // ---------------------------------------------------------------------------------------------------------------
  // The program a PROG_ARRAY entry names (bpf_tail_call): loaded (in the program table) and its entry bundle.

  logic        m_prog_ok;
  logic [15:0] m_prog_entry;
  integer mp;
  always_comb begin
    m_prog_ok    = 1'b0;
    m_prog_entry = 16'd0;
    for (mp = 0; mp < PROGS; mp = mp + 1) begin
      if (mrsp_value_i[31:0] == mp && prog_ok_q[mp]) begin
        m_prog_ok    = 1'b1;
        m_prog_entry = prog_entry_q[mp];
      end
    end
  end
  logic unused_value;
  assign unused_value = ^mrsp_value_i[63:32];

  // ---------------------------------------------------------------------------------------------------------------
  // The ring buffer

  logic        rb_fit, rb_room, rb_wr;
  logic [16:0] rb_len;
  assign rb_len = (st_q == StIdle) ? {1'b0, c_a3[15:0]} : {1'b0, a3_q[15:0]};
  assign rb_wr  = st_q == StRing && fl_q && !e_fault && ring_keep_q;

  ringbuf #(
    .BYTES (RB_BYTES)
  ) u_ring (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (ring_cfg),
    .cfg_size_i (cfg_max_entries_i),
    .len_i      (rb_len),
    .fit_o      (rb_fit),
    .room_o     (rb_room),
    .wr_i       (rb_wr),
    .wr_pos_i   (fl_pos_q[15:0]),
    .wr_bytes_i (fl_size_q),
    .wr_data_i  (e_rdata),
    .commit_i   (ring_commit),
    .avail_o    (rb_avail_o),
    .len_o      (rb_len_o),
    .rd_i       (rb_rd_i),
    .word_i     (rb_word_i),
    .rdata_o    (rb_rdata_o),
    .pop_i      (rb_pop_i)
  );

  // ---------------------------------------------------------------------------------------------------------------
  // The key and value registers with the answer of this cycle merged in: the maps request goes out in the cycle the
  // last chunk arrives (m_early), one cycle before the registers hold it.

  logic          e_take;         // a read's data arrives for the pass
  logic [63:0]   key_nx [KW];
  logic [63:0]   val_nx [BW];
  logic          m_early;
  assign e_take  = e_on && fl_q && !e_fault && e_mode_q == ModeRead;
  assign m_early = e_done && ((st_q == StKey && id_q != 8'd2) || st_q == StVal);
  integer kn;
  always_comb begin
    for (kn = 0; kn < KW; kn = kn + 1) begin
      key_nx[kn] = key_q[kn];
      if (st_q == StKey && e_take && fl_pos_q[LW-1:3] == kn[LW-4:0]) begin
        key_nx[kn] = merge(key_q[kn], e_rdata, fl_pos_q[2:0], fl_size_q);
      end
    end
    for (kn = 0; kn < BW; kn = kn + 1) begin
      val_nx[kn] = val_q[kn];
      if ((st_q == StVal || st_q == StFibRd) && e_take && fl_pos_q[LW-1:3] == kn[LW-4:0]) begin
        val_nx[kn] = merge(val_q[kn], e_rdata, fl_pos_q[2:0], fl_size_q);
      end
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Registers

  integer w;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q         <= StIdle;
      id_q         <= 8'd0;
      a2_q         <= 64'd0;
      a3_q         <= 64'd0;
      a4_q         <= 64'd0;
      a5_q         <= 32'd0;
      map_q        <= 8'd0;
      vs_q         <= '0;
      mop_q        <= 2'd0;
      for (w = 0; w < KW; w = w + 1) key_q[w] <= 64'd0;
      for (w = 0; w < BW; w = w + 1) val_q[w] <= 64'd0;
      tc_q         <= 6'd0;
      fib_ret_q    <= 64'd0;
      ring_keep_q  <= 1'b0;
      ring_fit_q   <= 1'b0;
      rb_overflow_q <= 1'b0;
      hret_tail_q  <= 1'b0;
      hret_entry_q <= 16'd0;
      cs_q         <= 64'd0;
      cs_from_q    <= 32'd0;
      hret_valid_q <= 1'b0;
      hret_fault_q <= 1'b0;
      hret_q       <= 64'd0;
      rd_valid_q   <= 1'b0;
      rd_by_map_q  <= 1'b0;
      rd_map_q     <= 8'd0;
      rd_key_q     <= 64'd0;
      adj_valid_q  <= 1'b0;
      adj_kind_q   <= 2'd0;
      e_mode_q     <= ModeRead;
      e_src_q      <= 64'd0;
      e_dst_q      <= 64'd0;
      e_rem_q      <= '0;
      e_pos_q      <= '0;
      e_back_q     <= 1'b0;
      e_wr_q       <= 1'b0;
      fl_q         <= 1'b0;
      fl_bad_q     <= 1'b0;
      fl_pos_q     <= '0;
      fl_size_q    <= 4'd0;
    end else begin
      st_q         <= st_d;
      hret_valid_q <= reply;
      hret_fault_q <= reply_fault;
      hret_q       <= reply_r0;
      hret_tail_q  <= reply_tail;
      hret_entry_q <= reply_entry;
      adj_valid_q  <= adj_go;
      if (start_i) tc_q <= 6'd0;
      else if (tail_taken) tc_q <= tc_q + 6'd1;
      if (ring_drop) rb_overflow_q <= 1'b1;
      if (fib_take) begin
        fib_ret_q <= fib_rsp_ret_i;
        for (w = 0; w < 8; w = w + 1) val_q[w] <= fib_rsp_params_i[64*w +: 64];
      end
      if (adj_go) adj_kind_q <= adj_kind;

      if (st_q == StIdle && hcall_i) begin
        id_q  <= hcall_id_i[7:0];
        a2_q  <= c_a2;
        a3_q  <= c_a3;
        a4_q  <= c_a4;
        a5_q  <= c_a5;
        map_q <= c_map;
        vs_q  <= c_vs;
        mop_q <= (hcall_id_i[7:0] == 8'd2) ? 2'd1 : (hcall_id_i[7:0] == 8'd3) ? 2'd2 :
                 (hcall_id_i[7:0] == 8'd12 || hcall_id_i[7:0] == 8'd51) ? 2'd3 : 2'd0;
        for (w = 0; w < KW; w = w + 1) key_q[w] <= 64'd0;
        for (w = 0; w < BW; w = w + 1) val_q[w] <= 64'd0;
        // the get op's key: the PROG_ARRAY index (r3) or the redirect map's key (r2), as u32
        if (hcall_id_i[7:0] == 8'd12) key_q[0] <= {32'b0, c_a3[31:0]};
        if (hcall_id_i[7:0] == 8'd51) key_q[0] <= {32'b0, c_a2[31:0]};
        ring_fit_q  <= rb_fit;
        ring_keep_q <= rb_fit && rb_room;
        // csum_diff: `from` is summed from ~seed when `to` is empty, else from 0
        cs_q  <= (c_a4[31:0] == 32'd0) ? {32'b0, ~c_a5} : 64'd0;
      end

      // the engine
      if (p_start) begin
        e_mode_q <= p_mode;
        e_src_q  <= p_src;
        e_dst_q  <= p_dst;
        e_back_q <= p_back;
        fl_q     <= acc_req && !acc_wait;
        fl_bad_q <= acc_req && !acc_ok;
        if (acc_req && !acc_wait) begin
          fl_pos_q  <= e_pos;
          fl_size_q <= e_size;
          e_rem_q   <= p_len - {13'b0, e_size};
          e_pos_q   <= p_back ? '0 : {13'b0, e_size};
          e_wr_q    <= p_mode == ModeCopy;
        end else begin
          e_rem_q   <= p_len;
          e_pos_q   <= '0;
          e_wr_q    <= 1'b0;
        end
      end else if (idle && i_start) begin
        e_mode_q <= ModeRead;
        e_src_q  <= i_src;
        e_dst_q  <= 64'd0;
        e_rem_q  <= i_len;
        e_pos_q  <= '0;
        e_back_q <= 1'b0;
        e_wr_q   <= 1'b0;
        fl_q     <= 1'b0;
        fl_bad_q <= 1'b0;
      end else if (e_on && !e_fault) begin
        fl_q     <= acc_req && !acc_wait;
        fl_bad_q <= acc_req && !acc_ok;
        if (acc_new && !acc_wait) begin
          fl_pos_q  <= e_pos;
          fl_size_q <= e_size;
          e_rem_q   <= e_rem_q - {13'b0, e_size};
          if (!e_back_q) e_pos_q <= e_pos_q + {13'b0, e_size};
        end
        if (e_mode_q == ModeCopy) e_wr_q <= acc_req && !acc_we && !acc_wait;
      end else begin
        fl_q     <= 1'b0;
        fl_bad_q <= 1'b0;
      end

      // data of a read answered now
      if (e_on && fl_q && !e_fault && !(e_mode_q == ModeCopy)) begin
        if (st_q == StKey) begin
          for (w = 0; w < KW; w = w + 1) key_q[w] <= key_nx[w];
        end
        if (st_q == StVal || st_q == StFibRd) begin
          for (w = 0; w < BW; w = w + 1) val_q[w] <= val_nx[w];
        end
        if (st_q == StCsumF || st_q == StCsumT) cs_q <= add64c(cs_q, e_rdata);
      end
      if (cs_init_to) begin
        cs_from_q <= cs_fold;
        cs_q      <= {32'b0, a5_q[31:0]};
      end

      // outcome record
      if (start_i) begin
        rd_valid_q  <= 1'b0;
        rd_by_map_q <= 1'b0;
        rd_map_q    <= 8'd0;
        rd_key_q    <= 64'd0;
      end else if (rec_set) begin
        rd_valid_q  <= 1'b1;
        rd_by_map_q <= rec_by_map;
        rd_map_q    <= rec_map;
        rd_key_q    <= rec_key;
      end
    end
  end

  // Bytes [off, off + size) of word `old` replaced by the low bytes of `data` (size 1, 2, 4 or 8; off 0, 4 or 6).
  function automatic logic [63:0] merge(input logic [63:0] old, input logic [63:0] data, input logic [2:0] off,
                                        input logic [3:0] size);
    logic [63:0] shifted;
    logic [3:0]  lo, hi;
    integer      b;
    merge   = old;
    shifted = data << {off, 3'b000};
    lo      = {1'b0, off};
    hi      = lo + size;
    for (b = 0; b < 8; b = b + 1) begin
      if (b[3:0] >= lo && b[3:0] < hi) merge[8*b +: 8] = shifted[8*b +: 8];
    end
  endfunction

  // ---------------------------------------------------------------------------------------------------------------
  // Outputs

  assign hret_valid_o = hret_valid_q;
  assign hret_o       = hret_q;
  assign hret_fault_o = hret_fault_q;
  assign hret_tail_o  = hret_tail_q;
  assign hret_entry_o = hret_entry_q;

  assign mreq_valid_o = st_q == StMreq || m_early;
  assign mreq_op_o    = mop_q;
  assign mreq_map_o   = map_q;
  assign mreq_flags_o = a4_q;
  integer ok;
  always_comb begin
    for (ok = 0; ok < KW; ok = ok + 1) mreq_key_o[64*ok +: 64] = key_nx[ok];
    for (ok = 0; ok < VW; ok = ok + 1) mreq_value_o[64*ok +: 64] = val_nx[ok];
  end

  assign adj_valid_o = adj_valid_q;
  assign adj_kind_o  = adj_kind_q;
  assign adj_delta_o = a2_q[31:0];

  assign redirect_valid_o  = rd_valid_q;
  assign redirect_by_map_o = rd_by_map_q;
  assign redirect_map_o    = rd_map_q;
  assign redirect_key_o    = rd_key_q;

  assign fib_req_valid_o = st_q == StFibReq;
  assign fib_req_flags_o = a4_q[31:0];
  integer fo;
  always_comb begin
    for (fo = 0; fo < 8; fo = fo + 1) fib_req_params_o[64*fo +: 64] = val_q[fo];
  end

  assign rb_present_o   = ring_def_q;
  assign rb_map_o       = ring_map_q;
  assign rb_cfg_error_o = rb_cfg_error_q;
  assign rb_overflow_o  = rb_overflow_q;

endmodule
