//! The engine model's cycles against the engine's RTL (`rtl/ebpflow/`, Verilator) on every program of
//! `tests/ebpflow_programs.txt` that the reference machine runs to its exit: the same cycle count, with the frame
//! arriving a beat a cycle and a beat every fourth cycle.

use hwxdp_ebpf::Insn;
use hwxdp_ebpflow::engine::Pipeline;
use hwxdp_ebpflow::jobs::{job, Where};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_rtlsim::ebpflow::{slots_of, EbpflowPaths, EbpflowRtl, Header};
use hwxdp_xdp::{Config, Environment, Machine, XdpBuff};
use std::path::PathBuf;

const PROGRAMS: &str = include_str!("../../../tests/ebpflow_programs.txt");

fn cases() -> Vec<(String, Vec<u8>, Vec<Insn>)> {
    let mut out = Vec::new();
    let (mut name, mut memory, mut text): (Option<String>, Vec<u8>, String) =
        (None, Vec::new(), String::new());
    let mut finish = |name: Option<String>, memory: Vec<u8>, text: &mut String| {
        if let Some(name) = name {
            let insns = hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            out.push((name, memory, insns));
        }
        text.clear();
    };
    for line in PROGRAMS.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(n) = line.strip_prefix("== ") {
            finish(name.take(), std::mem::take(&mut memory), &mut text);
            name = Some(n.trim().to_string());
        } else if let Some(m) = line.strip_prefix("mem ") {
            memory = m
                .split_whitespace()
                .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
                .collect();
        } else {
            text.push_str(line);
            text.push('\n');
        }
    }
    finish(name, memory, &mut text);
    out
}

/// The model's cycles for `insns` on `memory`, or `None` when the reference machine does not run it to its end or
/// it calls a helper.
fn model(insns: &[Insn], memory: &[u8], gap: u32) -> Option<u64> {
    let spec = ObjectSpec::single(ProgramSpec::standalone("c", "c", insns.to_vec()));
    let config = Config {
        environment: Environment::Conformance,
        record_trace: true,
        ..Config::default()
    };
    let mut machine = Machine::new(&spec, None, &config).ok()?;
    let mut buff = XdpBuff::memory(memory).ok()?;
    let data0 = buff.offsets().1 as u64;
    let (outcome, _) = machine.run_memory(&mut buff);
    if outcome.fault.is_some() {
        return None;
    }
    let slots = slots_of(&hwxdp_ebpf::encode(insns)).expect("whole slots");
    let slot_of = |_: u16, s: u32| Some(s as usize);
    let at = Where {
        slots: &slots,
        prologue: 0..0,
        slot_of: &slot_of,
    };
    let job = job(&outcome, data0, &at, gap).expect("a trace");
    if job
        .steps
        .iter()
        .any(|s| s.decoded.kind == hwxdp_ebpflow::decode::Kind::Helper)
    {
        return None;
    }
    let mut pipe = Pipeline::new(job);
    while pipe.done().is_none() {
        assert!(pipe.cycle() < 1_000_000, "the model does not end");
        pipe.clock();
    }
    pipe.done()
}

#[test]
fn the_model_takes_the_engine_rtls_cycles_on_every_program() {
    let cache = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/rtlsim");
    let mut rtl = EbpflowRtl::new(&EbpflowPaths::embedded(cache)).unwrap_or_else(|e| panic!("{e}"));
    let cases = cases();
    let (mut compared, mut failures) = (0, Vec::new());
    for (name, memory, insns) in &cases {
        for gap in [0, 3] {
            let Some(want) = model(insns, memory, gap) else {
                continue;
            };
            let slots = slots_of(&hwxdp_ebpf::encode(insns)).expect("whole slots");
            rtl.clear().unwrap_or_else(|e| panic!("{e}"));
            rtl.load(&slots).unwrap_or_else(|e| panic!("{e}"));
            let got = rtl
                .run(&Header::default(), memory, gap)
                .unwrap_or_else(|e| panic!("{e}"));
            compared += 1;
            if got.cycles != want || got.fault {
                failures.push(format!(
                    "{name} (gap {gap}): RTL {} cycles (fault {}), model {want}",
                    got.cycles, got.fault
                ));
            }
        }
    }
    assert!(compared >= 80, "only {compared} runs compared");
    assert!(
        failures.is_empty(),
        "{} of {compared}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
