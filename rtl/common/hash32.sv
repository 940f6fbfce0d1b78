`default_nettype none
// CRC-32 hash of a key (combinational): polynomial 0x04C11DB7, initial value 0, no final xor, over the bytes from the
// last (byte BYTES-1, bits 8*BYTES-1:8*BYTES-8) down to byte 0, each byte's bit 7 first.
//
// With an initial value of 0 leading zero bytes leave the CRC at 0, so a key zero-padded at its end (the maps
// module's keys are zero past key_size) hashes alike whatever BYTES is: the hash of a key is a function of its
// key_size bytes only. hwxdp_hxdp::timing::crc32 computes the same function for the cycle model. The CRC is linear:
// each output bit is an XOR of input bits (a few LUT levels).
module hash32 #(
  parameter integer BYTES = 16            // key bytes hashed
) (
  input  logic [8*BYTES-1:0] data_i,
  output logic [31:0]        hash_o
);

  always_comb begin : crc
    logic [31:0] c;
    logic        fb;
    c = 32'd0;
    for (integer b = BYTES - 1; b >= 0; b = b - 1) begin
      for (integer i = 7; i >= 0; i = i - 1) begin
        fb = c[31] ^ data_i[8*b + i];
        c  = {c[30:0], 1'b0} ^ (fb ? 32'h04C1_1DB7 : 32'd0);
      end
    end
    hash_o = c;
  end

endmodule
