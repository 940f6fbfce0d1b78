//! The eBPFlow NIC's datapath blocks of `rtl/ebpflow/`, each under its self-checking Verilator testbench
//! (`sim/unit/ebpflow_<block>_tb.cpp`): the per-port demux, the per-port output arbiter, the output crossbar and the
//! action module.

mod common;

/// Runs `top`'s testbench, built from `rtl/ebpflow/<top>.sv`, with the input line `input`; returns its one line.
fn run(top: &str, input: &str) -> String {
    let mut spec = common::unit_spec(top);
    spec.sources = vec![format!("ebpflow/{top}.sv").into()];
    let lines = common::run_testbench(&spec, format!("{input}\n"));
    assert_eq!(lines.len(), 1, "{top} {input}: {lines:?}");
    lines[0].clone()
}

/// The count after `ok` in a testbench's answer, which must be one.
fn ok(top: &str, input: &str) -> Vec<u64> {
    let line = run(top, input);
    let rest = line
        .strip_prefix("ok ")
        .unwrap_or_else(|| panic!("{top} {input}: {line}"));
    rest.split_whitespace()
        .map(|n| n.parse().expect("a count"))
        .collect()
}

#[test]
fn the_crossbar_moves_whole_packets_to_their_outputs() {
    for seed in [1u64, 0x9e37_79b9, 77] {
        let counts = ok("ebpflow_crossbar", &format!("{seed} 2000 0"));
        assert_eq!(counts[0], 2000, "seed {seed}");
        assert!(counts[1] > 3000, "seed {seed}: {} beats", counts[1]);
    }
}

#[test]
fn the_crossbar_serves_an_output_round_robin() {
    let counts = ok("ebpflow_crossbar", "5 400 1");
    assert_eq!(counts, [400, 400]);
}

#[test]
fn the_demux_sends_whole_packets_round_robin_to_free_engines() {
    for seed in [3u64, 0x9e37_79b9, 1234] {
        let counts = ok("ebpflow_demux", &format!("{seed} 3000"));
        assert_eq!(counts[0], 3000, "seed {seed}");
        // Every engine takes a share: the engines are alike, the busy times random.
        assert!(
            counts[1..].iter().all(|&n| n > 300),
            "seed {seed}: {counts:?}"
        );
    }
}

#[test]
fn the_output_arbiter_takes_whole_packets_round_robin() {
    for seed in [9u64, 0x9e37_79b9, 4321] {
        let counts = ok("ebpflow_out_arbiter", &format!("{seed} 500"));
        assert_eq!(counts[0], 2000, "seed {seed}");
    }
}

#[test]
fn the_action_module_maps_results_to_table_4_2() {
    for seed in [1u64, 77, 0x9e37_79b9] {
        assert_eq!(ok("ebpflow_action", &format!("{seed} 20000")), [20000]);
    }
}
