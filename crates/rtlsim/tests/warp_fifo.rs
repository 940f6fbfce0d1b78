//! `warp_fifo` (the record and user FIFOs of `rtl/warp/warp_hxdp.sv`) on its own: random pushes and pops against a
//! queue (`sim/warp/warp_fifo_tb.cpp`).

mod common;

use common::{run_testbench, workspace_root};
use hwxdp_rtlsim::BuildSpec;

#[test]
fn warp_fifo_keeps_every_word_in_order() {
    let root = workspace_root();
    let mut spec = BuildSpec::new(
        "warp_fifo",
        root.join("rtl"),
        root.join("sim/warp/warp_fifo_tb.cpp"),
        common::target_dir(),
    );
    spec.sources = vec!["common/ram_sdp.sv".into(), "warp/warp_fifo.sv".into()];
    spec.flags = vec!["-GWIDTH=64".into(), "-GDEPTH=8".into()];
    for seed in [1u64, 0x5eed, 0xfeed_f1f0] {
        let got = run_testbench(&spec, format!("{seed} 20000\n"));
        let line = got.first().map(String::as_str).unwrap_or("");
        assert!(line.starts_with("ok "), "seed {seed}: {got:?}");
        let pushed: u64 = line[3..].parse().expect("a count");
        assert!(pushed > 5000, "seed {seed}: only {pushed} words");
    }
}
