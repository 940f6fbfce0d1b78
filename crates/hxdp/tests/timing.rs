//! The cycle model's charges on hand-scheduled images, each computed from `hwxdp_hxdp::timing` (the core,
//! rtl/sephirot/sephirot.sv, is held to the same figures by crates/rtlsim/tests/sephirot.rs).

use hwxdp_ebpf::opcode::*;
use hwxdp_ebpf::Insn;
use hwxdp_hxdp::isa::EXIT_IMM;
use hwxdp_hxdp::timing::*;
use hwxdp_hxdp::{Bundle, HxdpCore, Image, Op};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, XdpBuff, XdpMd};

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
        core.last_cycles(),
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
        fetch + HELPER_REGISTER_CYCLES + HELPER_CYCLES + BUNDLE_CYCLES + DRAIN_CYCLES
    );
}

/// A helper call of `id` with `args` seen by the helper module in cycle 10, nothing waiting for the packet.
fn call(id: i32, args: [u64; 5], map: Option<MapShape>, r0: u64) -> u64 {
    let ready = |_: u64, _: u64| 0;
    helper_latency(&HelperCall {
        id,
        args,
        r0: Some(r0),
        map,
        key_index: None,
        hash_rows: None,
        lru_steps: None,
        tail_calls: 0,
        cycle: 10,
        lanes: LANES,
        bounds: PacketBounds {
            meta: 256,
            data: 256,
            end: 256 + 200,
            high: 256 + 200,
        },
        ready: &ready,
    })
}

fn shape(map_type: u32, key_size: u32, value_size: u32) -> Option<MapShape> {
    Some(MapShape {
        map_type,
        key_size,
        value_size,
        max_entries: 16,
    })
}

const STACK: u64 = 3 << 60;
const HANDLE: u64 = 5 << 60;

#[test]
fn helper_passes_move_8_4_2_1_byte_chunks() {
    assert_eq!(chunk_sizes(15, false), [(0, 8), (8, 4), (12, 2), (14, 1)]);
    assert_eq!(chunk_sizes(15, true), [(14, 1), (12, 2), (8, 4), (0, 8)]);
    assert_eq!(chunk_sizes(16, false).len(), 2);
    assert!(chunk_sizes(0, false).is_empty());
    // One read per cycle, the last answer in the cycle after it; a copy reads and writes each chunk.
    let never = |_: u64, _: u64| 0;
    assert_eq!(read_pass(5, STACK, 16, &never), 7);
    assert_eq!(read_pass(5, STACK, 0, &never), 5);
    assert_eq!(copy_pass(5, STACK, 16, false, &never), 9);
    // A chunk whose bytes are not stored yet waits for them; the next follows it.
    let late = |a: u64, n: u64| if a + n > STACK + 8 { 20 } else { 0 };
    assert_eq!(read_pass(5, STACK, 24, &late), 22);
}

#[test]
fn helper_latencies_are_the_helper_modules() {
    // The figures of rtl/sephirot/helpers.sv's header (maps answering 2 cycles after acceptance, fib 5).
    assert_eq!(call(5, [0; 5], None, 0), HELPER_CYCLES);
    assert_eq!(call(23, [0; 5], None, 4), HELPER_CYCLES);
    // A lookup with a key of up to 8 bytes: 5 (the key's one chunk, the request with it, the maps module).
    let hash8 = shape(1, 8, 8);
    assert_eq!(call(1, [HANDLE, STACK, 0, 0, 0], hash8, 0), 5);
    // 16-byte key: one chunk more; a 6-byte key is two chunks (4 + 2).
    assert_eq!(call(1, [HANDLE, STACK, 0, 0, 0], shape(1, 16, 8), 0), 6);
    assert_eq!(call(1, [HANDLE, STACK, 0, 0, 0], shape(1, 6, 8), 0), 6);
    // An update reads the value after the key and writes it one row per cycle when it succeeds.
    assert_eq!(
        call(2, [HANDLE, STACK, STACK, 0, 0], shape(1, 8, 16), 0),
        5 + 2 + 2
    );
    assert_eq!(
        call(
            2,
            [HANDLE, STACK, STACK, 1, 0],
            shape(1, 8, 16),
            -17i64 as u64
        ),
        5 + 2
    );
    // A map helper without a map faults at once.
    assert_eq!(call(1, [0, STACK, 0, 0, 0], None, 0), HELPER_CYCLES);
    // bpf_tail_call: a get of a 4-byte PROG_ARRAY slot (one row read in two cycles) after the call's cycle.
    assert_eq!(call(12, [0, HANDLE, 1, 0, 0], shape(3, 4, 4), 0), 6);
    assert_eq!(call(12, [0, HANDLE, 99, 0, 0], shape(3, 4, 4), 0), 4);
    // csum_diff of 512 bytes: 64 chunks, the fold and the result.
    assert_eq!(call(28, [0, 0, STACK, 512, 0], None, 0), 68);
    assert_eq!(call(28, [0, 3, STACK, 4, 0], None, 0), HELPER_CYCLES);
    // load_bytes of 96 bytes: geometry, far byte, 12 chunks read and written.
    assert_eq!(call(189, [0, 0, STACK, 96, 0], None, 0), 27);
    assert_eq!(call(189, [0, 0, STACK, 95, 0], None, 0), 31);
    assert_eq!(call(189, [0, 150, STACK, 96, 0], None, 0), HELPER_CYCLES);
    // fib: 20 + fib's 5; spin lock 3; ring buffer n + 3; adjusts 2 + the APS's answer in the next cycle.
    assert_eq!(call(69, [0, STACK, 64, 0, 0], None, 0), 25);
    assert_eq!(call(93, [4 << 60, 0, 0, 0, 0], None, 0), 3);
    assert_eq!(
        call(130, [HANDLE, STACK, 1200, 0, 0], shape(27, 0, 0), 0),
        153
    );
    assert_eq!(call(44, [0, -14i64 as u64, 0, 0, 0], None, 0), 3);
    // A tail grown below the packet's highest end is zeroed, 8 bytes per lane per cycle.
    let zero = helper_latency(&HelperCall {
        id: 65,
        args: [0, 100, 0, 0, 0],
        r0: Some(0),
        map: None,
        key_index: None,
        hash_rows: None,
        lru_steps: None,
        tail_calls: 0,
        cycle: 10,
        lanes: LANES,
        bounds: PacketBounds {
            meta: 256,
            data: 256,
            end: 356,
            high: 456,
        },
        ready: &|_, _| 0,
    });
    assert_eq!(zero, 3 + 100u64.div_ceil(8 * LANES as u64));
}

#[test]
fn a_helper_reading_the_packet_waits_for_its_frames() {
    // bpf_csum_diff over packet bytes 512..516 (frame 17, readable from cycle 18) called in the fifth bundle: the
    // helper's read waits for the frame; with the packet present it does not.
    let prog = vec![
        ctx_data(),
        op(CLASS_ALU64 | ALU_MOV | SRC_X, 1, 2, 0, 0),
        op(CLASS_ALU64 | ALU_ADD, 1, 0, 0, 512),
        op(CLASS_ALU64 | ALU_MOV, 2, 0, 0, 4),
        op(CLASS_ALU64 | ALU_MOV, 4, 0, 0, 0),
        op(CLASS_JMP | JMP_CALL, 0, 0, 0, 28),
        exit(),
    ];
    let fetch = START_CYCLES + 6 * BUNDLE_CYCLES;
    let seen = fetch + HELPER_CALL_STAGE_CYCLES + HELPER_REGISTER_CYCLES;
    let (_, fault, present, _) = run(prog.clone(), 600, true);
    assert!(!fault);
    // `from` (one chunk) from the cycle after the module sees the call, its answer, the fold, `to` empty (a cycle
    // to find it so), the result, seen by the core in the next cycle.
    let latency = 6;
    assert_eq!(
        present,
        fetch + HELPER_REGISTER_CYCLES + latency + BUNDLE_CYCLES + DRAIN_CYCLES
    );
    let (_, _, arriving, _) = run(prog, 600, false);
    let frame = 516u64.div_ceil(FRAME_BYTES as u64);
    let wait = (frame + START_CYCLES) - (seen + 1);
    assert_eq!(arriving, present + wait);
}
