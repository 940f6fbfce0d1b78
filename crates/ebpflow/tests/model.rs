//! The engine model's hazards, the NIC's dispatch and the coprocessor's arbitration, and the loader's image, on
//! small hand-written programs.

use hwxdp_ebpf::Insn;
use hwxdp_ebpflow::engine::{End, Job, Pipeline, Step, Wait};
use hwxdp_ebpflow::jobs::{job, Shape, Where};
use hwxdp_ebpflow::nic::{Dest, Input, Nic, NicConfig};
use hwxdp_object::{MapSpec, ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, Environment, Machine, XdpBuff};

/// The steps of `text` run on `memory` in the conformance environment (r1 = the memory, r2 its length).
fn steps(text: &str, memory: &[u8]) -> Job {
    let insns = hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let spec = ObjectSpec::single(ProgramSpec::standalone("t", "t", insns.clone()));
    let config = Config {
        environment: Environment::Conformance,
        record_trace: true,
        ..Config::default()
    };
    let mut machine = Machine::new(&spec, None, &config).expect("prepares");
    let mut buff = XdpBuff::memory(memory).expect("memory");
    let data0 = buff.offsets().1 as u64;
    let (outcome, _) = machine.run_memory(&mut buff);
    assert!(outcome.fault.is_none(), "{:?}", outcome.fault);
    let bytes = hwxdp_ebpf::encode(&insns);
    let slots: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let slot_of = |_: u16, s: u32| Some(s as usize);
    job(
        &outcome,
        data0,
        &Where {
            slots: &slots,
            prologue: 0..0,
            slot_of: &slot_of,
        },
        0,
        Shape::DEFAULT,
    )
    .expect("a job")
}

fn cycles(job: Job) -> u64 {
    let mut p = Pipeline::new(job);
    while p.done().is_none() {
        assert!(p.cycle() < 100_000);
        p.clock();
    }
    p.done().unwrap()
}

#[test]
fn a_load_used_at_once_costs_one_bubble() {
    let dependent = "r1 = 5\n*(u64 *)(r10 - 8) = r1\nr2 = *(u64 *)(r10 - 8)\nr0 = r2\nexit";
    let independent = "r1 = 5\n*(u64 *)(r10 - 8) = r1\nr2 = *(u64 *)(r10 - 8)\nr0 = r1\nexit";
    assert_eq!(
        cycles(steps(dependent, &[])),
        cycles(steps(independent, &[])) + 1
    );
}

#[test]
fn a_load_of_a_late_beat_waits_for_it() {
    let memory = vec![7u8; 256];
    // The last word (beat 31) arrives in run cycle 32: the load waits for it.
    let late = cycles(steps("r0 = *(u64 *)(r1 + 248)\nexit", &memory));
    let early = cycles(steps("r0 = *(u64 *)(r1 + 0)\nexit", &memory));
    assert!(
        late >= 32 && late > early + 25,
        "late {late}, early {early}"
    );
}

#[test]
fn a_divide_takes_its_latency_and_by_zero_less() {
    let div = cycles(steps("r0 = 100\nr1 = 7\nr0 /= r1\nexit", &[]));
    let zero = cycles(steps("r0 = 100\nr1 = 0\nr0 /= r1\nexit", &[]));
    let add = cycles(steps("r0 = 100\nr1 = 7\nr0 += r1\nexit", &[]));
    // The exit acts behind the add in EX at once, behind the divide once EX is empty: one cycle more.
    assert_eq!(div, add + 65 + 1);
    assert_eq!(zero, add + 1 + 1);
}

/// A job of `n` ALU steps, a helper call served in `service` cycles, and an exit.
fn helper_job(n: usize, service: u32) -> Job {
    let alu = hwxdp_ebpflow::decode::decode(0x0000_0001_0000_00b7, false);
    let call = hwxdp_ebpflow::decode::decode(0x0000_0001_0000_0085, false);
    let exit = hwxdp_ebpflow::decode::decode(0x0000_0000_0000_0095, false);
    let step = |decoded, wait| Step {
        decoded,
        wait,
        taken: false,
        md_cycles: 0,
    };
    let mut steps = vec![step(alu, Wait::None); n];
    steps.push(step(call, Wait::Coproc { service, gather: 0 }));
    steps.push(step(exit, Wait::None));
    Job {
        steps,
        end: End::Exit,
        gap: 0,
    }
}

#[test]
fn engines_share_one_coprocessor_round_robin() {
    // One engine alone, then 4 engines of one port each with a packet calling an 8-cycle helper at the same time:
    // the later ones wait for the earlier ones' service.
    let input = |port| Input {
        port,
        len: 64,
        job: helper_job(2, 8),
        dest: Dest::Drop,
    };
    let mut alone = Nic::new(NicConfig {
        ports: 1,
        engines_per_port: 1,
    });
    let (one, _) = alone.run(vec![input(0)]);
    let mut nic = Nic::new(NicConfig {
        ports: 4,
        engines_per_port: 1,
    });
    let (four, _) = nic.run((0..4).map(input).collect());
    let mut runs: Vec<u64> = four.iter().map(|t| t.cycles).collect();
    runs.sort_unstable();
    assert_eq!(runs[0], one[0].cycles);
    for k in 1..4 {
        assert_eq!(runs[k], runs[k - 1] + 8, "{runs:?}");
    }
}

#[test]
fn a_port_dispatches_round_robin_to_its_free_engines() {
    let mut nic = Nic::new(NicConfig {
        ports: 1,
        engines_per_port: 4,
    });
    let inputs = (0..8)
        .map(|_| Input {
            port: 0,
            len: 64,
            job: helper_job(40, 2),
            dest: Dest::Port(0),
        })
        .collect();
    let (timed, _) = nic.run(inputs);
    let engines: Vec<usize> = timed.iter().map(|t| t.engine).collect();
    assert_eq!(engines, [0, 1, 2, 3, 0, 1, 2, 3]);
    // A packet follows the one before it on the port's input: 8 beats later.
    assert_eq!(timed[1].start, timed[0].start + 8);
}

fn xdp_object() -> ObjectSpec {
    // r2 = ctx->data; r3 = ctx->data_end; r1 = map 0; exit with XDP_PASS.
    let insns = vec![
        Insn::new(0x61, 2, 1, 0, 0),
        Insn::new(0x61, 3, 1, 4, 0),
        Insn::new(0x18, 1, 1, 0, 0),
        Insn::new(0xb7, 0, 0, 0, 2),
        Insn::new(0x95, 0, 0, 0, 0),
    ];
    ObjectSpec {
        programs: vec![ProgramSpec::standalone("p", "xdp", insns)],
        maps: vec![MapSpec::new("counts", 2, 4, 8, 16)],
        license: "GPL".into(),
    }
}

#[test]
fn the_loader_relocates_maps_and_reads_the_context_from_the_header() {
    let image = hwxdp_ebpflow::load(&xdp_object(), "p").expect("loads");
    // No prologue: the DM_FIFO writes the context words at the first beat.
    assert_eq!(image.prologue, 0);
    assert_eq!(image.map_relocations, 1);
    assert_eq!(image.context_loads, 2);
    assert_eq!(image.maps[0].window, 0x0100_0000);
    assert_eq!(image.maps[0].stride, 8);
    let at = |s: usize| image.slots[image.prologue + s];
    // ldxw r2, [r1 - 16]: header bytes 16..19; ldxw r3, [r1 + 4 - 4 + 20 - 32]: header bytes 20..23.
    assert_eq!(at(0) & 0xffff_ffff, 0xfff0_1261);
    assert_eq!(at(1) & 0xffff_ffff, 0xfff4_1361);
    // lddw r1, 0 with src 0.
    assert_eq!(at(2) & 0xffff, 0x0118);
}

#[test]
fn the_loader_refuses_what_the_engine_cannot_run_naming_it() {
    let mut spec = xdp_object();
    spec.programs[0].insns[1] = Insn::new(0x85, 0, 0, 0, 9999);
    let err = hwxdp_ebpflow::load(&spec, "p")
        .expect_err("no such helper")
        .to_string();
    assert!(
        err.contains("slot 1") && err.contains("helper 9999"),
        "{err}"
    );
    let mut spec = xdp_object();
    spec.programs[0].insns[0] = Insn::new(0x61, 2, 1, 20, 0);
    let err = hwxdp_ebpflow::load(&spec, "p")
        .expect_err("egress_ifindex")
        .to_string();
    assert!(err.contains("offset 20"), "{err}");
}
