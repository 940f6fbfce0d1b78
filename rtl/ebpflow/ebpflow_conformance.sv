`default_nettype none
// One eBPFlow engine in the conformance environment: the engine, its instruction memory and the unwind helper unit.
//
// The top the Verilator harness (sim/ebpflow/ebpflow_harness.cpp) drives: programs go in through imem_we_i, packets
// (the conformance test's memory as the frame) through s_axis_*, results come out of result_* and m_axis_*, and the
// host port reads and writes data-memory words between runs.
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
  output logic [63:0]   host_rdata_o
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
    .hlp_key_o       (hlp_key),
    .hlp_val_o       (hlp_val),
    // No coprocessor here: a map-value access is answered at once with a fault.
    .mv_req_o        (mv_req),
    .mv_we_o         (mv_we),
    .mv_atomic_o     (mv_atomic),
    .mv_addr_o       (mv_addr),
    .mv_size_o       (mv_size),
    .mv_wdata_o      (mv_wdata),
    .mv_cmp_o        (mv_cmp),
    .mv_ack_i        (mv_req),
    .mv_rdata_i      (64'd0),
    .mv_fault_i      (1'b1),
    .host_req_i      (host_req_i),
    .host_we_i       (host_we_i),
    .host_addr_i     (host_addr_i),
    .host_wdata_i    (host_wdata_i),
    .host_rdata_o    (host_rdata_o)
  );

  logic unused;
  assign unused = ^{mv_we, mv_atomic, mv_addr, mv_size, mv_wdata, mv_cmp, hlp_key, hlp_val};

  ebpflow_unwind u_unwind (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .hlp_req_i   (hlp_req),
    .hlp_kfunc_i (hlp_kfunc),
    .hlp_id_i    (hlp_id),
    .hlp_args_i  (hlp_args),
    .hlp_ack_o   (hlp_ack),
    .hlp_r0_o    (hlp_r0),
    .hlp_end_o   (hlp_end),
    .hlp_fault_o (hlp_fault)
  );

endmodule
