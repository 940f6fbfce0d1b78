`default_nettype none
// Sephirot: the hXDP VLIW core, a four-stage pipeline (fetch, decode, execute, commit) running docs/isa-hxdp.md images.
//
// Stages and what each does with one bundle of LANES slots:
// - IF: the bundle at fetch_pc_q is read from the instruction memory (synchronous block RAM).
// - ID: every lane decodes its slot and reads its operands from the register file's next state (so the commit
//   stage's writes are seen) or, forwarded, from the same lane's execute stage; a helper's result (r0) is
//   forwarded to every lane. Memory addresses are formed here: context fields are selected and tag-2/tag-4 loads
//   (and atomics' reads) go out on the lane's data bus; every lane's address also goes to the stack (stack.sv,
//   synchronous RAM), which reads it at the edge and tracks it while the bundle is in IE. Stack and context
//   accesses, and packet stores (against ctx_data_meta_i and ctx_data_end_i, which must follow the packet's current
//   bounds), are checked here.
// - IE: ALU (alu.sv per lane without divider, one shared multi-cycle divider, divider.sv), stack data (as the memory is in this cycle:
//   stack.sv forwards the previous bundle's stores, written at the edge the read was made at), bus data and faults
//   arrive, the helper is called (r1-r5 as read in ID) and
//   waited for, stores go out in lane order (data bus or stack), and control is resolved: a tail call first, then
//   the lowest lane whose jump is taken, or that exits or calls. A taken transfer squashes the two younger bundles.
// - commit: register results, exit K's r0, a tail call's r1, and the frame push/pop of bpf-to-bpf calls and
//   returns; a data-bus store fault arrives here. An exit with no caller frame ends the packet here.
//
// Decode waits, each as crates/hxdp/src/core.rs charges it: a bundle reading a register the previous bundle writes
// on another lane waits one cycle in ID (forwarding is per lane); so does one whose bus load reads bytes the bundle
// in IE stores (stores happen in IE, bus loads start in ID), or that needs more bus ports than the IE bundle's
// stores leave free (a load whose own port carries a store borrows a free one) -- these overlap, one cycle in all.
// A bundle with a packet load (or atomic) that will succeed (within ctx_data_meta_i..ctx_data_end_i) and whose last
// byte is at or beyond pkt_ready_i waits in ID until it is stored; a load that faults does not wait, and stores
// never wait (the packet buffer's difference buffer holds them over the frames still to come). An `exit K` alone in
// its bundle ends the packet from ID when nothing older can still change the outcome (the bundle in IE, if any,
// completes now, falls through and stores nothing to a map value).
//
// pkt_ready_i: page offsets below it hold stored packet bytes, as the APS has them: with frame k (32 bytes, from
// page offset 256) written in the packet's cycle k (start_i's cycle being the first), pkt_ready_i is 256 + 32 * (k -
// 1) in cycle k, and the page's end (4096) once every frame is written (so that bytes a bpf_xdp_adjust_tail grows
// are readable then). The model's wait_for_packet is exactly this; held at 4096 it is the model's
// set_packet_present(true).
//
// Data bus (one port per lane, for tag 2 packet and tag 4 map-value addresses): a request holds dbus_req_o with
// dbus_we_o, dbus_addr_o (the tagged address), dbus_bytes_o (1, 2, 4, 6 or 8) and, for writes, dbus_wdata_o (the
// value in its low bytes). The answer comes in the next cycle, always (fixed latency 1): dbus_rdata_i holds the
// bytes read little-endian from bit 0 for a read, dbus_fault_i is high when the access lies outside its region. A
// faulting write must not change memory. (Packet stores outside the packet never reach the bus; a map-value store
// that faults ends the program in commit, when the stores of its bundle's other lanes have been made.) Reads never
// have side effects: a read may be issued again, or for a bundle that then does not execute. A read and a write
// issued in the same cycle (on different lanes) never touch the same bytes.
//
// Helper bus: hcall_o is high for one cycle with hcall_id_o and hcall_args_o (r1..r5, r1 in the low 64 bits);
// the helper answers hret_valid_i for one cycle, at least one cycle later, with hret_i (r0) and hret_fault_i.
// run_cycles_o is the running packet's cycle number (start_i's cycle is 1; valid while busy_o): in the cycle of
// hcall_o it is the cycle the model passes to the helper (virtual time, bpf_ktime_get_ns = arrival + it), and
// cycles_o is its value in the packet's last cycle. bpf_tail_call (helper 12): hret_tail_i with hret_valid_i says it
// succeeded; the core continues at bundle hret_entry_i (the program's entry) with r1 = the context, r2-r10, the
// stack and the call frames as they are (the reference machine's semantics: a tail call from a bpf-to-bpf function
// returns to that function's caller), as a taken branch (+2). Whether or not it succeeds, helper 12 leaves r0 as it
// was (hret_i is ignored: the reference's helper returns r0 unchanged, and the bus does not carry r0).
//
// Helper stack port (hmem_*): while the core waits on the helper bus (after hcall_o, before hret_valid_i), the
// helper may make one stack access a cycle: hmem_req_i with hmem_we_i, hmem_addr_i (tag 3), hmem_bytes_i (1..8) and
// hmem_wdata_i (low bytes). The answer is there in the next cycle: hmem_rdata_o (bytes little-endian from bit 0) and
// hmem_fault_o. It faults, changing nothing, outside what the reference machine lets a helper touch on the stack --
// ending beyond r10 (the current frame's top; the callers' frames below it are fine) or the stack -- and for a
// request outside a helper wait, another tag, or another size. It borrows lane 0's stack read port (the stack has a
// write copy of its own for the helper): the helper's bundle's own stack loads keep the values they read on entering
// IE (the model's loads come before the helper), its stores and atomics come after the helper's answer.
//
// Timing against crates/hxdp/src/timing.rs (crates/rtlsim/tests/sephirot.rs checks equality on every program, the
// packet arriving and present): one bundle per cycle, START 1 (the start_i cycle), taken branch/call/return/tail
// call +2, decode waits as above, a bundle with a div or mod +17 in IE before anything else of it happens (the shared
// divider: its start cycle and 16 cycles of four quotient bits; the model's DIV_CYCLES; the helper call of such a
// bundle goes out after it), helper latency as the helper bus answers (the model's helper_cycles), drain 3
// after the exiting bundle's fetch, early exit 1, a fault or checked-load verdict 2 after its bundle's fetch (known
// in IE; a map-value store's bus fault 3, in commit). Inexact: falling off the program (the core runs on through
// the instruction memory's empty rows and faults past IMEM_BUNDLES; the model faults at the image's end), helpers
// whose module takes longer than the model's helper_cycles (maps, stack and packet accesses), and the model's
// bundle budget, not executed (a looping program runs until the next start_i).
//
// Known differences in results (none exercised by compiled programs: a helper's bundle holds no stores, see
// crates/hxdp/src/sched.rs): a map-value store that faults on the bus does not stop the map-value stores of higher
// lanes of its bundle (the model stops at the faulting lane; packet stores are exact); an atomic on the data bus
// reads memory as it was before its bundle (the model: after lower lanes' stores of the same bundle).
//
// Synthesis (Yosys 0.23 synth_xilinx -family xcup, LANES=4, IMEM_BUNDLES=64, STACK_FRAMES=1; `hwxdp synth --target
// hxdp --top sephirot --lanes 4 --imem-bundles 64 --stack-frames 1`, 161 s on a loaded machine): about 59.3k LUTs,
// 1.9k LUTs as RAM, 8.6k FFs, 2.4k CARRY4, 40 DSP48E2, no latch (before the shared divider and the RAM stack: 141k
// LUTs, 9.1k FFs, 40 DSP48E2). The lanes share one divider (the compiler puts at most one div/mod in a bundle), which
// saved about three of the four 15k-LUT combinational dividers; the shared one is now sequential (divider.sv, four
// quotient bits a cycle, 1.1k LUTs and 0.3k FFs in place of the 13.8k-LUT array of alu.sv's DIV_ONLY form; the
// figures above are from before). The stack (stack.sv) is a RAM copy per writer, read a cycle ahead from ID, with a live-value table in flip-flops: alone, at 4 lanes, about 16.7k
// LUTs and 200 RAM32M16 for one frame and 21.9k LUTs, 3.5k FFs and 40 RAMB36E2 for the default eight frames (the
// flip-flop stack it replaces took about 56k LUTs per frame). With the default eight frames (`--stack-frames 8`,
// 215 s) the whole core is about 63.8k LUTs, 320 LUTs as RAM, 9.8k FFs, 40 RAMB36E2, 40 DSP48E2, no latch.
//
// A packet: start_i (one cycle) clears the registers (r1 = context, r10 = top of the first stack frame), the stack
// and the call frames and starts at entry_i. Resumed (docs/warp.md, the Warp Engine's hook): start_i with
// resume_i sets r0-r9 from resume_regs_i instead and leaves the stack as it is; before it, while the core is idle,
// sclear_i clears the stack and each swr_i cycle writes swr_bytes_i (1..8) bytes of swr_data_i at stack byte
// swr_addr_i through the helper's write copy (one write a cycle, applied in order). done_o rises with verdict_o, fault_o and cycles_o (cycles from the
// start_i cycle through the last cycle of work) and stays until the next start_i.
module sephirot #(
  parameter integer LANES        = 4,     // slots per bundle, 1..8
  parameter integer IMEM_BUNDLES = 1024,  // instruction memory depth in bundles, at most 65536
  parameter integer STACK_FRAMES = 8      // 512-byte stack frames (call depth)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  // instruction memory loading
  input  logic                 imem_we_i,
  input  logic [15:0]          imem_addr_i,    // bundle
  input  logic [2:0]           imem_lane_i,
  input  logic [63:0]          imem_slot_i,
  // packet start and result
  input  logic [15:0]          entry_i,
  input  logic                 start_i,
  input  logic                 resume_i,        // with start_i: r0-r9 from resume_regs_i, the stack kept
  input  logic [10*64-1:0]     resume_regs_i,   // r0 in the low 64 bits
  input  logic                 sclear_i,        // idle core: clear the stack
  input  logic                 swr_i,           // idle core: write the stack (after sclear_i)
  input  logic [15:0]          swr_addr_i,      // stack byte address (frame 0 is 0..511, r10 = 512)
  input  logic [3:0]           swr_bytes_i,
  input  logic [63:0]          swr_data_i,
  input  logic [63:0]          ctx_data_i,      // region-tagged packet pointers, as the context holds them
  input  logic [63:0]          ctx_data_end_i,
  input  logic [63:0]          ctx_data_meta_i,
  input  logic [31:0]          ctx_ifindex_i,
  input  logic [31:0]          ctx_rxq_i,
  input  logic [12:0]          pkt_ready_i,     // page offsets below this hold stored packet bytes (see the header)
  output logic                 busy_o,
  output logic                 done_o,
  output logic [31:0]          verdict_o,
  output logic                 fault_o,
  output logic [31:0]          cycles_o,
  output logic [31:0]          run_cycles_o,    // the running packet's cycle number (the start_i cycle is 1)
  // data bus, one port per lane
  output logic [LANES-1:0]     dbus_req_o,
  output logic [LANES-1:0]     dbus_we_o,
  output logic [LANES*64-1:0]  dbus_addr_o,
  output logic [LANES*4-1:0]   dbus_bytes_o,
  output logic [LANES*64-1:0]  dbus_wdata_o,
  input  logic [LANES*64-1:0]  dbus_rdata_i,
  input  logic [LANES-1:0]     dbus_fault_i,
  // helper bus
  output logic                 hcall_o,
  output logic [31:0]          hcall_id_o,
  output logic [5*64-1:0]      hcall_args_o,
  input  logic                 hret_valid_i,
  input  logic [63:0]          hret_i,
  input  logic                 hret_fault_i,
  input  logic                 hret_tail_i,     // with hret_valid_i: a tail call into bundle hret_entry_i
  input  logic [15:0]          hret_entry_i,
  // the helper module's stack port (tag-3 addresses), served while the core waits on the helper bus
  input  logic                 hmem_req_i,
  input  logic                 hmem_we_i,
  input  logic [63:0]          hmem_addr_i,
  input  logic [3:0]           hmem_bytes_i,
  input  logic [63:0]          hmem_wdata_i,
  output logic [63:0]          hmem_rdata_o,
  output logic                 hmem_fault_o
);

  localparam integer AW       = (IMEM_BUNDLES > 1) ? $clog2(IMEM_BUNDLES) : 1;
  localparam integer SAW      = $clog2(STACK_FRAMES * 512);
  localparam [60:0]  StackEnd = STACK_FRAMES * 512;
  localparam [63:0]  CtxPtr   = 64'h1000_0000_0000_0000;  // region::context()
  localparam [63:0]  StackTop = 64'h3000_0000_0000_0200;  // region::stack(512)
  localparam integer FW       = $clog2(STACK_FRAMES + 1);
  localparam integer DIV_STEPS = 4;  // quotient bits per cycle of the shared divider (timing::DIV_CYCLES = 64/4 + 1)
  // Memory kinds of a lane's access.
  localparam [1:0]   KindNone  = 2'd0;
  localparam [1:0]   KindCtx   = 2'd1;
  localparam [1:0]   KindStack = 2'd2;
  localparam [1:0]   KindBus   = 2'd3;

  integer l;
  integer j;
  integer r;

  logic unused_addr;
  assign unused_addr = ^{imem_addr_i, swr_addr_i};

  // ---------------------------------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------------------------------
  logic        run_q;          // fetching
  logic        busy_q;
  logic [15:0] fetch_pc_q;
  logic [31:0] cnt_q;
  logic        done_q;
  logic [31:0] verdict_q;
  logic        fault_q;
  logic [31:0] cycles_q;

  // ID
  logic                 id_valid_q;
  logic [15:0]          id_pc_q;
  logic [LANES*64-1:0]  id_slots;

  // IE, per lane
  logic                 ie_valid_q;
  logic                 ie_fresh_q;     // the bundle entered IE at the last edge: bus and stack answers are for it
  logic [15:0]          ie_pc_q;
  logic                 ie_fell_q;      // fetched past the instruction memory
  logic [LANES-1:0]     ie_any_q, ie_alu_q, ie_wide_q, ie_x_q, ie_lddw_q, ie_load_q, ie_sext_q, ie_checked_q;
  logic [LANES-1:0]     ie_store_q, ie_mfault_q, ie_cond_q, ie_condv_q, ie_ja_q, ie_exit_q, ie_exitk_q;
  logic [LANES-1:0]     ie_hcall_q, ie_lcall_q, ie_wen_q, ie_atomic_q;
  logic [LANES*4-1:0]   ie_op_q, ie_bytes_q, ie_wreg_q;
  logic [LANES*2-1:0]   ie_kind_q;
  logic [LANES*16-1:0]  ie_aluoff_q, ie_off_q;
  logic [LANES*32-1:0]  ie_imm_q, ie_verdict_q;
  logic [LANES*64-1:0]  ie_a_q, ie_b_q, ie_lddwval_q, ie_addr_q, ie_wdata_q, ie_ctxval_q;
  logic [LANES*64-1:0]  ie_ldraw_h_q;
  logic [LANES-1:0]     ie_ldflt_h_q;
  logic [LANES*3-1:0]   ie_port_q;      // the bus port each lane's read went out on
  logic [5*64-1:0]      ie_args_q;
  logic [31:0]          ie_hid_q;
  logic                 hc_issued_q;

  // commit
  logic                 c_valid_q;
  logic [LANES-1:0]     c_wen_q;
  logic [LANES*4-1:0]   c_wreg_q;
  logic [LANES*64-1:0]  c_wval_q;
  logic                 c_hwen_q;
  logic [63:0]          c_hval_q;
  logic                 c_exitk_q;
  logic [63:0]          c_k_q;
  logic                 c_final_q;
  logic                 c_push_q;
  logic                 c_pop_q;
  logic [15:0]          c_retpc_q;
  logic [LANES-1:0]     c_dbst_q;
  logic                 c_tail_q;       // the bundle in commit tail-called: r1 = context

  // helper stack port
  logic                 hmem_bad;       // the request lies outside what a helper may touch, or comes unasked
  logic [60:0]          hmem_end;
  logic                 hmem_fault_q;

  // call frames
  logic [FW-1:0]                depth_q;
  logic [STACK_FRAMES*16-1:0]   frame_pc_q;
  logic [STACK_FRAMES*256-1:0]  frame_regs_q;

  // ---------------------------------------------------------------------------------------------------------------
  // Register file, instruction memory, stack
  // ---------------------------------------------------------------------------------------------------------------
  logic [11*64-1:0]     regs_next;
  logic                 rf_r0_we;
  logic [63:0]          rf_r0;
  logic                 rf_restore;
  logic [4*64-1:0]      rf_frame;
  logic                 rf_push;
  logic                 c_kill;         // a data-bus store of the bundle in commit faulted

  assign c_kill = c_valid_q && |(c_dbst_q & dbus_fault_i);

  regfile #(.LANES(LANES)) u_regfile (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .clear_i      (start_i),
    .clear_r1_i   (CtxPtr),
    .clear_r10_i  (StackTop),
    .load_i       (resume_i),
    .load_regs_i  (resume_regs_i),
    .we_i         (c_valid_q ? c_wen_q : {LANES{1'b0}}),
    .waddr_i      (c_wreg_q),
    .wdata_i      (c_wval_q),
    .r0_we_i      (rf_r0_we),
    .r0_i         (rf_r0),
    .tail_i       (c_valid_q && c_tail_q),
    .restore_i    (rf_restore),
    .frame_regs_i (rf_frame),
    .push_i       (rf_push),
    .next_o       (regs_next)
  );

  logic        imem_rd_en;
  logic        id_take;       // ID takes the bundle being fetched at this edge

  imem #(.LANES(LANES), .BUNDLES(IMEM_BUNDLES), .AW(AW)) u_imem (
    .clk_i      (clk_i),
    .we_i       (imem_we_i),
    .wr_addr_i  (imem_addr_i[AW-1:0]),
    .wr_lane_i  (imem_lane_i),
    .wr_slot_i  (imem_slot_i),
    .rd_en_i    (imem_rd_en),
    .rd_addr_i  (fetch_pc_q[AW-1:0]),
    .rd_slots_o (id_slots)
  );

  logic [LANES*SAW-1:0] stk_rd_addr;    // ID's addresses: the stack reads them a cycle ahead and tracks them in IE
  logic [LANES*64-1:0]  stk_rd_data;
  logic [LANES-1:0]     stk_we;
  logic [LANES*4-1:0]   stk_wr_bytes;
  logic [LANES*64-1:0]  x_stdata;       // what each lane stores: its value, or an atomic's new value
  logic                 ie_hold;        // waiting for the helper
  logic                 hmem_act;       // a good helper stack request: it takes lane 0's stack read port this cycle
  logic [63:0]          hmem_rdata;

  stack #(.LANES(LANES), .FRAMES(STACK_FRAMES), .AW(SAW)) u_stack (
    .clk_i      (clk_i),
    .clear_i    ((start_i && !resume_i) || sclear_i),
    .rd_addr_i  (stk_rd_addr),
    .hold_i     (ie_hold),
    .rd_data_o  (stk_rd_data),
    .we_i       (stk_we),
    .wr_bytes_i (stk_wr_bytes),
    .wr_data_i  (x_stdata),
    .hreq_i     (hmem_act || swr_i),
    .hwe_i      (swr_i || hmem_we_i),
    .haddr_i    (swr_i ? swr_addr_i[SAW-1:0] : hmem_addr_i[SAW-1:0]),
    .hbytes_i   (swr_i ? swr_bytes_i : hmem_bytes_i),
    .hwdata_i   (swr_i ? swr_data_i : hmem_wdata_i),
    .hrdata_o   (hmem_rdata)
  );

  // ---------------------------------------------------------------------------------------------------------------
  // ID: decode
  // ---------------------------------------------------------------------------------------------------------------
  logic [LANES-1:0]     d_alu, d_wide, d_x, d_lddw, d_load, d_sext, d_checked, d_store, d_stimm, d_atomic;
  logic [LANES-1:0]     d_cond, d_condv, d_ja, d_exit, d_exitk, d_hcall, d_lcall, d_writes, d_any;
  logic [LANES*4-1:0]   d_op, d_bytes, d_dst, d_src, d_ra;
  logic [LANES*16-1:0]  d_aluoff, d_off;
  logic [LANES*32-1:0]  d_imm, d_verdict;
  logic [LANES*64-1:0]  d_imm64, d_lddwval;
  logic [LANES*11-1:0]  d_reads;

  genvar g;
  generate
    for (g = 0; g < LANES; g = g + 1) begin : g_dec
      logic [31:0] next_hi;
      if (g + 1 < LANES) begin : g_next
        assign next_hi = id_slots[(g+1)*64+32 +: 32];
      end else begin : g_last
        assign next_hi = 32'd0;
      end
      decode u_decode (
        .slot_i         (id_slots[g*64 +: 64]),
        .next_hi_i      (next_hi),
        .alu_o          (d_alu[g]),
        .wide_o         (d_wide[g]),
        .x_o            (d_x[g]),
        .op_o           (d_op[g*4 +: 4]),
        .alu_off_o      (d_aluoff[g*16 +: 16]),
        .lddw_o         (d_lddw[g]),
        .lddw_val_o     (d_lddwval[g*64 +: 64]),
        .load_o         (d_load[g]),
        .load_sext_o    (d_sext[g]),
        .load_verdict_o (d_verdict[g*32 +: 32]),
        .load_checked_o (d_checked[g]),
        .store_o        (d_store[g]),
        .store_imm_o    (d_stimm[g]),
        .atomic_o       (d_atomic[g]),
        .bytes_o        (d_bytes[g*4 +: 4]),
        .cond_o         (d_cond[g]),
        .cond_valid_o   (d_condv[g]),
        .ja_o           (d_ja[g]),
        .exit_o         (d_exit[g]),
        .exitk_o        (d_exitk[g]),
        .hcall_o        (d_hcall[g]),
        .lcall_o        (d_lcall[g]),
        .dst_o          (d_dst[g*4 +: 4]),
        .src_o          (d_src[g*4 +: 4]),
        .ra_o           (d_ra[g*4 +: 4]),
        .off_o          (d_off[g*16 +: 16]),
        .imm_o          (d_imm[g*32 +: 32]),
        .imm64_o        (d_imm64[g*64 +: 64]),
        .reads_o        (d_reads[g*11 +: 11]),
        .writes_o       (d_writes[g]),
        .any_o          (d_any[g])
      );
    end
  endgenerate

  // ---------------------------------------------------------------------------------------------------------------
  // IE: execute units (declared here: ID forwards their results)
  // ---------------------------------------------------------------------------------------------------------------
  logic [LANES*64-1:0]  x_alu, x_ldval, x_res, x_raw;
  logic [LANES-1:0]     x_aluv, x_taken, x_ldflt, x_fresh_flt;
  logic [LANES-1:0]     x_cmp_ok;       // not a cmpxchg, or one whose comparison holds: the store happens
  logic [63:0]          x_opnd;
  logic [63:0]          x_r0n;
  logic [63:0]          x_port_data;    // the answer on the port this lane's read went out on
  logic                 x_port_flt;
  logic                 ie_has_hc;
  logic                 ie_hc_r0;       // ... and its answer is r0: bpf_tail_call (12) leaves r0 as it was

  // The lanes' ALUs have no divider: one shared unit (alu.sv with DIV_ONLY) divides for the lowest lane holding a
  // div or mod, and a bundle holds at most one (crates/hxdp/src/sched.rs; hwxdp_hxdp::ports::check_divider). A
  // second one in a bundle would read the wrong result, so it is refused as an invalid operation (a fault).
  logic [LANES*64-1:0]  x_lalu;         // the lanes' ALU results (div and mod: 0)
  logic [LANES-1:0]     x_laluv;
  logic [LANES-1:0]     x_isdiv;        // the lane divides or takes a modulo
  logic [LANES-1:0]     x_divsel;       // ... and is the one the shared divider serves
  logic [3:0]           dv_op;
  logic                 dv_wide;
  logic [15:0]          dv_off;
  logic [63:0]          dv_a;
  logic [63:0]          dv_b;
  logic [63:0]          dv_result;
  logic                 dv_valid;
  logic                 unused_dv_valid;
  logic                 dv_start;       // the bundle in IE divides: the divider takes its operands now
  logic                 dv_done;        // the divider has finished (its result held until the next start)
  logic                 dv_started_q;   // ... for the bundle in IE
  logic                 dv_wait;        // the bundle in IE waits for its division

  always_comb begin
    dv_op = 4'd0;
    dv_wide = 1'b0;
    dv_off = 16'd0;
    dv_a = 64'd0;
    dv_b = 64'd0;
    x_divsel = '0;
    for (l = LANES - 1; l >= 0; l = l - 1) begin
      x_isdiv[l] = ie_alu_q[l] && (ie_op_q[l*4 +: 4] == 4'h3 || ie_op_q[l*4 +: 4] == 4'h9);
      if (x_isdiv[l]) begin
        x_divsel = LANES'(1 << l);
        dv_op = ie_op_q[l*4 +: 4];
        dv_wide = ie_wide_q[l];
        dv_off = ie_aluoff_q[l*16 +: 16];
        dv_a = ie_a_q[l*64 +: 64];
        dv_b = ie_b_q[l*64 +: 64];
      end
    end
  end

  // (Apart from the selection above: the divider's result does not feed back into it.)
  always_comb begin
    for (l = 0; l < LANES; l = l + 1) begin
      x_alu[l*64 +: 64] = x_divsel[l] ? dv_result : x_lalu[l*64 +: 64];
      x_aluv[l] = x_laluv[l] && !(x_isdiv[l] && !x_divsel[l]);
    end
    unused_dv_valid = dv_valid;
  end

  // The bundle with the division waits in IE, from its first IE cycle, until the divider is done, before anything
  // else of it happens (faults, helper call, stores, control): timing::DIV_CYCLES more cycles for the bundle.
  always_comb begin
    dv_start = busy_q && ie_valid_q && (|x_divsel) && !dv_started_q && !c_kill;
    dv_wait  = ie_valid_q && (|x_divsel) && !(dv_started_q && dv_done) && !c_kill;
  end

  divider #(.STEPS(DIV_STEPS)) u_div (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .start_i  (dv_start),
    .op_i     (dv_op),
    .wide_i   (dv_wide),
    .off_i    (dv_off),
    .a_i      (dv_a),
    .b_i      (dv_b),
    .done_o   (dv_done),
    .result_o (dv_result),
    .valid_o  (dv_valid)
  );

  generate
    for (g = 0; g < LANES; g = g + 1) begin : g_lane
      lane #(.DIV(0)) u_lane (
        .op_i         (ie_op_q[g*4 +: 4]),
        .wide_i       (ie_wide_q[g]),
        .alu_off_i    (ie_aluoff_q[g*16 +: 16]),
        .a_i          (ie_a_q[g*64 +: 64]),
        .b_i          (ie_b_q[g*64 +: 64]),
        .end_imm_i    (ie_imm_q[g*32 +: 32]),
        .end_swap_i   (ie_wide_q[g] | ie_x_q[g]),
        .alu_result_o (x_lalu[g*64 +: 64]),
        .alu_valid_o  (x_laluv[g]),
        .taken_o      (x_taken[g]),
        .load_raw_i   (x_raw[g*64 +: 64]),
        .load_bytes_i (ie_bytes_q[g*4 +: 4]),
        .load_sext_i  (ie_sext_q[g]),
        .load_value_o (x_ldval[g*64 +: 64])
      );
    end
  endgenerate

  always_comb begin
    j = 0;  // loop variables: assigned on every path, so that synthesis infers no latch
    r = 0;
    ie_has_hc = |ie_hcall_q;
    ie_hc_r0 = ie_has_hc && ie_hid_q != 32'd12;
    for (l = 0; l < LANES; l = l + 1) begin
      x_port_data = 64'd0;
      x_port_flt = 1'b0;
      for (j = 0; j < LANES; j = j + 1) begin
        if (ie_port_q[l*3 +: 3] == j[2:0]) begin
          x_port_data = dbus_rdata_i[j*64 +: 64];
          x_port_flt = dbus_fault_i[j];
        end
      end
      // A stack load reads when its bundle enters IE; a helper bundle holds that value while the helper may write
      // the stack (the model's loads come before its helper). Atomics read as they store, after the helper.
      if (ie_kind_q[l*2 +: 2] == KindStack) begin
        x_raw[l*64 +: 64] = (ie_fresh_q || ie_atomic_q[l]) ? stk_rd_data[l*64 +: 64] : ie_ldraw_h_q[l*64 +: 64];
      end else begin
        x_raw[l*64 +: 64] = ie_fresh_q ? x_port_data : ie_ldraw_h_q[l*64 +: 64];
      end
      x_fresh_flt[l] = x_port_flt;
      x_ldflt[l] = (ie_kind_q[l*2 +: 2] == KindBus) && (ie_fresh_q ? x_fresh_flt[l] : ie_ldflt_h_q[l]);
      // Atomics (STX, mode 0xc0): the old value (read like a load) is what fetch variants write back.
      x_opnd = (ie_bytes_q[l*4 +: 4] == 4'd4) ? {32'd0, ie_wdata_q[l*64 +: 32]} : ie_wdata_q[l*64 +: 64];
      x_r0n = (ie_bytes_q[l*4 +: 4] == 4'd4) ? {32'd0, ie_b_q[l*64 +: 32]} : ie_b_q[l*64 +: 64];
      x_cmp_ok[l] = !ie_atomic_q[l] || ie_imm_q[l*32 +: 8] != 8'hf1 || x_ldval[l*64 +: 64] == x_r0n;
      x_stdata[l*64 +: 64] = ie_wdata_q[l*64 +: 64];
      if (ie_atomic_q[l]) begin
        case (ie_imm_q[l*32 + 1 +: 7])
          7'h00:   x_stdata[l*64 +: 64] = x_ldval[l*64 +: 64] + x_opnd;  // add
          7'h20:   x_stdata[l*64 +: 64] = x_ldval[l*64 +: 64] | x_opnd;  // or
          7'h28:   x_stdata[l*64 +: 64] = x_ldval[l*64 +: 64] & x_opnd;  // and
          7'h50:   x_stdata[l*64 +: 64] = x_ldval[l*64 +: 64] ^ x_opnd;  // xor
          default: x_stdata[l*64 +: 64] = x_opnd;                       // xchg, cmpxchg
        endcase
      end
      if (ie_load_q[l] || ie_atomic_q[l]) begin
        x_res[l*64 +: 64] = (ie_kind_q[l*2 +: 2] == KindCtx) ? ie_ctxval_q[l*64 +: 64] : x_ldval[l*64 +: 64];
      end else if (ie_lddw_q[l]) begin
        x_res[l*64 +: 64] = ie_lddwval_q[l*64 +: 64];
      end else begin
        x_res[l*64 +: 64] = x_alu[l*64 +: 64];
      end
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // ID: operands (with forwarding), hazards, addresses
  // ---------------------------------------------------------------------------------------------------------------
  logic [LANES*64-1:0]  o_ra, o_src, o_r0, o_addr;
  logic [LANES*2-1:0]   o_kind;
  logic [LANES-1:0]     o_mfault;
  logic [LANES*64-1:0]  o_ctxval;
  logic [5*64-1:0]      o_args;
  logic [31:0]          o_hid;
  logic                 xlane;
  logic                 memhaz;
  logic                 pktwait;        // a packet load reads bytes not yet stored (pkt_ready_i)
  logic [60:0]          rd_end;
  logic [LANES-1:0]     rd_need;        // ID lanes reading through the bus
  logic [LANES-1:0]     ie_busst;       // IE lanes storing through the bus: their ports are taken
  logic [LANES-1:0]     port_taken;
  logic                 port_found;
  logic                 port_short;
  logic [LANES*3-1:0]   rd_port;        // the port each ID lane reads through
  logic [LANES-1:0]     port_rd;        // the port carries a read ...
  logic [LANES*3-1:0]   port_lane;      // ... for this ID lane
  logic                 id_stall;
  logic [59:0]          r10_off;
  logic [60:0]          acc_end;

  // The value of register reg_i as lane lane_i of the ID bundle sees it: the register file's next state, the same
  // lane's result in IE, or the helper's r0 in IE.
  function automatic [63:0] forward(input integer lane_i, input logic [3:0] reg_i);
    logic [63:0] v;
    integer k;
    v = 64'd0;
    for (k = 0; k < 11; k = k + 1) begin
      if (reg_i == k[3:0]) begin
        v = regs_next[k*64 +: 64];
      end
    end
    if (ie_valid_q && ie_wen_q[lane_i] && ie_wreg_q[lane_i*4 +: 4] == reg_i) begin
      v = x_res[lane_i*64 +: 64];
    end
    if (ie_valid_q && ie_hc_r0 && reg_i == 4'd0) begin
      v = hret_i;
    end
    forward = v;
  endfunction

  always_comb begin
    j = 0;  // loop variables: assigned on every path, so that synthesis infers no latch
    r = 0;
    r10_off = regs_next[10*64 +: 60];
    xlane = 1'b0;
    o_args = '0;
    o_hid = 32'd0;
    acc_end = 61'd0;
    for (l = 0; l < LANES; l = l + 1) begin
      // Cross-lane read-after-write with the bundle in IE.
      for (j = 0; j < LANES; j = j + 1) begin
        for (r = 0; r < 11; r = r + 1) begin
          if (j != l && ie_valid_q && ie_wen_q[j] && ie_wreg_q[j*4 +: 4] == r[3:0] && d_reads[l*11 + r]) begin
            xlane = 1'b1;
          end
        end
      end
      o_ra[l*64 +: 64]  = forward(l, d_ra[l*4 +: 4]);
      o_src[l*64 +: 64] = forward(l, d_src[l*4 +: 4]);
      o_r0[l*64 +: 64]  = forward(l, 4'd0);
      // Helper arguments r1-r5 through the helper lane's forwarding.
      if (d_hcall[l]) begin
        o_hid = d_imm[l*32 +: 32];
        for (r = 1; r <= 5; r = r + 1) begin
          o_args[(r-1)*64 +: 64] = forward(l, r[3:0]);
        end
      end
      // Address: loads from src + off, stores to dst + off.
      o_addr[l*64 +: 64] = (d_load[l] ? o_src[l*64 +: 64] : o_ra[l*64 +: 64])
                           + {{48{d_off[l*16 + 15]}}, d_off[l*16 +: 16]};
      acc_end = {1'b0, o_addr[l*64 +: 60]} + {57'd0, d_bytes[l*4 +: 4]};
      o_kind[l*2 +: 2] = KindNone;
      o_mfault[l] = 1'b0;
      o_ctxval[l*64 +: 64] = 64'd0;
      if (d_load[l] || d_store[l]) begin
        case (o_addr[l*64 + 60 +: 4])
          4'd1: begin
            o_kind[l*2 +: 2] = KindCtx;
            o_mfault[l] = d_store[l] || d_bytes[l*4 +: 4] != 4'd4;
            case (o_addr[l*64 +: 60])
              60'd0:   o_ctxval[l*64 +: 64] = ctx_data_i;
              60'd4:   o_ctxval[l*64 +: 64] = ctx_data_end_i;
              60'd8:   o_ctxval[l*64 +: 64] = ctx_data_meta_i;
              60'd12:  o_ctxval[l*64 +: 64] = {32'd0, ctx_ifindex_i};
              60'd16:  o_ctxval[l*64 +: 64] = {32'd0, ctx_rxq_i};
              60'd20:  o_ctxval[l*64 +: 64] = 64'd0;   // egress_ifindex: 0 on the XDP receive path
              default: o_mfault[l] = 1'b1;
            endcase
          end
          4'd3: begin
            o_kind[l*2 +: 2] = KindStack;
            o_mfault[l] = acc_end > {1'b0, r10_off} || acc_end > StackEnd;
          end
          4'd2: begin
            // Packet stores are checked here against the context's bounds, so that the stores of a bundle stop
            // exactly at the first one outside its region (lane order); loads learn it from the bus.
            o_kind[l*2 +: 2] = KindBus;
            o_mfault[l] = d_store[l]
                          && ({1'b0, o_addr[l*64 +: 60]} < {1'b0, ctx_data_meta_i[59:0]}
                              || acc_end > {1'b0, ctx_data_end_i[59:0]});
          end
          4'd4: o_kind[l*2 +: 2] = KindBus;
          default: o_mfault[l] = 1'b1;
        endcase
        // Atomics: 4 or 8 bytes; add/or/and/xor with or without fetch, xchg, cmpxchg (as crates/xdp/src/alu.rs).
        if (d_atomic[l] && !((d_bytes[l*4 +: 4] == 4'd4 || d_bytes[l*4 +: 4] == 4'd8) && d_imm[l*32 + 8 +: 24] == 24'd0
                             && (d_imm[l*32 + 1 +: 7] == 7'h00 || d_imm[l*32 + 1 +: 7] == 7'h20
                                 || d_imm[l*32 + 1 +: 7] == 7'h28 || d_imm[l*32 + 1 +: 7] == 7'h50
                                 || d_imm[l*32 +: 8] == 8'he1 || d_imm[l*32 +: 8] == 8'hf1))) begin
          o_mfault[l] = 1'b1;
        end
      end
    end
    // Bus ports: a lane reads through its own port unless the bundle in IE stores through it; then through the
    // lowest port nobody uses this cycle.
    for (l = 0; l < LANES; l = l + 1) begin
      rd_need[l] = d_any[l] && (d_load[l] || d_atomic[l]) && o_kind[l*2 +: 2] == KindBus;
      ie_busst[l] = ie_valid_q && ie_store_q[l] && ie_kind_q[l*2 +: 2] == KindBus;
    end
    // A packet load that will succeed (within data_meta..data_end) waits until its last byte is stored; one that
    // faults does not wait, it reads nothing.
    pktwait = 1'b0;
    rd_end = 61'd0;
    for (l = 0; l < LANES; l = l + 1) begin
      rd_end = {1'b0, o_addr[l*64 +: 60]} + {57'd0, d_bytes[l*4 +: 4]};
      if (rd_need[l] && o_addr[l*64 + 60 +: 4] == 4'd2
          && {1'b0, o_addr[l*64 +: 60]} >= {1'b0, ctx_data_meta_i[59:0]}
          && rd_end <= {1'b0, ctx_data_end_i[59:0]}
          && rd_end > {48'd0, pkt_ready_i}) begin
        pktwait = 1'b1;
      end
    end
    port_taken = ie_busst | (rd_need & ~ie_busst);
    port_short = 1'b0;
    port_found = 1'b0;
    for (l = 0; l < LANES; l = l + 1) begin
      rd_port[l*3 +: 3] = l[2:0];
      if (rd_need[l] && ie_busst[l]) begin
        port_found = 1'b0;
        for (j = 0; j < LANES; j = j + 1) begin
          if (!port_found && !port_taken[j]) begin
            rd_port[l*3 +: 3] = j[2:0];
            port_taken[j] = 1'b1;
            port_found = 1'b1;
          end
        end
        if (!port_found) begin
          port_short = 1'b1;
        end
      end
    end
    for (j = 0; j < LANES; j = j + 1) begin
      port_rd[j] = 1'b0;
      port_lane[j*3 +: 3] = 3'd0;
      for (l = 0; l < LANES; l = l + 1) begin
        if (rd_need[l] && rd_port[l*3 +: 3] == j[2:0]) begin
          port_rd[j] = 1'b1;
          port_lane[j*3 +: 3] = l[2:0];
        end
      end
    end
    // A bus load waits while the bundle in IE stores to bytes it reads, or when no bus port is left for it. (Stack
    // loads read in IE, after the previous bundle's stores: they never wait.)
    memhaz = port_short;
    for (l = 0; l < LANES; l = l + 1) begin
      for (j = 0; j < LANES; j = j + 1) begin
        if (rd_need[l] && ie_valid_q && ie_store_q[j]
            && o_addr[l*64 +: 64] < ie_addr_q[j*64 +: 64] + {60'd0, ie_bytes_q[j*4 +: 4]}
            && ie_addr_q[j*64 +: 64] < o_addr[l*64 +: 64] + {60'd0, d_bytes[l*4 +: 4]}) begin
          memhaz = 1'b1;
        end
      end
    end
    id_stall = id_valid_q && (xlane || memhaz || pktwait);
  end

  // ---------------------------------------------------------------------------------------------------------------
  // IE: phases of the bundle
  // ---------------------------------------------------------------------------------------------------------------
  logic             ie_go;          // the bundle completes IE this cycle
  logic             p1_end;         // an ALU op or a load failed
  logic             p1_verdict_ok;  // ... with a checked packet load: a verdict, not a fault
  logic [31:0]      p1_verdict;
  logic             h_fault;
  logic             st_end;
  logic [LANES-1:0] st_en;
  logic             ctl_any;
  logic             ctl_fault;
  logic             ctl_final;
  logic             ctl_push;
  logic             ctl_pop;
  logic             ctl_exitk;      // the winner is exit K: r0 = K at commit
  logic [63:0]      ctl_k;
  logic [15:0]      ctl_target;
  logic             redirect;
  logic             ie_end;
  logic             st_seen_fail;
  logic             ctl_ok;

  always_comb begin
    j = 0;  // loop variables: assigned on every path, so that synthesis infers no latch
    r = 0;
    // Phase 1: ALU ops and loads, the lowest failing lane decides.
    p1_end = ie_fell_q;
    p1_verdict_ok = 1'b0;
    p1_verdict = 32'd0;
    for (l = LANES - 1; l >= 0; l = l - 1) begin
      if (ie_any_q[l] && ((ie_alu_q[l] && !x_aluv[l])
                          || (ie_load_q[l] && (ie_mfault_q[l] || x_ldflt[l])))) begin
        p1_end = 1'b1;
        p1_verdict_ok = ie_load_q[l] && !ie_mfault_q[l] && ie_checked_q[l]
                        && ie_addr_q[l*64 + 60 +: 4] == 4'd2;
        p1_verdict = ie_verdict_q[l*32 +: 32];
      end
    end
    if (ie_fell_q) begin
      p1_verdict_ok = 1'b0;
    end
    if (!ie_valid_q) begin
      p1_end = 1'b0;
    end
    ie_hold = ie_valid_q && !c_kill
              && (dv_wait || (ie_has_hc && !p1_end && !(hc_issued_q && hret_valid_i)));
    ie_go = ie_valid_q && !ie_hold && !c_kill;
    h_fault = ie_go && !p1_end && ie_has_hc && hret_fault_i;
    // Phase 3: stores in lane order, up to the first one outside its region.
    st_seen_fail = 1'b0;
    for (l = 0; l < LANES; l = l + 1) begin
      if (ie_store_q[l] && (ie_mfault_q[l] || (ie_atomic_q[l] && x_ldflt[l]))) begin
        st_seen_fail = 1'b1;
      end
      st_en[l] = ie_go && !p1_end && !h_fault && ie_store_q[l] && !st_seen_fail && x_cmp_ok[l];
    end
    st_end = ie_go && !p1_end && !h_fault && st_seen_fail;
    // Control: the lowest lane that transfers (or holds an invalid condition) wins.
    ctl_any = 1'b0;
    ctl_fault = 1'b0;
    ctl_final = 1'b0;
    ctl_push = 1'b0;
    ctl_pop = 1'b0;
    ctl_exitk = 1'b0;
    ctl_k = 64'd0;
    ctl_target = 16'd0;
    for (l = LANES - 1; l >= 0; l = l - 1) begin
      if (ie_cond_q[l] && !ie_condv_q[l]) begin
        ctl_any = 1'b1;
        ctl_fault = 1'b1;
        ctl_final = 1'b0;
        ctl_push = 1'b0;
        ctl_pop = 1'b0;
        ctl_exitk = 1'b0;
      end else if (ie_exit_q[l] || ie_lcall_q[l] || ie_ja_q[l] || (ie_cond_q[l] && x_taken[l])) begin
        ctl_any = 1'b1;
        ctl_fault = 1'b0;
        ctl_final = ie_exit_q[l] && depth_q == '0;
        ctl_pop = ie_exit_q[l] && depth_q != '0;
        ctl_push = ie_lcall_q[l];
        ctl_exitk = ie_exitk_q[l];
        ctl_k = {{32{ie_imm_q[l*32 + 31]}}, ie_imm_q[l*32 +: 32]};
        if (ie_lcall_q[l]) begin
          ctl_target = ie_imm_q[l*32 +: 16];
          ctl_fault = depth_q >= FW'(STACK_FRAMES - 1);
        end else if (ie_exit_q[l]) begin
          ctl_target = 16'd0;
          for (j = 0; j < STACK_FRAMES; j = j + 1) begin
            if (depth_q == FW'(j + 1)) begin
              ctl_target = frame_pc_q[j*16 +: 16];
            end
          end
        end else begin
          ctl_target = ie_off_q[l*16 +: 16];
        end
      end
    end
    // A tail call (the helper answers with hret_tail_i) continues at the program's entry bundle; nothing else of
    // the bundle transfers control (the model checks it first).
    if (ie_has_hc && hret_tail_i) begin
      ctl_any = 1'b1;
      ctl_fault = 1'b0;
      ctl_final = 1'b0;
      ctl_push = 1'b0;
      ctl_pop = 1'b0;
      ctl_exitk = 1'b0;
      ctl_target = hret_entry_i;
    end
    ctl_ok = ie_go && !p1_end && !h_fault && !st_end;
    if (!ctl_ok) begin
      ctl_any = 1'b0;
      ctl_fault = 1'b0;
      ctl_final = 1'b0;
      ctl_push = 1'b0;
      ctl_pop = 1'b0;
      ctl_exitk = 1'b0;
    end
    ie_end = ie_go && (p1_end || h_fault || st_end || ctl_fault);
    redirect = ctl_any && !ctl_fault && !ctl_final;
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Commit, the end of a packet, and what ID and IF do next
  // ---------------------------------------------------------------------------------------------------------------
  logic        c_final_ok;
  logic        id_early;
  logic        end_now;
  logic [31:0] end_verdict;
  logic        end_fault;
  logic        id_adv;
  logic        id_exitk_alone;
  logic [31:0] id_k;
  logic        ie_mapst;       // the bundle in IE stores to a map value

  always_comb begin
    j = 0;  // loop variables: assigned on every path, so that synthesis infers no latch
    r = 0;
    c_final_ok = c_valid_q && c_final_q && !c_kill;
    rf_r0_we = c_valid_q && (c_exitk_q || c_hwen_q);
    rf_r0 = c_exitk_q ? c_k_q : c_hval_q;
    rf_restore = c_valid_q && c_pop_q;
    rf_push = c_valid_q && c_push_q;
    rf_frame = '0;
    for (j = 0; j < STACK_FRAMES; j = j + 1) begin
      if (depth_q == FW'(j + 1)) begin
        rf_frame = frame_regs_q[j*256 +: 256];
      end
    end
    // Early exit: `exit K` alone in its bundle, no caller frame, and nothing older left that could still change the
    // outcome: the bundle in IE (if any) completes now, falls through, and stores nothing to a map value (whose
    // bus fault would only come next cycle); the bundle in commit is settled this cycle (its fault wins).
    id_exitk_alone = 1'b0;
    id_k = 32'd0;
    for (l = 0; l < LANES; l = l + 1) begin
      if (d_exitk[l] && d_any == LANES'(1 << l)) begin
        id_exitk_alone = 1'b1;
        id_k = d_imm[l*32 +: 32];
      end
    end
    ie_mapst = 1'b0;
    for (l = 0; l < LANES; l = l + 1) begin
      if (ie_store_q[l] && ie_addr_q[l*64 + 60 +: 4] == 4'd4) begin
        ie_mapst = 1'b1;
      end
    end
    id_early = id_valid_q && id_exitk_alone && depth_q == '0
               && (!ie_valid_q || (ie_go && !ie_end && !ctl_any && !ie_mapst));
    end_now = 1'b1;
    end_verdict = 32'd0;
    end_fault = 1'b1;
    if (c_kill) begin
      end_verdict = 32'd0;
      end_fault = 1'b1;
    end else if (c_final_ok) begin
      end_verdict = regs_next[31:0];
      end_fault = 1'b0;
    end else if (ie_end) begin
      end_verdict = p1_verdict_ok ? p1_verdict : 32'd0;
      end_fault = !p1_verdict_ok;
    end else if (id_early) begin
      end_verdict = id_k;
      end_fault = 1'b0;
    end else begin
      end_now = 1'b0;
    end
    if (!busy_q) begin
      end_now = 1'b0;
    end
    // ID hands its bundle to IE.
    id_adv = id_valid_q && !ie_hold && !id_stall && !redirect && !ctl_final && !end_now;
    // The instruction memory output is ID's bundle register: it loads when ID moves on or is emptied.
    id_take = !(id_valid_q && (ie_hold || id_stall)) || redirect || ctl_final || end_now;
    imem_rd_en = id_take;
  end

  // The helper's stack port: while the core waits on the helper (called, not yet answered) the bundle in IE
  // neither reads (its loads hold their values) nor writes the stack, so the helper borrows lane 0's ports. Bounds
  // as the reference machine's helpers have them: 1-8 bytes ending at or below r10 (the current frame's top; the
  // callers' frames lie below it) and within the stack. Stack read addresses (kept apart from the write side, which
  // depends on the values read).
  always_comb begin
    hmem_end = {1'b0, hmem_addr_i[59:0]} + {57'd0, hmem_bytes_i};
    hmem_bad = hmem_addr_i[63:60] != 4'd3 || hmem_bytes_i == 4'd0 || hmem_bytes_i > 4'd8
               || hmem_end > {1'b0, regs_next[10*64 +: 60]} || hmem_end > StackEnd
               || !(busy_q && ie_valid_q && hc_issued_q && !hret_valid_i);
    hmem_act = hmem_req_i && !hmem_bad;
    for (l = 0; l < LANES; l = l + 1) begin
      stk_rd_addr[l*SAW +: SAW] = o_addr[l*64 +: SAW];
    end
  end

  // Data bus and stack write ports.
  always_comb begin
    j = 0;  // loop variables: assigned on every path, so that synthesis infers no latch
    r = 0;
    for (l = 0; l < LANES; l = l + 1) begin
      dbus_req_o[l] = 1'b0;
      dbus_we_o[l] = 1'b0;
      dbus_addr_o[l*64 +: 64] = 64'd0;
      dbus_bytes_o[l*4 +: 4] = 4'd0;
      dbus_wdata_o[l*64 +: 64] = 64'd0;
      if (st_en[l] && ie_kind_q[l*2 +: 2] == KindBus) begin
        dbus_req_o[l] = 1'b1;
        dbus_we_o[l] = 1'b1;
        dbus_addr_o[l*64 +: 64] = ie_addr_q[l*64 +: 64];
        dbus_bytes_o[l*4 +: 4] = ie_bytes_q[l*4 +: 4];
        dbus_wdata_o[l*64 +: 64] = x_stdata[l*64 +: 64];
      end else if (busy_q && id_valid_q && port_rd[l] && !memhaz && !pktwait) begin
        dbus_req_o[l] = 1'b1;
        for (j = 0; j < LANES; j = j + 1) begin
          if (port_lane[l*3 +: 3] == j[2:0]) begin
            dbus_addr_o[l*64 +: 64] = o_addr[j*64 +: 64];
            dbus_bytes_o[l*4 +: 4] = d_bytes[j*4 +: 4];
          end
        end
      end
      // At the address the lane's stack read tracks: ie_addr_q, issued from ID as o_addr.
      stk_we[l] = st_en[l] && ie_kind_q[l*2 +: 2] == KindStack;
      stk_wr_bytes[l*4 +: 4] = ie_bytes_q[l*4 +: 4];
    end
  end

  assign hcall_o      = ie_valid_q && ie_has_hc && !hc_issued_q && !p1_end && !c_kill && !dv_wait;
  assign hcall_id_o   = ie_hid_q;
  assign hcall_args_o = ie_args_q;

  // ---------------------------------------------------------------------------------------------------------------
  // Sequential
  // ---------------------------------------------------------------------------------------------------------------
  // The division of the bundle in IE has been started; cleared when that bundle leaves IE or the packet ends.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      dv_started_q <= 1'b0;
    end else if (start_i || !busy_q || end_now || ie_go || !ie_valid_q) begin
      dv_started_q <= 1'b0;
    end else if (dv_start) begin
      dv_started_q <= 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      run_q       <= 1'b0;
      busy_q      <= 1'b0;
      fetch_pc_q  <= 16'd0;
      cnt_q       <= 32'd0;
      done_q      <= 1'b0;
      verdict_q   <= 32'd0;
      fault_q     <= 1'b0;
      cycles_q    <= 32'd0;
      id_valid_q  <= 1'b0;
      id_pc_q     <= 16'd0;
      ie_valid_q  <= 1'b0;
      ie_fresh_q  <= 1'b0;
      hc_issued_q <= 1'b0;
      c_valid_q   <= 1'b0;
      depth_q     <= '0;
    end else if (start_i) begin
      run_q       <= 1'b1;
      busy_q      <= 1'b1;
      fetch_pc_q  <= entry_i;
      cnt_q       <= 32'd2;      // the cycle after start_i is the packet's second
      done_q      <= 1'b0;
      verdict_q   <= 32'd0;
      fault_q     <= 1'b0;
      cycles_q    <= 32'd0;
      id_valid_q  <= 1'b0;
      ie_valid_q  <= 1'b0;
      ie_fresh_q  <= 1'b0;
      hc_issued_q <= 1'b0;
      c_valid_q   <= 1'b0;
      depth_q     <= '0;
    end else if (busy_q) begin
      cnt_q <= cnt_q + 32'd1;
      if (end_now) begin
        run_q       <= 1'b0;
        busy_q      <= 1'b0;
        done_q      <= 1'b1;
        verdict_q   <= end_verdict;
        fault_q     <= end_fault;
        cycles_q    <= cnt_q;
        id_valid_q  <= 1'b0;
        ie_valid_q  <= 1'b0;
        ie_fresh_q  <= 1'b0;
        c_valid_q   <= 1'b0;
        hc_issued_q <= 1'b0;
      end else begin
        // IF/ID
        if (redirect) begin
          fetch_pc_q <= ctl_target;
          id_valid_q <= 1'b0;
        end else if (ctl_final) begin
          run_q      <= 1'b0;
          id_valid_q <= 1'b0;
        end else if (id_take) begin
          id_valid_q <= run_q;
          id_pc_q    <= fetch_pc_q;
          if (run_q) begin
            fetch_pc_q <= fetch_pc_q + 16'd1;
          end
        end
        // ID -> IE
        ie_fresh_q <= id_adv;
        if (id_adv) begin
          ie_valid_q <= 1'b1;
        end else if (!ie_hold) begin
          ie_valid_q <= 1'b0;
        end
        if (hcall_o) begin
          hc_issued_q <= 1'b1;
        end
        if (ie_go) begin
          hc_issued_q <= 1'b0;
        end
        // IE -> commit
        c_valid_q <= ie_go && !ie_end;
        // Call frames
        if (c_valid_q && c_push_q) begin
          depth_q <= depth_q + 1'b1;
        end else if (c_valid_q && c_pop_q) begin
          depth_q <= depth_q - 1'b1;
        end
      end
    end
  end

  // The helper stack port answers in the next cycle.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hmem_fault_q <= 1'b0;
    end else begin
      hmem_fault_q <= hmem_req_i && hmem_bad;
    end
  end

  // Pipeline payload registers (no reset needed: qualified by the valid bits above).
  always_ff @(posedge clk_i) begin
    if (id_adv) begin
      ie_pc_q      <= id_pc_q;
      ie_fell_q    <= {16'd0, id_pc_q} >= IMEM_BUNDLES;
      ie_any_q     <= d_any;
      ie_alu_q     <= d_alu & d_any;
      ie_wide_q    <= d_wide;
      ie_x_q       <= d_x;
      ie_lddw_q    <= d_lddw;
      ie_load_q    <= d_load;
      ie_sext_q    <= d_sext;
      ie_checked_q <= d_checked;
      ie_store_q   <= d_store;
      ie_mfault_q  <= o_mfault;
      ie_cond_q    <= d_cond;
      ie_condv_q   <= d_condv;
      ie_ja_q      <= d_ja;
      ie_exit_q    <= d_exit;
      ie_exitk_q   <= d_exitk;
      ie_hcall_q   <= d_hcall;
      ie_lcall_q   <= d_lcall;
      ie_atomic_q  <= d_atomic;
      ie_port_q    <= rd_port;
      ie_op_q      <= d_op;
      ie_bytes_q   <= d_bytes;
      ie_kind_q    <= o_kind;
      ie_aluoff_q  <= d_aluoff;
      ie_off_q     <= d_off;
      ie_imm_q     <= d_imm;
      ie_verdict_q <= d_verdict;
      ie_lddwval_q <= d_lddwval;
      ie_addr_q    <= o_addr;
      ie_ctxval_q  <= o_ctxval;
      ie_args_q    <= o_args;
      ie_hid_q     <= o_hid;
      for (l = 0; l < LANES; l = l + 1) begin
        ie_a_q[l*64 +: 64]     <= o_ra[l*64 +: 64];
        ie_b_q[l*64 +: 64]     <= d_atomic[l] ? o_r0[l*64 +: 64]
                                  : d_x[l] ? o_src[l*64 +: 64] : d_imm64[l*64 +: 64];
        // Registers written: dst, or for atomics with fetch src (r0 for cmpxchg).
        ie_wen_q[l]            <= d_writes[l] || (d_atomic[l] && d_imm[l*32]);
        ie_wreg_q[l*4 +: 4]    <= !d_atomic[l] ? d_dst[l*4 +: 4]
                                  : (d_imm[l*32 +: 8] == 8'hf1) ? 4'd0 : d_src[l*4 +: 4];
        ie_wdata_q[l*64 +: 64] <= d_stimm[l] ? d_imm64[l*64 +: 64] : o_src[l*64 +: 64];
      end
    end
    if (ie_fresh_q) begin
      ie_ldraw_h_q <= x_raw;
      ie_ldflt_h_q <= x_fresh_flt;
    end
    if (ie_go) begin
      c_wen_q   <= ie_wen_q & ie_any_q;
      c_wreg_q  <= ie_wreg_q;
      c_wval_q  <= x_res;
      c_hwen_q  <= ie_hc_r0;
      c_hval_q  <= hret_i;
      c_exitk_q <= ctl_exitk;
      c_k_q     <= ctl_k;
      c_final_q <= ctl_final;
      c_push_q  <= ctl_push && !ctl_fault;
      c_pop_q   <= ctl_pop;
      c_tail_q  <= ie_has_hc && hret_tail_i && ctl_ok;
      c_retpc_q <= ie_pc_q + 16'd1;
      for (l = 0; l < LANES; l = l + 1) begin
        c_dbst_q[l] <= st_en[l] && ie_kind_q[l*2 +: 2] == KindBus;
      end
    end
    if (c_valid_q && c_push_q) begin
      for (j = 0; j < STACK_FRAMES; j = j + 1) begin
        if (depth_q == FW'(j)) begin
          frame_pc_q[j*16 +: 16]     <= c_retpc_q;
          frame_regs_q[j*256 +: 256] <= regs_next[6*64 +: 256];
        end
      end
    end
  end

  assign busy_o    = busy_q;
  assign done_o    = done_q;
  assign verdict_o = verdict_q;
  assign fault_o   = fault_q;
  assign cycles_o  = cycles_q;
  assign run_cycles_o = cnt_q;
  assign hmem_rdata_o = hmem_rdata;
  assign hmem_fault_o = hmem_fault_q;

endmodule
