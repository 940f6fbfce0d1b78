`default_nettype none
// eHDL map block: the values of one ARRAY map, shared by every stage that accesses it, with a host port.
//
// Each pipeline port p reads the 8 bytes at addr (rdata) and, when we, writes the bytes wmask selects: the port's
// data (OP 0), or an atomic update of the bytes read (OP 1 add, 2 or, 3 and, 4 xor; 32-bit atomics set 4 mask bits,
// so the carry out of bit 31 is dropped). Ports act in index order within a cycle, each seeing the writes of the
// ports before it; the generator orders them later stage first (an earlier packet first), then program order, so
// accesses of packets one stage apart keep the program's sequential order. Writes must be gated by the pipeline's
// advance. The host port reads the 8 bytes at its address as stored (before this cycle's writes) and its write is
// applied last. Bytes beyond the map read as 0 and are never written. Reset clears the map (ARRAY maps start zeroed).
//
// Storage is 8-byte rows (row = address >> 3) in banks of 16 (ehdl_map_bank), so that synthesis sees only constant
// indices and works on one bank module however large the map. Addresses come from run-time pointers (a value size
// of 12, or a pointer the program moved), so an access may straddle two rows. Byte lane k of an access (the lane of
// address mod 8) lies in row r or r+1, so an access is its bytes rotated into their lanes plus one row number per
// lane: a row's byte k is only ever written from lane k, and a port's read takes each lane from one row. A port sees
// an earlier port's writes by forwarding (same row for the lane), so every row is written once per cycle.
//
// WRITES names the ports that may write, as a parameter because synthesis keeps the hierarchy: constant write
// enables of a read-only port do not reach into the block, whose forwarding and bank write logic for 20 ports
// (tunnel's largest map, all loads) kept ABC busy for over 15 minutes.
module ehdl_map_mem #(
  parameter integer  BYTES  = 64,           // max_entries * value_size
  parameter integer  NP     = 1,            // pipeline ports
  parameter integer  AW     = 16,           // address width, 1..31
  parameter [NP-1:0] WRITES = {NP{1'b1}}    // bit p: port p may write (we_i[p] is ignored otherwise)
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic [NP-1:0]   we_i,
  input  logic [NP*3-1:0] op_i,
  input  logic [NP*AW-1:0] addr_i,
  input  logic [NP*64-1:0] wdata_i,
  input  logic [NP*8-1:0] wmask_i,
  output logic [NP*64-1:0] rdata_o,
  input  logic            host_we_i,
  input  logic [AW-1:0]   host_addr_i,
  input  logic [63:0]     host_wdata_i,
  input  logic [7:0]      host_wmask_i,
  output logic [63:0]     host_rdata_o
);

  localparam integer ROWS = (BYTES + 7) / 8;
  // Ports 0 .. NP-1, then the host as writer NP (it writes last and reads the stored rows).
  localparam integer NW = NP + 1;
  // Row index width, with room for row r+1 past the last row.
  localparam integer RW = (AW > 3) ? AW - 2 : 1;
  localparam integer BANK_ROWS = 16;
  localparam integer FULL_BANKS = ROWS / BANK_ROWS;
  localparam integer LAST_ROWS = ROWS - FULL_BANKS * BANK_ROWS;
  localparam integer BANKS = FULL_BANKS + ((LAST_ROWS > 0) ? 1 : 0);

  // Per writer: each lane's row (r, or r+1 for the lanes below the address's byte offset), the bytes written
  // rotated into their lanes, and the lanes written (enable, mask and "inside the map" folded in).
  logic [NW*8*RW-1:0] lane_row;
  logic [NW*64-1:0]   rot;
  logic [NW*8-1:0]    rmask;
  // Each writer's lanes as stored, from the banks (each gives 0 for rows it does not hold).
  logic [BANKS*NW*64-1:0] bank_lanes;
  logic [NW*64-1:0]       stored;

  for (genvar b = 0; b < BANKS; b = b + 1) begin : g_bank
    ehdl_map_bank #(
      .ROWS((b < FULL_BANKS) ? BANK_ROWS : LAST_ROWS), .RW(RW), .NW(NW), .WRITES({1'b1, WRITES})
    ) u_bank (
      .clk_i(clk_i), .rst_ni(rst_ni), .first_i(RW'(b * BANK_ROWS)), .lane_row_i(lane_row), .wdata_i(rot),
      .wlane_i(rmask), .rlanes_o(bank_lanes[b*NW*64 +: NW*64])
    );
  end

  always_comb begin
    stored = '0;
    for (integer b = 0; b < BANKS; b = b + 1) begin
      stored = stored | bank_lanes[b*NW*64 +: NW*64];
    end
  end

  // Lane rows from the addresses alone, in a block of their own: the banks read by them, and the ports' data
  // below depend on what the banks read.
  logic [NW*AW-1:0] waddr;  // each writer's address: the ports', then the host's
  assign waddr = {host_addr_i, addr_i};
  logic [31:0]   rat;
  logic [RW-1:0] r;
  always_comb begin
    lane_row = '0;
    rat      = '0;
    r        = '0;
    for (integer p = 0; p < NW; p = p + 1) begin
      rat = {{(32 - AW){1'b0}}, waddr[p*AW +: AW]};
      r = RW'(rat >> 3);
      for (integer k = 0; k < 8; k = k + 1) begin
        lane_row[(p*8 + k)*RW +: RW] = r + RW'(k < {29'd0, rat[2:0]});
      end
    end
  end

  logic [31:0]   at;
  logic [2:0]    sh;
  logic [63:0]   lanes;
  logic [127:0]  dbl;
  logic [63:0]   old;
  logic [63:0]   arg;
  logic [63:0]   upd;
  logic [7:0]    m8;
  logic [15:0]   m16;

  always_comb begin
    rot          = '0;
    rmask        = '0;
    rdata_o      = '0;
    host_rdata_o = '0;
    at           = '0;
    sh           = '0;
    lanes        = '0;
    dbl          = '0;
    old          = '0;
    arg          = '0;
    upd          = '0;
    m8           = '0;
    m16          = '0;
    for (integer p = 0; p < NW; p = p + 1) begin
      at = {{(32 - AW){1'b0}}, waddr[p*AW +: AW]};
      sh = at[2:0];
      // Each lane from its row as stored (rows past the map read 0) ...
      lanes = stored[p*64 +: 64];
      // ... then the writes of the ports before this one, in order (the host reads before every write).
      if (p < NP) begin
        for (integer q = 0; q < p; q = q + 1) begin
          for (integer k = 0; k < 8; k = k + 1) begin
            if (WRITES[q] && rmask[q*8 + k] && lane_row[(q*8 + k)*RW +: RW] == lane_row[(p*8 + k)*RW +: RW]) begin
              lanes[8*k +: 8] = rot[q*64 + 8*k +: 8];
            end
          end
        end
      end
      // Rotate right by the byte offset: byte j of the access is lane (j + offset) mod 8.
      dbl = {lanes, lanes} >> {sh, 3'b000};
      old = dbl[63:0];
      if (p < NP) begin
        rdata_o[p*64 +: 64] = old;
        arg = wdata_i[p*64 +: 64];
        case (op_i[p*3 +: 3])
          3'd1:    upd = old + arg;
          3'd2:    upd = old | arg;
          3'd3:    upd = old & arg;
          3'd4:    upd = old ^ arg;
          default: upd = arg;
        endcase
        for (integer b = 0; b < 8; b = b + 1) begin
          m8[b] = WRITES[p] & we_i[p] & wmask_i[p*8 + b] & (at + b < BYTES);
        end
      end else begin
        host_rdata_o = old;
        upd          = host_wdata_i;
        for (integer b = 0; b < 8; b = b + 1) begin
          m8[b] = host_we_i & host_wmask_i[b] & (at + b < BYTES);
        end
      end
      // Rotate left into the lanes.
      dbl = {upd, upd} << {sh, 3'b000};
      rot[p*64 +: 64] = dbl[127:64];
      m16 = {m8, m8} << sh;
      rmask[p*8 +: 8] = m16[15:8];
    end
  end

  // m16's low half is the rotation's overflow.
  logic unused_m16;
  assign unused_m16 = ^m16[7:0];

endmodule
