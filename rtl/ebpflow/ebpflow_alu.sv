`default_nettype none
// eBPFlow engine ALU: the single-cycle ALU64/ALU32 operations of RFC 9669 (everything but mul, div and mod), combinational.
//
// op_i is the opcode's high nibble (add 0, sub 1, or 4, and 5, lsh 6, rsh 7, neg 8, xor a, mov b, arsh c, end d), wide_i
// selects ALU64, swap_i the byte-swapping END forms (ALU's be, ALU64's bswap), off_i the sign-extending movs (8, 16,
// 32) and imm_i the END width (16, 32, 64). b_i is the second operand as decode formed it (a register, or the
// immediate sign-extended to 64 bits). Shift amounts are masked to the operand width; every 32-bit result is
// zero-extended. valid_o is low for an operation, mov offset or END width that does not exist (also for the
// multi-cycle ops 2, 3 and 9, which ebpflow_muldiv computes): the engine faults on it.
module ebpflow_alu (
  input  logic [3:0]  op_i,
  input  logic        wide_i,
  input  logic        swap_i,
  input  logic [15:0] off_i,
  input  logic [31:0] imm_i,
  input  logic [63:0] a_i,
  input  logic [63:0] b_i,
  output logic [63:0] result_o,
  output logic        valid_o
);

  logic [31:0] a32;
  logic [31:0] b32;
  logic [31:0] r32;
  logic [63:0] r64;
  logic        ok64;
  logic        ok32;

  assign a32 = a_i[31:0];
  assign b32 = b_i[31:0];

  // Byte swaps of the low 16, 32 or 64 bits, zero-extended.
  function automatic [63:0] bswap(input logic [63:0] v, input logic [31:0] width);
    case (width)
      32'd16:  bswap = {48'd0, v[7:0], v[15:8]};
      32'd32:  bswap = {32'd0, v[7:0], v[15:8], v[23:16], v[31:24]};
      default: bswap = {v[7:0], v[15:8], v[23:16], v[31:24], v[39:32], v[47:40], v[55:48], v[63:56]};
    endcase
  endfunction

  logic end_width_ok;
  assign end_width_ok = (imm_i == 32'd16) || (imm_i == 32'd32) || (imm_i == 32'd64);

  logic [63:0] end_value;
  always_comb begin
    if (swap_i) begin
      end_value = bswap(a_i, imm_i);
    end else begin
      case (imm_i)
        32'd16:  end_value = {48'd0, a_i[15:0]};
        32'd32:  end_value = {32'd0, a_i[31:0]};
        default: end_value = a_i;
      endcase
    end
  end

  always_comb begin
    r64  = 64'd0;
    ok64 = 1'b1;
    case (op_i)
      4'h0: r64 = a_i + b_i;
      4'h1: r64 = a_i - b_i;
      4'h4: r64 = a_i | b_i;
      4'h5: r64 = a_i & b_i;
      4'h6: r64 = a_i << b_i[5:0];
      4'h7: r64 = a_i >> b_i[5:0];
      4'h8: r64 = 64'd0 - a_i;
      4'ha: r64 = a_i ^ b_i;
      4'hb: begin
        case (off_i)
          16'd0:   r64 = b_i;
          16'd8:   r64 = {{56{b_i[7]}}, b_i[7:0]};
          16'd16:  r64 = {{48{b_i[15]}}, b_i[15:0]};
          16'd32:  r64 = {{32{b_i[31]}}, b_i[31:0]};
          default: ok64 = 1'b0;
        endcase
      end
      4'hc: r64 = $signed(a_i) >>> b_i[5:0];
      4'hd: begin
        r64  = end_value;
        ok64 = end_width_ok;
      end
      default: ok64 = 1'b0;
    endcase
  end

  always_comb begin
    r32  = 32'd0;
    ok32 = 1'b1;
    case (op_i)
      4'h0: r32 = a32 + b32;
      4'h1: r32 = a32 - b32;
      4'h4: r32 = a32 | b32;
      4'h5: r32 = a32 & b32;
      4'h6: r32 = a32 << b32[4:0];
      4'h7: r32 = a32 >> b32[4:0];
      4'h8: r32 = 32'd0 - a32;
      4'ha: r32 = a32 ^ b32;
      4'hb: begin
        case (off_i)
          16'd0:   r32 = b32;
          16'd8:   r32 = {{24{b32[7]}}, b32[7:0]};
          16'd16:  r32 = {{16{b32[15]}}, b32[15:0]};
          default: ok32 = 1'b0;
        endcase
      end
      4'hc: r32 = $signed(a32) >>> b32[4:0];
      default: ok32 = 1'b0;
    endcase
  end

  always_comb begin
    if (op_i == 4'hd) begin
      // END is the same in both classes but for the swap (decode sets swap_i for ALU64's bswap).
      result_o = end_value;
      valid_o  = end_width_ok;
    end else if (wide_i) begin
      result_o = r64;
      valid_o  = ok64;
    end else begin
      result_o = {32'd0, r32};
      valid_o  = ok32;
    end
  end

endmodule
