`default_nettype none
// eBPFlow engine: the DM_FIFO, the 5-stage eBPF processor and the FSM that starts a run on a packet's first beat.
//
// A packet arrives on s_axis_* (64 bits a beat, s_axis_tuser_i on the first beat the header's bytes 0..15, Table 4.1
// of the thesis: the length in bytes 11..12) while the engine is idle. The run starts in the cycle the first beat is
// taken, so the program executes while the rest of the frame arrives; a load or store of a word not yet arrived
// waits for it (ebpflow_dm_fifo's valid bits). When the program has exited and the whole frame is in, the packet
// leaves on m_axis_* as the program left it (header bytes 0..15 on m_axis_tuser_o) and the engine is idle again once
// its last beat is taken. result_valid_o is high for one cycle at the end of the run with r0, the fault flag and the
// run's cycles (first beat to exit, both counted); they hold until the next run. s_axis_tready_o is low from the
// packet's last beat until the engine is idle.
//
// SLOTS = 2 (the NIC's): the DM_FIFO is two of ebpflow_dm_fifo, a packet in each. The engine takes the next packet's
// first beat (and starts its run) as soon as the last packet is wholly in and its run has ended, provided the other
// slot's packet has left; so the next run overlaps this packet's output. Packets leave in the order they came;
// out_r0_o/out_fault_o and out_rdr_* (the redirect target, latched per slot) are those of the packet leaving. The
// host port reaches slot 0 only (the conformance top has SLOTS = 1).
//
// bpf_redirect (helper 23) is answered here, in the cycle of its request (r0 XDP_REDIRECT and the target r1 when its
// flags are 0, else XDP_ABORTED): it never reaches the helper port. bpf_redirect_map's target comes with its ack
// (hlp_rdr_*).
//
// The instruction port (imem_*: a registered read), the helper port (hlp_*: request held until the answer, with the
// key and value bytes a map helper gathered) and the map-value port (mv_*: a load, store or atomic in the window at
// MAPV_BASE, held until the ack) lead outside, so that engines can share an instruction memory and a coprocessor
// (ebpflow_coproc). The host port (ebpflow_dm_fifo) reads
// and writes data-memory words while the engine is idle and no packet arrives.
module ebpflow_engine #(
  parameter integer      IW           = 12,
  parameter integer      RX_BYTES     = 4096,
  parameter integer      STACK_FRAMES = 8,
  parameter integer      FW           = 3,
  parameter integer      AW           = 13,
  parameter logic [63:0] BASE         = 64'h0000_0000_0001_0000,
  parameter integer      KEY_BYTES    = 16,   // key bytes a map helper gathers at r2
  parameter integer      VAL_BYTES    = 32,   // value bytes a map update gathers at r3
  parameter integer      SLOTS        = 1     // packets the DM_FIFO holds: 1, or 2 (the next runs while one leaves)
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic [IW:0]   prog_len_i,
  input  logic [31:0]   ifindex_base_i,   // ingress_ifindex of input port 0 (the header's context words)
  // packets in
  input  logic [63:0]   s_axis_tdata_i,
  input  logic [7:0]    s_axis_tkeep_i,
  input  logic          s_axis_tvalid_i,
  output logic          s_axis_tready_o,
  input  logic          s_axis_tlast_i,
  input  logic [127:0]  s_axis_tuser_i,
  // packets out
  output logic [63:0]   m_axis_tdata_o,
  output logic [7:0]    m_axis_tkeep_o,
  output logic          m_axis_tvalid_o,
  input  logic          m_axis_tready_i,
  output logic          m_axis_tlast_o,
  output logic [127:0]  m_axis_tuser_o,
  // the run's result
  output logic          result_valid_o,
  output logic [63:0]   result_r0_o,
  output logic          result_fault_o,
  output logic [31:0]   result_cycles_o,
  output logic          idle_o,           // no packet in the engine
  output logic          start_o,          // a packet's first beat is taken (its run starts)
  output logic [63:0]   out_r0_o,         // r0 and the fault flag of the run of the packet that leaves next
  output logic          out_fault_o,
  output logic          out_rdr_valid_o,  // ... and its redirect target (an ifindex), if its run set one
  output logic [31:0]   out_rdr_port_o,
  // instruction memory
  output logic          imem_en_o,
  output logic [IW-1:0] imem_addr_o,
  input  logic [63:0]   imem_data_i,
  // helper port
  output logic          hlp_req_o,
  output logic          hlp_kfunc_o,
  output logic [31:0]   hlp_id_o,
  output logic [319:0]  hlp_args_o,
  input  logic          hlp_ack_i,
  input  logic [63:0]   hlp_r0_i,
  input  logic          hlp_end_i,
  input  logic          hlp_fault_i,
  input  logic          hlp_rdr_valid_i,  // with hlp_ack_i: the request's redirect target (bpf_redirect_map)
  input  logic [31:0]   hlp_rdr_port_i,
  output logic [KEY_BYTES*8-1:0] hlp_key_o,
  output logic [VAL_BYTES*8-1:0] hlp_val_o,
  // map-value port (ebpflow_core: loads, stores and atomics in the window at MAPV_BASE)
  output logic          mv_req_o,
  output logic          mv_we_o,
  output logic [2:0]    mv_atomic_o,
  output logic [23:0]   mv_addr_o,
  output logic [1:0]    mv_size_o,
  output logic [63:0]   mv_wdata_o,
  output logic [63:0]   mv_cmp_o,
  input  logic          mv_ack_i,
  input  logic [63:0]   mv_rdata_i,
  input  logic          mv_fault_i,
  // host port
  input  logic          host_req_i,
  input  logic          host_we_i,
  input  logic [AW-4:0] host_addr_i,
  input  logic [63:0]   host_wdata_i,
  output logic [63:0]   host_rdata_o
);

  localparam logic [1:0] Idle = 2'd0;
  localparam logic [1:0] Run  = 2'd1;   // the packet arrives, its program runs, or it waits for the output
  localparam logic [1:0] Out  = 2'd2;   // the packet leaves

  localparam integer SW = 1;            // slot index bits (SLOTS is 1 or 2)

  logic [1:0]      st_q [SLOTS];        // each slot's state
  logic [SLOTS-1:0] ran_q;              // the program of the slot's packet has ended
  logic [63:0]     r0_q [SLOTS];        // the slot's run's r0 and fault flag, for the action module
  logic [SLOTS-1:0] fault_q;
  logic [SW-1:0]   rxs_q;               // the slot of the last packet taken: its run is the core's
  logic [SW-1:0]   txs_q;               // the slot whose packet leaves next (the oldest)
  logic            rx_open_q;           // a packet's first beat was taken, its last not yet

  logic        core_done;
  logic        core_busy;
  logic        nxt_idle;
  logic [SW-1:0] nxt;                   // the slot the next packet goes to
  logic        new_ok;                  // the engine takes a new packet's first beat in this cycle
  logic        rx_first;
  logic        rx_last;
  logic        tx_start;                // the packet of slot txs_q starts leaving
  logic        tx_done;
  logic [SLOTS-1:0] rx_en;
  logic [SLOTS-1:0] s_first;
  logic [SLOTS-1:0] s_last;
  logic [SLOTS-1:0] s_tready;
  logic [SLOTS-1:0] s_ok;
  logic [SLOTS-1:0] s_txdone;
  logic [SLOTS*64-1:0]  s_rdata;
  logic [SLOTS*64-1:0]  s_tdata;
  logic [SLOTS*8-1:0]   s_tkeep;
  logic [SLOTS-1:0]     s_tvalid;
  logic [SLOTS-1:0]     s_tlast;
  logic [SLOTS*128-1:0] s_tuser;
  logic [SLOTS*64-1:0]  s_host;
  logic [SLOTS*16-1:0]  s_len;
  logic [SLOTS-1:0] rdr_q;              // the slot's packet's redirect target is known
  logic [31:0]     rdr_port_q [SLOTS];

  // The core's helper port; bpf_redirect is answered here.
  logic         c_req;
  logic         c_kfunc;
  logic [31:0]  c_id;
  logic [319:0] c_args;
  logic         rdr_local;              // the core asks for bpf_redirect
  logic         rdr_ok;                 // ... with flags 0
  assign rdr_local   = c_req && !c_kfunc && c_id == 32'd23;
  assign rdr_ok      = (c_args[64 +: 64] == 64'd0);
  assign hlp_req_o   = c_req && !rdr_local;
  assign hlp_kfunc_o = c_kfunc;
  assign hlp_id_o    = c_id;
  assign hlp_args_o  = c_args;

  logic        dm_req;
  logic        dm_we;
  logic [AW-1:0] dm_addr;
  logic [1:0]  dm_size;
  logic [63:0] dm_wdata;

  // With two slots the next packet goes to the slot other than the last one's; that slot is free once its packet
  // has left (packets leave in the order they came, so it is the older one). The engine takes it once the last
  // packet is wholly in and its run has ended (or ends in this cycle): the next run starts while this packet leaves.
  assign nxt      = (SLOTS > 1) ? !rxs_q : 1'b0;
  assign nxt_idle = (st_q[nxt] == Idle);
  assign new_ok   = !rx_open_q && nxt_idle &&
                    (SLOTS == 1 || st_q[rxs_q] != Run || ran_q[rxs_q] || core_done);
  assign s_axis_tready_o = rx_open_q || new_ok;
  assign rx_first = new_ok && s_axis_tvalid_i;
  assign rx_last  = s_axis_tvalid_i && s_axis_tready_o && s_axis_tlast_i;

  // The output of the oldest packet starts in the cycle its run's result comes out (or once its whole frame is in),
  // when no other packet is leaving.
  assign tx_start = (st_q[txs_q] == Run) &&
                    (ran_q[txs_q] || (core_done && txs_q == rxs_q)) &&
                    !(rx_open_q && txs_q == rxs_q);
  assign tx_done  = s_txdone[txs_q];

  for (genvar s = 0; s < SLOTS; s++) begin : g_slot
    logic sel_a;                         // the core's data-memory port is this slot's
    assign sel_a    = (rxs_q == SW'(s));
    assign rx_en[s] = (rx_open_q && sel_a) || (new_ok && nxt == SW'(s));

    ebpflow_dm_fifo #(
      .RX_BYTES (RX_BYTES),
      .AW       (AW),
      .BASE     (BASE)
    ) u_dm (
      .clk_i           (clk_i),
      .rst_ni          (rst_ni),
      .ifindex_base_i  (ifindex_base_i),
      .rx_en_i         (rx_en[s]),
      .s_axis_tdata_i  (s_axis_tdata_i),
      .s_axis_tkeep_i  (s_axis_tkeep_i),
      .s_axis_tvalid_i (s_axis_tvalid_i && rx_en[s]),
      .s_axis_tready_o (s_tready[s]),
      .s_axis_tlast_i  (s_axis_tlast_i),
      .s_axis_tuser_i  (s_axis_tuser_i),
      .rx_first_o      (s_first[s]),
      .rx_last_o       (s_last[s]),
      .rx_len_o        (s_len[s*16 +: 16]),
      .a_req_i         (dm_req && sel_a),
      .a_we_i          (dm_we),
      .a_addr_i        (dm_addr),
      .a_size_i        (dm_size),
      .a_wdata_i       (dm_wdata),
      .a_ok_o          (s_ok[s]),
      .a_rdata_o       (s_rdata[s*64 +: 64]),
      .tx_start_i      (tx_start && txs_q == SW'(s)),
      .m_axis_tdata_o  (s_tdata[s*64 +: 64]),
      .m_axis_tkeep_o  (s_tkeep[s*8 +: 8]),
      .m_axis_tvalid_o (s_tvalid[s]),
      .m_axis_tready_i (m_axis_tready_i && txs_q == SW'(s)),
      .m_axis_tlast_o  (s_tlast[s]),
      .m_axis_tuser_o  (s_tuser[s*128 +: 128]),
      .tx_done_o       (s_txdone[s]),
      .host_req_i      (host_req_i && s == 0 && st_q[0] == Idle),
      .host_we_i       (host_we_i),
      .host_addr_i     (host_addr_i),
      .host_wdata_i    (host_wdata_i),
      .host_rdata_o    (s_host[s*64 +: 64])
    );
  end

  assign m_axis_tdata_o  = s_tdata[txs_q*64 +: 64];
  assign m_axis_tkeep_o  = s_tkeep[txs_q*8 +: 8];
  assign m_axis_tvalid_o = s_tvalid[txs_q];
  assign m_axis_tlast_o  = s_tlast[txs_q];
  assign m_axis_tuser_o  = s_tuser[txs_q*128 +: 128];
  assign host_rdata_o    = s_host[63:0];

  ebpflow_core #(
    .IW           (IW),
    .AW           (AW),
    .RX_BYTES     (RX_BYTES),
    .STACK_FRAMES (STACK_FRAMES),
    .FW           (FW),
    .BASE         (BASE),
    .KEY_BYTES    (KEY_BYTES),
    .VAL_BYTES    (VAL_BYTES)
  ) u_core (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .start_i      (rx_first),
    .start_len_i  (s_axis_tuser_i[103:88]),
    .rx_done_i    (!rx_open_q),
    .prog_len_i   (prog_len_i),
    .busy_o       (core_busy),
    .done_o       (core_done),
    .fault_o      (result_fault_o),
    .r0_o         (result_r0_o),
    .cycles_o     (result_cycles_o),
    .imem_en_o    (imem_en_o),
    .imem_addr_o  (imem_addr_o),
    .imem_data_i  (imem_data_i),
    .dm_req_o     (dm_req),
    .dm_we_o      (dm_we),
    .dm_addr_o    (dm_addr),
    .dm_size_o    (dm_size),
    .dm_wdata_o   (dm_wdata),
    .dm_ok_i      (s_ok[rxs_q]),
    .dm_rdata_i   (s_rdata[rxs_q*64 +: 64]),
    .hlp_req_o    (c_req),
    .hlp_kfunc_o  (c_kfunc),
    .hlp_id_o     (c_id),
    .hlp_args_o   (c_args),
    .hlp_ack_i    (rdr_local || hlp_ack_i),
    .hlp_r0_i     (rdr_local ? (rdr_ok ? 64'd4 : 64'd0) : hlp_r0_i),
    .hlp_end_i    (!rdr_local && hlp_end_i),
    .hlp_fault_i  (!rdr_local && hlp_fault_i),
    .hlp_key_o    (hlp_key_o),
    .hlp_val_o    (hlp_val_o),
    .mv_req_o     (mv_req_o),
    .mv_we_o      (mv_we_o),
    .mv_atomic_o  (mv_atomic_o),
    .mv_addr_o    (mv_addr_o),
    .mv_size_o    (mv_size_o),
    .mv_wdata_o   (mv_wdata_o),
    .mv_cmp_o     (mv_cmp_o),
    .mv_ack_i     (mv_ack_i),
    .mv_rdata_i   (mv_rdata_i),
    .mv_fault_i   (mv_fault_i)
  );

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int k = 0; k < SLOTS; k++) begin
        st_q[k] <= Idle;
        r0_q[k] <= 64'd0;
      end
      ran_q     <= '0;
      fault_q   <= '0;
      rxs_q     <= (SLOTS > 1) ? 1'b1 : 1'b0;
      txs_q     <= 1'b0;
      rx_open_q <= 1'b0;
    end else begin
      if (rx_first) begin
        rx_open_q   <= !rx_last;
        rxs_q       <= nxt;
        st_q[nxt]   <= Run;
        ran_q[nxt]  <= 1'b0;
      end else if (rx_last) begin
        rx_open_q <= 1'b0;
      end
      if (core_done) begin
        ran_q[rxs_q]   <= 1'b1;
        r0_q[rxs_q]    <= result_r0_o;
        fault_q[rxs_q] <= result_fault_o;
      end
      if (tx_start) begin
        st_q[txs_q] <= Out;
      end else if (st_q[txs_q] == Out && tx_done) begin
        st_q[txs_q] <= Idle;
        txs_q       <= (SLOTS > 1) ? !txs_q : 1'b0;
      end
    end
  end

  // Each slot's redirect target: cleared when its packet's first beat is taken, set by bpf_redirect (here) or by
  // the coprocessor's answer to bpf_redirect_map during its run.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rdr_q <= '0;
      for (int k = 0; k < SLOTS; k++) rdr_port_q[k] <= 32'd0;
    end else begin
      if (rx_first) begin
        rdr_q[nxt] <= 1'b0;
      end
      if (rdr_local && rdr_ok) begin
        rdr_q[rxs_q]      <= 1'b1;
        rdr_port_q[rxs_q] <= c_args[31:0];
      end else if (hlp_ack_i && hlp_rdr_valid_i) begin
        rdr_q[rxs_q]      <= 1'b1;
        rdr_port_q[rxs_q] <= hlp_rdr_port_i;
      end
    end
  end

  assign result_valid_o  = core_done;
  assign start_o         = rx_first;
  assign out_r0_o        = r0_q[txs_q];
  assign out_fault_o     = fault_q[txs_q];
  assign out_rdr_valid_o = rdr_q[txs_q];
  assign out_rdr_port_o  = rdr_port_q[txs_q];
  always_comb begin
    idle_o = 1'b1;
    for (int k = 0; k < SLOTS; k++) begin
      if (st_q[k] != Idle) idle_o = 1'b0;
    end
  end

  logic unused;
  assign unused = ^{s_len, s_first, s_last, s_tready, s_host, core_busy};

endmodule
