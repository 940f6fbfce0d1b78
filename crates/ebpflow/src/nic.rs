//! The NIC: P ports of G engines, per-port round-robin dispatch to a free engine, one coprocessor behind a
//! round-robin arbiter shared by every engine, and the outputs to the TX queues (one per port) and the host queue.
//!
//! Timing of an engine around its run (`rtl/ebpflow/ebpflow_engine.sv`): the run starts in the cycle its packet's
//! first beat is taken (a beat a cycle, 8 bytes each); the engine's result is registered a cycle after the run's
//! last cycle and noted a cycle later, when the whole frame is in too the packet leaves, a beat a cycle from the
//! cycle after, and the engine takes a new packet two cycles after its last output beat was taken. A port's input
//! carries one packet at a time. A TX queue takes one packet's beats at a time, in the order the engines are ready;
//! dropped packets leave into a sink that is always ready.

use crate::engine::{Job, Pipeline};

/// The NIC's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicConfig {
    /// Ports (`--ports`).
    pub ports: usize,
    /// Engines per port (`--engines-per-port`).
    pub engines_per_port: usize,
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            ports: 4,
            engines_per_port: 4,
        }
    }
}

/// Where a packet leaves (Table 4.2's actions for the XDP verdicts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dest {
    /// A port's TX queue.
    Port(usize),
    /// The host queue.
    Host,
    /// Dropped.
    Drop,
}

/// A packet for the NIC: its input port, its frame's length, its run and where it leaves.
#[derive(Clone, Debug)]
pub struct Input {
    /// Input port.
    pub port: usize,
    /// Frame bytes.
    pub len: usize,
    /// The run's steps.
    pub job: Job,
    /// The action.
    pub dest: Dest,
}

/// When a packet was where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timed {
    /// The engine (port * G + engine).
    pub engine: usize,
    /// The cycle its first beat was taken.
    pub start: u64,
    /// The run's cycles (first beat to the end, both counted).
    pub cycles: u64,
    /// The cycle its last output beat left.
    pub left: u64,
    /// Cycles its run waited for the DM_FIFO and for the coprocessor.
    pub waited_fifo: u64,
    /// Cycles its run waited for (and in) the coprocessor.
    pub waited_coproc: u64,
}

struct Running {
    packet: usize,
    pipe: Pipeline,
    start: u64,
}

/// The cycle model of the NIC.
pub struct Nic {
    config: NicConfig,
    /// The cycle the next batch starts at.
    now: u64,
}

fn beats(len: usize) -> u64 {
    (len as u64).div_ceil(8).max(1)
}

impl Nic {
    /// A NIC of `config`'s shape, idle at cycle 0.
    pub fn new(config: NicConfig) -> Nic {
        Nic { config, now: 0 }
    }

    /// Its shape.
    pub fn config(&self) -> NicConfig {
        self.config
    }

    /// Runs `inputs`, each port's in their order, all offered at once (every port's input saturated), from an
    /// idle NIC; returns each packet's timing and the cycle the last one left.
    pub fn run(&mut self, inputs: Vec<Input>) -> (Vec<Timed>, u64) {
        let (ports, g) = (self.config.ports, self.config.engines_per_port);
        let engines = ports * g;
        let base = self.now;
        let mut queues: Vec<std::collections::VecDeque<usize>> = vec![Default::default(); ports];
        let mut lens = Vec::with_capacity(inputs.len());
        let mut dests = Vec::with_capacity(inputs.len());
        let mut jobs = Vec::with_capacity(inputs.len());
        for (k, input) in inputs.into_iter().enumerate() {
            queues[input.port % ports].push_back(k);
            lens.push(input.len);
            dests.push(input.dest);
            jobs.push(Some(input.job));
        }
        let mut timed = vec![Timed::default(); jobs.len()];
        let mut running: Vec<Option<Running>> = (0..engines).map(|_| None).collect();
        let mut free_at = vec![base; engines];
        let mut input_free = vec![base; ports];
        let mut last_dispatched = vec![g - 1; ports];
        let mut tx_free = vec![base; ports + 1];
        let (mut coproc_free, mut last_granted) = (base, engines - 1);
        let mut remaining = jobs.len();
        let mut t = base;
        let mut end = base;
        while remaining > 0 {
            for p in 0..ports {
                if input_free[p] > t || queues[p].is_empty() {
                    continue;
                }
                let pick = (1..=g)
                    .map(|k| (last_dispatched[p] + k) % g)
                    .find(|&e| running[p * g + e].is_none() && free_at[p * g + e] <= t);
                if let Some(e) = pick {
                    let packet = queues[p].pop_front().expect("not empty");
                    let job = jobs[packet].take().expect("dispatched once");
                    running[p * g + e] = Some(Running {
                        packet,
                        pipe: Pipeline::new(job),
                        start: t,
                    });
                    input_free[p] = t + beats(lens[packet]);
                    last_dispatched[p] = e;
                }
            }
            if coproc_free <= t {
                for k in 1..=engines {
                    let e = (last_granted + k) % engines;
                    let Some(r) = running[e].as_mut() else {
                        continue;
                    };
                    if r.start >= t {
                        continue;
                    }
                    if let Some(service) = r.pipe.request() {
                        let c = r.pipe.cycle();
                        r.pipe.grant(c + u64::from(service) - 1);
                        coproc_free = t + u64::from(service);
                        last_granted = e;
                        break;
                    }
                }
            }
            for e in 0..engines {
                let Some(r) = running[e].as_mut() else {
                    continue;
                };
                if r.start >= t {
                    continue;
                }
                r.pipe.clock();
                let Some(cycles) = r.pipe.done() else {
                    continue;
                };
                let (packet, start) = (r.packet, r.start);
                let (fifo, coproc) = (r.pipe.waited_fifo, r.pipe.waited_coproc);
                running[e] = None;
                let w = beats(lens[packet]);
                let ready = (start + cycles + 2).max(start + w);
                let tx_start = match dests[packet] {
                    Dest::Drop => ready,
                    Dest::Port(q) => ready.max(tx_free[q % ports]),
                    Dest::Host => ready.max(tx_free[ports]),
                };
                match dests[packet] {
                    Dest::Drop => {}
                    Dest::Port(q) => tx_free[q % ports] = tx_start + w,
                    Dest::Host => tx_free[ports] = tx_start + w,
                }
                let left = tx_start + w + 1;
                free_at[e] = left + 1;
                end = end.max(left);
                timed[packet] = Timed {
                    engine: e,
                    start,
                    cycles,
                    left,
                    waited_fifo: fifo,
                    waited_coproc: coproc,
                };
                remaining -= 1;
            }
            t += 1;
        }
        self.now = end + 2;
        (timed, end)
    }
}
