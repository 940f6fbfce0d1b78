//! The NIC: P ports of G engines, per-port round-robin dispatch to a free engine, one coprocessor behind a
//! round-robin arbiter shared by every engine, and the outputs to the TX queues (one per port) and the host queue.
//!
//! Timing of an engine around its run (`rtl/ebpflow/ebpflow_engine.sv`, two DM_FIFO slots): the run starts in the
//! cycle its packet's first beat is taken (a beat a cycle, 8 bytes each); the DM_FIFO starts the output in the cycle
//! after the run's last cycle, or once the whole frame is in, or in the cycle after the engine's previous packet's
//! last output beat, whichever is latest, and offers the first beat in the cycle after; the crossbar grants a free TX
//! queue in one cycle, then a beat leaves a cycle. The engine takes a new packet's first beat (into its other slot)
//! in the cycle its packet's output starts: the next run overlaps this packet's output. A port's input carries one packet at a time. A TX queue takes
//! one packet's beats at a time, in the order the engines are ready, and grants the next in the cycle after the last
//! beat; dropped packets leave into a sink that is always ready. `tests/rtl_cycles.rs` checks every packet's first
//! input beat and last output beat against the NIC's RTL.

use crate::engine::{Breakdown, Job, Pipeline};
use std::collections::VecDeque;

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
    /// Where its run's cycles went.
    pub breakdown: Breakdown,
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

/// Cycles from a run's end (its `cycles`, counted from its first beat) to the DM_FIFO starting the output.
const TX_AFTER_RUN: u64 = 1;

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
        let mut st = State::new(self.config, self.now, inputs);
        let mut t = self.now;
        while st.remaining > 0 {
            st.dispatch(t);
            st.arbitrate(t);
            st.clock(t);
            t += 1;
        }
        self.now = st.end + 2;
        (st.timed, st.end)
    }
}

/// The NIC during one batch.
struct State {
    ports: usize,
    g: usize,
    queues: Vec<VecDeque<usize>>,
    lens: Vec<usize>,
    dests: Vec<Dest>,
    jobs: Vec<Option<Job>>,
    timed: Vec<Timed>,
    running: Vec<Option<Running>>,
    /// The cycle each engine can take its next packet's first beat.
    free_at: Vec<u64>,
    /// The cycle each engine's last packet's last output beat left.
    last_left: Vec<u64>,
    /// The cycle each port's input can carry the next packet's first beat.
    input_free: Vec<u64>,
    last_dispatched: Vec<usize>,
    /// The cycle each TX queue (the ports', then the host queue) can take the next packet's output.
    tx_free: Vec<u64>,
    coproc_free: u64,
    last_granted: usize,
    remaining: usize,
    end: u64,
}

impl State {
    fn new(config: NicConfig, base: u64, inputs: Vec<Input>) -> State {
        let (ports, g) = (config.ports, config.engines_per_port);
        let engines = ports * g;
        let mut st = State {
            ports,
            g,
            queues: vec![VecDeque::new(); ports],
            lens: Vec::with_capacity(inputs.len()),
            dests: Vec::with_capacity(inputs.len()),
            jobs: Vec::with_capacity(inputs.len()),
            timed: vec![Timed::default(); inputs.len()],
            running: (0..engines).map(|_| None).collect(),
            free_at: vec![base; engines],
            last_left: vec![0; engines],
            input_free: vec![base; ports],
            last_dispatched: vec![g - 1; ports],
            tx_free: vec![base; ports + 1],
            coproc_free: base,
            last_granted: engines - 1,
            remaining: inputs.len(),
            end: base,
        };
        for (k, input) in inputs.into_iter().enumerate() {
            st.queues[input.port % ports].push_back(k);
            st.lens.push(input.len);
            st.dests.push(input.dest);
            st.jobs.push(Some(input.job));
        }
        st
    }

    /// Each port hands its next packet to its next free engine after the last one it used, if its input is free.
    fn dispatch(&mut self, t: u64) {
        let g = self.g;
        for p in 0..self.ports {
            if self.input_free[p] > t || self.queues[p].is_empty() {
                continue;
            }
            let pick = (1..=g)
                .map(|k| (self.last_dispatched[p] + k) % g)
                .find(|&e| self.running[p * g + e].is_none() && self.free_at[p * g + e] <= t);
            if let Some(e) = pick {
                let packet = self.queues[p].pop_front().expect("not empty");
                let job = self.jobs[packet].take().expect("dispatched once");
                self.running[p * g + e] = Some(Running {
                    packet,
                    pipe: Pipeline::new(job),
                    start: t,
                });
                self.input_free[p] = t + beats(self.lens[packet]);
                self.last_dispatched[p] = e;
            }
        }
    }

    /// An engine answers its own `bpf_redirect` in the request's cycle; the coprocessor, when free, grants the
    /// requesting engine that comes first after the last one granted.
    fn arbitrate(&mut self, t: u64) {
        for r in self.running.iter_mut().flatten().filter(|r| r.start < t) {
            if r.pipe.request() == Some(crate::jobs::service::LOCAL) {
                let c = r.pipe.cycle();
                r.pipe.grant(c);
            }
        }
        if self.coproc_free > t {
            return;
        }
        let engines = self.running.len();
        for k in 1..=engines {
            let e = (self.last_granted + k) % engines;
            let Some(r) = self.running[e].as_mut().filter(|r| r.start < t) else {
                continue;
            };
            if let Some(service) = r.pipe.request() {
                let c = r.pipe.cycle();
                r.pipe.grant(c + u64::from(service) - 1);
                self.coproc_free = t + u64::from(service);
                self.last_granted = e;
                return;
            }
        }
    }

    /// Clocks every running engine; an engine whose run ended sends its packet out.
    fn clock(&mut self, t: u64) {
        for e in 0..self.running.len() {
            let Some(r) = self.running[e].as_mut().filter(|r| r.start < t) else {
                continue;
            };
            r.pipe.clock();
            if r.pipe.done().is_some() {
                let r = self.running[e].take().expect("running");
                self.leave(e, r);
            }
        }
    }

    /// The packet of a finished run leaves into its queue; the engine takes the next packet once the output starts.
    fn leave(&mut self, e: usize, r: Running) {
        let cycles = r.pipe.done().expect("done");
        let (packet, start) = (r.packet, r.start);
        let w = beats(self.lens[packet]);
        // The DM_FIFO starts the output once the run has ended, the whole frame is in and the engine's previous
        // packet has left (its slot is the one the next packet takes), reading the first word in that cycle; its
        // first beat is offered in the next; the crossbar grants it a free TX queue in a cycle, then a beat a cycle
        // leaves.
        let tx_start = (start + cycles + TX_AFTER_RUN)
            .max(start + w)
            .max(self.last_left[e] + 1);
        let offered = tx_start + 1;
        let queue = match self.dests[packet] {
            Dest::Drop => None,
            Dest::Port(q) => Some(q % self.ports),
            Dest::Host => Some(self.ports),
        };
        let grant = queue.map_or(offered, |q| offered.max(self.tx_free[q]));
        let left = grant + w;
        if let Some(q) = queue {
            self.tx_free[q] = left + 1;
        }
        self.free_at[e] = tx_start;
        self.last_left[e] = left;
        self.end = self.end.max(left);
        self.timed[packet] = Timed {
            engine: e,
            start,
            cycles,
            left,
            waited_fifo: r.pipe.waited_fifo,
            waited_coproc: r.pipe.waited_coproc,
            breakdown: r.pipe.breakdown,
        };
        self.remaining -= 1;
    }
}
