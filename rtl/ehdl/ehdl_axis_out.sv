`default_nettype none
// eHDL output port: a two-entry AXI4-Stream FIFO between the frame chain and m_axis.
//
// The pipeline advances as one block, and it must hold when a packet's next input beat is late; the FIFO keeps
// m_axis legal meanwhile (a beat once offered stays offered until taken) and takes m_axis_tready off the pipeline's
// advance path. With two entries, space_o stays high while beats leave as fast as they come: one beat per clock.
module ehdl_axis_out #(
  parameter integer DW = 512,  // data width in bits
  parameter integer UW = 32    // tuser width (the XDP verdict)
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic            push_i,   // only while space_o
  input  logic [DW-1:0]   data_i,
  input  logic [DW/8-1:0] keep_i,
  input  logic            last_i,
  input  logic [UW-1:0]   user_i,
  output logic            space_o,
  output logic            m_axis_tvalid_o,
  output logic [DW-1:0]   m_axis_tdata_o,
  output logic [DW/8-1:0] m_axis_tkeep_o,
  output logic            m_axis_tlast_o,
  output logic [UW-1:0]   m_axis_tuser_o,
  input  logic            m_axis_tready_i
);

  localparam integer EW = DW + DW / 8 + 1 + UW;  // one entry: data, keep, last, user

  logic [1:0]    count_q;
  logic [EW-1:0] head_q;
  logic [EW-1:0] tail_q;
  logic [EW-1:0] in;
  logic          pop;

  assign in      = {user_i, last_i, keep_i, data_i};
  assign pop     = (count_q != 2'd0) & m_axis_tready_i;
  assign space_o = (count_q != 2'd2);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q <= 2'd0;
    end else begin
      count_q <= count_q + {1'b0, push_i} - {1'b0, pop};
    end
  end

  always_ff @(posedge clk_i) begin
    if (pop) begin
      // The second entry moves up; a pushed beat lands behind whatever stays.
      head_q <= (count_q == 2'd2) ? tail_q : in;
      if (count_q == 2'd2) begin
        tail_q <= in;
      end
    end else if (push_i) begin
      if (count_q == 2'd0) begin
        head_q <= in;
      end else begin
        tail_q <= in;
      end
    end
  end

  assign m_axis_tvalid_o = (count_q != 2'd0);
  assign {m_axis_tuser_o, m_axis_tlast_o, m_axis_tkeep_o, m_axis_tdata_o} = head_q;

endmodule
