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
  parameter integer      VAL_BYTES    = 32    // value bytes a map update gathers at r3
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
  output logic          idle_o,
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
  localparam logic [1:0] Run  = 2'd1;   // the program runs
  localparam logic [1:0] Out  = 2'd2;   // the packet leaves

  logic [1:0] state_q;
  logic       rx_open_q;                // a packet's first beat was taken, its last not yet
  logic       ran_q;                    // the program of the packet in the FIFO has ended
  logic       tx_started_q;

  logic        rx_first;
  logic        rx_last;
  logic [15:0] rx_len;
  logic        core_done;
  logic        core_busy;
  logic        tx_done;
  logic        dm_req;
  logic        dm_we;
  logic [AW-1:0] dm_addr;
  logic [1:0]  dm_size;
  logic [63:0] dm_wdata;
  logic        dm_ok;
  logic [63:0] dm_rdata;
  logic        tx_start;

  // The output starts in the cycle the run's result comes out (or once the whole frame is in).
  assign tx_start = (state_q == Run) && (ran_q || core_done) && !rx_open_q && !tx_started_q;

  ebpflow_dm_fifo #(
    .RX_BYTES (RX_BYTES),
    .AW       (AW),
    .BASE     (BASE)
  ) u_dm (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .ifindex_base_i  (ifindex_base_i),
    .rx_en_i         ((state_q == Idle) || rx_open_q),
    .s_axis_tdata_i  (s_axis_tdata_i),
    .s_axis_tkeep_i  (s_axis_tkeep_i),
    .s_axis_tvalid_i (s_axis_tvalid_i),
    .s_axis_tready_o (s_axis_tready_o),
    .s_axis_tlast_i  (s_axis_tlast_i),
    .s_axis_tuser_i  (s_axis_tuser_i),
    .rx_first_o      (rx_first),
    .rx_last_o       (rx_last),
    .rx_len_o        (rx_len),
    .a_req_i         (dm_req),
    .a_we_i          (dm_we),
    .a_addr_i        (dm_addr),
    .a_size_i        (dm_size),
    .a_wdata_i       (dm_wdata),
    .a_ok_o          (dm_ok),
    .a_rdata_o       (dm_rdata),
    .tx_start_i      (tx_start),
    .m_axis_tdata_o  (m_axis_tdata_o),
    .m_axis_tkeep_o  (m_axis_tkeep_o),
    .m_axis_tvalid_o (m_axis_tvalid_o),
    .m_axis_tready_i (m_axis_tready_i),
    .m_axis_tlast_o  (m_axis_tlast_o),
    .m_axis_tuser_o  (m_axis_tuser_o),
    .tx_done_o       (tx_done),
    .host_req_i      (host_req_i && state_q == Idle),
    .host_we_i       (host_we_i),
    .host_addr_i     (host_addr_i),
    .host_wdata_i    (host_wdata_i),
    .host_rdata_o    (host_rdata_o)
  );

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
    .dm_ok_i      (dm_ok),
    .dm_rdata_i   (dm_rdata),
    .hlp_req_o    (hlp_req_o),
    .hlp_kfunc_o  (hlp_kfunc_o),
    .hlp_id_o     (hlp_id_o),
    .hlp_args_o   (hlp_args_o),
    .hlp_ack_i    (hlp_ack_i),
    .hlp_r0_i     (hlp_r0_i),
    .hlp_end_i    (hlp_end_i),
    .hlp_fault_i  (hlp_fault_i),
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
      state_q      <= Idle;
      rx_open_q    <= 1'b0;
      ran_q        <= 1'b0;
      tx_started_q <= 1'b0;
    end else begin
      if (rx_first) begin
        rx_open_q <= !rx_last;
      end else if (rx_last) begin
        rx_open_q <= 1'b0;
      end
      case (state_q)
        Idle: begin
          if (rx_first) begin
            state_q      <= Run;
            ran_q        <= 1'b0;
            tx_started_q <= 1'b0;
          end
        end
        Run: begin
          if (core_done) begin
            ran_q <= 1'b1;
          end
          if (tx_start) begin
            tx_started_q <= 1'b1;
            state_q      <= Out;
          end
        end
        default: begin
          if (tx_done) begin
            state_q <= Idle;
          end
        end
      endcase
    end
  end

  assign result_valid_o = core_done;
  assign idle_o         = (state_q == Idle);

  logic unused;
  assign unused = ^{rx_len, core_busy};

endmodule
