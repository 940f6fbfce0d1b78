//! Sparse large maps: a 2^24-entry array (Katran's QUIC/GUE server-id table) and a 2^21-entry per-CPU array, which the
//! kernel preallocates, run on the reference machine for what the trace writes and verify identical to the kernel;
//! dumps list only their non-zero entries.
//!
//! Needs clang and a kernel that runs BPF programs (root); without `bpf()` the kernel half fails, it is not skipped.

mod support;

use support::*;

const SOURCE: &str = include_str!("programs/huge_array.c");

#[test]
fn a_2_24_entry_array_runs_and_verifies_against_the_kernel() {
    let dir = scratch_dir("large-maps-verify");
    let obj = compile_c(&dir, "huge_array", SOURCE);
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "1500"]);
    assert!(gen.ok, "{}", gen.all);
    let pcap = format!("{dir}/trace.pcap");
    require_kernel();
    let verify = hwxdp(&["verify", &obj, "--pcap", &pcap]);
    assert!(verify.ok, "{}", verify.all);
    assert_eq!(
        identical_count(&verify.stdout),
        Some(1500),
        "{}",
        verify.all
    );
    assert!(verify.stdout.contains("2 maps identical"), "{}", verify.all);
}

#[test]
fn dumps_of_huge_arrays_list_the_entries_written() {
    let dir = scratch_dir("large-maps-dump");
    let obj = compile_c(&dir, "huge_array", SOURCE);
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "400"]);
    assert!(gen.ok, "{}", gen.all);
    let out = format!("{dir}/run");
    let pcap = format!("{dir}/trace.pcap");
    let run = hwxdp(&["run", &obj, "--pcap", &pcap, "-o", &out, "--dump-maps"]);
    assert!(run.ok, "{}", run.all);
    let dump: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{out}/maps.json")).expect("maps.json"),
    )
    .expect("JSON");
    let ids = dump["server_id_map"]
        .as_array()
        .expect("server_id_map listed");
    // Every listed entry holds a value the program wrote (odd: `fresh | 1`, then counted up); no zeros.
    assert!(!ids.is_empty() && ids.len() <= 400, "{} entries", ids.len());
    for e in ids {
        let value = e["value"].as_array().expect("value bytes");
        assert!(
            value.iter().any(|b| b != "0x00"),
            "a zero entry listed: {e}"
        );
    }
    let stats = read_stats(&out);
    let passed = stats["verdicts"]["pass"].as_u64().unwrap_or(0);
    assert!(passed as usize >= ids.len(), "{stats}");
}
