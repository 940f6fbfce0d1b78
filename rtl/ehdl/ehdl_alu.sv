`default_nettype none
// eHDL template: one eBPF ALU operation with its opcode, width and form fixed at elaboration, under a predicate.
//
// Results follow the reference machine (crates/xdp/src/alu.rs): division by zero gives 0, modulo by zero leaves
// the dividend, OFF == 1 selects signed division and modulo (truncating; INT_MIN / -1 == INT_MIN), shift amounts
// are masked to the width, mov with OFF 8/16/32 sign-extends (movsx), end converts the low END_BITS of a_i
// (END_SWAP: reverse the bytes, else zero-extend), and 32-bit results are zero-extended. Because every choice is
// a parameter, synthesis keeps only the selected operation (a divider only where a program divides).
// Predication: a disabled op passes old_i, the destination's previous value, so ops writing one register chain.
module ehdl_alu #(
  parameter integer OP       = 0,   // high nibble of the eBPF opcode: 0x0 add .. 0xc arsh, 0xd end
  parameter integer WIDE     = 1,   // 1: ALU64, 0: ALU (32-bit)
  parameter integer OFF      = 0,   // the instruction's off: 1 signed div/mod; mov: 8/16/32 movsx
  parameter integer END_BITS = 64,  // end: 16, 32 or 64
  parameter integer END_SWAP = 0    // end: 1 reverses the byte order
) (
  input  logic        en_i,   // the op's predicate
  input  logic [63:0] a_i,    // dst, or the three-operand form's first source
  input  logic [63:0] b_i,    // src register, or the sign-extended immediate
  input  logic [63:0] old_i,  // the destination when the op is disabled
  output logic [63:0] res_o
);

  localparam integer Signed = (OFF == 1) ? 1 : 0;

  // Operands at the operation's width; 32-bit ones sign-extended when signed division needs a magnitude.
  logic        a_neg;
  logic        b_neg;
  logic [63:0] a_w;
  logic [63:0] b_w;
  logic [63:0] a_mag;
  logic [63:0] b_mag;
  logic [63:0] quot;
  logic [63:0] rem;
  logic [63:0] value;
  logic [63:0] swapped;

  always_comb begin
    a_neg = (Signed == 1) & ((WIDE == 1) ? a_i[63] : a_i[31]);
    b_neg = (Signed == 1) & ((WIDE == 1) ? b_i[63] : b_i[31]);
    a_w   = (WIDE == 1) ? a_i : {{32{a_neg}}, a_i[31:0]};
    b_w   = (WIDE == 1) ? b_i : {{32{b_neg}}, b_i[31:0]};
    a_mag = a_neg ? (64'd0 - a_w) : a_w;
    b_mag = b_neg ? (64'd0 - b_w) : b_w;
    if (b_mag == 64'd0) begin
      quot = 64'd0;
      rem  = a_w;
    end else begin
      quot = (a_neg ^ b_neg) ? (64'd0 - (a_mag / b_mag)) : (a_mag / b_mag);
      rem  = a_neg ? (64'd0 - (a_mag % b_mag)) : (a_mag % b_mag);
    end
  end

  always_comb begin
    case (END_BITS)
      16:      swapped = {48'd0, a_i[7:0], a_i[15:8]};
      32:      swapped = {32'd0, a_i[7:0], a_i[15:8], a_i[23:16], a_i[31:24]};
      default: swapped = {a_i[7:0], a_i[15:8], a_i[23:16], a_i[31:24],
                          a_i[39:32], a_i[47:40], a_i[55:48], a_i[63:56]};
    endcase
  end

  always_comb begin
    case (OP)
      0:    value = a_i + b_i;
      1:    value = a_i - b_i;
      2:    value = a_i * b_i;
      3:    value = quot;
      4:    value = a_i | b_i;
      5:    value = a_i & b_i;
      6:    value = (WIDE == 1) ? (a_i << b_i[5:0]) : {32'd0, a_i[31:0] << b_i[4:0]};
      7:    value = (WIDE == 1) ? (a_i >> b_i[5:0]) : {32'd0, a_i[31:0] >> b_i[4:0]};
      8:    value = 64'd0 - a_i;
      9:    value = rem;
      10:    value = a_i ^ b_i;
      11: begin
        case (OFF)
          8:       value = {{56{b_i[7]}}, b_i[7:0]};
          16:      value = {{48{b_i[15]}}, b_i[15:0]};
          32:      value = {{32{b_i[31]}}, b_i[31:0]};
          default: value = b_i;
        endcase
      end
      12:    value = (WIDE == 1) ? $unsigned($signed(a_i) >>> b_i[5:0])
                                   : {32'd0, $unsigned($signed(a_i[31:0]) >>> b_i[4:0])};
      default: begin
        if (END_SWAP == 1) begin
          value = swapped;
        end else begin
          case (END_BITS)
            16:      value = {48'd0, a_i[15:0]};
            32:      value = {32'd0, a_i[31:0]};
            default: value = a_i;
          endcase
        end
      end
    endcase
    // 32-bit operations (not end, whose width is END_BITS) zero-extend their result.
    if (WIDE == 0 && OP != 13) begin
      value = {32'd0, value[31:0]};
    end
  end

  assign res_o = en_i ? value : old_i;

endmodule
