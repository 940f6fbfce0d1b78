`default_nettype none
// eHDL replay buffer for flush and replay (the eHDL paper's section 4.1.2 and appendix A.2): every beat the
// pipeline takes stays here until it has passed the stages a flush can reach, so that a flush can feed the flushed
// beats again. The input buffer sits between s_axis and the first stage; an elastic buffer sits at a stage
// boundary past the last map write a replay must not repeat, its user word carrying the boundary's registers.
//
// Beats in (s_valid_i) are written at wr; the pipeline is offered the beat at rd (valid_o while rd != wr) and takes
// it with take_i. With pass_i (an elastic buffer, offered nothing) a beat written is taken in the same cycle: it goes
// straight on and is kept only for a replay. commit_i says that the oldest beat taken has left the flushable stages
// (its entry may be reused). rewind_i (a flush; the beat offered is not taken that cycle) moves rd back over the
// rewind_n_i beats taken last, which are offered again in order. s_ready_o while an entry is free. One cycle from a
// beat in to its offer.
module ehdl_replay #(
  parameter integer DW    = 512,  // data width in bits
  parameter integer UW    = 145,  // sideband (tuser) width
  parameter integer DEPTH = 16,   // entries, a power of two above the beats the flushable stages hold
  parameter integer PW    = 5     // pointer width: $clog2(DEPTH) + 1
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic            s_valid_i,
  input  logic [DW-1:0]   s_data_i,
  input  logic [DW/8-1:0] s_keep_i,
  input  logic            s_last_i,
  input  logic [UW-1:0]   s_user_i,
  output logic            s_ready_o,
  output logic            valid_o,
  output logic [DW-1:0]   data_o,
  output logic [DW/8-1:0] keep_o,
  output logic            last_o,
  output logic [UW-1:0]   user_o,
  input  logic            take_i,
  input  logic            pass_i,
  input  logic            commit_i,
  input  logic            rewind_i,
  input  logic [PW-1:0]   rewind_n_i
);

  localparam integer EW = DW + DW / 8 + 1 + UW;  // one entry: data, keep, last, user

  logic [EW-1:0] mem_q [DEPTH];
  logic [PW-1:0] wr_q;
  logic [PW-1:0] rd_q;
  logic [PW-1:0] base_q;
  logic [PW-1:0] used;

  assign used      = wr_q - base_q;
  assign s_ready_o = used < PW'(DEPTH);
  assign valid_o   = rd_q != wr_q;
  assign {user_o, last_o, keep_o, data_o} = mem_q[rd_q[PW-2:0]];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_q   <= '0;
      rd_q   <= '0;
      base_q <= '0;
    end else begin
      if (s_valid_i && s_ready_o) wr_q <= wr_q + 1'b1;
      if (rewind_i) begin
        rd_q <= rd_q - rewind_n_i;
      end else if ((take_i && valid_o) || (pass_i && s_valid_i && s_ready_o)) begin
        rd_q <= rd_q + 1'b1;
      end
      if (commit_i) base_q <= base_q + 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (s_valid_i && s_ready_o) mem_q[wr_q[PW-2:0]] <= {s_user_i, s_last_i, s_keep_i, s_data_i};
  end

endmodule
