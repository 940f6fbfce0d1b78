`default_nettype none
// eHDL template: a conditional jump turned into a predicate term, "the jump is taken" under the op's predicate.
//
// COND is the high nibble of the jump opcode (0x1 jeq .. 0xd jsle, as crates/xdp/src/alu.rs `condition`); WIDE 0
// compares the low 32 bits (signed compares on the 32-bit values). A disabled op outputs 0, like the front end's
// pipeline simulation, so a predicate term `p & !c` is still false through `p`.
module ehdl_cond #(
  parameter integer COND = 1,  // 0x1 jeq, 0x2 jgt, 0x3 jge, 0x4 jset, 0x5 jne, 0x6 jsgt, 0x7 jsge,
                               // 0xa jlt, 0xb jle, 0xc jslt, 0xd jsle
  parameter integer WIDE = 1   // 1: JMP (64-bit), 0: JMP32
) (
  input  logic        en_i,
  input  logic [63:0] a_i,     // dst
  input  logic [63:0] b_i,     // src register, or the sign-extended immediate
  output logic        taken_o
);

  logic [63:0] a;
  logic [63:0] b;
  logic [63:0] sa;
  logic [63:0] sb;
  logic        eq;
  logic        ult;
  logic        slt;
  logic        taken;

  always_comb begin
    a   = (WIDE == 1) ? a_i : {32'd0, a_i[31:0]};
    b   = (WIDE == 1) ? b_i : {32'd0, b_i[31:0]};
    // Flipping the sign bit turns a signed compare into an unsigned one.
    sa  = (WIDE == 1) ? {~a_i[63], a_i[62:0]} : {32'd0, ~a_i[31], a_i[30:0]};
    sb  = (WIDE == 1) ? {~b_i[63], b_i[62:0]} : {32'd0, ~b_i[31], b_i[30:0]};
    eq  = (a == b);
    ult = (a < b);
    slt = (sa < sb);
    case (COND)
      1:    taken = eq;
      2:    taken = ~ult & ~eq;
      3:    taken = ~ult;
      4:    taken = |(a & b);
      5:    taken = ~eq;
      6:    taken = ~slt & ~eq;
      7:    taken = ~slt;
      10:    taken = ult;
      11:    taken = ult | eq;
      12:    taken = slt;
      default: taken = slt | eq;
    endcase
  end

  assign taken_o = en_i & taken;

endmodule
