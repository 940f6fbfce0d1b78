`default_nettype none
// Packet input queue of the hXDP module: whole packets from an AXI4-Stream into a frame FIFO, offered to the APS
// one descriptor at a time once their last beat is in.
//
// - Input (s_*): one FRAME_BYTES beat per cycle, byte 0 in bits 7:0; s_keep_i is contiguous from byte 0 and all ones
//   on every beat but the last (a beat with no byte kept stores nothing); s_user_i = {timestamp ns [127:64],
//   rxq [63:32], ifindex [31:0]} is sampled on the first beat of each packet. s_ready_o is high out of reset: the
//   queue never holds the wire back (a NIC's MAC cannot stall), it drops instead.
// - A packet is refused (its frames discarded, drop_o pulses for one cycle with its last beat) when it is shorter
//   than MIN_BYTES or longer than MAX_BYTES (the kernel's limits, docs/memory-model.md), or does not fit: the frame
//   FIFO (FRAMES frames) fills before its last beat, or the descriptor FIFO (DESCS packets) is full. rx_o pulses
//   with the last beat of every packet, kept or refused.
// - A kept packet's frames are stored consecutively; with its last beat a descriptor (length, ifindex, rxq,
//   timestamp) enters the descriptor FIFO, and from the next cycle d_valid_o offers it (d_* hold the oldest).
//   d_pop_i removes it. Its frames are read in order by f_pop_i, one per cycle: f_data_o holds the frame from the
//   cycle after f_pop_i (the frame memory is block RAM with a registered read) until the next f_pop_i. The reader
//   pops exactly ceil(length / FRAME_BYTES) frames per descriptor (a frame's bytes beyond the packet are zero).
// - busy_o: a packet is being received or a descriptor is waiting.
//
// Yosys 0.23 synth_xilinx -family xcup at the defaults: about 1.4k LUTs, 180 FFs, 4 RAMB36 (the frame FIFO),
// 10 RAM32M16 (the descriptors); 6 s of CPU.
module piq #(
  parameter integer FRAME_BYTES = 32,    // beat and frame, bytes
  parameter integer FRAMES      = 256,   // frame FIFO depth (a power of two, at least MAX_BYTES / FRAME_BYTES)
  parameter integer DESCS       = 16,    // descriptor FIFO depth (a power of two)
  parameter integer MIN_BYTES   = 14,    // shorter packets are refused
  parameter integer MAX_BYTES   = 3520   // longer packets are refused
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,

  input  logic                     s_valid_i,
  output logic                     s_ready_o,
  input  logic [8*FRAME_BYTES-1:0] s_data_i,
  input  logic [FRAME_BYTES-1:0]   s_keep_i,
  input  logic                     s_last_i,
  input  logic [127:0]             s_user_i,

  output logic                     d_valid_o,
  output logic [11:0]              d_len_o,
  output logic [31:0]              d_ifindex_o,
  output logic [31:0]              d_rxq_o,
  output logic [63:0]              d_ts_o,
  input  logic                     d_pop_i,

  input  logic                     f_pop_i,
  output logic [8*FRAME_BYTES-1:0] f_data_o,

  output logic                     rx_o,
  output logic                     drop_o,
  output logic                     busy_o
);

  localparam integer FW  = 8 * FRAME_BYTES;
  localparam integer PW  = $clog2(FRAMES);      // frame pointer bits (plus one for full/empty)
  localparam integer DW  = $clog2(DESCS);
  localparam integer LW  = 13;                  // byte counts up to 8191; longer packets saturate
  localparam integer DescW = 12 + 32 + 32 + 64;

  localparam [LW-1:0]  MinLen  = LW'(MIN_BYTES);
  localparam [LW-1:0]  MaxLen  = LW'(MAX_BYTES);
  localparam [PW:0]    Depth   = (PW + 1)'(FRAMES);
  localparam [DW:0]    DDepth  = (DW + 1)'(DESCS);

  // ---------------------------------------------------------------------------------------------------------------
  // Receive: frames go to the write pointer; the packet's first frame is pkt_start_q, so a refused packet rewinds.
  logic [PW:0]      wr_q;          // next frame to write
  logic [PW:0]      pkt_start_q;   // first frame of the packet being received
  logic [PW:0]      rd_q;          // next frame to read
  logic             in_pkt_q;      // a packet's first beat has been taken, its last not yet
  logic             refuse_q;      // the packet being received will be dropped
  logic [LW-1:0]    len_q;         // bytes of the packet so far (saturating)
  logic [127:0]     user_q;        // s_user_i of its first beat

  logic [DW:0]      dwr_q;
  logic [DW:0]      drd_q;

  logic             beat;
  logic             first;
  logic [LW-1:0]    keep_count;
  logic [LW-1:0]    len_now;       // bytes including this beat
  logic [127:0]     user_now;
  logic             frame_full;
  logic             desc_full;
  logic             refuse_now;    // this beat makes (or finds) the packet refused
  logic             store;         // this beat is written to the frame memory
  logic             keep_pkt;      // this is the last beat of a kept packet
  logic [FW-1:0]    masked;
  integer           b;

  always_comb begin
    beat       = s_valid_i & s_ready_o;
    first      = ~in_pkt_q;
    keep_count = '0;
    masked     = '0;
    for (b = 0; b < FRAME_BYTES; b = b + 1) begin
      if (s_keep_i[b]) begin
        keep_count          = keep_count + 1'b1;
        masked[8*b +: 8]    = s_data_i[8*b +: 8];
      end
    end
    len_now    = first ? keep_count : ((len_q + keep_count < len_q) ? {LW{1'b1}} : len_q + keep_count);
    user_now   = first ? s_user_i : user_q;
    frame_full = (wr_q - rd_q) == Depth;
    desc_full  = (dwr_q - drd_q) == DDepth;
    refuse_now = (first ? 1'b0 : refuse_q)
               | (len_now > MaxLen)
               | ((keep_count != '0) & frame_full)
               | (s_last_i & (len_now < MinLen))
               | (s_last_i & desc_full);
    store      = beat & ~refuse_now & (keep_count != '0);
    keep_pkt   = beat & s_last_i & ~refuse_now;
  end

  // s_ready_o is held low only while in reset.
  logic ready_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ready_q <= 1'b0;
    end else begin
      ready_q <= 1'b1;
    end
  end
  assign s_ready_o = ready_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_q        <= '0;
      pkt_start_q <= '0;
      in_pkt_q    <= 1'b0;
      refuse_q    <= 1'b0;
      len_q       <= '0;
      user_q      <= '0;
      dwr_q       <= '0;
    end else if (beat) begin
      len_q    <= len_now;
      user_q   <= user_now;
      refuse_q <= refuse_now;
      in_pkt_q <= ~s_last_i;
      if (s_last_i) begin
        if (refuse_now) begin
          wr_q <= pkt_start_q;                 // discard the packet's frames
        end else begin
          wr_q        <= wr_q + {{PW{1'b0}}, store};
          pkt_start_q <= wr_q + {{PW{1'b0}}, store};
          dwr_q       <= dwr_q + 1'b1;
        end
      end else if (refuse_now) begin
        wr_q <= pkt_start_q;
      end else if (store) begin
        wr_q <= wr_q + 1'b1;
      end
    end
  end

  assign rx_o   = beat & s_last_i;
  assign drop_o = beat & s_last_i & refuse_now;
  assign busy_o = in_pkt_q | (dwr_q != drd_q);

  // ---------------------------------------------------------------------------------------------------------------
  // Frame memory: one write port (receive), one registered read port (the APS).
  logic [FW-1:0] fmem [FRAMES];
  logic [FW-1:0] f_q;

  always_ff @(posedge clk_i) begin
    if (store) begin
      fmem[wr_q[PW-1:0]] <= masked;
    end
    if (f_pop_i) begin
      f_q <= fmem[rd_q[PW-1:0]];
    end
  end
  assign f_data_o = f_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_q <= '0;
    end else if (f_pop_i) begin
      rd_q <= rd_q + 1'b1;
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Descriptor FIFO (flip-flops or distributed RAM: DESCS is small).
  logic [DescW-1:0] dmem [DESCS];
  logic [DescW-1:0] head;

  always_ff @(posedge clk_i) begin
    if (keep_pkt) begin
      dmem[dwr_q[DW-1:0]] <= {user_now, len_now[11:0]};
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      drd_q <= '0;
    end else if (d_pop_i && d_valid_o) begin
      drd_q <= drd_q + 1'b1;
    end
  end

  assign head        = dmem[drd_q[DW-1:0]];
  assign d_valid_o   = dwr_q != drd_q;
  assign d_len_o     = head[11:0];
  assign d_ifindex_o = head[12 +: 32];
  assign d_rxq_o     = head[44 +: 32];
  assign d_ts_o      = head[76 +: 64];

endmodule
