`default_nettype none
// eHDL template: a stack store at a constant offset into the stage's carried stack bytes.
//
// old_i are the SIZE bytes as they enter the stage (or as an earlier store of the same stage left them: stores
// of one path to one byte never share a stage, so the chain only joins exclusive paths); a disabled store passes
// them on.
module ehdl_stack_store #(
  parameter integer SIZE = 1  // bytes: 1, 2, 4 or 8
) (
  input  logic              en_i,
  input  logic [63:0]       val_i,
  input  logic [8*SIZE-1:0] old_i,
  output logic [8*SIZE-1:0] bytes_o
);

  assign bytes_o = en_i ? val_i[8*SIZE-1:0] : old_i;

  // Bytes above SIZE are not stored.
  logic unused_val;
  assign unused_val = ^val_i;

endmodule
