//! The reference machine: one object's programs, their maps, and the sources of time and randomness.

use crate::exec::Vm;
use crate::fault::{Fault, LoadError};
use crate::fib::RouteTable;
use crate::prepare::{prepare, Program};
use crate::{Verdict, XdpBuff, XdpMd};
use hwxdp_maps::{MapStore, Maps};
use hwxdp_object::ObjectSpec;

/// Instructions one packet may execute before it is stopped. The kernel's verifier explores at most a million
/// instructions and rejects unbounded loops, so a verified program never comes near this; the budget exists for
/// programs the kernel would never load.
pub const DEFAULT_BUDGET: u64 = 1 << 22;

/// Where `bpf_ktime_get_ns` reads time from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The time given with each packet ([`Machine::set_time`]) plus one nanosecond per executed instruction: runs
    /// repeat exactly.
    Virtual,
    /// The host's `CLOCK_MONOTONIC`, which is what the kernel's `bpf_ktime_get_ns` reads: for comparing with the kernel.
    Monotonic,
}

/// Which kernel environment programs see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Environment {
    /// An XDP program: the context is `struct xdp_md`, helpers are the kernel's.
    Xdp,
    /// The public BPF conformance suite's machine: r1 and r2 hold a memory block and its length, the only helper is
    /// 5 ("unwind": returns its argument and ends the program when that is 0), and `callx` calls the helper whose id
    /// is in a register.
    Conformance,
}

/// How the machine runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Number of possible CPUs per-CPU maps hold values for.
    pub possible_cpus: usize,
    /// The CPU the program runs on (`bpf_get_smp_processor_id`).
    pub cpu: usize,
    /// Source of `bpf_ktime_get_ns`.
    pub clock: Clock,
    /// Seed of `bpf_get_prandom_u32`.
    pub seed: u64,
    /// Instruction budget per packet.
    pub budget: u64,
    /// Record the slot index of every executed instruction.
    pub record_trace: bool,
    /// What `bpf_fib_lookup` consults.
    pub routes: RouteTable,
    /// The environment programs run in.
    pub environment: Environment,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            possible_cpus: 1,
            cpu: 0,
            clock: Clock::Virtual,
            seed: 0x5eed,
            budget: DEFAULT_BUDGET,
            record_trace: false,
            routes: RouteTable::default(),
            environment: Environment::Xdp,
        }
    }
}

/// What happened to one packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The program's return value (0 on a fault).
    pub retval: u32,
    /// Instructions executed, over all programs reached through tail calls.
    pub insns: u64,
    /// A hash of the path taken (every branch decision and every program entered): equal paths, equal hashes.
    pub path: u64,
    /// Why the program was stopped, if it was.
    pub fault: Option<Box<Fault>>,
    /// Where `bpf_redirect`/`bpf_redirect_map` sent the packet: (map index or `None` for `bpf_redirect`, key).
    pub redirect: Option<(Option<usize>, u64)>,
    /// Lines written with `bpf_trace_printk`.
    pub printk: Vec<String>,
    /// Slot indices of executed instructions, as (program index, slot), when [`Config::record_trace`] is set.
    pub trace: Vec<(u16, u32)>,
    /// Beside each entry of [`Outcome::trace`], the value a timing model needs that the slot alone does not give:
    /// the tagged address of a load, store or atomic, the offset register's value of a legacy `LD IND`, the divisor of
    /// a divide or modulo by register, 0 for everything else.
    pub operands: Vec<u64>,
    /// The `exit` the program left by, as (program index, slot), when it was not stopped.
    pub exit: Option<(usize, u32)>,
}

impl Outcome {
    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        Verdict::from_retval(self.retval)
    }
}

/// Per-run state that is not the program's: time, randomness, CPU.
#[derive(Clone, Debug)]
pub(crate) struct Env {
    pub clock: Clock,
    pub packet_time: u64,
    pub rng: u64,
    pub cpu: u32,
    pub budget: u64,
    pub record_trace: bool,
    pub routes: RouteTable,
    pub environment: Environment,
    /// Whether whoever runs the machine reads its perf event arrays ([`Machine::read_perf_samples`]).
    pub perf_consumer: bool,
}

/// The reference machine for one program of an object.
pub struct Machine {
    pub(crate) programs: Vec<Result<Program, LoadError>>,
    pub(crate) entry: usize,
    pub(crate) maps: Maps,
    pub(crate) env: Env,
    pub(crate) stack: Vec<u8>,
    pub(crate) scratch: [Vec<u8>; 2],
}

/// Which instructions and branch directions of one program the packets so far have exercised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Program name.
    pub program: String,
    /// Instructions executed at least once.
    pub executed: usize,
    /// Instructions in the program (an `lddw` counts once).
    pub total: usize,
    /// Conditional jumps seen going both ways.
    pub branches_both_ways: usize,
    /// Conditional jumps in the program.
    pub branches: usize,
    /// Slot indices of instructions never executed.
    pub never_executed: Vec<u32>,
    /// Slot indices of conditional jumps that only ever went one way, with the way they went (true: taken).
    pub one_way: Vec<(u32, bool)>,
}

impl Machine {
    /// Prepares program `program` (function or section name; `None` when the object has just one) of `spec`, with
    /// fresh maps holding the globals' initial values.
    pub fn new(
        spec: &ObjectSpec,
        program: Option<&str>,
        config: &Config,
    ) -> Result<Machine, LoadError> {
        let available = || {
            spec.programs
                .iter()
                .map(|p| format!("{} in {}", p.name, p.section))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let entry = match program {
            Some(wanted) => spec
                .programs
                .iter()
                .position(|p| p.name == wanted)
                .or_else(|| spec.programs.iter().position(|p| p.section == wanted))
                .ok_or_else(|| LoadError::NoSuchProgram {
                    wanted: wanted.to_string(),
                    available: available(),
                })?,
            None => {
                let xdp: Vec<usize> = (0..spec.programs.len())
                    .filter(|&i| spec.programs[i].section.starts_with("xdp"))
                    .collect();
                match (spec.programs.len(), xdp.as_slice()) {
                    (1, _) => 0,
                    (_, [only]) => *only,
                    (0, _) => {
                        return Err(LoadError::NoSuchProgram {
                            wanted: "any".into(),
                            available: "none".into(),
                        })
                    }
                    _ => {
                        return Err(LoadError::Ambiguous {
                            available: available(),
                        })
                    }
                }
            }
        };
        let programs: Vec<_> = spec
            .programs
            .iter()
            .map(|p| prepare(p, &spec.maps, config.environment))
            .collect();
        if let Err(e) = &programs[entry] {
            return Err(e.clone());
        }
        let mut maps = Maps::new(&spec.maps, config.possible_cpus)?;
        maps.set_cpu(config.cpu);
        for (i, m) in spec.maps.iter().enumerate() {
            if let Some(init) = &m.initial_value {
                maps.update(i, &0u32.to_le_bytes(), init, 0)?;
            }
        }
        Ok(Machine {
            programs,
            entry,
            maps,
            env: Env {
                clock: config.clock,
                packet_time: 0,
                rng: config.seed | 1,
                cpu: config.cpu as u32,
                budget: config.budget,
                record_trace: config.record_trace,
                routes: config.routes.clone(),
                environment: config.environment,
                perf_consumer: false,
            },
            stack: vec![0; crate::exec::STACK_BYTES],
            scratch: [Vec::new(), Vec::new()],
        })
    }

    /// The program that runs first.
    pub fn entry(&self) -> &Program {
        match &self.programs[self.entry] {
            Ok(p) => p,
            Err(_) => unreachable!("Machine::new refuses an entry program that does not prepare"),
        }
    }

    /// Coverage of the entry program and of every program reached by tail calls, over all packets run so far.
    pub fn coverage(&self) -> Vec<Coverage> {
        use crate::exec::{EXECUTED, NOT_TAKEN, TAKEN};
        let mut out = Vec::new();
        for (i, program) in self.programs.iter().enumerate() {
            let Ok(program) = program else {
                continue;
            };
            let flags: Vec<u8> = program.ops.iter().map(|op| op.hit.get()).collect();
            if i != self.entry && flags.iter().all(|&f| f == 0) {
                continue;
            }
            let is_cond = |k: usize| {
                let op = &program.ops[k];
                matches!(op.code & 7, 5 | 6) && !matches!(op.code & 0xf0, 0x00 | 0x80 | 0x90)
            };
            let branches: Vec<usize> = (0..flags.len()).filter(|&k| is_cond(k)).collect();
            out.push(Coverage {
                program: program.name.clone(),
                executed: flags.iter().filter(|&&f| f & EXECUTED != 0).count(),
                total: flags.len(),
                branches_both_ways: branches
                    .iter()
                    .filter(|&&k| flags[k] & (TAKEN | NOT_TAKEN) == TAKEN | NOT_TAKEN)
                    .count(),
                branches: branches.len(),
                never_executed: (0..flags.len())
                    .filter(|&k| flags[k] & EXECUTED == 0)
                    .map(|k| program.slots[k])
                    .collect(),
                one_way: branches
                    .iter()
                    .filter(|&&k| {
                        flags[k] & EXECUTED != 0
                            && flags[k] & (TAKEN | NOT_TAKEN) != TAKEN | NOT_TAKEN
                    })
                    .map(|&k| (program.slots[k], flags[k] & TAKEN != 0))
                    .collect(),
            });
        }
        out
    }

    /// Sets the time of the next packet's arrival, in nanoseconds, for [`Clock::Virtual`].
    pub fn set_time(&mut self, ns: u64) {
        self.env.packet_time = ns;
    }

    /// Says that the caller reads the samples `bpf_perf_event_output` writes ([`Maps::perf_drain`] after packets).
    /// Until then the helper stops the program with a fault naming it, so that a backend that never reads perf event
    /// arrays cannot lose every sample in silence.
    pub fn read_perf_samples(&mut self) {
        self.env.perf_consumer = true;
    }

    /// The maps, with the data-path operations too.
    pub fn maps_mut(&mut self) -> &mut Maps {
        &mut self.maps
    }

    /// Runs the program on a block of memory, as the conformance suite does: r1 points to the memory (NULL when it is
    /// empty) and r2 holds its length. Returns the outcome and the full 64-bit r0.
    pub fn run_memory(&mut self, buff: &mut XdpBuff) -> (Outcome, u64) {
        let (_, data, end) = buff.offsets();
        let r1 = if end > data {
            crate::region::packet(data)
        } else {
            0
        };
        let vm = Vm::new(self, buff, &XdpMd::default());
        vm.run_with(r1, (end - data) as u64)
    }

    /// Runs one packet through the program. Faults end it with `XDP_ABORTED` and are reported in the outcome; the
    /// packet buffer holds the packet as the program left it.
    pub fn run_packet(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Outcome {
        let vm = Vm::new(self, buff, md);
        let (mut outcome, _) = vm.run_with(crate::region::context(), 0);
        if outcome.fault.is_some() {
            outcome.retval = 0;
        }
        outcome
    }
}
