//! `ebpflow`: the eBPFlow NIC's cycle model (`hwxdp_ebpflow`). The loader's image runs on P ports of G engines
//! each; what every packet does (verdict, bytes, maps, records) is the reference machine's, when it does it and
//! where it leaves is the model's. The whole trace is one batch: the ports' inputs are saturated, packets of a port
//! are dispatched round robin to its free engines, and packets of one flow may leave out of order.
//!
//! `--swap-at N:other.o` swaps the program under traffic: the packets the NIC is handed from the N-th on run the
//! other object's program (written into the instruction memory's idle bank; a packet in flight finishes on the old
//! one). Each object and program keeps its own maps across swaps; [`Backend::maps`] are those of the program that
//! runs last.

use crate::interp::{empty_buff, load};
use crate::registry::Entry;
use crate::{Backend, BackendError, Capabilities, Packet, Ran, Record, Redirect, Setup, Summary};
use hwxdp_ebpflow::engine::Job;
use hwxdp_ebpflow::jobs::{job, Where};
use hwxdp_ebpflow::nic::{Dest, Input, Nic, NicConfig, Timed};
use hwxdp_ebpflow::Image;
use hwxdp_maps::MapStore;
use hwxdp_object::ObjectSpec;
use hwxdp_xdp::{Config, Machine, XdpBuff};
use std::sync::Arc;

/// The registry's line.
pub const ENTRY: Entry = Entry {
    name: "ebpflow",
    about: "the eBPFlow NIC's cycle model: P ports of G 5-stage eBPF engines, a shared coprocessor, TX queues",
    options: &["--ports", "--engines-per-port", "--swap-at"],
    needs_kernel: false,
    whole_trace: true,
    create,
};

/// A program swap under traffic (`--swap-at N:other.o`).
#[derive(Clone, Debug, PartialEq)]
pub struct Swap {
    /// The first packet (counted from 0 in the order the NIC is handed them) that runs the new program.
    pub at: u64,
    /// The new program's object, and its path: swaps to the same object and program (the object of the run
    /// included) share one reference machine and its maps, as the coprocessor's maps outlive a swap.
    pub spec: Arc<ObjectSpec>,
    /// The object's path.
    pub object: std::path::PathBuf,
    /// The new program, by function name.
    pub program: String,
}

/// The eBPFlow NIC's options.
#[derive(Clone, Debug, PartialEq)]
pub struct NicOptions {
    /// Ports.
    pub ports: usize,
    /// Engines per port.
    pub engines_per_port: usize,
    /// The ifindex of port 0; port `p` is `first_ifindex + p`.
    pub first_ifindex: u32,
    /// Program swaps, by increasing [`Swap::at`].
    pub swaps: Vec<Swap>,
}

impl Default for NicOptions {
    fn default() -> Self {
        NicOptions {
            ports: 4,
            engines_per_port: 4,
            first_ifindex: 1,
            swaps: Vec::new(),
        }
    }
}

/// A program the NIC runs: its image and the reference machine for its results.
struct Version {
    object: std::path::PathBuf,
    program: String,
    image: Image,
    machine: Machine,
    spec: Arc<ObjectSpec>,
}

fn version(
    object: &std::path::Path,
    spec: Arc<ObjectSpec>,
    program: &str,
    config: &Config,
) -> Result<Version, BackendError> {
    let image =
        hwxdp_ebpflow::load(&spec, program).map_err(|e| BackendError::setup(ENTRY.name, e))?;
    let config = Config {
        record_trace: true,
        ..config.clone()
    };
    let machine = Machine::new(&spec, Some(program), &config)
        .map_err(|e| BackendError::setup(ENTRY.name, e))?;
    Ok(Version {
        object: object.to_path_buf(),
        program: program.to_string(),
        image,
        machine,
        spec,
    })
}

fn create(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let o = &setup.options.ebpflow;
    if !(1..=PORT_KEYS.len()).contains(&o.ports) || o.engines_per_port == 0 {
        return Err(BackendError::setup(
            ENTRY.name,
            format!(
                "--ports must be 1 to {} and --engines-per-port at least 1 (given {} and {})",
                PORT_KEYS.len(),
                o.ports,
                o.engines_per_port
            ),
        ));
    }
    let mut versions = vec![version(
        setup.object,
        Arc::new(setup.spec.clone()),
        setup.program,
        setup.config,
    )?];
    let mut schedule = vec![(0, 0)];
    for s in &o.swaps {
        let known = versions
            .iter()
            .position(|v| v.object == s.object && v.program == s.program);
        let v = match known {
            Some(v) => v,
            None => {
                versions.push(version(
                    &s.object,
                    s.spec.clone(),
                    &s.program,
                    setup.config,
                )?);
                versions.len() - 1
            }
        };
        schedule.push((s.at, v));
    }
    Ok(Box::new(Ebpflow {
        versions,
        schedule,
        nic: Nic::new(NicConfig {
            ports: o.ports,
            engines_per_port: o.engines_per_port,
        }),
        first_ifindex: o.first_ifindex,
        record_trace: setup.config.record_trace,
        rings: crate::Rings::of(setup),
        buff: empty_buff(),
        handed: 0,
        stats: Stats::new(o.ports),
    }))
}

/// Figures over everything run.
struct Stats {
    packets: Vec<u64>,
    cycles: u64,
    run_cycles: u64,
    reordered: u64,
    fifo: u64,
    coproc: u64,
    per_version: Vec<u64>,
}

impl Stats {
    fn new(ports: usize) -> Stats {
        Stats {
            packets: vec![0; ports],
            cycles: 0,
            run_cycles: 0,
            reordered: 0,
            fifo: 0,
            coproc: 0,
            per_version: Vec::new(),
        }
    }
}

/// The most ports a NIC has ([`PORT_KEYS`]).
pub(crate) const MAX_PORTS: usize = PORT_KEYS.len();

/// Keys of the per-port figures (packets per cycle of port p).
pub(crate) const PORT_KEYS: [(&str, &str); 16] = [
    ("port0_packets_per_cycle", "port 0 packets per cycle"),
    ("port1_packets_per_cycle", "port 1 packets per cycle"),
    ("port2_packets_per_cycle", "port 2 packets per cycle"),
    ("port3_packets_per_cycle", "port 3 packets per cycle"),
    ("port4_packets_per_cycle", "port 4 packets per cycle"),
    ("port5_packets_per_cycle", "port 5 packets per cycle"),
    ("port6_packets_per_cycle", "port 6 packets per cycle"),
    ("port7_packets_per_cycle", "port 7 packets per cycle"),
    ("port8_packets_per_cycle", "port 8 packets per cycle"),
    ("port9_packets_per_cycle", "port 9 packets per cycle"),
    ("port10_packets_per_cycle", "port 10 packets per cycle"),
    ("port11_packets_per_cycle", "port 11 packets per cycle"),
    ("port12_packets_per_cycle", "port 12 packets per cycle"),
    ("port13_packets_per_cycle", "port 13 packets per cycle"),
    ("port14_packets_per_cycle", "port 14 packets per cycle"),
    ("port15_packets_per_cycle", "port 15 packets per cycle"),
];

struct Ebpflow {
    versions: Vec<Version>,
    /// From which packet on each version runs, by increasing packet.
    schedule: Vec<(u64, usize)>,
    nic: Nic,
    first_ifindex: u32,
    record_trace: bool,
    rings: crate::Rings,
    buff: XdpBuff,
    /// Packets handed to the NIC so far.
    handed: u64,
    stats: Stats,
}

/// `BPF_MAP_TYPE_DEVMAP`, `BPF_MAP_TYPE_DEVMAP_HASH`.
const DEVMAPS: [u32; 2] = [14, 25];

impl Ebpflow {
    fn version_of(&self, k: u64) -> usize {
        self.schedule
            .iter()
            .rev()
            .find(|(from, _)| *from <= k)
            .map_or(0, |&(_, v)| v)
    }

    fn port_of(&self, packet: &Packet) -> Result<usize, BackendError> {
        let ports = self.nic.config().ports;
        let p = packet.md.ingress_ifindex.wrapping_sub(self.first_ifindex) as usize;
        if p < ports {
            return Ok(p);
        }
        Err(BackendError::run(
            ENTRY.name,
            format!(
                "a packet arrives on ifindex {}, the NIC's {ports} ports are ifindex {} to {}",
                packet.md.ingress_ifindex,
                self.first_ifindex,
                self.first_ifindex + ports as u32 - 1
            ),
        ))
    }

    /// Table 4.2's action for a packet's result.
    fn dest(&mut self, v: usize, ran: &Ran, port: usize) -> Dest {
        let ports = self.nic.config().ports;
        let to_port = |ifindex: u64, first: u32| {
            let p = ifindex.wrapping_sub(u64::from(first)) as usize;
            if p < ports {
                Dest::Port(p)
            } else {
                Dest::Host
            }
        };
        if ran.fault.is_some() {
            return Dest::Drop;
        }
        match ran.retval {
            2 => Dest::Host,
            3 => Dest::Port(port),
            4 => match ran.redirect {
                Some(Redirect { map: None, key }) => to_port(key, self.first_ifindex),
                Some(Redirect { map: Some(m), key }) => {
                    let version = &mut self.versions[v];
                    let spec = &version.spec.maps[m];
                    if !DEVMAPS.contains(&spec.map_type) {
                        return Dest::Host;
                    }
                    let key = key.to_le_bytes();
                    let key = &key[..(spec.key_size as usize).min(8)];
                    match version.machine.maps_mut().lookup(m, key) {
                        Ok(Some(value)) if value.len() >= 4 => {
                            let ifindex =
                                u32::from_le_bytes([value[0], value[1], value[2], value[3]]);
                            to_port(u64::from(ifindex), self.first_ifindex)
                        }
                        _ => Dest::Drop,
                    }
                }
                None => Dest::Drop,
            },
            _ => Dest::Drop,
        }
    }

    /// Runs one packet on the reference machine of its program: the result and the engine's steps.
    fn reference(&mut self, v: usize, packet: &Packet) -> Result<(Ran, Job), BackendError> {
        let version = &mut self.versions[v];
        load(ENTRY.name, &mut self.buff, packet)?;
        let data0 = self.buff.offsets().1 as u64;
        version.machine.set_time(packet.time_ns);
        let mut o = version.machine.run_packet(&mut self.buff, &packet.md);
        let image = &version.image;
        let slot_of = |p: u16, s: u32| image.slot_of(usize::from(p), s);
        let at = Where {
            slots: &image.slots,
            prologue: 0..image.prologue,
            slot_of: &slot_of,
        };
        let shape = hwxdp_ebpflow::jobs::Shape::of(&image.maps);
        let steps = job(&o, data0, &at, 0, shape).map_err(|e| BackendError::run(ENTRY.name, e))?;
        let trace = if self.record_trace {
            std::mem::take(&mut o.trace)
        } else {
            Vec::new()
        };
        let ran = Ran {
            retval: o.retval,
            output: self.buff.output().to_vec(),
            meta_len: self.buff.meta().len(),
            redirect: o.redirect.map(|(map, key)| Redirect { map, key }),
            records: crate::interp::drain(version.machine.maps_mut(), self.rings.per_packet()),
            fault: o.fault.map(|f| f.to_string()),
            insns: Some(o.insns),
            path: Some(o.path),
            cycles: None,
            exit: o.exit.map(|(program, slot)| crate::Site { program, slot }),
            printk: o.printk,
            trace,
        };
        Ok((ran, steps))
    }

    fn account(&mut self, timed: &[Timed], ports: &[usize], dests: &[Dest], end: u64) {
        let start = timed.iter().map(|t| t.start).min().unwrap_or(end);
        self.stats.cycles += end.saturating_sub(start);
        for (k, t) in timed.iter().enumerate() {
            self.stats.packets[ports[k]] += 1;
            self.stats.run_cycles += t.cycles;
            self.stats.fifo += t.waited_fifo;
            self.stats.coproc += t.waited_coproc;
        }
        // A packet is reordered when it leaves its TX queue (or the host queue) before an earlier packet of its
        // input port that went to the same queue.
        let mut latest: std::collections::HashMap<(usize, Dest), u64> = Default::default();
        for (k, t) in timed.iter().enumerate() {
            if dests[k] == Dest::Drop {
                continue;
            }
            let last = latest.entry((ports[k], dests[k])).or_insert(0);
            if t.left < *last {
                self.stats.reordered += 1;
            } else {
                *last = t.left;
            }
        }
    }
}

impl Backend for Ebpflow {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            instructions: true,
            insn_trace: true,
            cycles: true,
            whole_trace: true,
            records_per_packet: self.rings.live(),
            redirects: true,
            ..Capabilities::default()
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let mut out = Vec::with_capacity(packets.len());
        let mut inputs = Vec::with_capacity(packets.len());
        let (mut ports, mut dests) = (Vec::new(), Vec::new());
        for packet in packets {
            let v = self.version_of(self.handed);
            self.handed += 1;
            if self.stats.per_version.len() <= v {
                self.stats.per_version.resize(v + 1, 0);
            }
            self.stats.per_version[v] += 1;
            let port = self.port_of(packet)?;
            let (ran, job) = self.reference(v, packet)?;
            let dest = self.dest(v, &ran, port);
            inputs.push(Input {
                port,
                len: packet.bytes.len(),
                job,
                dest,
            });
            ports.push(port);
            dests.push(dest);
            out.push(ran);
        }
        let (timed, end) = self.nic.run(inputs);
        for (ran, t) in out.iter_mut().zip(&timed) {
            ran.cycles = Some(t.cycles);
        }
        self.account(&timed, &ports, &dests, end);
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        let last = self.schedule.last().map_or(0, |&(_, v)| v);
        self.versions[last].machine.maps_mut()
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        let mut records = Vec::new();
        for v in &mut self.versions {
            records.extend(crate::interp::drain(v.machine.maps_mut(), self.rings.all()));
        }
        Ok(records)
    }

    fn summary(&self) -> Summary {
        let c = self.nic.config();
        let s = &self.stats;
        let total = s.packets.iter().sum::<u64>().max(1) as f64;
        let run = NicRun {
            ports: c.ports,
            engines_per_port: c.engines_per_port,
            image_slots: self.versions[0].image.slots.len(),
            cycles: s.cycles,
            reordered: s.reordered,
            packets: &s.packets,
            swaps: (self.schedule.len() > 1).then(|| (self.schedule.len() - 1) as u64),
        };
        nic_summary(
            &run,
            &[
                (
                    "fifo_wait",
                    "mean cycles waiting for the DM_FIFO",
                    s.fifo as f64 / total,
                ),
                (
                    "coproc_wait",
                    "mean cycles at the coprocessor",
                    s.coproc as f64 / total,
                ),
            ],
        )
    }
}

/// What a run on the NIC comes to, as both eBPFlow backends (the cycle model and the RTL) report it.
pub(crate) struct NicRun<'a> {
    /// Ports of the NIC.
    pub(crate) ports: usize,
    /// Engines per port.
    pub(crate) engines_per_port: usize,
    /// Instruction-memory slots of the first program's image.
    pub(crate) image_slots: usize,
    /// NIC cycles the trace took.
    pub(crate) cycles: u64,
    /// Packets that left their queue before an earlier packet of their port.
    pub(crate) reordered: u64,
    /// Packets per input port.
    pub(crate) packets: &'a [u64],
    /// Program swaps, when the run had any.
    pub(crate) swaps: Option<u64>,
}

/// The summary of `run`: the NIC's shape, its cycles and reordering, then `waits` (key, label, value), each port's
/// packets per cycle, the swaps when there were any, and the NIC's packets per cycle.
pub(crate) fn nic_summary(run: &NicRun, waits: &[(&'static str, &'static str, f64)]) -> Summary {
    let span = run.cycles.max(1) as f64;
    let mut summary = Summary::default()
        .with("ports", "ports", run.ports as f64)
        .with(
            "engines_per_port",
            "engines per port",
            run.engines_per_port as f64,
        )
        .with(
            "image_slots",
            "instruction-memory slots",
            run.image_slots as f64,
        )
        .with("nic_cycles", "NIC cycles", run.cycles as f64)
        .with("reordered", "packets reordered", run.reordered as f64);
    for &(key, label, value) in waits {
        summary = summary.with(key, label, value);
    }
    for (p, &n) in run.packets.iter().enumerate() {
        summary = summary.with(PORT_KEYS[p].0, PORT_KEYS[p].1, n as f64 / span);
    }
    if let Some(swaps) = run.swaps {
        summary = summary.with("swaps", "program swaps", swaps as f64);
    }
    let total: u64 = run.packets.iter().sum();
    summary.packets_per_cycle = Some(total as f64 / span);
    summary
}
