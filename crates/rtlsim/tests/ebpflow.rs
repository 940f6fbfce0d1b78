//! rtl/ebpflow (one eBPFlow engine with its instruction memory and the unwind helper unit, `ebpflow_conformance`)
//! under Verilator against the reference machine in its conformance environment: every program of
//! `tests/ebpflow_programs.txt` and seeded random ALU programs must give the same r0 (or fault on both), with the
//! frame arriving a beat a cycle and slowly. Then the engine's hazards, each with its cycle cost: load-use, branches,
//! calls and exits, a divide in flight, and the DM_FIFO's early start (a run that ends before the frame is in, a load
//! of a word not yet arrived that waits for it). `-- --nocapture` prints cycles per instruction.

mod common;
/// The programs shared with the conformance plugin's RTL test and the engine model's cycle test.
#[path = "../../../tests/support/ebpflow_programs.rs"]
mod ebpflow_programs;

use std::sync::{Mutex, MutexGuard, OnceLock};

use hwxdp_ebpf::Insn;
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_rtlsim::ebpflow::{
    slots_of, EbpflowPaths, EbpflowRtl, Header, Run, BASE, FRAME_OFFSET, STACK_OFFSET,
};
use hwxdp_xdp::{Config, Environment, Machine, XdpBuff};

/// One started engine for the whole test binary (a model start is cheap, a build is not; the harness is serial).
fn engine() -> MutexGuard<'static, EbpflowRtl> {
    static ENGINE: OnceLock<Mutex<EbpflowRtl>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let paths = EbpflowPaths::embedded(common::target_dir().join("rtlsim"));
            Mutex::new(EbpflowRtl::new(&paths).unwrap_or_else(|e| panic!("{e}")))
        })
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// The reference machine's answer: r0 and the instructions it ran, or why the program cannot run.
fn reference(insns: &[Insn], memory: &[u8]) -> Result<(u64, u64), String> {
    let spec = ObjectSpec::single(ProgramSpec::standalone(
        "conformance",
        "conformance",
        insns.to_vec(),
    ));
    let config = Config {
        environment: Environment::Conformance,
        ..Config::default()
    };
    let mut machine = Machine::new(&spec, None, &config).map_err(|e| e.to_string())?;
    let mut buff = XdpBuff::memory(memory).map_err(|e| e.to_string())?;
    let (outcome, r0) = machine.run_memory(&mut buff);
    match outcome.fault {
        Some(f) => Err(f.to_string()),
        None => Ok((r0, outcome.insns)),
    }
}

/// Runs `insns` on the engine with `memory` as the frame, `gap` idle cycles between beats, from a zeroed memory.
fn rtl(e: &mut EbpflowRtl, insns: &[Insn], memory: &[u8], gap: u32) -> Run {
    let slots = slots_of(&hwxdp_ebpf::encode(insns)).expect("whole slots");
    e.clear().unwrap_or_else(|err| panic!("{err}"));
    e.load(&slots).unwrap_or_else(|err| panic!("{err}"));
    e.run(&Header::default(), memory, gap)
        .unwrap_or_else(|err| panic!("{err}"))
}

fn asm(text: &str) -> Vec<Insn> {
    hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Runs `text` with `memory` and checks it against the reference machine; returns the engine's run.
fn checked(text: &str, memory: &[u8]) -> Run {
    let insns = asm(text);
    let want = reference(&insns, memory).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let got = rtl(&mut engine(), &insns, memory, 0);
    assert!(!got.fault, "the engine faulted on\n{text}");
    assert_eq!(got.r0, want.0, "r0 of\n{text}");
    got
}

#[test]
fn every_program_agrees_with_the_reference_machine() {
    let cases = ebpflow_programs::cases();
    assert!(cases.len() >= 45, "{} cases", cases.len());
    let mut e = engine();
    let mut failures = Vec::new();
    let mut table = Vec::new();
    for case in &cases {
        let want = reference(&case.insns, &case.memory);
        // A beat a cycle, and a beat every fourth cycle (the program runs while the memory arrives).
        for gap in [0, 3] {
            let got = rtl(&mut e, &case.insns, &case.memory, gap);
            match (&want, got.fault) {
                (Ok((r0, _)), false) if *r0 == got.r0 => {}
                (Err(_), true) => {}
                _ => failures.push(format!(
                    "{} (gap {gap}): reference {want:?}, engine r0 {:#x} fault {}",
                    case.name, got.r0, got.fault
                )),
            }
            if let (Ok((_, insns)), 0) = (&want, gap) {
                table.push((case.name.clone(), *insns, got.cycles));
            }
        }
    }
    println!("| program | instructions | cycles | cycles per instruction |");
    println!("| --- | --- | --- | --- |");
    for (name, insns, cycles) in &table {
        println!(
            "| {name} | {insns} | {cycles} | {:.2} |",
            *cycles as f64 / *insns as f64
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn random_alu_programs_agree_with_the_reference_machine() {
    let mut rng = common::Rng(0x5eed_ebf1);
    let ops = [
        "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "<<=", ">>=", "s>>=", "s/=", "s%=",
    ];
    let mut e = engine();
    for round in 0..40 {
        let mut text = String::new();
        for r in 0..6 {
            text.push_str(&format!("r{r} = {:#x} ll\n", rng.next()));
        }
        for _ in 0..24 {
            let op = ops[rng.below_usize(ops.len())];
            let dst = rng.below_usize(6);
            let wide = rng.below(2) == 0;
            let p = if wide { 'r' } else { 'w' };
            let shift = op.contains("<<") || op.contains(">>");
            if rng.below(3) == 0 {
                let imm = if shift {
                    rng.below(if wide { 64 } else { 32 }) as i64
                } else {
                    rng.next() as i32 as i64 >> rng.below(32)
                };
                text.push_str(&format!("{p}{dst} {op} {imm}\n"));
            } else {
                let src = rng.below_usize(6);
                text.push_str(&format!("{p}{dst} {op} {p}{src}\n"));
            }
        }
        text.push_str("r0 ^= r1\nr0 += r2\nr0 ^= r3\nr0 += r4\nr0 ^= r5\nexit\n");
        let insns = asm(&text);
        let want = reference(&insns, &[]).unwrap_or_else(|err| panic!("{err}\n{text}"));
        let got = rtl(&mut e, &insns, &[], 0);
        assert!(
            !got.fault && got.r0 == want.0,
            "round {round}: engine {got:?}, reference {want:?}\n{text}"
        );
    }
}

#[test]
fn load_use_stalls_one_cycle_and_forwards_the_loaded_value() {
    // The add needs the load's value: one bubble, then MEM/WB forwarding.
    let dependent = checked(
        "r1 = 5\n*(u64 *)(r10 - 8) = r1\nr2 = *(u64 *)(r10 - 8)\nr0 = r2\nr0 += 1\nexit",
        &[],
    );
    let independent = checked(
        "r1 = 5\n*(u64 *)(r10 - 8) = r1\nr2 = *(u64 *)(r10 - 8)\nr0 = r1\nr0 += 1\nexit",
        &[],
    );
    assert_eq!(dependent.r0, 5 + 1);
    assert_eq!(
        dependent.cycles,
        independent.cycles + 1,
        "one load-use bubble"
    );
    // Back-to-back ALU results forward from MEM without a bubble.
    let alu = checked("r0 = 1\nr0 += 1\nr0 += 1\nr0 += 1\nexit", &[]);
    let spaced = checked("r0 = 1\nr1 = 1\nr2 = 1\nr3 = 1\nexit", &[]);
    assert_eq!(alu.cycles, spaced.cycles, "ALU forwarding costs nothing");
}

#[test]
fn a_taken_branch_squashes_the_slot_behind_it_and_costs_one_cycle() {
    let taken = checked("r0 = 1\nif r0 == 1 goto +1\nr0 = 2\nr1 = 3\nexit", &[]);
    let not_taken = checked("r0 = 1\nif r0 == 2 goto +1\nr1 = 2\nr1 = 3\nexit", &[]);
    assert_eq!(taken.r0, 1, "the slot after the branch did not run");
    // Taken: one slot fewer executed and one bubble, so the same cycles as falling through.
    assert_eq!(taken.cycles, not_taken.cycles);
    // A branch on a value loaded just before it waits for the load.
    checked(
        "r1 = 7\n*(u64 *)(r10 - 8) = r1\nr2 = *(u64 *)(r10 - 8)\nr0 = 0\nif r2 == 7 goto +1\nr0 = 9\nexit",
        &[],
    );
}

#[test]
fn calls_and_exits_drain_the_pipeline_and_keep_the_callee_saved_registers() {
    let run = checked(
        "r6 = 60\nr1 = 2\ncall f\nr0 += r6\nexit\nf:\nr6 = r1\nr6 *= 3\nr0 = r6\nexit",
        &[],
    );
    assert_eq!(run.r0, 66);
    // Results in flight when the call is decoded reach the callee; the callee's r0 reaches the caller at once.
    checked(
        "r1 = 1\nr1 += 1\nr1 += 1\ncall f\nr0 += 1\nexit\nf:\nr0 = r1\nexit",
        &[],
    );
    // The callee's stack frame is 512 bytes above the caller's.
    checked(
        "r1 = 3\n*(u64 *)(r10 - 8) = r1\ncall f\nr2 = *(u64 *)(r10 - 8)\nr0 += r2\nexit\nf:\nr0 = *(u64 *)(r10 - 520)\nexit",
        &[],
    );
    // Seven frames deep is the limit, as on the reference machine.
    let mut deep = String::from("r1 = 0\ncall f1\nexit\n");
    for d in 1..7 {
        deep.push_str(&format!("f{d}:\nr1 += 1\ncall f{}\nexit\n", d + 1));
    }
    deep.push_str("f7:\nr0 = r1\nexit\n");
    assert_eq!(checked(&deep, &[]).r0, 6);
    let too_deep = deep.replace(
        "f7:\nr0 = r1\nexit\n",
        "f7:\nr1 += 1\ncall f8\nexit\nf8:\nr0 = r1\nexit\n",
    );
    assert!(reference(&asm(&too_deep), &[]).is_err());
    assert!(rtl(&mut engine(), &asm(&too_deep), &[], 0).fault);
}

#[test]
fn a_divide_in_flight_holds_execute_and_forwards_its_result() {
    let div = checked("r1 = 1000\nr2 = 7\nr1 /= r2\nr0 = r1\nr0 += 1\nexit", &[]);
    let add = checked("r1 = 1000\nr2 = 7\nr1 += r2\nr0 = r1\nr0 += 1\nexit", &[]);
    assert_eq!(div.r0, 1000 / 7 + 1);
    // A 64-bit divide is 66 cycles in EX instead of 1 (start, 64 steps, the result).
    assert_eq!(
        div.cycles,
        add.cycles + 65,
        "div {} add {}",
        div.cycles,
        add.cycles
    );
    let div32 = checked("r1 = 1000\nr2 = 7\nw1 /= w2\nr0 = r1\nr0 += 1\nexit", &[]);
    assert_eq!(div32.cycles, add.cycles + 33);
    let by_zero = checked("r1 = 1000\nr2 = 0\nr1 /= r2\nr0 = r1\nr0 += 1\nexit", &[]);
    assert_eq!(
        by_zero.cycles,
        add.cycles + 1,
        "a division by zero: start, the result"
    );
    let mul = checked("r1 = 1000\nr2 = 7\nr1 *= r2\nr0 = r1\nr0 += 1\nexit", &[]);
    // Start, four 16-bit steps, the result.
    assert_eq!(mul.cycles, add.cycles + 5);
    // Instructions behind the divide wait; those ahead of it complete; a load right after it sees memory.
    checked(
        "r3 = 9\n*(u64 *)(r10 - 8) = r3\nr1 = -1 ll\nr2 = 3\nr1 %= r2\nr4 = *(u64 *)(r10 - 8)\nr0 = r4\nr0 += r1\nexit",
        &[],
    );
}

#[test]
fn the_dm_fifo_starts_the_run_before_the_frame_is_in_and_loads_wait_for_their_words() {
    let frame: Vec<u8> = (0..1500u32).map(|i| (i * 7 + 3) as u8).collect();
    let mut e = engine();
    // r0 = 1 ends long before the last of 188 beats (a beat every fourth cycle) arrives.
    let quick = rtl(&mut e, &asm("r0 = 1\nexit"), &frame, 3);
    assert!(!quick.fault && quick.r0 == 1, "{quick:?}");
    assert!(
        quick.done_at < 20 && quick.last_beat_at > 700,
        "done at {} last beat at {}",
        quick.done_at,
        quick.last_beat_at
    );
    // The first frame word is there at once.
    let first = rtl(&mut e, &asm("r0 = *(u32 *)(r1 + 0)\nexit"), &frame, 3);
    assert_eq!(
        first.r0,
        u32::from_le_bytes(frame[0..4].try_into().unwrap()) as u64
    );
    assert!(first.done_at < first.last_beat_at);
    // The last byte's word arrives last: the load waits for it and then sees it.
    let last = rtl(
        &mut e,
        &asm("r3 = r1\nr3 += r2\nr0 = *(u8 *)(r3 - 1)\nexit"),
        &frame,
        3,
    );
    assert!(!last.fault);
    assert_eq!(last.r0, frame[1499] as u64);
    assert!(
        last.done_at > last.last_beat_at && last.done_at < last.last_beat_at + 10,
        "done at {} last beat at {}",
        last.done_at,
        last.last_beat_at
    );
    // A load of an unaligned word straddling two beats waits for the second.
    let straddle = rtl(&mut e, &asm("r0 = *(u64 *)(r1 + 804)\nexit"), &frame, 3);
    assert_eq!(
        straddle.r0,
        u64::from_le_bytes(frame[804..812].try_into().unwrap())
    );
    // A store to a word that has not arrived waits too, so the frame's own bytes do not overwrite it.
    let store = rtl(
        &mut e,
        &asm("r3 = 0x55\n*(u8 *)(r1 + 1400) = r3\nr0 = *(u8 *)(r1 + 1400)\nexit"),
        &frame,
        3,
    );
    assert_eq!(store.r0, 0x55);
    let mut want = frame.clone();
    want[1400] = 0x55;
    assert_eq!(store.frame, want, "the frame leaves as the program left it");
    // The stale words of a longer earlier packet are not taken for this one's.
    let short: Vec<u8> = vec![0xaa; 16];
    let stale = rtl(&mut e, &asm("r0 = *(u64 *)(r1 + 8)\nexit"), &short, 5);
    assert_eq!(stale.r0, 0xaaaa_aaaa_aaaa_aaaa);
}

#[test]
fn the_header_precedes_the_frame_and_the_memory_reads_back() {
    let mut e = engine();
    let prog = asm(
        "r3 = r1\nr3 += -32\nr0 = *(u32 *)(r3 + 3)\nr4 = *(u16 *)(r3 + 11)\nr0 <<= 16\nr0 |= r4\nr5 = 0x77\n\
         *(u8 *)(r3 + 2) = r5\nr6 = 0x0123456789abcdef ll\n*(u64 *)(r10 - 16) = r6\nexit",
    );
    let slots = slots_of(&hwxdp_ebpf::encode(&prog)).expect("slots");
    e.clear().expect("clear");
    e.load(&slots).expect("load");
    let header = Header {
        input_port: 3,
        source_queue: 1,
        destination_queue: 0,
        seconds: 0x1234_5678,
        nanoseconds: 999,
    };
    let frame = [9u8; 60];
    let run = e.run(&header, &frame, 0).expect("run");
    assert!(!run.fault);
    assert_eq!(run.r0, 0x1234_5678 << 16 | 60);
    assert_eq!(run.frame, frame);
    let memory = e.dump().expect("dump");
    assert_eq!(
        memory[0..3],
        [3, 1, 0x77],
        "the program wrote the destination queue"
    );
    // The context words the loader's xdp_md loads read: data, data_end, data_meta, ingress_ifindex (1 + port 3).
    let word = |at: usize| u32::from_le_bytes(memory[at..at + 4].try_into().expect("4 bytes"));
    let data = (BASE + FRAME_OFFSET) as u32;
    assert_eq!(
        [word(16), word(20), word(24), word(28)],
        [data, data + 60, data, 4],
        "the context words"
    );
    assert_eq!(memory[FRAME_OFFSET as usize..][..60], frame);
    let top = STACK_OFFSET as usize + 512;
    assert_eq!(
        memory[top - 16..top - 8],
        0x0123_4567_89ab_cdefu64.to_le_bytes()
    );
    // r1 and r10 are addresses in the engine's map.
    let regs = rtl(&mut e, &asm("r0 = r10\nr0 -= r1\nexit"), &frame, 0);
    assert_eq!(regs.r0, (BASE + STACK_OFFSET + 512) - (BASE + FRAME_OFFSET));
}
