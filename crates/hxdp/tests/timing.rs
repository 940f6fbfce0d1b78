//! The cycle model's charges on hand-scheduled images, each computed from `hwxdp_hxdp::timing` (the core,
//! rtl/sephirot/sephirot.sv, is held to the same figures by crates/rtlsim/tests/sephirot.rs).

use hwxdp_ebpf::opcode::*;
use hwxdp_ebpf::Insn;
use hwxdp_hxdp::isa::EXIT_IMM;
use hwxdp_hxdp::timing::*;
use hwxdp_hxdp::{Bundle, HxdpCore, Image, Op};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Backend, Config, XdpBuff, XdpMd};

const LANES: usize = 4;

fn op(code: u8, dst: u8, src: u8, off: i16, imm: i64) -> Op {
    Op {
        code,
        dst,
        src,
        a: None,
        off,
        imm,
    }
}

fn ctx_data() -> Op {
    op(CLASS_LDX | MODE_MEM | SIZE_W, 2, 1, 0, 0)
}

fn exit() -> Op {
    op(CLASS_JMP | JMP_EXIT, 0, 0, 0, 0)
}

/// Runs one `len`-byte packet through `bundles` (one op per bundle, lane 0); returns (verdict, fault, cycles, calls).
fn run(bundles: Vec<Op>, len: usize, present: bool) -> (u32, bool, u64, Vec<(i32, u64)>) {
    let image = Image {
        lanes: LANES,
        bundles: bundles
            .into_iter()
            .map(|o| {
                let mut b = Bundle::empty(LANES);
                b.lanes[0] = Some(o);
                b
            })
            .collect(),
        entries: vec![0],
        maps: Vec::new(),
    };
    let spec = ObjectSpec::single(ProgramSpec::standalone(
        "t",
        "xdp",
        vec![Insn::new(CLASS_JMP | JMP_EXIT, 0, 0, 0, 0)],
    ));
    let mut core = HxdpCore::new(image, &spec, None, &Config::default()).expect("core");
    core.set_packet_present(present);
    let frame = vec![7u8; len];
    let mut buff = XdpBuff::new(&frame).expect("frame");
    let verdict = core.run_packet(&mut buff, &XdpMd::default()).retval();
    (
        verdict,
        core.last_fault().is_some(),
        core.cycles().expect("cycles"),
        core.last_helper_calls().to_vec(),
    )
}

#[test]
fn a_packet_load_waits_for_its_frame_one_cycle_after_fetch() {
    // Byte 1000 is in frame 32 (1001 bytes / 32, rounded up), written in cycle 32 and readable from cycle 33; the
    // load goes out in decode, so its bundle (fetched in cycle 3) may be fetched in cycle 32.
    let prog = vec![
        ctx_data(),
        op(CLASS_LDX | MODE_MEM | SIZE_B, 0, 2, 1000, 0),
        exit(),
    ];
    let frame = 1001u64.div_ceil(FRAME_BYTES as u64);
    let ready = frame + START_CYCLES - LOAD_ISSUE_CYCLES;
    let (_, _, cycles, _) = run(prog.clone(), 1100, false);
    assert_eq!(cycles, ready + BUNDLE_CYCLES + DRAIN_CYCLES);
    let (_, _, cycles, _) = run(prog, 1100, true);
    assert_eq!(cycles, START_CYCLES + 3 * BUNDLE_CYCLES + DRAIN_CYCLES);
}

#[test]
fn stores_and_failing_loads_do_not_wait() {
    // A store to byte 1000 needs no stored bytes; a load past the packet's end faults without waiting.
    let store = vec![
        ctx_data(),
        op(CLASS_ST | MODE_MEM | SIZE_B, 2, 0, 1000, 1),
        exit(),
    ];
    let (_, fault, cycles, _) = run(store, 1100, false);
    assert!(!fault);
    assert_eq!(cycles, START_CYCLES + 3 * BUNDLE_CYCLES + DRAIN_CYCLES);
    let load = vec![
        ctx_data(),
        op(CLASS_LDX | MODE_MEM | SIZE_B, 0, 2, 1000, 0),
        exit(),
    ];
    let (_, fault, cycles, _) = run(load, 900, false);
    assert!(fault);
    assert_eq!(cycles, START_CYCLES + 2 * BUNDLE_CYCLES + FAULT_CYCLES);
}

#[test]
fn faults_and_checked_verdicts_end_in_execute() {
    // A stack load above r10: the first bundle faults, known in execute.
    let (_, fault, cycles, _) = run(
        vec![op(CLASS_LDX | MODE_MEM | SIZE_DW, 0, 10, 0, 0)],
        64,
        true,
    );
    assert!(fault);
    assert_eq!(cycles, START_CYCLES + BUNDLE_CYCLES + FAULT_CYCLES);
    // A checked packet load past the end carries XDP_DROP (imm = verdict + 1).
    let checked = vec![
        ctx_data(),
        op(CLASS_LDX | MODE_MEM | SIZE_W, 0, 2, 60, 2),
        exit(),
    ];
    let (verdict, fault, cycles, _) = run(checked, 40, true);
    assert_eq!((verdict, fault), (1, false));
    assert_eq!(cycles, START_CYCLES + 2 * BUNDLE_CYCLES + FAULT_CYCLES);
}

#[test]
fn exit_k_alone_ends_in_decode() {
    let prog = vec![
        ctx_data(),
        op(CLASS_ST | MODE_MEM | SIZE_B, 2, 0, 0, 1),
        op(EXIT_IMM, 0, 0, 0, 2),
    ];
    let (verdict, _, cycles, _) = run(prog, 64, true);
    assert_eq!(verdict, 2);
    assert_eq!(cycles, START_CYCLES + 3 * BUNDLE_CYCLES + EARLY_EXIT_CYCLES);
}

#[test]
fn bus_loads_wait_for_the_previous_bundles_stores() {
    // The load reads bytes the previous bundle stores: one cycle in decode.
    let prog = vec![
        ctx_data(),
        op(CLASS_ST | MODE_MEM | SIZE_W, 2, 0, 4, 9),
        op(CLASS_LDX | MODE_MEM | SIZE_B, 0, 2, 6, 0),
        exit(),
    ];
    let (verdict, _, cycles, _) = run(prog, 64, true);
    assert_eq!(verdict, 0);
    assert_eq!(
        cycles,
        START_CYCLES + 4 * BUNDLE_CYCLES + BUS_HAZARD_CYCLES + DRAIN_CYCLES
    );
}

#[test]
fn helpers_see_the_cycle_of_their_call() {
    // bpf_get_smp_processor_id in the second bundle (fetched in cycle 3) is called from execute, in cycle 5.
    let prog = vec![
        op(CLASS_ALU64 | ALU_MOV, 3, 0, 0, 1),
        op(CLASS_JMP | JMP_CALL, 0, 0, 0, 8),
        exit(),
    ];
    let (_, _, cycles, calls) = run(prog, 64, true);
    let fetch = START_CYCLES + 2 * BUNDLE_CYCLES;
    assert_eq!(calls, [(8, fetch + HELPER_CALL_STAGE_CYCLES)]);
    assert_eq!(
        cycles,
        fetch + helper_cycles(8) + BUNDLE_CYCLES + DRAIN_CYCLES
    );
}
