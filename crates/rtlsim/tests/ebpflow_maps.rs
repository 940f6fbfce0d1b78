//! One eBPFlow engine with its coprocessor (`ebpflow_conformance` with a map table): programs that call the map
//! helpers and load, store and run atomics on map values through the map-value window, with the answers the
//! reference machine's map semantics give, and the cycles a map helper and a map-value access cost the engine (the
//! key gather before the request, then the contract's service times).

mod common;

use hwxdp_object::{MapKind, MapSpec};
use hwxdp_rtlsim::ebpflow::{slots_of, EbpflowPaths, EbpflowRtl, Header, Run};

fn spec(name: &str, map_type: u32, key_size: u32, value_size: u32, max_entries: u32) -> MapSpec {
    MapSpec {
        name: name.into(),
        map_type,
        key_size,
        value_size,
        max_entries,
        map_flags: if map_type == 11 { 1 } else { 0 },
        kind: MapKind::BtfDefined,
        initial_value: None,
        outer: None,
    }
}

/// A fresh engine (its own model process: the map table is written once) with map 0 a HASH (4-byte keys, 8-byte
/// values, 4 entries), map 1 an ARRAY (8-byte values, 4 rows) and map 2 an LPM_TRIE (IPv4 keys, 8-byte values).
fn engine_with_maps() -> EbpflowRtl {
    let paths = EbpflowPaths::embedded(common::target_dir().join("rtlsim"));
    let mut e = EbpflowRtl::new(&paths).unwrap_or_else(|e| panic!("{e}"));
    e.map_table(&[
        spec("hash", 1, 4, 8, 4),
        spec("array", 2, 4, 8, 4),
        spec("lpm", 11, 8, 8, 4),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    e
}

fn run(e: &mut EbpflowRtl, text: &str) -> Run {
    let insns = hwxdp_ebpf::assemble(text).unwrap_or_else(|err| panic!("{err}\n{text}"));
    let slots = slots_of(&hwxdp_ebpf::encode(&insns)).expect("whole slots");
    e.clear().unwrap_or_else(|err| panic!("{err}"));
    e.load(&slots).unwrap_or_else(|err| panic!("{err}"));
    let got = e
        .run(&Header::default(), &[], 0)
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(!got.fault, "the engine faulted on\n{text}");
    got
}

/// `bpf_map_update_elem(map, &key, &value, flags)` with the key at r10 - 4 and the value at r10 - 16.
fn update(map: u32, key: u32, value: u64, flags: u32) -> String {
    format!(
        "r1 = {key}\n*(u32 *)(r10 - 4) = r1\nr1 = {value}\n*(u64 *)(r10 - 16) = r1\nr1 = {map}\nr2 = r10\nr2 += -4\n\
         r3 = r10\nr3 += -16\nr4 = {flags}\ncall 2\n"
    )
}

/// `bpf_map_lookup_elem(map, &key)` with the key at r10 - 4.
fn lookup(map: u32, key: u32) -> String {
    format!("r1 = {key}\n*(u32 *)(r10 - 4) = r1\nr1 = {map}\nr2 = r10\nr2 += -4\ncall 1\n")
}

/// `bpf_map_delete_elem(map, &key)` with the key at r10 - 4.
fn delete(map: u32, key: u32) -> String {
    format!("r1 = {key}\n*(u32 *)(r10 - 4) = r1\nr1 = {map}\nr2 = r10\nr2 += -4\ncall 3\n")
}

#[test]
fn programs_use_the_maps_through_the_coprocessor() {
    let mut e = engine_with_maps();
    // Update, look up, add atomically through the returned pointer, load it back.
    let text = format!(
        "{}r6 = r0\n{}if r0 == 0 goto miss\nr1 = 5\nlock *(u64 *)(r0 + 0) += r1\nr7 = *(u64 *)(r0 + 0)\n\
         r0 = r7\nr0 += r6\nexit\nmiss:\nr0 = 999\nexit",
        update(0, 7, 100, 0),
        lookup(0, 7)
    );
    assert_eq!(run(&mut e, &text).r0, 105);
    // The value stays in the coprocessor from one packet to the next; BPF_NOEXIST on an existing key is -EEXIST.
    let text = format!(
        "{}r6 = *(u64 *)(r0 + 0)\n{}r0 += r6\nexit",
        lookup(0, 7),
        update(0, 7, 1, 1)
    );
    assert_eq!(run(&mut e, &text).r0, 105u64.wrapping_sub(17));
    // Four keys fit, a fifth is -E2BIG; a deleted key is gone, deleting it again is -ENOENT.
    let mut text = String::new();
    for k in 1..=3 {
        text += &update(0, k, k as u64, 0);
        text += "r9 |= r0\n";
    }
    text += &update(0, 4, 4, 0);
    text += "r8 = r0\n";
    text += &delete(0, 7);
    text += "r9 |= r0\n";
    text += &delete(0, 7);
    text += "r7 = r0\n";
    text += &lookup(0, 7);
    text +=
        "r9 |= r0\nr0 = r9\nr0 <<= 8\nr8 &= 0xff\nr0 |= r8\nr0 <<= 8\nr7 &= 0xff\nr0 |= r7\nexit";
    // r9 = 0 (three inserts, a delete, a miss), r8 = -E2BIG (0xf9), r7 = -ENOENT (0xfe).
    assert_eq!(run(&mut e, &text).r0, 0xf9fe);
    // ARRAY: rows exist from the start (zero); a store through the pointer stays; a row past the end is absent.
    let text = format!(
        "{}r6 = r0\nr1 = 42\n*(u32 *)(r6 + 4) = r1\n{}r7 = *(u32 *)(r0 + 4)\nr8 = *(u32 *)(r0 + 0)\n{}\
         r0 += r7\nr0 += r8\nexit",
        lookup(1, 2),
        lookup(1, 2),
        lookup(1, 9)
    );
    assert_eq!(run(&mut e, &text).r0, 42);
    // LPM_TRIE: 10.0.0.0/8 -> 1 and 10.1.0.0/16 -> 2; 10.1.2.3 finds 2, 10.9.9.9 finds 1.
    let lpm_key = |plen: u32, data: u32| {
        format!("r1 = {plen}\n*(u32 *)(r10 - 8) = r1\nr1 = {data}\n*(u32 *)(r10 - 4) = r1\n")
    };
    let lpm_update = |plen: u32, data: u32, value: u64| {
        format!(
            "{}r1 = {value}\n*(u64 *)(r10 - 16) = r1\nr1 = 2\nr2 = r10\nr2 += -8\nr3 = r10\nr3 += -16\nr4 = 0\n\
             call 2\n",
            lpm_key(plen, data)
        )
    };
    let lpm_lookup =
        |data: u32| format!("{}r1 = 2\nr2 = r10\nr2 += -8\ncall 1\n", lpm_key(32, data));
    // Network order: 10.1.2.3 is the bytes 10, 1, 2, 3, the little-endian word 0x0302010a.
    let text = format!(
        "{}{}{}r6 = *(u64 *)(r0 + 0)\n{}r7 = *(u64 *)(r0 + 0)\nr0 = r6\nr0 *= 10\nr0 += r7\nexit",
        lpm_update(8, 0x0a, 1),
        lpm_update(16, 0x010a, 2),
        lpm_lookup(0x0302_010a),
        lpm_lookup(0x0909_090a)
    );
    assert_eq!(run(&mut e, &text).r0, 21);
}

#[test]
fn a_map_helper_costs_its_key_gather_and_the_contracts_service_time() {
    let mut e = engine_with_maps();
    // The same instructions around one helper call: bpf_redirect (23, answered by the engine itself in the cycle
    // of its request, 1 cycle after EX empties) against lookup (4 cycles at the coprocessor, asked 2 cycles after:
    // two key words read, the first in the cycle the call acts, the request in the cycle the last comes back),
    // delete (8, asked 2 cycles after) and update (8, asked 6 cycles after: two key and four value words).
    let mut call = |id: u32, before: &str| {
        run(
            &mut e,
            &format!(
                "r1 = 0\nr2 = r10\nr2 += -16\nr3 = r10\nr3 += -16\n{before}call {id}\nr0 = 0\nexit"
            ),
        )
        .cycles
    };
    let other = call(23, "r4 = 0\n");
    // Each difference: the request 1 (2 key words) or 5 (and 4 value words) cycles later, the service 3 or 7
    // cycles longer than bpf_redirect's 1.
    assert_eq!(call(1, "r4 = 0\n") - other, 1 + 3, "lookup");
    assert_eq!(call(3, "r4 = 0\n") - other, 1 + 7, "delete");
    assert_eq!(call(2, "r4 = 0\n") - other, 5 + 7, "update");
    // r2 (or an update's r3) still in EX when the call acts: the gather reads its first word a cycle later.
    let late = call(23, "r4 = 0\nr2 += 0\n");
    assert_eq!(
        call(1, "r4 = 0\nr2 += 0\n") - late,
        2 + 3,
        "lookup, r2 in EX"
    );
    assert_eq!(
        call(2, "r4 = 0\nr3 += 0\n") - late,
        6 + 7,
        "update, r3 in EX"
    );
    assert_eq!(
        call(1, "r4 = 0\nr3 += 0\n") - late,
        1 + 3,
        "lookup, r3 in EX"
    );
    // r2 loaded by the instruction before (in MEM when the call acts, EX empty): likewise a cycle later.
    let loaded = call(23, "*(u64 *)(r10 - 24) = r2\nr2 = *(u64 *)(r10 - 24)\n");
    assert_eq!(
        call(1, "*(u64 *)(r10 - 24) = r2\nr2 = *(u64 *)(r10 - 24)\n") - loaded,
        2 + 3,
        "lookup, r2 loaded"
    );
    // A load from a map value waits one cycle more in EX than one from the stack (its ack in the second cycle).
    let mut load = |from: &str| {
        run(
            &mut e,
            &format!("{}r6 = r0\n{from}r0 = 0\nexit", lookup(1, 0)),
        )
        .cycles
    };
    assert_eq!(
        load("r7 = *(u64 *)(r6 + 0)\n") - load("r7 = *(u64 *)(r10 - 8)\n"),
        1
    );
}
