`default_nettype none
// Packet page of the Active Packet Selector: frames in from the input queue, byte-aligned lane reads and writes
// (writes through the difference buffer), and emission of the modified packet as frames.
//
// The page is docs/memory-model.md's: PAGE_BYTES bytes, packet data from byte HEADROOM. This module instantiates
// the difference buffer (rtl/sephirot/diff_buffer.sv); every page offset below wraps modulo PAGE_BYTES.
//
// - clear_i starts a new packet: length 0, no frame stored, the difference buffer emptied. Every byte of the page
//   that no input frame has stored since (the headroom, and everything from the packet's end on) reads as zero,
//   as the kernel's headroom is zero at entry and adjust_tail zeroes the bytes it grows. Assert clear_i only
//   while emit_busy_o is low.
// - Input (AXI4-Stream-like, one FRAME_BYTES frame a beat, byte 0 in bits 7:0): the n-th beat since clear_i is
//   stored at page offset HEADROOM + n * FRAME_BYTES, its bytes outside in_keep_i stored as zero; in_keep_i is
//   contiguous from byte 0 and all ones on every beat but the last. len_o counts the kept bytes, complete_o rises
//   after the in_last_i beat, and in_ready_o is low from then until clear_i. Beats beyond the page's end are
//   accepted and dropped (the input queue refuses frames over 3520 bytes, as the kernel does).
// - Reads, per lane: rd_en_i[l] with rd_addr_i[l] (page offset, any alignment) and rd_bytes_i[l] (1..8; 0 reads
//   nothing, larger values act as 8). From the next cycle on rd_data_o[l] holds those bytes little-endian,
//   zero-extended: the frames stored before the request cycle, with the difference buffer's contents of the
//   current cycle overlaid (so it includes writes made in the request cycle and earlier). A read must not run
//   ahead of the input: frames not yet stored read as zero (the APS stalls the core; see len_o, complete_o).
// - Writes, per lane (wr_*, as diff_buffer documents them): held in the difference buffer, applied in lane order.
//   overflow_o: the difference buffer ran out of entries; the core must abort the packet (XDP_ABORTED).
// - Emission: emit_i (ignored while emit_busy_o) with emit_lo_i/emit_hi_i, the page offsets of the packet's first
//   byte and one past its last (emit_lo_i may lie in the headroom after bpf_xdp_adjust_head). If emit_hi_i >
//   emit_lo_i the bytes emit_lo_i..emit_hi_i-1 leave as beats of FRAME_BYTES on out_* (AXI4-Stream, byte 0 in
//   bits 7:0), the last beat's out_keep_o shorter and its unkept bytes zero, with the difference buffer
//   overlaid; the first beat is valid two cycles after emit_i and, without backpressure, one beat follows every
//   cycle. emit_busy_o is high from the cycle after emit_i until the last beat's handshake (for an empty range,
//   never: nothing is sent). Emitting one packet while the next arrives needs a second page (the APS's job).
//
// Storage: the page is two banks, even and odd frames, so that any 8-byte access (or any FRAME_BYTES emission
// window) reads one frame from each bank; the banks are copied LANES + 1 times (one copy per lane, one for
// emission), each copy written by the input and read by its one user, so every copy is a simple dual-port RAM
// (Yosys maps the ten 64 x 256-bit banks to distributed RAM, RAM64M8, for UltraScale+).
module pkt_buffer #(
  parameter integer LANES       = 4,     // Sephirot's lanes: read and write ports
  parameter integer FRAME_BYTES = 32,    // input and output beat, a power of two from 8 up
  parameter integer PAGE_BYTES  = 4096,  // the page, a power of two up to 4096
  parameter integer HEADROOM    = 256,   // where packet data starts, a multiple of FRAME_BYTES
  parameter integer ENTRIES     = 32     // the difference buffer's words
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     clear_i,

  input  logic                     in_valid_i,
  output logic                     in_ready_o,
  input  logic [8*FRAME_BYTES-1:0] in_data_i,
  input  logic [FRAME_BYTES-1:0]   in_keep_i,
  input  logic                     in_last_i,
  output logic [11:0]              len_o,
  output logic                     complete_o,

  input  logic [LANES-1:0]         rd_en_i,
  input  logic [LANES*12-1:0]      rd_addr_i,
  input  logic [LANES*4-1:0]       rd_bytes_i,
  output logic [LANES*64-1:0]      rd_data_o,

  input  logic [LANES-1:0]         wr_en_i,
  input  logic [LANES*12-1:0]      wr_addr_i,
  input  logic [LANES*4-1:0]       wr_bytes_i,
  input  logic [LANES*64-1:0]      wr_data_i,
  output logic                     overflow_o,

  input  logic                     emit_i,
  input  logic [11:0]              emit_lo_i,
  input  logic [11:0]              emit_hi_i,
  output logic                     emit_busy_o,
  output logic                     out_valid_o,
  input  logic                     out_ready_i,
  output logic [8*FRAME_BYTES-1:0] out_data_o,
  output logic [FRAME_BYTES-1:0]   out_keep_o,
  output logic                     out_last_o
);

  localparam integer FW         = 8 * FRAME_BYTES;          // frame bits
  localparam integer Frames     = PAGE_BYTES / FRAME_BYTES;
  localparam integer FrameW     = $clog2(Frames);           // frame index bits
  localparam integer OffW       = $clog2(FRAME_BYTES);      // byte-in-frame bits
  localparam integer Half       = Frames / 2;               // frames per bank
  localparam integer FirstFrame = HEADROOM / FRAME_BYTES;
  localparam integer Copies     = LANES + 1;                // copy LANES serves emission
  localparam integer CountW     = FrameW + 1;               // holds 0..Frames

  localparam [CountW-1:0] FirstCount  = CountW'(FirstFrame);
  localparam [CountW-1:0] FramesCount = CountW'(Frames);
  localparam [11:0]       FrameLen    = 12'(FRAME_BYTES);

  // ---------------------------------------------------------------------------------------------------------
  // Input: frames stored consecutively from FirstFrame.
  logic [CountW-1:0] stored_q;     // frames stored since clear_i
  logic [11:0]       len_q;
  logic              complete_q;
  logic              in_fire;
  logic              wr_frame_en;
  logic [FrameW-1:0] wr_frame_idx;
  logic [FW-1:0]     wr_frame_data;
  logic [11:0]       keep_count;
  integer            ib;

  always_comb begin
    in_fire       = in_valid_i & in_ready_o;
    wr_frame_en   = in_fire & ((FirstCount + stored_q) < FramesCount);
    wr_frame_idx  = FrameW'(FirstCount + stored_q);
    wr_frame_data = '0;
    keep_count    = '0;
    for (ib = 0; ib < FRAME_BYTES; ib = ib + 1) begin
      if (in_keep_i[ib]) begin
        wr_frame_data[8*ib +: 8] = in_data_i[8*ib +: 8];
        keep_count               = keep_count + 12'd1;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      stored_q   <= '0;
      len_q      <= '0;
      complete_q <= 1'b0;
    end else if (clear_i) begin
      stored_q   <= '0;
      len_q      <= '0;
      complete_q <= 1'b0;
    end else if (in_fire) begin
      if (wr_frame_en) begin
        stored_q <= stored_q + 1'b1;
        len_q    <= len_q + keep_count;
      end
      complete_q <= in_last_i;
    end
  end

  assign in_ready_o = ~complete_q;
  assign len_o      = len_q;
  assign complete_o = complete_q;

  // A frame holds stored data when the input has written it since clear_i.
  function automatic logic frame_stored(input logic [FrameW-1:0] frame, input logic [CountW-1:0] stored);
    frame_stored = ({1'b0, frame} >= FirstCount) && ({1'b0, frame} < FirstCount + stored);
  endfunction

  // ---------------------------------------------------------------------------------------------------------
  // The copies. Copy c reads, when enabled, frame f of its offset and the one after: the even bank holds
  // whichever of f, f+1 is even at (f+1)/2, the odd bank the other at f/2. With the read it registers the offset
  // and whether the two frames were stored, and from those builds window: the two frames in page order, zero where
  // not stored, 2 * FRAME_BYTES bytes from the start of the offset's frame.
  logic [Copies-1:0]        copy_rd_en;
  logic [Copies*12-1:0]     copy_rd_addr;
  logic [Copies*12-1:0]     copy_addr_q;   // the offset of the data each copy holds
  logic [Copies*2*FW-1:0]   window;
  logic [11:0]              em_rd_addr;    // page offset of the emission beat read this cycle

  assign copy_rd_en   = {1'b1, rd_en_i};
  assign copy_rd_addr = {em_rd_addr, rd_addr_i};

  genvar gc;
  generate
    for (gc = 0; gc < Copies; gc = gc + 1) begin : g_copy
      logic [FW-1:0]     even_mem [Half];
      logic [FW-1:0]     odd_mem  [Half];
      logic [FW-1:0]     even_q;
      logic [FW-1:0]     odd_q;
      logic [11:0]       addr;
      logic [11:0]       addr_q;
      logic [FrameW-1:0] frame;
      logic [FrameW-1:0] frame_next;
      logic              lo_ok_q;
      logic              hi_ok_q;
      logic [2*FW-1:0]   win;

      assign addr       = copy_rd_addr[12*gc +: 12];
      assign frame      = addr[OffW +: FrameW];
      assign frame_next = frame + 1'b1;

      always_ff @(posedge clk_i) begin
        if (wr_frame_en && !wr_frame_idx[0]) begin
          even_mem[wr_frame_idx[FrameW-1:1]] <= wr_frame_data;
        end
        if (copy_rd_en[gc]) begin
          even_q <= even_mem[frame_next[FrameW-1:1]];
        end
      end

      always_ff @(posedge clk_i) begin
        if (wr_frame_en && wr_frame_idx[0]) begin
          odd_mem[wr_frame_idx[FrameW-1:1]] <= wr_frame_data;
        end
        if (copy_rd_en[gc]) begin
          odd_q <= odd_mem[frame[FrameW-1:1]];
        end
      end

      always_ff @(posedge clk_i or negedge rst_ni) begin
        if (!rst_ni) begin
          addr_q  <= '0;
          lo_ok_q <= 1'b0;
          hi_ok_q <= 1'b0;
        end else if (copy_rd_en[gc]) begin
          addr_q  <= addr;
          lo_ok_q <= frame_stored(frame, stored_q);
          hi_ok_q <= frame_stored(frame_next, stored_q);
        end
      end

      always_comb begin
        if (addr_q[OffW]) begin  // an odd frame first
          win = {hi_ok_q ? even_q : {FW{1'b0}}, lo_ok_q ? odd_q : {FW{1'b0}}};
        end else begin
          win = {hi_ok_q ? odd_q : {FW{1'b0}}, lo_ok_q ? even_q : {FW{1'b0}}};
        end
      end

      assign copy_addr_q[12*gc +: 12]  = addr_q;
      assign window[2*FW*gc +: 2*FW]   = win;
    end
  endgenerate

  // ---------------------------------------------------------------------------------------------------------
  // Lane reads: 8 bytes from the window at the offset's byte in its frame; the difference buffer overlays them
  // (and zeroes the bytes beyond the registered width).
  logic [LANES*4-1:0]  rd_bytes_q;
  logic [LANES*64-1:0] ov_base;
  integer              rl;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_bytes_q <= '0;
    end else begin
      for (rl = 0; rl < LANES; rl = rl + 1) begin
        if (rd_en_i[rl]) begin
          rd_bytes_q[4*rl +: 4] <= rd_bytes_i[4*rl +: 4];
        end
      end
    end
  end

  genvar gl;
  generate
    for (gl = 0; gl < LANES; gl = gl + 1) begin : g_lane
      logic [2*FW-1:0] win;
      logic [OffW-1:0] off;
      logic [63:0]     base;
      integer          k;

      assign win = window[2*FW*gl +: 2*FW];
      assign off = copy_addr_q[12*gl +: OffW];

      // The access's bytes start at byte off of the window: an AND-OR over the offsets.
      always_comb begin
        base = '0;
        for (k = 0; k < FRAME_BYTES; k = k + 1) begin
          base = base | ({64{off == k[OffW-1:0]}} & win[8*k +: 64]);
        end
      end

      assign ov_base[64*gl +: 64] = base;
    end
  endgenerate

  // ---------------------------------------------------------------------------------------------------------
  // Emission: a two-stage pipeline. Stage one reads the frames of the next beat (next_*); stage two (beat_*)
  // holds the beat on out_*. While out_* stalls, stage one reads the held beat again so the copy's output stays.
  logic        busy_q, busy_d;          // beats left to read
  logic [11:0] next_addr_q, next_addr_d;
  logic [11:0] next_left_q, next_left_d; // bytes from next_addr_q to the packet's end
  logic        beat_valid_q, beat_valid_d;
  logic [11:0] beat_left_q, beat_left_d;
  logic        em_advance;
  logic [11:0] beat_addr;               // page offset of the beat on out_*

  always_comb begin
    em_advance   = ~beat_valid_q | out_ready_i;
    em_rd_addr   = em_advance ? next_addr_q : beat_addr;
    busy_d       = busy_q;
    next_addr_d  = next_addr_q;
    next_left_d  = next_left_q;
    beat_valid_d = beat_valid_q;
    beat_left_d  = beat_left_q;
    if (em_advance) begin
      beat_valid_d = busy_q;
      beat_left_d  = next_left_q;
      if (busy_q) begin
        busy_d      = next_left_q > FrameLen;
        next_addr_d = next_addr_q + FrameLen;
        next_left_d = next_left_q - FrameLen;
      end
    end
    if (emit_i && !emit_busy_o) begin
      busy_d      = emit_hi_i > emit_lo_i;
      next_addr_d = emit_lo_i;
      next_left_d = emit_hi_i - emit_lo_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q       <= 1'b0;
      next_addr_q  <= '0;
      next_left_q  <= '0;
      beat_valid_q <= 1'b0;
      beat_left_q  <= '0;
    end else begin
      busy_q       <= busy_d;
      next_addr_q  <= next_addr_d;
      next_left_q  <= next_left_d;
      beat_valid_q <= beat_valid_d;
      beat_left_q  <= beat_left_d;
    end
  end

  logic [FW-1:0]   em_base;
  logic [FW-1:0]   em_data;
  logic [2*FW-1:0] em_win;
  logic [OffW-1:0] em_off;
  integer          eb;

  assign beat_addr = copy_addr_q[12*LANES +: 12];
  assign em_win    = window[2*FW*LANES +: 2*FW];
  assign em_off    = beat_addr[OffW-1:0];

  always_comb begin
    em_base = '0;
    for (eb = 0; eb < FRAME_BYTES; eb = eb + 1) begin
      em_base = em_base | ({FW{em_off == eb[OffW-1:0]}} & em_win[8*eb +: FW]);
    end
  end

  always_comb begin
    for (eb = 0; eb < FRAME_BYTES; eb = eb + 1) begin
      out_keep_o[eb]        = 12'(eb) < beat_left_q;
      out_data_o[8*eb +: 8] = out_keep_o[eb] ? em_data[8*eb +: 8] : 8'd0;
    end
  end

  assign out_valid_o = beat_valid_q;
  assign out_last_o  = beat_left_q <= FrameLen;
  assign emit_busy_o = busy_q | beat_valid_q;

  // ---------------------------------------------------------------------------------------------------------
  diff_buffer #(
    .LANES       (LANES),
    .ENTRIES     (ENTRIES),
    .FRAME_BYTES (FRAME_BYTES)
  ) u_diff (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (clear_i),
    .wr_en_i    (wr_en_i),
    .wr_addr_i  (wr_addr_i),
    .wr_bytes_i (wr_bytes_i),
    .wr_data_i  (wr_data_i),
    .overflow_o (overflow_o),
    .ov_addr_i  (copy_addr_q[12*LANES-1:0]),
    .ov_bytes_i (rd_bytes_q),
    .ov_base_i  (ov_base),
    .ov_data_o  (rd_data_o),
    .fr_addr_i  (beat_addr),
    .fr_base_i  (em_base),
    .fr_data_o  (em_data)
  );

endmodule
