//! `bpf_perf_event_output` into a PERF_EVENT_ARRAY (tests/programs/perf_sampler.c): a header alone and the packet-sample
//! form (BPF_F_CTXLEN_MASK), on this CPU (BPF_F_CURRENT_CPU) and by index, and the helper's failures, verified against
//! the kernel's perf buffers sample by sample (bytes and CPU) with rings read after each packet and after the whole
//! trace (where they fill and samples are lost); `run` writes the samples as JSON lines and their packets as a pcap.
//! The hXDP cycle model (`--backend hxdp`) is verified the same way; `hxdp-rtl` refuses the helper by name.
//!
//! Needs clang and a kernel that runs BPF programs (root); without `bpf()` the kernel half fails, it is not skipped.

mod support;

use support::*;

const SOURCE: &str = include_str!("programs/perf_sampler.c");

/// The sampler compiled and a generic trace of `packets` packets for it: (object, trace pcap, scratch directory).
fn sampler(tag: &str, packets: usize) -> (String, String, String) {
    let dir = scratch_dir(tag);
    let obj = compile_c(&dir, "perf_sampler", SOURCE);
    let gen = hwxdp(&["gen", &obj, "-o", &dir, "-n", &packets.to_string()]);
    assert!(gen.ok, "{}", gen.all);
    (obj, format!("{dir}/trace.pcap"), dir)
}

/// `results[key]` of the sampler's results map in a `maps.json`, as the signed 64-bit value it holds.
fn result(dump: &serde_json::Value, key: u8) -> i64 {
    let entry = dump["results"]
        .as_array()
        .expect("results listed")
        .iter()
        .find(|e| e["key"][0] == format!("0x{key:02x}"))
        .unwrap_or_else(|| panic!("no results entry {key}"));
    let bytes: Vec<u8> = entry["value"]
        .as_array()
        .expect("value bytes")
        .iter()
        .map(|b| u8::from_str_radix(b.as_str().unwrap().trim_start_matches("0x"), 16).unwrap())
        .collect();
    i64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

fn run_dump(obj: &str, pcap: &str, out: &str, rings: &str) -> serde_json::Value {
    let run = hwxdp(&[
        "run",
        obj,
        "--pcap",
        pcap,
        "-o",
        out,
        "--dump-maps",
        "--rings",
        rings,
    ]);
    assert!(run.ok, "{}", run.all);
    serde_json::from_str(&std::fs::read_to_string(format!("{out}/maps.json")).expect("maps.json"))
        .expect("JSON")
}

#[test]
fn samples_read_after_each_packet_are_the_kernels() {
    let (obj, pcap, dir) = sampler("perf-packet", 1000);
    // Every case ran, and each failure returned the kernel's errno.
    let dump = run_dump(&obj, &pcap, &format!("{dir}/run"), "packet");
    for case in 0..7 {
        assert!(result(&dump, case * 2 + 1) > 0, "case {case} never ran");
    }
    assert_eq!(
        result(&dump, 3 * 2),
        -95,
        "another cpu's event: -EOPNOTSUPP"
    );
    assert_eq!(result(&dump, 4 * 2), -7, "index beyond max_entries: -E2BIG");
    assert_eq!(
        result(&dump, 5 * 2),
        -14,
        "more packet bytes than the packet: -EFAULT"
    );
    assert_eq!(result(&dump, 6 * 2), -22, "unknown flag: -EINVAL");
    require_kernel();
    // The reference machine and the hXDP cycle model (whose helpers are the reference machine's).
    for backend in ["interp", "hxdp"] {
        let verify = hwxdp(&["verify", &obj, "--pcap", &pcap, "--backend", backend]);
        assert!(verify.ok, "{backend}: {}", verify.all);
        assert_eq!(
            identical_count(&verify.stdout),
            Some(1000),
            "{backend}: {}",
            verify.all
        );
        assert!(
            verify.stdout.contains(" perf samples)"),
            "{backend}: {}",
            verify.all
        );
    }
}

#[test]
fn rings_read_after_the_trace_fill_and_lose_the_samples_the_kernel_loses() {
    let (obj, pcap, dir) = sampler("perf-trace", 8000);
    let dump = run_dump(&obj, &pcap, &format!("{dir}/run"), "trace");
    assert!(result(&dump, 15) > 0, "the ring never filled: {dump}");
    require_kernel();
    for backend in ["interp", "hxdp"] {
        let verify = hwxdp(&[
            "verify",
            &obj,
            "--pcap",
            &pcap,
            "--rings",
            "trace",
            "--backend",
            backend,
        ]);
        assert!(verify.ok, "{backend}: {}", verify.all);
        assert_eq!(
            identical_count(&verify.stdout),
            Some(8000),
            "{backend}: {}",
            verify.all
        );
    }
}

#[test]
fn the_hxdp_model_writes_the_samples_interp_writes_and_the_rtl_refuses_the_helper_by_name() {
    let (obj, pcap, dir) = sampler("perf-hxdp", 300);
    let interp = format!("{dir}/interp");
    let model = format!("{dir}/hxdp");
    run_dump(&obj, &pcap, &interp, "packet");
    let run = hwxdp(&[
        "run",
        &obj,
        "--pcap",
        &pcap,
        "-o",
        &model,
        "--rings",
        "packet",
        "--backend",
        "hxdp",
    ]);
    assert!(run.ok, "{}", run.all);
    for file in ["records.jsonl", "perf_samples.pcap"] {
        let want = std::fs::read(format!("{interp}/{file}")).expect(file);
        let got = std::fs::read(format!("{model}/{file}")).expect(file);
        assert!(!want.is_empty(), "{file} is empty");
        assert!(want == got, "{file}: hxdp's differs from interp's");
    }
    // The hXDP module's helper module has no perf event ring: refused at setup, naming the helper.
    let rtl = hwxdp(&[
        "run",
        &obj,
        "--pcap",
        &pcap,
        "-o",
        &format!("{dir}/rtl"),
        "--backend",
        "hxdp-rtl",
    ]);
    assert!(!rtl.ok, "{}", rtl.all);
    assert!(
        rtl.all.contains("bpf_perf_event_output (helper 25)"),
        "{}",
        rtl.all
    );
}

#[test]
fn run_writes_samples_with_their_cpu_and_the_sampled_packets_as_a_pcap() {
    let (obj, pcap, dir) = sampler("perf-run", 300);
    let out = format!("{dir}/run");
    run_dump(&obj, &pcap, &out, "packet");
    let trace = read_pcap(&pcap);
    let sampled = read_pcap(&format!("{out}/perf_samples.pcap"));
    let records = std::fs::read_to_string(format!("{out}/records.jsonl")).expect("records.jsonl");
    let mut with_packet = 0;
    for line in records.lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        assert_eq!(r["map"], "samples");
        assert_eq!(r["cpu"], 0, "{r}");
        let packet = r["packet"].as_u64().expect("attributed to a packet") as usize;
        let hex = r["bytes"].as_str().expect("bytes");
        // The header: cookie 0xdead, the packet's length, the case; padded so that size and bytes end on 8.
        assert!(hex.starts_with("adde"), "{r}");
        assert_eq!((hex.len() / 2 + 4) % 8, 0, "{r}");
        let len = trace[packet].len();
        match len % 7 {
            1 => {
                assert_eq!(sampled[with_packet], trace[packet], "packet {packet}");
                with_packet += 1;
            }
            2 => {
                assert_eq!(
                    sampled[with_packet],
                    trace[packet][..len.min(64)],
                    "packet {packet}"
                );
                with_packet += 1;
            }
            0 => assert_eq!(hex.len(), 8, "3 bytes padded to 4: {r}"),
            other => panic!("case {other} wrote a sample: {r}"),
        }
    }
    assert!(with_packet > 0, "no sample carried packet bytes");
    assert_eq!(sampled.len(), with_packet);
}

/// The frames of a pcap file.
fn read_pcap(path: &str) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut reader = pcap_file::pcap::PcapReader::new(file).expect("a pcap header");
    let mut frames = Vec::new();
    while let Some(packet) = reader.next_packet() {
        frames.push(packet.expect("a pcap record").data.into_owned());
    }
    frames
}
