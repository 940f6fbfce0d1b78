//! Running programs with BPF_PROG_TEST_RUN: verdicts, output bytes, xdp_md fields, tail calls, load errors.

mod common;

use common::*;
use hwxdp_kernel::{KernelError, KernelProgram, Sandbox};
use hwxdp_maps::MapStore;
use hwxdp_xdp::{Verdict, XdpBuff, XdpMd};

fn load(name: &str) -> KernelProgram {
    require_bpf();
    let (elf, spec) = fixture("verdicts");
    KernelProgram::load(&elf, &spec, name).unwrap_or_else(|e| panic!("load {name}: {e}"))
}

fn swapped(packet: &[u8]) -> Vec<u8> {
    let mut expected = packet.to_vec();
    expected[..6].copy_from_slice(&packet[6..12]);
    expected[6..12].copy_from_slice(&packet[..6]);
    expected
}

#[test]
fn mac_swap_returns_tx_and_the_swapped_frame() {
    let mut prog = load("xdp_swap");
    let packet = frame();
    let run = prog.test_run(&packet, &XdpMd::default()).expect("test run");
    assert_eq!(run.verdict(), Verdict::Tx);
    assert_eq!(run.meta_len, 0);
    assert_eq!(run.output, swapped(&packet));
}

#[test]
fn output_is_written_back_with_the_input_metadata() {
    let mut prog = load("xdp_swap");
    let packet = frame();
    let mut buff = XdpBuff::new(&packet).expect("buffer");
    let run = prog.test_run(buff.data(), &XdpMd::default()).expect("run");
    assert_eq!(run.verdict(), Verdict::Tx);
    buff.set_output(&run.output, run.meta_len).expect("fits");
    assert_eq!(buff.data(), &swapped(&packet)[..]);
    assert!(buff.meta().is_empty());

    let meta = [9, 8, 7, 6, 5, 4, 3, 2];
    let run = prog
        .test_run_with_meta(&meta, &packet, &XdpMd::default())
        .expect("run");
    assert_eq!(run.verdict(), Verdict::Tx);
    assert_eq!(run.meta(), &meta);
    assert_eq!(run.data(), &swapped(&packet)[..]);
}

#[test]
fn adjusted_output_starts_at_data_meta_and_matches_the_reference_layout() {
    let mut prog = load("xdp_adjust");
    let packet = frame();
    let run = prog.test_run(&packet, &XdpMd::default()).expect("test run");
    assert_eq!(run.verdict(), Verdict::Pass);
    // The kernel hands back data_meta..data_end: the metadata is included, and ctx_out tells its length.
    assert_eq!(run.meta_len, 4);
    assert_eq!(run.meta(), &0x44332211u32.to_ne_bytes());
    let mut data = vec![0xaa; 8];
    data.extend_from_slice(&packet);
    data.extend_from_slice(&[0, 0]);
    assert_eq!(run.data(), &data[..]);

    // The same steps on hwxdp's buffer model give the same bytes.
    let mut buff = XdpBuff::new(&packet).expect("buffer");
    assert_eq!(buff.adjust_head(-8), 0);
    let (_, start, _) = buff.offsets();
    buff.frame_mut()[start..start + 8].fill(0xaa);
    assert_eq!(buff.adjust_meta(-4), 0);
    buff.frame_mut()[start - 4..start].copy_from_slice(&0x44332211u32.to_ne_bytes());
    assert_eq!(buff.adjust_tail(2), 0);
    assert_eq!(buff.output(), &run.output[..]);
}

#[test]
fn xdp_md_fields_come_from_the_sandbox_devices() {
    require_bpf();
    let _sandbox = Sandbox::enter(&[(5, 4)]).expect("sandbox");
    let mut prog = load("xdp_md_fields");
    let seen = |prog: &mut KernelProgram| -> (Vec<u8>, Vec<u8>) {
        let ifindex = prog
            .lookup(0, &u32_bytes(0))
            .expect("lookup")
            .expect("ifindex slot");
        let queue = prog
            .lookup(0, &u32_bytes(1))
            .expect("lookup")
            .expect("queue slot");
        (ifindex, queue)
    };

    let md = XdpMd {
        ingress_ifindex: 5,
        rx_queue_index: 3,
    };
    assert_eq!(
        prog.test_run(&frame(), &md)
            .expect("queue 3 of 4")
            .verdict(),
        Verdict::Pass
    );
    assert_eq!(seen(&mut prog), (u32_bytes(5), u32_bytes(3)));

    let md = XdpMd {
        ingress_ifindex: 5,
        rx_queue_index: 4,
    };
    let err = prog
        .test_run(&frame(), &md)
        .expect_err("queue 4 of 4 must be rejected");
    assert!(
        matches!(err, KernelError::Syscall { errno: 22, .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("rx_queue_index 4") && message.contains("invalid argument"),
        "{message}"
    );

    let md = XdpMd {
        ingress_ifindex: 9,
        rx_queue_index: 0,
    };
    let err = prog
        .test_run(&frame(), &md)
        .expect_err("ifindex 9 does not exist");
    assert!(
        matches!(err, KernelError::Syscall { errno: 19, .. }),
        "{err:?}"
    );

    // Without an ingress device the kernel uses the loopback device's queue 0.
    prog.test_run(&frame(), &XdpMd::default())
        .expect("default md");
    assert_eq!(seen(&mut prog), (u32_bytes(1), u32_bytes(0)));
}

#[test]
fn sandbox_rejects_impossible_devices() {
    let err = Sandbox::enter(&[(1, 4)]).expect_err("loopback has one queue");
    assert!(err.to_string().contains("loopback"), "{err}");
    let err = Sandbox::enter(&[(3, 0)]).expect_err("no queues");
    assert!(err.to_string().contains("at least 1"), "{err}");
}

#[test]
fn tail_calls_go_through_the_prog_array_by_program_index() {
    let mut prog = load("xdp_tail_entry");
    let (_, spec) = fixture("verdicts");
    let table = map_index(&spec, "jmp_table");
    let target = program_index(&spec, "xdp_tail_target");
    assert_eq!(
        prog.test_run(&frame(), &XdpMd::default())
            .expect("run")
            .verdict(),
        Verdict::Pass
    );

    prog.update(table, &u32_bytes(0), &u32_bytes(target as u32), 0)
        .expect("update");
    assert_eq!(
        prog.test_run(&frame(), &XdpMd::default())
            .expect("run")
            .verdict(),
        Verdict::Drop
    );
    assert_eq!(
        prog.lookup(table, &u32_bytes(0)).expect("lookup"),
        Some(u32_bytes(target as u32))
    );
    assert_eq!(
        prog.entries(table).expect("entries"),
        vec![(u32_bytes(0), u32_bytes(target as u32))]
    );

    let tc = program_index(&spec, "tc_other");
    let err = prog
        .update(table, &u32_bytes(1), &u32_bytes(tc as u32), 0)
        .expect_err("tc_other is not loaded");
    assert_eq!(err.errno, 22);

    prog.delete(table, &u32_bytes(0)).expect("delete");
    assert_eq!(
        prog.test_run(&frame(), &XdpMd::default())
            .expect("run")
            .verdict(),
        Verdict::Pass
    );
}

#[test]
fn bench_reports_a_mean_time_per_run() {
    let mut prog = load("xdp_swap");
    let ns = prog
        .bench(&frame(), &XdpMd::default(), 1000)
        .expect("bench");
    assert!(ns > 0.0 && ns < 1_000_000.0, "{ns} ns per run");
}

#[test]
fn unknown_and_non_xdp_programs_are_not_found() {
    require_bpf();
    let (elf, spec) = fixture("verdicts");
    match KernelProgram::load(&elf, &spec, "tc_other") {
        Err(KernelError::ProgramNotFound { name, available }) => {
            assert_eq!(name, "tc_other");
            assert!(available.contains(&"xdp_swap".to_string()), "{available:?}");
            assert!(
                !available.contains(&"tc_other".to_string()),
                "{available:?}"
            );
        }
        other => panic!("expected ProgramNotFound, got {other:?}"),
    }
    let err = KernelProgram::load(&elf, &spec, "nope").expect_err("no such program");
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn a_spec_that_disagrees_with_the_object_is_a_map_mismatch() {
    require_bpf();
    let (elf, mut spec) = fixture("verdicts");
    let md_seen = map_index(&spec, "md_seen");
    spec.maps[md_seen].value_size = 8;
    match KernelProgram::load(&elf, &spec, "xdp_swap") {
        Err(KernelError::MapMismatch { map, reason }) => {
            assert_eq!(map, "md_seen");
            assert_eq!(
                reason,
                "libbpf has type BPF_MAP_TYPE_ARRAY key 4 value 4, the spec type BPF_MAP_TYPE_ARRAY key 4 \
                 value 8"
            );
        }
        other => panic!("expected MapMismatch, got {other:?}"),
    }
}

#[test]
fn verifier_rejection_carries_the_verifier_message() {
    require_bpf();
    let (elf, spec) = fixture("reject");
    let err =
        KernelProgram::load(&elf, &spec, "xdp_reject").expect_err("the verifier must reject it");
    let message = err.to_string();
    assert!(
        message.starts_with("cannot load program xdp_reject: permission denied (errno 13)"),
        "{message}"
    );
    assert!(message.contains("invalid access to packet"), "{message}");
    let whole = err.verifier_log().expect("the whole verifier log");
    assert!(whole.contains("invalid access to packet"), "{whole}");
    assert!(!whole.contains("BEGIN PROG LOAD LOG"), "{whole}");
    match err {
        KernelError::Load { what, log, .. } => {
            assert_eq!(what, "program xdp_reject");
            assert!(!log.is_empty() && log.len() <= 20, "{log:?}");
            assert!(
                log.iter().any(|l| l.contains("invalid access to packet")),
                "{log:?}"
            );
        }
        other => panic!("expected a load error, got {other:?}"),
    }
}

#[test]
fn legacy_xdp_section_names_load_as_xdp() {
    let mut prog = load("xdp_legacy");
    let run = prog
        .test_run(&frame(), &XdpMd::default())
        .expect("test run");
    assert_eq!(run.verdict(), Verdict::Drop);
}
