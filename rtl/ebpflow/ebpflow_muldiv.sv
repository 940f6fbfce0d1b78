`default_nettype none
// eBPFlow engine multiply, divide and modulo (RFC 9669, 32 and 64 bit, signed forms by offset 1): multi-cycle.
//
// start_i (with op_i: 2 mul, 3 div, 9 mod; wide_i; signed_i; a_i the destination, b_i the source) begins an
// operation when the unit is idle (busy_o low); valid_o then rises with result_o and both hold until ack_i (the
// engine's execute stage takes the result). flush_i abandons whatever runs. Latencies, start to valid_o: a multiply
// takes 4 cycles (a 64 x 16-bit partial product a cycle, accumulated; the low 64 bits are kept), a divide or modulo
// 1 + width cycles (radix-2 restoring division of the magnitudes, one quotient bit a cycle, then the signs), and a
// division by zero 1 cycle (quotient 0, remainder the dividend). Signed division truncates toward zero
// (INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0); the remainder has the dividend's sign; 32-bit results are zero-extended.
module ebpflow_muldiv (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        flush_i,
  input  logic        start_i,
  input  logic [3:0]  op_i,
  input  logic        wide_i,
  input  logic        signed_i,
  input  logic [63:0] a_i,
  input  logic [63:0] b_i,
  output logic        busy_o,
  output logic        valid_o,
  output logic [63:0] result_o,
  input  logic        ack_i
);

  localparam logic [1:0] Idle = 2'd0;
  localparam logic [1:0] Mul  = 2'd1;
  localparam logic [1:0] Div  = 2'd2;
  localparam logic [1:0] Done = 2'd3;

  logic [1:0]   state_q, state_d;
  logic [6:0]   count_q, count_d;
  logic [63:0]  a_q, a_d;          // multiplicand, or the dividend magnitude shifted out bit by bit
  logic [63:0]  b_q, b_d;          // multiplier (shifted 16 bits a step), or the divisor magnitude
  logic [63:0]  acc_q, acc_d;      // product, or the quotient
  logic [63:0]  rem_q, rem_d;      // partial remainder
  logic         wide_q, wide_d;
  logic         mod_q, mod_d;
  logic         neg_q_q, neg_q_d;  // negate the quotient at the end
  logic         neg_r_q, neg_r_d;  // negate the remainder at the end
  logic [63:0]  res_q, res_d;

  // Operands as the width sees them: 32-bit operations use the low halves (sign-extended when signed).
  logic [63:0] a_w;
  logic [63:0] b_w;
  logic        a_neg;
  logic        b_neg;
  logic [63:0] a_mag;
  logic [63:0] b_mag;
  always_comb begin
    if (wide_i) begin
      a_w = a_i;
      b_w = b_i;
    end else if (signed_i) begin
      a_w = {{32{a_i[31]}}, a_i[31:0]};
      b_w = {{32{b_i[31]}}, b_i[31:0]};
    end else begin
      a_w = {32'd0, a_i[31:0]};
      b_w = {32'd0, b_i[31:0]};
    end
    a_neg = signed_i && a_w[63];
    b_neg = signed_i && b_w[63];
    a_mag = a_neg ? 64'd0 - a_w : a_w;
    b_mag = b_neg ? 64'd0 - b_w : b_w;
  end

  // One restoring division step on (rem_q, a_q): shift in the dividend's next bit, subtract when it fits.
  logic [64:0] trial;
  logic [63:0] rem_shift;
  assign rem_shift = {rem_q[62:0], a_q[63]};
  assign trial = {1'b0, rem_shift} - {1'b0, b_q};

  // The result of a finished division, with the signs applied and narrowed to the width.
  logic [63:0] q_signed;
  logic [63:0] r_signed;
  logic [63:0] div_result;
  always_comb begin
    q_signed = neg_q_q ? 64'd0 - acc_q : acc_q;
    r_signed = neg_r_q ? 64'd0 - rem_q : rem_q;
    div_result = mod_q ? r_signed : q_signed;
    if (!wide_q) begin
      div_result = {32'd0, div_result[31:0]};
    end
  end

  always_comb begin
    state_d = state_q;
    count_d = count_q;
    a_d     = a_q;
    b_d     = b_q;
    acc_d   = acc_q;
    rem_d   = rem_q;
    wide_d  = wide_q;
    mod_d   = mod_q;
    neg_q_d = neg_q_q;
    neg_r_d = neg_r_q;
    res_d   = res_q;
    case (state_q)
      Idle: begin
        if (start_i) begin
          wide_d = wide_i;
          mod_d  = (op_i == 4'h9);
          if (op_i == 4'h2) begin
            state_d = Mul;
            count_d = 7'd3;
            a_d     = a_w;
            b_d     = b_w;
            acc_d   = 64'd0;
          end else if (b_w == 64'd0) begin
            // Division by zero: quotient 0, remainder the dividend (as the width sees it).
            state_d = Done;
            res_d   = (op_i == 4'h9) ? (wide_i ? a_i : {32'd0, a_i[31:0]}) : 64'd0;
          end else begin
            state_d = Div;
            count_d = wide_i ? 7'd63 : 7'd31;
            // A 32-bit dividend starts in the high half so that its bits shift out first.
            a_d     = wide_i ? a_mag : {a_mag[31:0], 32'd0};
            b_d     = b_mag;
            acc_d   = 64'd0;
            rem_d   = 64'd0;
            neg_q_d = a_neg ^ b_neg;
            neg_r_d = a_neg;
          end
        end
      end
      Mul: begin
        acc_d = acc_q + a_q * {48'd0, b_q[15:0]};
        a_d   = {a_q[47:0], 16'd0};
        b_d   = {16'd0, b_q[63:16]};
        if (count_q == 7'd0) begin
          state_d = Done;
          res_d   = wide_q ? acc_d : {32'd0, acc_d[31:0]};
        end else begin
          count_d = count_q - 7'd1;
        end
      end
      Div: begin
        a_d = {a_q[62:0], 1'b0};
        if (!trial[64]) begin
          rem_d = trial[63:0];
          acc_d = {acc_q[62:0], 1'b1};
        end else begin
          rem_d = rem_shift;
          acc_d = {acc_q[62:0], 1'b0};
        end
        if (count_q == 7'd0) begin
          state_d = Done;
          res_d   = 64'd0;  // formed from acc and rem in Done
        end else begin
          count_d = count_q - 7'd1;
        end
      end
      default: begin  // Done
        if (ack_i) begin
          state_d = Idle;
        end
      end
    endcase
    if (flush_i) begin
      state_d = Idle;
    end
  end

  // A division's result is formed from the final quotient and remainder; a multiply's and a division by zero's
  // are in res_q.
  logic div_done_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q    <= Idle;
      count_q    <= 7'd0;
      a_q        <= 64'd0;
      b_q        <= 64'd0;
      acc_q      <= 64'd0;
      rem_q      <= 64'd0;
      wide_q     <= 1'b0;
      mod_q      <= 1'b0;
      neg_q_q    <= 1'b0;
      neg_r_q    <= 1'b0;
      res_q      <= 64'd0;
      div_done_q <= 1'b0;
    end else begin
      state_q <= state_d;
      count_q <= count_d;
      a_q     <= a_d;
      b_q     <= b_d;
      acc_q   <= acc_d;
      rem_q   <= rem_d;
      wide_q  <= wide_d;
      mod_q   <= mod_d;
      neg_q_q <= neg_q_d;
      neg_r_q <= neg_r_d;
      res_q   <= res_d;
      if (state_q == Idle) begin
        div_done_q <= 1'b0;
      end else if (state_q == Div && state_d == Done) begin
        div_done_q <= 1'b1;
      end
    end
  end

  assign busy_o   = (state_q != Idle);
  assign valid_o  = (state_q == Done);
  assign result_o = div_done_q ? div_result : res_q;

endmodule
