//! `warp` and `warp-interp`: the Warp Engine in software (the warping paper's appendix C emulator) in front of a
//! processor. The program's parse-and-classify prefix becomes match-action rules (`hwxdp_warp::optimize`); per
//! packet the matching rule gives the verdict (the packet never reaches the processor) or the context the processor
//! resumes from; no rule, and the processor runs the program from its start.
//!
//! - `warp`: the processor is the hXDP core's cycle model, with the image compiled with an entry bundle at every
//!   restore slot (`hwxdp_hxdp::compile_object_with_entries`). A packet's cycles are those of the slower of the
//!   engine (one packet per clock) and the processor (the remainder from the entry bundle); its latency adds the
//!   engine's depth, [`ENGINE_DEPTH_CYCLES`].
//! - `warp --cores N`: one engine feeding N such cores round robin (the paper's "scaling throughput" future work).
//!   The cores share one `MapStore` and their map effects apply in packet order, so every packet's result is the
//!   reference machine's; throughput is the slower of the engine (one packet per clock) and the cores
//!   (N over the mean core cycles per packet, a verdict from the engine taking none).
//! - `warp-interp`: the processor is the reference machine, resuming where the rule left off; `insns` counts what it
//!   still executes.
//! - `warp-rtl`: the engine and the hXDP module in Verilog (`rtl/warp/warp_hxdp.sv`) under Verilator: the RTL engine
//!   decides per packet (a verdict emitted without starting Sephirot, a restore at the slot's entry bundle, or a
//!   miss from the start); a packet's cycles are Sephirot's, at least the engine's one, as for `warp`.

use crate::interp::{drain, empty_buff, load};
use crate::registry::Entry;
use crate::{
    Backend, BackendError, Capabilities, Packet, Ran, Record, Redirect, Setup, Site, Summary,
};
use hwxdp_hxdp::{Compiled, HxdpCore, Options};
use hwxdp_maps::MapStore;
use hwxdp_rtlsim::hxdp::{HxdpRtl, RtlPaths, VcdRequest};
use hwxdp_warp::{Action, Engine, Params, Warp};
use hwxdp_xdp::{Machine, XdpBuff};

/// The Warp Engine's latency in cycles, from a packet's last input beat to its first output beat with the verdict
/// or restored context: what `rtl/warp` takes at 512 bits (`crates/rtlsim/tests/warp.rs`,
/// `one_packet_a_clock_at_512_bits_with_and_without_back_pressure`); the paper's engine takes 28 (112 ns at 250 MHz).
pub const ENGINE_DEPTH_CYCLES: u64 = 29;

/// Cycles the engine spends on each packet: it takes one per clock.
pub const ENGINE_CYCLES_PER_PACKET: u64 = 1;

/// Most hXDP cores `--cores` puts behind one engine.
pub const MAX_CORES: usize = 64;

/// The registry's line for the engine in front of the hXDP core.
pub const ENTRY: Entry = Entry {
    name: "warp",
    about: "the Warp Engine in software in front of the hXDP core's cycle model, which resumes at the entry bundle \
            of the restored context (--cores N: N cores sharing the maps, fed round robin)",
    options: &["--cores", "--warp-profile", "--warp-param"],
    needs_kernel: false,
    whole_trace: false,
    create: create_hxdp,
};

/// The registry's line for the engine and the hXDP module in Verilog.
pub const RTL: Entry = Entry {
    name: "warp-rtl",
    about: "the Warp Engine and the hXDP module in Verilog (rtl/warp/warp_hxdp.sv) under Verilator: the engine's \
            verdicts skip Sephirot, its restores start it at the entry bundle",
    options: &["--warp-profile", "--warp-param", "--vcd", "--vcd-packets"],
    needs_kernel: false,
    whole_trace: false,
    create: create_rtl,
};

/// The registry's line for the engine in front of the reference machine.
pub const INTERP: Entry = Entry {
    name: "warp-interp",
    about: "the Warp Engine in software in front of the reference machine, which resumes where the rule left off",
    options: &["--warp-profile", "--warp-param"],
    needs_kernel: false,
    whole_trace: false,
    create: create_interp,
};

/// The engine's parameters: `--warp-param`, or Table 5's.
fn params(setup: &Setup) -> Params {
    setup.options.warp_params.unwrap_or_default()
}

/// The rules for `warp-rtl`. The RTL's action line holds a restore's r0 in 32 bits (zero-extended, as the hXDP
/// module's resume port sets it): with Table 5's parameters, rules restoring a wider constant r0 are made again
/// without r0 restores (`r0-const=0`), so a program is warped less deeply rather than refused. Parameters given
/// with `--warp-param` are kept as given (and the configuration refuses such an r0, naming the rule).
fn optimize_rtl(setup: &Setup) -> Result<Warp, BackendError> {
    let warp = optimize(setup, RTL.name, &params(setup))?;
    let wide_r0 = warp.rules.iter().any(|r| match &r.action {
        Action::Restore(x) => x.r0.is_some_and(|r0| u32::try_from(r0).is_err()),
        Action::Verdict { .. } => false,
    });
    if !wide_r0 || setup.options.warp_params.is_some() {
        return Ok(warp);
    }
    let without = Params {
        r0_const: 0,
        ..params(setup)
    };
    optimize(setup, RTL.name, &without)
}

fn optimize(setup: &Setup, backend: &'static str, params: &Params) -> Result<Warp, BackendError> {
    let programs = &setup.spec.programs;
    let program = programs
        .iter()
        .find(|p| p.name == setup.program)
        .or_else(|| programs.iter().find(|p| p.section == setup.program))
        .ok_or_else(|| {
            BackendError::setup(
                backend,
                hwxdp_warp::WarpError::NoProgram(setup.program.to_string()),
            )
        })?;
    let profile = hwxdp_warp::Profile {
        frames: setup.options.warp_profile.clone(),
    };
    hwxdp_warp::optimize_profiled(program, &setup.spec.maps, params, &profile)
        .map_err(|e| BackendError::setup(backend, e))
}

/// The figures of the rule set every warp backend reports.
fn rule_figures(warp: &Warp, matched: u64, decided: u64) -> Summary {
    let r = &warp.report;
    Summary::default()
        .with("rules", "rules", r.rules as f64)
        .with("tcam_entries", "TCAM entries", r.tcam_entries as f64)
        .with("key_bytes", "key bytes", r.key_bytes as f64)
        .with("stack_bytes", "stack bytes restored", r.stack_bytes as f64)
        .with("matched_packets", "packets matched a rule", matched as f64)
        .with(
            "engine_verdicts",
            "verdicts from the engine alone",
            decided as f64,
        )
}

fn create_hxdp(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let cores = setup.options.warp_cores;
    if !(1..=MAX_CORES).contains(&cores) {
        return Err(BackendError::setup(
            ENTRY.name,
            format!("--cores must be 1 to {MAX_CORES} (given {cores})"),
        ));
    }
    let warp = optimize(setup, ENTRY.name, &params(setup))?;
    let (compiled, bundles) = compile_with_entries(setup, &warp, ENTRY.name)?;
    let core = HxdpCore::new(
        compiled.image.clone(),
        setup.spec,
        Some(setup.program),
        setup.config,
    )
    .map_err(|e| BackendError::setup(ENTRY.name, e))?;
    Ok(Box::new(WarpHxdp {
        bundles,
        warp,
        compiled,
        core,
        rings: crate::Rings::of(setup),
        buff: empty_buff(),
        counts: Counts::default(),
        cores: Cores::new(cores),
    }))
}

/// The hXDP image with an entry bundle at every restore slot of `warp`, and the program's bundles without and with
/// the entry points.
fn compile_with_entries(
    setup: &Setup,
    warp: &Warp,
    backend: &'static str,
) -> Result<(Compiled, (usize, usize)), BackendError> {
    let options = Options::default();
    let slots = &warp.report.restore_slots;
    let compiled =
        hwxdp_hxdp::compile_object_with_entries(setup.spec, setup.entry(), &options, slots)
            .map_err(|e| BackendError::setup(backend, e))?;
    let plain = hwxdp_hxdp::compile_object(setup.spec, setup.entry(), &options)
        .map_err(|e| BackendError::setup(backend, e))?;
    let bundles = |c: &Compiled| {
        c.reports
            .iter()
            .find(|r| r.name == setup.program)
            .map_or(0, |r| r.bundles)
    };
    if let Some(&slot) = slots.iter().find(|&&s| compiled.entry_bundle(s).is_none()) {
        return Err(BackendError::setup(
            backend,
            format!("restore slot {slot} has no entry bundle in the hxdp image"),
        ));
    }
    let figures = (bundles(&plain), bundles(&compiled));
    Ok((compiled, figures))
}

/// What the engine did over the packets so far.
#[derive(Default)]
struct Counts {
    /// Packets a rule matched, and those whose verdict the engine gave by itself.
    matched: u64,
    decided: u64,
    /// Packets, and the processor's cycles over them (the engine's depth not counted).
    packets: u64,
    processor_cycles: u64,
    /// Cycles packets waited for their core (round robin, `--cores`).
    waited: u64,
}

/// N cores behind the engine, fed round robin in packet order: when each is free, in cycles from the first packet.
///
/// The engine hands a packet to the processor only when the next core in turn is free (it keeps packets in order:
/// no core is skipped), and takes at most one packet a clock; a verdict packet takes the engine's clock only.
struct Cores {
    free_at: Vec<u64>,
    next: usize,
    /// When the engine took the last packet.
    clock: u64,
    /// When the last core finishes.
    end: u64,
}

impl Cores {
    fn new(n: usize) -> Cores {
        Cores {
            free_at: vec![0; n],
            next: 0,
            clock: 0,
            end: 0,
        }
    }

    /// The engine takes a packet whose core cycles are `cycles` (`None`: its verdict came from the engine); the
    /// cycles it waited for its core.
    fn take(&mut self, cycles: Option<u64>) -> u64 {
        let ready = self.clock + ENGINE_CYCLES_PER_PACKET;
        let Some(cycles) = cycles else {
            self.clock = ready;
            self.end = self.end.max(ready);
            return 0;
        };
        let start = ready.max(self.free_at[self.next]);
        self.free_at[self.next] = start + cycles;
        self.next = (self.next + 1) % self.free_at.len();
        self.clock = start;
        self.end = self.end.max(start + cycles);
        start - ready
    }
}

struct WarpHxdp {
    cores: Cores,
    warp: Warp,
    compiled: Compiled,
    core: HxdpCore,
    rings: crate::Rings,
    buff: XdpBuff,
    counts: Counts,
    /// The program's bundles without and with the entry points.
    bundles: (usize, usize),
}

/// How one packet went through the engine and the core.
enum Through {
    /// The engine's verdict: the processor never saw the packet.
    Engine(u32),
    /// The core's verdict, after running from the start or from a restored context.
    Core(u32),
}

impl WarpHxdp {
    /// Runs the packet in `self.buff` through the engine and, unless the rule decided it, the core.
    fn through(&mut self, packet: &Packet) -> Result<Through, BackendError> {
        let engine = Engine::new(&self.warp);
        self.core.set_time(packet.time_ns);
        let Some(rule) = engine.lookup(self.buff.data()) else {
            let verdict = self.core.run_packet(&mut self.buff, &packet.md);
            return Ok(Through::Core(verdict.retval()));
        };
        self.counts.matched += 1;
        let slot = match &self.warp.rules[rule].action {
            Action::Verdict { retval, .. } => {
                self.counts.decided += 1;
                return Ok(Through::Engine(*retval));
            }
            Action::Restore(r) => r.slot,
        };
        let resume = engine.resume(rule, self.buff.data()).unwrap_or_default();
        let bundle = self.compiled.entry_bundle(slot).ok_or_else(|| {
            BackendError::run(
                ENTRY.name,
                format!("rule {rule}: no entry bundle for slot {slot}"),
            )
        })?;
        let verdict = self
            .core
            .run_resumed(&mut self.buff, &packet.md, bundle, &resume)
            .map_err(|e| {
                BackendError::run(ENTRY.name, format!("rule {rule}: cannot resume: {e}"))
            })?;
        Ok(Through::Core(verdict.retval()))
    }
}

impl Backend for WarpHxdp {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            cycles: true,
            records_per_packet: self.rings.live(),
            redirects: true,
            ..Capabilities::default()
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let mut out = Vec::with_capacity(packets.len());
        for packet in packets {
            load(ENTRY.name, &mut self.buff, packet)?;
            let through = self.through(packet)?;
            let output = self.buff.output().to_vec();
            let meta_len = self.buff.meta().len();
            let records = crate::hxdp::drain_core(&mut self.core, self.rings.per_packet());
            let ran = match through {
                Through::Engine(retval) => {
                    self.cores.take(None);
                    Ran {
                        retval,
                        output,
                        meta_len,
                        records,
                        cycles: Some(ENGINE_CYCLES_PER_PACKET),
                        ..Ran::default()
                    }
                }
                Through::Core(retval) => {
                    self.counts.processor_cycles += self.core.last_cycles();
                    self.counts.waited += self.cores.take(Some(self.core.last_cycles()));
                    Ran {
                        retval,
                        output,
                        meta_len,
                        redirect: self
                            .core
                            .last_redirect()
                            .map(|(map, key)| Redirect { map, key }),
                        records,
                        fault: self.core.last_fault().map(str::to_string),
                        cycles: Some(self.core.last_cycles().max(ENGINE_CYCLES_PER_PACKET)),
                        printk: self.core.take_printk(),
                        ..Ran::default()
                    }
                }
            };
            self.counts.packets += 1;
            out.push(ran);
        }
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        self.core.machine_mut().maps_mut()
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        Ok(crate::hxdp::drain_core(&mut self.core, self.rings.all()))
    }

    fn summary(&self) -> Summary {
        let c = &self.counts;
        let per_packet = |x: u64| x as f64 / c.packets.max(1) as f64;
        let latency = if c.packets == 0 {
            0.0
        } else {
            per_packet(c.processor_cycles + c.waited) + ENGINE_DEPTH_CYCLES as f64
        };
        let n = self.cores.free_at.len();
        // The engine takes a packet a clock; N cores take N packets per their mean cycles.
        let rate = match c.processor_cycles {
            0 => 1.0,
            cycles => (n as f64 / per_packet(cycles)).min(1.0),
        };
        let round_robin = c.packets as f64 / self.cores.end.max(1) as f64;
        let mut summary = rule_figures(&self.warp, c.matched, c.decided)
            .with("cores", "hXDP cores behind the engine", n as f64)
            .with(
                "core_cycles",
                "core cycles per packet (mean over all packets)",
                per_packet(c.processor_cycles),
            )
            .with(
                "round_robin_packets_per_cycle",
                "packets per cycle, strict round robin",
                round_robin,
            )
            .with(
                "entry_points",
                "entry points",
                self.compiled.entry_points.len() as f64,
            )
            .with(
                "bundles_plain",
                "bundles without entry points",
                self.bundles.0 as f64,
            )
            .with("bundles", "bundles", self.bundles.1 as f64)
            .with(
                "engine_depth",
                "cycles of engine latency",
                ENGINE_DEPTH_CYCLES as f64,
            )
            .with("latency", "cycles mean latency", latency);
        summary.packets_per_cycle = Some(rate);
        summary
    }
}

fn create_interp(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let warp = optimize(setup, INTERP.name, &params(setup))?;
    let machine = Machine::new(setup.spec, Some(setup.program), setup.config)
        .map_err(|e| BackendError::setup(INTERP.name, e))?;
    Ok(Box::new(WarpInterp {
        warp,
        machine,
        rings: crate::Rings::of(setup),
        buff: empty_buff(),
        matched: 0,
        decided: 0,
    }))
}

struct WarpInterp {
    warp: Warp,
    machine: Machine,
    rings: crate::Rings,
    buff: XdpBuff,
    /// Packets a rule matched, and those whose verdict the engine gave by itself.
    matched: u64,
    decided: u64,
}

impl Backend for WarpInterp {
    fn name(&self) -> &'static str {
        INTERP.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            instructions: true,
            records_per_packet: self.rings.live(),
            redirects: true,
            ..Capabilities::default()
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let engine = Engine::new(&self.warp);
        let mut out = Vec::with_capacity(packets.len());
        for packet in packets {
            load(INTERP.name, &mut self.buff, packet)?;
            self.machine.set_time(packet.time_ns);
            let run = engine
                .run(&mut self.machine, &mut self.buff, &packet.md)
                .map_err(|(rule, e)| {
                    BackendError::run(INTERP.name, format!("rule {rule}: cannot resume: {e}"))
                })?;
            if run.rule.is_some() {
                self.matched += 1;
                // A verdict rule leaves the processor out: it executes nothing.
                self.decided += u64::from(run.processor == 0);
            }
            let o = run.outcome;
            out.push(Ran {
                retval: o.retval,
                output: self.buff.output().to_vec(),
                meta_len: self.buff.meta().len(),
                redirect: o.redirect.map(|(map, key)| Redirect { map, key }),
                records: drain(self.machine.maps_mut(), self.rings.per_packet()),
                fault: o.fault.map(|f| f.to_string()),
                insns: Some(run.processor),
                path: Some(o.path),
                exit: o.exit.map(|(program, slot)| Site { program, slot }),
                printk: o.printk,
                ..Ran::default()
            });
        }
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        self.machine.maps_mut()
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        Ok(drain(self.machine.maps_mut(), self.rings.all()))
    }

    fn summary(&self) -> Summary {
        rule_figures(&self.warp, self.matched, self.decided)
    }
}

fn create_rtl(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let warp = optimize_rtl(setup)?;
    let (compiled, bundles) = compile_with_entries(setup, &warp, RTL.name)?;
    let mut paths = RtlPaths::from_env();
    paths.notify = setup.notify;
    let mut rtl = hwxdp_rtlsim::warp_hxdp::start(
        compiled.image.clone(),
        setup.spec,
        Some(setup.program),
        setup.config,
        &paths,
        &warp,
        &compiled.entry_points,
    )
    .map_err(|e| BackendError::setup(RTL.name, e))?;
    if let Some(vcd) = &setup.options.vcd {
        rtl.set_vcd(VcdRequest {
            path: vcd.path.clone(),
            packets: vcd.packets.clone(),
            clock_mhz: vcd.clock_mhz,
        })
        .map_err(|e| BackendError::setup(RTL.name, e))?;
    }
    Ok(Box::new(WarpRtl {
        entry_points: compiled.entry_points.len(),
        warp,
        rtl,
        rings: crate::Rings::of(setup),
        buff: empty_buff(),
        counts: Counts::default(),
        bundles,
    }))
}

/// `warp-rtl`: the engine and the module in Verilog.
struct WarpRtl {
    warp: Warp,
    rtl: HxdpRtl,
    rings: crate::Rings,
    buff: XdpBuff,
    counts: Counts,
    entry_points: usize,
    /// The program's bundles without and with the entry points.
    bundles: (usize, usize),
}

impl WarpRtl {
    /// Counts what the rules do with the packet in `self.buff` (the software engine's lookup: the RTL decides).
    fn count(&mut self) {
        let Some(rule) = Engine::new(&self.warp).lookup(self.buff.data()) else {
            return;
        };
        self.counts.matched += 1;
        if matches!(self.warp.rules[rule].action, Action::Verdict { .. }) {
            self.counts.decided += 1;
        }
    }
}

impl Backend for WarpRtl {
    fn name(&self) -> &'static str {
        RTL.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            cycles: true,
            waves: true,
            records_per_packet: self.rings.live(),
            redirects: true,
            ..Capabilities::default()
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let mut out = Vec::with_capacity(packets.len());
        for packet in packets {
            load(RTL.name, &mut self.buff, packet)?;
            self.count();
            self.rtl.set_time(packet.time_ns);
            let verdict = self
                .rtl
                .run_packet(&mut self.buff, &packet.md)
                .map_err(|e| BackendError::run(RTL.name, e))?;
            let rtl = &mut self.rtl;
            let records =
                crate::collect_records(self.rings.per_packet(), |map| rtl.ringbuf_drain(map))
                    .map_err(|e| BackendError::run(RTL.name, e))?;
            self.counts.processor_cycles += self.rtl.last_cycles();
            self.counts.packets += 1;
            out.push(Ran {
                retval: verdict.retval(),
                output: self.buff.output().to_vec(),
                meta_len: self.buff.meta().len(),
                redirect: self
                    .rtl
                    .last_redirect()
                    .map(|(map, key)| Redirect { map, key }),
                records,
                fault: self.rtl.last_fault().map(str::to_string),
                cycles: Some(self.rtl.last_cycles().max(ENGINE_CYCLES_PER_PACKET)),
                ..Ran::default()
            });
        }
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        &mut self.rtl
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        let rtl = &mut self.rtl;
        crate::collect_records(self.rings.all(), |map| rtl.ringbuf_drain(map))
            .map_err(|e| BackendError::run(RTL.name, e))
    }

    fn summary(&self) -> Summary {
        let c = &self.counts;
        let per_packet = c.processor_cycles as f64 / c.packets.max(1) as f64;
        let rate = match c.processor_cycles {
            0 => 1.0,
            _ => (1.0 / per_packet).min(1.0),
        };
        let mut summary = rule_figures(&self.warp, c.matched, c.decided)
            .with(
                "core_cycles",
                "core cycles per packet (mean over all packets)",
                per_packet,
            )
            .with("entry_points", "entry points", self.entry_points as f64)
            .with(
                "bundles_plain",
                "bundles without entry points",
                self.bundles.0 as f64,
            )
            .with("bundles", "bundles", self.bundles.1 as f64);
        summary.packets_per_cycle = Some(rate);
        summary
    }

    fn finish(&mut self) -> Result<(), BackendError> {
        self.rtl
            .finish()
            .map_err(|e| BackendError::run(RTL.name, e))
    }
}
