`default_nettype none
// eHDL map block in block RAM: the values of one map, as ehdl_map_mem keeps them, with registered reads (the eHDL
// paper's maps, section 4).
//
// The ports behave as ehdl_map_mem's in every cycle: port p reads the 8 bytes at addr_i[p] (rdata_o), seeing every
// write of earlier cycles and this cycle's writes of the ports before it (the generator orders ports later stage
// first, then program order); a port in WRITES writes the bytes wmask selects when we_i, its data (OP 0) or an
// atomic update of the bytes it read (OP 1 add, 2 or, 3 and, 4 xor; only a port in ATOMIC, the others always
// write their data, so a plain store builds no read of its own and no adder between it and the later ports' reads),
// later ports winning. Bytes beyond the map read
// as 0 and are never written.
//
// A RAM read is registered, so each reading port presents its address a cycle early: raddr_i[p] is the address
// addr_i[p] will have in the next cycle (the generator computes it from the next value of the stage's boundary
// register; a stage that holds presents the same address again, so a packet held for several cycles re-reads every
// cycle). What the RAM returns misses the writes made at the same clock edge; delay registers (the paper's WAR
// registers) keep each writer's write (rows, lanes, bytes) for one cycle and a read takes the bytes they wrote, then
// the bytes this cycle's earlier ports write (combinational forwarding). So every read sees exactly the writes
// before it in port order, as the registers of ehdl_map_mem would give.
//
// Timing: everything a read decides from addresses is decided a cycle early, from the early addresses, and
// registered beside the RAM's read: each lane's bank (the LVT after this cycle's writes), whether the bank's delay
// register holds the lane, whether the lane lies past the map, its row's parity and the read's byte offset. A
// writing port in EARLY presents its next address on raddr_i too, so whether its write of the next cycle hits a
// later port's lane (same row, inside the map) and its byte offset are registered as well: in the cycle itself only
// the write's enable, byte mask and data meet the read (the data rotated into lanes, one multiplexer per lane, the
// read rotated back), not the comparison of rows that used to be the longest path of xdp1_drop's pipeline. A writer
// outside EARLY (its address not known a cycle early) is compared in the cycle, as before.
//
// Rows are 8 bytes, in two RAMs by row parity (even rows in one, odd rows in the other): an access at any byte
// address covers at most rows r and r+1, one of each parity, so it reads one word of each RAM and writes at most one
// word of each, with byte enables. A RAM (ram_sdp) has one write and one read port, so the block is banked by
// writer and replicated by reader: writer w has its own bank, and every bank has a copy of both RAMs for each port
// in READS and one for the host, 2 * max(1, writers) * (readers + 1) RAMs of ceil(rows / 2) words. With more than
// one writer a live value table (LVT, flip-flops: rows * 8 lanes * ceil(log2(writers)) bits) records which bank
// wrote each byte last, and a read takes each byte from that bank.
//
// The host port writes through bank 0 when its writer does not write in that cycle (the host loads a map before
// traffic; a host write in a cycle bank 0's port writes is dropped, host_drop_o) and reads the 8 bytes at
// host_addr_i one cycle later (host_rdata_o: the address of the previous cycle, with the writes up to that cycle).
// The RAMs start zeroed (the device's configuration, Verilator's default); rst_ni clears the delay registers and
// the LVT (every byte in bank 0, which holds zeros where no writer wrote).
module ehdl_map_ram #(
  parameter integer  BYTES  = 64,           // max_entries * value_size
  parameter integer  NP     = 1,            // pipeline ports
  parameter integer  AW     = 16,           // address width, 1..31
  parameter [NP-1:0] WRITES = '0,           // bit p: port p may write (we_i[p] is ignored otherwise)
  parameter [NP-1:0] READS  = {NP{1'b1}},   // bit p: port p reads (gets a copy of the RAMs; rdata 0 otherwise)
  parameter [NP-1:0] ATOMIC = {NP{1'b1}},   // bit p: port p may update atomically (op_i[p] is taken as 0 otherwise)
  parameter [NP-1:0] EARLY  = '0            // bit p: raddr_i[p] is port p's next address although it only writes
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

  // Writers (banks) and each bank's port.
  function automatic integer count_writers();
    count_writers = 0;
    for (integer p = 0; p < NP; p = p + 1) count_writers = count_writers + (WRITES[p] ? 1 : 0);
  endfunction
  // The port of bank b (the b-th writing port), NP for a bank without one.
  function automatic integer bank_port(input integer b);
    integer n;
    bank_port = NP;
    n = 0;
    for (integer p = 0; p < NP; p = p + 1) begin
      if (WRITES[p]) begin
        if (n == b) bank_port = p;
        n = n + 1;
      end
    end
  endfunction

  localparam integer NWR  = count_writers();
  localparam integer NB   = (NWR < 1) ? 1 : NWR;           // banks
  localparam integer LB   = (NB < 2) ? 1 : $clog2(NB);      // LVT bits per byte
  localparam integer ROWS = (BYTES + 7) / 8;
  localparam integer EVEN = (ROWS + 1) / 2;                 // rows 0, 2, 4, ...
  localparam integer ODD  = ROWS / 2;                       // rows 1, 3, 5, ...
  localparam integer ED   = (EVEN < 2) ? 2 : EVEN;          // RAM depths (ram_sdp needs an address bit)
  localparam integer OD   = (ODD < 2) ? 2 : ODD;
  localparam integer EAW  = $clog2(ED);
  localparam integer OAW  = $clog2(OD);
  localparam integer RW   = (AW > 3) ? AW - 2 : 1;          // row number, with room for row r+1 past the last
  localparam integer NR   = NP + 1;                         // readers: the ports, then the host
  localparam integer LVTW = (NB > 1) ? ROWS * 8 * LB : 1;   // LVT flip-flops (one unused bit without one)

  // Row numbers of an address's 8 lanes: lane k lies in row r, or r + 1 when k is below the byte offset.
  function automatic logic [8*RW-1:0] lane_rows(input logic [AW-1:0] a);
    logic [31:0]   at;
    logic [RW-1:0] r;
    at = {{(32 - AW){1'b0}}, a};
    r = RW'(at >> 3);
    for (integer k = 0; k < 8; k = k + 1) lane_rows[k*RW +: RW] = r + RW'(k < {29'd0, at[2:0]});
  endfunction

  // ---- Writes: one per bank (its port's, or for bank 0 the host's when its port does not write). ----
  logic [NB*64-1:0]   w_rot;     // bytes rotated into their lanes
  logic [NB*8-1:0]    w_lanes;   // lanes written
  logic [NB*8*RW-1:0] w_rows;    // each lane's row
  logic [NB-1:0]      w_pipe;    // the bank's port writes this cycle
  logic [NR*64-1:0]   reads;     // each reader's bytes
  logic [NB*8-1:0]    we_even, we_odd;
  logic [NB*EAW-1:0]  wa_even;
  logic [NB*OAW-1:0]  wa_odd;
  // Inputs of the reads: each reader's RAM words, the LVT and the delay registers (below).
  logic [NR*NB*64-1:0]  q_even, q_odd;
  logic [LVTW-1:0]      lvt_q;
  logic [NB*64-1:0]     d_rot_q;
  logic [NR*AW-1:0]     now;     // each reader's address in this cycle

  // What the reads decide a cycle early (registered from the early addresses, below), per reader and lane.
  logic [NR*8*LB-1:0]  src_q;    // the bank the LVT names
  logic [NR*NB*8-1:0]  dhit_q;   // bank b's delay register holds the lane's byte
  logic [NR*8-1:0]     oob_q;    // the lane lies past the map (reads 0)
  logic [NR*8-1:0]     odd_q;    // the lane's row is odd
  logic [NR*3-1:0]     roff_q;   // the read's byte offset
  logic [NR*NB*8-1:0]  fwd_q;    // bank b's port (in EARLY) writes the same byte in this cycle, if it writes it
  logic [NB*3-1:0]     woff_q;   // bank b's port's byte offset (ports in EARLY)
  // This cycle's pipeline writes as the forwarding takes them: the data rotated by the registered offset (EARLY
  // ports) and the lanes the byte mask selects, without the map's bound (in fwd_q).
  logic [NB*64-1:0]    f_rot;
  logic [NB*8-1:0]     f_lanes;

  // Whether bank b's port presents its address a cycle early (reads, atomics and ports in EARLY).
  function automatic logic early_bank(input integer b);
    integer q;
    q = bank_port(b);
    early_bank = (q < NP) && (READS[q % NP] || ATOMIC[q % NP] || EARLY[q % NP]);
  endfunction

  // The bytes reader p sees: lane by lane, the bank the LVT names (its delay register when it wrote the byte in the
  // last cycle, else its RAM of the row's parity), then this cycle's writes of the first `nb` banks' ports (those
  // before p; not the host's), 0 past the map; rotated right by the byte offset. Everything but this cycle's
  // write enables, masks and data was registered a cycle early; a writer outside EARLY is compared here.
  function automatic logic [63:0] read_of(input integer p, input integer nb, input logic [NB*64-1:0] rot,
                                          input logic [NB*8-1:0] wl, input logic [NB*8*RW-1:0] wr,
                                          input logic [NB-1:0] wp);
    logic [8*RW-1:0] rows;
    logic [63:0]     lanes;
    logic [LB-1:0]   src;
    rows  = lane_rows(now[p*AW +: AW]);
    lanes = '0;
    for (integer k = 0; k < 8; k = k + 1) begin
      src = (NB > 1) ? src_q[(p*8 + k)*LB +: LB] : '0;
      for (integer b = 0; b < NB; b = b + 1) begin
        if (NB == 1 || src == LB'(b)) begin
          lanes[8*k +: 8] = odd_q[p*8 + k] ? q_odd[(p*NB + b)*64 + 8*k +: 8] : q_even[(p*NB + b)*64 + 8*k +: 8];
          if (dhit_q[(p*NB + b)*8 + k]) lanes[8*k +: 8] = d_rot_q[b*64 + 8*k +: 8];
        end
      end
      for (integer b = 0; b < NB; b = b + 1) begin
        if (b < nb && early_bank(b)) begin
          if (fwd_q[(p*NB + b)*8 + k] && f_lanes[b*8 + k]) lanes[8*k +: 8] = f_rot[b*64 + 8*k +: 8];
        end else if (b < nb && wp[b] && wl[b*8 + k] && wr[(b*8 + k)*RW +: RW] == rows[k*RW +: RW]) begin
          lanes[8*k +: 8] = rot[b*64 + 8*k +: 8];
        end
      end
      if (oob_q[p*8 + k]) lanes[8*k +: 8] = 8'd0;
    end
    read_of = 64'({lanes, lanes} >> {roff_q[p*3 +: 3], 3'b000});
  endfunction

  // Ports in order in one block: each reads (seeing the writes of the ports before it), then writes if it may.
  // The host writes through bank 0 when bank 0's port does not write.
  logic [63:0]   old, upd;
  logic [AW-1:0] a;
  logic [7:0]    m8;
  logic [15:0]   m16;
  logic [127:0]  dbl, fdbl;
  logic [15:0]   fm16;
  integer        nb;
  always_comb begin
    w_rot   = '0;
    w_lanes = '0;
    w_rows  = '0;
    w_pipe  = '0;
    reads   = '0;
    old     = '0;
    upd     = '0;
    a       = '0;
    m8      = '0;
    m16     = '0;
    dbl     = '0;
    fdbl    = '0;
    fm16    = '0;
    f_rot   = '0;
    f_lanes = '0;
    nb      = 0;
    for (integer p = 0; p < NP; p = p + 1) begin
      if (READS[p] || (WRITES[p] && ATOMIC[p])) old = read_of(p, nb, w_rot, w_lanes, w_rows, w_pipe);
      if (READS[p]) reads[p*64 +: 64] = old;
      if (WRITES[p] && nb < NB) begin
        a = addr_i[p*AW +: AW];
        case (ATOMIC[p] ? op_i[p*3 +: 3] : 3'd0)
          3'd1:    upd = old + wdata_i[p*64 +: 64];
          3'd2:    upd = old | wdata_i[p*64 +: 64];
          3'd3:    upd = old & wdata_i[p*64 +: 64];
          3'd4:    upd = old ^ wdata_i[p*64 +: 64];
          default: upd = wdata_i[p*64 +: 64];
        endcase
        w_pipe[nb] = we_i[p] & |wmask_i[p*8 +: 8];
        if (early_bank(nb)) begin
          fdbl = {upd, upd} << {woff_q[nb*3 +: 3], 3'b000};
          fm16 = {wmask_i[p*8 +: 8], wmask_i[p*8 +: 8]} << woff_q[nb*3 +: 3];
          f_rot[nb*64 +: 64] = fdbl[127:64];
          f_lanes[nb*8 +: 8] = w_pipe[nb] ? fm16[15:8] : 8'd0;
        end
        for (integer i = 0; i < 8; i = i + 1) begin
          m8[i] = w_pipe[nb] & wmask_i[p*8 + i] & ({{(32 - AW){1'b0}}, a} + i < BYTES);
        end
        if (nb == 0 && !w_pipe[0]) begin
          a   = host_addr_i;
          upd = host_wdata_i;
          for (integer i = 0; i < 8; i = i + 1) begin
            m8[i] = host_we_i & host_wmask_i[i] & ({{(32 - AW){1'b0}}, a} + i < BYTES);
          end
        end
        dbl = {upd, upd} << {a[2:0], 3'b000};
        m16 = {m8, m8} << a[2:0];
        w_rot[nb*64 +: 64]      = dbl[127:64];
        w_lanes[nb*8 +: 8]      = m16[15:8];
        w_rows[nb*8*RW +: 8*RW] = lane_rows(a);
        nb = nb + 1;
      end
    end
    if (NWR == 0) begin
      // No writing port: bank 0 is the host's.
      a   = host_addr_i;
      for (integer i = 0; i < 8; i = i + 1) begin
        m8[i] = host_we_i & host_wmask_i[i] & ({{(32 - AW){1'b0}}, a} + i < BYTES);
      end
      dbl = {host_wdata_i, host_wdata_i} << {a[2:0], 3'b000};
      m16 = {m8, m8} << a[2:0];
      w_rot[63:0]     = dbl[127:64];
      w_lanes[7:0]    = m16[15:8];
      w_rows[8*RW-1:0] = lane_rows(a);
    end
    reads[NP*64 +: 64] = read_of(NP, 0, w_rot, w_lanes, w_rows, w_pipe);
  end
  assign host_drop_o = host_we_i & w_pipe[0];

  // Each RAM's write: the lanes of the even (odd) one of rows r, r + 1 (lane 7 is always in row r).
  for (genvar b = 0; b < NB; b = b + 1) begin : g_bank
    logic [RW-1:0] r, row_even;
    assign r        = w_rows[b*8*RW + 7*RW +: RW];
    assign row_even = r + RW'(r[0]);
    for (genvar k = 0; k < 8; k = k + 1) begin : g_lane
      assign we_even[b*8 + k] = w_lanes[b*8 + k] & ~w_rows[(b*8 + k)*RW];
      assign we_odd[b*8 + k]  = w_lanes[b*8 + k] & w_rows[(b*8 + k)*RW];
    end
    assign wa_even[b*EAW +: EAW] = EAW'(row_even >> 1);
    assign wa_odd[b*OAW +: OAW]  = OAW'(r >> 1);
    logic unused_bank;
    assign unused_bank = row_even[0];
  end

  // The delay registers: this cycle's writes, which the reads registered at this edge miss.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      d_rot_q <= '0;
    end else begin
      d_rot_q <= w_rot;
    end
  end

  // ---- The live value table: which bank wrote each byte last (flip-flops; only with two or more banks). ----
  logic [LVTW-1:0] lvt_d;   // the LVT after this cycle's writes
  if (NB > 1) begin : g_lvt
    always_comb begin
      // Banks in port order, later ones winning; a host write (through bank 0) is applied last.
      lvt_d = lvt_q;
      for (integer n = 0; n <= NB; n = n + 1) begin
        for (integer k = 0; k < 8; k = k + 1) begin
          for (integer i = 0; i < ROWS; i = i + 1) begin
            if (n < NB && (n > 0 || w_pipe[0]) && w_lanes[n*8 + k] && w_rows[(n*8 + k)*RW +: RW] == RW'(i)) begin
              lvt_d[(i*8 + k)*LB +: LB] = LB'(n);
            end
            if (n == NB && !w_pipe[0] && w_lanes[k] && w_rows[k*RW +: RW] == RW'(i)) lvt_d[(i*8 + k)*LB +: LB] = '0;
          end
        end
      end
    end
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        for (integer i = 0; i < LVTW; i = i + 1) lvt_q[i] <= 1'b0;
      end else begin
        lvt_q <= lvt_d;
      end
    end
  end else begin : g_no_lvt
    assign lvt_q = 1'b0;
    assign lvt_d = 1'b0;
  end

  // ---- The readers: a copy of both RAMs of every bank each, addressed a cycle early. ----
  logic [NR*AW-1:0]    early;  // each reader's address for the next cycle
  logic [AW-1:0]       host_q;
  always_ff @(posedge clk_i) host_q <= host_addr_i;
  assign early = {host_addr_i, raddr_i};
  assign now   = {host_q, addr_i};

  for (genvar p = 0; p < NR; p = p + 1) begin : g_reader
    for (genvar b = 0; b < NB; b = b + 1) begin : g_copy
      localparam integer Q = (p * NB + b) * 64;
      if (p == NP || READS[p % NP]) begin : g_ram
        logic [RW-1:0] er;
        assign er = RW'({{(32 - AW){1'b0}}, early[p*AW +: AW]} >> 3);
        logic [RW-1:0] re_row, ro_row;
        assign re_row = (er + RW'(er[0])) >> 1;
        assign ro_row = er >> 1;
        ram_sdp #(.WIDTH(64), .DEPTH(ED)) u_even (
          .clk_i(clk_i), .wr_en_i(|we_even[b*8 +: 8]), .wr_addr_i(wa_even[b*EAW +: EAW]), .wr_data_i(w_rot[b*64 +: 64]),
          .wr_be_i(we_even[b*8 +: 8]), .rd_en_i(1'b1), .rd_addr_i(EAW'(re_row)), .rd_data_o(q_even[Q +: 64])
        );
        ram_sdp #(.WIDTH(64), .DEPTH(OD)) u_odd (
          .clk_i(clk_i), .wr_en_i(|we_odd[b*8 +: 8]), .wr_addr_i(wa_odd[b*OAW +: OAW]), .wr_data_i(w_rot[b*64 +: 64]),
          .wr_be_i(we_odd[b*8 +: 8]), .rd_en_i(1'b1), .rd_addr_i(OAW'(ro_row)), .rd_data_o(q_odd[Q +: 64])
        );
        logic unused_row;
        assign unused_row = ^{re_row, ro_row};
      end else begin : g_none
        assign q_even[Q +: 64] = '0;
        assign q_odd[Q +: 64]  = '0;
      end
    end
  end

  // ---- What the next cycle's reads decide from addresses, from the early ones (see the header). ----
  // Each reader's lanes against the LVT after this cycle's writes and against this cycle's writes (the delay
  // registers of the next cycle); the lane's parity, its bound and the offset; each EARLY writer's lanes against
  // the reader's (the same byte, inside the map).
  logic [NR*8*LB-1:0] src_d;
  logic [NR*NB*8-1:0] dhit_d, fwd_d;
  logic [NR*8-1:0]    oob_d, odd_d;
  logic [NR*3-1:0]    roff_d;
  logic [NB*3-1:0]    woff_d;
  always_comb begin
    logic [8*RW-1:0] er, ew;
    logic [RW-1:0]   lr;
    er     = '0;
    ew     = '0;
    lr     = '0;
    src_d  = '0;
    dhit_d = '0;
    fwd_d  = '0;
    oob_d  = '0;
    odd_d  = '0;
    roff_d = '0;
    woff_d = '0;
    for (integer p = 0; p < NR; p = p + 1) begin
      er = lane_rows(early[p*AW +: AW]);
      roff_d[p*3 +: 3] = early[p*AW +: 3];
      for (integer k = 0; k < 8; k = k + 1) begin
        lr = er[k*RW +: RW];
        oob_d[p*8 + k] = ({{(32 - RW){1'b0}}, lr} >= ROWS);
        odd_d[p*8 + k] = lr[0];
        if (NB > 1) begin
          for (integer i = 0; i < ROWS; i = i + 1) begin
            if (lr == RW'(i)) src_d[(p*8 + k)*LB +: LB] = lvt_d[(i*8 + k)*LB +: LB];
          end
        end
        for (integer b = 0; b < NB; b = b + 1) begin
          dhit_d[(p*NB + b)*8 + k] = w_lanes[b*8 + k] && w_rows[(b*8 + k)*RW +: RW] == lr;
          if (early_bank(b)) begin
            ew = lane_rows(early[bank_port(b)*AW +: AW]);
            fwd_d[(p*NB + b)*8 + k] = ew[k*RW +: RW] == lr && ({{(32 - RW){1'b0}}, lr} * 8 + k < BYTES);
          end
        end
      end
    end
    for (integer b = 0; b < NB; b = b + 1) begin
      if (early_bank(b)) woff_d[b*3 +: 3] = early[bank_port(b)*AW +: 3];
    end
  end
  // The LVT's and the delay registers' part is reset with them, and no write is forwarded in the first cycle after
  // reset (whose early addresses were presented in reset, when no stage holds a packet); the rest follows the
  // early addresses as the RAMs' reads do.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      src_q  <= '0;
      dhit_q <= '0;
      fwd_q  <= '0;
    end else begin
      src_q  <= src_d;
      dhit_q <= dhit_d;
      fwd_q  <= fwd_d;
    end
  end
  always_ff @(posedge clk_i) begin
    oob_q  <= oob_d;
    odd_q  <= odd_d;
    roff_q <= roff_d;
    woff_q <= woff_d;
  end

  for (genvar p = 0; p < NP; p = p + 1) begin : g_rdata
    assign rdata_o[p*64 +: 64] = READS[p] ? reads[p*64 +: 64] : 64'd0;
  end
  assign host_rdata_o = reads[NP*64 +: 64];

  // The inputs of ports that neither write nor read, and reads of ports that do not read.
  logic unused;
  assign unused = ^{we_i, op_i, wdata_i, wmask_i, addr_i, raddr_i, early, lvt_q, dbl[63:0], m16[7:0], fdbl[63:0], fm16[7:0], lvt_d};

endmodule
