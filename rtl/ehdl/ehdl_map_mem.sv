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
module ehdl_map_mem #(
  parameter integer BYTES = 64,  // max_entries * value_size
  parameter integer NP    = 1,   // pipeline ports
  parameter integer AW    = 16   // address width, 1..31
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

  logic [8*BYTES-1:0] mem_q;
  logic [8*BYTES-1:0] mem_d;
  logic [63:0]        old;
  logic [63:0]        arg;
  logic [63:0]        upd;
  integer             at;

  always_comb begin
    mem_d   = mem_q;
    rdata_o = '0;
    old     = '0;
    arg     = '0;
    upd     = '0;
    at      = 0;
    for (integer p = 0; p < NP; p = p + 1) begin
      at  = {{(32 - AW){1'b0}}, addr_i[p*AW +: AW]};
      old = '0;
      for (integer b = 0; b < 8; b = b + 1) begin
        if (at + b < BYTES) begin
          old[8*b +: 8] = mem_d[8*(at + b) +: 8];
        end
      end
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
        if (we_i[p] && wmask_i[p*8 + b] && (at + b < BYTES)) begin
          mem_d[8*(at + b) +: 8] = upd[8*b +: 8];
        end
      end
    end
    host_rdata_o = '0;
    at           = {{(32 - AW){1'b0}}, host_addr_i};
    for (integer b = 0; b < 8; b = b + 1) begin
      if (at + b < BYTES) begin
        host_rdata_o[8*b +: 8] = mem_q[8*(at + b) +: 8];
        if (host_we_i && host_wmask_i[b]) begin
          mem_d[8*(at + b) +: 8] = host_wdata_i[8*b +: 8];
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      // Byte by byte: a single fill constant over a large map trips Verilator's replication check.
      for (integer i = 0; i < BYTES; i = i + 1) begin
        mem_q[8*i +: 8] <= 8'd0;
      end
    end else begin
      mem_q <= mem_d;
    end
  end

endmodule
