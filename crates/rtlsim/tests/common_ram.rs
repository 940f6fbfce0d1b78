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
