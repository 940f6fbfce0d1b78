`default_nettype none
// eHDL map block: a RINGBUF map for bpf_ringbuf_output, with the reference machine's byte layout and space check
// (crates/maps/src/ringbuf.rs, the kernel's kernel/bpf/ringbuf.c), drained by the host.
//
// The data area is SIZE bytes (max_entries, a power of two), registers in 8-byte words. Records sit at the producer
// position as the kernel lays them out: an 8-byte header {pg_off, len} (pg_off = 3 + (offset >> 12), the busy and
// discard bits clear: output commits at once), then len data bytes, the next record round8(len + 8) bytes on,
// wrapping at SIZE. Positions are byte counts modulo 2^32. A record fits exactly when the reference's reserve
// succeeds: round8(len + 8) + (producer - consumer) < SIZE (the reference's pending position never lags behind,
// since output leaves no busy record).
//
// Ports (bpf_ringbuf_output call sites) act in index order within a cycle (the generator orders them later stage
// first), each seeing the records of the ports before it. Port p offers len_i (data bytes, at most 8 * MAXW) and
// data_i (byte i at bits 8i); ok_o says the record fits (R0 = 0, else -EAGAIN), and with en_i (the call's predicate,
// gated by the advance) it is written and the producer moves on.
// Host port (8-byte aligned addresses): bytes [0, SIZE) read the data area; SIZE reads the producer position, SIZE + 8
// the consumer position, which a write there sets (the host's drain frees the space up to it). A write to SIZE sets the
// producer position: a new simulation of the same ring resumes where the last one's records ended. Host writes come
// before the packets, never in a cycle a port writes. Reads see the state before this cycle's writes. Reset empties
// the ring.
module ehdl_ringbuf #(
  parameter integer SIZE = 4096,  // data bytes, a power of two of at least 16
  parameter integer NP   = 1,     // pipeline ports
  parameter integer MAXW = 1,     // data words of the longest record
  parameter integer AW   = 14     // host address width: SIZE + 16 must fit
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic [NP-1:0]         en_i,
  input  logic [NP*16-1:0]      len_i,
  input  logic [NP*64*MAXW-1:0] data_i,
  output logic [NP-1:0]         ok_o,
  input  logic                  host_we_i,
  input  logic [AW-1:0]         host_addr_i,
  input  logic [63:0]           host_wdata_i,
  input  logic [7:0]            host_wmask_i,
  output logic [63:0]           host_rdata_o
);

  localparam integer WORDS = SIZE / 8;
  localparam integer WW    = $clog2(WORDS);
  localparam [31:0]  Size  = SIZE;

  logic [64*WORDS-1:0] mem_q;
  logic [64*WORDS-1:0] mem_d;
  logic [31:0]         prod_q;
  logic [31:0]         cons_q;
  logic [31:0]         prod_d;
  // Per port p: whether it writes, and its record's first word and header.
  logic [NP-1:0]       wr;
  logic [WW*NP-1:0]    base;
  logic [32*NP-1:0]    pg;

  always_comb begin : b_ports
    logic [31:0] pos;
    logic [31:0] rec;
    logic [31:0] off;
    pos  = prod_q;
    ok_o = '0;
    wr   = '0;
    base = '0;
    pg   = '0;
    for (integer p = 0; p < NP; p = p + 1) begin
      rec     = ({16'd0, len_i[16*p +: 16]} + 32'd15) & 32'hffff_fff8;
      ok_o[p] = rec + (pos - cons_q) < Size;
      wr[p]   = en_i[p] && ok_o[p];
      off     = pos & (Size - 32'd1);
      pg[32*p +: 32]   = 32'd3 + (off >> 12);
      base[WW*p +: WW] = off[WW+2:3];
      if (wr[p]) pos = pos + rec;
    end
    prod_d = pos;
  end

  // Each ring word on its own, with its distance from each record's first word: no word is addressed by a run-time
  // index, and no process spans the whole ring (one did, and Yosys' proc took more than an hour on 4 KB).
  for (genvar w = 0; w < WORDS; w = w + 1) begin : g_word
    always_comb begin : b_word
      logic [WW-1:0] rel;
      mem_d[64*w +: 64] = mem_q[64*w +: 64];
      for (integer p = 0; p < NP; p = p + 1) begin
        rel = WW'(w) - base[WW*p +: WW];
        if (wr[p]) begin
          if (rel == '0) mem_d[64*w +: 64] = {pg[32*p +: 32], 16'd0, len_i[16*p +: 16]};
          for (integer i = 1; i <= MAXW; i = i + 1) begin
            if (rel == WW'(i)) begin
              for (integer b = 0; b < 8; b = b + 1) begin
                if (32'(8 * (i - 1) + b) < {16'd0, len_i[16*p +: 16]}) begin
                  mem_d[64*w + 8*b +: 8] = data_i[64*MAXW*p + 64*(i-1) + 8*b +: 8];
                end
              end
            end
          end
        end
      end
    end
  end

  always_comb begin
    host_rdata_o = '0;
    if ({{(32 - AW) {1'b0}}, host_addr_i} == Size) begin
      host_rdata_o = {32'd0, prod_q};
    end else if ({{(32 - AW) {1'b0}}, host_addr_i} == Size + 32'd8) begin
      host_rdata_o = {32'd0, cons_q};
    end else begin
      for (integer w = 0; w < WORDS; w = w + 1) begin
        if ({{(32 - AW) {1'b0}}, host_addr_i} >> 3 == 32'(w)) host_rdata_o = mem_q[64*w +: 64];
      end
    end
  end

  // Positions are 32 bits: the high halves of the host's write are not used.
  logic unused_host;
  assign unused_host = ^{host_wdata_i[63:32], host_wmask_i[7:4]};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (integer w = 0; w < WORDS; w = w + 1) begin
        mem_q[64*w +: 64] <= 64'd0;
      end
      prod_q <= '0;
      cons_q <= '0;
    end else begin
      mem_q  <= mem_d;
      prod_q <= prod_d;
      if (host_we_i && {{(32 - AW) {1'b0}}, host_addr_i} == Size) begin
        for (integer b = 0; b < 4; b = b + 1) begin
          if (host_wmask_i[b]) prod_q[8*b +: 8] <= host_wdata_i[8*b +: 8];
        end
      end
      if (host_we_i && {{(32 - AW) {1'b0}}, host_addr_i} == Size + 32'd8) begin
        for (integer b = 0; b < 4; b = b + 1) begin
          if (host_wmask_i[b]) cons_q[8*b +: 8] <= host_wdata_i[8*b +: 8];
        end
      end
    end
  end

endmodule
