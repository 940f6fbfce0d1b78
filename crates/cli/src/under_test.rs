//! The machine a trace runs on, chosen with `--backend`: the reference machine, the hXDP core's cycle model, the
//! hXDP module's RTL under Verilator, or the program's generated eHDL pipeline under Verilator. `run`, `verify` and
//! `bench` share the flags; `verify` compares any of them with the kernel through [`UnderTest`].
//!
//! The eHDL pipeline runs the trace as one batch, back to back (that is how its hazards and throughput show):
//! [`Hardware::queue`] simulates it before the per-packet loop, which then takes the results packet by packet.

use crate::common::ProgramArgs;
use anyhow::{bail, Context, Result};
use hwxdp_hxdp::isa::Image;
use hwxdp_hxdp::{CoreStats, HxdpCore};
use hwxdp_maps::MapStore;
use hwxdp_object::ObjectSpec;
use hwxdp_rtlsim::ehdl::{EhdlPaths, EhdlRtl, PacketIn};
use hwxdp_rtlsim::hxdp::{parse_packet_range, HxdpRtl, RtlPaths, VcdRequest};
use hwxdp_xdp::{Backend, Config, Machine, Verdict, XdpBuff, XdpMd};
use std::ops::Range;
use std::path::PathBuf;

/// `--backend`, `--lanes`, `--disable`, `--vcd`, `--vcd-packets` and `--data-width`.
#[derive(clap::Args, Clone, Debug)]
pub struct BackendArgs {
    /// Backend: `interp` (the reference machine), `hxdp` (the compiled image on the cycle model of the core),
    /// `hxdp-rtl` (the compiled image on the hXDP module's RTL, simulated with Verilator) or `ehdl-rtl` (the program's
    /// generated eHDL pipeline, simulated with Verilator, the trace streamed through it back to back).
    #[arg(long, default_value = "interp", value_parser = ["interp", "hxdp", "hxdp-rtl", "ehdl-rtl"])]
    pub backend: String,
    /// Lanes per bundle for `--backend hxdp` and `hxdp-rtl`.
    #[arg(long, default_value_t = 4)]
    pub lanes: usize,
    /// Compiler passes to switch off for `--backend hxdp` and `hxdp-rtl`.
    #[arg(long = "disable", value_delimiter = ',')]
    pub disable: Vec<String>,
    /// With `--backend hxdp-rtl`: write a VCD waveform of the module's signals to FILE.
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<PathBuf>,
    /// The packets `--vcd` records: `A..B` (B excluded), `A..=B` or `A`, counted from 0 in the order they run.
    #[arg(long, default_value = "0..1", value_parser = parse_packet_range)]
    pub vcd_packets: Range<u64>,
    /// With `--backend ehdl-rtl`: the pipeline's data width in bits (128 to 512, a multiple of 64) [default: 512].
    #[arg(long)]
    pub data_width: Option<u32>,
    /// With `--backend ehdl-rtl`: how the pipeline keeps map accesses of packets in flight in order: `stall` (a
    /// packet waits while an older one may conflict) or `flush` (the eHDL paper's flush evaluation and replay, from
    /// the input or from an elastic buffer after the last map write before the flush stage) [default: stall].
    #[arg(long, value_enum)]
    pub hazards: Option<HazardsArg>,
}

/// `--hazards`: the eHDL pipeline's handling of map hazards.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HazardsArg {
    /// Stall checks.
    Stall,
    /// Flush evaluation and replay.
    Flush,
}

impl From<HazardsArg> for hwxdp_ehdl::verilog::Hazards {
    fn from(h: HazardsArg) -> Self {
        match h {
            HazardsArg::Stall => hwxdp_ehdl::verilog::Hazards::Stall,
            HazardsArg::Flush => hwxdp_ehdl::verilog::Hazards::Flush,
        }
    }
}

impl BackendArgs {
    /// With `--backend hxdp` or `hxdp-rtl`, the program compiled with `--lanes`/`--disable` and loaded on the core
    /// model or the RTL, configured by `config` (maps, helpers, clock, routes) exactly as a reference machine would
    /// be; with `interp`, `None`.
    pub fn core(
        &self,
        program: &ProgramArgs,
        spec: &ObjectSpec,
        config: &Config,
    ) -> Result<Option<Hardware>> {
        if self.vcd.is_some() && self.backend != "hxdp-rtl" {
            bail!("--vcd records the hXDP module's signals: it needs --backend hxdp-rtl");
        }
        if self.data_width.is_some() && self.backend != "ehdl-rtl" {
            bail!("--data-width sets the eHDL pipeline's bus: it needs --backend ehdl-rtl");
        }
        if self.hazards.is_some() && self.backend != "ehdl-rtl" {
            bail!("--hazards chooses the eHDL pipeline's hazard handling: it needs --backend ehdl-rtl");
        }
        if self.backend == "interp" {
            return Ok(None);
        }
        let chosen = program.chosen(spec);
        let object = program.object.display().to_string();
        if self.backend == "ehdl-rtl" {
            let options = hwxdp_ehdl::Options {
                data_width: self.data_width.unwrap_or(512),
                hazards: self.hazards.map(Into::into).unwrap_or_default(),
                ..hwxdp_ehdl::Options::default()
            };
            let rtl = EhdlRtl::new(
                spec,
                chosen.as_deref(),
                config,
                &options,
                &EhdlPaths::from_env(),
            )
            .with_context(|| format!("{object}: --backend ehdl-rtl"))?;
            return Ok(Some(Hardware::Ehdl(Box::new(rtl))));
        }
        let options = crate::cmd_compile::options(self.lanes, &self.disable)?;
        let (compiled, _) = crate::cmd_compile::build(program, spec, &options)?;
        if self.backend == "hxdp" {
            let core = HxdpCore::new(compiled.image, spec, chosen.as_deref(), config)
                .with_context(|| object.clone())?;
            return Ok(Some(Hardware::Model(Box::new(core))));
        }
        let mut rtl = HxdpRtl::new(
            compiled.image,
            spec,
            chosen.as_deref(),
            config,
            &RtlPaths::from_env(),
        )
        .with_context(|| format!("{object}: --backend hxdp-rtl"))?;
        if let Some(path) = &self.vcd {
            rtl.set_vcd(VcdRequest {
                path: path.clone(),
                packets: self.vcd_packets.clone(),
            })?;
        }
        Ok(Some(Hardware::Rtl(Box::new(rtl))))
    }
}

/// A hardware backend: the hXDP core's cycle model or the hXDP module's RTL (both run the same compiled image and
/// report cycles per packet), or the program's eHDL pipeline.
pub enum Hardware {
    /// `--backend hxdp`.
    Model(Box<HxdpCore>),
    /// `--backend hxdp-rtl`.
    Rtl(Box<HxdpRtl>),
    /// `--backend ehdl-rtl`.
    Ehdl(Box<EhdlRtl>),
}

impl Hardware {
    /// The backend's name on the command line and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Hardware::Model(_) => "hxdp",
            Hardware::Rtl(_) => "hxdp-rtl",
            Hardware::Ehdl(_) => "ehdl-rtl",
        }
    }

    /// Sets the arrival time of the next packet (virtual clock). The eHDL pipeline has no clock helper (the
    /// generator refuses `bpf_ktime_get_ns`), so it ignores it.
    pub fn set_time(&mut self, ns: u64) {
        match self {
            Hardware::Model(c) => c.set_time(ns),
            Hardware::Rtl(r) => r.set_time(ns),
            Hardware::Ehdl(_) => {}
        }
    }

    /// With `--backend ehdl-rtl`, streams `packets` (those [`Hardware::run_packet`] will then be given, in order)
    /// through the pipeline back to back; the other backends run packet by packet and need nothing here.
    pub fn queue(&mut self, packets: Vec<PacketIn>) -> Result<()> {
        if let Hardware::Ehdl(e) = self {
            e.queue(packets)?;
        }
        Ok(())
    }

    /// Runs one packet (with `ehdl-rtl`, hands out the queued result); faults give `XDP_ABORTED` and
    /// [`Hardware::last_fault`]. Only the simulators can fail to run one.
    pub fn run_packet(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Result<Verdict> {
        match self {
            Hardware::Model(c) => Ok(c.run_packet(buff, md)),
            Hardware::Rtl(r) => Ok(r.run_packet(buff, md)?),
            Hardware::Ehdl(e) => Ok(e.run_packet(buff, md)?),
        }
    }

    /// Why the last packet was stopped, if it was. The eHDL pipeline reports a stopped packet only by its verdict.
    pub fn last_fault(&self) -> Option<&str> {
        match self {
            Hardware::Model(c) => c.last_fault(),
            Hardware::Rtl(r) => r.last_fault(),
            Hardware::Ehdl(_) => None,
        }
    }

    /// Cycles of the last packet; for the eHDL pipeline its latency (first beat in to first beat out, as generated).
    pub fn cycles(&self) -> u64 {
        match self {
            Hardware::Model(c) => c.cycles(),
            Hardware::Rtl(r) => r.cycles(),
            Hardware::Ehdl(e) => Some(e.figures().latency as u64),
        }
        .unwrap_or(0)
    }

    /// Cycle figures so far of the hXDP backends.
    pub fn stats(&self) -> Option<&CoreStats> {
        match self {
            Hardware::Model(c) => Some(c.stats()),
            Hardware::Rtl(r) => Some(r.stats()),
            Hardware::Ehdl(_) => None,
        }
    }

    /// The compiled image of the hXDP backends.
    pub fn image(&self) -> Option<&Image> {
        match self {
            Hardware::Model(c) => Some(c.image()),
            Hardware::Rtl(r) => Some(r.image()),
            Hardware::Ehdl(_) => None,
        }
    }

    /// The eHDL pipeline, with `--backend ehdl-rtl`.
    pub fn ehdl(&self) -> Option<&EhdlRtl> {
        match self {
            Hardware::Ehdl(e) => Some(e),
            _ => None,
        }
    }
}

/// What one packet did on the machine under test, as far as the kernel can be compared with it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tested {
    /// The program's return value (0 when it was stopped).
    pub retval: u32,
    /// Why the program was stopped, if it was.
    pub fault: Option<String>,
}

/// The side `--backend` chose: the hXDP backend when one was built, else the reference machine.
pub fn chosen<'a>(
    core: Option<&'a mut Hardware>,
    machine: &'a mut Machine,
) -> &'a mut dyn UnderTest {
    match core {
        Some(c) => c,
        None => machine,
    }
}

/// A machine whose packets and maps `verify` compares with the kernel's.
pub trait UnderTest {
    /// How output names this side: `hwxdp` for the reference machine, the backend's name otherwise.
    fn side(&self) -> &'static str;
    /// Runs one packet in `buff`, which holds the result afterwards.
    fn run_one(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Result<Tested>;
    /// The maps the program reads and writes, as userspace sees them.
    fn maps(&mut self) -> &mut dyn MapStore;
    /// The records ring buffer `map` holds, oldest first, consumed.
    fn ringbuf_drain(&mut self, map: usize) -> Result<Vec<Vec<u8>>>;
    /// Whether the ring buffers can only be read after the whole trace (a batch backend), not packet by packet.
    fn rings_after_trace(&self) -> bool {
        false
    }
}

impl UnderTest for Machine {
    fn side(&self) -> &'static str {
        "hwxdp"
    }

    fn run_one(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Result<Tested> {
        let outcome = self.run_packet(buff, md);
        Ok(Tested {
            retval: outcome.retval,
            fault: outcome.fault.map(|f| f.to_string()),
        })
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        self.maps_mut()
    }

    fn ringbuf_drain(&mut self, map: usize) -> Result<Vec<Vec<u8>>> {
        Ok(self.maps_mut().ringbuf_drain(map))
    }
}

impl UnderTest for Hardware {
    fn side(&self) -> &'static str {
        self.name()
    }

    fn run_one(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Result<Tested> {
        let verdict = self.run_packet(buff, md)?;
        Ok(Tested {
            retval: verdict.retval(),
            fault: self.last_fault().map(str::to_string),
        })
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        match self {
            Hardware::Model(c) => c.machine_mut().maps_mut(),
            Hardware::Rtl(r) => r.as_mut(),
            Hardware::Ehdl(e) => e.as_mut(),
        }
    }

    fn ringbuf_drain(&mut self, map: usize) -> Result<Vec<Vec<u8>>> {
        match self {
            Hardware::Model(c) => Ok(c.machine_mut().maps_mut().ringbuf_drain(map)),
            Hardware::Rtl(r) => Ok(r.ringbuf_drain(map)?),
            // The trace runs as one batch: these are every packet's records, read back after it.
            Hardware::Ehdl(e) => Ok(e.ringbuf_records(map)),
        }
    }

    fn rings_after_trace(&self) -> bool {
        matches!(self, Hardware::Ehdl(_))
    }
}
