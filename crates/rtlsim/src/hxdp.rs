//! The whole hXDP module (`rtl/sephirot/hxdp.sv`) under Verilator: `--backend hxdp-rtl` in `hwxdp_backend`.
//!
//! [`HxdpRtl::new`] builds (or takes from the cache) the module with its image's parameter set ([`Params::for_image`]:
//! one fixed set but for a CAM sized to the LRU_HASH and LPM_TRIE maps), refuses an image that does not fit it, starts
//! the harness (`sim/hxdp/hxdp_harness.cpp`, protocol in `docs/hxdp-module.md` "Harness protocol") and loads the image:
//! instruction memory, program entries, map definitions, then the maps' initial contents through the host port.
//! Packets go through the harness one at a time; verdicts, faults, cycles, redirect targets and the packet bytes come
//! back.
//!
//! The maps live in the hardware. [`MapStore`] on [`HxdpRtl`] writes through the host port (so `--maps` preloads
//! reach the hardware before the first packet) and reads a mirror pulled from the hardware slot by slot after packets
//! ran, so dumps and comparisons see the hardware's state. The hardware is one CPU: a per-CPU map holds CPU 0's
//! values, and the mirror keeps the other CPUs' values as userspace wrote them.

mod error;
mod harness;
mod load;
mod mirror;
mod params;
mod paths;
mod protocol;

pub use error::HxdpRtlError;
pub use params::{layout, read_back, Layout, Needs, Params, MIN_CAM_ENTRIES};
pub use paths::RtlPaths;
pub use protocol::{Answer, Command, PacketOut, ParseError};
// The waveform request is the crate's, shared with the eHDL backend; it stays reachable here.
pub use crate::vcd::{parse_packet_range, VcdRequest};

use std::collections::BTreeMap;
use std::time::Duration;

use hwxdp_hxdp::isa::{encode_op, Image, NO_ENTRY};
use hwxdp_hxdp::CoreStats;
use hwxdp_maps::abi::map_type;
use hwxdp_maps::{MapStore, Maps};
use hwxdp_object::{MapSpec, ObjectSpec};
use hwxdp_xdp::fib::RouteTable;
use hwxdp_xdp::{Clock, Config, Verdict, XdpBuff, XdpMd};

use crate::vcd::Timescale;
use harness::Harness;
use load::{check_image, program_order, route_commands};
use mirror::syscall_value_size;

/// The module's top and the name of its executable (`hxdp_sim`).
pub const TOP: &str = "hxdp";

/// How long the harness may take to answer one command before it is killed. A packet runs at most
/// [`hwxdp_hxdp::timing::BUNDLE_BUDGET`] bundles, a few seconds of simulation; this leaves a loaded machine room.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

/// The mirror of one map the hardware holds: its entries in the syscall view.
type Mirror = BTreeMap<Vec<u8>, Vec<u8>>;

/// The hXDP module running an image.
pub struct HxdpRtl {
    harness: Harness,
    params: Params,
    image: Image,
    /// Map definitions in object order.
    specs: Vec<MapSpec>,
    possible_cpus: usize,
    /// Maps the hardware cannot be read back from (program arrays, device maps): userspace's writes, kept here too.
    reference: Maps,
    /// The hardware's index of each object program ([`program_order`]).
    order: Vec<u32>,
    /// Maps read back from the hardware (`None` for the others), valid unless `stale`.
    mirror: Vec<Option<Mirror>>,
    stale: bool,
    clock: Clock,
    time_ns: u64,
    packets: u64,
    last_cycles: u64,
    last_fault: Option<String>,
    last_redirect: Option<(Option<usize>, u64)>,
    stats: CoreStats,
    vcd: Option<(VcdRequest, Timescale)>,
    vcd_on: bool,
}

impl HxdpRtl {
    /// Builds the module for `image` (compiled from `spec`, to run `program`, a name or section, `None` when the
    /// object has one), starts its harness and loads the image and the maps' initial contents. The machine is
    /// configured as `config` configures the reference machine (CPUs per-CPU maps show, the clock).
    pub fn new(
        image: Image,
        spec: &ObjectSpec,
        program: Option<&str>,
        config: &Config,
        paths: &RtlPaths,
    ) -> Result<HxdpRtl, HxdpRtlError> {
        HxdpRtl::new_on(image, spec, program, config, |params| paths.model(params))
    }

    /// [`HxdpRtl::new`] on the model `model` builds for the image's parameters (the module alone, or a top around
    /// it whose harness speaks the same protocol: `crate::warp_hxdp`).
    pub(crate) fn new_on(
        image: Image,
        spec: &ObjectSpec,
        program: Option<&str>,
        config: &Config,
        model: impl FnOnce(&Params) -> Result<crate::Model, HxdpRtlError>,
    ) -> Result<HxdpRtl, HxdpRtlError> {
        let entry = check_image(&image, spec, program)?;
        // The maps module has one value read port and one write port: the compiler schedules for that, and an image
        // that breaks the rule would compute wrong results in the hardware rather than fail.
        hwxdp_hxdp::check_value_ports(&image)?;
        // Likewise the core's one divider, shared by the lanes.
        hwxdp_hxdp::check_divider(&image)?;
        let needs = Needs::of(&image, &config.routes);
        let params =
            Params::for_image(image.lanes, &needs).with_possible_cpus(config.possible_cpus);
        needs.check(&params)?;
        let reference = Maps::new(&spec.maps, config.possible_cpus)?;
        let model = model(&params)?;
        let harness = Harness::spawn(&model.executable, ANSWER_TIMEOUT)?;
        let mirror = image
            .maps
            .iter()
            .map(|m| read_back(m.map_type).then(Mirror::new))
            .collect();
        let mut rtl = HxdpRtl {
            harness,
            params,
            specs: spec.maps.clone(),
            possible_cpus: config.possible_cpus,
            reference,
            mirror,
            stale: false,
            order: program_order(image.entries.len(), entry),
            clock: config.clock,
            time_ns: 0,
            packets: 0,
            last_cycles: 0,
            last_fault: None,
            last_redirect: None,
            stats: CoreStats::default(),
            vcd: None,
            vcd_on: false,
            image,
        };
        rtl.load(&config.routes)?;
        Ok(rtl)
    }

    /// Writes the image, the map definitions and the route table, then the maps' initial contents (global data).
    fn load(&mut self, routes: &RouteTable) -> Result<(), HxdpRtlError> {
        let mut commands = Vec::new();
        for (b, bundle) in self.image.bundles.iter().enumerate() {
            let mut slots = vec![0u64; self.image.lanes];
            for (lane, op) in bundle.ops() {
                let [low, high] = encode_op(op);
                slots[lane] = low;
                if op.is_lddw() {
                    slots[lane + 1] = high;
                }
            }
            for (lane, slot) in slots.into_iter().enumerate() {
                commands.push(Command::Imem {
                    bundle: b,
                    lane,
                    slot,
                });
            }
        }
        // Program 0 is where packets start: the chosen program is there (`program_order`).
        for (idx, &e) in self.image.entries.iter().enumerate() {
            if e != NO_ENTRY {
                commands.push(Command::Prog {
                    idx: self.order[idx] as usize,
                    entry: e,
                });
            }
        }
        for (idx, m) in self.image.maps.iter().enumerate() {
            commands.push(Command::Map {
                idx,
                map_type: m.map_type,
                key_size: m.key_size,
                value_size: m.value_size,
                max_entries: m.max_entries,
                flags: m.flags,
            });
        }
        commands.push(Command::MapsDone);
        let route_lines = route_commands(routes);
        commands.extend(route_lines.iter().map(|l| Command::Raw(l)));
        for answer in self.harness.batch(&commands)? {
            expect_ok(answer, "load")?;
        }
        // What the maps hold now is known without reading them back: zeroed arrays, empty hashes and tries.
        for (m, spec) in self.specs.iter().enumerate() {
            let Some(mirror) = self.mirror[m].as_mut() else {
                continue;
            };
            mirror.clear();
            if matches!(spec.map_type, map_type::ARRAY | map_type::PERCPU_ARRAY) {
                let zero = vec![0u8; syscall_value_size(spec, self.possible_cpus)];
                for i in 0..spec.max_entries {
                    mirror.insert(i.to_le_bytes().to_vec(), zero.clone());
                }
            }
        }
        self.stale = false;
        for (m, s) in self.specs.clone().iter().enumerate() {
            if let Some(init) = &s.initial_value {
                self.update(m, &0u32.to_le_bytes(), init, 0)?;
            }
        }
        Ok(())
    }

    /// Records packets `request.packets` into `request.path` as a VCD waveform (its directory created now), from
    /// the cycle the first of them arrives to the cycle the last one's result is out, with one period of
    /// `request.clock_mhz` per cycle from time 0.
    pub fn set_vcd(&mut self, request: VcdRequest) -> Result<(), HxdpRtlError> {
        let scale = request.prepare()?;
        self.vcd = Some((request, scale));
        Ok(())
    }

    /// Sends `lines` (commands the top's harness adds to the protocol), each answered "ok".
    pub(crate) fn raw_batch(&mut self, lines: &[String], what: &str) -> Result<(), HxdpRtlError> {
        let commands: Vec<Command> = lines.iter().map(|l| Command::Raw(l)).collect();
        for answer in self.harness.batch(&commands)? {
            expect_ok(answer, what)?;
        }
        Ok(())
    }

    /// Sends `line` (a protocol command the driver has no method for) and gives its answer; the maps' mirror is
    /// read back again afterwards, as after a packet.
    pub(crate) fn raw_call(&mut self, line: &str) -> Result<Answer, HxdpRtlError> {
        self.stale = true;
        self.harness.call(&Command::Raw(line))
    }

    /// The parameters the module was built with.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The image the module runs.
    pub fn image(&self) -> &Image {
        &self.image
    }

    /// Sets the arrival time of the next packet, for [`Clock::Virtual`] (the monotonic clock reads the host's).
    pub fn set_time(&mut self, ns: u64) {
        self.time_ns = ns;
    }

    /// Cycle figures so far (`bundles` stays 0: the module does not count them).
    pub fn stats(&self) -> &CoreStats {
        &self.stats
    }

    /// Why the last packet was stopped, if it was.
    pub fn last_fault(&self) -> Option<&str> {
        self.last_fault.as_deref()
    }

    /// Cycles the last packet took, as the module counted them.
    pub fn last_cycles(&self) -> u64 {
        self.last_cycles
    }

    /// Where the last packet was redirected: (map index or `None` for `bpf_redirect`, key or ifindex).
    pub fn last_redirect(&self) -> Option<(Option<usize>, u64)> {
        self.last_redirect
    }

    /// The module's packet counters: received, passed/transmitted/redirected, dropped/aborted/refused.
    pub fn counters(&mut self) -> Result<(u64, u64, u64), HxdpRtlError> {
        match self.harness.call(&Command::Counters)? {
            Answer::Counters { rx, tx, drop } => Ok((rx, tx, drop)),
            other => Err(unexpected("counters", other)),
        }
    }

    /// The records the program wrote to RINGBUF `map` since the last drain, oldest first (the helper module's ring).
    pub fn ringbuf_drain(&mut self, map: usize) -> Result<Vec<Vec<u8>>, HxdpRtlError> {
        match self.harness.call(&Command::Ringbuf { map })? {
            Answer::Records(records) => Ok(records),
            other => Err(unexpected("ringbuf", other)),
        }
    }

    /// Runs one packet in `buff`, which holds the packet as it left afterwards; a fault gives `XDP_ABORTED` and a
    /// message in [`HxdpRtl::last_fault`].
    pub fn run_packet(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Result<Verdict, HxdpRtlError> {
        let index = self.packets;
        if let Some((v, scale)) = &self.vcd {
            if index == v.packets.start {
                let command = Command::Vcd {
                    unit: scale.unit,
                    half: scale.half,
                    path: &v.path,
                };
                let answer = self.harness.call(&command)?;
                expect_ok(answer, "vcd")?;
                self.vcd_on = true;
            }
        }
        let time_ns = match self.clock {
            Clock::Virtual => self.time_ns,
            Clock::Monotonic => monotonic_ns(),
        };
        let answer = self.harness.call(&Command::Packet {
            ifindex: md.ingress_ifindex,
            rxq: md.rx_queue_index,
            time_ns,
            bytes: buff.data(),
        })?;
        self.stale = true;
        self.packets += 1;
        let Answer::Out(out) = answer else {
            return Err(unexpected("packet", answer));
        };
        buff.set_output(&out.bytes, 0).map_err(|e| {
            HxdpRtlError::Image(format!("packet {index}: the module's output: {e}"))
        })?;
        if self.vcd_on
            && self
                .vcd
                .as_ref()
                .is_some_and(|(v, _)| self.packets >= v.packets.end)
        {
            self.vcd_off()?;
        }
        self.record(&out);
        Ok(if out.fault {
            Verdict::from_retval(0)
        } else {
            Verdict::from_retval(out.verdict)
        })
    }

    fn record(&mut self, out: &PacketOut) {
        self.last_cycles = out.cycles;
        self.last_redirect = out.redirect;
        self.last_fault = out.fault.then(|| {
            "the hXDP module stopped the program (fault flag of the result): an access out of bounds, an invalid op \
             or a helper it does not implement"
                .to_string()
        });
        let s = &mut self.stats;
        s.min = if s.packets == 0 {
            out.cycles
        } else {
            s.min.min(out.cycles)
        };
        s.max = s.max.max(out.cycles);
        s.packets += 1;
        s.cycles += out.cycles;
    }

    /// Stops the waveform, closing its file.
    fn vcd_off(&mut self) -> Result<(), HxdpRtlError> {
        self.vcd_on = false;
        expect_ok(self.harness.call(&Command::VcdOff)?, "vcd_off")
    }

    /// Ends the harness: closes a waveform still being written, then quits. Dropping the backend does the same.
    pub fn finish(&mut self) -> Result<(), HxdpRtlError> {
        if self.vcd_on {
            self.vcd_off()?;
        }
        self.harness.quit();
        Ok(())
    }
}

fn expect_ok(answer: Answer, what: &str) -> Result<(), HxdpRtlError> {
    match answer {
        Answer::Ok => Ok(()),
        other => Err(unexpected(what, other)),
    }
}

fn unexpected(what: &str, answer: Answer) -> HxdpRtlError {
    HxdpRtlError::Protocol {
        command: what.to_string(),
        source: ParseError {
            line: format!("{answer:?}"),
            why: "not the answer this command has".into(),
        },
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid pointer. CLOCK_MONOTONIC is what the kernel's
    // bpf_ktime_get_ns reads, so `verify` compares like with like.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Drop for HxdpRtl {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
