`default_nettype none
// eBPFlow DM_FIFO: one memory that is the engine's input FIFO, its data memory and its stack, with a valid bit per word.
//
// Layout (byte offsets; the engine adds its base address, docs/ebpflow.md): the metadata header of the thesis's
// Table 4.1 at 0..31 (a register: input port byte 0, source queue 1, destination queue 2, timestamp seconds 3..6,
// nanoseconds 7..10, length in bytes 11..12, little-endian, 13..15 free; 16..31 the context words data, data_end,
// data_meta and ingress_ifindex, 32 bits each), the frame from 32 (RX_BYTES - 32 bytes at
// most), and STACK_FRAMES stack frames of 512 bytes from RX_BYTES. The memory is two banks of 64-bit words (even and
// odd words, so that an access of 1 to 8 bytes at any byte offset reads or writes one word of each), each a
// true-dual-port RAM with a registered read (rtl/common/ram_tdp): port A is the engine's, port B the input
// stream's, the output stream's and the host's.
//
// Input (s_axis_*, 64 bits a beat, beat k of a packet is frame bytes 8k..8k+7): while rx_en_i is high the FIFO takes
// beats. The first beat's s_axis_tuser_i is the header's bytes 0..15 (bytes 16..31 the context words from it);
// rx_first_o is high in the cycle it is taken and rx_last_o in the cycle of the beat with tlast. A beat sets its
// word's valid bit; the first beat of a packet clears all the others, so the words of the last packet read as not yet
// arrived.
//
// Engine port (port A). In the cycle of a request (a_req_i; a_we_i for a store of a_size_i = log2 bytes at byte
// offset a_addr_i, the bytes in the low end of a_wdata_i), a_ok_o says whether every word it touches has arrived (the
// header and the stack always have): the engine issues a request only when it has. A store writes at the clock edge
// ending its cycle; a load's bytes (zero-extended) are on a_rdata_o in the next cycle and until the next load.
// Accesses to the header go to the header register, in the same timing.
//
// Output (m_axis_*): tx_start_i (in a cycle with no engine request; the first word is read in that cycle) streams the header's length field's worth of
// frame bytes, header bytes 0..15 on m_axis_tuser_o, and raises tx_done_o in the cycle of the last beat's handshake.
// Host port: host_req_i (when neither stream runs) reads or writes one 64-bit word of the memory (host_addr_i a word
// index, the header register for words 0..3); a read answers on host_rdata_o in the next cycle.
module ebpflow_dm_fifo #(
  parameter integer      RX_BYTES = 4096,  // header and frame; a power of two, at least 64
  parameter integer      AW       = 13,    // byte-address bits: the stack frames fill RX_BYTES .. 2**AW
  parameter logic [63:0] BASE     = 64'h0000_0000_0001_0000  // the engine's address of byte 0 (the context words)
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic [31:0]   ifindex_base_i,   // the ingress_ifindex of input port 0 (header byte 0)
  // input stream
  input  logic          rx_en_i,
  input  logic [63:0]   s_axis_tdata_i,
  input  logic [7:0]    s_axis_tkeep_i,
  input  logic          s_axis_tvalid_i,
  output logic          s_axis_tready_o,
  input  logic          s_axis_tlast_i,
  input  logic [127:0]  s_axis_tuser_i,
  output logic          rx_first_o,
  output logic          rx_last_o,
  output logic [15:0]   rx_len_o,         // the length field as the first beat brought it (held)
  // engine port
  input  logic          a_req_i,
  input  logic          a_we_i,
  input  logic [AW-1:0] a_addr_i,
  input  logic [1:0]    a_size_i,
  input  logic [63:0]   a_wdata_i,
  output logic          a_ok_o,
  output logic [63:0]   a_rdata_o,
  // output stream
  input  logic          tx_start_i,
  output logic [63:0]   m_axis_tdata_o,
  output logic [7:0]    m_axis_tkeep_o,
  output logic          m_axis_tvalid_o,
  input  logic          m_axis_tready_i,
  output logic          m_axis_tlast_o,
  output logic [127:0]  m_axis_tuser_o,
  output logic          tx_done_o,
  // host port
  input  logic          host_req_i,
  input  logic          host_we_i,
  input  logic [AW-4:0] host_addr_i,
  input  logic [63:0]   host_wdata_i,
  output logic [63:0]   host_rdata_o
);

  localparam integer Words   = 1 << (AW - 3);
  localparam integer Half    = Words / 2;
  localparam integer WW      = AW - 3;            // word index bits
  localparam integer HW      = WW - 1;            // index bits within a bank
  localparam integer RxWords = RX_BYTES / 8;
  localparam integer HdrWords = 4;

  integer hi;

  // The header: a register, as the thesis's FSM keeps it.
  logic [255:0] hdr_q;
  logic [15:0]  len_q;
  logic [RxWords-1:0] valid_q;
  logic         receiving_q;                      // a packet's first beat was taken, its last not yet

  // ---------------------------------------------------------------------------------------------------------------
  // Port A: the engine's access split over the two words it touches
  // ---------------------------------------------------------------------------------------------------------------
  logic [WW-1:0] a_w0;
  logic [WW-1:0] a_w1;
  logic [3:0]    a_bytes;
  logic [AW:0]   a_last;                          // the access's last byte
  logic [15:0]   a_be;                            // byte enables over (word w0, word w0 + 1)
  logic [127:0]  a_win;                           // write data over the same two words
  always_comb begin
    a_bytes = 4'd1 << a_size_i;
    a_last  = {1'b0, a_addr_i} + {{(AW-3){1'b0}}, a_bytes} - 1'b1;
    a_w0    = a_addr_i[AW-1:3];
    a_w1    = a_last[AW-1:3];
    a_be    = ((16'd1 << a_bytes) - 16'd1) << a_addr_i[2:0];
    a_win   = {64'd0, a_wdata_i} << {a_addr_i[2:0], 3'b000};
  end

  // A word has arrived: the header and the stack always; a frame word once its beat was taken.
  function automatic logic arrived(input logic [WW-1:0] w, input logic [RxWords-1:0] valid);
    if (w < WW'(HdrWords) || w >= WW'(RxWords)) begin
      arrived = 1'b1;
    end else begin
      arrived = valid[w[$clog2(RxWords)-1:0]];
    end
  endfunction

  assign a_ok_o = arrived(a_w0, valid_q) && arrived(a_w1, valid_q);

  // ---------------------------------------------------------------------------------------------------------------
  // Port B: input beats, output reads, host accesses
  // ---------------------------------------------------------------------------------------------------------------
  logic [WW-1:0] rx_word_q;                       // the next input beat's word
  logic          rx_take;
  logic          tx_run_q;
  logic [WW-1:0] tx_word_q;                       // the next word to read for output
  logic [WW-1:0] tx_end_q;                        // one past the frame's last word
  logic          tx_rd;                           // port B reads tx_rd_word at this edge
  logic [WW-1:0] tx_rd_word;                      // the word the output reads
  logic [WW-1:0] tx_rd_end;                       // one past the frame's last word, for that read
  logic          tx_hold;                         // the output register holds (not taken)
  logic          out_valid_q;
  logic          out_last_q;
  logic [7:0]    out_keep_q;
  logic          host_bank_q;                     // the bank a host read was answered from
  logic          rx_room;                         // the next beat's word lies below RX_BYTES

  assign s_axis_tready_o = rx_en_i;
  assign rx_take    = rx_en_i && s_axis_tvalid_i;
  assign rx_first_o = rx_take && !receiving_q;
  assign rx_last_o  = rx_take && s_axis_tlast_i;
  assign rx_len_o   = len_q;
  // Beats past RX_BYTES are taken and dropped: they must not overwrite the stack.
  assign rx_room    = !receiving_q || rx_word_q < WW'(RxWords);

  logic          b_we;
  logic          b_en;
  logic [WW-1:0] b_word;
  logic [63:0]   b_wdata;
  always_comb begin
    b_we    = 1'b0;
    b_en    = 1'b0;
    b_word  = rx_word_q;
    b_wdata = s_axis_tdata_i;
    if (rx_take) begin
      b_we   = rx_room;
      b_en   = rx_room;
      b_word = receiving_q ? rx_word_q : WW'(HdrWords);
    end else if (tx_rd) begin
      b_en   = 1'b1;
      b_word = tx_rd_word;
    end else if (host_req_i) begin
      b_en    = 1'b1;
      b_we    = host_we_i && host_addr_i >= WW'(HdrWords);
      b_word  = host_addr_i;
      b_wdata = host_wdata_i;
    end
  end

  // ---------------------------------------------------------------------------------------------------------------
  // The two banks
  // ---------------------------------------------------------------------------------------------------------------
  // Bank p holds the words of parity p; an access's word of parity p is w0 or w0 + 1, whichever has that parity.
  logic [2*HW-1:0] a_idx;                         // [bank] the word within the bank
  logic [15:0]     a_bank_be;                     // [bank] byte enables
  logic [127:0]    a_bank_wd;                     // [bank] write data
  logic [127:0]    a_q;                           // [bank] port A's read register
  logic [127:0]    b_q;                           // [bank] port B's read register

  always_comb begin
    if (!a_w0[0]) begin
      a_idx     = {a_w1[WW-1:1], a_w0[WW-1:1]};
      a_bank_be = a_be;
      a_bank_wd = a_win;
    end else begin
      a_idx     = {a_w0[WW-1:1], a_w1[WW-1:1]};
      a_bank_be = {a_be[7:0], a_be[15:8]};
      a_bank_wd = {a_win[63:0], a_win[127:64]};
    end
  end

  genvar gp;
  generate
    for (gp = 0; gp < 2; gp = gp + 1) begin : g_bank
      logic [63:0] a_rd_q;
      logic [63:0] b_rd_q;
      logic [HW-1:0] ai;
      logic [7:0]    abe;
      logic [63:0]   awd;
      assign ai  = a_idx[gp*HW +: HW];
      assign abe = a_bank_be[gp*8 +: 8];
      assign awd = a_bank_wd[gp*64 +: 64];

      // Port A: the engine's byte-wide writes and its reads; port B: whole words.
      ram_tdp #(
        .WIDTH (64),
        .DEPTH (Half),
        .AW    (HW)
      ) u_ram (
        .clk_i     (clk_i),
        .a_en_i    (a_req_i),
        .a_we_i    (a_we_i),
        .a_addr_i  (ai),
        .a_wdata_i (awd),
        .a_be_i    (abe),
        .a_rdata_o (a_rd_q),
        .b_en_i    (b_en && b_word[0] == gp[0]),
        .b_we_i    (b_we),
        .b_addr_i  (b_word[WW-1:1]),
        .b_wdata_i (b_wdata),
        .b_be_i    (8'hff),
        .b_rdata_o (b_rd_q)
      );

      assign a_q[gp*64 +: 64] = a_rd_q;
      assign b_q[gp*64 +: 64] = b_rd_q;
    end
  endgenerate

  // ---------------------------------------------------------------------------------------------------------------
  // Port A's read data: the two words in address order (header words from the register), shifted and masked
  // ---------------------------------------------------------------------------------------------------------------
  logic [2:0]    rd_off_q;
  logic [1:0]    rd_size_q;
  logic          rd_w0_odd_q;
  logic [1:0]    rd_hdr_q;                        // the low and the high word are header words
  logic [1:0]    rd_hdr_w0_q;                     // the low word's index among the header's
  logic [127:0]  rd_pair;
  logic [127:0]  rd_shift;
  logic [63:0]   rd_lo;
  logic [63:0]   rd_hi;
  always_comb begin
    rd_lo = rd_w0_odd_q ? a_q[127:64] : a_q[63:0];
    rd_hi = rd_w0_odd_q ? a_q[63:0] : a_q[127:64];
    if (rd_hdr_q[0]) begin
      rd_lo = hdr_q[{rd_hdr_w0_q, 6'd0} +: 64];
    end
    if (rd_hdr_q[1]) begin
      rd_hi = hdr_q[{rd_hdr_w0_q + 2'd1, 6'd0} +: 64];
    end
    rd_pair  = {rd_hi, rd_lo};
    rd_shift = rd_pair >> {rd_off_q, 3'b000};
    case (rd_size_q)
      2'd0:    a_rdata_o = {56'd0, rd_shift[7:0]};
      2'd1:    a_rdata_o = {48'd0, rd_shift[15:0]};
      2'd2:    a_rdata_o = {32'd0, rd_shift[31:0]};
      default: a_rdata_o = rd_shift[63:0];
    endcase
  end

  // ---------------------------------------------------------------------------------------------------------------
  // Header register, valid bits, streams
  // ---------------------------------------------------------------------------------------------------------------
  // The context words a program's struct xdp_md loads read (the loader rewrites them to these header words): data
  // (16..19: the frame's address, 0 for an empty frame), data_end (20..23), data_meta (24..27, equal to data) and
  // ingress_ifindex (28..31: ifindex_base_i + the input port), written with the header at the first beat.
  logic [31:0] ctx_data;
  logic [31:0] ctx_ifindex;
  logic [63:0] frame_addr;
  assign frame_addr  = BASE + 64'd32;
  assign ctx_data    = (s_axis_tuser_i[103:88] == 16'd0) ? 32'd0 : frame_addr[31:0];
  assign ctx_ifindex = ifindex_base_i + {24'd0, s_axis_tuser_i[7:0]};

  logic [255:0] hdr_d;
  always_comb begin
    hdr_d = hdr_q;
    hi    = 0;
    if (rx_first_o) begin
      hdr_d = {ctx_ifindex, ctx_data, ctx_data + {16'd0, s_axis_tuser_i[103:88]}, ctx_data, s_axis_tuser_i};
    end else if (a_req_i && a_we_i && a_w0 < WW'(HdrWords)) begin
      // Byte hi of the header takes the store's byte hi - offset when the store covers it.
      for (hi = 0; hi < HdrWords * 8; hi = hi + 1) begin
        if ((AW+1)'(hi) >= {1'b0, a_addr_i} && (AW+1)'(hi) <= a_last) begin
          hdr_d[hi*8 +: 8] = a_wdata_i[{3'(hi) - a_addr_i[2:0], 3'b000} +: 8];
        end
      end
    end else if (host_req_i && host_we_i && host_addr_i < WW'(HdrWords) && !rx_take && !tx_rd) begin
      hdr_d[host_addr_i[1:0]*64 +: 64] = host_wdata_i;
    end
  end

  // The last beat of the output: the frame's length in words from the header's length field.
  logic [13:0] frame_words;
  assign frame_words = {1'b0, len_q[15:3]} + {13'd0, |len_q[2:0]};

  // One past the frame's last word: an empty frame still leaves as one beat (no byte kept), a frame longer than the
  // FIFO is cut at RX_BYTES.
  logic [WW-1:0] tx_end_d;
  always_comb begin
    if (frame_words == 14'd0) begin
      tx_end_d = WW'(HdrWords + 1);
    end else if ({{(14-WW){1'b0}}, WW'(RxWords - HdrWords)} < frame_words) begin
      tx_end_d = WW'(RxWords);
    end else begin
      tx_end_d = WW'(HdrWords) + frame_words[WW-1:0];
    end
  end

  // The output reads its first word in the cycle of tx_start_i, then one a cycle unless the output register holds.
  assign tx_rd_word = tx_start_i ? WW'(HdrWords) : tx_word_q;
  assign tx_rd_end  = tx_start_i ? tx_end_d : tx_end_q;
  assign tx_hold = out_valid_q && !m_axis_tready_i;
  assign tx_rd   = tx_start_i || (tx_run_q && !tx_hold && tx_word_q != tx_end_q);

  logic host_rd_q;
  logic host_hdr_q;
  logic [1:0] host_w_q;
  logic out_bank_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hdr_q       <= 256'd0;
      len_q       <= 16'd0;
      valid_q     <= '0;
      receiving_q <= 1'b0;
      rx_word_q   <= WW'(HdrWords);
      rd_off_q    <= 3'd0;
      rd_size_q   <= 2'd0;
      rd_w0_odd_q <= 1'b0;
      rd_hdr_q    <= 2'd0;
      rd_hdr_w0_q <= 2'd0;
      tx_run_q    <= 1'b0;
      tx_word_q   <= WW'(HdrWords);
      tx_end_q    <= WW'(HdrWords);
      out_valid_q <= 1'b0;
      out_last_q  <= 1'b0;
      out_keep_q  <= 8'd0;
      out_bank_q  <= 1'b0;
      host_bank_q <= 1'b0;
      host_rd_q   <= 1'b0;
      host_hdr_q  <= 1'b0;
      host_w_q    <= 2'd0;
    end else begin
      hdr_q <= hdr_d;
      if (rx_take) begin
        if (!receiving_q) begin
          len_q   <= s_axis_tuser_i[103:88];
          valid_q <= '0;
          valid_q[HdrWords] <= 1'b1;
        end else begin
          if (rx_room) begin
            valid_q[rx_word_q[$clog2(RxWords)-1:0]] <= 1'b1;
          end
        end
        rx_word_q   <= (receiving_q ? rx_word_q : WW'(HdrWords)) + 1'b1;
        receiving_q <= !s_axis_tlast_i;
      end
      if (a_req_i && !a_we_i) begin
        rd_off_q    <= a_addr_i[2:0];
        rd_size_q   <= a_size_i;
        rd_w0_odd_q <= a_w0[0];
        rd_hdr_q    <= {a_w1 < WW'(HdrWords), a_w0 < WW'(HdrWords)};
        rd_hdr_w0_q <= a_w0[1:0];
      end
      // Output: words HdrWords .. HdrWords + frame_words - 1, one read a cycle unless the output register holds.
      if (tx_start_i) begin
        tx_run_q <= 1'b1;
        tx_end_q <= tx_end_d;
      end
      if (tx_rd) begin
        tx_word_q   <= tx_rd_word + 1'b1;
        out_valid_q <= 1'b1;
        out_bank_q  <= tx_rd_word[0];
        out_last_q  <= (tx_rd_word + 1'b1) == tx_rd_end;
        out_keep_q  <= ((tx_rd_word + 1'b1) == tx_rd_end && len_q[2:0] != 3'd0)
                       ? ((8'd1 << len_q[2:0]) - 8'd1) : (len_q == 16'd0 ? 8'd0 : 8'hff);
      end else if (out_valid_q && m_axis_tready_i) begin
        out_valid_q <= 1'b0;
        if (out_last_q) begin
          tx_run_q <= 1'b0;
        end
      end
      host_rd_q  <= host_req_i && !host_we_i && !rx_take && !tx_rd;
      host_hdr_q <= host_addr_i < WW'(HdrWords);
      host_w_q   <= host_addr_i[1:0];
      if (host_req_i && !rx_take && !tx_rd) begin
        host_bank_q <= host_addr_i[0];
      end
    end
  end

  assign m_axis_tdata_o  = out_bank_q ? b_q[127:64] : b_q[63:0];
  assign m_axis_tkeep_o  = out_keep_q;
  assign m_axis_tvalid_o = out_valid_q;
  assign m_axis_tlast_o  = out_last_q;
  assign m_axis_tuser_o  = hdr_q[127:0];
  assign tx_done_o       = out_valid_q && out_last_q && m_axis_tready_i;
  assign host_rdata_o    = host_hdr_q ? hdr_q[host_w_q*64 +: 64] : (host_bank_q ? b_q[127:64] : b_q[63:0]);

  logic unused;
  assign unused = ^{s_axis_tkeep_i, host_rd_q, a_last[AW], a_last[2:0], rd_shift[127:64], frame_addr[63:32]};

endmodule
