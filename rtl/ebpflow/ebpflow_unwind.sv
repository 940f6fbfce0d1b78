`default_nettype none
// The conformance environment's helper unit behind an engine's helper port: the suite's helper 5 ("unwind") and
// runtime function 42.
//
// A request is answered in the cycle after it rises (hlp_ack_o high for one cycle). Helper 5 returns its first
// argument (r1) and ends the run when that is 0; runtime function 42 (a call with src 2, by BTF id) returns 0; any
// other helper or function faults. These are the semantics of crates/xdp's Environment::Conformance.
module ebpflow_unwind (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          hlp_req_i,
  input  logic          hlp_kfunc_i,
  input  logic [31:0]   hlp_id_i,
  input  logic [319:0]  hlp_args_i,
  output logic          hlp_ack_o,
  output logic [63:0]   hlp_r0_o,
  output logic          hlp_end_o,
  output logic          hlp_fault_o
);

  localparam logic [31:0] Unwind  = 32'd5;
  localparam logic [31:0] Runtime = 32'd42;

  logic        ack_q;
  logic [63:0] r0_q;
  logic        end_q;
  logic        fault_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ack_q   <= 1'b0;
      r0_q    <= 64'd0;
      end_q   <= 1'b0;
      fault_q <= 1'b0;
    end else begin
      ack_q <= hlp_req_i && !ack_q;
      if (hlp_req_i && !ack_q) begin
        if (hlp_kfunc_i) begin
          r0_q    <= 64'd0;
          end_q   <= 1'b0;
          fault_q <= (hlp_id_i != Runtime);
        end else begin
          r0_q    <= hlp_args_i[63:0];
          end_q   <= (hlp_id_i == Unwind) && (hlp_args_i[63:0] == 64'd0);
          fault_q <= (hlp_id_i != Unwind);
        end
      end
    end
  end

  assign hlp_ack_o   = ack_q;
  assign hlp_r0_o    = r0_q;
  assign hlp_end_o   = end_q;
  assign hlp_fault_o = fault_q;

  logic unused;
  assign unused = ^hlp_args_i[319:64];

endmodule
