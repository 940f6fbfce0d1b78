`default_nettype none
// Sephirot register file: r0-r10 as flip-flops, one write port per lane plus the frame updates of calls and returns.
//
// next_o is the value every register takes at the next edge, so a reader of next_o sees the commit stage's writes
// in the same cycle (write-through). Writes apply in this order: lane ports (one lane per register per bundle), the
// r0 port (exit K), the r1 port (a tail call: r1 = clear_r1_i, the context), then the frame update: r6-r9 restored
// from frame_regs_i and r10 moved by one 512-byte frame. A clear with load_i (a packet resumed at an entry bundle,
// docs/warp.md) sets r0-r9 from load_regs_i instead of r0 = 0, r1 = clear_r1_i and r2-r9 = 0.
module regfile #(
  parameter integer LANES = 4
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 clear_i,         // new packet: all zero but r1 and r10
  input  logic [63:0]          clear_r1_i,      // r1 at the start of a packet (the context pointer)
  input  logic [63:0]          clear_r10_i,     // r10 at the start of a packet (top of the first stack frame)
  input  logic                 load_i,          // with clear_i: r0-r9 from load_regs_i
  input  logic [10*64-1:0]     load_regs_i,     // r0 in the low 64 bits
  input  logic [LANES-1:0]     we_i,
  input  logic [LANES*4-1:0]   waddr_i,
  input  logic [LANES*64-1:0]  wdata_i,
  input  logic                 r0_we_i,
  input  logic [63:0]          r0_i,
  input  logic                 tail_i,          // tail call: r1 = clear_r1_i
  input  logic                 restore_i,       // return: r6-r9 from frame_regs_i, r10 down one frame
  input  logic [4*64-1:0]      frame_regs_i,
  input  logic                 push_i,          // call: r10 up one frame
  output logic [11*64-1:0]     next_o
);

  localparam [63:0] FrameBytes = 64'd512;

  logic [11*64-1:0] regs_q;
  logic [11*64-1:0] regs_d;
  integer l;
  integer r;

  always_comb begin
    regs_d = regs_q;
    for (l = 0; l < LANES; l = l + 1) begin
      for (r = 0; r < 11; r = r + 1) begin
        if (we_i[l] && waddr_i[l*4 +: 4] == r[3:0]) begin
          regs_d[r*64 +: 64] = wdata_i[l*64 +: 64];
        end
      end
    end
    if (r0_we_i) begin
      regs_d[63:0] = r0_i;
    end
    if (tail_i) begin
      regs_d[1*64 +: 64] = clear_r1_i;
    end
    if (restore_i) begin
      regs_d[6*64 +: 4*64] = frame_regs_i;
      regs_d[10*64 +: 64] = regs_q[10*64 +: 64] - FrameBytes;
    end
    if (push_i) begin
      regs_d[10*64 +: 64] = regs_q[10*64 +: 64] + FrameBytes;
    end
    if (clear_i) begin
      regs_d = '0;
      regs_d[1*64 +: 64] = clear_r1_i;
      regs_d[10*64 +: 64] = clear_r10_i;
      if (load_i) begin
        regs_d[0 +: 10*64] = load_regs_i;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      regs_q <= '0;
    end else begin
      regs_q <= regs_d;
    end
  end

  assign next_o = regs_d;

endmodule
