`default_nettype none
// eHDL map block: the keys of one HASH map as a CAM, for bpf_map_lookup_elem from the pipeline, filled by the host.
//
// Slot s holds a key (KEY_BYTES) and a valid bit; each lookup port compares its key with every valid slot in one
// cycle and gives the lowest matching slot (the host keeps keys unique). The values live in an ehdl_map_mem block
// of ENTRIES * value_size bytes beside this one, addressed by slot. Host port: with host_valid_i low, 8 bytes at a
// byte address of the key space, where slot s's key starts at s * KS (KS, the key stride, the smallest power of two
// of at least 8 and KEY_BYTES; bytes past KEY_BYTES read 0 and ignore writes); with host_valid_i high, the valid bit
// of slot host_addr_i in bit 0. Reads show the state before this cycle's write. Reset empties the map.
module ehdl_hash_map #(
  parameter integer ENTRIES   = 4,   // max_entries
  parameter integer KEY_BYTES = 4,   // key_size
  parameter integer NL        = 1,   // lookup ports
  parameter integer SW        = 2,   // slot index width, at least 1 and $clog2(ENTRIES)
  parameter integer AW        = 16   // host address width, 1..31
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic [NL*8*KEY_BYTES-1:0] lk_key_i,
  output logic [NL-1:0]            lk_hit_o,
  output logic [NL*SW-1:0]         lk_slot_o,
  input  logic                     host_we_i,
  input  logic                     host_valid_i,
  input  logic [AW-1:0]            host_addr_i,
  input  logic [63:0]              host_wdata_i,
  input  logic [7:0]               host_wmask_i,
  output logic [63:0]              host_rdata_o
);

  localparam integer KS = (KEY_BYTES <= 8) ? 8 : (KEY_BYTES <= 16) ? 16 : (KEY_BYTES <= 32) ? 32 : 64;

  logic [ENTRIES-1:0]             valid_q;
  logic [ENTRIES-1:0]             valid_d;
  logic [8*KEY_BYTES*ENTRIES-1:0] keys_q;
  logic [8*KEY_BYTES*ENTRIES-1:0] keys_d;
  integer                         at;

  always_comb begin
    lk_hit_o  = '0;
    lk_slot_o = '0;
    for (integer p = 0; p < NL; p = p + 1) begin
      // Descending, so the lowest matching slot is the one left.
      for (integer e = ENTRIES - 1; e >= 0; e = e - 1) begin
        if (valid_q[e] && keys_q[8*KEY_BYTES*e +: 8*KEY_BYTES] == lk_key_i[8*KEY_BYTES*p +: 8*KEY_BYTES]) begin
          lk_hit_o[p]           = 1'b1;
          lk_slot_o[SW*p +: SW] = e[SW-1:0];
        end
      end
    end
  end

  always_comb begin
    valid_d      = valid_q;
    keys_d       = keys_q;
    host_rdata_o = '0;
    at           = {{(32 - AW){1'b0}}, host_addr_i};
    if (host_valid_i) begin
      if (at < ENTRIES) begin
        host_rdata_o[0] = valid_q[at];
        if (host_we_i && host_wmask_i[0]) begin
          valid_d[at] = host_wdata_i[0];
        end
      end
    end else begin
      for (integer b = 0; b < 8; b = b + 1) begin
        if ((at + b) / KS < ENTRIES && (at + b) % KS < KEY_BYTES) begin
          host_rdata_o[8*b +: 8] = keys_q[8*(KEY_BYTES*((at + b) / KS) + (at + b) % KS) +: 8];
          if (host_we_i && host_wmask_i[b]) begin
            keys_d[8*(KEY_BYTES*((at + b) / KS) + (at + b) % KS) +: 8] = host_wdata_i[8*b +: 8];
          end
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
    end else begin
      valid_q <= valid_d;
    end
  end

  always_ff @(posedge clk_i) begin
    keys_q <= keys_d;
  end

endmodule
