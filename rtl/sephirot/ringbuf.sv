`default_nettype none
// The helper module's ring buffer: bpf_ringbuf_output records (crates/maps/src/ringbuf.rs) and the host's drain.
//
// One RINGBUF map. Positions are the reference's (producer and consumer byte positions, records of
// round8(len + 8) bytes: an 8-byte header, then the data), kept modulo 2^32; a record fits (fit_o) exactly when the
// reference's reserve succeeds: round8(len + 8) + (producer - consumer) < cfg_size_i (max_entries, the map's data
// size). The records are stored in BYTES bytes (a power of two): room_o is low when a record that fits the map's
// size would not fit this storage (a map larger than BYTES that the host does not drain often enough); the helper
// module then drops the record and raises its overflow flag, since the reference would have kept it.
//
// Producer (the helper module): wr_i writes wr_bytes_i (1, 2, 4, 8) bytes of wr_data_i at data position wr_pos_i of
// the record being written at the producer position (positions 8k, then 8k + 4, 8k + 6 for the rest: chunks never
// cross an 8-byte word); commit_i with len_i writes the header and moves the producer past the record. Bytes written
// without a commit are never seen.
// Host (drain, while no helper runs): avail_o with len_o = the oldest record's data length; rd_i with word_i reads
// data word word_i of it (bytes 8 * word_i ..), on rdata_o in the next cycle; pop_i consumes it (avail_o is low for
// the next cycle or two while the next header is read).
module ringbuf #(
  parameter integer BYTES = 4096        // storage, a power of two of at least 16
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        clear_i,         // a RINGBUF map is configured: empty, with cfg_size_i bytes
  input  logic [31:0] cfg_size_i,
  input  logic [16:0] len_i,           // record data bytes (below 0x10000)
  output logic        fit_o,
  output logic        room_o,
  input  logic        wr_i,
  input  logic [15:0] wr_pos_i,
  input  logic [3:0]  wr_bytes_i,
  input  logic [63:0] wr_data_i,
  input  logic        commit_i,
  output logic        avail_o,
  output logic [31:0] len_o,
  input  logic        rd_i,
  input  logic [15:0] word_i,
  output logic [63:0] rdata_o,
  input  logic        pop_i
);

  localparam integer Words = BYTES / 8;
  localparam integer WW    = $clog2(Words);
  localparam [31:0]  Bytes32 = BYTES;

  logic [63:0] mem [Words];
  logic [31:0] size_q, prod_q, cons_q, head_len_q;
  logic        head_q;                 // head_len_q holds the length of the record at cons_q
  logic        fetch_q;                // the header read of the last cycle answers now
  logic [63:0] rd_q;

  // round8(len + 8): the record's bytes
  logic [31:0] rec, occ, pop_rec;
  assign rec     = {15'b0, len_i + 17'd15} & 32'hffff_fff8;
  assign occ     = prod_q - cons_q;
  assign fit_o   = (rec + occ) < size_q;
  assign room_o  = (rec + occ) <= Bytes32;
  assign pop_rec = (head_len_q + 32'd15) & 32'hffff_fff8;

  // producer writes
  logic [WW-1:0] wr_word, hdr_word;
  logic [63:0]   wr_shifted;
  logic [7:0]    wr_be;
  logic [31:0]   wr_at;
  assign wr_at      = prod_q + 32'd8 + {16'b0, wr_pos_i};
  assign wr_word    = wr_at[WW+2:3];
  assign hdr_word   = prod_q[WW+2:3];
  assign wr_shifted = wr_data_i << {wr_pos_i[2:0], 3'b000};
  assign wr_be      = (wr_bytes_i == 4'd8) ? 8'hff :
                      (wr_bytes_i == 4'd4) ? (8'h0f << wr_pos_i[2:0]) :
                      (wr_bytes_i == 4'd2) ? (8'h03 << wr_pos_i[2:0]) : (8'h01 << wr_pos_i[2:0]);

  integer b;
  always_ff @(posedge clk_i) begin
    if (wr_i) begin
      for (b = 0; b < 8; b = b + 1) begin
        if (wr_be[b]) mem[wr_word][8*b +: 8] <= wr_shifted[8*b +: 8];
      end
    end else if (commit_i) begin
      mem[hdr_word] <= {32'd0, 15'd0, len_i};
    end
  end

  // one read port: the host's data reads, or the next header
  logic          fetch;
  logic [WW-1:0] rd_word;
  logic [31:0]   data_at;
  assign fetch   = !head_q && !fetch_q && (prod_q != cons_q) && !commit_i;
  assign data_at = cons_q + 32'd8 + {13'b0, word_i, 3'b000};
  assign rd_word = fetch ? cons_q[WW+2:3] : data_at[WW+2:3];

  always_ff @(posedge clk_i) begin
    if (fetch || rd_i) rd_q <= mem[rd_word];
  end

  // positions wrap modulo 2^32; only their word bits address the storage
  logic unused_at;
  assign unused_at = ^{wr_at[31:WW+3], wr_at[2:0], data_at[31:WW+3], data_at[2:0]};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      size_q     <= 32'd0;
      prod_q     <= 32'd0;
      cons_q     <= 32'd0;
      head_len_q <= 32'd0;
      head_q     <= 1'b0;
      fetch_q    <= 1'b0;
    end else if (clear_i) begin
      size_q     <= cfg_size_i;
      prod_q     <= 32'd0;
      cons_q     <= 32'd0;
      head_q     <= 1'b0;
      fetch_q    <= 1'b0;
    end else begin
      fetch_q <= fetch;
      if (commit_i) prod_q <= prod_q + rec;
      if (fetch_q) begin
        head_len_q <= rd_q[31:0];
        head_q     <= 1'b1;
      end
      if (pop_i && head_q) begin
        cons_q <= cons_q + pop_rec;
        head_q <= 1'b0;
      end
    end
  end

  assign avail_o = head_q;
  assign len_o   = head_len_q;
  assign rdata_o = rd_q;

endmodule
