//! The eBPFlow NIC (`rtl/ebpflow/ebpflow_nic.sv`) under Verilator with 2 ports of 2 engines, against the reference
//! machine (`hwxdp_xdp::Machine`, conformance environment: r1 the frame, r2 its length): every packet's output bytes
//! and TX queue must be the reference's, compared by packet identity (packets of a port may leave out of order across
//! its engines; the tests print the reordering they saw). XDP programs that read and rewrite the packet and return
//! XDP_TX, XDP_PASS, XDP_DROP, XDP_ABORTED or XDP_REDIRECT, with and without back-pressure on the TX queues; the
//! helper-free programs of `tests/ebpflow_programs.txt` with r0 read as a Table 4.2 action code; a flood.

mod common;

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use hwxdp_ebpf::Insn;
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_rtlsim::ebpflow::{slots_of, EbpflowPaths};
use hwxdp_rtlsim::ebpflow_nic::{NicConfig, NicOutput, NicPacket, NicRtl, ResultMode, TxQueue};
use hwxdp_xdp::{Config, Environment, Machine, Verdict, XdpBuff};

const PROGRAMS: &str = include_str!("../../../tests/ebpflow_programs.txt");

const CONFIG: NicConfig = NicConfig {
    ports: 2,
    engines_per_port: 2,
};

/// One started 2 x 2 NIC for the whole test binary.
fn nic() -> MutexGuard<'static, NicRtl> {
    static NIC: OnceLock<Mutex<NicRtl>> = OnceLock::new();
    NIC.get_or_init(|| {
        let paths = EbpflowPaths::embedded(common::target_dir().join("rtlsim"));
        Mutex::new(NicRtl::new(&paths, CONFIG).unwrap_or_else(|e| panic!("{e}")))
    })
    .lock()
    .unwrap_or_else(|p| p.into_inner())
}

fn asm(text: &str) -> Vec<Insn> {
    hwxdp_ebpf::assemble(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The reference machine on `frame`: r0 (None after a fault) and the frame as the program left it.
fn reference(insns: &[Insn], frame: &[u8]) -> (Option<u64>, Vec<u8>) {
    let spec = ObjectSpec::single(ProgramSpec::standalone("nic", "nic", insns.to_vec()));
    let config = Config {
        environment: Environment::Conformance,
        ..Config::default()
    };
    let mut machine = Machine::new(&spec, None, &config).unwrap_or_else(|e| panic!("{e}"));
    let mut buff = XdpBuff::memory(frame).unwrap_or_else(|e| panic!("{e}"));
    let (outcome, r0) = machine.run_memory(&mut buff);
    let r0 = outcome.fault.is_none().then_some(r0);
    (r0, buff.data().to_vec())
}

/// Where the NIC must send a packet of `port` whose program returned `r0` (None: a fault), in XDP mode: the
/// contract's mapping; XDP_REDIRECT drops while the engine reports no devmap target (no coprocessor yet).
fn xdp_queues(r0: Option<u64>, _port: usize) -> Vec<TxQueue> {
    match r0.map(|r0| Verdict::from_retval(r0 as u32)) {
        Some(Verdict::Tx) => vec![TxQueue::Port(_port)],
        Some(Verdict::Pass) => vec![TxQueue::Host],
        _ => Vec::new(),
    }
}

/// The same for r0 read as a Table 4.2 action code.
fn action_queues(r0: Option<u64>, port: usize, ports: usize) -> Vec<TxQueue> {
    let Some(code) = r0.filter(|r0| *r0 <= 0xffff) else {
        return Vec::new();
    };
    match code {
        c if (c as usize) < ports => vec![TxQueue::Port(c as usize)],
        0xfff3 => vec![TxQueue::Controller],
        0xfff2 | 0xfff4 | 0xfff5 => vec![TxQueue::Host],
        0xffff => (0..ports)
            .filter(|&p| p != port)
            .map(TxQueue::Port)
            .collect(),
        _ => Vec::new(),
    }
}

/// Runs `packets` and checks every output against the reference; returns the run's outputs and cycles.
fn check(
    nic: &mut NicRtl,
    insns: &[Insn],
    mode: ResultMode,
    packets: &[NicPacket],
) -> (Vec<NicOutput>, u64) {
    let config = nic.config();
    let slots = slots_of(&hwxdp_ebpf::encode(insns)).expect("whole slots");
    nic.load(&slots).unwrap_or_else(|e| panic!("{e}"));
    nic.set_mode(mode).unwrap_or_else(|e| panic!("{e}"));
    let run = nic.run(packets).unwrap_or_else(|e| panic!("{e}"));
    let mut got: BTreeMap<u32, Vec<&NicOutput>> = BTreeMap::new();
    for o in &run.outputs {
        got.entry(o.id).or_default().push(o);
    }
    for p in packets {
        let (r0, frame) = reference(insns, &p.frame);
        let mut want = match mode {
            ResultMode::Xdp => xdp_queues(r0, p.port),
            ResultMode::Actions => action_queues(r0, p.port, config.ports),
        };
        want.sort();
        let outs = got.remove(&p.id).unwrap_or_default();
        let mut queues: Vec<TxQueue> = outs.iter().map(|o| o.queue).collect();
        queues.sort();
        assert_eq!(queues, want, "packet {} (port {}), r0 {r0:?}", p.id, p.port);
        for o in outs {
            assert_eq!(o.frame, frame, "packet {} bytes on {:?}", p.id, o.queue);
            assert_eq!(
                o.engine / config.engines_per_port,
                p.port,
                "packet {} ran on engine {} of another port",
                p.id,
                o.engine
            );
        }
    }
    assert!(got.is_empty(), "outputs of no packet: {:?}", got.keys());
    (run.outputs, run.cycles)
}

/// Packets that left a queue after a later packet of the same input port: (reordered, compared pairs).
fn reordering(outputs: &[NicOutput], config: NicConfig) -> (usize, usize) {
    let mut last: BTreeMap<(usize, TxQueue), u32> = BTreeMap::new();
    let mut late = 0;
    let mut pairs = 0;
    for o in outputs {
        let key = (o.engine / config.engines_per_port, o.queue);
        if let Some(&prev) = last.get(&key) {
            pairs += 1;
            if o.id < prev {
                late += 1;
                continue;
            }
        }
        last.insert(key, o.id);
    }
    (late, pairs)
}

/// xorshift64*, a fixed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Ethernet-like frames of 14 to 300 bytes: EtherType IPv4, IPv6, ARP or something else, random bytes elsewhere.
fn frames(seed: u64, n: usize, ports: u64) -> Vec<NicPacket> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|i| {
            let len = 14 + (rng.next() % 287) as usize;
            let mut frame: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let ethertype: [u8; 2] = match rng.next() % 5 {
                0 | 1 => [0x08, 0x00],
                2 => [0x86, 0xdd],
                3 => [0x08, 0x06],
                _ => [0x12, 0x34],
            };
            frame[12..14].copy_from_slice(&ethertype);
            NicPacket {
                port: (rng.next() % ports) as usize,
                id: 1000 + i as u32,
                gap: if rng.next().is_multiple_of(4) { 2 } else { 0 },
                frame,
            }
        })
        .collect()
}

/// Swaps the MAC addresses; IPv4 (with room for a TTL at byte 22): decrements the TTL, XDP_TX; IPv6: XDP_PASS;
/// ARP: XDP_DROP; anything else XDP_REDIRECT; a frame shorter than 23 bytes XDP_ABORTED.
const MAC_SWAP: &str = "
r0 = 0
if r2 < 23 goto out
r3 = *(u32 *)(r1 + 0)
r4 = *(u16 *)(r1 + 4)
r5 = *(u32 *)(r1 + 6)
r6 = *(u16 *)(r1 + 10)
*(u32 *)(r1 + 0) = r5
*(u16 *)(r1 + 4) = r6
*(u32 *)(r1 + 6) = r3
*(u16 *)(r1 + 10) = r4
r3 = *(u16 *)(r1 + 12)
r0 = 3
if r3 == 0x0008 goto ipv4
r0 = 2
if r3 == 0xdd86 goto out
r0 = 1
if r3 == 0x0608 goto out
r0 = 4
goto out
ipv4:
r4 = *(u8 *)(r1 + 22)
r4 -= 1
*(u8 *)(r1 + 22) = r4
out:
exit
";

/// Sums every byte of the frame (a loop over the whole frame, so the run waits for its last beat), writes the sum's
/// low byte over the first byte and returns the sum modulo 5 as the verdict.
const SUM: &str = "
r0 = 0
r3 = r1
r4 = r1
r4 += r2
loop:
if r3 >= r4 goto done
r5 = *(u8 *)(r3 + 0)
r0 += r5
r3 += 1
goto loop
done:
*(u8 *)(r1 + 0) = r0
r0 %= 5
exit
";

#[test]
fn xdp_programs_agree_with_the_reference_machine_by_identity() {
    let mut nic = nic();
    nic.set_tx_ready(100, 1).expect("ready");
    for (name, text, seed) in [("mac_swap", MAC_SWAP, 5u64), ("sum", SUM, 6)] {
        let packets = frames(seed, 300, 2);
        let (outputs, cycles) = check(&mut nic, &asm(text), ResultMode::Xdp, &packets);
        let engines: std::collections::BTreeSet<usize> = outputs.iter().map(|o| o.engine).collect();
        assert_eq!(engines.len(), 4, "{name}: every engine ran packets");
        let (late, pairs) = reordering(&outputs, CONFIG);
        println!(
            "{name}: {} packets, {} out, {cycles} cycles; {late} of {pairs} left after a later packet of their port",
            packets.len(),
            outputs.len()
        );
    }
}

#[test]
fn back_pressure_on_the_tx_queues_loses_and_mixes_nothing() {
    let mut nic = nic();
    nic.set_tx_ready(30, 0x1234).expect("ready");
    let packets = frames(11, 200, 2);
    let (outputs, cycles) = check(&mut nic, &asm(MAC_SWAP), ResultMode::Xdp, &packets);
    nic.set_tx_ready(100, 1).expect("ready");
    let (late, pairs) = reordering(&outputs, CONFIG);
    println!("back-pressure 30%: {cycles} cycles, {late} of {pairs} reordered");
}

/// The cases of tests/ebpflow_programs.txt that call no helper (the NIC has no coprocessor yet).
fn helper_free_cases() -> Vec<(String, Vec<u8>, Vec<Insn>)> {
    let mut out = Vec::new();
    for case in PROGRAMS.split("\n== ").skip(1) {
        let mut lines = case.lines();
        let name = lines.next().expect("name").trim().to_string();
        let mut memory = Vec::new();
        let mut text = String::new();
        for line in lines {
            if line.starts_with('#') {
                continue;
            }
            if let Some(m) = line.strip_prefix("mem ") {
                memory = m
                    .split_whitespace()
                    .map(|b| u8::from_str_radix(b, 16).expect("hex"))
                    .collect();
            } else {
                text.push_str(line);
                text.push('\n');
            }
        }
        let insns = asm(&text);
        if !insns.iter().any(|i| i.code == 0x85 || i.code == 0x8d) {
            out.push((name, memory, insns));
        }
    }
    out
}

#[test]
fn conformance_programs_as_action_codes() {
    let cases = helper_free_cases();
    assert!(cases.len() >= 70, "{} helper-free cases", cases.len());
    let mut nic = nic();
    nic.set_tx_ready(100, 1).expect("ready");
    let mut sent = 0;
    for (k, (name, memory, insns)) in cases.iter().enumerate() {
        if memory.len() > hwxdp_rtlsim::ebpflow::MAX_FRAME {
            panic!("{name}: memory too big for the engine");
        }
        let packets: Vec<NicPacket> = (0..4)
            .map(|i| NicPacket {
                port: i % 2,
                id: (k * 4 + i) as u32,
                gap: (i / 2) as u32,
                frame: memory.clone(),
            })
            .collect();
        sent += packets.len();
        check(&mut nic, insns, ResultMode::Actions, &packets);
    }
    println!("{} programs, {sent} packets", cases.len());
}

#[test]
fn a_flood_reaches_every_port_but_the_input_port() {
    let mut nic = nic();
    nic.set_tx_ready(100, 1).expect("ready");
    let insns = asm("r0 = 0xffff\nexit\n");
    let packets: Vec<NicPacket> = (0..8)
        .map(|i| NicPacket {
            port: i % 2,
            id: i as u32,
            gap: 0,
            frame: vec![i as u8; 64],
        })
        .collect();
    let (outputs, _) = check(&mut nic, &insns, ResultMode::Actions, &packets);
    assert_eq!(outputs.len(), 8);
    assert!(outputs.iter().all(|o| o.dest_queue == 0xff));
}

/// bpf_redirect(ifindex, 0) through the coprocessor: the verdict XDP_REDIRECT leaves on the port of that ifindex
/// (port p is ifindex 4 + p), on the host queue for an ifindex that is none of the NIC's; a packet whose program
/// returns XDP_REDIRECT without a target is dropped, even on an engine whose previous packet had one.
#[test]
fn a_redirect_leaves_on_the_port_of_its_ifindex() {
    let mut nic = nic();
    nic.set_tx_ready(100, 1).expect("ready");
    nic.set_ifindex_base(4).expect("ifindex");
    let insns = asm(
        "r0 = 4\nr3 = *(u8 *)(r1 + 1)\nif r3 == 0 goto out\nr1 = *(u8 *)(r1 + 0)\nr2 = 0\ncall 23\nout:\nexit\n",
    );
    let slots = slots_of(&hwxdp_ebpf::encode(&insns)).expect("slots");
    nic.load(&slots).expect("load");
    nic.set_mode(ResultMode::Xdp).expect("mode");
    // (ifindex, call the helper, where it must go)
    let cases = [
        (4u8, 1u8, Some(TxQueue::Port(0))),
        (5, 1, Some(TxQueue::Port(1))),
        (9, 1, Some(TxQueue::Host)),
        (5, 0, None),
        (4, 1, Some(TxQueue::Port(0))),
        (4, 0, None),
        (5, 1, Some(TxQueue::Port(1))),
        (5, 0, None),
    ];
    let packets: Vec<NicPacket> = cases
        .iter()
        .enumerate()
        .map(|(i, &(ifindex, call, _))| NicPacket {
            port: i % 2,
            id: i as u32,
            gap: 0,
            frame: [vec![ifindex, call], vec![0xab; 62]].concat(),
        })
        .collect();
    let run = nic.run(&packets).expect("run");
    for (i, (_, _, want)) in cases.iter().enumerate() {
        let got: Vec<TxQueue> = run
            .outputs
            .iter()
            .filter(|o| o.id == i as u32)
            .map(|o| o.queue)
            .collect();
        assert_eq!(got, want.iter().copied().collect::<Vec<_>>(), "packet {i}");
    }
}

/// 64-byte frames back to back on both ports through a program that returns XDP_TX at once: the cycles a packet
/// takes per port (8 input beats a packet is the port's limit), printed, and bounded so that a lost overlap of one
/// engine's output with the other's input shows.
#[test]
fn small_frames_keep_both_engines_of_a_port_busy() {
    let mut nic = nic();
    nic.set_tx_ready(100, 1).expect("ready");
    let insns = asm("r0 = 3\nexit\n");
    let packets: Vec<NicPacket> = (0..400)
        .map(|i| NicPacket {
            port: i % 2,
            id: i as u32,
            gap: 0,
            frame: vec![(i % 251) as u8; 64],
        })
        .collect();
    let (outputs, cycles) = check(&mut nic, &insns, ResultMode::Xdp, &packets);
    assert_eq!(outputs.len(), 400);
    let per_packet = cycles as f64 / 200.0;
    let (late, pairs) = reordering(&outputs, CONFIG);
    println!(
        "64-byte frames, 2 ports x 2 engines: {cycles} cycles for 200 packets a port, {per_packet:.2} cycles a packet \
         a port ({:.2} Mpps a port at 166.67 MHz); {late} of {pairs} reordered",
        166.67 / per_packet
    );
    assert!(per_packet < 12.0, "{per_packet} cycles a packet");
}

/// The thesis's NIC, 4 ports of 4 engines (its own model): XDP programs by identity, a flood to the three other
/// ports, 64-byte frames on every port.
#[test]
fn the_default_nic_of_4_ports_by_4_engines() {
    let paths = EbpflowPaths::embedded(common::target_dir().join("rtlsim"));
    let mut nic = NicRtl::new(&paths, NicConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(nic.config().queues(), 6);
    let packets = frames(21, 400, 4);
    let (outputs, cycles) = check(&mut nic, &asm(MAC_SWAP), ResultMode::Xdp, &packets);
    let engines: std::collections::BTreeSet<usize> = outputs.iter().map(|o| o.engine).collect();
    assert_eq!(engines.len(), 16, "every engine ran packets: {engines:?}");
    let (late, pairs) = reordering(&outputs, NicConfig::default());
    println!(
        "4 x 4, mac_swap: {} out in {cycles} cycles, {late} of {pairs} reordered",
        outputs.len()
    );
    let flood: Vec<NicPacket> = (0..16)
        .map(|i| NicPacket {
            port: i % 4,
            id: 5000 + i as u32,
            gap: 0,
            frame: vec![i as u8; 64],
        })
        .collect();
    let (outputs, _) = check(
        &mut nic,
        &asm("r0 = 0xffff\nexit\n"),
        ResultMode::Actions,
        &flood,
    );
    assert_eq!(outputs.len(), 48);
    let small: Vec<NicPacket> = (0..800)
        .map(|i| NicPacket {
            port: i % 4,
            id: 10_000 + i as u32,
            gap: 0,
            frame: vec![(i % 253) as u8; 64],
        })
        .collect();
    let (outputs, cycles) = check(&mut nic, &asm("r0 = 3\nexit\n"), ResultMode::Xdp, &small);
    assert_eq!(outputs.len(), 800);
    let per_packet = cycles as f64 / 200.0;
    println!(
        "4 x 4, 64-byte frames: {per_packet:.2} cycles a packet a port ({:.2} Mpps a port at 166.67 MHz)",
        166.67 / per_packet
    );
    assert!(per_packet < 10.0, "{per_packet} cycles a packet");
}
