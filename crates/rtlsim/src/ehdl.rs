//! A program's generated eHDL pipeline under Verilator: `--backend ehdl-rtl`.
//!
//! [`EhdlRtl::new`] compiles the program to the pipeline IR (`hwxdp_ehdl::compile`), generates its Verilog module
//! (`hwxdp_ehdl::verilog::generate`; a program the generator refuses gives its error, naming the instruction) and
//! builds it with the `rtl/ehdl/` primitives and the streaming testbench `sim/ehdl/ehdl_pipe_tb.cpp`, all embedded in
//! the binary, through the crate's Verilator cache.
//!
//! A pipeline is only itself when packets follow each other closely: one packet per clock, map hazards between
//! packets in flight, the stall checks. So packets run in batches ([`EhdlRtl::run_batch`]): the whole batch streams
//! in back to back, and the results come out in order. Before the first packet the host port loads every map block
//! with what the userspace view ([`MapStore`] on [`EhdlRtl`], the reference machine's [`Maps`]) holds: `--maps`
//! preloads and earlier batches' results. After the last packet it reads every block back into that view, so dumps
//! and the map comparison of `verify` see the hardware's state. Maps without a block (the program never looks them
//! up) cannot change in the pipeline and stay as userspace left them.
//!
//! For callers that go packet by packet, [`EhdlRtl::queue`] runs a batch and [`EhdlRtl::run_packet`] then hands its
//! results out one at a time.

mod error;
mod host;
mod model;
mod routes;
mod tb;

pub use error::EhdlRtlError;
pub use model::{EhdlPaths, TOP, VERILATOR_FLAGS};
// The waveform request is the crate's, shared with the hXDP backend.
pub use crate::vcd::VcdRequest;
pub use routes::{fib_block, fib_table_writes, FibWrite};

use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;

use crate::vcd::Timescale;
use model::Variant;

use hwxdp_ehdl::verilog::{generate_with, Figures};
use hwxdp_ehdl::{OpKind, Options, Pipeline};
use hwxdp_maps::{Entries, MapError, MapStore, Maps};
use hwxdp_object::{MapSpec, ObjectSpec};
use hwxdp_xdp::{Config, Verdict, XdpBuff, XdpMd};

/// The largest packet the testbench's input line takes.
pub const MAX_PACKET: usize = 9000;

/// One packet of a batch: its bytes, the context it arrives with and its arrival time (what `bpf_ktime_get_ns`
/// reads, from the first beat's sideband; the reference machine's virtual clock adds the instructions run before the
/// call, a few nanoseconds).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketIn {
    /// The packet.
    pub bytes: Vec<u8>,
    /// `ingress_ifindex` and `rx_queue_index`.
    pub md: XdpMd,
    /// Arrival time in nanoseconds.
    pub time_ns: u64,
}

/// What happened to one packet in the pipeline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketOut {
    /// The verdict (`m_axis_tuser_o`).
    pub verdict: u32,
    /// The redirect target (`m_axis_tdest_o`): map index (`None` for `bpf_redirect`) and key or ifindex.
    pub redirect: Option<(Option<usize>, u64)>,
    /// The packet as it left.
    pub bytes: Vec<u8>,
}

/// One batch's results and cycle figures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// Every packet's result, in input order.
    pub packets: Vec<PacketOut>,
    /// Clock cycles from the first beat in to the last beat out.
    pub cycles: u64,
    /// Cycles from the first beat in to the first beat out.
    pub latency: u64,
    /// Input beats.
    pub beats: u64,
    /// Cycles in which the input was held by a stall check (a beat offered, the output free, `s_axis_tready` low).
    pub stall_cycles: u64,
    /// Flushes (with `Hazards::Flush`): cycles in which a flush evaluation block dropped younger packets.
    pub flushes: u64,
}

/// Figures summed over the batches run so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Batches simulated.
    pub batches: u64,
    /// Packets simulated.
    pub packets: u64,
    /// Cycles, each batch from its first beat in to its last beat out.
    pub cycles: u64,
    /// Input beats.
    pub beats: u64,
    /// Stall cycles.
    pub stall_cycles: u64,
    /// Flushes.
    pub flushes: u64,
    /// The first batch's latency (first beat in to first beat out), 0 before any batch.
    pub latency: u64,
}

impl Totals {
    /// Packets per clock cycle over every batch (0 before any).
    pub fn packets_per_cycle(&self) -> f64 {
        if self.cycles == 0 {
            0.0
        } else {
            self.packets as f64 / self.cycles as f64
        }
    }
}

/// A program's generated pipeline under Verilator.
pub struct EhdlRtl {
    program: String,
    executable: PathBuf,
    /// Maps with a block in the module, by index in the object.
    blocks: BTreeSet<u32>,
    /// The userspace view: what the blocks are loaded with and read back into.
    maps: Maps,
    cpu: usize,
    figures: Figures,
    pipeline: Pipeline,
    /// Results of a batch not handed out yet by [`EhdlRtl::run_packet`], with the packet and context they belong to.
    queued: VecDeque<(PacketIn, PacketOut)>,
    handed: usize,
    totals: Totals,
    last_redirect: Option<(Option<usize>, u64)>,
    /// The route table (`Config::routes`) as host-port writes, for a program that calls `bpf_fib_lookup`.
    fib: Vec<tb::HostWrite>,
    /// The records read back from the ring buffers' blocks.
    rings: host::Rings,
    /// The generated module, its build and where it is cached: a waveform needs it built again with tracing.
    text: String,
    variant: Variant,
    paths: EhdlPaths,
    /// The waveform asked for with [`EhdlRtl::set_vcd`].
    vcd: Option<Recording>,
}

/// A waveform being recorded over the batches that hold its packets.
struct Recording {
    request: VcdRequest,
    scale: Timescale,
    /// The model built with tracing.
    executable: PathBuf,
    /// The time the next piece starts at, once a first piece is written.
    next: Option<u64>,
}

impl EhdlRtl {
    /// Generates and builds the pipeline of `program` (a name or section, `None` when the object has one) at
    /// `options.data_width`, with the maps `spec` defines, configured like the reference machine by `config` (CPUs
    /// per-CPU maps show, the CPU whose copy the pipeline holds).
    pub fn new(
        spec: &ObjectSpec,
        program: Option<&str>,
        config: &Config,
        options: &Options,
        paths: &EhdlPaths,
    ) -> Result<EhdlRtl, EhdlRtlError> {
        let Some(chosen) = spec.program(program) else {
            return Err(EhdlRtlError::Program(match program {
                Some(p) => format!("no program {p:?} in the object"),
                None => "the object has several programs: choose one".into(),
            }));
        };
        let dw = options.data_width;
        if !(128..=512).contains(&dw) || !dw.is_multiple_of(64) {
            return Err(EhdlRtlError::DataWidth(dw));
        }
        let pipeline = hwxdp_ehdl::compile_object(chosen, &spec.programs, &spec.maps, options)?;
        let (text, figures) = generate_with(&pipeline, &spec.maps, TOP, options.hazards)?;
        let mut maps = Maps::new(&spec.maps, config.possible_cpus)?;
        maps.set_cpu(config.cpu);
        let fib = if calls_fib(&pipeline) {
            fib_table_writes(&config.routes)
                .map_err(|why| EhdlRtlError::Program(format!("{}: {why}", chosen.name)))?
                .into_iter()
                .map(|(addr, data, mask)| tb::HostWrite {
                    map: fib_block(),
                    addr,
                    data,
                    mask,
                })
                .collect()
        } else {
            Vec::new()
        };
        // LRU blocks size their eviction batches for the possible CPUs, as the kernel's maps on this machine do.
        let params: Vec<(&'static str, u64)> = if text.contains(hwxdp_ehdl::verilog::POSSIBLE_CPUS)
        {
            vec![(
                hwxdp_ehdl::verilog::POSSIBLE_CPUS,
                config.possible_cpus as u64,
            )]
        } else {
            Vec::new()
        };
        let variant = Variant {
            params,
            trace: false,
        };
        let model = model::build_model(&text, &chosen.name, paths, &variant)?;
        Ok(EhdlRtl {
            program: chosen.name.clone(),
            executable: model.executable,
            blocks: hwxdp_ehdl::verilog::block_maps(&pipeline, &spec.maps),
            maps,
            cpu: config.cpu,
            figures,
            pipeline,
            queued: VecDeque::new(),
            handed: 0,
            totals: Totals::default(),
            last_redirect: None,
            fib,
            rings: host::Rings::default(),
            text,
            variant,
            paths: paths.clone(),
            vcd: None,
        })
    }

    /// Records packets `request.packets` (counted from 0 over every batch, in the order they run) into
    /// `request.path` as a VCD waveform, with one period of `request.clock_mhz` per cycle from time 0: from the cycle
    /// the first of them is offered to the pipeline to the cycle the last one's last beat leaves it. Creates the
    /// file's directory and builds the module again with waveform support (a model of its own in the cache; the
    /// batches without recorded packets still run on the first). A range over several batches gives one waveform,
    /// the batches' pieces one after the other.
    pub fn set_vcd(&mut self, request: VcdRequest) -> Result<(), EhdlRtlError> {
        let scale = request.prepare()?;
        let traced = Variant {
            trace: true,
            ..self.variant.clone()
        };
        let model = model::build_model(&self.text, &self.program, &self.paths, &traced)?;
        self.vcd = Some(Recording {
            request,
            scale,
            executable: model.executable,
            next: None,
        });
        Ok(())
    }

    /// The program's name.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The generated module's figures (stages, latency, stall checks, flip-flops).
    pub fn figures(&self) -> &Figures {
        &self.figures
    }

    /// The pipeline IR the module was generated from.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// Figures of every batch so far.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// The maps with a block in the module, by index.
    pub fn blocks(&self) -> &BTreeSet<u32> {
        &self.blocks
    }

    /// The records ring buffer `map`'s block has received over the batches run so far and not handed out yet,
    /// oldest first (a batch's records cannot be told apart by packet).
    pub fn ringbuf_records(&mut self, map: usize) -> Vec<Vec<u8>> {
        self.rings.records.remove(&(map as u32)).unwrap_or_default()
    }

    /// Where the last packet handed out by [`EhdlRtl::run_packet`] was redirected.
    pub fn last_redirect(&self) -> Option<(Option<usize>, u64)> {
        self.last_redirect
    }

    /// Streams `packets` (each with its `ingress_ifindex` and `rx_queue_index`) back to back through the pipeline:
    /// the map blocks loaded from the userspace view first, read back into it after the last packet.
    pub fn run_batch(&mut self, packets: &[PacketIn]) -> Result<Batch, EhdlRtlError> {
        if packets.is_empty() {
            return Ok(Batch::default());
        }
        for (index, PacketIn { bytes, .. }) in packets.iter().enumerate() {
            if bytes.is_empty() || bytes.len() > MAX_PACKET {
                return Err(EhdlRtlError::Packet {
                    index,
                    why: format!(
                        "{} bytes; the eHDL simulation takes 1 to {MAX_PACKET}",
                        bytes.len()
                    ),
                });
            }
        }
        let mut writes = self.fib.clone();
        writes.extend(self.rings.frees());
        writes.extend(host::load(
            &mut self.maps,
            &self.blocks,
            self.cpu,
            &self.pipeline.tail_targets,
        )?);
        let dumps = host::dumps(self.maps.specs(), &self.blocks);
        let waves = self.waves(packets.len() as u64);
        let executable = match (&waves, &self.vcd) {
            (Some(_), Some(r)) => &r.executable,
            _ => &self.executable,
        };
        let printed = tb::run(
            executable,
            tb::input(&writes, &dumps, packets, waves.as_ref()),
            &self.program,
        )?;
        let output = |why: String| EhdlRtlError::Output {
            program: self.program.clone(),
            why,
        };
        if printed.packets.len() != packets.len() {
            return Err(output(format!(
                "{} packets out of {} in",
                printed.packets.len(),
                packets.len()
            )));
        }
        host::store(
            &mut self.maps,
            &self.blocks,
            self.cpu,
            &printed.dumps,
            &mut self.rings,
        )
        .map_err(output)?;
        if let (Some(w), Some(r)) = (&waves, self.vcd.as_mut()) {
            let end = printed
                .vcd_end
                .ok_or_else(|| output("no waveform end time after a recording".into()))?;
            if r.next.is_some() {
                crate::vcd::append(&r.request.path, &w.path)?;
            }
            r.next = Some(end + r.scale.half);
        }
        let t = &mut self.totals;
        if t.batches == 0 {
            t.latency = printed.latency;
        }
        t.batches += 1;
        t.packets += packets.len() as u64;
        t.cycles += printed.cycles;
        t.beats += printed.beats;
        t.stall_cycles += printed.stalls;
        t.flushes += printed.flushes;
        Ok(Batch {
            packets: printed
                .packets
                .into_iter()
                .map(|(verdict, dest, bytes)| PacketOut {
                    verdict,
                    redirect: redirect(dest),
                    bytes,
                })
                .collect(),
            cycles: printed.cycles,
            latency: printed.latency,
            beats: printed.beats,
            stall_cycles: printed.stalls,
            flushes: printed.flushes,
        })
    }

    /// The waveform piece of the next batch of `n` packets: the recorded packets among them, if any.
    fn waves(&self, n: u64) -> Option<tb::Waves> {
        let r = self.vcd.as_ref()?;
        let base = self.totals.packets;
        let first = r.request.packets.start.max(base);
        let end = r.request.packets.end.min(base + n);
        if first >= end {
            return None;
        }
        // The first piece is the waveform itself; a later one goes to a file beside it and is appended.
        let path = match r.next {
            None => r.request.path.clone(),
            Some(_) => {
                let mut part = r.request.path.clone().into_os_string();
                part.push(format!(".{}.part", std::process::id()));
                PathBuf::from(part)
            }
        };
        Some(tb::Waves {
            first: first - base,
            end: end - base,
            unit: r.scale.unit,
            half: r.scale.half,
            start: r.next.unwrap_or(0),
            path,
        })
    }

    /// Runs `packets` as one batch and keeps the results for [`EhdlRtl::run_packet`], which must then be given the
    /// same packets in the same order.
    pub fn queue(&mut self, packets: Vec<PacketIn>) -> Result<(), EhdlRtlError> {
        let batch = self.run_batch(&packets)?;
        self.queued.extend(packets.into_iter().zip(batch.packets));
        Ok(())
    }

    /// Hands out the next queued result for the packet in `buff` (which must be the next one queued, with the same
    /// context): `buff` holds the packet as the pipeline left it afterwards.
    pub fn run_packet(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Result<Verdict, EhdlRtlError> {
        let index = self.handed;
        let Some((queued, out)) = self.queued.pop_front() else {
            return Err(EhdlRtlError::Queue {
                index,
                why: "no packet is queued: the eHDL pipeline runs batches, queue them first".into(),
            });
        };
        if queued.bytes != buff.data() || queued.md != *md {
            return Err(EhdlRtlError::Queue {
                index,
                why: "its bytes or context differ".into(),
            });
        }
        self.handed += 1;
        buff.set_output(&out.bytes, 0)
            .map_err(|e| EhdlRtlError::Packet {
                index,
                why: format!("the pipeline's output: {e}"),
            })?;
        self.last_redirect = out.redirect;
        Ok(Verdict::from_retval(out.verdict))
    }
}

/// Whether the pipeline calls `bpf_fib_lookup`, whose block takes the route table.
fn calls_fib(p: &Pipeline) -> bool {
    p.ops
        .iter()
        .any(|o| matches!(o.kind, OpKind::Helper { id: 69, .. }))
}

/// `m_axis_tdest_o` `{valid, is_map, map[7:0], key or ifindex[31:0]}` as the reference machine's redirect.
fn redirect(dest: u64) -> Option<(Option<usize>, u64)> {
    if dest >> 41 & 1 == 0 {
        return None;
    }
    let map = (dest >> 40 & 1 == 1).then_some((dest >> 32 & 0xff) as usize);
    Some((map, dest & 0xffff_ffff))
}

impl MapStore for EhdlRtl {
    fn specs(&self) -> &[MapSpec] {
        self.maps.specs()
    }

    fn possible_cpus(&self) -> usize {
        self.maps.possible_cpus()
    }

    fn lookup(&mut self, map: usize, key: &[u8]) -> Result<Option<Vec<u8>>, MapError> {
        self.maps.lookup(map, key)
    }

    fn update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) -> Result<(), MapError> {
        self.maps.update(map, key, value, flags)
    }

    fn delete(&mut self, map: usize, key: &[u8]) -> Result<(), MapError> {
        self.maps.delete(map, key)
    }

    fn entries(&mut self, map: usize) -> Result<Entries, MapError> {
        self.maps.entries(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_targets_decode_like_the_reference_machine() {
        assert_eq!(redirect(0), None);
        assert_eq!(redirect(1 << 41 | 7), Some((None, 7)));
        assert_eq!(
            redirect(1 << 41 | 1 << 40 | 3 << 32 | 5),
            Some((Some(3), 5))
        );
    }
}
