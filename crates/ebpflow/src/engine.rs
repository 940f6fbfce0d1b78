//! One engine's pipeline, cycle by cycle, as `rtl/ebpflow/ebpflow_core.sv` clocks it: IF/ID/EX/MEM/WB with
//! forwarding, the load-use stall, taken branches squashing the slot in ID, lddw's extra ID cycle, the
//! multiply/divide unit, the cycle EX waits behind a data-memory atomic in MEM, calls and exits from a function that
//! wait in ID for the drain, helper calls and the main exit that wait for EX to empty, a map helper's key and value gather between the drain and its request, DM_FIFO words that have
//! not arrived, and the shared coprocessor's requests (helper calls and map-value accesses), which the NIC's arbiter
//! grants ([`crate::nic`]).
//!
//! The instructions a packet executes, and their addresses, come from the reference machine's run of the packet
//! ([`Job`]); this module only times them.

use crate::decode::{Decoded, Kind};

/// What an executed instruction's memory access or call needs from outside the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Nothing: ALU, the header, the stack.
    None,
    /// A frame access whose last byte lies in frame word `word` (beat `word` of the packet).
    Frame {
        /// The beat.
        word: u32,
    },
    /// A coprocessor request (a helper call, a map-value access) served in `service` cycles.
    Coproc {
        /// Grant cycle to ack cycle, both counted.
        service: u32,
        /// Words a helper call reads from the data memory, a word a cycle once it may act, before it raises the
        /// request (a map helper's key, and an update's value): the request follows `gather` cycles later than
        /// it would without them (in the cycle the last word is read back). 0 for other helpers and for map-value
        /// accesses.
        gather: u32,
    },
}

/// One executed instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Its decode.
    pub decoded: Decoded,
    /// What it waits for.
    pub wait: Wait,
    /// A conditional jump that was taken.
    pub taken: bool,
    /// Cycles on the multiply/divide unit (for [`Kind::MulDiv`]).
    pub md_cycles: u32,
}

/// How a packet's run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// At the final step, an `exit` of the main program.
    Exit,
    /// At the final step, where it stands: in EX for an instruction of the pipeline (a fault, a legacy load out of
    /// the frame), in ID for a call too deep, at the coprocessor's answer for a helper call that ends the run.
    Stop,
}

/// The instructions one packet executes on an engine, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The steps.
    pub steps: Vec<Step>,
    /// How the last one ends the run.
    pub end: End,
    /// Idle cycles between two input beats (0 in the NIC: a beat a cycle).
    pub gap: u32,
}

/// Where a run's cycles went: each cycle of the run (first beat to the end, both counted) in one category, by what
/// held the pipeline in that cycle (EX's stall first, then ID's helper or frame operation, then ID's own hazards).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// An instruction (or lddw's second slot) moved on, or the pipeline ran without a stall.
    pub issue: u64,
    /// ID waited a cycle behind a load in EX (load-use).
    pub load_use: u64,
    /// The slot squashed behind a taken branch.
    pub branch: u64,
    /// lddw's first slot's extra ID cycle.
    pub lddw: u64,
    /// A call, exit or helper call waited in ID for the pipeline (EX, or EX, MEM and WB) to empty.
    pub drain: u64,
    /// A map helper read its key and value from the data memory.
    pub gather: u64,
    /// A request waited for the coprocessor's grant.
    pub coproc_wait: u64,
    /// A request was served (grant to ack).
    pub coproc_service: u64,
    /// EX waited for a frame word to arrive.
    pub fifo: u64,
    /// EX waited for the multiply/divide unit, or behind an atomic's write in MEM, or a return read its frame.
    pub other: u64,
}

impl Breakdown {
    /// The sum of every category: the run's cycles.
    pub fn total(&self) -> u64 {
        self.issue
            + self.load_use
            + self.branch
            + self.lddw
            + self.drain
            + self.gather
            + self.coproc_wait
            + self.coproc_service
            + self.fifo
            + self.other
    }

    /// Adds `other`'s cycles to these.
    pub fn add(&mut self, other: &Breakdown) {
        self.issue += other.issue;
        self.load_use += other.load_use;
        self.branch += other.branch;
        self.lddw += other.lddw;
        self.drain += other.drain;
        self.gather += other.gather;
        self.coproc_wait += other.coproc_wait;
        self.coproc_service += other.coproc_service;
        self.fifo += other.fifo;
        self.other += other.other;
    }
}

#[derive(Clone, Copy, Debug)]
enum Id {
    /// Step `i` (its lddw second half when `second`); past the last step, a slot that never issues.
    Step { i: usize, second: bool },
    /// The fall-through slot behind a branch that will be taken: squashed when the branch leaves EX.
    Wrong,
}

#[derive(Clone, Copy, Debug)]
struct Ex {
    i: usize,
    /// Multiply/divide cycles still to go.
    left: u32,
    /// The coprocessor's ack cycle, once granted.
    ack: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct Later {
    atomic: bool,
    /// The register it writes in MEM (a load, a fetching atomic), if any: a map helper's gather cannot read it
    /// in the cycle the call acts.
    late_rd: Option<u8>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Sp {
    #[default]
    Idle,
    Ret,
    /// A map helper's key and value gather: this many words still to read after this cycle's, then the request.
    Gather(u32),
    /// A helper call, granted with its ack cycle or not yet.
    Helper(Option<u64>),
}

/// The pipeline of one engine during one packet's run.
#[derive(Clone, Debug)]
pub struct Pipeline {
    job: Job,
    id: Id,
    ex: Option<Ex>,
    mem: Option<Later>,
    wb: Option<Later>,
    sp: Sp,
    depth: u32,
    /// The run's cycle being simulated, from 1.
    cycle: u64,
    done: Option<u64>,
    /// Cycles EX waited for the DM_FIFO and for the coprocessor (grants included), for reports.
    pub waited_fifo: u64,
    /// Cycles spent waiting for and in the coprocessor.
    pub waited_coproc: u64,
    /// Where the cycles went.
    pub breakdown: Breakdown,
}

impl Pipeline {
    /// A run about to start: cycle 1 has the first slot in ID.
    pub fn new(job: Job) -> Pipeline {
        Pipeline {
            job,
            id: Id::Step {
                i: 0,
                second: false,
            },
            ex: None,
            mem: None,
            wb: None,
            sp: Sp::Idle,
            depth: 0,
            cycle: 1,
            done: None,
            waited_fifo: 0,
            waited_coproc: 0,
            breakdown: Breakdown::default(),
        }
    }

    /// The run's cycles (first beat to the end, both counted), once it has ended.
    pub fn done(&self) -> Option<u64> {
        self.done
    }

    /// The service time of the coprocessor request the engine raises in this cycle, if it raises one not yet
    /// granted.
    pub fn request(&self) -> Option<u32> {
        if self.done.is_some() {
            return None;
        }
        if self.sp == Sp::Helper(None) {
            return self.service(self.id_step()?);
        }
        let ex = self.ex?;
        if ex.ack.is_none() && !self.mem.is_some_and(|m| m.atomic) {
            return self.service(ex.i);
        }
        None
    }

    fn service(&self, i: usize) -> Option<u32> {
        match self.job.steps.get(i)?.wait {
            Wait::Coproc { service, .. } => Some(service),
            _ => None,
        }
    }

    /// The arbiter granted this cycle's request: the ack comes in cycle `ack` of the run.
    pub fn grant(&mut self, ack: u64) {
        if self.sp == Sp::Helper(None) {
            self.sp = Sp::Helper(Some(ack));
        } else if let Some(ex) = &mut self.ex {
            ex.ack = Some(ack);
        }
    }

    /// The run's cycle about to be clocked.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    fn id_step(&self) -> Option<usize> {
        match self.id {
            Id::Step { i, second: false } if i < self.job.steps.len() => Some(i),
            _ => None,
        }
    }

    fn last(&self, i: usize) -> bool {
        i + 1 == self.job.steps.len()
    }

    fn arrived(&self, word: u32) -> bool {
        self.cycle > u64::from(word) * (u64::from(self.job.gap) + 1)
    }

    /// Clocks one cycle.
    pub fn clock(&mut self) {
        if self.done.is_some() {
            return;
        }
        let ex = self.ex_phase();
        let sp = self.sp_phase(ex.stall);
        if ex.finish || sp.finish {
            self.breakdown.issue += 1;
            self.done = Some(self.cycle);
            return;
        }
        let steps = &self.job.steps;
        let id = self.id_step();
        let special = id.is_some_and(|i| {
            matches!(
                steps[i].decoded.kind,
                Kind::Call | Kind::Exit | Kind::Helper
            )
        });
        let load_use = match (self.ex, id) {
            (Some(e), Some(i)) => {
                let e = &steps[e.i].decoded;
                e.late && e.rd.is_some_and(|r| steps[i].decoded.reads(r))
            }
            _ => false,
        };
        let id_stall = ex.stall || load_use || (special && !sp.ack_now);
        let id_go =
            matches!(self.id, Id::Step { i, .. } if i < steps.len()) && !id_stall && !ex.redirect;
        let acted = sp.redirect || sp.next != Sp::Idle || sp.ack_now;
        self.account(&ex, special && self.sp == Sp::Idle && !acted, load_use);
        self.advance(&ex, &sp, id_go);
    }

    /// Puts this cycle into its category of [`Breakdown`].
    fn account(&mut self, ex: &ExPhase, draining: bool, load_use: bool) {
        let b = &mut self.breakdown;
        let slot = match ex.why {
            Some(Why::Fifo) => &mut b.fifo,
            Some(Why::Coproc) if self.ex.is_some_and(|e| e.ack.is_some()) => &mut b.coproc_service,
            Some(Why::Coproc) => &mut b.coproc_wait,
            Some(Why::Other) => &mut b.other,
            None => match self.sp {
                Sp::Helper(Some(_)) => &mut b.coproc_service,
                Sp::Helper(None) => &mut b.coproc_wait,
                Sp::Gather(_) => &mut b.gather,
                Sp::Ret => &mut b.other,
                Sp::Idle if draining => &mut b.drain,
                Sp::Idle if load_use => &mut b.load_use,
                Sp::Idle => match self.id {
                    Id::Wrong => &mut b.branch,
                    Id::Step { i, second: false }
                        if self
                            .job
                            .steps
                            .get(i)
                            .is_some_and(|s| s.decoded.kind == Kind::LddwFirst) =>
                    {
                        &mut b.lddw
                    }
                    _ => &mut b.issue,
                },
            },
        };
        *slot += 1;
    }

    /// EX in this cycle: whether it stalls, goes (and redirects IF), or ends the run.
    fn ex_phase(&mut self) -> ExPhase {
        let mut out = ExPhase::default();
        let Some(ex) = self.ex else { return out };
        let s = self.job.steps[ex.i];
        if self.last(ex.i) && self.job.end == End::Stop {
            out.finish = true;
            return out;
        }
        let mem_atom = self.mem.is_some_and(|m| m.atomic);
        let md_wait = s.decoded.kind == Kind::MulDiv && ex.left > 1;
        let mem_wait = match s.wait {
            Wait::None => false,
            Wait::Frame { word } => !self.arrived(word),
            Wait::Coproc { .. } => ex.ack != Some(self.cycle),
        };
        if mem_wait && !mem_atom {
            match s.wait {
                Wait::Frame { .. } => self.waited_fifo += 1,
                _ => self.waited_coproc += 1,
            }
        }
        out.stall = mem_atom || md_wait || mem_wait;
        out.why = if mem_atom || md_wait {
            Some(Why::Other)
        } else if mem_wait {
            Some(match s.wait {
                Wait::Frame { .. } => Why::Fifo,
                _ => Why::Coproc,
            })
        } else {
            None
        };
        out.go = !out.stall;
        out.redirect = out.go && s.taken;
        out
    }

    /// ID's frame and helper operations in this cycle.
    fn sp_phase(&mut self, ex_stall: bool) -> SpPhase {
        let c = self.cycle;
        let drained = self.ex.is_none() && self.mem.is_none() && self.wb.is_none();
        let id = self.id_step();
        // A helper call and the main program's exit wait only for EX to be empty or to hold an ALU operation or lddw
        // that goes on (its result, MEM's and WB's are forwarded to them).
        let plain = self.ex.is_some_and(|e| {
            let d = &self.job.steps[e.i].decoded;
            !ex_stall && (d.kind == Kind::Pipe && !d.memory || d.kind == Kind::LddwFirst)
        });
        let ready = drained
            || (self.ex.is_none() || plain)
                && id.is_some_and(|i| match self.job.steps[i].decoded.kind {
                    Kind::Helper => true,
                    Kind::Exit => self.depth == 0,
                    _ => false,
                });
        let mut out = SpPhase {
            next: self.sp,
            ..SpPhase::default()
        };
        match self.sp {
            Sp::Ret => {
                out.redirect = true;
                out.next = Sp::Idle;
                self.depth -= 1;
            }
            Sp::Helper(Some(ack)) if ack == c => {
                out.ack_now = true;
                out.next = Sp::Idle;
                out.finish = id.is_some_and(|i| self.last(i));
            }
            Sp::Helper(_) => self.waited_coproc += 1,
            Sp::Gather(0) => out.next = Sp::Helper(None),
            Sp::Gather(left) => out.next = Sp::Gather(left - 1),
            Sp::Idle => {
                let Some(i) = id.filter(|_| ready) else {
                    return out;
                };
                let stop = self.last(i);
                match self.job.steps[i].decoded.kind {
                    Kind::Call if stop && self.job.end == End::Stop => out.finish = true,
                    Kind::Call => {
                        out.redirect = true;
                        self.depth += 1;
                    }
                    Kind::Exit if self.depth == 0 || stop => out.finish = true,
                    Kind::Exit => out.next = Sp::Ret,
                    Kind::Helper => {
                        out.next = match self.job.steps[i].wait {
                            // The request goes out in the cycle the last word is read back; the first word is
                            // read in this cycle when the gather may start at once.
                            Wait::Coproc { gather, .. } if gather > 1 && self.gather_now(i) => {
                                Sp::Gather(gather - 2)
                            }
                            Wait::Coproc { gather, .. } if gather > 0 && !self.gather_now(i) => {
                                Sp::Gather(gather - 1)
                            }
                            _ => Sp::Helper(None),
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// Whether map helper `i`, acting in this cycle, reads its first key word in this cycle (`ebpflow_core.sv`'s
    /// `gk_now`): a call by immediate, no atomic's write in MEM, and r2 (r3 too for an update) in a register, not
    /// written by EX nor loaded by MEM.
    fn gather_now(&self, i: usize) -> bool {
        let d = &self.job.steps[i].decoded;
        let pointer = |r: u8| r == 2 || (d.imm == 2 && r == 3);
        let ex_writes = self
            .ex
            .is_some_and(|e| self.job.steps[e.i].decoded.rd.is_some_and(pointer));
        let mem_loads = self
            .mem
            .is_some_and(|m| m.atomic || m.late_rd.is_some_and(pointer));
        d.code == 0x85 && !ex_writes && !mem_loads
    }

    /// The clock edge: WB, MEM, EX and ID take their next contents.
    fn advance(&mut self, ex: &ExPhase, sp: &SpPhase, id_go: bool) {
        let steps = &self.job.steps;
        let ex_i = self.ex.map(|e| e.i);
        let (id_i, id_second) = match self.id {
            Id::Step { i, second } => (i, second),
            Id::Wrong => (usize::MAX, false),
        };
        let to_ex = id_go
            && (id_second
                || matches!(
                    steps[id_i].decoded.kind,
                    Kind::Pipe | Kind::Branch | Kind::MulDiv
                ));
        self.wb = self.mem;
        self.mem = match (ex.go, ex_i) {
            // An atomic on a map value was done at the coprocessor: MEM has no write for it.
            (true, Some(i)) => Some(Later {
                atomic: steps[i].decoded.atomic && !matches!(steps[i].wait, Wait::Coproc { .. }),
                late_rd: steps[i].decoded.rd.filter(|_| steps[i].decoded.late),
            }),
            _ => None,
        };
        if let (true, Some(e)) = (ex.stall, &mut self.ex) {
            e.left = e.left.saturating_sub(1);
        } else if to_ex {
            self.ex = Some(Ex {
                i: id_i,
                left: if id_second { 0 } else { steps[id_i].md_cycles },
                ack: None,
            });
        } else {
            self.ex = None;
        }
        let next = |i: usize| Id::Step { i, second: false };
        if ex.redirect {
            self.id = next(ex_i.map_or(usize::MAX, |i| i + 1));
        } else if sp.redirect {
            self.id = next(id_i + 1);
        } else if id_go {
            let s = &steps[id_i];
            self.id = if !id_second && s.decoded.kind == Kind::LddwFirst {
                Id::Step {
                    i: id_i,
                    second: true,
                }
            } else if !id_second && s.decoded.kind == Kind::Branch && s.taken {
                Id::Wrong
            } else {
                next(id_i + 1)
            };
        }
        self.sp = sp.next;
        self.cycle += 1;
    }
}

/// Why EX stalls.
#[derive(Clone, Copy)]
enum Why {
    Fifo,
    Coproc,
    Other,
}

/// What EX does in a cycle.
#[derive(Default)]
struct ExPhase {
    why: Option<Why>,
    stall: bool,
    go: bool,
    redirect: bool,
    finish: bool,
}

/// What ID's frame and helper operations do in a cycle.
#[derive(Default)]
struct SpPhase {
    redirect: bool,
    next: Sp,
    ack_now: bool,
    finish: bool,
}
