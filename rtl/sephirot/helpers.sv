`default_nettype none
// hXDP helper module: serves Sephirot's helper bus with the reference machine's helpers (crates/xdp/src/helpers.rs).
//
// Helper bus: hcall_i is high for one cycle with hcall_id_i and hcall_args_i (r1..r5, r1 in bits 63:0). The answer
// is one hret_valid_o pulse with hret_o (r0), hret_fault_o (the reference machine faults: the core ends the packet
// with XDP_ABORTED), hret_tail_o and hret_entry_o (a successful bpf_tail_call: continue at that bundle). Helpers
// without memory traffic answer in the cycle after hcall_i (the model's HELPER_CYCLES = 1).
//
// Memory port (mem_*): one access per cycle, the data-bus shape: mem_req_o with mem_we_o, mem_addr_o (region-tagged:
// 2 packet, 3 stack, 4 map value), mem_bytes_o (1, 2, 4 or 8), mem_wdata_o (low bytes); mem_rdata_i (bytes from bit
// 0) and mem_fault_i answer in the next cycle. A faulting write must not change memory. Tag-2 accesses are checked
// here against data_meta_i..data_end_i and never issued outside; any other tag than 2, 3, 4 faults without an access.
// A tag-2 read whose last byte is at or beyond pkt_ready_i waits (the APS is still storing the packet's frames).
// Buffers are moved in chunks of 8 bytes, then 4, 2, 1 for the rest; reads are pipelined one per cycle, copies take
// two cycles per chunk (read, then write). A range is known to lie wholly inside its region once its first chunk and
// its last byte have been accessed (regions are intervals and no length reaches 64 KiB), so a copy first reads the
// byte of its source or destination that the copy reaches last: nothing is written when the reference faults.
//
// Helpers (r0 and faults as the reference machine's; "fault" = hret_fault_o):
// - 1, 2, 3 map lookup/update/delete: the map handle (tag 5, a configured map, else fault), the key (key_size bytes)
//   and for 2 the value (value_size bytes) read into registers (fault outside their regions), then one request on
//   mreq_* (maps.sv req_*; op 0 lookup, 1 update with flags r4, 2 delete). r0: lookup hit -> region::map_value(map,
//   slot, 0), miss -> 0; update/delete -> mrsp_ret_i.
// - 5 bpf_ktime_get_ns: time_ns_i + cycles_i as sampled with hcall_i (the model passes its cycle count).
// - 23 bpf_redirect: flags r2 != 0 -> XDP_ABORTED (0); else records (ifindex r1[31:0]) -> XDP_REDIRECT (4).
// - 28 bpf_csum_diff: -EINVAL unless both sizes (u32) are multiples of 4 summing to at most 512; x86-64
//   csum_partial of `to` (seeded) minus that of `from`, folded to 16 bits (the kernel's 6.12+ result).
// - 44, 54, 65 adjust head/meta/tail: one adj_valid_o pulse with adj_kind_o (0 head, 1 tail, 2 meta) and
//   adj_delta_o = r2[31:0] (signed); r0 = adj_ret_i with the adj_done_i pulse (the APS checks and moves, as XdpBuff).
// - 93, 94 spin lock/unlock: r1 must be a map value whose 4 bytes are readable, else fault; r0 = 0.
// - 188 bpf_xdp_get_buff_len: data_end_i - data_i.
// - 189, 190 bpf_xdp_load_bytes/store_bytes: -EFAULT when off or len (u32) exceed 0xffff, -EINVAL past data_end,
//   else the copy (packet -> r3, or r3 -> packet; backward when the destination lies above the source, as memmove)
//   and 0. A 0-byte load still checks r3 (the byte at r3 or the one before it must be readable).
// - anything else: fault.
//
// Outcome record (cleared by start_i, the APS's new packet): redirect_valid_o, redirect_by_map_o, redirect_map_o,
// redirect_key_o, as the reference's Outcome::redirect (the last bpf_redirect/bpf_redirect_map that redirected).
//
// The maps configuration port (cfg_*, as maps.sv's) is watched for each map's type, key_size and value_size; a map
// never written does not exist (its handle faults, as the reference's map_arg).
module helpers #(
  parameter integer MAPS        = 8,    // maps.sv MAPS
  parameter integer KEY_BYTES   = 16,   // maps.sv KEY_BYTES (here a multiple of 8)
  parameter integer VALUE_BYTES = 64    // maps.sv VALUE_BYTES (a multiple of 8)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     start_i,        // a new packet: clears the outcome record
  input  logic [63:0]              time_ns_i,      // the packet's timestamp
  input  logic [31:0]              cycles_i,       // the core's run_cycles_o
  // helper bus (from the core)
  input  logic                     hcall_i,
  input  logic [31:0]              hcall_id_i,
  input  logic [5*64-1:0]          hcall_args_i,
  output logic                     hret_valid_o,
  output logic [63:0]              hret_o,
  output logic                     hret_fault_o,
  output logic                     hret_tail_o,
  output logic [15:0]              hret_entry_o,
  // memory (tag 3 -> the core's hmem_*, tags 2 and 4 -> the APS's lane-0 path)
  output logic                     mem_req_o,
  output logic                     mem_we_o,
  output logic [63:0]              mem_addr_o,
  output logic [3:0]               mem_bytes_o,
  output logic [63:0]              mem_wdata_o,
  input  logic [63:0]              mem_rdata_i,
  input  logic                     mem_fault_i,
  // the packet's current page offsets
  input  logic [12:0]              data_meta_i,
  input  logic [12:0]              data_i,
  input  logic [12:0]              data_end_i,
  input  logic [12:0]              pkt_ready_i,    // page offsets below this hold the packet's stored bytes
  // maps configuration (watched)
  input  logic                     cfg_we_i,
  input  logic [7:0]               cfg_map_i,
  input  logic [31:0]              cfg_type_i,
  input  logic [31:0]              cfg_key_size_i,
  input  logic [31:0]              cfg_value_size_i,
  // maps requests (maps.sv req_* / rsp_*)
  output logic                     mreq_valid_o,
  input  logic                     mreq_ready_i,
  output logic [1:0]               mreq_op_o,
  output logic [7:0]               mreq_map_o,
  output logic [8*KEY_BYTES-1:0]   mreq_key_o,
  output logic [8*VALUE_BYTES-1:0] mreq_value_o,
  output logic [63:0]              mreq_flags_o,
  input  logic                     mrsp_valid_i,
  input  logic [63:0]              mrsp_ret_i,
  input  logic                     mrsp_hit_i,
  input  logic [27:0]              mrsp_slot_i,
  // APS adjust port
  output logic                     adj_valid_o,
  output logic [1:0]               adj_kind_o,
  output logic [31:0]              adj_delta_o,
  input  logic                     adj_done_i,
  input  logic [63:0]              adj_ret_i,
  // outcome record
  output logic                     redirect_valid_o,
  output logic                     redirect_by_map_o,
  output logic [7:0]               redirect_map_o,
  output logic [63:0]              redirect_key_o
);

  localparam integer KW = KEY_BYTES / 8;          // key register words
  localparam integer VW = VALUE_BYTES / 8;        // value register words
  localparam integer LW = 17;                     // lengths: up to 0x10000

  localparam [63:0] Efault = 64'hffff_ffff_ffff_fff2;  // -14
  localparam [63:0] Einval = 64'hffff_ffff_ffff_ffea;  // -22

  // States: idle, the memory passes, the maps request, the adjust request.
  localparam [3:0] StIdle   = 4'd0;
  localparam [3:0] StKey    = 4'd2;   // key -> key register
  localparam [3:0] StVal    = 4'd3;   // value -> value register
  localparam [3:0] StMreq   = 4'd4;   // maps request offered
  localparam [3:0] StMrsp   = 4'd5;   // maps response awaited
  localparam [3:0] StCsumF  = 4'd6;   // csum_diff `from`
  localparam [3:0] StCsumT  = 4'd7;   // csum_diff `to`
  localparam [3:0] StProbe  = 4'd8;   // one read whose data is dropped (lock word, copy's far byte)
  localparam [3:0] StProbe0 = 4'd9;   // 0-byte load_bytes: the byte at r3 (else the one before, in StProbe)
  localparam [3:0] StCopy   = 4'd10;  // load_bytes/store_bytes copy
  localparam [3:0] StAdj    = 4'd11;  // adjust request out, waiting for adj_done_i
  localparam [3:0] StLbPrep = 4'd12;  // load/store_bytes: the copy's geometry from the registered call
  localparam [3:0] StCsumM  = 4'd13;  // csum_diff: `from` folded, `to` starts
  localparam [3:0] StCsumE  = 4'd14;  // csum_diff: the result from the registered sums

  // Engine modes.
  localparam [1:0] ModeRead = 2'd0;
  localparam [1:0] ModeCopy = 2'd1;

  // ---------------------------------------------------------------------------------------------------------------
  // Maps as configured: present, key and value sizes (saturated at 0x10000: no region holds that many bytes).

  logic [MAPS-1:0] mdef_q;
  logic [LW-1:0]   mks_q [MAPS];
  logic [LW-1:0]   mvs_q [MAPS];

  function automatic logic [LW-1:0] sat_len(input logic [31:0] v);
    sat_len = (v[31:16] != 16'd0) ? 17'h10000 : {1'b0, v[15:0]};
  endfunction

  integer m;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      mdef_q <= '0;
      for (m = 0; m < MAPS; m = m + 1) begin
        mks_q[m] <= '0;
        mvs_q[m] <= '0;
      end
    end else if (cfg_we_i) begin
      for (m = 0; m < MAPS; m = m + 1) begin
        if (cfg_map_i == m[7:0]) begin
          mdef_q[m] <= 1'b1;
          mks_q[m]  <= sat_len(cfg_key_size_i);
          mvs_q[m]  <= sat_len(cfg_value_size_i);
        end
      end
    end
  end

  // cfg_type_i matters for the phase-two helpers only (PROG_ARRAY, DEVMAP, RINGBUF checks).
  logic unused_cfg;
  assign unused_cfg = ^cfg_type_i;

  // ---------------------------------------------------------------------------------------------------------------
  // Call decode (combinational on the call's arguments).

  logic [63:0] c_a1, c_a2, c_a3, c_a4;
  logic [31:0] c_a5;                                   // only csum_diff's seed (u32) is used
  assign c_a1 = hcall_args_i[63:0];
  assign c_a2 = hcall_args_i[127:64];
  assign c_a3 = hcall_args_i[191:128];
  assign c_a4 = hcall_args_i[255:192];
  assign c_a5 = hcall_args_i[287:256];

  logic unused_args;
  assign unused_args = ^hcall_args_i[319:288];

  // r1 as a map handle: tag 5 and a configured map.
  logic            c_map_ok;
  logic [7:0]      c_map;
  logic [LW-1:0]   c_ks, c_vs;
  integer cm;
  always_comb begin
    c_map_ok = 1'b0;
    c_map    = c_a1[7:0];
    c_ks     = '0;
    c_vs     = '0;
    for (cm = 0; cm < MAPS; cm = cm + 1) begin
      if (c_a1[63:60] == 4'd5 && c_a1[59:8] == 52'd0 && c_a1[7:0] == cm[7:0] && mdef_q[cm]) begin
        c_map_ok = 1'b1;
        c_ks     = mks_q[cm];
        c_vs     = mvs_q[cm];
      end
    end
  end

  // csum_diff sizes (u32).
  logic [32:0] c_csum_total;
  logic        c_csum_bad;
  assign c_csum_total = {1'b0, c_a2[31:0]} + {1'b0, c_a4[31:0]};
  assign c_csum_bad   = (c_a2[1:0] != 2'd0) || (c_a4[1:0] != 2'd0) || (c_csum_total > 33'd512);

  // load/store_bytes: offset r2 and length r4 as u32.
  logic        c_lb_efault, c_lb_einval;
  logic [13:0] c_lb_room;
  logic [16:0] c_lb_need;
  assign c_lb_efault = (c_a2[31:16] != 16'd0) || (c_a4[31:16] != 16'd0);
  assign c_lb_room   = {1'b0, data_end_i} - {1'b0, data_i};
  assign c_lb_need   = {1'b0, c_a2[15:0]} + {1'b0, c_a4[15:0]};
  assign c_lb_einval = c_lb_need > {3'b0, c_lb_room};

  // ---------------------------------------------------------------------------------------------------------------
  // State

  logic [3:0]    st_q;
  logic [7:0]    id_q;           // the helper being served (ids above 255 fault at the call)
  logic [31:0]   a2_q;           // r2: csum from_size, adjust delta, load/store_bytes offset (all u32)
  logic [63:0]   a3_q, a4_q;
  logic [31:0]   a5_q;           // r5: csum seed
  logic [7:0]    map_q;
  logic [LW-1:0] vs_q;           // value_size of map_q (update)
  logic [1:0]    mop_q;          // maps request op
  logic [63:0]   key_q [KW];
  logic [63:0]   val_q [VW];
  logic [63:0]   cs_q;           // csum_partial accumulator
  logic [31:0]   cs_from_q;      // csum_partial of `from`, folded to 32 bits

  logic          hret_valid_q, hret_fault_q;
  logic [63:0]   hret_q;

  logic          rd_valid_q, rd_by_map_q;
  logic [7:0]    rd_map_q;
  logic [63:0]   rd_key_q;

  logic          adj_valid_q;
  logic [1:0]    adj_kind_q;

  // Memory engine: a pass over [base, base + len): reads (ModeRead) or a copy to dst (ModeCopy).
  logic [1:0]    e_mode_q;
  logic [63:0]   e_src_q;        // source base
  logic [63:0]   e_dst_q;        // copy destination base
  logic [LW-1:0] e_rem_q;        // bytes not yet read
  logic [LW-1:0] e_pos_q;        // forward: bytes read so far
  logic          e_back_q;       // copy backward (from the end)
  logic          e_wr_q;         // copy: a read's data arrives, its write goes out now
  logic          fl_q;           // an access issued last cycle answers now
  logic          fl_bad_q;       // ... refused here: it faults
  logic [LW-1:0] fl_pos_q;       // its position in the buffer
  logic [3:0]    fl_size_q;      // its bytes

  // ---------------------------------------------------------------------------------------------------------------
  // Engine datapath

  logic          e_on;           // a pass is running this cycle
  logic [3:0]    e_size;         // next read's bytes
  logic [LW-1:0] e_pos;          // next read's position
  logic [63:0]   e_rd_addr;
  logic [63:0]   e_wr_addr;
  logic [63:0]   e_rdata;        // the answer's bytes, the rest zero
  logic          e_fault;        // the answer due now faults
  logic          e_done;         // the pass ends this cycle without a fault
  logic          acc_req, acc_we, acc_ok, acc_wait;
  logic [63:0]   acc_addr, acc_wdata;
  logic [3:0]    acc_bytes;

  assign e_on = (st_q == StKey) || (st_q == StVal) || (st_q == StCsumF) || (st_q == StCsumT) ||
                (st_q == StProbe) || (st_q == StProbe0) || (st_q == StCopy);
  // StLbPrep, StCsumM start a pass (p_start) without running one.

  always_comb begin
    if (e_back_q) begin
      e_size = e_rem_q[0] ? 4'd1 : e_rem_q[1] ? 4'd2 : e_rem_q[2] ? 4'd4 : 4'd8;
      e_pos  = e_rem_q - {13'b0, e_size};
    end else begin
      e_size = (e_rem_q >= 17'd8) ? 4'd8 : (e_rem_q >= 17'd4) ? 4'd4 : (e_rem_q >= 17'd2) ? 4'd2 : 4'd1;
      e_pos  = e_pos_q;
    end
  end

  assign e_rd_addr = e_src_q + {47'b0, e_pos};
  assign e_wr_addr = e_dst_q + {47'b0, fl_pos_q};

  integer rb;
  always_comb begin
    for (rb = 0; rb < 8; rb = rb + 1) begin
      e_rdata[8*rb +: 8] = (rb[3:0] < fl_size_q) ? mem_rdata_i[8*rb +: 8] : 8'h00;
    end
  end

  assign e_fault = e_on && fl_q && (fl_bad_q || mem_fault_i);

  // The pass is over when nothing is left to read and no write is to go out; the answer due now (the last read's
  // data, or the last write's) is taken in this cycle.
  assign e_done = e_on && !e_fault && (e_rem_q == '0) && !e_wr_q;

  // The access of this cycle.
  always_comb begin
    acc_req   = 1'b0;
    acc_we    = 1'b0;
    acc_addr  = e_rd_addr;
    acc_bytes = e_size;
    acc_wdata = 64'd0;
    if (e_on && !e_fault) begin
      if (e_mode_q == ModeCopy && e_wr_q) begin
        acc_req   = 1'b1;
        acc_we    = 1'b1;
        acc_addr  = e_wr_addr;
        acc_bytes = fl_size_q;
        acc_wdata = e_rdata;
      end else if (e_rem_q != '0) begin
        acc_req = 1'b1;
      end
    end
  end

  // Region check: tags 2, 3, 4 only; packet accesses wholly inside data_meta..data_end.
  logic [13:0] acc_pkt_end;
  assign acc_pkt_end = {1'b0, acc_addr[12:0]} + {10'b0, acc_bytes};
  always_comb begin
    case (acc_addr[63:60])
      4'd2: acc_ok = (acc_addr[59:13] == '0) && (acc_addr[12:0] >= data_meta_i) &&
                     (acc_pkt_end <= {1'b0, data_end_i});
      4'd3, 4'd4: acc_ok = 1'b1;
      default: acc_ok = 1'b0;
    endcase
  end

  // a packet read of bytes not stored yet waits (reads of unstored frames give zeros)
  assign acc_wait    = acc_req && !acc_we && acc_ok && acc_addr[63:60] == 4'd2 && acc_pkt_end > {1'b0, pkt_ready_i};

  assign mem_req_o   = acc_req && acc_ok && !acc_wait;
  assign mem_we_o    = acc_we;
  assign mem_addr_o  = acc_addr;
  assign mem_bytes_o = acc_bytes;
  assign mem_wdata_o = acc_wdata;

  // ---------------------------------------------------------------------------------------------------------------
  // Checksum arithmetic

  // One's complement (end-around carry) additions.
  function automatic logic [63:0] add64c(input logic [63:0] a, input logic [63:0] b);
    logic [64:0] s;
    s = {1'b0, a} + {1'b0, b};
    add64c = s[63:0] + {63'b0, s[64]};
  endfunction

  function automatic logic [31:0] add32c(input logic [31:0] a, input logic [31:0] b);
    logic [32:0] s;
    s = {1'b0, a} + {1'b0, b};
    add32c = s[31:0] + {31'b0, s[32]};
  endfunction

  logic [31:0] cs_fold;        // csum_partial's result from the accumulator
  logic [31:0] cs_sum;         // the 32-bit partial sum csum_diff folds
  logic [31:0] cs_rot;
  logic [15:0] cs_result;
  assign cs_fold = add32c(cs_q[63:32], cs_q[31:0]);
  always_comb begin
    if (a2_q[31:0] == 32'd0 && a4_q[31:0] == 32'd0) cs_sum = a5_q[31:0];
    else if (a2_q[31:0] == 32'd0) cs_sum = cs_fold;
    else if (a4_q[31:0] == 32'd0) cs_sum = ~cs_from_q;
    else cs_sum = add32c(cs_fold, ~cs_from_q);
  end
  // csum_from32to16: the high half of sum + ror(sum, 16)
  assign cs_rot    = cs_sum + {cs_sum[15:0], cs_sum[31:16]};
  assign cs_result = cs_rot[31:16];
  logic unused_rot;
  assign unused_rot = ^cs_rot[15:0];

  // ---------------------------------------------------------------------------------------------------------------
  // Control

  // A pass starts: reads of len bytes at src (forward), or a copy.
  logic          p_start;
  logic [1:0]    p_mode;
  logic [63:0]   p_src, p_dst;
  logic [LW-1:0] p_len;
  logic          p_back;

  logic [3:0]    st_d;
  logic          reply;          // answer this cycle's decision next cycle
  logic [63:0]   reply_r0;
  logic          reply_fault;
  logic          rec_set;        // record a redirect
  logic          rec_by_map;
  logic [7:0]    rec_map;
  logic [63:0]   rec_key;
  logic          adj_go;
  logic [1:0]    adj_kind;
  logic          cs_init_to;     // StCsumM: keep the `from` sum, seed the accumulator

  // copy geometry for 189/190 (r2 offset in the packet, r3 the other buffer, r4 length)
  logic [63:0]   lb_pkt;
  logic [63:0]   lb_src, lb_dst;
  logic          lb_back;
  logic [63:0]   lb_far;
  assign lb_pkt  = {4'd2, 47'b0, data_i} + {48'b0, a2_q[15:0]};
  assign lb_src  = (id_q == 8'd189) ? lb_pkt : a3_q;
  assign lb_dst  = (id_q == 8'd189) ? a3_q : lb_pkt;
  assign lb_back = lb_dst > lb_src;
  // the byte of r3's range the copy reaches last
  assign lb_far  = lb_back ? a3_q : a3_q + {48'b0, a4_q[15:0]} - 64'd1;

  always_comb begin
    st_d        = st_q;
    reply       = 1'b0;
    reply_r0    = 64'd0;
    reply_fault = 1'b0;
    rec_set     = 1'b0;
    rec_by_map  = 1'b0;
    rec_map     = 8'd0;
    rec_key     = 64'd0;
    adj_go      = 1'b0;
    adj_kind    = 2'd0;
    p_start     = 1'b0;
    p_mode      = ModeRead;
    p_src       = 64'd0;
    p_dst       = 64'd0;
    p_len       = '0;
    p_back      = 1'b0;
    cs_init_to  = 1'b0;

    if (start_i) begin
      st_d = StIdle;                                       // a new packet: whatever ran is abandoned
    end else if (e_fault && st_q != StProbe0) begin
      reply       = 1'b1;
      reply_fault = 1'b1;
    end else begin
      case (st_q)
        StIdle: begin
          if (hcall_i) begin
            if (hcall_id_i[31:8] != 24'd0) begin
              reply       = 1'b1;
              reply_fault = 1'b1;
            end else begin
              case (hcall_id_i[7:0])
                8'd1, 8'd2, 8'd3: begin
                  if (!c_map_ok) begin
                    reply       = 1'b1;
                    reply_fault = 1'b1;
                  end else begin
                    st_d    = StKey;
                    p_start = 1'b1;
                    p_src   = c_a2;
                    p_len   = c_ks;
                  end
                end
                8'd5: begin
                  reply    = 1'b1;
                  reply_r0 = time_ns_i + {32'b0, cycles_i};
                end
                8'd23: begin
                  reply = 1'b1;
                  if (c_a2 != 64'd0) begin
                    reply_r0 = 64'd0;                      // XDP_ABORTED
                  end else begin
                    reply_r0 = 64'd4;                      // XDP_REDIRECT
                    rec_set  = 1'b1;
                    rec_key  = {32'b0, c_a1[31:0]};
                  end
                end
                8'd28: begin
                  if (c_csum_bad) begin
                    reply    = 1'b1;
                    reply_r0 = Einval;
                  end else begin
                    st_d    = StCsumF;
                    p_start = 1'b1;
                    p_src   = c_a1;
                    p_len   = c_a2[LW-1:0];
                  end
                end
                8'd44, 8'd54, 8'd65: begin
                  st_d     = StAdj;
                  adj_go   = 1'b1;
                  adj_kind = (hcall_id_i[7:0] == 8'd44) ? 2'd0 : (hcall_id_i[7:0] == 8'd65) ? 2'd1 : 2'd2;
                end
                8'd93, 8'd94: begin
                  if (c_a1[63:60] != 4'd4) begin
                    reply       = 1'b1;
                    reply_fault = 1'b1;
                  end else begin
                    st_d    = StProbe;
                    p_start = 1'b1;
                    p_src   = c_a1;
                    p_len   = 17'd4;
                  end
                end
                8'd188: begin
                  reply    = 1'b1;
                  reply_r0 = {50'b0, c_lb_room};
                end
                8'd189, 8'd190: begin
                  if (c_lb_efault) begin
                    reply    = 1'b1;
                    reply_r0 = Efault;
                  end else if (c_lb_einval) begin
                    reply    = 1'b1;
                    reply_r0 = Einval;
                  end else if (c_a4[15:0] == 16'd0) begin
                    if (hcall_id_i[7:0] == 8'd190) begin
                      reply = 1'b1;                        // nothing read, nothing written
                    end else begin
                      st_d    = StProbe0;                  // the 0-byte store to r3 is still checked
                      p_start = 1'b1;
                      p_src   = c_a3;
                      p_len   = 17'd1;
                    end
                  end else begin
                    st_d = StLbPrep;                       // lb_* follow from the registered call next cycle
                  end
                end
                default: begin
                  reply       = 1'b1;
                  reply_fault = 1'b1;
                end
              endcase
            end
          end
        end

        StKey: begin
          if (e_done) begin
            if (id_q == 8'd2) begin
              st_d    = StVal;
              p_start = 1'b1;
              p_src   = a3_q;
              p_len   = vs_q;
            end else begin
              st_d = StMreq;
            end
          end
        end

        StVal: if (e_done) st_d = StMreq;

        StMreq: if (mreq_ready_i) st_d = StMrsp;

        StMrsp: begin
          if (mrsp_valid_i) begin
            reply = 1'b1;
            if (mop_q == 2'd0) begin
              reply_r0 = mrsp_hit_i ? {4'd4, map_q, mrsp_slot_i, 24'd0} : 64'd0;
            end else begin
              reply_r0 = mrsp_ret_i;
            end
          end
        end

        StCsumF: if (e_done) st_d = StCsumM;

        StCsumM: begin
          st_d       = StCsumT;
          p_start    = 1'b1;
          p_src      = a3_q;
          p_len      = a4_q[LW-1:0];
          cs_init_to = 1'b1;
        end

        StCsumT: if (e_done) st_d = StCsumE;

        StCsumE: begin
          reply    = 1'b1;
          reply_r0 = {48'b0, cs_result};
        end

        StLbPrep: begin
          st_d    = StProbe;                               // r3's far byte first
          p_start = 1'b1;
          p_src   = lb_far;
          p_len   = 17'd1;
        end

        StProbe: begin
          if (e_done) begin
            if ((id_q == 8'd189 || id_q == 8'd190) && a4_q[15:0] != 16'd0) begin
              st_d    = StCopy;
              p_start = 1'b1;
              p_mode  = ModeCopy;
              p_src   = lb_src;
              p_dst   = lb_dst;
              p_len   = {1'b0, a4_q[15:0]};
              p_back  = lb_back;
            end else begin
              reply = 1'b1;                                // lock word readable, or 0-byte store at r3 - 1
            end
          end
        end

        StProbe0: begin
          if (e_fault) begin
            st_d    = StProbe;                             // r3 itself is past the region's end: r3 - 1?
            p_start = 1'b1;
            p_src   = a3_q - 64'd1;
            p_len   = 17'd1;
          end else if (e_done) begin
            reply = 1'b1;
          end
        end

        StCopy: if (e_done) reply = 1'b1;

        StAdj: begin
          if (adj_done_i) begin
            reply    = 1'b1;
            reply_r0 = adj_ret_i;
          end
        end

        default: st_d = StIdle;
      endcase
    end
    if (reply) st_d = StIdle;
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Registers

  integer w;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q         <= StIdle;
      id_q         <= 8'd0;
      a2_q         <= 32'd0;
      a3_q         <= 64'd0;
      a4_q         <= 64'd0;
      a5_q         <= 32'd0;
      map_q        <= 8'd0;
      vs_q         <= '0;
      mop_q        <= 2'd0;
      for (w = 0; w < KW; w = w + 1) key_q[w] <= 64'd0;
      for (w = 0; w < VW; w = w + 1) val_q[w] <= 64'd0;
      cs_q         <= 64'd0;
      cs_from_q    <= 32'd0;
      hret_valid_q <= 1'b0;
      hret_fault_q <= 1'b0;
      hret_q       <= 64'd0;
      rd_valid_q   <= 1'b0;
      rd_by_map_q  <= 1'b0;
      rd_map_q     <= 8'd0;
      rd_key_q     <= 64'd0;
      adj_valid_q  <= 1'b0;
      adj_kind_q   <= 2'd0;
      e_mode_q     <= ModeRead;
      e_src_q      <= 64'd0;
      e_dst_q      <= 64'd0;
      e_rem_q      <= '0;
      e_pos_q      <= '0;
      e_back_q     <= 1'b0;
      e_wr_q       <= 1'b0;
      fl_q         <= 1'b0;
      fl_bad_q     <= 1'b0;
      fl_pos_q     <= '0;
      fl_size_q    <= 4'd0;
    end else begin
      st_q         <= st_d;
      hret_valid_q <= reply;
      hret_fault_q <= reply_fault;
      hret_q       <= reply_r0;
      adj_valid_q  <= adj_go;
      if (adj_go) adj_kind_q <= adj_kind;

      if (st_q == StIdle && hcall_i) begin
        id_q  <= hcall_id_i[7:0];
        a2_q  <= c_a2[31:0];
        a3_q  <= c_a3;
        a4_q  <= c_a4;
        a5_q  <= c_a5;
        map_q <= c_map;
        vs_q  <= c_vs;
        mop_q <= (hcall_id_i[7:0] == 8'd2) ? 2'd1 : (hcall_id_i[7:0] == 8'd3) ? 2'd2 : 2'd0;
        for (w = 0; w < KW; w = w + 1) key_q[w] <= 64'd0;
        for (w = 0; w < VW; w = w + 1) val_q[w] <= 64'd0;
        // csum_diff: `from` is summed from ~seed when `to` is empty, else from 0
        cs_q  <= (c_a4[31:0] == 32'd0) ? {32'b0, ~c_a5} : 64'd0;
      end

      // the engine
      if (p_start) begin
        e_mode_q <= p_mode;
        e_src_q  <= p_src;
        e_dst_q  <= p_dst;
        e_rem_q  <= p_len;
        e_pos_q  <= '0;
        e_back_q <= p_back;
        e_wr_q   <= 1'b0;
        fl_q     <= 1'b0;
        fl_bad_q <= 1'b0;
      end else if (e_on && !e_fault) begin
        fl_q     <= acc_req && !acc_wait;
        fl_bad_q <= acc_req && !acc_ok;
        if (acc_req && !acc_we && !acc_wait) begin
          fl_pos_q  <= e_pos;
          fl_size_q <= e_size;
          e_rem_q   <= e_rem_q - {13'b0, e_size};
          if (!e_back_q) e_pos_q <= e_pos_q + {13'b0, e_size};
        end
        if (e_mode_q == ModeCopy) e_wr_q <= acc_req && !acc_we && !acc_wait;
      end else begin
        fl_q     <= 1'b0;
        fl_bad_q <= 1'b0;
      end

      // data of a read answered now
      if (e_on && fl_q && !e_fault && !(e_mode_q == ModeCopy)) begin
        if (st_q == StKey) begin
          for (w = 0; w < KW; w = w + 1) begin
            if (fl_pos_q[LW-1:3] == w[LW-4:0]) key_q[w] <= merge(key_q[w], e_rdata, fl_pos_q[2:0], fl_size_q);
          end
        end
        if (st_q == StVal) begin
          for (w = 0; w < VW; w = w + 1) begin
            if (fl_pos_q[LW-1:3] == w[LW-4:0]) val_q[w] <= merge(val_q[w], e_rdata, fl_pos_q[2:0], fl_size_q);
          end
        end
        if (st_q == StCsumF || st_q == StCsumT) cs_q <= add64c(cs_q, e_rdata);
      end
      if (cs_init_to) begin
        cs_from_q <= cs_fold;
        cs_q      <= {32'b0, a5_q[31:0]};
      end

      // outcome record
      if (start_i) begin
        rd_valid_q  <= 1'b0;
        rd_by_map_q <= 1'b0;
        rd_map_q    <= 8'd0;
        rd_key_q    <= 64'd0;
      end else if (rec_set) begin
        rd_valid_q  <= 1'b1;
        rd_by_map_q <= rec_by_map;
        rd_map_q    <= rec_map;
        rd_key_q    <= rec_key;
      end
    end
  end

  // Bytes [off, off + size) of word `old` replaced by the low bytes of `data` (size 1, 2, 4 or 8; off 0, 4 or 6).
  function automatic logic [63:0] merge(input logic [63:0] old, input logic [63:0] data, input logic [2:0] off,
                                        input logic [3:0] size);
    logic [63:0] shifted;
    logic [3:0]  lo, hi;
    integer      b;
    merge   = old;
    shifted = data << {off, 3'b000};
    lo      = {1'b0, off};
    hi      = lo + size;
    for (b = 0; b < 8; b = b + 1) begin
      if (b[3:0] >= lo && b[3:0] < hi) merge[8*b +: 8] = shifted[8*b +: 8];
    end
  endfunction

  // ---------------------------------------------------------------------------------------------------------------
  // Outputs

  assign hret_valid_o = hret_valid_q;
  assign hret_o       = hret_q;
  assign hret_fault_o = hret_fault_q;
  assign hret_tail_o  = 1'b0;
  assign hret_entry_o = 16'd0;

  assign mreq_valid_o = st_q == StMreq;
  assign mreq_op_o    = mop_q;
  assign mreq_map_o   = map_q;
  assign mreq_flags_o = a4_q;
  integer ok;
  always_comb begin
    for (ok = 0; ok < KW; ok = ok + 1) mreq_key_o[64*ok +: 64] = key_q[ok];
    for (ok = 0; ok < VW; ok = ok + 1) mreq_value_o[64*ok +: 64] = val_q[ok];
  end

  assign adj_valid_o = adj_valid_q;
  assign adj_kind_o  = adj_kind_q;
  assign adj_delta_o = a2_q[31:0];

  assign redirect_valid_o  = rd_valid_q;
  assign redirect_by_map_o = rd_by_map_q;
  assign redirect_map_o    = rd_map_q;
  assign redirect_key_o    = rd_key_q;

endmodule
