//! The reference machine on hand-written programs: ISA edge cases through whole runs, memory safety, calls, helpers.

use hwxdp_ebpf::assemble;
use hwxdp_object::{MapSpec, ObjectSpec, ProgramSpec};
use hwxdp_xdp::maps::MapStore;
use hwxdp_xdp::{Config, FaultKind, Machine, Outcome, Verdict, XdpBuff, XdpMd};

fn program(name: &str, text: &str) -> ProgramSpec {
    let insns =
        assemble(text).unwrap_or_else(|e| panic!("test program {name} does not assemble: {e}"));
    ProgramSpec::standalone(name, "xdp", insns)
}

fn object(programs: Vec<ProgramSpec>, maps: Vec<MapSpec>) -> ObjectSpec {
    ObjectSpec {
        programs,
        maps,
        license: "GPL".into(),
    }
}

fn frame(len: usize) -> Vec<u8> {
    (0..len).map(|i| i as u8).collect()
}

fn run_on(obj: &ObjectSpec, entry: &str, packet: &[u8]) -> (Outcome, XdpBuff, Machine) {
    let config = Config {
        record_trace: true,
        ..Config::default()
    };
    let mut machine = Machine::new(obj, Some(entry), &config).expect("program prepares");
    let mut buff = XdpBuff::new(packet).expect("packet fits");
    let outcome = machine.run_packet(&mut buff, &XdpMd::default());
    (outcome, buff, machine)
}

/// Runs a one-program object on a 64-byte frame and returns r0's low 32 bits (the verdict field).
fn run(text: &str) -> Outcome {
    let obj = object(vec![program("p", text)], vec![]);
    run_on(&obj, "p", &frame(64)).0
}

#[test]
fn rfc9669_edge_cases_through_whole_programs() {
    // 64-bit unsigned division by zero gives 0; modulo by zero leaves the dividend.
    assert_eq!(run("r0 = 7\nr1 = 0\nr0 /= r1\nr0 += 2\nexit").retval, 2);
    assert_eq!(run("r0 = 7\nr1 = 0\nr0 %= r1\nexit").retval, 7);
    // Signed division truncates toward zero: -7 s/ 2 == -3.
    assert_eq!(run("r0 = -7\nr0 s/= 2\nexit").retval, (-3i32) as u32);
    // Shift amounts are masked to the width: 1 << 65 == 2.
    assert_eq!(run("r0 = 1\nr1 = 65\nr0 <<= r1\nexit").retval, 2);
    // 32-bit results are zero-extended: w0 = -1 leaves r0 == 0xffffffff, so r0 >> 32 == 0.
    assert_eq!(run("r0 = -1\nw0 += 0\nr0 >>= 32\nexit").retval, 0);
    // cmpxchg writes the old value to r0 whether or not it stores.
    let cmpxchg = "r1 = 5\n*(u64 *)(r10 - 8) = r1\nr0 = 5\nr2 = 9\nr0 = cmpxchg_64(r10 - 8, r0, r2)\nr3 = *(u64 *)(r10 - 8)\nr0 += r3\nexit";
    assert_eq!(run(cmpxchg).retval, 5 + 9);
    let failed = "r1 = 5\n*(u64 *)(r10 - 8) = r1\nr0 = 4\nr2 = 9\nr0 = cmpxchg_64(r10 - 8, r0, r2)\nr3 = *(u64 *)(r10 - 8)\nr0 += r3\nexit";
    assert_eq!(run(failed).retval, 5 + 5);
    // Fetching atomics return the old value in the source register.
    let fetch = "r1 = 40\n*(u64 *)(r10 - 8) = r1\nr2 = 2\nr2 = atomic_fetch_add((u64 *)(r10 - 8), r2)\nr0 = *(u64 *)(r10 - 8)\nr0 += r2\nexit";
    assert_eq!(run(fetch).retval, 42 + 40);
    // Sign-extending moves and loads.
    assert_eq!(run("r1 = 128\nr0 = (s8)r1\nr0 >>= 56\nexit").retval, 0xff);
    assert_eq!(
        run("r1 = 255\n*(u8 *)(r10 - 1) = r1\nr0 = *(s8 *)(r10 - 1)\nexit").retval,
        0xffff_ffff
    );
    // bswap and be16 on a little-endian machine.
    assert_eq!(run("r0 = 0x1234\nr0 = be16 r0\nexit").retval, 0x3412);
    assert_eq!(
        run("r0 = 0x12345678\nr0 = bswap32 r0\nexit").retval,
        0x7856_3412
    );
}

#[test]
fn packet_access_outside_the_packet_aborts_with_a_diagnostic() {
    // Reads data_end - 0 (one byte past the end).
    let out = run("r2 = *(u32 *)(r1 + 4)\nr0 = *(u8 *)(r2 + 0)\nexit");
    assert_eq!(out.verdict(), Verdict::Aborted);
    let fault = out.fault.expect("a fault is reported");
    assert_eq!(fault.insn, 1, "the faulting instruction is named");
    assert!(
        matches!(
            fault.kind,
            FaultKind::OutOfBounds {
                access: "load",
                size: 1,
                ..
            }
        ),
        "{fault}"
    );
    // Inside the packet is fine: the first byte of a frame counting from 0.
    assert_eq!(
        run("r2 = *(u32 *)(r1 + 0)\nr0 = *(u8 *)(r2 + 5)\nexit").retval,
        5
    );
}

#[test]
fn null_and_scalar_dereferences_abort() {
    let out = run("r1 = 0\nr0 = *(u64 *)(r1 + 0)\nexit");
    assert!(matches!(
        out.fault.map(|f| f.kind),
        Some(FaultKind::NotAPointer { .. })
    ));
    let out = run("r1 = 0x1000\n*(u32 *)(r1 + 0) = 1\nr0 = 2\nexit");
    assert_eq!(out.verdict(), Verdict::Aborted);
}

#[test]
fn stack_is_bounded_by_the_frame() {
    assert_eq!(
        run("r1 = 3\n*(u64 *)(r10 - 512) = r1\nr0 = *(u64 *)(r10 - 512)\nexit").retval,
        3
    );
    assert!(
        run("r0 = *(u64 *)(r10 - 520)\nexit").fault.is_some(),
        "below the stack"
    );
    assert!(
        run("r0 = *(u64 *)(r10 + 0)\nexit").fault.is_some(),
        "above the frame"
    );
}

#[test]
fn an_endless_loop_ends_at_the_budget() {
    let obj = object(vec![program("p", "r0 = 2\nloop:\ngoto loop\nexit")], vec![]);
    let config = Config {
        budget: 10_000,
        ..Config::default()
    };
    let mut machine = Machine::new(&obj, None, &config).unwrap();
    let mut buff = XdpBuff::new(&frame(64)).unwrap();
    let out = machine.run_packet(&mut buff, &XdpMd::default());
    assert_eq!(out.verdict(), Verdict::Aborted);
    assert_eq!(
        out.fault.map(|f| f.kind),
        Some(FaultKind::Budget { budget: 10_000 })
    );
}

#[test]
fn bpf_to_bpf_calls_get_their_own_frame_and_keep_callee_saved_registers() {
    // main: r6 = 100; stores 7 in its frame, passes a pointer to it; the callee adds 1 through the pointer and
    // clobbers r6 in its own frame, which the caller must not see.
    let text = "\
r6 = 100
r1 = 7
*(u64 *)(r10 - 8) = r1
r1 = r10
r1 += -8
call 3
r0 = *(u64 *)(r10 - 8)
r0 += r6
exit
r2 = *(u64 *)(r1 + 0)
r2 += 1
*(u64 *)(r1 + 0) = r2
r6 = 1
*(u64 *)(r10 - 8) = r6
exit";
    let mut prog = program("p", text);
    prog.insns[5].src = hwxdp_ebpf::PSEUDO_CALL;
    let obj = object(vec![prog], vec![]);
    let (out, _, _) = run_on(&obj, "p", &frame(64));
    assert_eq!(out.fault, None);
    assert_eq!(out.retval, 8 + 100);
}

#[test]
fn adjust_head_then_read_the_new_first_byte() {
    // Grow the head by 4 bytes (zeroed), read byte 0 of the new data, return it plus the new length.
    let text = "\
r6 = r1
r2 = -4
call 44
r1 = *(u32 *)(r6 + 0)
r2 = *(u32 *)(r6 + 4)
r0 = *(u8 *)(r1 + 4)
r2 -= r1
r0 += r2
exit";
    let obj = object(vec![program("p", text)], vec![]);
    let (out, buff, _) = run_on(&obj, "p", &frame(64));
    assert_eq!(out.fault, None);
    assert_eq!(
        out.retval, 68,
        "old byte 0 (value 0) now at offset 4; 68 bytes long"
    );
    assert_eq!(&buff.data()[..5], &[0, 0, 0, 0, 0]);
    assert_eq!(buff.data()[5], 1);
}

#[test]
fn maps_through_helpers_lookup_update_and_atomic_add_in_a_value() {
    // key 3 of an array: add 5 atomically through the lookup pointer, twice over two packets.
    let text = "\
r1 = 3
*(u32 *)(r10 - 4) = r1
r2 = r10
r2 += -4
r1 = map ll
call 1
if r0 == 0 goto miss
r1 = 5
lock *(u64 *)(r0 + 0) += r1
r0 = 2
exit
miss:
r0 = 1
exit";
    let mut prog = program("p", &text.replace("map ll", "0 ll"));
    let lddw = prog.insns.iter().position(|i| i.is_lddw()).unwrap();
    prog.insns[lddw].src = hwxdp_ebpf::PSEUDO_MAP_FD;
    let obj = object(vec![prog], vec![MapSpec::new("counts", 2, 4, 8, 4)]);
    let mut machine = Machine::new(&obj, None, &Config::default()).unwrap();
    let mut buff = XdpBuff::new(&frame(64)).unwrap();
    for _ in 0..2 {
        buff.reset(&frame(64)).unwrap();
        let out = machine.run_packet(&mut buff, &XdpMd::default());
        assert_eq!(out.verdict(), Verdict::Pass, "{:?}", out.fault);
    }
    let value = machine.maps_mut().lookup(0, &3u32.to_le_bytes()).unwrap();
    assert_eq!(value, Some(10u64.to_le_bytes().to_vec()));
}

#[test]
fn xdp_md_fields_and_paths_are_visible() {
    let text = "\
r0 = *(u32 *)(r1 + 16)
r2 = *(u32 *)(r1 + 12)
if r0 == 3 goto three
r0 = 1
exit
three:
r0 = r2
exit";
    let obj = object(vec![program("p", text)], vec![]);
    let mut machine = Machine::new(&obj, None, &Config::default()).unwrap();
    let mut buff = XdpBuff::new(&frame(64)).unwrap();
    let md = XdpMd {
        ingress_ifindex: 4,
        rx_queue_index: 3,
    };
    let a = machine.run_packet(&mut buff, &md);
    assert_eq!(a.retval, 4);
    let b = machine.run_packet(&mut buff, &XdpMd::default());
    assert_eq!(b.retval, 1);
    assert_ne!(a.path, b.path, "different branches, different paths");
    let c = machine.run_packet(&mut buff, &md);
    assert_eq!(a.path, c.path, "same branches, same path");
    assert_eq!(a.insns, 5);
}

#[test]
fn instruction_traces_use_llvm_objdump_slots() {
    // lddw takes two slots: the exit after it is slot 3.
    let obj = object(
        vec![program("p", "r0 = 2\nr1 = 0x100000000 ll\nexit")],
        vec![],
    );
    let (out, _, _) = run_on(&obj, "p", &frame(64));
    let slots: Vec<u32> = out.trace.iter().map(|(_, s)| *s).collect();
    assert_eq!(slots, vec![0, 1, 3]);
}

#[test]
fn csum_diff_and_trace_printk() {
    // csum_diff of nothing with seed 0x1234 is the seed.
    assert_eq!(
        run("r1 = 0\nr2 = 0\nr3 = 0\nr4 = 0\nr5 = 0x1234\ncall 28\nexit").retval,
        0x1234
    );
    // Sizes not multiple of 4 are refused with -EINVAL.
    assert_eq!(
        run("r1 = r10\nr1 += -8\nr2 = 2\nr3 = 0\nr4 = 0\nr5 = 0\ncall 28\nexit").retval,
        (-22i32) as u32
    );
    // "hi %d\n" on the stack: returns the number of bytes written.
    let text = "\
r1 = 0x6425206968 ll
*(u64 *)(r10 - 8) = r1
r1 = r10
r1 += -8
r2 = 8
r3 = 42
call 6
exit";
    let out = run(text);
    assert_eq!(out.printk, vec!["hi %d".replace("%d", "42")]);
    assert_eq!(out.retval, 5);
}

#[test]
fn unsupported_helpers_are_refused_before_any_packet() {
    let obj = object(vec![program("p", "call 9999\nexit")], vec![]);
    let err = Machine::new(&obj, None, &Config::default())
        .err()
        .expect("refused");
    let text = err.to_string();
    assert!(
        text.contains("instruction 0") && text.contains("9999"),
        "{text}"
    );
}

#[test]
fn csum_diff_returns_a_folded_16_bit_sum() {
    // to = ff ff 00 00 01 00 00 00: the 32-bit sum is 0x10000, which the kernel (6.12 on) folds to 1 before returning.
    let text = "\
r1 = 0xffff
*(u32 *)(r10 - 8) = r1
r1 = 1
*(u32 *)(r10 - 4) = r1
r1 = 0
r2 = 0
r3 = r10
r3 += -8
r4 = 8
r5 = 0
call 28
exit";
    assert_eq!(run(text).retval, 1);
}

#[test]
fn helper_sizes_are_checked_against_the_region_before_anything_is_copied() {
    // trace_printk with a format size of 2^64-1 bytes, pointing at the stack: found by the machine fuzz target,
    // which made the machine try to allocate that much.
    let out = run("r1 = r10\nr1 += -8\nr2 = -1\ncall 6\nexit");
    assert_eq!(out.verdict(), Verdict::Aborted);
    assert!(matches!(
        out.fault.map(|f| f.kind),
        Some(FaultKind::OutOfBounds { .. })
    ));
    // csum_diff refuses oversized buffers with -EINVAL before reading them.
    assert_eq!(
        run("r1 = r10\nr1 += -8\nr2 = 0x10000000\nr3 = 0\nr4 = 0\nr5 = 0\ncall 28\nexit").retval,
        (-22i32) as u32
    );
}

#[test]
fn messages_name_helpers_with_their_id_and_map_types_by_name() {
    let obj = object(vec![program("p", "call 14\nexit")], vec![]);
    let err = Machine::new(&obj, None, &Config::default())
        .err()
        .expect("refused");
    assert_eq!(
        err.to_string(),
        "p: instruction 0: helper bpf_get_current_pid_tgid (14) is not supported by the reference machine"
    );
    // bpf_redirect_map on a hash map; the lddw before the call takes two slots.
    let obj = object(
        vec![program(
            "p",
            "ld_pseudo r1, 1, 0\nr2 = 0\nr3 = 0\ncall 51\nexit",
        )],
        vec![MapSpec::new("m", 1, 4, 4, 4)],
    );
    let out = run_on(&obj, "p", &frame(64)).0;
    let fault = out.fault.expect("a fault");
    assert_eq!(
        fault.to_string(),
        "p: instruction 4: helper bpf_redirect_map (51): map m has type BPF_MAP_TYPE_HASH"
    );
}

/// A program that reads a spilled context pointer, a stack byte and a packet byte through r7 = data + 2.
const RESUMABLE: &str = "r2 = *(u32 *)(r1 + 0)\n*(u64 *)(r10 - 8) = r1\nr7 = r2\nr7 += 2\nr8 = 5\n\
                         *(u8 *)(r10 - 9) = r8\nr1 = *(u64 *)(r10 - 8)\nr3 = *(u32 *)(r1 + 0)\n\
                         r4 = *(u8 *)(r7 + 0)\nr5 = *(u8 *)(r10 - 9)\nr0 = r4\nr0 += r5\nexit";

#[test]
fn a_resumed_run_from_the_state_at_a_slot_ends_as_the_whole_run() {
    use hwxdp_xdp::{Resume, ResumeValue, StackWrite};
    let obj = object(vec![program("p", RESUMABLE)], vec![]);
    let (whole, _, _) = run_on(&obj, "p", &frame(64));
    assert_eq!(whole.retval, 2 + 5);
    let mut machine = Machine::new(&obj, Some("p"), &Config::default()).expect("program prepares");
    let mut buff = XdpBuff::new(&frame(64)).expect("packet fits");
    // The state before slot 6 (`r1 = *(u64 *)(r10 - 8)`): the context spilled, r7 = data + 2, the byte 5 at r10-9.
    let mut regs = [None; 9];
    regs[6] = Some(ResumeValue::Packet(2));
    let resume = Resume {
        slot: 6,
        r0: None,
        regs,
        stack: vec![
            StackWrite {
                off: -8,
                size: 8,
                value: ResumeValue::Context,
            },
            StackWrite {
                off: -9,
                size: 1,
                value: ResumeValue::Scalar(5),
            },
        ],
        skipped: 6,
    };
    let resumed = machine
        .run_resumed(&mut buff, &XdpMd::default(), &resume)
        .expect("the resume fits");
    assert_eq!(resumed.retval, whole.retval);
    assert_eq!(
        resumed.insns, whole.insns,
        "the skipped instructions are counted"
    );
    assert!(resumed.fault.is_none());
}

#[test]
fn a_resume_inside_an_lddw_or_outside_the_frame_is_refused() {
    use hwxdp_xdp::{Resume, ResumeError, ResumeValue, StackWrite};
    let obj = object(vec![program("p", "r0 = 1 ll\nexit")], vec![]);
    let mut machine = Machine::new(&obj, Some("p"), &Config::default()).expect("program prepares");
    let mut buff = XdpBuff::new(&frame(64)).expect("packet fits");
    let at = |slot| Resume {
        slot,
        ..Resume::default()
    };
    let md = XdpMd::default();
    assert!(matches!(
        machine.run_resumed(&mut buff, &md, &at(1)),
        Err(ResumeError::Slot { slot: 1, .. })
    ));
    assert_eq!(
        machine.run_resumed(&mut buff, &md, &at(2)).unwrap().retval,
        0,
        "slot 2 is the exit, r0 = 0"
    );
    let outside = Resume {
        slot: 0,
        stack: vec![StackWrite {
            off: -4,
            size: 8,
            value: ResumeValue::Scalar(1),
        }],
        ..Resume::default()
    };
    assert!(matches!(
        machine.run_resumed(&mut buff, &md, &outside),
        Err(ResumeError::Stack { off: -4, size: 8 })
    ));
}

#[test]
fn perf_event_output_samples_header_and_packet_bytes_once_a_consumer_reads_them() {
    // bpf_perf_event_output(ctx, map, BPF_F_CURRENT_CPU | 6 << 32, stack-8, 3): 3 bytes, then 6 packet bytes.
    let text = "\
r6 = r1
r2 = 0x0a0b0c
*(u32 *)(r10 - 8) = r2
r1 = r6
r2 = map ll
r3 = 0x6ffffffff ll
r4 = r10
r4 += -8
r5 = 3
call 25
exit";
    let mut prog = program("p", &text.replace("map ll", "0 ll"));
    let lddw = prog.insns.iter().position(|i| i.is_lddw()).unwrap();
    prog.insns[lddw].src = hwxdp_ebpf::PSEUDO_MAP_FD;
    let obj = object(vec![prog], vec![MapSpec::new("samples", 4, 4, 4, 0)]);
    let mut machine = Machine::new(&obj, None, &Config::default()).unwrap();
    let mut buff = XdpBuff::new(&frame(64)).unwrap();
    // Without a consumer the helper refuses, by name, rather than lose the sample.
    let out = machine.run_packet(&mut buff, &XdpMd::default());
    let fault = out.fault.expect("refused").to_string();
    assert!(fault.contains("bpf_perf_event_output (25)"), "{fault}");
    machine.read_perf_samples();
    buff.reset(&frame(64)).unwrap();
    let out = machine.run_packet(&mut buff, &XdpMd::default());
    assert!(out.fault.is_none(), "{:?}", out.fault);
    assert_eq!(out.retval, 0);
    let samples = machine.maps_mut().perf_drain(0);
    assert_eq!(samples.len(), 1);
    // 3 + 6 bytes, padded to 12 so that the u32 size and the bytes end on 8.
    assert_eq!(
        samples[0].bytes,
        [0x0c, 0x0b, 0x0a, 0, 1, 2, 3, 4, 5, 0, 0, 0]
    );
    assert_eq!(samples[0].packet, 3..9);
    assert_eq!(samples[0].cpu, 0);
}
