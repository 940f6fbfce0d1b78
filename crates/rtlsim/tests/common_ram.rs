//! The memories of `rtl/common/`: `ram_sdp` and `ram_tdp` against a model of the RAM under random traffic (registered
//! reads, read-first, byte enables, held outputs), and each mapped by Yosys onto block RAM, not flip-flops.

mod common;

use hwxdp_rtlsim::{run_synthesis, SynthJob};

/// Runs `top`'s self-checking testbench for `cycles` random cycles from `seed`.
fn run_random(top: &str, seed: u64, cycles: u64) {
    let mut spec = common::unit_spec(top);
    spec.sources = vec![format!("common/{top}.sv").into()];
    let lines = common::run_testbench(&spec, format!("{seed} {cycles}\n"));
    assert_eq!(lines, [format!("ok {cycles}")], "{top} seed {seed}");
}

#[test]
fn simple_dual_port_ram_reads_what_was_written() {
    for seed in [1, 0x9e37_79b9, 77] {
        run_random("ram_sdp", seed, 20_000);
    }
}

#[test]
fn true_dual_port_ram_reads_what_was_written_on_both_ports() {
    for seed in [1, 0x9e37_79b9, 77] {
        run_random("ram_tdp", seed, 20_000);
    }
}

/// 1024 words of 64 bits synthesize to two RAMB36E2 and no flip-flop bank.
fn assert_maps_to_bram(top: &str) {
    let path = format!("rtl/common/{top}.sv");
    let text = std::fs::read_to_string(common::workspace_root().join(&path)).expect("source");
    let job = SynthJob {
        top: top.into(),
        sources: vec![(path, text)],
        params: vec![("WIDTH".into(), 64), ("DEPTH".into(), 1024)],
        log: common::target_dir().join(format!("{top}-synth.log")),
        yosys: "yosys".into(),
    };
    let report = run_synthesis(&job, &mut |_| {}).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(report.resources.ramb36, 2, "{top}: {:?}", report.cells);
    assert!(
        report.resources.ff < 200,
        "{top}: {} flip-flops",
        report.resources.ff
    );
}

#[test]
fn the_memories_map_to_block_ram() {
    assert_maps_to_bram("ram_sdp");
    assert_maps_to_bram("ram_tdp");
}

/// Words wider than 512 bits (a bucket of several keys, a 1024-bit data path) build: Verilator 5.006 refuses a
/// delayed array assignment inside a for loop at that width, which the per-lane processes avoid.
#[test]
fn wide_words_build_under_verilator() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("common-ram-wide");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let wrapper = dir.join("ram_wide.sv");
    std::fs::write(
        &wrapper,
        "`default_nettype none\n// A 1024-bit ram_sdp and ram_tdp.\nmodule ram_wide (\n  input  logic clk_i,\n  \
         input  logic we_i,\n  input  logic [3:0] addr_i,\n  input  logic [1023:0] data_i,\n  \
         input  logic [127:0] be_i,\n  output logic [1023:0] sdp_o,\n  output logic [1023:0] tdp_o,\n  output logic [1023:0] tdp_a_o\n);\n  \
         ram_sdp #(.WIDTH(1024), .DEPTH(16)) u_sdp (.clk_i(clk_i), .wr_en_i(we_i), .wr_addr_i(addr_i),\n    \
         .wr_data_i(data_i), .wr_be_i(be_i), .rd_en_i(1'b1), .rd_addr_i(addr_i), .rd_data_o(sdp_o));\n  \
         ram_tdp #(.WIDTH(1024), .DEPTH(16)) u_tdp (.clk_i(clk_i), .a_en_i(we_i), .a_we_i(1'b1),\n    \
         .a_addr_i(addr_i), .a_wdata_i(data_i), .a_be_i(be_i), .a_rdata_o(tdp_a_o),\n    \
         .b_en_i(1'b1), .b_we_i(1'b0), .b_addr_i(addr_i), .b_wdata_i(data_i), .b_be_i(be_i), .b_rdata_o(tdp_o));\n\
         endmodule\n",
    )
    .expect("write wrapper");
    let root = common::workspace_root().join("rtl/common");
    let sources = [wrapper, root.join("ram_sdp.sv"), root.join("ram_tdp.sv")];
    hwxdp_rtlsim::lint(&sources, "ram_wide").unwrap_or_else(|err| panic!("{err}"));
}
