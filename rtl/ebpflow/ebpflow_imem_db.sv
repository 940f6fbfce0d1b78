`default_nettype none
// eBPFlow double-buffered instruction memory, shared by ENGINES engines (the thesis's section 4.2.4, Figure 4.6).
//
// Two banks of DEPTH 64-bit slots. One bank is active: a packet that starts (start_i[e], the cycle engine e reads
// its first slot) is bound to the active bank and reads it until its run ends (done_i[e]), whatever swaps happen
// meanwhile; its next packet takes the bank active then. The host writes the other bank (wr_*, len_*) while traffic
// runs, and swap_i makes it the active one from the next cycle on. The host may write only while no engine's packet
// is bound to the inactive bank (wr_ready_o); writes while wr_ready_o is low are ignored, so no packet ever runs on a
// half-written program: a bank is written only while no packet reads it, and a packet reads one bank from its start
// to its end.
//
// Read ports: each bank is ceil(ENGINES / 2) copies of a true-dual-port RAM (rtl/common/ram_tdp), copy c serving
// engines 2c (port A, which also takes the host's writes) and 2c + 1 (port B): one read per engine per cycle, a
// registered read as ebpflow_imem's (rd_data_o holds while rd_en_i is low). The cost is 2 * ceil(ENGINES / 2) *
// DEPTH * 64 bits of block RAM (docs/ebpflow.md).
module ebpflow_imem_db #(
  parameter integer ENGINES = 4,
  parameter integer DEPTH   = 1024,   // slots per bank
  parameter integer IW      = 10      // $clog2(DEPTH)
) (
  input  logic                    clk_i,
  input  logic                    rst_ni,
  // host
  input  logic                    wr_en_i,
  input  logic [IW-1:0]           wr_addr_i,
  input  logic [63:0]             wr_data_i,
  input  logic                    len_we_i,        // the inactive bank's program length
  input  logic [IW:0]             len_i,
  input  logic                    swap_i,
  output logic                    wr_ready_o,
  output logic                    active_o,        // the bank new packets take
  // engines
  input  logic [ENGINES-1:0]      start_i,
  input  logic [ENGINES-1:0]      done_i,
  input  logic [ENGINES-1:0]      rd_en_i,
  input  logic [ENGINES*IW-1:0]   rd_addr_i,
  output logic [ENGINES*64-1:0]   rd_data_o,
  output logic [ENGINES*(IW+1)-1:0] prog_len_o,
  output logic [ENGINES-1:0]      bank_o           // the bank engine e's packet reads
);

  localparam integer COPIES = (ENGINES + 1) / 2;

  logic               active_q;
  logic [IW:0]        len_q [0:1];
  logic [ENGINES-1:0] bank_q;     // the bank of engine e's packet
  logic [ENGINES-1:0] busy_q;     // engine e's packet runs
  logic [ENGINES-1:0] bank;       // the bank engine e reads in this cycle
  logic [ENGINES-1:0] rsel_q;     // the bank engine e's last read came from

  always_comb begin
    for (int e = 0; e < ENGINES; e++) begin
      bank[e] = start_i[e] ? active_q : bank_q[e];
    end
  end

  // The inactive bank is free when no running packet is bound to it.
  always_comb begin
    wr_ready_o = 1'b1;
    for (int e = 0; e < ENGINES; e++) begin
      if (busy_q[e] && bank_q[e] == !active_q) wr_ready_o = 1'b0;
    end
  end

  logic host_we;
  assign host_we = wr_en_i && wr_ready_o;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q <= 1'b0;
      len_q[0] <= '0;
      len_q[1] <= '0;
      bank_q   <= '0;
      busy_q   <= '0;
      rsel_q   <= '0;
    end else begin
      if (swap_i) active_q <= !active_q;
      if (len_we_i && wr_ready_o) len_q[!active_q] <= len_i;
      for (int e = 0; e < ENGINES; e++) begin
        if (start_i[e]) begin
          bank_q[e] <= active_q;
          busy_q[e] <= 1'b1;
        end else if (done_i[e]) begin
          busy_q[e] <= 1'b0;
        end
        if (rd_en_i[e]) rsel_q[e] <= bank[e];
      end
    end
  end

  // The RAMs: bank b, copy c.
  logic [63:0] rdata [0:1][0:2*COPIES-1];

  for (genvar b = 0; b < 2; b++) begin : g_bank
    for (genvar c = 0; c < COPIES; c++) begin : g_copy
      localparam integer EA = 2 * c;
      localparam integer EB = (2 * c + 1 < ENGINES) ? 2 * c + 1 : 2 * c;
      logic a_rd;
      logic b_rd;
      logic a_host;
      assign a_rd   = rd_en_i[EA] && bank[EA] == 1'(b);
      assign b_rd   = (2 * c + 1 < ENGINES) && rd_en_i[EB] && bank[EB] == 1'(b);
      assign a_host = host_we && active_q != 1'(b);
      ram_tdp #(
        .WIDTH (64),
        .DEPTH (DEPTH),
        .AW    (IW)
      ) u_ram (
        .clk_i     (clk_i),
        .a_en_i    (a_rd || a_host),
        .a_we_i    (a_host),
        .a_addr_i  (a_host ? wr_addr_i : rd_addr_i[EA*IW +: IW]),
        .a_wdata_i (wr_data_i),
        .a_be_i    (8'hff),
        .a_rdata_o (rdata[b][2*c]),
        .b_en_i    (b_rd),
        .b_we_i    (1'b0),
        .b_addr_i  (rd_addr_i[EB*IW +: IW]),
        .b_wdata_i (64'd0),
        .b_be_i    (8'h00),
        .b_rdata_o (rdata[b][2*c+1])
      );
    end
  end

  always_comb begin
    for (int e = 0; e < ENGINES; e++) begin
      rd_data_o[e*64 +: 64]          = rdata[rsel_q[e]][e];
      prog_len_o[e*(IW+1) +: IW+1]   = len_q[bank[e]];
    end
  end

  assign active_o = active_q;
  assign bank_o   = bank;

endmodule
