`default_nettype none
// bpf_fib_lookup (helper 69) in hardware: crates/xdp/src/fib.rs's RouteTable::lookup over flip-flop tables.
//
// Tables (written at configuration time through tbl_*, before any lookup; writes during a lookup are not allowed):
// - tbl_we_i appends one entry of kind tbl_kind_i to its table, in the order of the reference's lists (the order
//   breaks ties exactly as the reference's first-found / min_by_key does):
//   - 0 device:    tbl_ifindex_i, tbl_mac_i, tbl_mtu_i;
//   - 1 route:     tbl_v6_i (family of the prefix), tbl_addr_i (prefix), tbl_len_i (prefix length, any 0-255: the
//                  match uses min(len, 32 or 128) bits, the ordering and the loopback check the raw length, as the
//                  reference does), tbl_type_i (0 unicast, 1 blackhole, 2 unreachable, 3 prohibit), tbl_metric_i
//                  (as given: an IPv6 metric 0 becomes 1024 here, Route::effective_metric), and for unicast routes
//                  tbl_ifindex_i (out device), tbl_gw_valid_i, tbl_gw_v6_i (family of the gateway), tbl_gw_i;
//   - 2 neighbour: tbl_v6_i (family of the address), tbl_addr_i, tbl_ifindex_i (device), tbl_mac_i;
//   - 3: refused (sets tbl_error_o).
//   Addresses are in the struct's byte order: the first byte on the wire in bits 7:0, an IPv4 address in bits 31:0
//   (bits 127:32 ignored); MACs likewise (byte 0 in bits 7:0).
// - A write to a full table (more than DEVICES, ROUTES or NEIGHBORS entries) or of kind 3 is dropped and sets
//   tbl_error_o, which stays high until tbl_clear_i (or reset): lookups would then answer from a partial table, so the
//   loader must refuse to run. tbl_clear_i empties every table (a write in the same cycle is dropped).
// - The loopback device (ifindex 1, MAC zero, MTU 65536) and the kernel's loopback local routes (127.0.0.0/8,
//   127.0.0.1, 127.255.255.255) are built in; a listed device of ifindex 1 takes precedence as egress, as in fib.rs.
//
// Lookups: req_params_i is the 64-byte struct bpf_fib_lookup (byte 0 in bits 7:0), req_flags_i the helper's flags.
// The caller (helpers.sv) has already done fib::check_call (plen, unknown flags -> -EINVAL) and refused the flags the
// model does not implement (SRC, TBID, MARK); here BPF_FIB_LOOKUP_OUTPUT (2) and SKIP_NEIGH (4) act, DIRECT (1) and
// every other bit are ignored. A request is taken when req_valid_i and req_ready_o are high (one at a time); for a
// request taken in cycle t, rsp_valid_o pulses in cycle t + 5 with rsp_ret_o (the helper's 64-bit return value:
// 0 SUCCESS, 1 BLACKHOLE, 2 UNREACHABLE, 3 PROHIBIT, 4 NOT_FWDED, 7 NO_NEIGH, 8 FRAG_NEEDED, -19 ENODEV,
// -97 EAFNOSUPPORT) and rsp_params_o (the whole struct as the helper writes it back; the reference writes all 64
// bytes back whatever the answer). Both hold until the next response. req_ready_o is high in t + 5 again.
//
// Stages (the request is held in p_q/f_q until the next one; each stage registers a few fields):
// 1. every route compared with the destination in parallel (IPv4 OUTPUT skipping unicast routes through other
//    devices), and the first levels of a tree picking the longest prefix, then the lowest metric (comparisons of
//    {match, length, ~metric}, the lower index winning ties);
// 2. the rest of the tree; family (-EAFNOSUPPORT), IPv6 strict addresses (rt6_need_strict: multicast ff00::/8,
//    link-local fe80::/10, ::1 as source or destination -> NOT_FWDED), ingress device (-ENODEV), the loopback local
//    routes, no route -> NOT_FWDED;
// 3. the route's kind (BLACKHOLE, UNREACHABLE, PROHIBIT), its egress device (unknown -> NOT_FWDED), the path MTU
//    (IPv4 min(mtu, 65535); IPv6 clamp(mtu, 1280, 65575)), tot_len above it -> FRAG_NEEDED with mtu_result;
// 4. the neighbour of the next hop (gateway, else the destination; IPv4 through the loopback device: 0.0.0.0) on the
//    egress device unless SKIP_NEIGH -> NO_NEIGH (rt_metric, ifindex and the gateway written), else SUCCESS with
//    dmac/smac, VLAN fields zero and mtu_result.
//
// Yosys 0.23 synth_xilinx -family xcup at the defaults: about 26.8k LUTs, 20.4k FFs, 12.7k MUXF7/8/9, 138 CARRY4, no
// RAM (80 CPU s). The route table is three quarters of the flip-flops (each route's prefix, mask and gateway are 128
// bits) and most of the logic (its 32 masked 128-bit compares, the selection tree, the route field multiplexer).
module fib #(
  parameter integer ROUTES    = 32,  // routes (fib_forward's table has 20)
  parameter integer DEVICES   = 4,   // devices besides the built-in loopback device
  parameter integer NEIGHBORS = 16   // resolved neighbours
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  // table port (configuration time)
  input  logic         tbl_clear_i,
  input  logic         tbl_we_i,
  input  logic [1:0]   tbl_kind_i,
  input  logic [31:0]  tbl_ifindex_i,
  input  logic [47:0]  tbl_mac_i,
  input  logic [31:0]  tbl_mtu_i,
  input  logic         tbl_v6_i,
  input  logic [127:0] tbl_addr_i,
  input  logic [7:0]   tbl_len_i,
  input  logic [1:0]   tbl_type_i,
  input  logic [31:0]  tbl_metric_i,
  input  logic         tbl_gw_valid_i,
  input  logic         tbl_gw_v6_i,
  input  logic [127:0] tbl_gw_i,
  output logic         tbl_error_o,
  // lookups
  input  logic         req_valid_i,
  output logic         req_ready_o,
  input  logic [511:0] req_params_i,
  input  logic [31:0]  req_flags_i,
  output logic         rsp_valid_o,
  output logic [63:0]  rsp_ret_o,
  output logic [511:0] rsp_params_o
);

  localparam integer RW = (ROUTES > 1) ? $clog2(ROUTES) : 1;  // route index width
  localparam integer RL = 1 << RW;                            // leaves of the selection tree
  localparam integer KW = 41;                                 // tree key: {match, length, ~metric}
  localparam integer MID = RL >> (RW / 2);                    // tree nodes registered between stages 1 and 2
  localparam integer RCW = $clog2(ROUTES + 1);
  localparam integer DCW = $clog2(DEVICES + 1);
  localparam integer NCW = $clog2(NEIGHBORS + 1);

  localparam [1:0] KindDevice   = 2'd0;
  localparam [1:0] KindRoute    = 2'd1;
  localparam [1:0] KindNeighbor = 2'd2;
  localparam [1:0] TypeUnicast  = 2'd0;

  localparam [63:0] RetSuccess      = 64'd0;
  localparam [63:0] RetNotFwded     = 64'd4;
  localparam [63:0] RetNoNeigh      = 64'd7;
  localparam [63:0] RetFragNeeded   = 64'd8;
  localparam [63:0] RetEnodev       = 64'hffff_ffff_ffff_ffed;  // -19
  localparam [63:0] RetEafnosupport = 64'hffff_ffff_ffff_ff9f;  // -97

  localparam [31:0] Loopback    = 32'd1;
  localparam [31:0] LoopbackMtu = 32'd65536;
  localparam [31:0] FlagOutput  = 32'd2;
  localparam [31:0] FlagSkip    = 32'd4;

  // ---------------------------------------------------------------------------------------------------------------
  // Tables, flattened: entry i of a field of W bits is at [W*i +: W].

  logic [DEVICES-1:0]      d_valid_q;
  logic [DEVICES*32-1:0]   d_ifx_q;
  logic [DEVICES*48-1:0]   d_mac_q;
  logic [DEVICES*32-1:0]   d_mtu_q;
  logic [DCW-1:0]          d_count_q;

  logic [ROUTES-1:0]       r_valid_q;
  logic [ROUTES-1:0]       r_v6_q;
  logic [ROUTES*128-1:0]   r_prefix_q;   // prefix & mask
  logic [ROUTES*128-1:0]   r_mask_q;     // the min(len, 32 or 128) leading bits in network order
  logic [ROUTES*8-1:0]     r_len_q;
  logic [ROUTES*2-1:0]     r_type_q;
  logic [ROUTES*32-1:0]    r_metric_q;   // effective metric
  logic [ROUTES*32-1:0]    r_oif_q;
  logic [ROUTES-1:0]       r_gw_valid_q;
  logic [ROUTES-1:0]       r_gw_v6_q;
  logic [ROUTES*128-1:0]   r_gw_q;       // IPv4 gateways zero-extended
  logic [RCW-1:0]          r_count_q;

  logic [NEIGHBORS-1:0]    n_valid_q;
  logic [NEIGHBORS-1:0]    n_v6_q;
  logic [NEIGHBORS*128-1:0] n_ip_q;      // IPv4 addresses zero-extended
  logic [NEIGHBORS*32-1:0] n_ifx_q;
  logic [NEIGHBORS*48-1:0] n_mac_q;
  logic [NCW-1:0]          n_count_q;

  logic                    tbl_error_q;

  // An address as stored: IPv4 zero-extended.
  function automatic logic [127:0] addr_of(input logic v6, input logic [127:0] a);
    addr_of = v6 ? a : {96'd0, a[31:0]};
  endfunction

  // The mask of a prefix: bit 8*j + i (byte j, bit i) is network-order bit 8*j + 7 - i.
  logic [127:0] w_mask;
  logic [8:0]   w_len;
  always_comb begin
    w_len = {1'b0, tbl_len_i};
    if (tbl_v6_i) begin
      if (w_len > 9'd128) w_len = 9'd128;
    end else begin
      if (w_len > 9'd32) w_len = 9'd32;
    end
    for (integer b = 0; b < 128; b = b + 1) begin
      w_mask[b] = 9'((b / 8) * 8 + 7 - (b % 8)) < w_len;
    end
  end

  logic [31:0] w_metric;
  assign w_metric = (tbl_v6_i && tbl_metric_i == 32'd0) ? 32'd1024 : tbl_metric_i;

  logic w_dev;
  logic w_route;
  logic w_neigh;
  logic w_full;
  assign w_dev   = tbl_we_i && !tbl_clear_i && tbl_kind_i == KindDevice;
  assign w_route = tbl_we_i && !tbl_clear_i && tbl_kind_i == KindRoute;
  assign w_neigh = tbl_we_i && !tbl_clear_i && tbl_kind_i == KindNeighbor;
  assign w_full  = (w_dev && 32'(d_count_q) >= DEVICES) || (w_route && 32'(r_count_q) >= ROUTES)
                || (w_neigh && 32'(n_count_q) >= NEIGHBORS);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      d_valid_q   <= '0;
      r_valid_q   <= '0;
      n_valid_q   <= '0;
      d_count_q   <= '0;
      r_count_q   <= '0;
      n_count_q   <= '0;
      tbl_error_q <= 1'b0;
    end else if (tbl_clear_i) begin
      d_valid_q   <= '0;
      r_valid_q   <= '0;
      n_valid_q   <= '0;
      d_count_q   <= '0;
      r_count_q   <= '0;
      n_count_q   <= '0;
      tbl_error_q <= 1'b0;
    end else if (tbl_we_i) begin
      if (w_full || tbl_kind_i == 2'd3) tbl_error_q <= 1'b1;
      for (integer i = 0; i < DEVICES; i = i + 1) begin
        if (w_dev && 32'(d_count_q) == i) d_valid_q[i] <= 1'b1;
      end
      for (integer i = 0; i < ROUTES; i = i + 1) begin
        if (w_route && 32'(r_count_q) == i) r_valid_q[i] <= 1'b1;
      end
      for (integer i = 0; i < NEIGHBORS; i = i + 1) begin
        if (w_neigh && 32'(n_count_q) == i) n_valid_q[i] <= 1'b1;
      end
      if (w_dev && !w_full) d_count_q <= d_count_q + 1'b1;
      if (w_route && !w_full) r_count_q <= r_count_q + 1'b1;
      if (w_neigh && !w_full) n_count_q <= n_count_q + 1'b1;
    end
  end

  // Entry contents (no reset: the valid bits say which entries exist).
  always_ff @(posedge clk_i) begin
    for (integer i = 0; i < DEVICES; i = i + 1) begin
      if (w_dev && 32'(d_count_q) == i) begin
        d_ifx_q[32*i +: 32] <= tbl_ifindex_i;
        d_mac_q[48*i +: 48] <= tbl_mac_i;
        d_mtu_q[32*i +: 32] <= tbl_mtu_i;
      end
    end
    for (integer i = 0; i < ROUTES; i = i + 1) begin
      if (w_route && 32'(r_count_q) == i) begin
        r_v6_q[i]              <= tbl_v6_i;
        r_prefix_q[128*i +: 128] <= tbl_addr_i & w_mask;
        r_mask_q[128*i +: 128] <= w_mask;
        r_len_q[8*i +: 8]      <= tbl_len_i;
        r_type_q[2*i +: 2]     <= tbl_type_i;
        r_metric_q[32*i +: 32] <= w_metric;
        r_oif_q[32*i +: 32]    <= tbl_ifindex_i;
        r_gw_valid_q[i]        <= tbl_gw_valid_i;
        r_gw_v6_q[i]           <= tbl_gw_v6_i;
        r_gw_q[128*i +: 128]   <= addr_of(tbl_gw_v6_i, tbl_gw_i);
      end
    end
    for (integer i = 0; i < NEIGHBORS; i = i + 1) begin
      if (w_neigh && 32'(n_count_q) == i) begin
        n_v6_q[i]            <= tbl_v6_i;
        n_ip_q[128*i +: 128] <= addr_of(tbl_v6_i, tbl_addr_i);
        n_ifx_q[32*i +: 32]  <= tbl_ifindex_i;
        n_mac_q[48*i +: 48]  <= tbl_mac_i;
      end
    end
  end

  assign tbl_error_o = tbl_error_q;

  // ---------------------------------------------------------------------------------------------------------------
  // The request, held until the next one, and the stage sequence.

  logic [511:0] p_q;
  logic [31:0]  f_q;
  logic [4:0]   st_q;  // one-hot: stage 1, 2, 3, 4 running, response
  logic         busy;
  assign busy        = |st_q[3:0];
  assign req_ready_o = !busy;

  // Fields of the request (offsets in struct bpf_fib_lookup).
  logic [7:0]   q_family;
  logic [15:0]  q_tot_len;
  logic [31:0]  q_ifindex;
  logic [127:0] q_src;
  logic [127:0] q_dst;
  logic         q_v4;
  logic         q_v6;
  logic         q_output;
  logic         q_skip;
  assign q_family  = p_q[7:0];
  assign q_tot_len = p_q[63:48];
  assign q_ifindex = p_q[95:64];
  assign q_src     = p_q[255:128];
  assign q_dst     = p_q[383:256];
  assign q_v4      = q_family == 8'd2;
  assign q_v6      = q_family == 8'd10;
  assign q_output  = (f_q & FlagOutput) != 0;
  assign q_skip    = (f_q & FlagSkip) != 0;

  // ---------------------------------------------------------------------------------------------------------------
  // Stages 1 and 2: checks before the route, and the route.

  // rt6_need_strict: multicast, link-local unicast, loopback.
  function automatic logic strict_v6(input logic [127:0] a);
    strict_v6 = a[7:0] == 8'hff || (a[7:0] == 8'hfe && a[15:14] == 2'b10) || a == {8'h01, 120'd0};
  endfunction

  logic ingress_ok;
  always_comb begin
    ingress_ok = q_ifindex == Loopback;
    for (integer i = 0; i < DEVICES; i = i + 1) begin
      if (d_valid_q[i] && d_ifx_q[32*i +: 32] == q_ifindex) ingress_ok = 1'b1;
    end
  end

  logic [ROUTES-1:0] cand;
  always_comb begin
    for (integer i = 0; i < ROUTES; i = i + 1) begin
      cand[i] = r_valid_q[i] && r_v6_q[i] == q_v6 && (q_dst & r_mask_q[128*i +: 128]) == r_prefix_q[128*i +: 128]
             && !(!q_v6 && q_output && r_type_q[2*i +: 2] == TypeUnicast && r_oif_q[32*i +: 32] != q_ifindex);
    end
  end

  // The selection tree, in heap order: node k at [KW*k +: KW] (k = 1 the root, RL + i the leaf of route i), each node
  // the better of its two children, the left (lower index) winning ties. Stage 1 computes the levels down to the MID
  // nodes MID..2*MID-1 and registers them; stage 2 finishes the tree from those (a 32-route tree is 5 levels of 41-bit compares: 2 + 3).
  logic [2*RL*KW-1:0] t_key;
  logic [2*RL*RW-1:0] t_idx;
  always_comb begin
    t_key = '0;
    t_idx = '0;
    for (integer i = 0; i < ROUTES; i = i + 1) begin
      if (cand[i]) t_key[KW*(RL+i) +: KW] = {1'b1, r_len_q[8*i +: 8], ~r_metric_q[32*i +: 32]};
    end
    for (integer i = 0; i < RL; i = i + 1) begin
      t_idx[RW*(RL+i) +: RW] = RW'(i);
    end
    for (integer k = RL - 1; k >= MID; k = k - 1) begin
      if (t_key[KW*(2*k) +: KW] >= t_key[KW*(2*k+1) +: KW]) begin
        t_key[KW*k +: KW] = t_key[KW*(2*k) +: KW];
        t_idx[RW*k +: RW] = t_idx[RW*(2*k) +: RW];
      end else begin
        t_key[KW*k +: KW] = t_key[KW*(2*k+1) +: KW];
        t_idx[RW*k +: RW] = t_idx[RW*(2*k+1) +: RW];
      end
    end
  end

  logic [MID*KW-1:0] mid_key_q;  // nodes MID..2*MID-1
  logic [MID*RW-1:0] mid_idx_q;

  logic [2*MID*KW-1:0] u_key;
  logic [2*MID*RW-1:0] u_idx;
  always_comb begin
    u_key = '0;
    u_idx = '0;
    u_key[KW*MID +: KW*MID] = mid_key_q;
    u_idx[RW*MID +: RW*MID] = mid_idx_q;
    for (integer k = MID - 1; k >= 1; k = k - 1) begin
      if (u_key[KW*(2*k) +: KW] >= u_key[KW*(2*k+1) +: KW]) begin
        u_key[KW*k +: KW] = u_key[KW*(2*k) +: KW];
        u_idx[RW*k +: RW] = u_idx[RW*(2*k) +: RW];
      end else begin
        u_key[KW*k +: KW] = u_key[KW*(2*k+1) +: KW];
        u_idx[RW*k +: RW] = u_idx[RW*(2*k+1) +: RW];
      end
    end
  end

  logic          best_valid;
  logic [7:0]    best_len;
  logic [RW-1:0] best_idx;
  assign best_valid = u_key[KW*2-1];
  assign best_len   = u_key[KW*1+32 +: 8];
  assign best_idx   = u_idx[RW*1 +: RW];

  // The kernel's local and broadcast routes of the loopback device, unless OUTPUT names another device.
  logic       lo_local;
  logic [7:0] lo_len;
  assign lo_local = q_v4 && (!q_output || q_ifindex == Loopback) && q_dst[7:0] == 8'd127;
  assign lo_len   = (q_dst[31:0] == 32'hffff_ff7f || q_dst[31:0] == 32'h0100_007f) ? 8'd32 : 8'd8;

  logic        s1_done;
  logic [63:0] s1_ret;
  always_comb begin
    s1_done = 1'b1;
    s1_ret  = RetNotFwded;
    if (!q_v4 && !q_v6) begin
      s1_ret = RetEafnosupport;
    end else if (q_v6 && (strict_v6(q_dst) || strict_v6(q_src))) begin
      s1_ret = RetNotFwded;
    end else if (!ingress_ok) begin
      s1_ret = RetEnodev;
    end else if (lo_local && (!best_valid || best_len <= lo_len)) begin
      s1_ret = RetNotFwded;
    end else if (!best_valid) begin
      s1_ret = RetNotFwded;
    end else begin
      s1_done = 1'b0;
    end
  end

  logic          s1_done_q;
  logic [63:0]   s1_ret_q;
  logic [RW-1:0] s1_idx_q;

  // ---------------------------------------------------------------------------------------------------------------
  // Stage 3: the route's kind, the egress device, the MTU.

  logic [1:0]   sel_type;
  logic [31:0]  sel_oif;
  logic [31:0]  sel_metric;
  logic         sel_gw_valid;
  logic         sel_gw_v6;
  logic [127:0] sel_gw;
  always_comb begin
    sel_type     = '0;
    sel_oif      = '0;
    sel_metric   = '0;
    sel_gw_valid = 1'b0;
    sel_gw_v6    = 1'b0;
    sel_gw       = '0;
    for (integer i = 0; i < ROUTES; i = i + 1) begin
      if (s1_idx_q == RW'(i)) begin
        sel_type     = r_type_q[2*i +: 2];
        sel_oif      = r_oif_q[32*i +: 32];
        sel_metric   = r_metric_q[32*i +: 32];
        sel_gw_valid = r_gw_valid_q[i];
        sel_gw_v6    = r_gw_v6_q[i];
        sel_gw       = r_gw_q[128*i +: 128];
      end
    end
  end

  // The first listed device of that ifindex, else the built-in loopback device.
  logic        eg_found;
  logic [47:0] eg_mac;
  logic [31:0] eg_mtu;
  always_comb begin
    eg_found = sel_oif == Loopback;
    eg_mac   = '0;
    eg_mtu   = LoopbackMtu;
    for (integer i = DEVICES - 1; i >= 0; i = i - 1) begin
      if (d_valid_q[i] && d_ifx_q[32*i +: 32] == sel_oif) begin
        eg_found = 1'b1;
        eg_mac   = d_mac_q[48*i +: 48];
        eg_mtu   = d_mtu_q[32*i +: 32];
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

  logic        s2_done;
  logic [63:0] s2_ret;
  logic        s2_frag;
  always_comb begin
    s2_done = 1'b1;
    s2_ret  = s1_ret_q;
    s2_frag = 1'b0;
    if (s1_done_q) begin
      s2_ret = s1_ret_q;
    end else if (sel_type != TypeUnicast) begin
      s2_ret = {62'd0, sel_type};  // BLACKHOLE 1, UNREACHABLE 2, PROHIBIT 3
    end else if (!eg_found) begin
      s2_ret = RetNotFwded;
    end else if ({16'd0, q_tot_len} > path_mtu) begin
      s2_ret  = RetFragNeeded;
      s2_frag = 1'b1;
    end else begin
      s2_done = 1'b0;
    end
  end

  // The neighbour key: the next hop (gateway, else the destination), 0.0.0.0 for IPv4 through the loopback device.
  logic         key_v6;
  logic [127:0] key_ip;
  always_comb begin
    if (q_v4 && sel_oif == Loopback) begin
      key_v6 = 1'b0;
      key_ip = '0;
    end else if (sel_gw_valid) begin
      key_v6 = sel_gw_v6;
      key_ip = sel_gw;
    end else begin
      key_v6 = q_v6;
      key_ip = addr_of(q_v6, q_dst);
    end
  end

  logic         s2_done_q;
  logic [63:0]  s2_ret_q;
  logic         s2_frag_q;
  logic [15:0]  s2_mtu_q;
  logic [31:0]  s2_metric_q;
  logic [31:0]  s2_oif_q;
  logic         s2_gw_valid_q;
  logic         s2_gw_v6_q;
  logic [127:0] s2_gw_q;
  logic [47:0]  s2_smac_q;
  logic         s2_key_v6_q;
  logic [127:0] s2_key_q;

  // ---------------------------------------------------------------------------------------------------------------
  // Stage 4: the neighbour and the struct written back.

  logic        nb_found;
  logic [47:0] nb_mac;
  always_comb begin
    nb_found = 1'b0;
    nb_mac   = '0;
    for (integer i = NEIGHBORS - 1; i >= 0; i = i - 1) begin
      if (n_valid_q[i] && n_v6_q[i] == s2_key_v6_q && n_ip_q[128*i +: 128] == s2_key_q
          && n_ifx_q[32*i +: 32] == s2_oif_q) begin
        nb_found = 1'b1;
        nb_mac   = n_mac_q[48*i +: 48];
      end
    end
  end

  logic [63:0]  s3_ret;
  logic [511:0] s3_params;
  always_comb begin
    s3_params = p_q;
    s3_ret    = RetSuccess;
    if (s2_done_q) begin
      s3_ret = s2_ret_q;
      if (s2_frag_q) s3_params[63:48] = s2_mtu_q;
    end else begin
      s3_params[127:96] = s2_metric_q;
      s3_params[95:64]  = s2_oif_q;
      // write_addr of the gateway writes as many bytes as the gateway's family has; the destination itself is
      // written back unchanged
      if (s2_gw_valid_q) begin
        if (s2_gw_v6_q) s3_params[383:256] = s2_gw_q;
        else s3_params[287:256] = s2_gw_q[31:0];
      end
      if (!q_skip && !nb_found) begin
        s3_ret = RetNoNeigh;
      end else begin
        if (!q_skip) begin
          s3_params[511:464] = nb_mac;
          s3_params[463:416] = s2_smac_q;
        end
        s3_params[415:384] = '0;
        s3_params[63:48]   = s2_mtu_q;
      end
    end
  end

  logic [63:0]  rsp_ret_q;
  logic [511:0] rsp_params_q;

  // ---------------------------------------------------------------------------------------------------------------
  // Registers.

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q <= '0;
    end else begin
      st_q <= {st_q[3:0], req_valid_i && !busy};
    end
  end

  always_ff @(posedge clk_i) begin
    if (req_valid_i && !busy) begin
      p_q <= req_params_i;
      f_q <= req_flags_i;
    end
    if (st_q[0]) begin
      mid_key_q <= t_key[KW*MID +: KW*MID];
      mid_idx_q <= t_idx[RW*MID +: RW*MID];
    end
    if (st_q[1]) begin
      s1_done_q <= s1_done;
      s1_ret_q  <= s1_ret;
      s1_idx_q  <= best_idx;
    end
    if (st_q[2]) begin
      s2_done_q     <= s2_done;
      s2_ret_q      <= s2_ret;
      s2_frag_q     <= s2_frag;
      s2_mtu_q      <= path_mtu[15:0];  // mtu_result is 16 bits: the loopback device's IPv6 65536 reads as 0
      s2_metric_q   <= sel_metric;
      s2_oif_q      <= sel_oif;
      s2_gw_valid_q <= sel_gw_valid;
      s2_gw_v6_q    <= sel_gw_v6;
      s2_gw_q       <= sel_gw;
      s2_smac_q     <= eg_mac;
      s2_key_v6_q   <= key_v6;
      s2_key_q      <= key_ip;
    end
    if (st_q[3]) begin
      rsp_ret_q    <= s3_ret;
      rsp_params_q <= s3_params;
    end
  end

  assign rsp_valid_o  = st_q[4];
  assign rsp_ret_o    = rsp_ret_q;
  assign rsp_params_o = rsp_params_q;

endmodule
