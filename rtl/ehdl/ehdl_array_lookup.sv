`default_nettype none
// eHDL helper block: bpf_map_lookup_elem on an ARRAY map, R0 = a pointer to the key's value or NULL.
//
// An ARRAY lookup is address arithmetic: the value of key k is at byte k * VALUE_SIZE of the map. Map pointers are
// (MAP_ID + 1) << 32 plus that byte address, so map-value accesses find their map in the pointer's high half and
// NULL (0) never names a map. The key is the 4 stack bytes the constant key pointer names (little-endian).
module ehdl_array_lookup #(
  parameter integer MAP_ID     = 0,  // the map's index in the object
  parameter integer ENTRIES    = 1,  // max_entries
  parameter integer VALUE_SIZE = 8   // value_size in bytes
) (
  input  logic        en_i,   // the call's predicate
  input  logic [31:0] key_i,
  input  logic [63:0] old_i,  // R0 when the call is disabled
  output logic [63:0] r0_o
);

  logic [63:0] ptr;

  assign ptr  = (key_i < ENTRIES) ? {MAP_ID[31:0] + 32'd1, 32'd0} + ({32'd0, key_i} * VALUE_SIZE) : 64'd0;
  assign r0_o = en_i ? ptr : old_i;

endmodule
