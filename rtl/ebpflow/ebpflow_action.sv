`default_nettype none
// eBPFlow action module (one per engine): an engine's result turned into an action code of Table 4.2 of the thesis
// and the set of TX queues the packet goes to.
//
// TX queues: 0 .. P-1 the ports, P the host queue, P+1 the controller (M = P + 2). Action codes (16 bits):
//   0 .. 0xFFEF  forward to that port (a port the NIC does not have: dropped)
//   0xFFF0       drop
//   0xFFF3       the controller
//   0xFFF2, 0xFFF4, 0xFFF5  the host queue (the thesis's "0xFFF[2-5], CPU queue 0-3" overlaps the controller's 0xFFF3:
//                the controller's own row wins; the NIC has one host queue, the CPU queue is dest_q_o's low bits)
//   0xFFFF       flood: every port but the input port
//   anything else dropped.
// With xdp_i low, r0 is the code itself (an r0 above 0xFFFF drops). With xdp_i high, r0's low 32 bits are an XDP
// verdict (the reference machine reads a verdict from those bits): XDP_TX -> the input port, XDP_REDIRECT -> the
// port redirect_port_i names when redirect_valid_i is high (the devmap target of bpf_redirect_map) and a drop when it
// is low, XDP_PASS -> the host queue (0xFFF2), XDP_DROP, XDP_ABORTED and any other value -> drop. A fault always drops.
// dest_q_o is what the NIC writes into the header's destination-queue byte: the TX queue, 0xFF for a flood, 0xF0 for a
// drop. Purely combinational: the engine holds r0 and the fault flag while its packet leaves.
module ebpflow_action #(
  parameter integer P = 4,   // ports
  parameter integer M = P + 2
) (
  input  logic         xdp_i,
  input  logic [63:0]  r0_i,
  input  logic         fault_i,
  input  logic [7:0]   in_port_i,
  input  logic         redirect_valid_i,
  input  logic [15:0]  redirect_port_i,
  output logic [15:0]  action_o,
  output logic [M-1:0] mask_o,
  output logic [7:0]   dest_q_o
);

  localparam logic [15:0] Drop  = 16'hfff0;
  localparam logic [15:0] Host0 = 16'hfff2;
  localparam logic [15:0] Ctrl  = 16'hfff3;
  localparam logic [15:0] Host2 = 16'hfff4;
  localparam logic [15:0] Host3 = 16'hfff5;
  localparam logic [15:0] Flood = 16'hffff;
  localparam integer      HostQ = P;
  localparam integer      CtrlQ = P + 1;

  logic [15:0] code;

  always_comb begin
    if (fault_i) begin
      code = Drop;
    end else if (xdp_i) begin
      case (r0_i[31:0])
        32'd2:   code = Host0;
        32'd3:   code = {8'd0, in_port_i};
        32'd4:   code = redirect_valid_i ? redirect_port_i : Drop;
        default: code = Drop;
      endcase
    end else begin
      code = (r0_i[63:16] == 48'd0) ? r0_i[15:0] : Drop;
    end
  end

  always_comb begin
    mask_o   = '0;
    dest_q_o = 8'hf0;
    if (code < P[15:0]) begin
      for (int q = 0; q < P; q++) begin
        mask_o[q] = (code == q[15:0]);
      end
      dest_q_o = code[7:0];
    end else if (code == Ctrl) begin
      mask_o[CtrlQ] = 1'b1;
      dest_q_o      = CtrlQ[7:0];
    end else if (code == Host0 || code == Host2 || code == Host3) begin
      mask_o[HostQ] = 1'b1;
      dest_q_o      = HostQ[7:0];
    end else if (code == Flood) begin
      for (int q = 0; q < P; q++) begin
        mask_o[q] = (in_port_i != q[7:0]);
      end
      dest_q_o = 8'hff;
    end
  end

  assign action_o = code;

endmodule
