`default_nettype none
// The Warp Engine (warping paper, section 5): splitter, key extractors, TCAM, action/register/stack configuration
// memories and the two context-restoration pipelines, one packet per clock, with a side record per packet.
//
// Datapath (each box one register stage advancing with `adv`, docs/warp.md "The engine in Verilog"):
//   ingress: AXI4-Stream beats go whole into the packet RAM (the delay element that keeps each packet beside its
//     context); the splitter copies the first CHUNK bytes (zero past the end) and counts the length; on tlast the
//     packet's descriptor (chunk, length, RAM address, beats) enters stage S0.
//   K1..K<KEY_EXTRACTORS>: one key extractor each (warp_key_stage), configured once per program.
//   T1, T2: the TCAM (warp_tcam): slice reads, then AND and priority (the lowest matching line).
//   M: the action, register-configuration and stack-configuration lines of the matching line, read in parallel.
//   R0..R<RSTAGES-1>: the register pipeline beside the stack pipeline (warp_extract): extractor i reads its 8 bytes
//     of the chunk in stage i and makes its value in stage i + 1; the register pipeline's last stage (9 extractors
//     against the stack's 10) is its delay element. Every stage carries the chunk, the length and the lines.
//   output: the packet's beats read back from the packet RAM, each with the packet's record on m_*.
// Latency: a packet's first output beat leaves 30 clocks after its last input beat with downstream ready (S0, 12 key
// stages, T1, T2, M, 11 restore stages, the reader, the RAM read, the output queue). Only a stalled output stops the pipeline: every stage advances
// while the last stage is empty or its packet is being emitted; the input stalls on a full packet RAM (PKT_DEPTH
// beats: a frame longer than that never enters) or on a tlast beat while the pipeline is stopped.
//
// Input: packed AXI4-Stream (only the last beat of a frame may have tkeep bits clear, and only its high ones).
// Output: m_axis_* the frame unchanged, and for every beat of it, the frame's record (held for the whole frame):
//   m_hit_o a rule matched (else the processor runs the frame from the start and the other fields are 0);
//   m_rule_o its priority; m_retval_o the action line's r0: with m_verdict_o (a verdict) the return value, else
//   the r0 the processor resumes with (zero-extended; 0 where r0 is dead);
//   else (restore) m_slot_o the slot the processor starts at, m_warped_o the instructions the engine ran,
//   m_reg_kind_o/m_reg_value_o r1..r9 (4 bits and 64 bits each, r1 lowest): kind 0 not restored (0), 1 scalar
//   value, 2 the context, 3 data + value, 4 data_end + value, 5 r10 + value, 6 map number value;
//   m_stack_*_o the stack writes in order (STACK_EXTRACTORS slots): size (0: none, 1..8 bytes), offset
//   (r10-relative, two's complement), kind and value as for the registers (the low `size` bytes of a scalar are
//   written; a pointer is written whole);
//   m_len_o the frame's length in bytes.
//
// Configuration port (load time; cfg_we_i writes the 64-bit cfg_wdata_i):
//   cfg_sel_i 0: key extractor stage cfg_addr_i (warp_key_stage's word)
//             1: TCAM slice cfg_word_i, word cfg_addr_i (warp_tcam; the low TCAM_ENTRIES bits)
//             2: action line cfg_addr_i, word cfg_word_i: word 0 [0] verdict, [31:16] rule, [63:32] r0;
//                word 1 [31:0] slot, [63:32] warped instructions
//             3: register line cfg_addr_i, word cfg_word_i: extractor e is words 2e (warp_extract's cfg_a, with
//                [7:4] the register, 1..9, 0 for none) and 2e + 1 (cfg_b)
//             4: stack line cfg_addr_i, word cfg_word_i: extractor e is words 2e (cfg_a, with [7:4] the size, 0 for
//                none, and [47:32] the r10-relative offset) and 2e + 1 (cfg_b)
// Line e of the three memories belongs to TCAM line e (a rule with several entries has its lines repeated).
module warp_engine #(
  parameter integer DATA_W           = 512,  // AXI4-Stream data bits
  parameter integer CHUNK            = 128,  // bytes the key and the restores read
  parameter integer KEY_BYTES        = 16,   // lookup key bytes
  parameter integer KEY_EXTRACTORS   = 12,   // key extractor stages
  parameter integer KEY_READ         = 2,    // bytes one key extractor reads
  parameter integer TCAM_ENTRIES     = 64,   // TCAM lines (and lines of each configuration memory), 8..64
  parameter integer REG_EXTRACTORS   = 9,    // register extractor stages
  parameter integer STACK_EXTRACTORS = 10,   // stack extractor stages
  parameter integer PKT_DEPTH        = 512,  // packet RAM beats, a power of two
  parameter integer KEEP_W           = DATA_W / 8,
  parameter integer STK              = STACK_EXTRACTORS
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic [DATA_W-1:0]   s_axis_tdata_i,
  input  logic [KEEP_W-1:0]   s_axis_tkeep_i,
  input  logic                s_axis_tvalid_i,
  input  logic                s_axis_tlast_i,
  output logic                s_axis_tready_o,
  output logic [DATA_W-1:0]   m_axis_tdata_o,
  output logic [KEEP_W-1:0]   m_axis_tkeep_o,
  output logic                m_axis_tvalid_o,
  output logic                m_axis_tlast_o,
  input  logic                m_axis_tready_i,
  output logic                m_hit_o,
  output logic                m_verdict_o,
  output logic [15:0]         m_rule_o,
  output logic [31:0]         m_retval_o,
  output logic [31:0]         m_slot_o,
  output logic [31:0]         m_warped_o,
  output logic [15:0]         m_len_o,
  output logic [9*4-1:0]      m_reg_kind_o,
  output logic [9*64-1:0]     m_reg_value_o,
  output logic [STK*4-1:0]    m_stack_size_o,
  output logic [STK*16-1:0]   m_stack_off_o,
  output logic [STK*4-1:0]    m_stack_kind_o,
  output logic [STK*64-1:0]   m_stack_value_o,
  input  logic                cfg_we_i,
  input  logic [2:0]          cfg_sel_i,
  input  logic [15:0]         cfg_addr_i,
  input  logic [7:0]          cfg_word_i,
  input  logic [63:0]         cfg_wdata_i
);

  localparam integer CW      = CHUNK * 8;
  localparam integer KW      = KEY_BYTES * 8;
  localparam integer KX      = KEY_EXTRACTORS;
  localparam integer IW      = $clog2(TCAM_ENTRIES);
  localparam integer PAW     = $clog2(PKT_DEPTH);
  localparam integer TAG_W   = PAW + 16;           // RAM address, beats
  localparam integer RLW     = 128 * REG_EXTRACTORS;
  localparam integer SLW     = 128 * STK;
  localparam integer REGX    = REG_EXTRACTORS;
  localparam integer RSTAGES = (REGX > STK ? REGX : STK) + 1;
  localparam integer LINES   = TCAM_ENTRIES < 512 ? 512 : TCAM_ENTRIES;  // a block RAM's depth at least
  // The record: hit, verdict, rule, r0, slot, warped, length, registers, stack writes.
  localparam integer O_VERD  = 1;
  localparam integer O_RULE  = 2;
  localparam integer O_RET   = 18;
  localparam integer O_SLOT  = 50;
  localparam integer O_WARP  = 82;
  localparam integer O_LEN   = 114;
  localparam integer O_RK    = 130;
  localparam integer O_RV    = O_RK + 36;
  localparam integer O_SS    = O_RV + 576;
  localparam integer O_SO    = O_SS + STK * 4;
  localparam integer O_SK    = O_SO + STK * 16;
  localparam integer O_SV    = O_SK + STK * 4;
  localparam integer REC_W   = O_SV + STK * 64;

  // ---------------------------------------------------------------------------------------------- global advance
  logic adv;

  // ---------------------------------------------------------------------------------------------- ingress
  logic [PAW:0]    used_q;
  logic [PAW-1:0]  wp_q, start_q;
  logic [15:0]     beat_q, len_q;
  logic [CW-1:0]   chunk_q, chunk_d;
  logic            s_fire, rd_issue;
  logic [15:0]     len_d;
  logic [15:0]     beat_bytes;
  logic [PAW-1:0]  start_d;

  assign s_axis_tready_o = (used_q < PKT_DEPTH[PAW:0]) && (!s_axis_tlast_i || adv);
  assign s_fire          = s_axis_tvalid_i && s_axis_tready_o;

  always_comb begin
    beat_bytes = 16'd0;
    for (integer b = 0; b < KEEP_W; b++) beat_bytes = beat_bytes + {15'd0, s_axis_tkeep_i[b]};
    len_d   = ((beat_q == 16'd0) ? 16'd0 : len_q) + beat_bytes;
    start_d = (beat_q == 16'd0) ? wp_q : start_q;
    chunk_d = (beat_q == 16'd0) ? {CW{1'b0}} : chunk_q;
    for (integer j = 0; j < CHUNK; j++) begin
      if (j / KEEP_W == {16'd0, beat_q} && s_axis_tkeep_i[j % KEEP_W]) begin
        chunk_d[8*j +: 8] = s_axis_tdata_i[8*(j % KEEP_W) +: 8];
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      used_q  <= '0;
      wp_q    <= '0;
      beat_q  <= 16'd0;
    end else begin
      used_q <= used_q + {{PAW{1'b0}}, s_fire} - {{PAW{1'b0}}, rd_issue};
      if (s_fire) begin
        wp_q   <= wp_q + 1'b1;
        beat_q <= s_axis_tlast_i ? 16'd0 : beat_q + 16'd1;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (s_fire) begin
      chunk_q <= chunk_d;
      len_q   <= len_d;
      start_q <= start_d;
    end
  end

  // Stage S0: the descriptor of a frame whose last beat was just taken.
  logic            s0_valid;
  logic [CW-1:0]   s0_chunk;
  logic [15:0]     s0_len;
  logic [TAG_W-1:0] s0_tag;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) s0_valid <= 1'b0;
    else if (adv) s0_valid <= s_fire && s_axis_tlast_i;
  end

  always_ff @(posedge clk_i) begin
    if (adv) begin
      s0_chunk <= chunk_d;
      s0_len   <= len_d;
      s0_tag   <= {start_d, beat_q + 16'd1};
    end
  end

  // The packet RAM: every beat, read back by the output reader.
  logic [PAW-1:0]    rd_addr;
  logic [DATA_W-1:0] rd_data;

  for (genvar b = 0; b < DATA_W / 64; b++) begin : g_pkt
    ram_sdp #(
      .WIDTH(64),
      .DEPTH(PKT_DEPTH)
    ) u_bank (
      .clk_i    (clk_i),
      .wr_en_i  (s_fire),
      .wr_addr_i(wp_q),
      .wr_data_i(s_axis_tdata_i[64*b +: 64]),
      .wr_be_i  (8'hff),
      .rd_en_i  (rd_issue),
      .rd_addr_i(rd_addr),
      .rd_data_o(rd_data[64*b +: 64])
    );
  end

  // ---------------------------------------------------------------------------------------------- key extractors
  logic [63:0]            kcfg_q [0:KX-1];
  logic [KX:0]            k_valid;
  logic [(KX+1)*CW-1:0]   k_chunk;
  logic [(KX+1)*16-1:0]   k_len;
  logic [(KX+1)*KW-1:0]   k_key;
  logic [(KX+1)*TAG_W-1:0] k_tag;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (integer i = 0; i < KX; i++) kcfg_q[i] <= 64'd0;
    end else if (cfg_we_i && cfg_sel_i == 3'd0 && {16'd0, cfg_addr_i} < KX) begin
      kcfg_q[cfg_addr_i[$clog2(KX+1)-1:0]] <= cfg_wdata_i;
    end
  end

  assign k_valid[0]        = s0_valid;
  assign k_chunk[0 +: CW]  = s0_chunk;
  assign k_len[0 +: 16]    = s0_len;
  assign k_key[0 +: KW]    = {KW{1'b0}};
  assign k_tag[0 +: TAG_W] = s0_tag;

  for (genvar i = 0; i < KX; i++) begin : g_key
    warp_key_stage #(
      .CHUNK    (CHUNK),
      .KEY_BYTES(KEY_BYTES),
      .READ     (KEY_READ),
      .TAG_W    (TAG_W)
    ) u_stage (
      .clk_i  (clk_i),
      .rst_ni (rst_ni),
      .en_i   (adv),
      .cfg_i  (kcfg_q[i]),
      .valid_i(k_valid[i]),
      .chunk_i(k_chunk[i*CW +: CW]),
      .len_i  (k_len[i*16 +: 16]),
      .key_i  (k_key[i*KW +: KW]),
      .tag_i  (k_tag[i*TAG_W +: TAG_W]),
      .valid_o(k_valid[i+1]),
      .chunk_o(k_chunk[(i+1)*CW +: CW]),
      .len_o  (k_len[(i+1)*16 +: 16]),
      .key_o  (k_key[(i+1)*KW +: KW]),
      .tag_o  (k_tag[(i+1)*TAG_W +: TAG_W])
    );
  end

  // ---------------------------------------------------------------------------------------------- TCAM (T1, T2)
  logic          hit;
  logic [IW-1:0] index;
  logic [1:0]    t_valid_q;
  logic [CW-1:0] t_chunk_q [0:1];
  logic [15:0]   t_len_q [0:1];
  logic [TAG_W-1:0] t_tag_q [0:1];

  warp_tcam #(
    .KEY_BITS(KW),
    .ENTRIES (TCAM_ENTRIES)
  ) u_tcam (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .en_i       (adv),
    .key_i      (k_key[KX*KW +: KW]),
    .hit_o      (hit),
    .index_o    (index),
    .cfg_we_i   (cfg_we_i && cfg_sel_i == 3'd1),
    .cfg_slice_i(cfg_word_i),
    .cfg_addr_i (cfg_addr_i[8:0]),
    .cfg_data_i (cfg_wdata_i[TCAM_ENTRIES-1:0])
  );

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) t_valid_q <= 2'b00;
    else if (adv) t_valid_q <= {t_valid_q[0], k_valid[KX]};
  end

  always_ff @(posedge clk_i) begin
    if (adv) begin
      t_chunk_q[0] <= k_chunk[KX*CW +: CW];
      t_len_q[0]   <= k_len[KX*16 +: 16];
      t_tag_q[0]   <= k_tag[KX*TAG_W +: TAG_W];
      t_chunk_q[1] <= t_chunk_q[0];
      t_len_q[1]   <= t_len_q[0];
      t_tag_q[1]   <= t_tag_q[0];
    end
  end

  // ---------------------------------------------------------------------------------------------- memories (M)
  logic [127:0]   act_line;
  logic [RLW-1:0] reg_line;
  logic [SLW-1:0] stk_line;
  logic           m_valid_q, m_hit_q;
  logic [CW-1:0]  m_chunk_q;
  logic [15:0]    m_len_q;
  logic [TAG_W-1:0] m_tag_q;

  // One 64-bit RAM per configuration word (a line is 2, 2 * REG_EXTRACTORS or 2 * STACK_EXTRACTORS words).
  for (genvar w = 0; w < 2 + RLW / 64 + SLW / 64; w++) begin : g_line
    localparam integer Sel  = w < 2 ? 2 : (w < 2 + RLW / 64 ? 3 : 4);
    localparam integer Word = w < 2 ? w : (w < 2 + RLW / 64 ? w - 2 : w - 2 - RLW / 64);
    logic [63:0] word;
    ram_sdp #(
      .WIDTH(64),
      .DEPTH(LINES)
    ) u_bank (
      .clk_i    (clk_i),
      .wr_en_i  (cfg_we_i && {29'd0, cfg_sel_i} == Sel && {24'd0, cfg_word_i} == Word &&
                 {16'd0, cfg_addr_i} < TCAM_ENTRIES),
      .wr_addr_i(cfg_addr_i[$clog2(LINES)-1:0]),
      .wr_data_i(cfg_wdata_i),
      .wr_be_i  (8'hff),
      .rd_en_i  (adv),
      .rd_addr_i({{($clog2(LINES)-IW){1'b0}}, index}),
      .rd_data_o(word)
    );
    if (w < 2) begin : g_act
      assign act_line[64*w +: 64] = word;
    end else if (w < 2 + RLW / 64) begin : g_reg
      assign reg_line[64*(w-2) +: 64] = word;
    end else begin : g_stk
      assign stk_line[64*(w-2-RLW/64) +: 64] = word;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      m_valid_q <= 1'b0;
      m_hit_q   <= 1'b0;
    end else if (adv) begin
      m_valid_q <= t_valid_q[1];
      m_hit_q   <= hit;
    end
  end

  always_ff @(posedge clk_i) begin
    if (adv) begin
      m_chunk_q <= t_chunk_q[1];
      m_len_q   <= t_len_q[1];
      m_tag_q   <= t_tag_q[1];
    end
  end

  // ---------------------------------------------------------------------------------------------- restore (R)
  // Stage r's registers are element r of the r_* vectors; its inputs are element r of the x_* vectors (element 0:
  // stage M, element r: stage r - 1). Extractor e reads its 8 bytes in stage e and finishes its value in stage e + 1.
  logic [RSTAGES-1:0]         r_valid, r_hit;
  logic [RSTAGES*CW-1:0]      r_chunk;
  logic [RSTAGES*16-1:0]      r_len;
  logic [RSTAGES*TAG_W-1:0]   r_tag;
  logic [RSTAGES*128-1:0]     r_act;
  logic [RSTAGES*RLW-1:0]     r_rcfg;
  logic [RSTAGES*SLW-1:0]     r_scfg;
  logic [RSTAGES*64-1:0]      r_rwin, r_swin;
  logic [RSTAGES*36-1:0]      r_rkind;
  logic [RSTAGES*576-1:0]     r_rval;
  logic [RSTAGES*STK*88-1:0]  r_stk;  // per write: size 4, offset 16, kind 4, value 64

  logic [RSTAGES:0]             x_valid, x_hit;
  logic [(RSTAGES+1)*CW-1:0]    x_chunk;
  logic [(RSTAGES+1)*16-1:0]    x_len;
  logic [(RSTAGES+1)*TAG_W-1:0] x_tag;
  logic [(RSTAGES+1)*128-1:0]   x_act;
  logic [(RSTAGES+1)*RLW-1:0]   x_rcfg;
  logic [(RSTAGES+1)*SLW-1:0]   x_scfg;
  logic [(RSTAGES+1)*64-1:0]    x_rwin, x_swin;
  logic [(RSTAGES+1)*36-1:0]    x_rkind;
  logic [(RSTAGES+1)*576-1:0]   x_rval;
  logic [(RSTAGES+1)*STK*88-1:0] x_stk;

  assign x_valid = {r_valid, m_valid_q};
  assign x_hit   = {r_hit, m_hit_q};
  assign x_chunk = {r_chunk, m_chunk_q};
  assign x_len   = {r_len, m_len_q};
  assign x_tag   = {r_tag, m_tag_q};
  assign x_act   = {r_act, act_line};
  assign x_rcfg  = {r_rcfg, reg_line};
  assign x_scfg  = {r_scfg, stk_line};
  assign x_rwin  = {r_rwin, 64'd0};
  assign x_swin  = {r_swin, 64'd0};
  assign x_rkind = {r_rkind, 36'd0};
  assign x_rval  = {r_rval, 576'd0};
  assign x_stk   = {r_stk, {(STK*88){1'b0}}};

  // The extractors: reads in stage e, values in stage e + 1.
  logic [REGX*64-1:0] rx_window, rx_value;
  logic [REGX*4-1:0]  rx_kind;
  logic [STK*64-1:0]  sx_window, sx_value;
  logic [STK*4-1:0]   sx_kind;

  for (genvar e = 0; e < REGX; e++) begin : g_regx
    warp_extract #(.CHUNK(CHUNK)) u_x (
      .chunk_i   (x_chunk[e*CW +: CW]),
      .rd_cfg_a_i(x_rcfg[e*RLW + 128*e +: 64]),
      .window_o  (rx_window[64*e +: 64]),
      .window_i  (x_rwin[(e+1)*64 +: 64]),
      .len_i     (x_len[(e+1)*16 +: 16]),
      .cfg_a_i   (x_rcfg[(e+1)*RLW + 128*e +: 64]),
      .cfg_b_i   (x_rcfg[(e+1)*RLW + 128*e + 64 +: 64]),
      .kind_o    (rx_kind[4*e +: 4]),
      .value_o   (rx_value[64*e +: 64])
    );
  end

  for (genvar e = 0; e < STK; e++) begin : g_stkx
    warp_extract #(.CHUNK(CHUNK)) u_x (
      .chunk_i   (x_chunk[e*CW +: CW]),
      .rd_cfg_a_i(x_scfg[e*SLW + 128*e +: 64]),
      .window_o  (sx_window[64*e +: 64]),
      .window_i  (x_swin[(e+1)*64 +: 64]),
      .len_i     (x_len[(e+1)*16 +: 16]),
      .cfg_a_i   (x_scfg[(e+1)*SLW + 128*e +: 64]),
      .cfg_b_i   (x_scfg[(e+1)*SLW + 128*e + 64 +: 64]),
      .kind_o    (sx_kind[4*e +: 4]),
      .value_o   (sx_value[64*e +: 64])
    );
  end

  for (genvar r = 0; r < RSTAGES; r++) begin : g_restore
    logic [63:0]       rwin_d, swin_d;
    logic [35:0]       rkind_d;
    logic [575:0]      rval_d;
    logic [STK*88-1:0] stk_d;

    if (r < REGX) begin : g_rwin
      assign rwin_d = rx_window[64*r +: 64];
    end else begin : g_rwin_none
      assign rwin_d = 64'd0;
    end
    if (r < STK) begin : g_swin
      assign swin_d = sx_window[64*r +: 64];
    end else begin : g_swin_none
      assign swin_d = 64'd0;
    end

    if (r >= 1 && r <= REGX) begin : g_reg
      logic [3:0] which;
      logic       restore;
      assign which   = x_rcfg[r*RLW + 128*(r-1) + 4 +: 4];
      assign restore = x_valid[r] && x_hit[r] && !x_act[r*128];
      always_comb begin
        rkind_d = x_rkind[r*36 +: 36];
        rval_d  = x_rval[r*576 +: 576];
        for (integer g = 0; g < 9; g++) begin
          if (restore && {28'd0, which} == g + 1) begin
            rkind_d[4*g +: 4]  = rx_kind[4*(r-1) +: 4];
            rval_d[64*g +: 64] = rx_value[64*(r-1) +: 64];
          end
        end
      end
    end else begin : g_reg_delay
      assign rkind_d = x_rkind[r*36 +: 36];
      assign rval_d  = x_rval[r*576 +: 576];
    end

    if (r >= 1 && r <= STK) begin : g_stk
      logic [3:0]  size;
      logic [15:0] off;
      logic        restore;
      assign size    = x_scfg[r*SLW + 128*(r-1) + 4 +: 4];
      assign off     = x_scfg[r*SLW + 128*(r-1) + 32 +: 16];
      assign restore = x_valid[r] && x_hit[r] && !x_act[r*128];
      always_comb begin
        stk_d = x_stk[r*STK*88 +: STK*88];
        if (restore && size != 4'd0) begin
          stk_d[88*(r-1) +: 88] = {sx_value[64*(r-1) +: 64], sx_kind[4*(r-1) +: 4], off, size};
        end
      end
    end else begin : g_stk_delay
      assign stk_d = x_stk[r*STK*88 +: STK*88];
    end

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        r_valid[r] <= 1'b0;
        r_hit[r]   <= 1'b0;
      end else if (adv) begin
        r_valid[r] <= x_valid[r];
        r_hit[r]   <= x_hit[r] && x_valid[r];
      end
    end

    always_ff @(posedge clk_i) begin
      if (adv) begin
        r_chunk[r*CW +: CW]       <= x_chunk[r*CW +: CW];
        r_len[r*16 +: 16]         <= x_len[r*16 +: 16];
        r_tag[r*TAG_W +: TAG_W]   <= x_tag[r*TAG_W +: TAG_W];
        r_act[r*128 +: 128]       <= x_act[r*128 +: 128];
        r_rcfg[r*RLW +: RLW]      <= x_rcfg[r*RLW +: RLW];
        r_scfg[r*SLW +: SLW]      <= x_scfg[r*SLW +: SLW];
        r_rwin[r*64 +: 64]        <= rwin_d;
        r_swin[r*64 +: 64]        <= swin_d;
        r_rkind[r*36 +: 36]       <= rkind_d;
        r_rval[r*576 +: 576]      <= rval_d;
        r_stk[r*STK*88 +: STK*88] <= stk_d;
      end
    end
  end

  // The record of the frame at the last stage.
  logic             tail_valid;
  logic [REC_W-1:0] tail_rec;
  logic [TAG_W-1:0] tail_tag;
  logic             tail_hit, tail_verdict;
  logic [127:0]     tail_act;

  assign tail_valid   = r_valid[RSTAGES-1];
  assign tail_tag     = r_tag[(RSTAGES-1)*TAG_W +: TAG_W];
  assign tail_act     = r_act[(RSTAGES-1)*128 +: 128];
  assign tail_hit     = r_hit[RSTAGES-1];
  assign tail_verdict = tail_hit && tail_act[0];

  always_comb begin
    tail_rec = {REC_W{1'b0}};
    tail_rec[0]               = tail_hit;
    tail_rec[O_VERD]          = tail_verdict;
    tail_rec[O_LEN +: 16]     = r_len[(RSTAGES-1)*16 +: 16];
    if (tail_hit) begin
      tail_rec[O_RULE +: 16]  = tail_act[31:16];
      tail_rec[O_RET +: 32]   = tail_act[63:32];
    end
    if (tail_hit && !tail_verdict) begin
      tail_rec[O_SLOT +: 32]  = tail_act[95:64];
      tail_rec[O_WARP +: 32]  = tail_act[127:96];
      tail_rec[O_RK +: 36]    = r_rkind[(RSTAGES-1)*36 +: 36];
      tail_rec[O_RV +: 576]   = r_rval[(RSTAGES-1)*576 +: 576];
      for (integer w = 0; w < STK; w++) begin
        tail_rec[O_SS + 4*w +: 4]   = r_stk[(RSTAGES-1)*STK*88 + 88*w +: 4];
        tail_rec[O_SO + 16*w +: 16] = r_stk[(RSTAGES-1)*STK*88 + 88*w + 4 +: 16];
        tail_rec[O_SK + 4*w +: 4]   = r_stk[(RSTAGES-1)*STK*88 + 88*w + 20 +: 4];
        tail_rec[O_SV + 64*w +: 64] = r_stk[(RSTAGES-1)*STK*88 + 88*w + 24 +: 64];
      end
    end
  end

  // ---------------------------------------------------------------------------------------------- output reader
  // cur: the frame whose beats are being read from the packet RAM; fl: the beat read last clock; q: a three-entry
  // queue whose head is on m_axis. A read is issued only while the queue and the read in flight hold at most two
  // beats, so nothing the pipeline's advance depends on comes from m_axis_tready_i combinationally.
  logic             cur_valid_q;
  logic [PAW-1:0]   cur_addr_q;
  logic [15:0]      cur_left_q, cur_len_q;
  logic [REC_W-1:0] cur_rec_q;
  logic             load_next, can_issue, pop;
  logic             fl_valid_q, fl_last_q;
  logic [KEEP_W-1:0] fl_keep_q, issue_keep;
  logic [REC_W-1:0] fl_rec_q;
  logic [1:0]       q_cnt_q, q_at;
  logic [DATA_W-1:0] q_data_q [0:2];
  logic [KEEP_W-1:0] q_keep_q [0:2];
  logic             q_last_q [0:2];
  logic [REC_W-1:0] q_rec_q [0:2];
  logic [15:0]      last_bytes;

  assign pop       = m_axis_tvalid_o && m_axis_tready_i;
  assign can_issue = ({1'b0, q_cnt_q} + {2'b00, fl_valid_q}) < 3'd3;
  assign rd_issue  = cur_valid_q && can_issue;
  assign rd_addr   = cur_addr_q;
  assign load_next = !cur_valid_q || (rd_issue && cur_left_q == 16'd1);
  assign adv       = !tail_valid || load_next;
  assign q_at      = q_cnt_q - {1'b0, pop};

  assign last_bytes = (cur_len_q % KEEP_W[15:0] == 16'd0) ? KEEP_W[15:0] : cur_len_q % KEEP_W[15:0];
  always_comb begin
    issue_keep = {KEEP_W{1'b1}};
    if (cur_left_q == 16'd1) begin
      for (integer b = 0; b < KEEP_W; b++) issue_keep[b] = b < {16'd0, last_bytes};
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cur_valid_q <= 1'b0;
      fl_valid_q  <= 1'b0;
      q_cnt_q     <= 2'd0;
    end else begin
      if (load_next) cur_valid_q <= tail_valid;
      fl_valid_q <= rd_issue;
      q_cnt_q    <= q_at + {1'b0, fl_valid_q};
    end
  end

  always_ff @(posedge clk_i) begin
    if (load_next) begin
      cur_addr_q <= tail_tag[TAG_W-1 -: PAW];
      cur_left_q <= tail_tag[15:0];
      cur_len_q  <= r_len[(RSTAGES-1)*16 +: 16];
      cur_rec_q  <= tail_rec;
    end else if (rd_issue) begin
      cur_addr_q <= cur_addr_q + 1'b1;
      cur_left_q <= cur_left_q - 16'd1;
    end
    if (rd_issue) begin
      fl_keep_q <= issue_keep;
      fl_last_q <= cur_left_q == 16'd1;
      fl_rec_q  <= cur_rec_q;
    end
    for (integer i = 0; i < 3; i++) begin
      if (fl_valid_q && q_at == i[1:0]) begin
        q_data_q[i] <= rd_data;
        q_keep_q[i] <= fl_keep_q;
        q_last_q[i] <= fl_last_q;
        q_rec_q[i]  <= fl_rec_q;
      end else if (pop && i < 2) begin
        q_data_q[i] <= q_data_q[i+1];
        q_keep_q[i] <= q_keep_q[i+1];
        q_last_q[i] <= q_last_q[i+1];
        q_rec_q[i]  <= q_rec_q[i+1];
      end
    end
  end

  assign m_axis_tvalid_o = q_cnt_q != 2'd0;
  assign m_axis_tdata_o  = q_data_q[0];
  assign m_axis_tkeep_o  = q_keep_q[0];
  assign m_axis_tlast_o  = q_last_q[0];

  logic [REC_W-1:0] rec;
  assign rec             = q_rec_q[0];
  assign m_hit_o         = rec[0];
  assign m_verdict_o     = rec[O_VERD];
  assign m_rule_o        = rec[O_RULE +: 16];
  assign m_retval_o      = rec[O_RET +: 32];
  assign m_slot_o        = rec[O_SLOT +: 32];
  assign m_warped_o      = rec[O_WARP +: 32];
  assign m_len_o         = rec[O_LEN +: 16];
  assign m_reg_kind_o    = rec[O_RK +: 36];
  assign m_reg_value_o   = rec[O_RV +: 576];
  assign m_stack_size_o  = rec[O_SS +: STK*4];
  assign m_stack_off_o   = rec[O_SO +: STK*16];
  assign m_stack_kind_o  = rec[O_SK +: STK*4];
  assign m_stack_value_o = rec[O_SV +: STK*64];

  logic unused;
  assign unused = ^{cfg_addr_i, cfg_wdata_i, tail_act[15:1], cfg_word_i, x_valid[RSTAGES], x_hit[RSTAGES],
                    x_chunk[RSTAGES*CW +: CW], x_len[RSTAGES*16 +: 16], x_tag[RSTAGES*TAG_W +: TAG_W],
                    x_act[RSTAGES*128 +: 128], x_rcfg[RSTAGES*RLW +: RLW], x_scfg[RSTAGES*SLW +: SLW],
                    x_rwin, x_swin, x_rkind[RSTAGES*36 +: 36], x_rval[RSTAGES*576 +: 576],
                    x_stk[RSTAGES*STK*88 +: STK*88]};

endmodule
