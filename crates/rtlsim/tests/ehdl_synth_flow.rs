//! `hwxdp synth`'s flow on a small registered design: out of context (no I/O buffers counted, where the default
//! flow inserts them), the longest path between registers measured through its LUTs and carry cells, and both
//! families of the device table (UltraScale+ and 7 series).

use hwxdp_rtlsim::{device, run_synthesis_with, verdicts, Flow, SynthJob, DELAYS, DEVICES};
use std::path::PathBuf;

/// Two registered 24-bit operands, their sum compared with a third one, the result registered: a path of a few
/// LUTs and a carry chain between flip-flops.
const DESIGN: &str = "`default_nettype none
module flow_t (
  input  logic        clk_i,
  input  logic [23:0] a_i,
  input  logic [23:0] b_i,
  input  logic [23:0] c_i,
  output logic        y_o
);
  logic [23:0] a_q, b_q, c_q;
  logic        y_q;
  always_ff @(posedge clk_i) begin
    a_q <= a_i;
    b_q <= b_i;
    c_q <= c_i;
    y_q <= (a_q + b_q) < c_q;
  end
  assign y_o = y_q;
endmodule
";

fn job(tag: &str) -> SynthJob {
    SynthJob {
        top: "flow_t".into(),
        sources: vec![("flow_t.sv".into(), DESIGN.into())],
        params: Vec::new(),
        log: std::env::temp_dir().join(format!("hwxdp-flow-{tag}-{}.log", std::process::id())),
        yosys: PathBuf::from("yosys"),
    }
}

#[test]
fn out_of_context_synthesis_counts_no_io_buffers_and_measures_the_path() {
    let u50 = device("xcu50").expect("the default device");
    let ooc = run_synthesis_with(&job("ooc"), &Flow::for_device(u50), &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    let buffers: Vec<_> = ooc
        .cells
        .keys()
        .filter(|c| c.contains("IBUF") || c.contains("OBUF"))
        .collect();
    assert!(buffers.is_empty(), "out of context: {:?}", ooc.cells);
    assert_eq!(ooc.resources.ff, 73, "{:?}", ooc.cells);
    let path = ooc.path.expect("the flow measures the path");
    // At least one LUT into the adder, its carry chain, and the compare into y_q.
    assert!(path.luts >= 2 && path.carries >= 2, "{path:?}");
    assert!(path.levels() < 30, "{path:?}");
    let fmax = path.fmax_mhz(&DELAYS);
    assert!(fmax > 100.0 && fmax < 2500.0, "{fmax}");
    let lines = verdicts(&ooc.resources, Some(&path), u50, 250.0);
    assert!(lines[0].starts_with("fits the xcu50"), "{lines:?}");
    assert!(lines[1].contains("MHz"), "{lines:?}");
    // The default flow (run_synthesis) inserts buffers on the 73 input bits and 1 output, and measures nothing.
    let with_pads = run_synthesis_with(&job("pads"), &Flow::default(), &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        with_pads.cells.get("IBUF").copied().unwrap_or(0) >= 72,
        "{:?}",
        with_pads.cells
    );
    assert_eq!(with_pads.cells.get("OBUF").copied(), Some(1));
    assert!(with_pads.path.is_none());
}

#[test]
fn the_seven_series_device_is_mapped_for_its_own_family() {
    let sume = device("xc7vx690t").expect("NetFPGA SUME");
    assert_eq!(sume.family, "xc7");
    let report = run_synthesis_with(&job("xc7"), &Flow::for_device(sume), &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.resources.ff, 73, "{:?}", report.cells);
    assert!(report.cells.contains_key("CARRY4"), "{:?}", report.cells);
    assert!(report.path.expect("measured").levels() > 0);
}

#[test]
fn the_device_table_holds_the_data_sheets_figures() {
    let names: Vec<&str> = DEVICES.iter().map(|d| d.name).collect();
    assert_eq!(names, ["xcu50", "xcu250", "xcu280", "vcu118", "xc7vx690t"]);
    let figures = |name| {
        let d = device(name).expect("known");
        (d.lut, d.ff, d.bram36, d.uram, d.dsp)
    };
    assert_eq!(figures("xcu50"), (872_000, 1_743_000, 1_344, 640, 5_952));
    assert_eq!(
        figures("xcu250"),
        (1_728_000, 3_456_000, 2_688, 1_280, 12_288)
    );
    assert_eq!(figures("xcu280"), (1_304_000, 2_607_000, 2_016, 960, 9_024));
    assert_eq!(figures("vcu118"), (1_182_240, 2_364_480, 2_160, 960, 6_840));
    assert_eq!(figures("xc7vx690t"), (433_200, 866_400, 1_470, 0, 3_600));
    for d in DEVICES {
        assert!(d.source.contains("DS"), "{}: {}", d.name, d.source);
    }
}
