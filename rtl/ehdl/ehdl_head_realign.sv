`default_nettype none
// eHDL output realigner for bpf_xdp_adjust_head: turns the pipeline's frames back into an aligned AXI4-Stream packet.
//
// The pipeline keeps every byte at the position where it arrived (frame f holds bytes f*FB .. f*FB+FB-1), so moving
// `data` is only a per-packet signed shift: data now starts at byte `shift` (negative: prepended bytes, which the
// program may have written into the EXT head extension bytes, positions -EXT .. -1). Rearranging bytes in the
// pipeline would cost a shifter per stage; here one shifter at the exit does it.
//
// Output beat k starts at position shift + k*FB. Every beat but possibly the last spans two adjacent frames
// (previous, current) at one offset m in [0, FB] that is constant for the packet, so one funnel shifter of the
// previous frame (or, for frame 0, the extension bytes as frame -1) and the arriving frame does it, and each beat
// leaves in the cycle its second frame arrives, combinationally: shift 0 passes through with no latency (m = FB).
// r_q counts the bytes still to skip: while it exceeds FB whole frames are skipped; once it is at most 0 every
// frame emits one beat. A one-beat packet whose bytes all lie in the frame before that leaves with it (early).
// When the last frame has come and a beat remains (the packet grew by up to EXT <= FB bytes, or two beats fell due
// with frame 0 when shift = -FB), hold_q stops the pipeline from the next cycle and the beat leaves from the stored
// last frame as soon as the FIFO has space. Frames after the packet's length are dropped.
module ehdl_head_realign #(
  parameter integer DW  = 512,  // bus width in bits, multiple of 64; FB = DW/8
  parameter integer EXT = 64,   // head extension bytes, multiple of 8, 8 <= EXT <= DW/8
  parameter integer LW  = 16,   // length/shift bits
  parameter integer UW  = 74    // tuser width
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             push_i,    // a frame leaves the pipeline (never while hold_o; only while space_i)
  input  logic [DW-1:0]    data_i,    // the frame, byte 0 in bits [7:0]
  input  logic             first_i,   // frame 0; shift_i, len_i, ext_i, user_i are valid with it
  input  logic             last_i,    // the packet's last frame
  input  logic [LW-1:0]    shift_i,   // two's complement start of data from the first arrived byte, >= -EXT
  input  logic [LW-1:0]    len_i,     // bytes to emit, >= 1; shift_i + len_i <= the bytes that arrive
  input  logic [8*EXT-1:0] ext_i,     // byte i is the byte at position i - EXT
  input  logic [UW-1:0]    user_i,    // tuser of every beat of the packet
  input  logic             space_i,   // the output FIFO takes a beat this cycle
  output logic             hold_o,    // registered: the pipeline must not push
  output logic             push_o,    // a beat for the FIFO (only with space_i)
  output logic [DW-1:0]    data_o,
  output logic [DW/8-1:0]  keep_o,    // contiguous from byte 0
  output logic             last_o,
  output logic [UW-1:0]    user_o
);

  localparam integer FB = DW / 8;
  localparam integer MW = $clog2(FB + 1);  // funnel offset bits: 0 .. FB
  localparam [LW-1:0] Fb = LW'(FB);

  logic [DW-1:0] prev_q;   // the last frame pushed
  logic [UW-1:0] user_q;
  logic [LW-1:0] r_q;      // bytes to skip from the next frame's start (signed; frozen once <= 0)
  logic [LW-1:0] left_q;   // bytes still to emit; 0: the packet is done, drop frames until last
  logic          hold_q;

  logic          first;
  logic [LW-1:0] r;
  logic [LW-1:0] left;
  logic          skipping;  // r > 0: the beats start in a later frame
  logic          early;     // r in (0, FB] and the whole rest fits in this frame from byte r
  logic          emit;
  logic [LW-1:0] moff;
  logic [MW-1:0] m;
  logic [DW-1:0] ext_frame;
  logic [DW-1:0] lo;
  logic [2*DW-1:0] funnel;
  logic [LW-1:0] left_d;

  assign first    = push_i & first_i;
  assign r        = first ? shift_i : r_q;
  assign left     = first ? len_i : left_q;  // no push in hold: then left_q
  assign skipping = ~r[LW-1] & (r != '0);
  assign early    = skipping & (r <= Fb) & ({1'b0, r} + {1'b0, left} <= {1'b0, Fb});
  assign emit     = (left != '0) & (~skipping | early);
  assign push_o   = (push_i & emit) | (hold_q & space_i);

  // Early: the beat is this frame from byte r. Otherwise frames (previous, this) from byte r + FB.
  assign moff = early ? r : r + Fb;
  assign m    = moff[MW-1:0];

  // moff is at most FB: its high bits are 0.
  logic unused_moff;
  assign unused_moff = ^moff[LW-1:MW];

  // Frame -1: the extension bytes at its top end.
  always_comb begin
    ext_frame = '0;
    for (integer b = 0; b < EXT; b = b + 1) begin
      ext_frame[8*(FB - EXT + b) +: 8] = ext_i[8*b +: 8];
    end
  end

  assign lo = early ? data_i : (first ? ext_frame : prev_q);

  // Byte-granular logarithmic funnel: stage s moves by 2^s bytes when bit s of m is set.
  always_comb begin
    funnel = {data_i, lo};
    for (integer s = 0; s < MW; s = s + 1) begin
      if (m[s]) begin
        funnel = funnel >> (8 * (1 << s));
      end
    end
  end

  assign data_o = funnel[DW-1:0];

  always_comb begin
    for (integer b = 0; b < FB; b = b + 1) begin
      keep_o[b] = left > LW'(b);
    end
  end

  assign last_o = left <= Fb;
  assign user_o = first ? user_i : user_q;
  assign hold_o = hold_q;

  assign left_d = !emit ? left : (left > Fb ? left - Fb : '0);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      r_q    <= '0;
      left_q <= '0;
      hold_q <= 1'b0;
    end else if (hold_q) begin
      if (space_i) begin
        hold_q <= 1'b0;
        left_q <= '0;
      end
    end else if (push_i) begin
      r_q    <= skipping ? r - Fb : r;
      left_q <= left_d;
      hold_q <= last_i & (left_d != '0);
    end
  end

  always_ff @(posedge clk_i) begin
    if (push_i) begin
      prev_q <= data_i;
    end
    if (first) begin
      user_q <= user_i;
    end
  end

endmodule
