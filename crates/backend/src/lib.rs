//! The one interface every way of running an XDP program implements, the kernel included, and the registry that maps
//! `--backend NAME` to a constructor.
//!
//! A backend is created from the object, the chosen program and the run configuration ([`Setup`]); it takes packets
//! in order ([`Backend::run`]: one at a time, or the whole trace as a batch when [`Capabilities::whole_trace`] says
//! so) and gives back, per packet, what the program did ([`Ran`]) and the figures it has. It exposes its maps as a
//! [`MapStore`] and declares its [`Capabilities`], so commands ask instead of matching on names: `run`, `verify`,
//! `bench` and `stf` know no backend by name.
//!
//! Adding a backend is one module with a [`registry::Entry`] and one line in [`registry::REGISTRY`].

mod ebpflow;
mod ebpflow_rtl;
mod ehdl;
mod error;
mod hxdp;
mod interp;
mod kernel;
pub mod registry;
mod setup;
mod warp;

pub use ebpflow::{NicOptions, Swap};
pub use error::BackendError;
pub use registry::{find, Entry, REGISTRY};
pub use setup::{Options, Setup, Vcd};

use hwxdp_maps::MapStore;
use hwxdp_xdp::{Coverage, Verdict, XdpMd};
use std::time::{Duration, Instant};

/// One packet handed to a backend: its bytes (from `data`; the metadata area starts empty), the `struct xdp_md`
/// fields it arrives with and its arrival time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    /// The frame, Ethernet header first. Commands hand only frames an XDP buffer can hold.
    pub bytes: Vec<u8>,
    /// `ingress_ifindex` and `rx_queue_index`.
    pub md: XdpMd,
    /// Arrival time in nanoseconds (the virtual clock's reading for this packet).
    pub time_ns: u64,
}

/// Where `bpf_redirect` or `bpf_redirect_map` sent a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// The map (index in the object) of `bpf_redirect_map`, `None` for `bpf_redirect`.
    pub map: Option<usize>,
    /// The key into that map, or the ifindex of `bpf_redirect`.
    pub key: u64,
}

/// A record a program emitted into a ring buffer, or a sample into a perf event array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The ring buffer or perf event array map, by index in the object.
    pub map: usize,
    /// The record's bytes (a perf sample's raw bytes, padded with zeros as the kernel pads them).
    pub bytes: Vec<u8>,
    /// The CPU whose perf ring the sample went to; `None` for ring buffer records.
    pub cpu: Option<u32>,
    /// Where in [`Record::bytes`] a perf sample's packet bytes (`BPF_F_CTXLEN_MASK`) are, when the backend knows
    /// (the kernel's samples do not say); not compared.
    pub packet: Option<std::ops::Range<usize>>,
}

/// The instruction a packet's run ended at: the program (index in the object) and its slot index (the numbering of
/// `hwxdp disasm` and the kernel, an `lddw` taking two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    /// Program index in the object.
    pub program: usize,
    /// Slot index in that program.
    pub slot: u32,
}

/// What one packet did on a backend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ran {
    /// The program's return value (0 when it was stopped).
    pub retval: u32,
    /// The packet as the program left it: the metadata area, then the data.
    pub output: Vec<u8>,
    /// Bytes of metadata at the start of [`Ran::output`].
    pub meta_len: usize,
    /// Where the packet was redirected, when the backend knows (the kernel's test run does not say).
    pub redirect: Option<Redirect>,
    /// Ring buffer records the packet emitted (empty on backends without [`Capabilities::records_per_packet`]: see
    /// [`Backend::drain_records`]).
    pub records: Vec<Record>,
    /// Why the program was stopped, if it was.
    pub fault: Option<String>,
    /// Instructions executed (software backends).
    pub insns: Option<u64>,
    /// A hash of the path taken (software backends).
    pub path: Option<u64>,
    /// Clock cycles the packet took (processor models and RTL).
    pub cycles: Option<u64>,
    /// Where the program exited, when the backend knows.
    pub exit: Option<Site>,
    /// Lines written with `bpf_trace_printk`.
    pub printk: Vec<String>,
    /// Slot indices of the executed instructions as (program, slot), with [`Capabilities::insn_trace`] and
    /// `Config::record_trace`.
    pub trace: Vec<(u16, u32)>,
}

impl Ran {
    /// The verdict of the return value.
    pub fn verdict(&self) -> Verdict {
        Verdict::from_retval(self.retval)
    }

    /// The packet data, without the metadata area.
    pub fn data(&self) -> &[u8] {
        self.output.get(self.meta_len..).unwrap_or(&[])
    }
}

/// What a backend can report, so that a command asks instead of matching on a name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Instructions executed and path hashes per packet.
    pub instructions: bool,
    /// The executed instruction slots of every packet (`--insn-trace`).
    pub insn_trace: bool,
    /// Per-instruction coverage ([`Backend::coverage`]).
    pub coverage: bool,
    /// Clock cycles per packet.
    pub cycles: bool,
    /// A waveform of the hardware's signals (`--vcd`).
    pub waves: bool,
    /// The backend wants the whole trace in one [`Backend::run`] call (a pipeline streams it back to back).
    pub whole_trace: bool,
    /// Ring buffer records are attributed to the packet that wrote them.
    pub records_per_packet: bool,
    /// Redirect targets are known.
    pub redirects: bool,
}

/// A figure of the backend as a whole (the hardware's size, a pipeline's throughput), for reports.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Figure {
    /// The key in `stats.json` and JSON reports, `snake_case`.
    pub key: &'static str,
    /// How a report line names it.
    pub label: &'static str,
    /// The value.
    pub value: f64,
}

/// The figures of a backend over everything it has run, beside the per-packet ones the commands add up.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Figures in the order a report shows them (lanes, bundles, stages, latency, stalls, ...).
    pub figures: Vec<Figure>,
    /// Packets per clock cycle of a pipeline (`None` for processors, whose rate follows from cycles per packet).
    pub packets_per_cycle: Option<f64>,
}

impl Summary {
    /// Adds a figure.
    pub fn with(
        mut self,
        key: &'static str,
        label: &'static str,
        value: impl Into<f64>,
    ) -> Summary {
        self.figures.push(Figure {
            key,
            label,
            value: value.into(),
        });
        self
    }
}

/// How `bench` times a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Least wall-clock time to spend running the trace (it is repeated until then).
    pub min: Duration,
    /// Repetitions of each sampled packet, for backends that time packets one by one (the kernel).
    pub repeat: u32,
    /// Distinct packets of the trace sampled by such backends, spread evenly over it.
    pub samples: usize,
}

/// A way of running one XDP program over packets: the reference machine, the kernel, the hardware models.
pub trait Backend {
    /// The name on the command line and in reports.
    fn name(&self) -> &'static str;

    /// What the backend can report.
    fn capabilities(&self) -> Capabilities;

    /// Runs `packets` in order, each starting from the maps the one before left; the results come back in the same
    /// order. A fault of the program is a result ([`Ran::fault`]); an error means the backend could not run them.
    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError>;

    /// The maps, as userspace sees them, in the object's order.
    fn maps(&mut self) -> &mut dyn MapStore;

    /// Ring buffer records not handed out with a packet (a batch backend's), oldest first, consumed.
    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        Ok(Vec::new())
    }

    /// The figures over every packet run so far.
    fn summary(&self) -> Summary {
        Summary::default()
    }

    /// Instruction coverage of every program, with [`Capabilities::coverage`].
    fn coverage(&self) -> Option<Vec<Coverage>> {
        None
    }

    /// Ends the run: closes waveforms, stops simulators. Results stay readable.
    fn finish(&mut self) -> Result<(), BackendError> {
        Ok(())
    }

    /// Wall-clock nanoseconds per packet over `packets`, run again and again until `timing.min` has passed. Later
    /// passes start from the maps the earlier left behind.
    fn time(&mut self, packets: &[Packet], timing: &Timing) -> Result<f64, BackendError> {
        repeat_until(timing.min, packets.len(), || self.run(packets).map(drop))
    }
}

/// Runs `pass` (which handles `per_pass` packets) until `min` has passed, at least once; the nanoseconds per packet.
pub(crate) fn repeat_until(
    min: Duration,
    per_pass: usize,
    mut pass: impl FnMut() -> Result<(), BackendError>,
) -> Result<f64, BackendError> {
    let (mut runs, mut elapsed) = (0u64, Duration::ZERO);
    while elapsed < min || runs == 0 {
        let start = Instant::now();
        pass()?;
        elapsed += start.elapsed();
        runs += 1;
    }
    Ok(elapsed.as_nanos() as f64 / (runs as f64 * per_pass.max(1) as f64))
}

/// `BPF_MAP_TYPE_RINGBUF`.
pub const RINGBUF: u32 = 27;

/// The records of ring buffers `rings`, each map's as `read` consumes them, in map order.
pub(crate) fn collect_records<E>(
    rings: &[usize],
    mut read: impl FnMut(usize) -> Result<Vec<Vec<u8>>, E>,
) -> Result<Vec<Record>, E> {
    let mut records = Vec::new();
    for &map in rings {
        records.extend(read(map)?.into_iter().map(|bytes| Record {
            map,
            bytes,
            cpu: None,
            packet: None,
        }));
    }
    Ok(records)
}

/// A backend's ring buffers and when its consumer reads them: after every packet (a consumer that keeps up, so
/// records are attributed to packets) or once after the trace (a consumer that sleeps through it, so rings can
/// fill up and programs take their ring-full paths).
pub(crate) struct Rings {
    all: Vec<usize>,
    perf: Vec<usize>,
    live: bool,
}

impl Rings {
    /// The rings of `setup`'s object, read as its options say.
    pub(crate) fn of(setup: &Setup) -> Rings {
        Rings {
            all: ring_buffers(&setup.spec.maps),
            perf: perf_event_arrays(&setup.spec.maps),
            live: !setup.options.rings_after_trace,
        }
    }

    /// The rings to read after each packet.
    pub(crate) fn per_packet(&self) -> &[usize] {
        if self.live {
            &self.all
        } else {
            &[]
        }
    }

    /// Every ring.
    pub(crate) fn all(&self) -> &[usize] {
        &self.all
    }

    /// The perf event arrays to read after each packet.
    pub(crate) fn perf_per_packet(&self) -> &[usize] {
        if self.live {
            &self.perf
        } else {
            &[]
        }
    }

    /// Every perf event array.
    pub(crate) fn perf_all(&self) -> &[usize] {
        &self.perf
    }

    /// Whether records are read after each packet.
    pub(crate) fn live(&self) -> bool {
        self.live
    }
}

/// The ring buffer maps of an object, by index.
pub fn ring_buffers(maps: &[hwxdp_object::MapSpec]) -> Vec<usize> {
    (0..maps.len())
        .filter(|&m| maps[m].map_type == RINGBUF)
        .collect()
}

/// `BPF_MAP_TYPE_PERF_EVENT_ARRAY`.
pub const PERF_EVENT_ARRAY: u32 = 4;

/// The perf event arrays of an object, by index.
pub fn perf_event_arrays(maps: &[hwxdp_object::MapSpec]) -> Vec<usize> {
    (0..maps.len())
        .filter(|&m| maps[m].map_type == PERF_EVENT_ARRAY)
        .collect()
}

/// The maps a program writes records into that a consumer reads: ring buffers and perf event arrays, by index.
pub fn record_maps(maps: &[hwxdp_object::MapSpec]) -> Vec<usize> {
    (0..maps.len())
        .filter(|&m| matches!(maps[m].map_type, RINGBUF | PERF_EVENT_ARRAY))
        .collect()
}

/// The samples of perf event arrays `arrays`, each as `read` consumes it (CPU by CPU), in map order.
pub(crate) fn collect_samples<E>(
    arrays: &[usize],
    mut read: impl FnMut(usize) -> Result<Vec<hwxdp_maps::perf::Sample>, E>,
) -> Result<Vec<Record>, E> {
    let mut records = Vec::new();
    for &map in arrays {
        records.extend(read(map)?.into_iter().map(|s| Record {
            map,
            bytes: s.bytes,
            cpu: Some(s.cpu),
            packet: (!s.packet.is_empty()).then_some(s.packet),
        }));
    }
    Ok(records)
}
