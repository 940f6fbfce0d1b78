`default_nettype none
// eHDL template: exit, latching the packet's verdict (the low 32 bits of a register, or a constant) when enabled.
//
// At most one exit is enabled per packet, so a stage's exits chain through old_i in any order.
module ehdl_exit (
  input  logic        en_i,
  input  logic [63:0] val_i,  // the verdict register, or the constant
  input  logic [31:0] old_i,  // the verdict so far
  output logic [31:0] verdict_o
);

  assign verdict_o = en_i ? val_i[31:0] : old_i;

  // XDP verdicts are 32-bit: the register's high half is not part of it.
  logic unused_high;
  assign unused_high = ^val_i[63:32];

endmodule
