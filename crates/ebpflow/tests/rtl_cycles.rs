//! The engine model's cycles against the engine's RTL (`rtl/ebpflow/`, Verilator) on every program of
//! `tests/ebpflow_programs.txt` that the reference machine runs to its exit: the same cycle count, with the frame
//! arriving a beat a cycle and a beat every fourth cycle; and on the map programs of
//! `crates/rtlsim/tests/ebpflow_maps.rs` (helper calls with their key gather, map-value loads, stores and atomics),
//! one engine alone at its coprocessor.

use hwxdp_ebpf::Insn;
use hwxdp_ebpflow::engine::Pipeline;
use hwxdp_ebpflow::jobs::{job, Shape, Where};
use hwxdp_ebpflow::nic::{Dest, Input, Nic, NicConfig};
use hwxdp_ebpflow::Image;
use hwxdp_object::{MapSpec, ObjectSpec, ProgramSpec};
use hwxdp_rtlsim::ebpflow::{slots_of, EbpflowPaths, EbpflowRtl, Header};
use hwxdp_xdp::{Config, Environment, Machine, Outcome, XdpBuff};
use std::path::PathBuf;

/// The programs of `tests/ebpflow_programs.txt`, shared with the engine RTL's own test.
#[path = "../../../tests/support/ebpflow_programs.rs"]
mod ebpflow_programs;

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
    let job = job(&outcome, data0, &at, gap, Shape::DEFAULT).expect("a trace");
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
    let cases = ebpflow_programs::cases();
    let (mut compared, mut failures) = (0, Vec::new());
    for ebpflow_programs::Case {
        name,
        memory,
        insns,
    } in &cases
    {
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

/// `bpf_map_update_elem(map, &key, &value, flags)` with the key at r10 - 4 and the value at r10 - 16; the map
/// reference is the loader's relocation (`lddw r1, map`), as `crates/rtlsim/tests/ebpflow_maps.rs`'s programs
/// after the loader.
fn update(map: u32, key: u32, value: u64, flags: u32) -> String {
    format!(
        "r1 = {key}\n*(u32 *)(r10 - 4) = r1\nr1 = {value}\n*(u64 *)(r10 - 16) = r1\nld_pseudo r1, 1, {map}\n\
         r2 = r10\nr2 += -4\nr3 = r10\nr3 += -16\nr4 = {flags}\ncall 2\n"
    )
}

/// `bpf_map_lookup_elem(map, &key)` with the key at r10 - 4.
fn lookup(map: u32, key: u32) -> String {
    format!(
        "r1 = {key}\n*(u32 *)(r10 - 4) = r1\nld_pseudo r1, 1, {map}\nr2 = r10\nr2 += -4\ncall 1\n"
    )
}

/// `bpf_map_delete_elem(map, &key)` with the key at r10 - 4.
fn delete(map: u32, key: u32) -> String {
    format!(
        "r1 = {key}\n*(u32 *)(r10 - 4) = r1\nld_pseudo r1, 1, {map}\nr2 = r10\nr2 += -4\ncall 3\n"
    )
}

/// The map programs of `ebpflow_maps.rs`, in its order (the maps carry over from one to the next): updates,
/// lookups, deletes, atomics, loads and stores on map values of a HASH, an ARRAY and an LPM_TRIE, each helper
/// alone, and a map-value load against a stack load.
fn map_programs() -> Vec<(String, String)> {
    let mut out = vec![
        (
            "update, lookup, atomic add, load".to_string(),
            format!(
                "{}r6 = r0\n{}if r0 == 0 goto miss\nr1 = 5\nlock *(u64 *)(r0 + 0) += r1\n\
                 r7 = *(u64 *)(r0 + 0)\nr0 = r7\nr0 += r6\nexit\nmiss:\nr0 = 999\nexit",
                update(0, 7, 100, 0),
                lookup(0, 7)
            ),
        ),
        (
            "lookup, BPF_NOEXIST update".to_string(),
            format!(
                "{}r6 = *(u64 *)(r0 + 0)\n{}r0 += r6\nexit",
                lookup(0, 7),
                update(0, 7, 1, 1)
            ),
        ),
    ];
    let mut text = String::new();
    for k in 1..=4 {
        text += &update(0, k, u64::from(k), 0);
        text += "r9 |= r0\n";
    }
    text += &delete(0, 7);
    text += &delete(0, 7);
    text += &lookup(0, 7);
    text += "r0 = r9\nexit";
    out.push(("E2BIG, delete, ENOENT".into(), text));
    out.push((
        "ARRAY store, loads, row past the end".into(),
        format!(
            "{}r6 = r0\nr1 = 42\n*(u32 *)(r6 + 4) = r1\n{}r7 = *(u32 *)(r0 + 4)\nr8 = *(u32 *)(r0 + 0)\n{}\
             r0 += r7\nr0 += r8\nexit",
            lookup(1, 2),
            lookup(1, 2),
            lookup(1, 9)
        ),
    ));
    let lpm_key = |plen: u32, data: u32| {
        format!("r1 = {plen}\n*(u32 *)(r10 - 8) = r1\nr1 = {data}\n*(u32 *)(r10 - 4) = r1\n")
    };
    let lpm_update = |plen: u32, data: u32, value: u64| {
        format!(
            "{}r1 = {value}\n*(u64 *)(r10 - 16) = r1\nld_pseudo r1, 1, 2\nr2 = r10\nr2 += -8\nr3 = r10\n\
             r3 += -16\nr4 = 0\ncall 2\n",
            lpm_key(plen, data)
        )
    };
    let lpm_lookup = |data: u32| {
        format!(
            "{}ld_pseudo r1, 1, 2\nr2 = r10\nr2 += -8\ncall 1\n",
            lpm_key(32, data)
        )
    };
    out.push((
        "LPM_TRIE updates and longest matches".into(),
        format!(
            "{}{}{}r6 = *(u64 *)(r0 + 0)\n{}r7 = *(u64 *)(r0 + 0)\nr0 = r6\nr0 *= 10\nr0 += r7\nexit",
            lpm_update(8, 0x0a, 1),
            lpm_update(16, 0x010a, 2),
            lpm_lookup(0x0302_010a),
            lpm_lookup(0x0909_090a)
        ),
    ));
    // Each helper alone, its gather starting in the cycle the call acts, then with that start held back a cycle:
    // r2 or r3 written by EX or loaded by MEM, an atomic's write in MEM.
    let before = [
        ("", "r4 = 0\n"),
        (", r2 in EX", "r4 = 0\nr2 += 0\n"),
        (", r3 in EX", "r4 = 0\nr3 += 0\n"),
        (
            ", r2 loaded",
            "r4 = 0\n*(u64 *)(r10 - 24) = r2\nr2 = *(u64 *)(r10 - 24)\n",
        ),
        (
            ", an atomic in MEM",
            "r4 = 0\nr5 = 1\nlock *(u64 *)(r10 - 32) += r5\n",
        ),
    ];
    for (name, id) in [("lookup", 1), ("update", 2), ("delete", 3)] {
        for (what, text) in before {
            out.push((
                format!("{name} alone{what}"),
                format!(
                    "ld_pseudo r1, 1, 0\nr2 = r10\nr2 += -16\nr3 = r10\nr3 += -16\n{text}call {id}\nr0 = 0\nexit"
                ),
            ));
        }
    }
    for from in ["r7 = *(u64 *)(r6 + 0)\n", "r7 = *(u64 *)(r10 - 8)\n"] {
        out.push((
            format!("ARRAY lookup, {}", from.trim()),
            format!("{}r6 = r0\n{from}r0 = 0\nexit", lookup(1, 0)),
        ));
    }
    out
}

#[test]
fn the_model_takes_the_engine_rtls_cycles_on_the_map_programs() {
    let maps = vec![
        MapSpec::new("hash", 1, 4, 8, 4),
        MapSpec::new("array", 2, 4, 8, 4),
        MapSpec::new("lpm", 11, 8, 8, 4).with_flags(1),
    ];
    let cache = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/rtlsim");
    let mut rtl = EbpflowRtl::new(&EbpflowPaths::embedded(cache)).unwrap_or_else(|e| panic!("{e}"));
    rtl.map_table(&maps).unwrap_or_else(|e| panic!("{e}"));
    let programs = map_programs();
    // The XDP environment for the kernel's map helpers; `run_memory` starts the programs as the engine does (r1 the
    // frame, r2 its length), and they do not read r1.
    let config = Config {
        environment: Environment::Xdp,
        record_trace: true,
        ..Config::default()
    };
    // The maps carry over from one program to the next, as the coprocessor's do: each program's reference machine
    // runs on the maps of `carrier`.
    let mut carrier = Machine::new(&object(&programs[0].1, &maps), None, &config)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    for (name, text) in &programs {
        let spec = object(text, &maps);
        let image = hwxdp_ebpflow::load(&spec, "m").unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut machine = Machine::new(&spec, None, &config).unwrap_or_else(|e| panic!("{e}"));
        std::mem::swap(machine.maps_mut(), carrier.maps_mut());
        let mut buff = XdpBuff::memory(&[]).expect("an empty frame");
        let data0 = buff.offsets().1 as u64;
        let (outcome, r0) = machine.run_memory(&mut buff);
        std::mem::swap(machine.maps_mut(), carrier.maps_mut());
        assert!(outcome.fault.is_none(), "{name}: {:?}", outcome.fault);
        rtl.clear().unwrap_or_else(|e| panic!("{e}"));
        rtl.load(&image.slots).unwrap_or_else(|e| panic!("{e}"));
        let got = rtl
            .run(&Header::default(), &[], 0)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!got.fault, "{name}: the engine faulted");
        assert_eq!(got.r0, r0, "{name}: r0");
        let want = model_with_coprocessor(&outcome, data0, &image);
        if got.cycles != want {
            failures.push(format!("{name}: RTL {} cycles, model {want}", got.cycles));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        programs.len(),
        failures.join("\n")
    );
}

/// An object of one XDP program `m` assembled from `text`, with `maps`.
fn object(text: &str, maps: &[MapSpec]) -> ObjectSpec {
    let insns = hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    ObjectSpec {
        programs: vec![ProgramSpec::standalone("m", "xdp", insns)],
        maps: maps.to_vec(),
        license: "GPL".into(),
    }
}

/// The model's cycles for a run on the loader's `image`: one engine of a one-port NIC, alone at the coprocessor.
fn model_with_coprocessor(outcome: &Outcome, data0: u64, image: &Image) -> u64 {
    let slot_of = |p: u16, s: u32| image.slot_of(usize::from(p), s);
    let at = Where {
        slots: &image.slots,
        prologue: 0..image.prologue,
        slot_of: &slot_of,
    };
    let job = job(outcome, data0, &at, 0, Shape::DEFAULT).expect("a trace");
    let mut nic = Nic::new(NicConfig {
        ports: 1,
        engines_per_port: 1,
    });
    let (timed, _) = nic.run(vec![Input {
        port: 0,
        len: 0,
        job,
        dest: Dest::Drop,
    }]);
    timed[0].cycles
}

/// The NIC model's cycles around the runs (dispatch, result, output, hand-over to the next packet) against the NIC's
/// RTL (`ebpflow_nic.sv`, 2 ports x 2 engines, the shape `crates/rtlsim/tests/ebpflow_nic.rs` builds): helper-free
/// programs that return XDP_TX on back-to-back frames of several lengths on both ports; every packet's first input
/// beat and last output beat in the same cycles (up to one offset for the whole run).
#[test]
fn the_nic_model_takes_the_nic_rtls_cycles() {
    use hwxdp_rtlsim::ebpflow_nic::{NicConfig as RtlConfig, NicPacket, NicRtl, ResultMode};
    let cache = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/rtlsim");
    let shape = RtlConfig {
        ports: 2,
        engines_per_port: 2,
    };
    let mut rtl =
        NicRtl::new(&EbpflowPaths::embedded(cache), shape).unwrap_or_else(|e| panic!("{e}"));
    rtl.set_tx_ready(100, 1).expect("ready");
    rtl.set_mode(ResultMode::Xdp).expect("mode");
    let programs = [
        "r0 = 3\nexit",
        "r2 = 9\nr2 += -1\nif r2 != 0 goto -2\nr0 = 3\nexit",
        "r3 = *(u64 *)(r1 + 40)\nr0 = 3\nexit",
    ];
    let mut failures = Vec::new();
    for text in programs {
        let insns = hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let slots = slots_of(&hwxdp_ebpf::encode(&insns)).expect("whole slots");
        rtl.load(&slots).unwrap_or_else(|e| panic!("{e}"));
        let lens = [64usize, 64, 200, 64, 96, 1500, 64, 64];
        let packets: Vec<NicPacket> = (0..48)
            .map(|i| NicPacket {
                port: i % 2,
                id: i as u32,
                gap: 0,
                frame: vec![(i % 251) as u8; lens[(i / 2) % lens.len()]],
            })
            .collect();
        let run = rtl.run(&packets).unwrap_or_else(|e| panic!("{e}"));
        let inputs = packets
            .iter()
            .map(|p| {
                let job = conformance_job(&insns, &p.frame);
                Input {
                    port: p.port,
                    len: p.frame.len(),
                    job,
                    dest: Dest::Port(p.port),
                }
            })
            .collect();
        let mut nic = Nic::new(NicConfig {
            ports: 2,
            engines_per_port: 2,
        });
        let (timed, _) = nic.run(inputs);
        let mut offset = None;
        for o in &run.outputs {
            let t = timed[o.id as usize];
            let off = *offset.get_or_insert(o.in_cycle as i64 - t.start as i64);
            let (start, left) = (t.start as i64 + off, t.left as i64 + off);
            if (start, left) != (o.in_cycle as i64, o.out_cycle as i64) || t.engine != o.engine {
                failures.push(format!(
                    "{}: packet {} ({} bytes): RTL in {} out {} engine {}, model in {start} out {left} engine {}",
                    text.replace('\n', "; "),
                    o.id,
                    o.frame.len(),
                    o.in_cycle,
                    o.out_cycle,
                    o.engine,
                    t.engine
                ));
            }
        }
        assert_eq!(run.outputs.len(), packets.len(), "{text}: every packet out");
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The steps of helper-free `insns` run on `frame` in the conformance environment (r1 the frame, r2 its length, as
/// the engine starts).
fn conformance_job(insns: &[Insn], frame: &[u8]) -> hwxdp_ebpflow::engine::Job {
    let spec = ObjectSpec::single(ProgramSpec::standalone("c", "c", insns.to_vec()));
    let config = Config {
        environment: Environment::Conformance,
        record_trace: true,
        ..Config::default()
    };
    let mut machine = Machine::new(&spec, None, &config).expect("prepares");
    let mut buff = XdpBuff::memory(frame).expect("a frame");
    let data0 = buff.offsets().1 as u64;
    let (outcome, _) = machine.run_memory(&mut buff);
    assert!(outcome.fault.is_none(), "{:?}", outcome.fault);
    let slots = slots_of(&hwxdp_ebpf::encode(insns)).expect("whole slots");
    let slot_of = |_: u16, s: u32| Some(s as usize);
    let at = Where {
        slots: &slots,
        prologue: 0..0,
        slot_of: &slot_of,
    };
    job(&outcome, data0, &at, 0, Shape::DEFAULT).expect("a trace")
}
