`default_nettype none
// One lane's eBPF ALU for the Sephirot core: RFC 9669 arithmetic, combinational, 32- and 64-bit.
//
// The operation encodings and results follow the reference machine (crates/xdp/src/alu.rs) exactly:
// - op_i is the high nibble of the eBPF opcode (0x0 add .. 0xc arsh, 0xd end); 0xe and 0xf do not exist.
// - Division by zero gives 0; modulo by zero leaves the dividend (a 32-bit dividend zero-extended).
// - off_i == 1 selects signed division and modulo, which truncate toward zero; INT_MIN / -1 == INT_MIN and
//   INT_MIN % -1 == 0, because both are computed on magnitudes and the sign applied modulo 2^64.
// - Shift amounts are masked to 63 (64-bit) or 31 (32-bit).
// - mov with off_i 8/16/32 is movsx (32 only in 64-bit form); any other nonzero off_i makes mov invalid.
// - end: end_imm_i is the width (16, 32 or 64, anything else is invalid), end_swap_i reverses the bytes
//   (to-be or bswap, as decode resolves them); the result is zero-extended from the width. wide_i is ignored.
// - 32-bit results are zero-extended to 64 bits. An invalid encoding drives valid_o low and result_o to 0.
//
// The divider is combinational: one 64-step restoring array computes quotient and remainder together for every
// width and signedness, and sets this module's critical path. It is also most of the module's area (about 15k
// LUTs), so the Sephirot core builds its lane ALUs with DIV = 0 (no divider: div and mod give 0, still valid) and
// divides in one shared sequential divider (divider.sv, same results over 17 cycles); the compiler places at most
// one division or modulo per bundle (docs/isa-hxdp.md). DIV_ONLY = 1 builds only the combinational divider (any
// operation but div and mod is invalid). The default is the whole ALU, as crates/rtlsim/tests/alu.rs tests it.
module alu #(
  parameter integer DIV      = 1,  // 1: build the divider (div and mod); 0: they give 0
  parameter integer DIV_ONLY = 0   // 1: only div and mod (the core's shared divider), every other operation invalid
) (
  input  logic [3:0]  op_i,        // ALU operation, the high nibble of the eBPF opcode
  input  logic        wide_i,      // 1: ALU64, 0: ALU (32-bit)
  input  logic [15:0] off_i,       // eBPF off: signed div/mod when 1, movsx source width 8/16/32
  input  logic [63:0] a_i,         // first operand: dst, or the three-operand form's a
  input  logic [63:0] b_i,         // second operand: src register or sign-extended immediate
  input  logic [31:0] end_imm_i,   // end: operand width in bits
  input  logic        end_swap_i,  // end: reverse the byte order
  output logic [63:0] result_o,
  output logic        valid_o
);

  localparam [3:0] OpAdd  = 4'h0;
  localparam [3:0] OpSub  = 4'h1;
  localparam [3:0] OpMul  = 4'h2;
  localparam [3:0] OpDiv  = 4'h3;
  localparam [3:0] OpOr   = 4'h4;
  localparam [3:0] OpAnd  = 4'h5;
  localparam [3:0] OpLsh  = 4'h6;
  localparam [3:0] OpRsh  = 4'h7;
  localparam [3:0] OpNeg  = 4'h8;
  localparam [3:0] OpMod  = 4'h9;
  localparam [3:0] OpXor  = 4'ha;
  localparam [3:0] OpMov  = 4'hb;
  localparam [3:0] OpArsh = 4'hc;
  localparam [3:0] OpEnd  = 4'hd;

  // Division: both widths go through one 64-bit unsigned divider on operand magnitudes.
  logic        b_zero;
  logic [63:0] quot;
  logic [63:0] rem;

  if (DIV != 0 || DIV_ONLY != 0) begin : g_div
    logic        signed_div;
    logic        a_neg;
    logic        b_neg;
    logic [63:0] a_div;
    logic [63:0] b_div;
    logic [63:0] a_mag;
    logic [63:0] b_mag;
    logic [63:0] quot_mag;
    logic [63:0] rem_mag;
    logic [64:0] trial;
    integer      step;

    always_comb begin
      signed_div = (off_i == 16'd1);
      a_neg      = signed_div & (wide_i ? a_i[63] : a_i[31]);
      b_neg      = signed_div & (wide_i ? b_i[63] : b_i[31]);
      // A negative 32-bit operand is sign-extended first so that negating it yields its 32-bit magnitude.
      a_div      = wide_i ? a_i : {{32{a_neg}}, a_i[31:0]};
      b_div      = wide_i ? b_i : {{32{b_neg}}, b_i[31:0]};
      a_mag      = a_neg ? (64'd0 - a_div) : a_div;
      b_mag      = b_neg ? (64'd0 - b_div) : b_div;
      b_zero     = wide_i ? (b_i == 64'd0) : (b_i[31:0] == 32'd0);
      // Restoring division, one quotient bit per step: quotient bits shift in where the dividend's bits shift
      // out, and quotient and remainder come from the same subtractor array (the tools' separate / and % would
      // build two). A zero divisor yields a meaningless quotient here that the operation select overrides.
      quot_mag   = a_mag;
      rem_mag    = 64'd0;
      for (step = 0; step < 64; step = step + 1) begin
        trial    = {rem_mag, quot_mag[63]} - {1'b0, b_mag};
        // The partial remainder stays below the divisor, so a nonnegative trial fits 64 bits and bit 64 is the
        // borrow; on a borrow the shifted remainder is also below the divisor and its dropped top bit is zero.
        rem_mag  = trial[64] ? {rem_mag[62:0], quot_mag[63]} : trial[63:0];
        quot_mag = {quot_mag[62:0], ~trial[64]};
      end
      quot       = (a_neg ^ b_neg) ? (64'd0 - quot_mag) : quot_mag;
      rem        = a_neg ? (64'd0 - rem_mag) : rem_mag;
    end
  end else begin : g_no_div
    // No divider: the shared unit of the core computes div and mod (this lane's result is replaced).
    always_comb begin
      b_zero     = 1'b0;
      quot       = 64'd0;
      rem        = 64'd0;
    end
  end

  // Shifts: the amount is masked to the operand width.
  logic [5:0]  shamt64;
  logic [4:0]  shamt32;
  logic [63:0] lsh;
  logic [63:0] rsh;
  logic [63:0] arsh;

  always_comb begin
    shamt64 = b_i[5:0];
    shamt32 = b_i[4:0];
    if (wide_i) begin
      lsh  = a_i << shamt64;
      rsh  = a_i >> shamt64;
      arsh = $unsigned($signed(a_i) >>> shamt64);
    end else begin
      lsh  = {32'd0, a_i[31:0] << shamt32};
      rsh  = {32'd0, a_i[31:0] >> shamt32};
      arsh = {32'd0, $unsigned($signed(a_i[31:0]) >>> shamt32)};
    end
  end

  // mov and movsx.
  logic [63:0] mov;
  logic        mov_valid;

  always_comb begin
    mov       = 64'd0;
    mov_valid = 1'b1;
    case (off_i)
      16'd0:   mov = b_i;
      16'd8:   mov = {{56{b_i[7]}}, b_i[7:0]};
      16'd16:  mov = {{48{b_i[15]}}, b_i[15:0]};
      16'd32:  begin
        mov       = {{32{b_i[31]}}, b_i[31:0]};
        mov_valid = wide_i;
      end
      default: mov_valid = 1'b0;
    endcase
  end

  // end: byte order conversion of a_i at 16, 32 or 64 bits.
  logic [63:0] swapped;
  logic [63:0] ordered;
  logic        end_valid;

  always_comb begin
    swapped   = 64'd0;
    end_valid = 1'b1;
    case (end_imm_i)
      32'd16:  swapped = {48'd0, a_i[7:0], a_i[15:8]};
      32'd32:  swapped = {32'd0, a_i[7:0], a_i[15:8], a_i[23:16], a_i[31:24]};
      32'd64:  swapped = {a_i[7:0], a_i[15:8], a_i[23:16], a_i[31:24],
                          a_i[39:32], a_i[47:40], a_i[55:48], a_i[63:56]};
      default: end_valid = 1'b0;
    endcase
    ordered = 64'd0;
    case (end_imm_i)
      32'd16:  ordered = {48'd0, a_i[15:0]};
      32'd32:  ordered = {32'd0, a_i[31:0]};
      32'd64:  ordered = a_i;
      default: ordered = 64'd0;
    endcase
  end

  // Operation select. Results whose low 32 bits depend only on the operands' low 32 bits are computed at 64 bits
  // and truncated for ALU32.
  logic [63:0] full;
  logic        full_valid;

  always_comb begin
    full       = 64'd0;
    full_valid = 1'b1;
    if (DIV_ONLY != 0) begin
      // The shared divider: the other units are not built (a parameter, not a run-time select, removes them).
      case (op_i)
        OpDiv:   full = b_zero ? 64'd0 : quot;
        OpMod:   full = b_zero ? a_i : rem;
        default: full_valid = 1'b0;
      endcase
    end else begin
      case (op_i)
        OpAdd:   full = a_i + b_i;
        OpSub:   full = a_i - b_i;
        OpMul:   full = a_i * b_i;
        OpDiv:   full = b_zero ? 64'd0 : quot;
        OpOr:    full = a_i | b_i;
        OpAnd:   full = a_i & b_i;
        OpLsh:   full = lsh;
        OpRsh:   full = rsh;
        OpNeg:   full = 64'd0 - a_i;
        OpMod:   full = b_zero ? a_i : rem;
        OpXor:   full = a_i ^ b_i;
        OpMov:   begin
          full       = mov;
          full_valid = mov_valid;
        end
        OpArsh:  full = arsh;
        default: full_valid = 1'b0;
      endcase
    end
  end

  always_comb begin
    if (op_i == OpEnd && DIV_ONLY == 0) begin
      valid_o  = end_valid;
      result_o = end_swap_i ? swapped : ordered;
    end else begin
      valid_o  = full_valid;
      result_o = full_valid ? (wide_i ? full : {32'd0, full[31:0]}) : 64'd0;
    end
  end

endmodule
