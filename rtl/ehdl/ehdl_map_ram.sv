`default_nettype none
// eHDL map block in block RAM: the values of one map, as ehdl_map_mem keeps them, with at most one pipeline port
// that writes, and registered reads (the eHDL paper's maps, section 4).
//
// The ports behave as ehdl_map_mem's in every cycle: port p reads the 8 bytes at addr_i[p] (rdata_o), seeing every
// write of earlier cycles and this cycle's write of the writing port WP when WP comes before it (p > WP: the
// generator orders ports later stage first, then program order); port WP writes the bytes wmask selects when we_i,
// its data (OP 0) or an atomic update of the bytes it read (OP 1 add, 2 or, 3 and, 4 xor). Bytes beyond the map read
// as 0 and are never written.
//
// A RAM read is registered, so each reading port presents its address a cycle early: raddr_i[p] is the address
// addr_i[p] will have in the next cycle (the generator computes it from the next value of the stage's boundary
// register; a stage that holds presents the same address again, so a packet held for several cycles re-reads every
// cycle). What the RAM returns misses the write made at the same clock edge; a delay register (the paper's WAR
// register) keeps that write (its rows, lanes and bytes) for one cycle and each read takes the bytes it wrote, then
// the bytes this cycle's earlier writing port writes (combinational forwarding). So every read sees exactly the
// writes before it in port order, as the registers of ehdl_map_mem would give.
//
// Rows are 8 bytes, in two RAMs by row parity (even rows in one, odd rows in the other): an access at any byte
// address covers at most rows r and r+1, one of each parity, so it reads one word of each RAM and writes at most
// one word of each, with byte enables. A RAM (ram_sdp) has one read port: every port in READS gets its own copy of
// both RAMs (replication), all written by the one write port, and the host has one more copy; the block holds
// 2 * (ports that read + 1) RAMs of ceil(rows / 2) words.
//
// The host port writes through the same write port when WP does not write in that cycle (the host loads a map
// before traffic; a host write in a cycle WP writes is dropped, host_drop_o) and reads the 8 bytes at host_addr_i
// one cycle later (host_rdata_o: the address of the previous cycle, with the writes up to that cycle). The RAMs
// start zeroed (the device's configuration, Verilator's default); rst_ni clears only the delay register.
module ehdl_map_ram #(
  parameter integer  BYTES = 64,           // max_entries * value_size
  parameter integer  NP    = 1,            // pipeline ports
  parameter integer  AW    = 16,           // address width, 1..31
  parameter integer  WP    = 0,            // the port that may write; NP: none
  parameter [NP-1:0] READS = {NP{1'b1}}    // bit p: port p reads (gets a copy of the RAMs; rdata 0 otherwise)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic [NP*AW-1:0] raddr_i,
  input  logic [NP-1:0]    we_i,
  input  logic [NP*3-1:0]  op_i,
  input  logic [NP*AW-1:0] addr_i,
  input  logic [NP*64-1:0] wdata_i,
  input  logic [NP*8-1:0]  wmask_i,
  output logic [NP*64-1:0] rdata_o,
  input  logic             host_we_i,
  input  logic [AW-1:0]    host_addr_i,
  input  logic [63:0]      host_wdata_i,
  input  logic [7:0]       host_wmask_i,
  output logic [63:0]      host_rdata_o,
  output logic             host_drop_o
);

  localparam integer ROWS = (BYTES + 7) / 8;
  localparam integer EVEN = (ROWS + 1) / 2;                 // rows 0, 2, 4, ...
  localparam integer ODD  = ROWS / 2;                       // rows 1, 3, 5, ...
  localparam integer ED   = (EVEN < 2) ? 2 : EVEN;          // RAM depths (ram_sdp needs an address bit)
  localparam integer OD   = (ODD < 2) ? 2 : ODD;
  localparam integer EAW  = $clog2(ED);
  localparam integer OAW  = $clog2(OD);
  localparam integer RW   = (AW > 3) ? AW - 2 : 1;          // row number, with room for row r+1 past the last
  localparam integer NR   = NP + 1;                         // readers: the ports, then the host

  // Row numbers of an address's 8 lanes: lane k lies in row r, or r + 1 when k is below the byte offset.
  function automatic logic [8*RW-1:0] lane_rows(input logic [AW-1:0] a);
    logic [31:0]   at;
    logic [RW-1:0] r;
    at = {{(32 - AW){1'b0}}, a};
    r = RW'(at >> 3);
    for (integer k = 0; k < 8; k = k + 1) lane_rows[k*RW +: RW] = r + RW'(k < {29'd0, at[2:0]});
  endfunction

  // ---- The write port: WP's write, else the host's. ----
  logic            wp_we;     // WP's port, or nothing
  logic [2:0]      wp_op;
  logic [AW-1:0]   wp_addr;
  logic [63:0]     wp_wdata;
  logic [7:0]      wp_wmask;
  logic [63:0]     wp_old;    // what WP read (for its atomics)
  if (WP < NP) begin : g_wp
    assign wp_we    = we_i[WP];
    assign wp_op    = op_i[WP*3 +: 3];
    assign wp_addr  = addr_i[WP*AW +: AW];
    assign wp_wdata = wdata_i[WP*64 +: 64];
    assign wp_wmask = wmask_i[WP*8 +: 8];
  end else begin : g_no_wp
    assign wp_we    = 1'b0;
    assign wp_op    = 3'd0;
    assign wp_addr  = '0;
    assign wp_wdata = '0;
    assign wp_wmask = '0;
  end

  logic [63:0]     w_rot;     // bytes rotated into their lanes
  logic [7:0]      w_lanes;   // lanes written
  logic [8*RW-1:0] w_rows;    // each lane's row
  logic [RW-1:0]   w_r;       // the access's first row
  logic            w_pipe;    // WP writes this cycle
  logic [63:0]     upd;
  logic [AW-1:0]   w_addr;
  logic [7:0]      m8;
  logic [15:0]     m16;
  logic [127:0]    dbl;

  assign w_pipe = wp_we & |wp_wmask;
  assign w_addr = w_pipe ? wp_addr : host_addr_i;
  always_comb begin
    case (wp_op)
      3'd1:    upd = wp_old + wp_wdata;
      3'd2:    upd = wp_old | wp_wdata;
      3'd3:    upd = wp_old & wp_wdata;
      3'd4:    upd = wp_old ^ wp_wdata;
      default: upd = wp_wdata;
    endcase
    if (!w_pipe) upd = host_wdata_i;
    for (integer b = 0; b < 8; b = b + 1) begin
      m8[b] = (w_pipe ? wp_wmask[b] : host_we_i & host_wmask_i[b]) & ({{(32 - AW){1'b0}}, w_addr} + b < BYTES);
    end
    dbl     = {upd, upd} << {w_addr[2:0], 3'b000};
    w_rot   = dbl[127:64];
    m16     = {m8, m8} << w_addr[2:0];
    w_lanes = m16[15:8];
  end
  assign w_rows      = lane_rows(w_addr);
  assign w_r         = w_rows[7*RW +: RW];  // lane 7 is always in row r
  assign host_drop_o = host_we_i & w_pipe;

  // Each RAM's write: the lanes of the even (odd) one of rows r, r + 1.
  logic [7:0]    we_even, we_odd;
  logic [RW-1:0] row_even, row_odd;
  assign row_even = w_r + RW'(w_r[0]);
  assign row_odd  = w_r | RW'(1);
  always_comb begin
    for (integer k = 0; k < 8; k = k + 1) begin
      we_even[k] = w_lanes[k] & ~w_rows[k*RW];
      we_odd[k]  = w_lanes[k] & w_rows[k*RW];
    end
  end
  logic [EAW-1:0] wa_even;
  logic [OAW-1:0] wa_odd;
  assign wa_even = EAW'(row_even >> 1);
  assign wa_odd  = OAW'(row_odd >> 1);

  // The delay register: this cycle's write, which the reads registered at this edge miss.
  logic [63:0]     d_rot_q;
  logic [7:0]      d_lanes_q;
  logic [8*RW-1:0] d_rows_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      d_lanes_q <= '0;
      d_rot_q   <= '0;
      d_rows_q  <= '0;
    end else begin
      d_lanes_q <= w_lanes;
      d_rot_q   <= w_rot;
      d_rows_q  <= w_rows;
    end
  end

  // ---- The readers: a copy of both RAMs each, addressed a cycle early. ----
  logic [NR*AW-1:0]  early;  // each reader's address for the next cycle
  logic [NR*AW-1:0]  now;    // each reader's address in this cycle
  logic [NR*64-1:0]  q_even, q_odd;
  logic [AW-1:0]     host_q;
  always_ff @(posedge clk_i) host_q <= host_addr_i;
  assign early = {host_addr_i, raddr_i};
  assign now   = {host_q, addr_i};

  for (genvar p = 0; p < NR; p = p + 1) begin : g_reader
    if (p == NP || READS[p % NP]) begin : g_ram
      logic [RW-1:0] er;
      assign er = RW'({{(32 - AW){1'b0}}, early[p*AW +: AW]} >> 3);
      logic [RW-1:0] re_row, ro_row;
      assign re_row = (er + RW'(er[0])) >> 1;
      assign ro_row = er >> 1;
      ram_sdp #(.WIDTH(64), .DEPTH(ED)) u_even (
        .clk_i(clk_i), .wr_en_i(|we_even), .wr_addr_i(wa_even), .wr_data_i(w_rot), .wr_be_i(we_even),
        .rd_en_i(1'b1), .rd_addr_i(EAW'(re_row)), .rd_data_o(q_even[p*64 +: 64])
      );
      logic unused_row;
      assign unused_row = ^{re_row, ro_row};
      ram_sdp #(.WIDTH(64), .DEPTH(OD)) u_odd (
        .clk_i(clk_i), .wr_en_i(|we_odd), .wr_addr_i(wa_odd), .wr_data_i(w_rot), .wr_be_i(we_odd),
        .rd_en_i(1'b1), .rd_addr_i(OAW'(ro_row)), .rd_data_o(q_odd[p*64 +: 64])
      );
    end else begin : g_none
      assign q_even[p*64 +: 64] = '0;
      assign q_odd[p*64 +: 64]  = '0;
    end
  end

  // Each reader's bytes: each lane from the RAM of its row's parity (0 past the map), then the delayed write's
  // bytes, then (for ports after WP) this cycle's write, rotated right by the byte offset. One block per reader, so
  // that WP's read (which its write depends on) never waits on the write.
  logic [NR*64-1:0] reads;
  for (genvar p = 0; p < NR; p = p + 1) begin : g_read
    logic [8*RW-1:0] rows;
    logic [63:0]     lanes;
    logic [127:0]    rd;
    logic [RW-1:0]   lr;
    assign rows = lane_rows(now[p*AW +: AW]);
    always_comb begin
      lanes = '0;
      lr    = '0;
      for (integer k = 0; k < 8; k = k + 1) begin
        lr = rows[k*RW +: RW];
        lanes[8*k +: 8] = lr[0] ? q_odd[p*64 + 8*k +: 8] : q_even[p*64 + 8*k +: 8];
        if (d_lanes_q[k] && d_rows_q[k*RW +: RW] == lr) lanes[8*k +: 8] = d_rot_q[8*k +: 8];
        if (p < NP && WP < p) begin
          if (w_pipe && w_lanes[k] && w_rows[k*RW +: RW] == lr) lanes[8*k +: 8] = w_rot[8*k +: 8];
        end
        if ({{(32 - RW){1'b0}}, lr} >= ROWS) lanes[8*k +: 8] = 8'd0;
      end
      rd = {lanes, lanes} >> {now[p*AW +: 3], 3'b000};
    end
    assign reads[p*64 +: 64] = rd[63:0];
    logic unused_rd;
    assign unused_rd = ^rd[127:64];
  end

  for (genvar p = 0; p < NP; p = p + 1) begin : g_rdata
    assign rdata_o[p*64 +: 64] = READS[p] ? reads[p*64 +: 64] : 64'd0;
  end
  assign host_rdata_o = reads[NP*64 +: 64];
  if (WP < NP) begin : g_wp_old
    assign wp_old = reads[WP*64 +: 64];
  end else begin : g_no_wp_old
    assign wp_old = '0;
  end

  // The rotations' overflow halves, and the inputs of ports other than WP that only read (or do not).
  logic unused;
  assign unused = ^{dbl[63:0], m16[7:0], we_i, op_i, wdata_i, wmask_i, addr_i, raddr_i, early};

endmodule
