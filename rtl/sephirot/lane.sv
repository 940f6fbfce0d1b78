`default_nettype none
// One Sephirot lane's execute stage: the ALU (alu.sv), the jump condition and the shaping of loaded bytes.
//
// Conditions follow crates/xdp/src/alu.rs (condition): 64-bit compares for the JMP class, 32-bit ones on the low
// halves for JMP32; an operation nibble without a condition is reported by the decoder, not here.
//
// DIV = 0 leaves the divider out of the ALU (div and mod give 0): the core's lanes share one divider.
module lane #(
  parameter integer DIV = 1  // 1: the ALU divides; 0: the core's shared divider does
) (
  // ALU
  input  logic [3:0]  op_i,          // high opcode nibble: ALU operation or jump condition
  input  logic        wide_i,        // ALU64 / JMP class
  input  logic [15:0] alu_off_i,
  input  logic [63:0] a_i,           // first operand (dst, a, or the compared register)
  input  logic [63:0] b_i,           // second operand (src or the sign-extended immediate)
  input  logic [31:0] end_imm_i,
  input  logic        end_swap_i,
  output logic [63:0] alu_result_o,
  output logic        alu_valid_o,
  output logic        taken_o,       // the jump condition holds
  // loads
  input  logic [63:0] load_raw_i,    // the bytes read, little-endian, lowest byte in bits 7:0
  input  logic [3:0]  load_bytes_i,
  input  logic        load_sext_i,
  output logic [63:0] load_value_o
);

  alu #(.DIV(DIV)) u_alu (
    .op_i       (op_i),
    .wide_i     (wide_i),
    .off_i      (alu_off_i),
    .a_i        (a_i),
    .b_i        (b_i),
    .end_imm_i  (end_imm_i),
    .end_swap_i (end_swap_i),
    .result_o   (alu_result_o),
    .valid_o    (alu_valid_o)
  );

  logic [63:0] ca;
  logic [63:0] cb;
  logic        eq;
  logic        ult;
  logic        slt;

  always_comb begin
    ca  = wide_i ? a_i : {32'd0, a_i[31:0]};
    cb  = wide_i ? b_i : {32'd0, b_i[31:0]};
    eq  = ca == cb;
    ult = ca < cb;
    slt = wide_i ? ($signed(a_i) < $signed(b_i)) : ($signed(a_i[31:0]) < $signed(b_i[31:0]));
    case (op_i)
      4'h1:    taken_o = eq;                 // jeq
      4'h2:    taken_o = !ult && !eq;        // jgt
      4'h3:    taken_o = !ult;               // jge
      4'h4:    taken_o = (ca & cb) != 64'd0; // jset
      4'h5:    taken_o = !eq;                // jne
      4'h6:    taken_o = !slt && !eq;        // jsgt
      4'h7:    taken_o = !slt;               // jsge
      4'ha:    taken_o = ult;                // jlt
      4'hb:    taken_o = ult || eq;          // jle
      4'hc:    taken_o = slt;                // jslt
      4'hd:    taken_o = slt || eq;          // jsle
      default: taken_o = 1'b0;
    endcase
  end

  always_comb begin
    case (load_bytes_i)
      4'd1:    load_value_o = {{56{load_sext_i & load_raw_i[7]}}, load_raw_i[7:0]};
      4'd2:    load_value_o = {{48{load_sext_i & load_raw_i[15]}}, load_raw_i[15:0]};
      4'd4:    load_value_o = {{32{load_sext_i & load_raw_i[31]}}, load_raw_i[31:0]};
      4'd6:    load_value_o = {16'd0, load_raw_i[47:0]};
      default: load_value_o = load_raw_i;
    endcase
  end

endmodule
