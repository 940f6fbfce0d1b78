//! Maps of maps (tests/programs/map_in_map.c): an ARRAY_OF_MAPS of LRU tables as Katran's `lru_mapping`, and a
//! HASH_OF_MAPS of arrays, filled by `.values` initializers; lookups on the outer maps give the inner map the next
//! helper call uses. Verified against the kernel as the object defines them and after `--maps` puts another inner map
//! in (outer map values are map indices in the object, where bpftool shows map ids).
//!
//! Needs clang and a kernel that runs BPF programs (root); without `bpf()` the kernel half fails, it is not skipped.

mod support;

use support::*;

const SOURCE: &str = include_str!("programs/map_in_map.c");

fn compiled(tag: &str) -> (String, String, String) {
    let dir = scratch_dir(tag);
    let obj = compile_c(&dir, "map_in_map", SOURCE);
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", "1500"]);
    assert!(gen.ok, "{}", gen.all);
    (obj, format!("{dir}/trace.pcap"), dir)
}

/// The maps after `run` on the reference machine, from `--dump-maps`.
fn dump(obj: &str, pcap: &str, out: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", obj, "--pcap", pcap, "-o", out, "--dump-maps"];
    args.extend(extra);
    let run = hwxdp(&args);
    assert!(run.ok, "{}", run.all);
    serde_json::from_str(&std::fs::read_to_string(format!("{out}/maps.json")).expect("maps.json"))
        .expect("JSON")
}

#[test]
fn outer_maps_give_their_inner_maps_as_the_kernel_does() {
    let (obj, pcap, dir) = compiled("mim-verify");
    let maps = dump(&obj, &pcap, &format!("{dir}/run"), &[]);
    // Slots 0 and 2 of lru_mapping hold lru_0 and lru_1 (by map index), the others nothing: the program drops there.
    let outer = maps["lru_mapping"].as_array().expect("lru_mapping listed");
    let keys: Vec<&str> = outer
        .iter()
        .map(|e| e["key"][0].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["0x00", "0x02"]);
    assert!(!maps["lru_0"].as_array().unwrap().is_empty());
    assert!(!maps["tcp_counts"].as_array().unwrap().is_empty());
    require_kernel();
    let verify = hwxdp(&["verify", &obj, "--pcap", &pcap]);
    assert!(verify.ok, "{}", verify.all);
    assert_eq!(
        identical_count(&verify.stdout),
        Some(1500),
        "{}",
        verify.all
    );
    assert!(verify.stdout.contains("6 maps identical"), "{}", verify.all);
}

#[test]
fn maps_files_put_inner_maps_in_by_index_and_the_template_is_enforced() {
    let (obj, pcap, dir) = compiled("mim-preload");
    let maps = dump(&obj, &pcap, &format!("{dir}/run"), &[]);
    // lru_1's index, as lru_mapping[2] shows it; it goes to slot 1 too, so fewer packets drop.
    let lru_1 = maps["lru_mapping"][1]["value"].clone();
    let file = format!("{dir}/maps.json");
    let preload = serde_json::json!({"lru_mapping": [{"key": [1, 0, 0, 0], "value": lru_1}]});
    std::fs::write(&file, preload.to_string()).expect("maps.json written");
    let after = dump(&obj, &pcap, &format!("{dir}/run2"), &["--maps", &file]);
    assert_eq!(
        after["lru_mapping"].as_array().unwrap().len(),
        3,
        "{}",
        after["lru_mapping"]
    );
    // tcp_counts (an ARRAY) does not match the LRU template: refused, naming both maps.
    let tcp = maps["by_proto"][0]["value"].clone();
    let bad = format!("{dir}/bad.json");
    let wrong = serde_json::json!({"lru_mapping": [{"key": [1, 0, 0, 0], "value": tcp}]});
    std::fs::write(&bad, wrong.to_string()).expect("bad.json written");
    let refused = hwxdp(&[
        "run",
        &obj,
        "--pcap",
        &pcap,
        "-o",
        &format!("{dir}/run3"),
        "--maps",
        &bad,
    ]);
    assert!(!refused.ok, "{}", refused.all);
    assert!(
        refused.all.contains("lru_mapping")
            && refused
                .all
                .contains("tcp_counts does not match the inner map template"),
        "{}",
        refused.all
    );
    require_kernel();
    let verify = hwxdp(&["verify", &obj, "--pcap", &pcap, "--maps", &file]);
    assert!(verify.ok, "{}", verify.all);
    assert_eq!(
        identical_count(&verify.stdout),
        Some(1500),
        "{}",
        verify.all
    );
    assert!(verify.stdout.contains("6 maps identical"), "{}", verify.all);
}
