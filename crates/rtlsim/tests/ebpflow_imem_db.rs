//! rtl/ebpflow/ebpflow_imem_db.sv (the double-buffered instruction memory the engines share) under random traffic:
//! four engines run packets while the host writes program after program into the idle bank and swaps; the testbench
//! (`sim/unit/ebpflow_imem_db_tb.cpp`) checks every read against the one program active when its packet started,
//! and that packets after a swap run the new program.

mod common;

#[test]
fn every_packet_runs_exactly_one_whole_program_across_swaps() {
    let mut spec = common::unit_spec("ebpflow_imem_db");
    spec.sources = vec![
        "common/ram_tdp.sv".into(),
        "ebpflow/ebpflow_imem_db.sv".into(),
    ];
    spec.flags = ["-GENGINES=4", "-GDEPTH=64", "-GIW=6"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for seed in [5u64, 77, 0x9e37_79b9] {
        let lines = common::run_testbench(&spec, format!("{seed} 100000\n"));
        let [line] = lines.as_slice() else {
            panic!("seed {seed}: {lines:?}")
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"ok"), "seed {seed}: {line}");
        let packets: u64 = words[1].parse().expect("packets");
        let swaps: u64 = words[2].parse().expect("swaps");
        // The traffic must really overlap the swaps: thousands of packets, hundreds of swaps.
        assert!(packets > 10_000 && swaps > 300, "seed {seed}: {line}");
    }
}
