`default_nettype none
// eHDL helper block: bpf_fib_lookup (helper 69), crates/xdp/src/fib.rs's RouteTable::lookup as combinational logic
// over a route table the host writes. The checks, their order and the tables' meaning are those of the hXDP block
// rtl/sephirot/fib.sv; the eHDL pipeline wants the answer in the helper's stage, so here the lookup is one
// combinational step (no request/response), and the table is a byte memory on the generated module's host port.
//
// Table (host_* writes 8 bytes at an 8-byte aligned byte address with a byte mask; zero at reset; write it before
// traffic, since a lookup sees each write as it lands). Multi-byte fields little-endian; addresses in the struct's
// byte order (first byte on the wire first, an IPv4 address in bytes 0..3, the rest zero); entries in the order of
// the reference's lists, which breaks ties as its first-found / min_by_key does:
// - device d at 0x0000 + 16 d:    ifindex[0..4], mtu[4..8], mac[8..14], byte 14 bit 0 valid;
// - route r at 0x1000 + 64 r:     prefix[0..16], gateway[16..32], out ifindex[32..36], effective metric[36..40]
//                                 (Route::effective_metric: IPv6 metric 0 is 1024), length[40] (raw: the match uses
//                                 min(len, 32 or 128) bits, the ordering and the loopback check the raw length),
//                                 kind[41] (0 unicast, 1 blackhole, 2 unreachable, 3 prohibit), byte 42 bits: 0 valid,
//                                 1 IPv6 prefix, 2 gateway present, 3 IPv6 gateway;
// - neighbour n at 0x2000 + 32 n: ip[0..16], ifindex[16..20], mac[20..26], byte 26 bits: 0 valid, 1 IPv6.
// The loopback device (ifindex 1, MAC zero, MTU 65536) and the kernel's loopback local routes (127.0.0.0/8,
// 127.0.0.1, 127.255.255.255) are built in; a listed device of ifindex 1 takes precedence as egress, as in fib.rs.
//
// Lookup: params_i is the 64-byte struct bpf_fib_lookup (byte 0 in bits 7:0), plen_i and flags_i the helper's
// arguments. A plen below 64 (as a signed 32-bit value) or flags beyond the six known bits: -EINVAL, nothing
// changed (fib::check_call). BPF_FIB_LOOKUP_OUTPUT (2) and SKIP_NEIGH (4) act; DIRECT (1) gives the same answers and
// SRC, TBID, MARK (8, 16, 32) are ignored (the reference machine refuses to run them). ret_o is the 64-bit return
// value (BPF_FIB_LKUP_RET_*, -19 ENODEV, -97 EAFNOSUPPORT, -22 EINVAL), params_o the struct as the helper leaves it.
module ehdl_fib #(
  parameter integer ROUTES    = 32,  // at most 64
  parameter integer DEVICES   = 4,   // besides the built-in loopback device; at most 256
  parameter integer NEIGHBORS = 16   // at most 128
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         host_we_i,
  input  logic [15:0]  host_addr_i,
  input  logic [63:0]  host_wdata_i,
  input  logic [7:0]   host_wmask_i,
  input  logic [511:0] params_i,
  input  logic [63:0]  plen_i,
  input  logic [63:0]  flags_i,
  output logic [63:0]  ret_o,
  output logic [511:0] params_o
);

  localparam [63:0] RetSuccess      = 64'd0;
  localparam [63:0] RetNotFwded     = 64'd4;
  localparam [63:0] RetNoNeigh      = 64'd7;
  localparam [63:0] RetFragNeeded   = 64'd8;
  localparam [63:0] RetEinval       = 64'hffff_ffff_ffff_ffea;  // -22
  localparam [63:0] RetEnodev       = 64'hffff_ffff_ffff_ffed;  // -19
  localparam [63:0] RetEafnosupport = 64'hffff_ffff_ffff_ff9f;  // -97

  localparam [31:0] Loopback    = 32'd1;
  localparam [31:0] LoopbackMtu = 32'd65536;

  // ---------------------------------------------------------------------------------------------------------------
  // The table, written through the host port.

  // Flat registers, word k (8 bytes) of a table at bits 64 k; the host's word address within a table (host_word) is
  // that k, since entries are a power-of-two number of words. The next state is computed with constant indices only: a
  // run-time part select per byte had Yosys' front end build thousands of shifters (it never finished on fib_forward),
  // and Verilator refuses delayed assignments to an array element inside a loop.
  logic [DEVICES*128-1:0]  dev_q, dev_d;
  logic [ROUTES*512-1:0]   route_q, route_d;
  logic [NEIGHBORS*256-1:0] nb_q, nb_d;

  logic [8:0] host_word;
  assign host_word = host_addr_i[11:3];

  always_comb begin
    dev_d   = dev_q;
    route_d = route_q;
    nb_d    = nb_q;
    for (integer b = 0; b < 8; b = b + 1) begin
      if (host_we_i && host_wmask_i[b]) begin
        for (integer k = 0; k < 2 * DEVICES; k = k + 1) begin
          if (host_addr_i[15:12] == 4'd0 && 32'(host_word) == k) dev_d[64*k+8*b +: 8] = host_wdata_i[8*b +: 8];
        end
        for (integer k = 0; k < 8 * ROUTES; k = k + 1) begin
          if (host_addr_i[15:12] == 4'd1 && 32'(host_word) == k) route_d[64*k+8*b +: 8] = host_wdata_i[8*b +: 8];
        end
        for (integer k = 0; k < 4 * NEIGHBORS; k = k + 1) begin
          if (host_addr_i[15:12] == 4'd2 && 32'(host_word) == k) nb_d[64*k+8*b +: 8] = host_wdata_i[8*b +: 8];
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      // An entry at a time: one '0 of a whole table is a replication Verilator calls probably wrong.
      for (integer i = 0; i < DEVICES; i = i + 1) dev_q[128*i +: 128] <= '0;
      for (integer i = 0; i < ROUTES; i = i + 1) route_q[512*i +: 512] <= '0;
      for (integer i = 0; i < NEIGHBORS; i = i + 1) nb_q[256*i +: 256] <= '0;
    end else begin
      dev_q   <= dev_d;
      route_q <= route_d;
      nb_q    <= nb_d;
    end
  end

  // The entries, for the lookup below.
  logic [127:0] d_q [DEVICES];
  logic [511:0] r_q [ROUTES];
  logic [255:0] n_q [NEIGHBORS];
  for (genvar i = 0; i < DEVICES; i = i + 1) begin : g_dev
    assign d_q[i] = dev_q[128*i +: 128];
  end
  for (genvar i = 0; i < ROUTES; i = i + 1) begin : g_route
    assign r_q[i] = route_q[512*i +: 512];
  end
  for (genvar i = 0; i < NEIGHBORS; i = i + 1) begin : g_nb
    assign n_q[i] = nb_q[256*i +: 256];
  end

  // ---------------------------------------------------------------------------------------------------------------
  // The request.

  logic [7:0]   q_family;
  logic [15:0]  q_tot_len;
  logic [31:0]  q_ifindex;
  logic [127:0] q_src;
  logic [127:0] q_dst;
  logic         q_v4;
  logic         q_v6;
  logic         q_output;
  logic         q_skip;
  logic         q_einval;
  assign q_family  = params_i[7:0];
  assign q_tot_len = params_i[63:48];
  assign q_ifindex = params_i[95:64];
  assign q_src     = params_i[255:128];
  assign q_dst     = params_i[383:256];
  assign q_v4      = q_family == 8'd2;
  assign q_v6      = q_family == 8'd10;
  assign q_output  = flags_i[1];
  assign q_skip    = flags_i[2];
  assign q_einval  = $signed(plen_i[31:0]) < 32'sd64 || flags_i[31:6] != '0;

  // An address as compared: IPv4 zero-extended.
  function automatic logic [127:0] addr_of(input logic v6, input logic [127:0] a);
    addr_of = v6 ? a : {96'd0, a[31:0]};
  endfunction

  // The mask of a prefix of `len` bits: bit 8*j + i (byte j, bit i) is network-order bit 8*j + 7 - i.
  function automatic logic [127:0] mask_of(input logic v6, input logic [7:0] len);
    logic [8:0] n;
    n = {1'b0, len};
    if (v6) begin
      if (n > 9'd128) n = 9'd128;
    end else begin
      if (n > 9'd32) n = 9'd32;
    end
    for (integer b = 0; b < 128; b = b + 1) begin
      mask_of[b] = 9'((b / 8) * 8 + 7 - (b % 8)) < n;
    end
  endfunction

  // rt6_need_strict: multicast, link-local unicast, loopback.
  function automatic logic strict_v6(input logic [127:0] a);
    strict_v6 = a[7:0] == 8'hff || (a[7:0] == 8'hfe && a[15:14] == 2'b10) || a == {8'h01, 120'd0};
  endfunction

  logic ingress_ok;
  always_comb begin
    ingress_ok = q_ifindex == Loopback;
    for (integer i = 0; i < DEVICES; i = i + 1) begin
      if (d_q[i][112] && d_q[i][0 +: 32] == q_ifindex) ingress_ok = 1'b1;
    end
  end

  // The best route: longest raw length, then the lowest metric, then the first listed (strict comparisons keep it).
  logic         best_valid;
  logic [7:0]   best_len;
  logic [31:0]  best_metric;
  logic [127:0] best_gw;
  logic [31:0]  best_oif;
  logic [7:0]   best_kind;
  logic [7:0]   best_flags;
  always_comb begin
    best_valid  = 1'b0;
    best_len    = '0;
    best_metric = '0;
    best_gw     = '0;
    best_oif    = '0;
    best_kind   = '0;
    best_flags  = '0;
    for (integer i = 0; i < ROUTES; i = i + 1) begin
      if (r_q[i][336] && r_q[i][337] == q_v6
          && (q_dst & mask_of(q_v6, r_q[i][320 +: 8])) == (r_q[i][0 +: 128] & mask_of(q_v6, r_q[i][320 +: 8]))
          && !(q_v4 && q_output && r_q[i][328 +: 8] == 8'd0 && r_q[i][256 +: 32] != q_ifindex)
          && (!best_valid || r_q[i][320 +: 8] > best_len
              || (r_q[i][320 +: 8] == best_len && r_q[i][288 +: 32] < best_metric))) begin
        best_valid  = 1'b1;
        best_len    = r_q[i][320 +: 8];
        best_metric = r_q[i][288 +: 32];
        best_gw     = r_q[i][128 +: 128];
        best_oif    = r_q[i][256 +: 32];
        best_kind   = r_q[i][328 +: 8];
        best_flags  = r_q[i][336 +: 8];
      end
    end
  end

  logic best_gw_valid;
  logic best_gw_v6;
  assign best_gw_valid = best_flags[2];
  assign best_gw_v6    = best_flags[3];

  // The kernel's local and broadcast routes of the loopback device, unless OUTPUT names another device.
  logic       lo_local;
  logic [7:0] lo_len;
  assign lo_local = q_v4 && (!q_output || q_ifindex == Loopback) && q_dst[7:0] == 8'd127;
  assign lo_len   = (q_dst[31:0] == 32'hffff_ff7f || q_dst[31:0] == 32'h0100_007f) ? 8'd32 : 8'd8;

  // The first listed device of the route's ifindex, else the built-in loopback device.
  logic        eg_found;
  logic [47:0] eg_mac;
  logic [31:0] eg_mtu;
  always_comb begin
    eg_found = best_oif == Loopback;
    eg_mac   = '0;
    eg_mtu   = LoopbackMtu;
    for (integer i = DEVICES - 1; i >= 0; i = i - 1) begin
      if (d_q[i][112] && d_q[i][0 +: 32] == best_oif) begin
        eg_found = 1'b1;
        eg_mac   = d_q[i][64 +: 48];
        eg_mtu   = d_q[i][32 +: 32];
      end
    end
  end

  // path_mtu: IPv4 caps at IP_MAX_MTU; IPv6 raises to IPV6_MIN_MTU and caps at IP6_MAX_MTU.
  logic [31:0] path_mtu;
  always_comb begin
    path_mtu = eg_mtu;
    if (q_v6) begin
      if (path_mtu < 32'd1280) path_mtu = 32'd1280;
      if (path_mtu > 32'd65575) path_mtu = 32'd65575;
    end else begin
      if (path_mtu > 32'd65535) path_mtu = 32'd65535;
    end
  end

  // The neighbour key: the next hop (gateway, else the destination), 0.0.0.0 for IPv4 through the loopback device.
  logic         key_v6;
  logic [127:0] key_ip;
  always_comb begin
    if (q_v4 && best_oif == Loopback) begin
      key_v6 = 1'b0;
      key_ip = '0;
    end else if (best_gw_valid) begin
      key_v6 = best_gw_v6;
      key_ip = addr_of(best_gw_v6, best_gw);
    end else begin
      key_v6 = q_v6;
      key_ip = addr_of(q_v6, q_dst);
    end
  end

  logic        nb_found;
  logic [47:0] nb_mac;
  always_comb begin
    nb_found = 1'b0;
    nb_mac   = '0;
    for (integer i = NEIGHBORS - 1; i >= 0; i = i - 1) begin
      if (n_q[i][208] && n_q[i][209] == key_v6 && addr_of(key_v6, n_q[i][0 +: 128]) == key_ip
          && n_q[i][128 +: 32] == best_oif) begin
        nb_found = 1'b1;
        nb_mac   = n_q[i][160 +: 48];
      end
    end
  end

  // The answer, in the reference's order of checks.
  always_comb begin
    params_o = params_i;
    ret_o    = RetSuccess;
    if (q_einval) begin
      ret_o = RetEinval;
    end else if (!q_v4 && !q_v6) begin
      ret_o = RetEafnosupport;
    end else if (q_v6 && (strict_v6(q_dst) || strict_v6(q_src))) begin
      ret_o = RetNotFwded;
    end else if (!ingress_ok) begin
      ret_o = RetEnodev;
    end else if (lo_local && (!best_valid || best_len <= lo_len)) begin
      ret_o = RetNotFwded;
    end else if (!best_valid) begin
      ret_o = RetNotFwded;
    end else if (best_kind != 8'd0) begin
      ret_o = {56'd0, best_kind};  // BLACKHOLE 1, UNREACHABLE 2, PROHIBIT 3
    end else if (!eg_found) begin
      ret_o = RetNotFwded;
    end else if ({16'd0, q_tot_len} > path_mtu) begin
      ret_o            = RetFragNeeded;
      params_o[63:48] = path_mtu[15:0];
    end else begin
      params_o[127:96] = best_metric;
      params_o[95:64]  = best_oif;
      // write_addr of the gateway writes as many bytes as its family has; without one the destination stays
      if (best_gw_valid) begin
        if (best_gw_v6) params_o[383:256] = best_gw;
        else params_o[287:256] = best_gw[31:0];
      end
      if (!q_skip && !nb_found) begin
        ret_o = RetNoNeigh;
      end else begin
        if (!q_skip) begin
          params_o[511:464] = nb_mac;
          params_o[463:416] = eg_mac;
        end
        params_o[415:384] = '0;
        params_o[63:48]   = path_mtu[15:0];  // mtu_result is 16 bits: the loopback device's IPv6 65536 reads as 0
      end
    end
  end

  // Bits of the table the lookup does not read (padding of the entries), and the high halves of the arguments.
  logic unused;
  assign unused = ^{host_addr_i[2:0], plen_i[63:32], flags_i[63:32], flags_i[0], flags_i[5:3], best_flags[7:4],
                    best_flags[1:0], eg_mtu};

endmodule
