`default_nettype none
// The eBPFlow NIC: PORTS RX ports, ENGINES_PER_PORT engines each, the action modules, a per-port output arbiter and
// the output crossbar to the TX queues (thesis, Figure 4.1).
//
// Port p's packets (s_axis_rx_*[p], 64 bits a beat, tuser the header's bytes 0..15 on the first beat) go through
// ebpflow_demux to a free engine of that port (engine index e = p * G + g). When the program has ended, the engine's
// action module turns r0 and the fault flag into a Table 4.2 action and the TX queues it goes to (ebpflow_action:
// queues 0 .. P-1 the ports, P the host queue, P+1 the controller); the port's ebpflow_out_arbiter takes whole
// packets from its engines round robin and ebpflow_crossbar moves them to the TX queues (m_axis_tx_*[q], whole
// packets, round robin per queue, a flood to several, a drop to none). On the way out the header's destination-queue
// byte (byte 2, tuser[23:16]) becomes the action module's queue and byte 13 (tuser[111:104], free in Table 4.1)
// the engine that ran the packet.
//
// xdp_i chooses how r0 reads: an XDP verdict (XDP_TX to the input port, XDP_PASS to the host queue, XDP_REDIRECT to
// the port the coprocessor reported for the run, the rest dropped) or the thesis's own action codes.
//
// Helper calls and map-value accesses of every engine go to the one ebpflow_coproc (round robin over the engines);
// its map table (mt_*) and host port (host_*) are the NIC's. A bpf_redirect(_map) answer's target (an ifindex: the
// devmap value) is latched per engine for its run; XDP_REDIRECT goes to port ifindex - ifindex_base_i (port p is
// ifindex ifindex_base_i + p, as in the cycle model), or to the host queue when the ifindex is none of the NIC's.
//
// Instruction memory: the double-buffered ebpflow_imem_db, shared by every engine. The host writes the idle bank
// (imem_we_i, imem_len_we_i) while traffic runs, as long as imem_wr_ready_o is high, and imem_swap_i makes it the
// bank the next packets take: a packet runs on the bank that was active when its first beat entered its engine.
module ebpflow_nic #(
  parameter integer PORTS            = 4,
  parameter integer ENGINES_PER_PORT = 4,
  parameter integer IMEM_DEPTH       = 4096,
  parameter integer IW               = 12,    // $clog2(IMEM_DEPTH)
  parameter integer RX_BYTES         = 4096,
  parameter integer STACK_FRAMES     = 8,
  parameter integer FW               = 3,
  parameter integer AW               = 13,
  parameter integer MAPS             = 8,     // the coprocessor's map-table entries
  parameter integer MW               = 3,     // $clog2(MAPS)
  parameter integer KEY_BYTES        = 16,    // longest map key (a multiple of 8, at most 64)
  parameter integer VAL_BYTES        = 32,    // longest map value an update carries (a multiple of 8, at most 128)
  parameter integer CAM_ENTRIES      = 64,    // exact-match entries of the LRU_HASH maps (flip-flop CAM)
  parameter integer HB_BUCKETS       = 64,    // buckets of the HASH maps (block RAM, 4 slots each)
  parameter integer HB_ENTRIES       = 128,   // max_entries of the HASH maps together
  parameter integer TCAM_ENTRIES     = 32,    // LPM entries
  parameter integer VM_WORDS         = 4096,  // the coprocessor's value memory, 64-bit words
  parameter integer COPROC           = 1,     // 0: no coprocessor, every helper call and map-value access faults
  parameter integer DM_SLOTS         = 2,     // packets an engine's DM_FIFO holds (ebpflow_engine's SLOTS)
                                              //    (the NIC's datapath measured apart from its coprocessor)
  parameter integer QUEUES           = PORTS + 2
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // program
  input  logic                   imem_we_i,
  input  logic [IW-1:0]          imem_addr_i,
  input  logic [63:0]            imem_data_i,
  input  logic                   imem_len_we_i,    // the idle bank's program length, in slots
  input  logic [IW:0]            imem_len_i,
  input  logic                   imem_swap_i,      // the idle bank becomes the active one
  output logic                   imem_wr_ready_o,  // the idle bank may be written (no packet runs on it)
  output logic                   imem_active_o,
  input  logic                   xdp_i,
  input  logic [31:0]            ifindex_base_i,   // the ifindex of port 0
  // RX ports
  input  logic [PORTS*64-1:0]    s_axis_rx_tdata_i,
  input  logic [PORTS*8-1:0]     s_axis_rx_tkeep_i,
  input  logic [PORTS-1:0]       s_axis_rx_tvalid_i,
  output logic [PORTS-1:0]       s_axis_rx_tready_o,
  input  logic [PORTS-1:0]       s_axis_rx_tlast_i,
  input  logic [PORTS*128-1:0]   s_axis_rx_tuser_i,
  // TX queues
  output logic [QUEUES*64-1:0]   m_axis_tx_tdata_o,
  output logic [QUEUES*8-1:0]    m_axis_tx_tkeep_o,
  output logic [QUEUES-1:0]      m_axis_tx_tvalid_o,
  input  logic [QUEUES-1:0]      m_axis_tx_tready_i,
  output logic [QUEUES-1:0]      m_axis_tx_tlast_o,
  output logic [QUEUES*128-1:0]  m_axis_tx_tuser_o,
  // the coprocessor's map table and host port (ebpflow_coproc)
  input  logic                   mt_clear_i,
  input  logic                   mt_we_i,
  input  logic [MW-1:0]          mt_idx_i,
  input  logic [7:0]             mt_type_i,
  input  logic [7:0]             mt_key_size_i,
  input  logic [20:0]            mt_value_size_i,   // at most the 1 MiB window of a map
  input  logic [31:0]            mt_max_entries_i,
  output logic                   mt_err_o,
  output logic                   mt_busy_o,
  input  logic                   host_req_i,
  input  logic [31:0]            host_id_i,
  input  logic [319:0]           host_args_i,
  input  logic [KEY_BYTES*8-1:0] host_key_i,
  input  logic [VAL_BYTES*8-1:0] host_val_i,
  output logic                   host_ack_o,
  output logic [63:0]            host_r0_o,
  output logic [KEY_BYTES*8-1:0] host_key_o,
  // observation, for a host that checks every packet (sim/ebpflow/ebpflow_nic_harness.cpp): each engine's run
  // (eng_start_o the cycle its packet's first beat enters, res_*_o the engine's result_*_o) and each port's
  // output arbiter beat as the crossbar takes it (obs_*, with the TX queues it goes to: none for a drop)
  output logic [PORTS*ENGINES_PER_PORT-1:0]    eng_start_o,
  output logic [PORTS*ENGINES_PER_PORT-1:0]    res_valid_o,
  output logic [PORTS*ENGINES_PER_PORT*64-1:0] res_r0_o,
  output logic [PORTS*ENGINES_PER_PORT-1:0]    res_fault_o,
  output logic [PORTS*ENGINES_PER_PORT*32-1:0] res_cycles_o,
  output logic [PORTS-1:0]       obs_tvalid_o,
  output logic [PORTS*64-1:0]    obs_tdata_o,
  output logic [PORTS*8-1:0]     obs_tkeep_o,
  output logic [PORTS-1:0]       obs_tlast_o,
  output logic [PORTS*128-1:0]   obs_tuser_o,
  output logic [PORTS*QUEUES-1:0] obs_mask_o,
  // status
  output logic [PORTS*ENGINES_PER_PORT-1:0] engine_idle_o,
  output logic                   idle_o
);

  localparam integer G  = ENGINES_PER_PORT;
  localparam integer GW = (G > 1) ? $clog2(G) : 1;
  localparam integer E  = PORTS * G;
  localparam integer M  = QUEUES;
  localparam integer UA = 128 + M;   // tuser beside a packet on its way to the crossbar: header and TX queues

  // engine side, engine e at [e]
  logic [E*64-1:0]  eng_in_tdata;
  logic [E*8-1:0]   eng_in_tkeep;
  logic [E-1:0]     eng_in_tvalid;
  logic [E-1:0]     eng_in_tready;
  logic [E-1:0]     eng_in_tlast;
  logic [E*128-1:0] eng_in_tuser;
  logic [E*64-1:0]  eng_out_tdata;
  logic [E*8-1:0]   eng_out_tkeep;
  logic [E-1:0]     eng_out_tvalid;
  logic [E-1:0]     eng_out_tready;
  logic [E-1:0]     eng_out_tlast;
  logic [E*UA-1:0]  eng_out_tuser;
  logic [E-1:0]     eng_idle;
  logic [E-1:0]     imem_en;
  logic [E*IW-1:0]  imem_addr;
  logic [E*64-1:0]  imem_data;
  logic [E*(IW+1)-1:0] prog_len;
  logic [E-1:0]     eng_start;   // engine e's packet's first beat enters: its run starts, reading slot 0
  logic [E-1:0]     eng_done;    // engine e's run ends
  logic [E-1:0]     imem_bank;
  // helper and map-value ports, engine e at [e]
  logic [E-1:0]             hlp_req;
  logic [E-1:0]             hlp_kfunc;
  logic [E*32-1:0]          hlp_id;
  logic [E*320-1:0]         hlp_args;
  logic [E*KEY_BYTES*8-1:0] hlp_key;
  logic [E*VAL_BYTES*8-1:0] hlp_val;
  logic [E-1:0]             hlp_ack;
  logic [E*64-1:0]          hlp_r0;
  logic [E-1:0]             hlp_end;
  logic [E-1:0]             hlp_fault;
  logic [E-1:0]             rdr_valid;
  logic [E*32-1:0]          rdr_port;
  logic [E-1:0]             mv_req;
  logic [E-1:0]             mv_we;
  logic [E*3-1:0]           mv_atomic;
  logic [E*24-1:0]          mv_addr;
  logic [E*2-1:0]           mv_size;
  logic [E*64-1:0]          mv_wdata;
  logic [E*64-1:0]          mv_cmp;
  logic [E-1:0]             mv_ack;
  logic [E*64-1:0]          mv_rdata;
  logic [E-1:0]             mv_fault;

  // port side, port p at [p]
  logic [PORTS*64-1:0]  arb_tdata;
  logic [PORTS*8-1:0]   arb_tkeep;
  logic [PORTS-1:0]     arb_tvalid;
  logic [PORTS-1:0]     arb_tready;
  logic [PORTS-1:0]     arb_tlast;
  logic [PORTS*128-1:0] arb_tuser;
  logic [PORTS*M-1:0]   arb_mask;
  logic [PORTS-1:0]     demux_open;

  for (genvar p = 0; p < PORTS; p++) begin : g_port
    logic [63:0]          dm_tdata;
    logic [7:0]           dm_tkeep;
    logic                 dm_tlast;
    logic [127:0]         dm_tuser;
    logic [UA-1:0]        arb_user;
    logic [GW-1:0]        demux_sel;
    logic [GW-1:0]        arb_sel;
    logic                 unused_port;

    ebpflow_demux #(
      .G  (G),
      .UW (128)
    ) u_demux (
      .clk_i           (clk_i),
      .rst_ni          (rst_ni),
      .s_axis_tdata_i  (s_axis_rx_tdata_i[p*64 +: 64]),
      .s_axis_tkeep_i  (s_axis_rx_tkeep_i[p*8 +: 8]),
      .s_axis_tvalid_i (s_axis_rx_tvalid_i[p]),
      .s_axis_tready_o (s_axis_rx_tready_o[p]),
      .s_axis_tlast_i  (s_axis_rx_tlast_i[p]),
      .s_axis_tuser_i  (s_axis_rx_tuser_i[p*128 +: 128]),
      .m_axis_tdata_o  (dm_tdata),
      .m_axis_tkeep_o  (dm_tkeep),
      .m_axis_tvalid_o (eng_in_tvalid[p*G +: G]),
      .m_axis_tready_i (eng_in_tready[p*G +: G]),
      .m_axis_tlast_o  (dm_tlast),
      .m_axis_tuser_o  (dm_tuser),
      .sel_o           (demux_sel),
      .open_o          (demux_open[p])
    );

    for (genvar g = 0; g < G; g++) begin : g_bcast
      assign eng_in_tdata[(p*G+g)*64 +: 64]   = dm_tdata;
      assign eng_in_tkeep[(p*G+g)*8 +: 8]     = dm_tkeep;
      assign eng_in_tlast[p*G+g]              = dm_tlast;
      assign eng_in_tuser[(p*G+g)*128 +: 128] = dm_tuser;
    end

    ebpflow_out_arbiter #(
      .G  (G),
      .UW (UA)
    ) u_arb (
      .clk_i           (clk_i),
      .rst_ni          (rst_ni),
      .s_axis_tdata_i  (eng_out_tdata[p*G*64 +: G*64]),
      .s_axis_tkeep_i  (eng_out_tkeep[p*G*8 +: G*8]),
      .s_axis_tvalid_i (eng_out_tvalid[p*G +: G]),
      .s_axis_tready_o (eng_out_tready[p*G +: G]),
      .s_axis_tlast_i  (eng_out_tlast[p*G +: G]),
      .s_axis_tuser_i  (eng_out_tuser[p*G*UA +: G*UA]),
      .m_axis_tdata_o  (arb_tdata[p*64 +: 64]),
      .m_axis_tkeep_o  (arb_tkeep[p*8 +: 8]),
      .m_axis_tvalid_o (arb_tvalid[p]),
      .m_axis_tready_i (arb_tready[p]),
      .m_axis_tlast_o  (arb_tlast[p]),
      .m_axis_tuser_o  (arb_user),
      .sel_o           (arb_sel)
    );

    assign arb_tuser[p*128 +: 128] = arb_user[127:0];
    assign arb_mask[p*M +: M]      = arb_user[UA-1:128];
    assign unused_port             = ^{demux_sel, arb_sel};
  end

  for (genvar e = 0; e < E; e++) begin : g_engine
    logic [127:0]  out_user;
    logic [63:0]   r0;
    logic          fault;
    logic [M-1:0]  mask;
    logic [7:0]    dest_q;
    logic [15:0]   action;
    logic [31:0]   result_cycles;
    logic [63:0]   host_rdata;
    logic [63:0]   out_r0;     // the leaving packet's run's r0 and fault flag
    logic          out_fault;
    logic          rdr_valid_out;  // the leaving packet's redirect target, an ifindex, is known
    logic [31:0]   rdr_port_out;
    logic [31:0]   rdr_rel;        // its port, if it is one of the NIC's

    ebpflow_engine #(
      .IW           (IW),
      .RX_BYTES     (RX_BYTES),
      .STACK_FRAMES (STACK_FRAMES),
      .FW           (FW),
      .AW           (AW),
      .KEY_BYTES    (KEY_BYTES),
      .VAL_BYTES    (VAL_BYTES),
      .SLOTS        (DM_SLOTS)
    ) u_engine (
      .clk_i           (clk_i),
      .rst_ni          (rst_ni),
      .prog_len_i      (prog_len[e*(IW+1) +: IW+1]),
      .ifindex_base_i  (ifindex_base_i),
      .s_axis_tdata_i  (eng_in_tdata[e*64 +: 64]),
      .s_axis_tkeep_i  (eng_in_tkeep[e*8 +: 8]),
      .s_axis_tvalid_i (eng_in_tvalid[e]),
      .s_axis_tready_o (eng_in_tready[e]),
      .s_axis_tlast_i  (eng_in_tlast[e]),
      .s_axis_tuser_i  (eng_in_tuser[e*128 +: 128]),
      .m_axis_tdata_o  (eng_out_tdata[e*64 +: 64]),
      .m_axis_tkeep_o  (eng_out_tkeep[e*8 +: 8]),
      .m_axis_tvalid_o (eng_out_tvalid[e]),
      .m_axis_tready_i (eng_out_tready[e]),
      .m_axis_tlast_o  (eng_out_tlast[e]),
      .m_axis_tuser_o  (out_user),
      .result_valid_o  (eng_done[e]),
      .result_r0_o     (r0),
      .result_fault_o  (fault),
      .result_cycles_o (result_cycles),
      .idle_o          (eng_idle[e]),
      .start_o         (eng_start[e]),
      .out_r0_o        (out_r0),
      .out_fault_o     (out_fault),
      .out_rdr_valid_o (rdr_valid_out),
      .out_rdr_port_o  (rdr_port_out),
      .imem_en_o       (imem_en[e]),
      .imem_addr_o     (imem_addr[e*IW +: IW]),
      .imem_data_i     (imem_data[e*64 +: 64]),
      .hlp_req_o       (hlp_req[e]),
      .hlp_kfunc_o     (hlp_kfunc[e]),
      .hlp_id_o        (hlp_id[e*32 +: 32]),
      .hlp_args_o      (hlp_args[e*320 +: 320]),
      .hlp_ack_i       (hlp_ack[e]),
      .hlp_r0_i        (hlp_r0[e*64 +: 64]),
      .hlp_end_i       (hlp_end[e]),
      .hlp_fault_i     (hlp_fault[e]),
      .hlp_rdr_valid_i (rdr_valid[e]),
      .hlp_rdr_port_i  (rdr_port[e*32 +: 32]),
      .hlp_key_o       (hlp_key[e*KEY_BYTES*8 +: KEY_BYTES*8]),
      .hlp_val_o       (hlp_val[e*VAL_BYTES*8 +: VAL_BYTES*8]),
      .mv_req_o        (mv_req[e]),
      .mv_we_o         (mv_we[e]),
      .mv_atomic_o     (mv_atomic[e*3 +: 3]),
      .mv_addr_o       (mv_addr[e*24 +: 24]),
      .mv_size_o       (mv_size[e*2 +: 2]),
      .mv_wdata_o      (mv_wdata[e*64 +: 64]),
      .mv_cmp_o        (mv_cmp[e*64 +: 64]),
      .mv_ack_i        (mv_ack[e]),
      .mv_rdata_i      (mv_rdata[e*64 +: 64]),
      .mv_fault_i      (mv_fault[e]),
      .host_req_i      (1'b0),
      .host_we_i       (1'b0),
      .host_addr_i     ('0),
      .host_wdata_i    (64'd0),
      .host_rdata_o    (host_rdata)
    );

    ebpflow_action #(
      .P (PORTS),
      .M (M)
    ) u_action (
      .xdp_i            (xdp_i),
      .r0_i             (out_r0),
      .fault_i          (out_fault),
      .in_port_i        (8'(e / G)),
      .redirect_valid_i (rdr_valid_out),
      .redirect_port_i  ((rdr_rel < PORTS) ? rdr_rel[15:0] : 16'hfff2),
      .action_o         (action),
      .mask_o           (mask),
      .dest_q_o         (dest_q)
    );

    assign eng_out_tuser[e*UA +: UA] = {mask, out_user[127:112], 8'(e), out_user[103:24], dest_q,
                                        out_user[15:0]};

    assign rdr_rel = rdr_port_out - ifindex_base_i;

    assign res_r0_o[e*64 +: 64]     = r0;
    assign res_fault_o[e]           = fault;
    assign res_cycles_o[e*32 +: 32] = result_cycles;

    logic unused;
    assign unused = ^{out_user[111:104], out_user[23:16], action, host_rdata};
  end

  ebpflow_imem_db #(
    .ENGINES (E),
    .DEPTH   (IMEM_DEPTH),
    .IW      (IW)
  ) u_imem (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .wr_en_i    (imem_we_i),
    .wr_addr_i  (imem_addr_i),
    .wr_data_i  (imem_data_i),
    .len_we_i   (imem_len_we_i),
    .len_i      (imem_len_i),
    .swap_i     (imem_swap_i),
    .wr_ready_o (imem_wr_ready_o),
    .active_o   (imem_active_o),
    .start_i    (eng_start),
    .done_i     (eng_done),
    .rd_en_i    (imem_en),
    .rd_addr_i  (imem_addr),
    .rd_data_o  (imem_data),
    .prog_len_o (prog_len),
    .bank_o     (imem_bank)
  );

  if (COPROC != 0) begin : g_coproc
    ebpflow_coproc #(
      .ENGINES      (E),
      .MAPS         (MAPS),
      .MW           (MW),
      .KEY_BYTES    (KEY_BYTES),
      .VAL_BYTES    (VAL_BYTES),
      .CAM_ENTRIES  (CAM_ENTRIES),
      .HB_BUCKETS   (HB_BUCKETS),
      .HB_ENTRIES   (HB_ENTRIES),
      .TCAM_ENTRIES (TCAM_ENTRIES),
      .VM_WORDS     (VM_WORDS)
    ) u_coproc (
      .clk_i            (clk_i),
      .rst_ni           (rst_ni),
      .mt_clear_i       (mt_clear_i),
      .mt_we_i          (mt_we_i),
      .mt_idx_i         (mt_idx_i),
      .mt_type_i        (mt_type_i),
      .mt_key_size_i    (mt_key_size_i),
      .mt_value_size_i  (mt_value_size_i),
      .mt_max_entries_i (mt_max_entries_i),
      .mt_err_o         (mt_err_o),
      .mt_busy_o        (mt_busy_o),
      .hlp_req_i        (hlp_req),
      .hlp_kfunc_i      (hlp_kfunc),
      .hlp_id_i         (hlp_id),
      .hlp_args_i       (hlp_args),
      .hlp_key_i        (hlp_key),
      .hlp_val_i        (hlp_val),
      .hlp_ack_o        (hlp_ack),
      .hlp_r0_o         (hlp_r0),
      .hlp_end_o        (hlp_end),
      .hlp_fault_o      (hlp_fault),
      .rdr_valid_o      (rdr_valid),
      .rdr_port_o       (rdr_port),
      .mv_req_i         (mv_req),
      .mv_we_i          (mv_we),
      .mv_atomic_i      (mv_atomic),
      .mv_addr_i        (mv_addr),
      .mv_size_i        (mv_size),
      .mv_wdata_i       (mv_wdata),
      .mv_cmp_i         (mv_cmp),
      .mv_ack_o         (mv_ack),
      .mv_rdata_o       (mv_rdata),
      .mv_fault_o       (mv_fault),
      .host_req_i       (host_req_i),
      .host_id_i        (host_id_i),
      .host_args_i      (host_args_i),
      .host_key_i       (host_key_i),
      .host_val_i       (host_val_i),
      .host_ack_o       (host_ack_o),
      .host_r0_o        (host_r0_o),
      .host_key_o       (host_key_o)
    );
  end else begin : g_no_coproc
    // Every request is answered in the next cycle with a fault.
    logic [E-1:0] ack_q;
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) ack_q <= '0;
      else         ack_q <= (hlp_req | mv_req) & ~ack_q;
    end
    assign hlp_ack     = ack_q & hlp_req;
    assign mv_ack      = ack_q & mv_req;
    assign hlp_r0      = '0;
    assign hlp_end     = '0;
    assign hlp_fault   = '1;
    assign mv_rdata    = '0;
    assign mv_fault    = '1;
    assign rdr_valid   = '0;
    assign rdr_port    = '0;
    assign mt_err_o    = 1'b0;
    assign mt_busy_o   = 1'b0;
    assign host_ack_o  = 1'b0;
    assign host_r0_o   = 64'd0;
    assign host_key_o  = '0;
    logic unused_coproc;
    assign unused_coproc = ^{hlp_kfunc, hlp_id, hlp_args, hlp_key, hlp_val, mv_we, mv_atomic, mv_addr, mv_size,
                             mv_wdata, mv_cmp, mt_clear_i, mt_we_i, mt_idx_i, mt_type_i, mt_key_size_i,
                             mt_value_size_i, mt_max_entries_i, host_req_i, host_id_i, host_args_i, host_key_i,
                             host_val_i};
  end

  ebpflow_crossbar #(
    .N  (PORTS),
    .M  (M),
    .UW (128)
  ) u_xbar (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .s_axis_tdata_i  (arb_tdata),
    .s_axis_tkeep_i  (arb_tkeep),
    .s_axis_tvalid_i (arb_tvalid),
    .s_axis_tready_o (arb_tready),
    .s_axis_tlast_i  (arb_tlast),
    .s_axis_tuser_i  (arb_tuser),
    .s_mask_i        (arb_mask),
    .m_axis_tdata_o  (m_axis_tx_tdata_o),
    .m_axis_tkeep_o  (m_axis_tx_tkeep_o),
    .m_axis_tvalid_o (m_axis_tx_tvalid_o),
    .m_axis_tready_i (m_axis_tx_tready_i),
    .m_axis_tlast_o  (m_axis_tx_tlast_o),
    .m_axis_tuser_o  (m_axis_tx_tuser_o)
  );

  assign engine_idle_o = eng_idle;
  assign eng_start_o   = eng_start;
  assign res_valid_o   = eng_done;
  assign obs_tvalid_o  = arb_tvalid & arb_tready;
  assign obs_tdata_o   = arb_tdata;
  assign obs_tkeep_o   = arb_tkeep;
  assign obs_tlast_o   = arb_tlast;
  assign obs_tuser_o   = arb_tuser;
  assign obs_mask_o    = arb_mask;

  logic unused_bank;
  assign unused_bank = ^imem_bank;
  assign idle_o        = (&eng_idle) && !(|demux_open);

endmodule
