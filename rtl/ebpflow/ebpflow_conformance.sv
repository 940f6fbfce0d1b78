`default_nettype none
// One eBPFlow engine in the conformance environment: the engine, its instruction memory, the unwind helper unit and a
// coprocessor of its own (ebpflow_coproc, one engine) for map helpers and map-value accesses.
//
// The top the Verilator harness (sim/ebpflow/ebpflow_harness.cpp) drives: programs go in through imem_we_i, the map
// table through mt_* (none by default: then every map helper and map-value access faults, as in the conformance
// environment), packets (the conformance test's memory as the frame) through s_axis_*, results come out of result_*
// and m_axis_*, and the host port reads and writes data-memory words between runs. Helper 5 and runtime functions go
// to the unwind unit, every other helper to the coprocessor; coproc_busy_o is high while the coprocessor clears its
// value memory after reset.
module ebpflow_conformance #(
  parameter integer IMEM_DEPTH   = 4096,
  parameter integer IW           = 12,
  parameter integer RX_BYTES     = 4096,
  parameter integer STACK_FRAMES = 8,
  parameter integer FW           = 3,
  parameter integer AW           = 13
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          imem_we_i,
  input  logic [IW-1:0] imem_addr_i,
  input  logic [63:0]   imem_data_i,
  input  logic [IW:0]   prog_len_i,
  input  logic [63:0]   s_axis_tdata_i,
  input  logic [7:0]    s_axis_tkeep_i,
  input  logic          s_axis_tvalid_i,
  output logic          s_axis_tready_o,
  input  logic          s_axis_tlast_i,
  input  logic [127:0]  s_axis_tuser_i,
  output logic [63:0]   m_axis_tdata_o,
  output logic [7:0]    m_axis_tkeep_o,
  output logic          m_axis_tvalid_o,
  input  logic          m_axis_tready_i,
  output logic          m_axis_tlast_o,
  output logic [127:0]  m_axis_tuser_o,
  output logic          result_valid_o,
  output logic [63:0]   result_r0_o,
  output logic          result_fault_o,
  output logic [31:0]   result_cycles_o,
  output logic          idle_o,
  input  logic          host_req_i,
  input  logic          host_we_i,
  input  logic [AW-4:0] host_addr_i,
  input  logic [63:0]   host_wdata_i,
  output logic [63:0]   host_rdata_o,
  input  logic          mt_we_i,
  input  logic [2:0]    mt_idx_i,
  input  logic [7:0]    mt_type_i,
  input  logic [7:0]    mt_key_size_i,
  input  logic [15:0]   mt_value_size_i,
  input  logic [31:0]   mt_max_entries_i,
  output logic          mt_err_o,
  output logic          coproc_busy_o
);

  logic          fetch_en;
  logic [IW-1:0] fetch_addr;
  logic [63:0]   fetch_data;
  logic          hlp_req;
  logic          hlp_kfunc;
  logic [31:0]   hlp_id;
  logic [319:0]  hlp_args;
  logic          hlp_ack;
  logic [63:0]   hlp_r0;
  logic          hlp_end;
  logic          hlp_fault;
  logic          mv_ack;
  logic [63:0]   mv_rdata;
  logic          mv_fault;
  logic          mv_req;
  logic          mv_we;
  logic [2:0]    mv_atomic;
  logic [23:0]   mv_addr;
  logic [1:0]    mv_size;
  logic [63:0]   mv_wdata;
  logic [63:0]   mv_cmp;
  logic [127:0]  hlp_key;
  logic [255:0]  hlp_val;

  ebpflow_imem #(
    .DEPTH (IMEM_DEPTH),
    .IW    (IW)
  ) u_imem (
    .clk_i     (clk_i),
    .we_i      (imem_we_i),
    .wr_addr_i (imem_addr_i),
    .wr_data_i (imem_data_i),
    .rd_en_i   (fetch_en),
    .rd_addr_i (fetch_addr),
    .rd_data_o (fetch_data)
  );

  // The engine's per-packet outputs (one DM_FIFO slot here: they equal result_*_o) are not used.
  logic        eng_start;
  logic [63:0] eng_out_r0;
  logic        eng_out_fault;
  logic        eng_rdr_valid;
  logic [31:0] eng_rdr_port;
  logic        eng_unused;
  assign eng_unused = ^{eng_start, eng_out_r0, eng_out_fault, eng_rdr_valid, eng_rdr_port};

  ebpflow_engine #(
    .IW           (IW),
    .RX_BYTES     (RX_BYTES),
    .STACK_FRAMES (STACK_FRAMES),
    .FW           (FW),
    .AW           (AW)
  ) u_engine (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .prog_len_i      (prog_len_i),
    .ifindex_base_i  (32'd1),
    .s_axis_tdata_i  (s_axis_tdata_i),
    .s_axis_tkeep_i  (s_axis_tkeep_i),
    .s_axis_tvalid_i (s_axis_tvalid_i),
    .s_axis_tready_o (s_axis_tready_o),
    .s_axis_tlast_i  (s_axis_tlast_i),
    .s_axis_tuser_i  (s_axis_tuser_i),
    .m_axis_tdata_o  (m_axis_tdata_o),
    .m_axis_tkeep_o  (m_axis_tkeep_o),
    .m_axis_tvalid_o (m_axis_tvalid_o),
    .m_axis_tready_i (m_axis_tready_i),
    .m_axis_tlast_o  (m_axis_tlast_o),
    .m_axis_tuser_o  (m_axis_tuser_o),
    .result_valid_o  (result_valid_o),
    .result_r0_o     (result_r0_o),
    .result_fault_o  (result_fault_o),
    .result_cycles_o (result_cycles_o),
    .idle_o          (idle_o),
    .start_o         (eng_start),
    .out_r0_o        (eng_out_r0),
    .out_fault_o     (eng_out_fault),
    .out_rdr_valid_o (eng_rdr_valid),
    .out_rdr_port_o  (eng_rdr_port),
    .imem_en_o       (fetch_en),
    .imem_addr_o     (fetch_addr),
    .imem_data_i     (fetch_data),
    .hlp_req_o       (hlp_req),
    .hlp_kfunc_o     (hlp_kfunc),
    .hlp_id_o        (hlp_id),
    .hlp_args_o      (hlp_args),
    .hlp_ack_i       (hlp_ack),
    .hlp_r0_i        (hlp_r0),
    .hlp_end_i       (hlp_end),
    .hlp_fault_i     (hlp_fault),
    .hlp_rdr_valid_i (1'b0),
    .hlp_rdr_port_i  (32'd0),
    .hlp_key_o       (hlp_key),
    .hlp_val_o       (hlp_val),
    .mv_req_o        (mv_req),
    .mv_we_o         (mv_we),
    .mv_atomic_o     (mv_atomic),
    .mv_addr_o       (mv_addr),
    .mv_size_o       (mv_size),
    .mv_wdata_o      (mv_wdata),
    .mv_cmp_o        (mv_cmp),
    .mv_ack_i        (mv_ack),
    .mv_rdata_i      (mv_rdata),
    .mv_fault_i      (mv_fault),
    .host_req_i      (host_req_i),
    .host_we_i       (host_we_i),
    .host_addr_i     (host_addr_i),
    .host_wdata_i    (host_wdata_i),
    .host_rdata_o    (host_rdata_o)
  );

  // Helper 5 and runtime functions to the unwind unit, the rest to the coprocessor.
  logic          to_unwind;
  logic          uw_ack;
  logic [63:0]   uw_r0;
  logic          uw_end;
  logic          uw_fault;
  logic          cp_ack;
  logic [63:0]   cp_r0;
  logic          cp_end;
  logic          cp_fault;
  assign to_unwind = hlp_kfunc || hlp_id == 32'd5;
  assign hlp_ack   = to_unwind ? uw_ack : cp_ack;
  assign hlp_r0    = to_unwind ? uw_r0 : cp_r0;
  assign hlp_end   = to_unwind ? uw_end : cp_end;
  assign hlp_fault = to_unwind ? uw_fault : cp_fault;

  ebpflow_unwind u_unwind (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .hlp_req_i   (hlp_req && to_unwind),
    .hlp_kfunc_i (hlp_kfunc),
    .hlp_id_i    (hlp_id),
    .hlp_args_i  (hlp_args),
    .hlp_ack_o   (uw_ack),
    .hlp_r0_o    (uw_r0),
    .hlp_end_o   (uw_end),
    .hlp_fault_o (uw_fault)
  );

  logic        rdr_valid;
  logic [31:0] rdr_port;
  logic        cp_host_ack;
  logic [63:0] cp_host_r0;
  logic [127:0] cp_host_key;

  ebpflow_coproc #(
    .ENGINES  (1),
    .VM_WORDS (1024)
  ) u_coproc (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .mt_clear_i       (1'b0),
    .mt_we_i          (mt_we_i),
    .mt_idx_i         (mt_idx_i),
    .mt_type_i        (mt_type_i),
    .mt_key_size_i    (mt_key_size_i),
    .mt_value_size_i  (21'(mt_value_size_i)),
    .mt_max_entries_i (mt_max_entries_i),
    .mt_err_o         (mt_err_o),
    .mt_busy_o        (coproc_busy_o),
    .hlp_req_i        (hlp_req && !to_unwind),
    .hlp_kfunc_i      (hlp_kfunc),
    .hlp_id_i         (hlp_id),
    .hlp_args_i       (hlp_args),
    .hlp_key_i        (hlp_key),
    .hlp_val_i        (hlp_val),
    .hlp_ack_o        (cp_ack),
    .hlp_r0_o         (cp_r0),
    .hlp_end_o        (cp_end),
    .hlp_fault_o      (cp_fault),
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
    .host_req_i       (1'b0),
    .host_id_i        (32'd0),
    .host_args_i      (320'd0),
    .host_key_i       (128'd0),
    .host_val_i       (256'd0),
    .host_ack_o       (cp_host_ack),
    .host_r0_o        (cp_host_r0),
    .host_key_o       (cp_host_key)
  );

  logic unused;
  assign unused = ^{rdr_valid, rdr_port, cp_host_ack, cp_host_r0, cp_host_key};

endmodule
