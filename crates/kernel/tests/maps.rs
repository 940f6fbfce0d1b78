//! The userspace view of every map kind through MapStore, globals, and ring buffers.

mod common;

use common::*;
use hwxdp_kernel::{possible_cpus, KernelError, KernelProgram, Sandbox};
use hwxdp_maps::MapStore;
use hwxdp_xdp::{Verdict, XdpMd};

fn u64_bytes(v: u64) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}

#[test]
fn every_map_kind_shows_the_syscall_view() {
    require_bpf();
    let _sandbox = Sandbox::enter(&[(5, 1)]).expect("sandbox");
    let (elf, spec) = fixture("maps");
    let [counters, per_cpu_map, flows, recent, routes, ports] =
        ["counters", "per_cpu", "flows", "recent", "routes", "ports"]
            .map(|name| map_index(&spec, name));
    let mut prog = KernelProgram::load(&elf, &spec, "xdp_maps").expect("load");
    let cpus = possible_cpus().expect("possible cpus");
    assert_eq!(prog.possible_cpus(), cpus);
    assert_eq!(prog.specs(), &spec.maps[..]);

    let route_10_8 = [8, 0, 0, 0, 10, 0, 0, 0];
    prog.update(routes, &route_10_8, &u32_bytes(42), 0)
        .expect("route");
    prog.update(ports, &u32_bytes(0), &u32_bytes(5), 0)
        .expect("port 0 to ifindex 5");
    let err = prog
        .update(ports, &u32_bytes(1), &u32_bytes(77), 0)
        .expect_err("ifindex 77 does not exist");
    assert_eq!(err.errno, 22, "{err}");

    let run = prog.test_run(&frame(), &XdpMd::default()).expect("run");
    assert_eq!(run.verdict(), Verdict::Redirect);

    let counter_entries = prog.entries(counters).expect("counters");
    let expected: Vec<_> = [1u64, 42, 0, 0]
        .iter()
        .enumerate()
        .map(|(i, &v)| (u32_bytes(i as u32), u64_bytes(v)))
        .collect();
    assert_eq!(counter_entries, expected);

    // One 8-byte slot per possible CPU; the program ran on CPU 0 only.
    let mut per_cpu = vec![0u8; 8 * cpus];
    per_cpu[..4].copy_from_slice(&1u32.to_ne_bytes());
    assert_eq!(
        prog.lookup(per_cpu_map, &u32_bytes(0)).expect("lookup"),
        Some(per_cpu.clone())
    );
    assert_eq!(prog.entries(per_cpu_map).expect("entries").len(), 2);
    let err = prog
        .update(per_cpu_map, &u32_bytes(1), &u32_bytes(3), 0)
        .expect_err("per-cpu values are per cpu");
    assert_eq!(err.errno, 22);
    per_cpu[..4].copy_from_slice(&9u32.to_ne_bytes());
    prog.update(per_cpu_map, &u32_bytes(1), &per_cpu, 0)
        .expect("per-cpu update");
    assert_eq!(
        prog.lookup(per_cpu_map, &u32_bytes(1)).expect("lookup"),
        Some(per_cpu)
    );

    let flow = vec![(u32_bytes(7), u64_bytes(0x1122334455667788))];
    assert_eq!(prog.entries(flows).expect("flows"), flow);
    assert_eq!(prog.entries(recent).expect("recent"), flow);
    prog.delete(flows, &u32_bytes(7)).expect("delete");
    assert_eq!(prog.entries(flows).expect("flows"), vec![]);
    assert_eq!(prog.lookup(flows, &u32_bytes(7)).expect("lookup"), None);
    let err = prog.delete(flows, &u32_bytes(7)).expect_err("already gone");
    assert_eq!(err.errno, 2);
    // A failed system call says which, and its errno; nothing else carries an errno in its message.
    assert_eq!(
        err.to_string(),
        "map flows: BPF_MAP_DELETE_ELEM failed: no such file or directory (errno 2)"
    );

    assert_eq!(
        prog.entries(routes).expect("routes"),
        vec![(route_10_8.to_vec(), u32_bytes(42))]
    );
    let host = [32, 0, 0, 0, 10, 1, 2, 3];
    assert_eq!(
        prog.lookup(routes, &host).expect("longest prefix"),
        Some(u32_bytes(42))
    );

    assert_eq!(
        prog.entries(ports).expect("ports"),
        vec![(u32_bytes(0), u32_bytes(5))]
    );
    assert_eq!(prog.lookup(ports, &u32_bytes(1)).expect("empty slot"), None);

    let err = prog.lookup(counters, &[0, 0]).expect_err("short key");
    assert_eq!(
        err.to_string(),
        "map counters: key of 2 bytes, the map's keys have 4"
    );
    let err = prog.ringbuf_drain(counters).expect_err("not a ring buffer");
    assert_eq!(
        err.to_string(),
        format!("map index {counters}: counters is a BPF_MAP_TYPE_ARRAY, not a ring buffer")
    );
    assert!(prog.lookup(17, &u32_bytes(0)).is_err());
}

#[test]
fn globals_are_maps_with_their_values() {
    require_bpf();
    let (elf, spec) = fixture("globals");
    let [rodata, data, bss] = [".rodata", ".data", ".bss"].map(|name| map_index(&spec, name));
    let mut prog = KernelProgram::load(&elf, &spec, "xdp_globals").expect("load");
    let one = |v: u32| vec![(u32_bytes(0), u32_bytes(v))];
    assert_eq!(prog.entries(rodata).expect(".rodata"), one(7));
    assert_eq!(prog.entries(data).expect(".data"), one(9));
    assert_eq!(prog.entries(bss).expect(".bss"), one(0));
    prog.test_run(&frame(), &XdpMd::default()).expect("run");
    assert_eq!(prog.entries(rodata).expect(".rodata"), one(7));
    assert_eq!(prog.entries(data).expect(".data"), one(10));
    assert_eq!(prog.entries(bss).expect(".bss"), one(16));
    let err = prog
        .update(0, &u32_bytes(0), &u32_bytes(1), 0)
        .expect_err("libbpf froze .rodata");
    assert_eq!(err.errno, 1, "{err}");

    let hundred = 100u32.to_ne_bytes();
    let mut prog =
        KernelProgram::load_with_globals(&elf, &spec, "xdp_globals", &[(rodata, &hundred)])
            .expect("load with .rodata = 100");
    prog.test_run(&frame(), &XdpMd::default()).expect("run");
    assert_eq!(prog.entries(bss).expect(".bss"), one(109));

    let err = KernelProgram::load_with_globals(&elf, &spec, "xdp_globals", &[(rodata, &[1, 2])])
        .expect_err("wrong size");
    assert!(
        matches!(&err, KernelError::MapMismatch { map, .. } if map == ".rodata"),
        "{err}"
    );
}

#[test]
fn ringbuf_records_are_drained_in_order_once() {
    require_bpf();
    let (elf, spec) = fixture("ringbuf");
    let events = map_index(&spec, "events");
    let mut prog = KernelProgram::load(&elf, &spec, "xdp_ringbuf").expect("load");
    let packet = frame();
    prog.test_run(&packet, &XdpMd::default()).expect("run");
    prog.test_run(&packet[..60], &XdpMd::default())
        .expect("run");
    let record = |len: u32, i: u32| [len.to_ne_bytes(), i.to_ne_bytes()].concat();
    let len = packet.len() as u32;
    assert_eq!(
        prog.ringbuf_drain(events).expect("drain"),
        vec![record(len, 0), record(len, 1), record(60, 0), record(60, 1)]
    );
    assert_eq!(
        prog.ringbuf_drain(events).expect("drain"),
        Vec::<Vec<u8>>::new()
    );
    prog.test_run(&packet, &XdpMd::default()).expect("run");
    assert_eq!(
        prog.ringbuf_drain(events).expect("drain"),
        vec![record(len, 0), record(len, 1)]
    );
    assert_eq!(
        prog.entries(events).expect("ring buffers are not listable"),
        vec![]
    );
    assert!(matches!(
        prog.ringbuf_drain(3),
        Err(KernelError::BadMap { index: 3, .. })
    ));
}

#[test]
fn maps_declared_pinned_start_fresh_on_every_load_and_are_not_pinned() {
    require_bpf();
    let (elf, spec) = fixture("pinned");
    let counter = map_index(&spec, "hwxdp_pinned");
    for load in 1..=2 {
        let mut prog = KernelProgram::load(&elf, &spec, "xdp_count").expect("load");
        let run = prog.test_run(&frame(), &XdpMd::default()).expect("run");
        assert_eq!(run.verdict(), Verdict::Pass);
        assert_eq!(
            prog.lookup(counter, &u32_bytes(0)).expect("lookup"),
            Some(u64_bytes(1)),
            "load {load} sees only its own packet"
        );
    }
    assert!(
        !std::path::Path::new("/sys/fs/bpf/hwxdp_pinned").exists(),
        "the map was pinned in the host's bpffs"
    );
}
