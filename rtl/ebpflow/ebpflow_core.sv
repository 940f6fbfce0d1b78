`default_nettype none
// eBPFlow engine processor: the standard eBPF ISA as clang emits it on a 5-stage in-order pipeline (IF, ID, EX, MEM, WB).
//
// Stages. IF presents the next slot's address to the instruction memory (a registered read: the memory's output
// register is the IF/ID register). ID decodes, reads r0-r10 (the write-back of this cycle written through), detects
// load-use hazards, merges the two slots of lddw, and runs the operations that change the frame or leave the core:
// ja/gotol (a redirect from ID), bpf-to-bpf calls and exits, helper and runtime-function calls. EX runs the ALU, the
// multi-cycle multiply/divide/modulo unit (ebpflow_muldiv: EX waits for it), the conditions of jumps and jmp32 (a
// taken branch redirects IF and squashes the slot in ID), and forms and checks addresses; a data-memory request leaves
// EX at the clock edge ending it (a store writes there). MEM takes the load's bytes (sign extension, the legacy
// loads' byte order) and performs an atomic's write (EX waits that cycle: the data memory has one port for the core).
// WB writes the register file.
//
// Hazards. Results forward to EX from MEM and WB. A load, legacy load or fetching atomic in EX whose register the
// instruction in ID reads stalls ID one cycle (load-use). A taken branch costs one cycle, ja none beyond its own. A
// multiply costs 4 cycles in EX, a divide or modulo 33 or 65 (1 when dividing by zero). A load or store of a frame
// word that has not arrived waits in EX until the DM_FIFO sets its valid bit (dm_ok_i). Calls and exits from a
// function wait in ID until EX, MEM and WB are empty, so r0-r10 are the architectural registers when they act; helper
// calls and the main program's exit wait only for EX (MEM's and WB's results forwarded to them): a call
// saves the return slot and r6-r9 in ebpflow_frames and moves r10 up one 512-byte frame; an exit from a function
// restores them (a cycle to read the frame) and returns; the exit of the main program ends the run with r0.
//
// Memory. Addresses are BASE + a DM_FIFO byte offset (ebpflow_dm_fifo: the header at 0..31, the frame from 32, the
// stack frames from RX_BYTES). At start r1 is the frame's address (0 for an empty frame), r2 its length, r10 the top
// of the first stack frame, the other registers 0. An access faults unless it lies wholly in the header, the frame
// (32 .. 32 + start_len_i) or the stack below the current frame's top; a legacy packet load (LD ABS/IND, big-endian
// into r0) outside the frame ends the run with r0 = 0, as in the kernel.
//
// Helper port. A helper call (call K, callx rX: the id in rX) or a runtime function (call with src 2, by BTF id)
// raises hlp_req_o with the id, hlp_kfunc_o and r1-r5 on hlp_args_o (r1 in the low 64 bits) and holds them until
// hlp_ack_i; the answer (hlp_r0_i, hlp_end_i: the run ends now with that r0, hlp_fault_i) comes with the ack.
//
// A run ends with done_o high for one cycle: r0_o, fault_o and cycles_o (start to done_o, both counted) hold until
// the next start. Faults: an instruction that does not exist (or a register above r10), an access out of bounds, an
// atomic that does not exist, a call deeper than STACK_FRAMES, a helper's fault, a slot at or past prog_len_i.
module ebpflow_core #(
  parameter integer        IW           = 12,              // instruction-memory address bits
  parameter integer        AW           = 13,              // DM_FIFO byte-offset bits
  parameter integer        RX_BYTES     = 4096,            // header and frame area of the DM_FIFO
  parameter integer        STACK_FRAMES = 8,               // 512-byte stack frames (call depth)
  parameter integer        FW           = 3,               // $clog2(STACK_FRAMES)
  parameter logic [63:0]   BASE         = 64'h0000_0000_0001_0000, // data memory address; a multiple of 2**AW
  parameter integer        KEY_BYTES    = 16,              // key bytes a map helper gathers at r2 (a multiple of 8)
  parameter integer        VAL_BYTES    = 32               // value bytes a map update gathers at r3 (a multiple of 8)
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  // control
  input  logic               start_i,
  input  logic [15:0]        start_len_i,
  input  logic               rx_done_i,         // the packet's last beat has been taken
  input  logic [IW:0]        prog_len_i,
  output logic               busy_o,
  output logic               done_o,
  output logic               fault_o,
  output logic [63:0]        r0_o,
  output logic [31:0]        cycles_o,
  // instruction memory (registered read)
  output logic               imem_en_o,
  output logic [IW-1:0]      imem_addr_o,
  input  logic [63:0]        imem_data_i,
  // data memory (ebpflow_dm_fifo port A)
  output logic               dm_req_o,
  output logic               dm_we_o,
  output logic [AW-1:0]      dm_addr_o,
  output logic [1:0]         dm_size_o,
  output logic [63:0]        dm_wdata_o,
  input  logic               dm_ok_i,
  input  logic [63:0]        dm_rdata_i,
  // helper port
  output logic               hlp_req_o,
  output logic               hlp_kfunc_o,
  output logic [31:0]        hlp_id_o,
  output logic [319:0]       hlp_args_o,
  input  logic               hlp_ack_i,
  input  logic [63:0]        hlp_r0_i,
  input  logic               hlp_end_i,
  input  logic               hlp_fault_i,
  output logic [KEY_BYTES*8-1:0] hlp_key_o,     // the bytes at r2 (map helpers), byte 0 in the low bits
  output logic [VAL_BYTES*8-1:0] hlp_val_o,     // the bytes at r3 (map update)
  // map-value port (the window at MAPV_BASE)
  output logic               mv_req_o,
  output logic               mv_we_o,
  output logic [2:0]         mv_atomic_o,       // 0 none, 1 add, 2 or, 3 and, 4 xor, 5 xchg, 6 cmpxchg
  output logic [23:0]        mv_addr_o,         // the address minus MAPV_BASE
  output logic [1:0]         mv_size_o,
  output logic [63:0]        mv_wdata_o,
  output logic [63:0]        mv_cmp_o,
  input  logic               mv_ack_i,
  input  logic [63:0]        mv_rdata_i,
  input  logic               mv_fault_i
);

  // Kinds of the instructions that go down the pipeline.
  localparam logic [3:0] KNone = 4'd0;
  localparam logic [3:0] KAlu  = 4'd1;
  localparam logic [3:0] KMd   = 4'd2;
  localparam logic [3:0] KBr   = 4'd3;
  localparam logic [3:0] KLd   = 4'd4;
  localparam logic [3:0] KSt   = 4'd5;
  localparam logic [3:0] KAtom = 4'd6;
  localparam logic [3:0] KImm  = 4'd7;   // lddw
  localparam logic [3:0] KLeg  = 4'd8;   // LD ABS/IND
  localparam logic [3:0] KBad  = 4'd9;

  // States of ID's frame and helper operations.
  localparam logic [1:0] SpIdle = 2'd0;
  localparam logic [1:0] SpRet  = 2'd1;  // an exit reads its frame
  localparam logic [1:0] SpHlp  = 2'd2;  // a helper call waits for its answer
  localparam logic [1:0] SpKey  = 2'd3;  // a map helper reads its key (and value) from the data memory

  localparam integer KWords = KEY_BYTES / 8;
  localparam integer VWords = VAL_BYTES / 8;
  localparam integer GW     = $clog2(KWords + VWords + 1);

  // The map-value window: addresses MAPV_BASE .. MAPV_BASE + 2**24 - 1 go to the coprocessor.
  localparam logic [39:0] MapvHi = 40'h00_0000_0001;

  localparam logic [63:0] FrameAddr  = BASE + 64'd32;
  localparam logic [63:0] StackTop0  = BASE + 64'(RX_BYTES) + 64'd512;
  localparam logic [63:0] FrameBytes = 64'd512;

  // ---------------------------------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------------------------------
  logic              run_q;
  logic [11*64-1:0]  rf_q;
  logic [FW-1:0]     depth_q;
  logic [15:0]       len_q;
  logic [31:0]       cyc_q;
  logic              done_q;
  logic              fault_q;
  logic [63:0]       r0_q;
  logic [31:0]       cycles_q;

  // ID
  logic              id_valid_q;
  logic [IW-1:0]     id_pc_q;
  logic              lddw_q;        // the slot in ID is lddw's second half
  logic [31:0]       lddw_lo_q;
  logic [3:0]        lddw_dst_q;
  logic              lddw_bad_q;
  logic [1:0]        sp_q;

  // EX
  logic              ex_valid_q;
  logic [3:0]        ex_kind_q;
  logic [IW-1:0]     ex_pc_q;
  logic [7:0]        ex_code_q;
  logic [3:0]        ex_dst_q;
  logic [3:0]        ex_src_q;
  logic [15:0]       ex_off_q;
  logic [63:0]       ex_imm_q;
  logic [63:0]       ex_a_q;
  logic [63:0]       ex_b_q;
  logic [63:0]       ex_c_q;
  logic [3:0]        ex_rd_q;
  logic              ex_we_q;
  logic              ex_late_q;

  // MEM
  logic              mem_valid_q;
  logic [3:0]        mem_kind_q;
  logic [3:0]        mem_rd_q;
  logic              mem_we_q;
  logic              mem_late_q;
  logic [63:0]       mem_res_q;
  logic [63:0]       mem_cmp_q;
  logic [1:0]        mem_size_q;
  logic              mem_sx_q;
  logic [7:0]        mem_aop_q;
  logic [AW-1:0]     mem_addr_q;
  logic              mem_mv_q;      // the access went to the coprocessor: its data in mem_mvdata_q
  logic [63:0]       mem_mvdata_q;

  // WB
  logic              wb_valid_q;
  logic [3:0]        wb_rd_q;
  logic              wb_we_q;
  logic [63:0]       wb_res_q;

  function automatic [63:0] reg_of(input logic [11*64-1:0] rf, input logic [3:0] r);
    reg_of = (r <= 4'd10) ? rf[r*64 +: 64] : 64'd0;
  endfunction

  // ---------------------------------------------------------------------------------------------------------------
  // ID: decode
  // ---------------------------------------------------------------------------------------------------------------
  logic [7:0]  d_code;
  logic [3:0]  d_dst;
  logic [3:0]  d_src;
  logic [15:0] d_off;
  logic [31:0] d_imm;
  logic [2:0]  d_class;
  logic [3:0]  d_op;
  logic        d_x;
  assign d_code  = imem_data_i[7:0];
  assign d_dst   = imem_data_i[11:8];
  assign d_src   = imem_data_i[15:12];
  assign d_off   = imem_data_i[31:16];
  assign d_imm   = imem_data_i[63:32];
  assign d_class = d_code[2:0];
  assign d_op    = d_code[7:4];
  assign d_x     = d_code[3];

  // What the slot in ID is: an instruction for EX (d_kind), or one ID performs.
  logic [3:0]  d_kind;
  logic        d_ja;
  logic [IW-1:0] d_ja_target;
  logic        d_call;        // bpf-to-bpf
  logic        d_helper;      // helper, callx or runtime function
  logic        d_kfunc;
  logic        d_exit;
  logic        d_lddw_first;
  logic        d_uses_a;      // reads dst
  logic        d_uses_b;      // reads src
  logic        d_uses_c;      // reads r0 (cmpxchg)
  logic [3:0]  d_rd;
  logic        d_we;
  logic        d_late;
  logic [2:0]  d_mode;
  logic [1:0]  d_size;        // code[4:3]: W, H, B, DW
  logic        d_atom_ok;

  assign d_mode = d_code[7:5];
  assign d_size = d_code[4:3];

  always_comb begin
    case (d_imm)
      32'h00, 32'h01, 32'h40, 32'h41, 32'h50, 32'h51, 32'ha0, 32'ha1, 32'he1, 32'hf1: d_atom_ok = 1'b1;
      default: d_atom_ok = 1'b0;
    endcase
  end

  always_comb begin
    d_kind       = KBad;
    d_ja         = 1'b0;
    d_call       = 1'b0;
    d_helper     = 1'b0;
    d_kfunc      = 1'b0;
    d_exit       = 1'b0;
    d_lddw_first = 1'b0;
    d_uses_a     = 1'b0;
    d_uses_b     = 1'b0;
    d_uses_c     = 1'b0;
    d_rd         = d_dst;
    d_we         = 1'b0;
    d_late       = 1'b0;
    d_ja_target  = id_pc_q + IW'(d_off) + 1'b1;
    if (lddw_q) begin
      d_kind = lddw_bad_q ? KBad : KImm;
      d_rd   = lddw_dst_q;
      d_we   = !lddw_bad_q;
    end else begin
      case (d_class)
        3'd4, 3'd7: begin  // ALU, ALU64
          d_kind   = (d_op == 4'h2 || d_op == 4'h3 || d_op == 4'h9) ? KMd : KAlu;
          d_uses_a = (d_op != 4'hb);
          d_uses_b = d_x && (d_op != 4'h8) && (d_op != 4'hd);
          d_we     = 1'b1;
        end
        3'd5, 3'd6: begin  // JMP, JMP32
          case (d_op)
            4'h0: begin
              d_ja = 1'b1;
              if (d_class == 3'd6) begin
                d_ja_target = id_pc_q + IW'(d_imm) + 1'b1;
              end
            end
            4'h8: begin
              if (d_class == 3'd5) begin
                if (d_src == 4'd1 && !d_x) begin
                  d_call      = 1'b1;
                  d_ja_target = id_pc_q + IW'(d_imm) + 1'b1;
                end else if ((d_src == 4'd0 || d_src == 4'd2) && !(d_x && d_src == 4'd2)) begin
                  d_helper = 1'b1;
                  d_kfunc  = (d_src == 4'd2);
                end
              end
            end
            4'h9: d_exit = (d_class == 3'd5);
            4'he, 4'hf: d_kind = KBad;
            default: begin
              d_kind   = KBr;
              d_uses_a = 1'b1;
              d_uses_b = d_x;
            end
          endcase
        end
        3'd1: begin  // LDX
          if (d_mode == 3'd3 || (d_mode == 3'd4 && d_size != 2'd3)) begin
            d_kind   = KLd;
            d_uses_b = 1'b1;
            d_we     = 1'b1;
            d_late   = 1'b1;
          end
        end
        3'd2: begin  // ST
          if (d_mode == 3'd3) begin
            d_kind   = KSt;
            d_uses_a = 1'b1;
          end
        end
        3'd3: begin  // STX
          if (d_mode == 3'd3) begin
            d_kind   = KSt;
            d_uses_a = 1'b1;
            d_uses_b = 1'b1;
          end else if (d_mode == 3'd6 && (d_size == 2'd0 || d_size == 2'd3) && d_atom_ok) begin
            d_kind   = KAtom;
            d_uses_a = 1'b1;
            d_uses_b = 1'b1;
            if (d_imm == 32'hf1) begin
              d_uses_c = 1'b1;
              d_rd     = 4'd0;
              d_we     = 1'b1;
              d_late   = 1'b1;
            end else if (d_imm[0]) begin
              d_rd   = d_src;
              d_we   = 1'b1;
              d_late = 1'b1;
            end
          end
        end
        default: begin  // LD
          if (d_code == 8'h18) begin
            d_lddw_first = 1'b1;
          end else if ((d_mode == 3'd1 || d_mode == 3'd2) && d_size != 2'd3) begin
            d_kind   = KLeg;
            d_uses_b = (d_mode == 3'd2);
            d_rd     = 4'd0;
            d_we     = 1'b1;
            d_late   = 1'b1;
          end
        end
      endcase
      // Registers above r10 do not exist.
      if ((d_uses_a || d_we) && d_rd > 4'd10 || d_uses_a && d_dst > 4'd10 || d_uses_b && d_src > 4'd10
          || (d_kind == KAlu || d_kind == KMd) && d_dst > 4'd10) begin
        d_kind = KBad;
        d_we   = 1'b0;
      end
    end
    // A slot at or past the program's end is not part of it: running it faults.
    if ({1'b0, id_pc_q} >= prog_len_i) begin
      d_kind       = KBad;
      d_ja         = 1'b0;
      d_call       = 1'b0;
      d_helper     = 1'b0;
      d_exit       = 1'b0;
      d_lddw_first = 1'b0;
      d_we         = 1'b0;
    end
  end

  // Register reads with the write-back written through.
  function automatic [63:0] rd_reg(input logic [11*64-1:0] rf, input logic [3:0] r, input logic wv,
                                   input logic [3:0] wr, input logic [63:0] wd);
    rd_reg = (wv && wr == r) ? wd : reg_of(rf, r);
  endfunction

  logic        wb_write;
  assign wb_write = wb_valid_q && wb_we_q;

  logic [63:0] id_a;
  logic [63:0] id_b;
  logic [63:0] id_c;
  assign id_a = rd_reg(rf_q, d_dst, wb_write, wb_rd_q, wb_res_q);
  assign id_b = rd_reg(rf_q, d_src, wb_write, wb_rd_q, wb_res_q);
  assign id_c = rd_reg(rf_q, 4'd0, wb_write, wb_rd_q, wb_res_q);

  logic id_special;
  logic drained;
  logic load_use;
  assign id_special = d_call || d_helper || d_exit;
  assign drained    = !ex_valid_q && !mem_valid_q && !wb_valid_q;
  // A helper call and the main program's exit need only EX empty or holding an ALU operation or lddw (ex_plain):
  // what EX, MEM and WB still write reaches them through the forwarding of id_fwd (the exit's r0, a helper's r1-r5,
  // callx's id, the gather's r2 and r3), none of those can fault on memory or redirect, and nothing but the
  // gather uses the data memory by the time it reads (MEM holds at most that ALU operation).
  logic ex_empty;
  assign ex_empty   = !ex_valid_q;
  assign load_use   = ex_valid_q && ex_late_q && ex_we_q
                      && ((d_uses_a && ex_rd_q == d_dst) || (d_uses_b && ex_rd_q == d_src)
                          || (d_uses_c && ex_rd_q == 4'd0));

  // ---------------------------------------------------------------------------------------------------------------
  // EX
  // ---------------------------------------------------------------------------------------------------------------
  function automatic [63:0] fwd(input logic [3:0] r, input logic [63:0] v,
                                input logic mv, input logic [3:0] mr, input logic [63:0] md,
                                input logic wv, input logic [3:0] wr, input logic [63:0] wd);
    if (mv && mr == r) begin
      fwd = md;
    end else if (wv && wr == r) begin
      fwd = wd;
    end else begin
      fwd = v;
    end
  endfunction

  logic        mem_fwd;
  assign mem_fwd = mem_valid_q && mem_we_q && !mem_late_q;

  logic [63:0] ex_a;
  logic [63:0] ex_b;
  logic [63:0] ex_c;
  assign ex_a = fwd(ex_dst_q, ex_a_q, mem_fwd, mem_rd_q, mem_res_q, wb_write, wb_rd_q, wb_res_q);
  assign ex_b = fwd(ex_src_q, ex_b_q, mem_fwd, mem_rd_q, mem_res_q, wb_write, wb_rd_q, wb_res_q);
  assign ex_c = fwd(4'd0, ex_c_q, mem_fwd, mem_rd_q, mem_res_q, wb_write, wb_rd_q, wb_res_q);

  logic [2:0]  ex_class;
  logic [3:0]  ex_op;
  logic        ex_x;
  logic        ex_wide;
  logic [63:0] ex_op2;
  assign ex_class = ex_code_q[2:0];
  assign ex_op    = ex_code_q[7:4];
  assign ex_x     = ex_code_q[3];
  assign ex_wide  = (ex_class == 3'd7) || (ex_class == 3'd5);
  assign ex_op2   = ex_x ? ex_b : ex_imm_q;

  // ALU
  logic [63:0] alu_res;
  logic        alu_ok;
  ebpflow_alu u_alu (
    .op_i     (ex_op),
    .wide_i   (ex_class == 3'd7),
    .swap_i   ((ex_class == 3'd7) || ex_x),
    .off_i    (ex_off_q),
    .imm_i    (ex_imm_q[31:0]),
    .a_i      (ex_a),
    .b_i      (ex_op2),
    .result_o (alu_res),
    .valid_o  (alu_ok)
  );

  // Multiply, divide, modulo
  logic        md_busy;
  logic        md_valid;
  logic [63:0] md_res;
  logic        md_start;
  logic        md_ack;
  logic        finish;
  ebpflow_muldiv u_muldiv (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .flush_i  (finish),
    .start_i  (md_start),
    .op_i     (ex_op),
    .wide_i   (ex_class == 3'd7),
    .signed_i (ex_off_q == 16'd1 && ex_op != 4'h2),
    .a_i      (ex_a),
    .b_i      (ex_op2),
    .busy_o   (md_busy),
    .valid_o  (md_valid),
    .result_o (md_res),
    .ack_i    (md_ack)
  );

  // Branch conditions
  logic        br_taken;
  logic [63:0] x;
  logic [63:0] y;
  logic [63:0] sx;
  logic [63:0] sy;
  always_comb begin
    x  = ex_wide ? ex_a : {32'd0, ex_a[31:0]};
    y  = ex_wide ? ex_op2 : {32'd0, ex_op2[31:0]};
    sx = ex_wide ? ex_a : {{32{ex_a[31]}}, ex_a[31:0]};
    sy = ex_wide ? ex_op2 : {{32{ex_op2[31]}}, ex_op2[31:0]};
    case (ex_op)
      4'h1:    br_taken = (x == y);
      4'h2:    br_taken = (x > y);
      4'h3:    br_taken = (x >= y);
      4'h4:    br_taken = ((x & y) != 64'd0);
      4'h5:    br_taken = (x != y);
      4'h6:    br_taken = ($signed(sx) > $signed(sy));
      4'h7:    br_taken = ($signed(sx) >= $signed(sy));
      4'ha:    br_taken = (x < y);
      4'hb:    br_taken = (x <= y);
      4'hc:    br_taken = ($signed(sx) < $signed(sy));
      4'hd:    br_taken = ($signed(sx) <= $signed(sy));
      default: br_taken = 1'b0;
    endcase
  end

  // Addresses and their bounds
  logic        ex_mem_op;
  logic        ex_store;
  logic [1:0]  ex_lsize;     // log2 bytes
  logic [63:0] ex_addr;
  logic [AW:0] ex_end;       // offset of the byte after the access
  logic        ex_in_dm;
  logic        ex_in_hdr;
  logic        ex_in_frame;
  logic        ex_in_stack;
  logic        ex_addr_ok;
  logic [AW:0] stack_top;

  assign ex_mem_op = (ex_kind_q == KLd) || (ex_kind_q == KSt) || (ex_kind_q == KAtom) || (ex_kind_q == KLeg);
  assign ex_store  = (ex_kind_q == KSt);
  always_comb begin
    case (ex_code_q[4:3])
      2'd0:    ex_lsize = 2'd2;
      2'd1:    ex_lsize = 2'd1;
      2'd2:    ex_lsize = 2'd0;
      default: ex_lsize = 2'd3;
    endcase
    if (ex_kind_q == KLeg) begin
      ex_addr = FrameAddr + ex_imm_q + ((ex_code_q[7:5] == 3'd2) ? {{32{ex_b[31]}}, ex_b[31:0]} : 64'd0);
    end else if (ex_kind_q == KLd) begin
      ex_addr = ex_b + {{48{ex_off_q[15]}}, ex_off_q};
    end else begin
      ex_addr = ex_a + {{48{ex_off_q[15]}}, ex_off_q};
    end
  end

  logic [AW:0] frames_in_use;
  assign frames_in_use = (AW+1)'(depth_q) + 1'b1;
  assign stack_top   = (AW+1)'(RX_BYTES) + (frames_in_use << 9);
  assign ex_end      = {1'b0, ex_addr[AW-1:0]} + ((AW+1)'(1) << ex_lsize);
  assign ex_in_dm    = (ex_addr[63:AW] == BASE[63:AW]);
  assign ex_in_hdr   = ex_end <= (AW+1)'(32);
  assign ex_in_frame = ex_addr[AW-1:0] >= AW'(32) && 32'(ex_end) <= 32'd32 + 32'(len_q);
  assign ex_in_stack = ex_addr[AW-1:0] >= AW'(RX_BYTES) && ex_end <= stack_top;
  assign ex_addr_ok  = ex_in_dm && (ex_kind_q == KLeg ? ex_in_frame : (ex_in_hdr || ex_in_frame || ex_in_stack));

  // A load, store or atomic in the map-value window goes to the coprocessor; EX waits for its ack.
  logic ex_mv;
  assign ex_mv = ex_valid_q && ex_mem_op && ex_kind_q != KLeg && ex_addr[63:24] == MapvHi;

  // A run ends in EX on an instruction that cannot run, or on a legacy load outside the frame.
  logic ex_bad;
  logic ex_leg_out;
  assign ex_bad = ex_valid_q && ((ex_kind_q == KBad) || (ex_kind_q == KAlu && !alu_ok)
                                 || (ex_mem_op && ex_kind_q != KLeg && !ex_addr_ok && !ex_mv)
                                 || (ex_mv && mv_ack_i && mv_fault_i));
  assign ex_leg_out = ex_valid_q && ex_kind_q == KLeg && !ex_addr_ok;

  // MEM holds an atomic: its write takes the data memory's port at this edge.
  logic mem_atom;
  assign mem_atom = mem_valid_q && mem_kind_q == KAtom && !mem_mv_q;

  logic ex_stall;
  logic ex_go;
  assign ex_stall = ex_valid_q && !ex_bad && !ex_leg_out
                    && (mem_atom || (ex_kind_q == KMd && !md_valid) || (ex_mem_op && !ex_mv && !dm_ok_i)
                        || (ex_mv && !mv_ack_i));
  assign ex_go    = ex_valid_q && !ex_stall && !ex_bad && !ex_leg_out;
  assign md_start = ex_valid_q && ex_kind_q == KMd && !md_busy && !finish;
  assign md_ack   = ex_go && ex_kind_q == KMd;

  logic          ex_redirect;
  logic [IW-1:0] ex_target;
  assign ex_redirect = ex_go && ex_kind_q == KBr && br_taken;
  assign ex_target   = ex_pc_q + IW'(ex_off_q) + 1'b1;

  logic [63:0] ex_res;
  always_comb begin
    case (ex_kind_q)
      KMd:     ex_res = md_res;
      KImm:    ex_res = ex_imm_q;
      KSt:     ex_res = (ex_class == 3'd2) ? ex_imm_q : ex_b;
      KAtom:   ex_res = (ex_code_q[4:3] == 2'd0) ? {32'd0, ex_b[31:0]} : ex_b;
      default: ex_res = alu_res;
    endcase
  end

  // ---------------------------------------------------------------------------------------------------------------
  // MEM
  // ---------------------------------------------------------------------------------------------------------------
  logic [63:0] mem_load;
  logic [63:0] mem_new;      // an atomic's value to store
  logic        mem_wr;       // ... and whether it stores (cmpxchg only on a match)
  logic [63:0] mem_out;
  logic [63:0] cmp_sized;
  logic [63:0] ld;           // the loaded bytes: the data memory's or the coprocessor's
  always_comb begin
    ld = mem_mv_q ? mem_mvdata_q : dm_rdata_i;
    // Sign extension (LDX MEMSX) and the legacy loads' network byte order.
    mem_load = ld;
    if (mem_kind_q == KLeg) begin
      case (mem_size_q)
        2'd0:    mem_load = {56'd0, ld[7:0]};
        2'd1:    mem_load = {48'd0, ld[7:0], ld[15:8]};
        default: mem_load = {32'd0, ld[7:0], ld[15:8], ld[23:16], ld[31:24]};
      endcase
    end else if (mem_sx_q) begin
      case (mem_size_q)
        2'd0:    mem_load = {{56{ld[7]}}, ld[7:0]};
        2'd1:    mem_load = {{48{ld[15]}}, ld[15:0]};
        default: mem_load = {{32{ld[31]}}, ld[31:0]};
      endcase
    end
    cmp_sized = (mem_size_q == 2'd2) ? {32'd0, mem_cmp_q[31:0]} : mem_cmp_q;
    case (mem_aop_q & 8'hfe)
      8'h00:   mem_new = dm_rdata_i + mem_res_q;
      8'h40:   mem_new = dm_rdata_i | mem_res_q;
      8'h50:   mem_new = dm_rdata_i & mem_res_q;
      8'ha0:   mem_new = dm_rdata_i ^ mem_res_q;
      default: mem_new = mem_res_q;  // xchg, cmpxchg
    endcase
    mem_wr  = mem_atom && (mem_aop_q != 8'hf1 || dm_rdata_i == cmp_sized);
    mem_out = (mem_kind_q == KLd || mem_kind_q == KLeg || mem_kind_q == KAtom) ? mem_load : mem_res_q;
  end

  // EX holds an ALU operation or lddw that goes on this cycle: it can neither fault on memory nor redirect, so a
  // helper call or the main exit in ID need not wait for it (its result is forwarded to them).
  logic ex_plain;
  assign ex_plain = ex_valid_q && (ex_kind_q == KAlu || ex_kind_q == KImm) && !ex_stall;

  // A register as ID's special operations see it: EX's result (an ALU operation or lddw), else MEM's, else WB's,
  // else the file.
  function automatic [63:0] id_fwd(input logic [3:0] r);
    if (ex_valid_q && (ex_kind_q == KAlu || ex_kind_q == KImm) && ex_we_q && ex_rd_q == r) begin
      id_fwd = ex_res;
    end else begin
      id_fwd = fwd(r, reg_of(rf_q, r), mem_valid_q && mem_we_q, mem_rd_q, mem_out, wb_write, wb_rd_q, wb_res_q);
    end
  endfunction

  // id_fwd's bits above the data memory's (the gather's pointer check).
  function automatic [63-AW:0] id_fwd_hi(input logic [3:0] r);
    id_fwd_hi = (64-AW)'(id_fwd(r) >> AW);
  endfunction

  // The data memory's port: MEM's atomic write, a map helper's key or value read, else EX's access.
  logic          gk_rd;      // the gather reads a word at this edge
  logic [63:0]   gk_addr;
  always_comb begin
    if (gk_sel) begin
      dm_req_o   = gk_rd;
      dm_we_o    = 1'b0;
      dm_addr_o  = gk_addr[AW-1:0];
      dm_size_o  = 2'd3;
      dm_wdata_o = 64'd0;
    end else if (mem_atom) begin
      dm_req_o   = mem_wr;
      dm_we_o    = 1'b1;
      dm_addr_o  = mem_addr_q;
      dm_size_o  = mem_size_q;
      dm_wdata_o = mem_new;
    end else begin
      dm_req_o   = ex_go && ex_mem_op && !ex_mv;
      dm_we_o    = ex_store;
      dm_addr_o  = ex_addr[AW-1:0];
      dm_size_o  = ex_lsize;
      dm_wdata_o = ex_res;
    end
  end

  // The map-value port: EX's access, held until the ack.
  assign mv_req_o   = ex_mv && !mem_atom;
  assign mv_we_o    = ex_store;
  assign mv_addr_o  = ex_addr[23:0];
  assign mv_size_o  = ex_lsize;
  assign mv_wdata_o = ex_res;
  assign mv_cmp_o   = ex_c;
  always_comb begin
    mv_atomic_o = 3'd0;
    if (ex_kind_q == KAtom) begin
      case (ex_imm_q[7:0] & 8'hfe)
        8'h00:   mv_atomic_o = 3'd1;
        8'h40:   mv_atomic_o = 3'd2;
        8'h50:   mv_atomic_o = 3'd3;
        8'ha0:   mv_atomic_o = 3'd4;
        8'he0:   mv_atomic_o = 3'd5;
        default: mv_atomic_o = 3'd6;
      endcase
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // ID's operations, IF, and the end of a run
  // ---------------------------------------------------------------------------------------------------------------
  logic          id_stall;
  logic          id_go;
  logic          sp_redirect;
  logic [IW-1:0] sp_target;
  logic          sp_finish;
  logic          sp_fault;
  logic [63:0]   sp_r0;
  logic [1:0]    sp_d;
  logic          fr_we;
  logic          fr_rd;
  logic [287:0]  fr_rdata;
  logic          call_deep;

  assign call_deep = ({1'b0, depth_q} + 1'b1) >= (FW+1)'(STACK_FRAMES);

  // A map helper (bpf_map_lookup_elem 1, update 2, delete 3) first reads KWords words at r2, and VWords at r3 for
  // an update, from the data memory onto hlp_key_o and hlp_val_o: a word a cycle (a frame word that has not arrived
  // waits while the packet still arrives); the request goes out in the cycle the last word is read back.
  logic [31:0]            call_id;
  logic                   map_call;
  logic                   upd_call;
  logic [GW-1:0]          gk_q;       // words read so far
  logic [GW-1:0]          gk_n;       // words to read
  logic                   gk_pend_q;  // the word read at the last edge is on dm_rdata_i
  logic [GW-1:0]          gk_idx_q;
  logic [KEY_BYTES*8-1:0] key_q;
  logic [VAL_BYTES*8-1:0] val_q;
  logic                   gk_ptr_ok;
  logic                   gk_sel;
  logic [63:AW]           r2_arch;    // the pointers' bits above the data memory's
  logic [63:AW]           r3_arch;
  assign call_id   = hlp_id_o;
  assign map_call  = !d_kfunc && (call_id == 32'd1 || call_id == 32'd2 || call_id == 32'd3);
  assign upd_call  = (call_id == 32'd2);
  assign gk_n      = GW'(KWords) + (upd_call ? GW'(VWords) : GW'(0));
  // The pointers as the program left them (EX's and MEM's results forwarded): in the data memory, or a fault.
  assign r2_arch   = id_fwd_hi(4'd2);
  assign r3_arch   = id_fwd_hi(4'd3);
  assign gk_ptr_ok = r2_arch == BASE[63:AW] && (!upd_call || r3_arch == BASE[63:AW]);
  // The gather's r2 and r3 come from registers only (MEM's ALU result, WB, the file), never through EX's ALU or
  // MEM's load alignment, so the read address is a register and an adder: while the gather runs EX is empty and
  // MEM holds at most an ALU operation; in the cycle the call acts (gk_now) neither EX nor a load in MEM writes them.
  logic [63:0]            gk_r2;
  logic [63:0]            gk_r3;
  assign gk_r2     = fwd(4'd2, reg_of(rf_q, 4'd2), mem_fwd, mem_rd_q, mem_res_q, wb_write, wb_rd_q, wb_res_q);
  assign gk_r3     = fwd(4'd3, reg_of(rf_q, 4'd3), mem_fwd, mem_rd_q, mem_res_q, wb_write, wb_rd_q, wb_res_q);
  assign gk_addr   = (32'(gk_q) < 32'(KWords)) ? gk_r2 + {{(61-GW){1'b0}}, gk_q, 3'b000}
                                                : gk_r3 + {{(61-GW){1'b0}}, gk_q - GW'(KWords), 3'b000};
  // The first word is read in the cycle the call acts (one cycle earlier than SpKey would) when the port is free
  // (EX empty or an ALU operation or lddw, no atomic's write in MEM) and r2 (r3 for an update) is in a register:
  // EX does not write it and MEM does not load it. A call by its immediate only (callx's id comes through EX).
  // A read made for a call that faults on its pointer is harmless: the run ends.
  // (gk_imm_map and gk_imm_upd decode the immediate alone, so that no path runs from EX's ALU through callx's id.)
  logic                   gk_imm_map;
  logic                   gk_imm_upd;
  logic                   gk_hazard;
  logic                   gk_now;
  assign gk_imm_map = d_helper && !d_x && !d_kfunc && (d_imm == 32'd1 || d_imm == 32'd2 || d_imm == 32'd3);
  assign gk_imm_upd = (d_imm == 32'd2);
  assign gk_hazard = (ex_valid_q && ex_we_q && (ex_rd_q == 4'd2 || (gk_imm_upd && ex_rd_q == 4'd3)))
                     || (mem_valid_q && mem_we_q && mem_late_q
                         && (mem_rd_q == 4'd2 || (gk_imm_upd && mem_rd_q == 4'd3)));
  assign gk_now    = (sp_q == SpIdle) && run_q && id_valid_q && gk_imm_map
                     && (!ex_valid_q || ex_kind_q == KAlu || ex_kind_q == KImm) && !mem_atom && !gk_hazard;
  assign gk_sel    = ((sp_q == SpKey) && (gk_q < gk_n)) || gk_now;
  logic [GW-1:0]          gk_vidx;
  assign gk_vidx   = gk_idx_q - GW'(KWords);
  assign gk_rd     = gk_sel && (dm_ok_i || rx_done_i);
  // The key and value with the word read at the last edge (on dm_rdata_i now) in place: the request goes out in
  // the cycle the last word arrives, and the coprocessor registers the key at its grant.
  logic [KEY_BYTES*8-1:0] key_d;
  logic [VAL_BYTES*8-1:0] val_d;
  always_comb begin
    key_d = key_q;
    val_d = val_q;
    if (gk_pend_q) begin
      if (32'(gk_idx_q) < 32'(KWords)) begin
        key_d[64*gk_idx_q +: 64] = dm_rdata_i;
      end else begin
        val_d[64*gk_vidx +: 64] = dm_rdata_i;
      end
    end
  end
  assign hlp_key_o = key_d;
  assign hlp_val_o = val_d;

  always_comb begin
    sp_redirect = 1'b0;
    sp_target   = d_ja_target;
    sp_finish   = 1'b0;
    sp_fault    = 1'b0;
    sp_r0       = reg_of(rf_q, 4'd0);
    sp_d        = sp_q;
    fr_we       = 1'b0;
    fr_rd       = 1'b0;
    case (sp_q)
      SpRet: begin
        sp_redirect = 1'b1;
        sp_target   = fr_rdata[IW-1:0];
        sp_d        = SpIdle;
      end
      SpKey: begin
        if (gk_q == gk_n) begin
          sp_d = SpHlp;
        end
      end
      SpHlp: begin
        if (hlp_ack_i) begin
          sp_finish = hlp_end_i || hlp_fault_i;
          sp_fault  = hlp_fault_i;
          sp_r0     = hlp_end_i ? hlp_r0_i : 64'd0;
          sp_d      = SpIdle;
        end
      end
      default: begin
        if (run_q && id_valid_q && id_special
            && (drained || ((ex_empty || ex_plain) && (d_helper || (d_exit && depth_q == '0))))) begin
          if (d_call) begin
            if (call_deep) begin
              sp_finish = 1'b1;
              sp_fault  = 1'b1;
              sp_r0     = 64'd0;
            end else begin
              fr_we       = 1'b1;
              sp_redirect = 1'b1;
            end
          end else if (d_exit) begin
            if (depth_q == '0) begin
              sp_finish = 1'b1;
              sp_r0     = id_fwd(4'd0);
            end else begin
              fr_rd = 1'b1;
              sp_d  = SpRet;
            end
          end else if (map_call && !gk_ptr_ok) begin
            sp_finish = 1'b1;   // a key or value outside the data memory
            sp_fault  = 1'b1;
            sp_r0     = 64'd0;
          end else begin
            sp_d = map_call ? SpKey : SpHlp;
          end
        end
      end
    endcase
  end

  ebpflow_frames #(
    .FRAMES (STACK_FRAMES),
    .FW     (FW)
  ) u_frames (
    .clk_i     (clk_i),
    .we_i      (fr_we),
    .wr_idx_i  (depth_q),
    .wr_data_i ({rf_q[9*64 +: 64], rf_q[8*64 +: 64], rf_q[7*64 +: 64], rf_q[6*64 +: 64],
                 {(32-IW){1'b0}}, id_pc_q + 1'b1}),
    .rd_en_i   (fr_rd),
    .rd_idx_i  (depth_q - 1'b1),
    .rd_data_o (fr_rdata)
  );

  // A map helper asks in the cycle its last key or value word arrives (SpKey, every word read), any other at once.
  assign hlp_req_o   = (sp_q == SpHlp) || (sp_q == SpKey && gk_q == gk_n);
  assign hlp_kfunc_o = d_kfunc;
  logic [63:0] callx_reg;
  assign callx_reg   = id_fwd(d_dst);
  assign hlp_id_o    = (d_x && !d_kfunc) ? callx_reg[31:0] : d_imm;
  // r1-r5 with MEM's and WB's results: a helper acts once EX is empty, when MEM and WB may still write them.
  genvar ga;
  generate
    for (ga = 1; ga <= 5; ga = ga + 1) begin : g_args
      assign hlp_args_o[(ga-1)*64 +: 64] = id_fwd(4'(ga));
    end
  endgenerate

  // The run ends: EX's fault or legacy load, or ID's exit, helper or call depth.
  assign finish = run_q && (ex_bad || ex_leg_out || sp_finish);

  // ID waits for EX, for a load's result, and for its own operations; a special slot advances when it acted.
  // (Calls and returns replace the slot in ID through sp_redirect; a finished helper call lets it advance.)
  assign id_stall = ex_stall || load_use || (id_special && !(sp_q == SpHlp && hlp_ack_i));
  assign id_go = run_q && id_valid_q && !id_stall && !ex_redirect;

  // IF: the slot ID holds next.
  logic [IW-1:0] fetch_pc;
  logic          fetch_en;
  always_comb begin
    fetch_en = 1'b0;
    fetch_pc = id_pc_q + 1'b1;
    if (!run_q) begin
      fetch_en = start_i;
      fetch_pc = '0;
    end else if (ex_redirect) begin
      fetch_en = 1'b1;
      fetch_pc = ex_target;
    end else if (sp_redirect) begin
      fetch_en = 1'b1;
      fetch_pc = sp_target;
    end else if (id_go) begin
      fetch_en = 1'b1;
      fetch_pc = d_ja ? d_ja_target : id_pc_q + 1'b1;
    end
  end
  assign imem_en_o   = fetch_en;
  assign imem_addr_o = fetch_pc;

  // ---------------------------------------------------------------------------------------------------------------
  // Registers
  // ---------------------------------------------------------------------------------------------------------------
  logic to_ex;   // ID's slot enters EX at this edge
  assign to_ex = id_go && !d_ja && !d_lddw_first && !id_special;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      run_q       <= 1'b0;
      rf_q        <= '0;
      depth_q     <= '0;
      len_q       <= 16'd0;
      cyc_q       <= 32'd0;
      done_q      <= 1'b0;
      fault_q     <= 1'b0;
      r0_q        <= 64'd0;
      cycles_q    <= 32'd0;
      id_valid_q  <= 1'b0;
      id_pc_q     <= '0;
      lddw_q      <= 1'b0;
      lddw_lo_q   <= 32'd0;
      lddw_dst_q  <= 4'd0;
      lddw_bad_q  <= 1'b0;
      sp_q        <= SpIdle;
      ex_valid_q  <= 1'b0;
      ex_kind_q   <= KNone;
      ex_pc_q     <= '0;
      ex_code_q   <= 8'd0;
      ex_dst_q    <= 4'd0;
      ex_src_q    <= 4'd0;
      ex_off_q    <= 16'd0;
      ex_imm_q    <= 64'd0;
      ex_a_q      <= 64'd0;
      ex_b_q      <= 64'd0;
      ex_c_q      <= 64'd0;
      ex_rd_q     <= 4'd0;
      ex_we_q     <= 1'b0;
      ex_late_q   <= 1'b0;
      mem_valid_q <= 1'b0;
      mem_kind_q  <= KNone;
      mem_rd_q    <= 4'd0;
      mem_we_q    <= 1'b0;
      mem_late_q  <= 1'b0;
      mem_res_q   <= 64'd0;
      mem_cmp_q   <= 64'd0;
      mem_size_q  <= 2'd0;
      mem_sx_q    <= 1'b0;
      mem_aop_q   <= 8'd0;
      mem_addr_q  <= '0;
      mem_mv_q    <= 1'b0;
      mem_mvdata_q <= 64'd0;
      gk_q        <= '0;
      gk_pend_q   <= 1'b0;
      gk_idx_q    <= '0;
      key_q       <= '0;
      val_q       <= '0;
      wb_valid_q  <= 1'b0;
      wb_rd_q     <= 4'd0;
      wb_we_q     <= 1'b0;
      wb_res_q    <= 64'd0;
    end else begin
      done_q <= 1'b0;
      if (!run_q) begin
        if (start_i) begin
          run_q      <= 1'b1;
          rf_q       <= '0;
          rf_q[1*64 +: 64]  <= (start_len_i == 16'd0) ? 64'd0 : FrameAddr;
          rf_q[2*64 +: 64]  <= {48'd0, start_len_i};
          rf_q[10*64 +: 64] <= StackTop0;
          depth_q    <= '0;
          len_q      <= start_len_i;
          cyc_q      <= 32'd1;
          fault_q    <= 1'b0;
          r0_q       <= 64'd0;
          id_valid_q <= 1'b1;
          id_pc_q    <= '0;
          lddw_q     <= 1'b0;
          sp_q       <= SpIdle;
        end
      end else if (finish) begin
        run_q       <= 1'b0;
        done_q      <= 1'b1;
        fault_q     <= ex_bad || sp_fault;
        r0_q        <= (ex_bad || ex_leg_out) ? 64'd0 : sp_r0;
        cycles_q    <= cyc_q;
        id_valid_q  <= 1'b0;
        ex_valid_q  <= 1'b0;
        mem_valid_q <= 1'b0;
        wb_valid_q  <= 1'b0;
        sp_q        <= SpIdle;
        lddw_q      <= 1'b0;
      end else begin
        cyc_q <= cyc_q + 1'b1;
        sp_q  <= sp_d;

        // WB: the register file (ID's own writes happen only with the pipeline empty).
        if (wb_write && wb_rd_q <= 4'd10) begin
          rf_q[wb_rd_q*64 +: 64] <= wb_res_q;
        end
        if (fr_we) begin
          rf_q[10*64 +: 64] <= reg_of(rf_q, 4'd10) + FrameBytes;
          depth_q           <= depth_q + 1'b1;
        end
        if (sp_q == SpRet) begin
          rf_q[6*64 +: 256] <= fr_rdata[32 +: 256];
          rf_q[10*64 +: 64] <= reg_of(rf_q, 4'd10) - FrameBytes;
          depth_q           <= depth_q - 1'b1;
        end
        if (sp_q == SpHlp && hlp_ack_i) begin
          rf_q[63:0] <= hlp_r0_i;
        end

        // MEM -> WB
        wb_valid_q <= mem_valid_q;
        wb_rd_q    <= mem_rd_q;
        wb_we_q    <= mem_we_q;
        wb_res_q   <= mem_out;

        // EX -> MEM
        mem_valid_q <= ex_go;
        mem_kind_q  <= ex_kind_q;
        mem_rd_q    <= ex_rd_q;
        mem_we_q    <= ex_we_q;
        mem_late_q  <= ex_late_q;
        mem_res_q   <= ex_res;
        mem_cmp_q   <= ex_c;
        mem_size_q  <= ex_lsize;
        mem_sx_q    <= (ex_kind_q == KLd) && (ex_code_q[7:5] == 3'd4);
        mem_aop_q   <= ex_imm_q[7:0];
        mem_addr_q  <= ex_addr[AW-1:0];
        mem_mv_q    <= ex_mv;
        mem_mvdata_q <= mv_rdata_i;

        // The map helper's key and value gather
        if (sp_q != SpKey) begin
          gk_q <= (gk_now && gk_rd) ? GW'(1) : '0;
        end else if (gk_rd) begin
          gk_q <= gk_q + 1'b1;
        end
        gk_pend_q <= gk_rd;
        gk_idx_q  <= gk_q;
        key_q <= key_d;
        val_q <= val_d;

        // ID -> EX, or EX holds with its operands refreshed from the forwarding paths
        if (ex_stall) begin
          ex_a_q <= ex_a;
          ex_b_q <= ex_b;
          ex_c_q <= ex_c;
        end else begin
          ex_valid_q <= to_ex;
          ex_kind_q  <= d_kind;
          ex_pc_q    <= id_pc_q;
          ex_code_q  <= lddw_q ? 8'h18 : d_code;
          ex_dst_q   <= d_dst;
          ex_src_q   <= d_src;
          ex_off_q   <= d_off;
          ex_imm_q   <= lddw_q ? {d_imm, lddw_lo_q} : {{32{d_imm[31]}}, d_imm};
          ex_a_q     <= id_a;
          ex_b_q     <= id_b;
          ex_c_q     <= id_c;
          ex_rd_q    <= d_rd;
          ex_we_q    <= d_we;
          ex_late_q  <= d_late;
        end

        // ID
        if (ex_redirect || sp_redirect || id_go) begin
          id_pc_q <= fetch_pc;
          lddw_q  <= id_go && !ex_redirect && !sp_redirect && d_lddw_first;
        end
        if (id_go && d_lddw_first) begin
          lddw_lo_q  <= d_imm;
          lddw_dst_q <= d_dst;
          lddw_bad_q <= (d_src != 4'd0) || (d_dst > 4'd10);
        end
      end
    end
  end

  logic unused;
  assign unused = ^{fr_rdata[31:IW], callx_reg[63:32], gk_addr[63:AW]};

  assign busy_o   = run_q;
  assign done_o   = done_q;
  assign fault_o  = fault_q;
  assign r0_o     = r0_q;
  assign cycles_o = cycles_q;

endmodule
