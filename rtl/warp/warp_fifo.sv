`default_nettype none
// A first-word-fall-through FIFO in block RAM (ram_sdp): the side records of warp_hxdp (one per packet in flight).
//
// push_i writes wdata_i when not full_o (a push while full is ignored). The oldest word is on rdata_o while valid_o;
// pop_i (with valid_o) drops it, and the next one is there two cycles later at the earliest (the RAM's registered
// read into rdata_o, which holds while no read is made). A word pushed into an empty FIFO is on rdata_o two cycles
// later. The RAM is only read at addresses written at an earlier edge, so its read-during-write value is never used.
module warp_fifo #(
  parameter integer WIDTH = 64,   // bits per word, a multiple of 8
  parameter integer DEPTH = 32,   // words, a power of two
  parameter integer AW    = $clog2(DEPTH)
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             push_i,
  input  logic [WIDTH-1:0] wdata_i,
  output logic             full_o,
  output logic             valid_o,
  input  logic             pop_i,
  output logic [WIDTH-1:0] rdata_o
);

  logic [AW-1:0] wp_q, rp_q;
  logic [AW:0]   count_q;     // words written and not yet read out of the RAM
  logic [AW:0]   held_q;      // words written and not yet popped (count_q plus the one on rdata_o)
  logic          valid_q;
  logic          push, pop, read;

  assign push    = push_i && !full_o;
  assign pop     = pop_i && valid_q;
  assign read    = count_q != '0 && (!valid_q || pop);
  assign full_o  = held_q == DEPTH[AW:0];
  assign valid_o = valid_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wp_q    <= '0;
      rp_q    <= '0;
      count_q <= '0;
      held_q  <= '0;
      valid_q <= 1'b0;
    end else begin
      if (push) wp_q <= wp_q + 1'b1;
      if (read) rp_q <= rp_q + 1'b1;
      count_q <= count_q + {{AW{1'b0}}, push} - {{AW{1'b0}}, read};
      held_q  <= held_q + {{AW{1'b0}}, push} - {{AW{1'b0}}, pop};
      if (read) begin
        valid_q <= 1'b1;
      end else if (pop) begin
        valid_q <= 1'b0;
      end
    end
  end

  ram_sdp #(
    .WIDTH(WIDTH),
    .DEPTH(DEPTH)
  ) u_ram (
    .clk_i    (clk_i),
    .wr_en_i  (push),
    .wr_addr_i(wp_q),
    .wr_data_i(wdata_i),
    .wr_be_i  ({(WIDTH / 8){1'b1}}),
    .rd_en_i  (read),
    .rd_addr_i(rp_q),
    .rd_data_o(rdata_o)
  );

endmodule
