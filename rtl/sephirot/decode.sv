`default_nettype none
// Sephirot slot decoder: one lane's 64-bit slot (docs/isa-hxdp.md) split into what the pipeline stages need.
//
// Classification follows crates/hxdp/src/isa.rs (Op::is_*), register reads follow crates/hxdp/src/ir.rs (reads),
// so the core stalls exactly where the cycle model does. next_hi_i is the following lane's upper half, read only
// by lddw. An all-zero opcode (an empty lane or lddw's second half) decodes to nothing.
module decode (
  input  logic [63:0] slot_i,
  input  logic [31:0] next_hi_i,
  // ALU and lddw
  output logic        alu_o,         // ALU or ALU64 class
  output logic        wide_o,        // ALU64 (for the ALU) / JMP class (for conditions)
  output logic        x_o,           // second operand is the src register
  output logic [3:0]  op_o,          // high opcode nibble: ALU operation or jump condition
  output logic [15:0] alu_off_o,     // ALU off (three-operand form: its low byte, sign-extended)
  output logic        lddw_o,
  output logic [63:0] lddw_val_o,    // the value lddw loads (map handles and values region-tagged)
  // memory
  output logic        load_o,
  output logic        load_sext_o,   // MEMSX: sign-extend the loaded value
  output logic [31:0] load_verdict_o,// checked packet load: the verdict an out-of-packet access ends with
  output logic        load_checked_o,
  output logic        store_o,
  output logic        store_imm_o,   // ST class: the stored value is the immediate
  output logic        atomic_o,      // STX atomic (mode 0xc0): read, modify, write
  output logic [3:0]  bytes_o,       // access size: 1, 2, 4, 6 or 8
  // control
  output logic        cond_o,        // conditional jump
  output logic        cond_valid_o,  // its condition exists
  output logic        ja_o,
  output logic        exit_o,        // exit or exit K
  output logic        exitk_o,       // exit K
  output logic        hcall_o,       // helper call
  output logic        lcall_o,       // bpf-to-bpf call
  // operands
  output logic [3:0]  dst_o,
  output logic [3:0]  src_o,
  output logic [3:0]  ra_o,          // first operand / address base register
  output logic [15:0] off_o,         // raw off: memory displacement, jump target bundle
  output logic [31:0] imm_o,
  output logic [63:0] imm64_o,       // imm sign-extended
  output logic [10:0] reads_o,       // registers the op reads (r0-r10)
  output logic        writes_o,      // writes dst (ALU, lddw, load)
  output logic        any_o          // the lane holds an op
);

  localparam [2:0] ClassLd    = 3'd0;
  localparam [2:0] ClassLdx   = 3'd1;
  localparam [2:0] ClassSt    = 3'd2;
  localparam [2:0] ClassStx   = 3'd3;
  localparam [2:0] ClassAlu   = 3'd4;
  localparam [2:0] ClassJmp   = 3'd5;
  localparam [2:0] ClassJmp32 = 3'd6;
  localparam [2:0] ClassAlu64 = 3'd7;

  logic [7:0]  code;
  logic [2:0]  cls;
  logic        three;
  logic [15:0] raw_off;
  logic [31:0] imm;

  function automatic [10:0] bit_of(input logic [3:0] r);
    bit_of = (r <= 4'd10) ? (11'd1 << r) : 11'd0;
  endfunction

  always_comb begin
    code      = slot_i[7:0];
    cls       = code[2:0];
    raw_off   = slot_i[31:16];
    imm       = slot_i[63:32];
    dst_o     = slot_i[11:8];
    src_o     = slot_i[15:12];
    off_o     = raw_off;
    imm_o     = imm;
    imm64_o   = {{32{imm[31]}}, imm};
    op_o      = code[7:4];
    x_o       = code[3];
    any_o     = code != 8'h00;

    alu_o     = (cls == ClassAlu) || (cls == ClassAlu64);
    wide_o    = (cls == ClassAlu64) || (cls == ClassJmp);
    three     = alu_o && raw_off[15];
    alu_off_o = three ? {{8{raw_off[7]}}, raw_off[7:0]} : raw_off;
    ra_o      = three ? raw_off[11:8] : slot_i[11:8];

    lddw_o    = code == 8'h18;
    case (slot_i[15:12])
      4'd1:    lddw_val_o = {4'h5, 28'd0, imm};
      4'd2:    lddw_val_o = 64'h4000_0000_0000_0000 | ({32'd0, imm} << 52) | {32'd0, next_hi_i};
      default: lddw_val_o = {next_hi_i, imm};
    endcase

    load_o         = cls == ClassLdx;
    load_sext_o    = load_o && code[7:5] == 3'b100;
    load_checked_o = load_o && !imm[31] && imm != 32'd0;
    load_verdict_o = imm - 32'd1;
    store_o        = (cls == ClassSt) || (cls == ClassStx);
    store_imm_o    = cls == ClassSt;
    atomic_o       = cls == ClassStx && code[7:5] == 3'b110;
    if (code == 8'he1 || code == 8'he3) begin
      bytes_o = 4'd6;
    end else begin
      case (code[4:3])
        2'b00:   bytes_o = 4'd4;
        2'b01:   bytes_o = 4'd2;
        2'b10:   bytes_o = 4'd1;
        default: bytes_o = 4'd8;
      endcase
    end

    ja_o      = code == 8'h05;
    exit_o    = code == 8'h95 || code == 8'he5;
    exitk_o   = code == 8'he5;
    hcall_o   = code == 8'h85 && slot_i[15:12] != 4'd1;
    lcall_o   = code == 8'h85 && slot_i[15:12] == 4'd1;
    cond_o    = (cls == ClassJmp || cls == ClassJmp32)
                && code[7:4] != 4'h0 && code[7:4] != 4'h8 && code[7:4] != 4'h9 && code[7:4] != 4'he;
    cond_valid_o = code[7:4] != 4'hf;

    // Registers read, as crates/hxdp/src/ir.rs counts them.
    reads_o = 11'd0;
    case (cls)
      ClassAlu, ClassAlu64: begin
        if (three) begin
          reads_o = bit_of(raw_off[11:8]);
        end else if (code[7:4] != 4'hb) begin
          reads_o = bit_of(slot_i[11:8]);
        end
        if (code[3] && code[7:4] != 4'hd && code[7:4] != 4'h8) begin
          reads_o = reads_o | bit_of(slot_i[15:12]);
        end
      end
      ClassLdx: reads_o = bit_of(slot_i[15:12]);
      ClassSt:  reads_o = bit_of(slot_i[11:8]);
      ClassStx: begin
        reads_o = bit_of(slot_i[11:8]) | bit_of(slot_i[15:12]);
        if (code[7:5] == 3'b110 && imm == 32'h0000_00f1) begin
          reads_o = reads_o | 11'd1;
        end
      end
      ClassJmp, ClassJmp32: begin
        if (code == 8'he5) begin
          reads_o = 11'd0;
        end else if (code == 8'h95) begin
          reads_o = 11'd1;
        end else if (code == 8'h85) begin
          reads_o = (slot_i[15:12] == 4'd1) ? 11'b111_1111_1110 : 11'b000_0011_1110;
        end else if (code == 8'h05) begin
          reads_o = 11'd0;
        end else if (code[3]) begin
          reads_o = bit_of(slot_i[11:8]) | bit_of(slot_i[15:12]);
        end else begin
          reads_o = bit_of(slot_i[11:8]);
        end
      end
      ClassLd: reads_o = 11'd0;
      default: reads_o = 11'd0;
    endcase

    writes_o = alu_o || lddw_o || load_o;
  end

endmodule
