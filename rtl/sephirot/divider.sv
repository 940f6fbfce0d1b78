`default_nettype none
// The Sephirot core's shared divider: eBPF div and mod (RFC 9669, as crates/xdp/src/alu.rs computes them), 32- and
// 64-bit, signed and unsigned, over several cycles instead of one combinational 64-step array.
//
// - start_i (one cycle) samples op_i (the high nibble of the eBPF opcode: 0x3 div, 0x9 mod), wide_i, off_i (1:
//   signed), a_i and b_i; the operands' magnitudes are registered at that edge. Each later edge computes STEPS
//   quotient bits (restoring division, the partial remainder kept below the divisor), so after 64 / STEPS more edges
//   done_o rises: done_o is high from cycle t + 1 + 64 / STEPS for a start in cycle t (17 cycles after the start
//   at STEPS 4: the model's timing::DIV_CYCLES counts the start cycle and these) and stays high, with result_o and
//   valid_o, until the next start_i. A start_i while busy restarts with the new operands.
// - Results as alu.sv's: division by zero gives 0, modulo by zero the dividend (a 32-bit one zero-extended); signed
//   division and modulo truncate toward zero on magnitudes with the sign applied modulo 2^64 (INT_MIN / -1 ==
//   INT_MIN, INT_MIN % -1 == 0); 32-bit results are zero-extended. valid_o is low (result_o 0) for any other op.
//
// Area: STEPS chained 65-bit subtractors and the quotient/remainder registers (Yosys 0.23 synth_xilinx -family xcup,
// `hwxdp synth --target hxdp --top divider`: 1,067 LUTs, 269 FFs, 134 CARRY4 at STEPS 4), where the combinational
// divider it replaces (`--top alu --param DIV=1 --param DIV_ONLY=1`) takes 13,750 LUTs and 1,152 CARRY4.
module divider #(
  parameter integer STEPS = 4   // quotient bits per cycle: 1, 2, 4, 8, 16, 32 or 64
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        start_i,
  input  logic [3:0]  op_i,
  input  logic        wide_i,
  input  logic [15:0] off_i,
  input  logic [63:0] a_i,
  input  logic [63:0] b_i,
  output logic        done_o,
  output logic [63:0] result_o,
  output logic        valid_o
);

  localparam integer CYCLES = 64 / STEPS;
  localparam integer CW     = $clog2(CYCLES + 1);
  localparam [3:0]   OpDiv  = 4'h3;
  localparam [3:0]   OpMod  = 4'h9;

  logic [CW-1:0] cnt_q;        // edges of iteration still to come
  logic [63:0]   rem_q;        // partial remainder (magnitude)
  logic [63:0]   quot_q;       // dividend bits still to shift out, quotient bits shifted in
  logic [63:0]   bmag_q;       // divisor magnitude
  logic [63:0]   a_q;          // the dividend as given (modulo by zero)
  logic          qneg_q;       // negate the quotient
  logic          rneg_q;       // negate the remainder
  logic          bzero_q;
  logic          wide_q;
  logic [3:0]    op_q;

  // Operand magnitudes at the start.
  logic        a_neg;
  logic        b_neg;
  logic [63:0] a_mag;
  logic [63:0] b_mag;
  logic        b_zero;

  always_comb begin
    logic        signed_div;
    logic [63:0] a_div;
    logic [63:0] b_div;
    signed_div = (off_i == 16'd1);
    a_neg      = signed_div & (wide_i ? a_i[63] : a_i[31]);
    b_neg      = signed_div & (wide_i ? b_i[63] : b_i[31]);
    // A negative 32-bit operand is sign-extended first so that negating it yields its 32-bit magnitude.
    a_div      = wide_i ? a_i : {{32{a_neg}}, a_i[31:0]};
    b_div      = wide_i ? b_i : {{32{b_neg}}, b_i[31:0]};
    a_mag      = a_neg ? (64'd0 - a_div) : a_div;
    b_mag      = b_neg ? (64'd0 - b_div) : b_div;
    b_zero     = wide_i ? (b_i == 64'd0) : (b_i[31:0] == 32'd0);
  end

  // STEPS restoring steps: quotient bits shift in where the dividend's bits shift out. The partial remainder stays
  // below the divisor, so a nonnegative trial fits 64 bits and bit 64 is the borrow.
  logic [63:0] rem_n;
  logic [63:0] quot_n;

  always_comb begin
    logic [64:0] trial;
    rem_n  = rem_q;
    quot_n = quot_q;
    for (integer s = 0; s < STEPS; s = s + 1) begin
      trial  = {rem_n, quot_n[63]} - {1'b0, bmag_q};
      rem_n  = trial[64] ? {rem_n[62:0], quot_n[63]} : trial[63:0];
      quot_n = {quot_n[62:0], ~trial[64]};
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cnt_q   <= '0;
      rem_q   <= 64'd0;
      quot_q  <= 64'd0;
      bmag_q  <= 64'd0;
      a_q     <= 64'd0;
      qneg_q  <= 1'b0;
      rneg_q  <= 1'b0;
      bzero_q <= 1'b0;
      wide_q  <= 1'b0;
      op_q    <= 4'd0;
    end else if (start_i) begin
      cnt_q   <= CW'(CYCLES);
      rem_q   <= 64'd0;
      quot_q  <= a_mag;
      bmag_q  <= b_mag;
      a_q     <= a_i;
      qneg_q  <= a_neg ^ b_neg;
      rneg_q  <= a_neg;
      bzero_q <= b_zero;
      wide_q  <= wide_i;
      op_q    <= op_i;
    end else if (cnt_q != '0) begin
      cnt_q  <= cnt_q - CW'(1);
      rem_q  <= rem_n;
      quot_q <= quot_n;
    end
  end

  always_comb begin
    logic [63:0] full;
    done_o  = (cnt_q == '0);
    valid_o = (op_q == OpDiv) || (op_q == OpMod);
    full    = 64'd0;
    if (op_q == OpDiv) begin
      full = bzero_q ? 64'd0 : (qneg_q ? (64'd0 - quot_q) : quot_q);
    end else if (op_q == OpMod) begin
      full = bzero_q ? a_q : (rneg_q ? (64'd0 - rem_q) : rem_q);
    end
    result_o = wide_q ? full : {32'd0, full[31:0]};
  end

endmodule
