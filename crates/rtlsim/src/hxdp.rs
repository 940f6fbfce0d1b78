//! The whole hXDP module (`rtl/sephirot/hxdp.sv`) under Verilator as a [`Backend`]: `--backend hxdp-rtl`.
//!
//! [`HxdpRtl::new`] builds (or takes from the cache) the module with one fixed parameter set ([`Params::for_lanes`]),
//! refuses an image that does not fit it, starts the harness (`sim/hxdp/hxdp_harness.cpp`, protocol in
//! `docs/hxdp-module.md` "Harness protocol") and loads the image: instruction memory, program entries, map
//! definitions, then the maps' initial contents through the host port. Packets go through the harness one at a time;
//! verdicts, faults, cycles, redirect targets and the packet bytes come back.
//!
//! The maps live in the hardware. [`MapStore`] on [`HxdpRtl`] writes through the host port (so `--maps` preloads
//! reach the hardware before the first packet) and reads a mirror pulled from the hardware slot by slot after packets
//! ran, so dumps and comparisons see the hardware's state. The hardware is one CPU: a per-CPU map holds CPU 0's
//! values, and the mirror keeps the other CPUs' values as userspace wrote them.

mod harness;
mod params;
mod protocol;

pub use params::{layout, read_back, Layout, Needs, Params};
pub use protocol::{Answer, Command, PacketOut, ParseError};

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hwxdp_hxdp::isa::{encode_op, Image, NO_ENTRY};
use hwxdp_hxdp::CoreStats;
use hwxdp_maps::abi::{errno, is_percpu, map_type};
use hwxdp_maps::{Entries, MapError, MapStore, Maps};
use hwxdp_object::{MapSpec, ObjectSpec};
use hwxdp_xdp::fib::{RouteKind, RouteTable};
use hwxdp_xdp::{Backend, BackendError, Clock, Config, Verdict, XdpBuff, XdpMd};

use crate::{build, BuildSpec, RtlError};
use harness::Harness;

/// The module's top and the name of its executable (`hxdp_sim`).
pub const TOP: &str = "hxdp";

/// How long the harness may take to answer one command before it is killed. A packet runs at most
/// [`hwxdp_hxdp::timing::BUNDLE_BUDGET`] bundles, a few seconds of simulation; this leaves a loaded machine room.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

/// Why the hXDP module could not be built, loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum HxdpRtlError {
    /// Verilator could not build the module (or is missing).
    #[error(transparent)]
    Build(#[from] RtlError),
    /// A source file the module needs is missing.
    #[error("{path} is missing: the hXDP module needs it")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The image needs more of something than the module is built with.
    #[error(
        "program too big for the hardware: it needs {need} {what}, the hXDP module is built with {param} = {have}"
    )]
    TooBig {
        /// The `hxdp.sv` parameter.
        param: &'static str,
        /// What it counts.
        what: &'static str,
        /// What the image needs.
        need: u64,
        /// What the module has.
        have: u64,
    },
    /// The image does not belong to the object, or the module cannot run it.
    #[error("image: {0}")]
    Image(String),
    /// The image has a bundle with two map-value loads or two stores: the maps module has one port of each.
    #[error(transparent)]
    Ports(#[from] hwxdp_hxdp::PortError),
    /// The maps could not be created as `BPF_MAP_CREATE` would.
    #[error(transparent)]
    Map(#[from] MapError),
    /// The harness executable could not be started.
    #[error("cannot start the hXDP harness {executable}: {source}")]
    Start {
        /// The executable.
        executable: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The harness answered `error ...`.
    #[error("hXDP harness refused {command:?}: {what}")]
    Refused {
        /// The command line.
        command: String,
        /// The harness's reason.
        what: String,
    },
    /// The harness printed something the protocol does not allow.
    #[error("hXDP harness, after {command:?}: {source}")]
    Protocol {
        /// The command line.
        command: String,
        /// What was wrong with the answer.
        source: ParseError,
    },
    /// The harness did not answer in time and was killed.
    #[error("hXDP harness gave no answer to {command:?} within {seconds} s (killed)")]
    Timeout {
        /// The command line.
        command: String,
        /// The time allowed.
        seconds: u64,
    },
    /// The harness exited (or crashed) while a command was outstanding.
    #[error("hXDP harness exited during {command:?}: {story}")]
    Exited {
        /// The command line.
        command: String,
        /// Exit status and last stderr lines.
        story: String,
    },
    /// A command after the harness had already failed.
    #[error("hXDP harness cannot run {command:?}: it failed earlier ({story})")]
    Dead {
        /// The command line.
        command: String,
        /// What happened then.
        story: String,
    },
    /// A `--vcd-packets` range that holds no packet.
    #[error("--vcd-packets {start}..{end}: the range holds no packet")]
    VcdRange {
        /// First packet.
        start: u64,
        /// One past the last.
        end: u64,
    },
}

/// Where the module's sources, the build cache and Verilator are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtlPaths {
    /// The repository's `rtl/` directory.
    pub rtl_root: PathBuf,
    /// The harness, `sim/hxdp/hxdp_harness.cpp`.
    pub harness: PathBuf,
    /// Cargo's target directory; the built module is cached under `rtlsim/`.
    pub target_dir: PathBuf,
    /// The Verilator program.
    pub verilator: PathBuf,
}

impl RtlPaths {
    /// The paths under repository root `root`, with `target/` as the cache and `verilator` from `PATH`.
    pub fn under(root: &Path) -> RtlPaths {
        RtlPaths {
            rtl_root: root.join("rtl"),
            harness: root.join("sim/hxdp/hxdp_harness.cpp"),
            target_dir: root.join("target"),
            verilator: PathBuf::from("verilator"),
        }
    }

    /// The paths of this checkout: the repository this crate was built from (or `HWXDP_ROOT`), the target directory
    /// `CARGO_TARGET_DIR` (relative to the root) or `target/`, and Verilator from `HWXDP_VERILATOR` or `PATH`.
    pub fn from_env() -> RtlPaths {
        let root = std::env::var_os("HWXDP_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
        let mut paths = RtlPaths::under(&root);
        if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
            paths.target_dir = root.join(dir);
        }
        if let Some(v) = std::env::var_os("HWXDP_VERILATOR") {
            paths.verilator = PathBuf::from(v);
        }
        paths
    }

    /// The Verilator build of the module with `params`: every Verilog file of `rtl/sephirot/` (the module's units),
    /// the harness, the parameters and waveform support.
    pub fn build_spec(&self, params: &Params) -> Result<BuildSpec, HxdpRtlError> {
        let dir = self.rtl_root.join("sephirot");
        for needed in [dir.join(format!("{TOP}.sv")), self.harness.clone()] {
            if !needed.is_file() {
                return Err(HxdpRtlError::Missing { path: needed });
            }
        }
        let listing = std::fs::read_dir(&dir).map_err(|source| RtlError::Io {
            action: "cannot list",
            path: dir.clone(),
            source,
        })?;
        let mut files: Vec<PathBuf> = listing
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("sv" | "vlt")))
            .filter_map(|p| p.file_name().map(|n| Path::new("sephirot").join(n)))
            .collect();
        // Waiver files first, then the units in a stable order (the cache key depends on it).
        files.sort_by_key(|p| (p.extension().is_some_and(|e| e != "vlt"), p.clone()));
        let mut spec = BuildSpec::new(TOP, &self.rtl_root, &self.harness, &self.target_dir);
        spec.sources = files;
        spec.verilator = self.verilator.clone();
        spec.flags = params.flags();
        // Waveforms are compiled in always, so one build serves runs with and without `--vcd`.
        spec.flags.push("--trace".into());
        Ok(spec)
    }
}

/// The `--vcd` request: a file and the packets whose simulation it records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VcdRequest {
    /// The waveform file.
    pub path: PathBuf,
    /// Packets (counted from 0 in the order they are run) recorded.
    pub packets: Range<u64>,
}

/// Parses `--vcd-packets`: `A..B` (B excluded), `A..=B`, or one packet `A`.
pub fn parse_packet_range(text: &str) -> Result<Range<u64>, String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("{s:?} is not a packet number"))
    };
    let range = if let Some((a, b)) = text.split_once("..=") {
        number(a)?..number(b)?.saturating_add(1)
    } else if let Some((a, b)) = text.split_once("..") {
        number(a)?..number(b)?
    } else {
        let a = number(text)?;
        a..a + 1
    };
    if range.is_empty() {
        return Err(format!("{text}: the range holds no packet"));
    }
    Ok(range)
}

/// The mirror of one map the hardware holds: its entries in the syscall view.
type Mirror = BTreeMap<Vec<u8>, Vec<u8>>;

/// The hXDP module running an image, as a [`Backend`].
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
    vcd: Option<VcdRequest>,
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
        let entry = check_image(&image, spec, program)?;
        // The maps module has one value read port and one write port: the compiler schedules for that, and an image
        // that breaks the rule would compute wrong results in the hardware rather than fail.
        hwxdp_hxdp::check_value_ports(&image)?;
        let params = Params::for_lanes(image.lanes);
        Needs::of(&image, &config.routes).check(&params)?;
        let reference = Maps::new(&spec.maps, config.possible_cpus)?;
        let model = locked_build(&paths.build_spec(&params)?)?;
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

    /// Records packets `request.packets` into `request.path` as a VCD waveform.
    pub fn set_vcd(&mut self, request: VcdRequest) -> Result<(), HxdpRtlError> {
        if request.packets.is_empty() {
            return Err(HxdpRtlError::VcdRange {
                start: request.packets.start,
                end: request.packets.end,
            });
        }
        self.vcd = Some(request);
        Ok(())
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
        if let Some(v) = &self.vcd {
            if index == v.packets.start {
                let path = v.path.clone();
                expect_ok(self.harness.call(&Command::Vcd(&path))?, "vcd")?;
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
                .is_some_and(|v| self.packets >= v.packets.end)
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

    /// Reads every slot of every readable map back from the hardware into the mirror.
    fn pull(&mut self) -> Result<(), HxdpRtlError> {
        if !self.stale {
            return Ok(());
        }
        for m in 0..self.image.maps.len() {
            let map = &self.image.maps[m];
            let Some(Layout { slots, .. }) = layout(map).filter(|_| read_back(map.map_type)) else {
                continue;
            };
            let commands: Vec<Command> = (0..slots)
                .map(|slot| Command::HostSlot {
                    map: m,
                    slot: slot as u32,
                })
                .collect();
            let answers = self.harness.batch(&commands)?;
            let old = self.mirror[m].as_ref();
            let now = read_back_slots(&self.specs[m], self.possible_cpus, old, answers)?;
            self.mirror[m] = Some(now);
        }
        self.stale = false;
        Ok(())
    }

    /// The map's definition, or the syscall's error for a missing one.
    fn spec(&self, map: usize) -> Result<&MapSpec, MapError> {
        self.specs.get(map).ok_or_else(|| MapError {
            map: format!("#{map}"),
            errno: errno::EINVAL,
            message: format!(
                "no map with index {map}, the program has {}",
                self.specs.len()
            ),
        })
    }

    /// Checks a key's (and value's) length as the syscall does.
    fn check_sizes(&self, map: usize, key: &[u8], value: Option<&[u8]>) -> Result<(), MapError> {
        let spec = self.spec(map)?;
        let fail = |message: String| MapError {
            map: spec.name.clone(),
            errno: errno::EINVAL,
            message,
        };
        if spec.map_type != map_type::RINGBUF && key.len() != spec.key_size as usize {
            return Err(fail(format!(
                "key of {} bytes, the map's keys have {}",
                key.len(),
                spec.key_size
            )));
        }
        if let Some(v) = value {
            let want = syscall_value_size(spec, self.possible_cpus);
            if v.len() != want {
                return Err(fail(format!(
                    "value of {} bytes, the map's values have {want}",
                    v.len()
                )));
            }
        }
        Ok(())
    }

    /// A harness failure during a map operation, in the syscall's error shape.
    fn map_failure(&self, map: usize, err: HxdpRtlError) -> MapError {
        MapError {
            map: self
                .specs
                .get(map)
                .map_or_else(|| format!("#{map}"), |s| s.name.clone()),
            errno: errno::EINVAL,
            message: err.to_string(),
        }
    }

    /// The host port's return value for `command` on `map`.
    fn host_ret(&mut self, map: usize, command: Command) -> Result<i64, MapError> {
        match self.harness.call(&command) {
            Ok(Answer::Ret(ret)) => Ok(ret),
            Ok(other) => Err(self.map_failure(map, unexpected("host operation", other))),
            Err(e) => Err(self.map_failure(map, e)),
        }
    }

    fn ret_error(&self, map: usize, ret: i64, what: &str) -> MapError {
        MapError {
            map: self.specs[map].name.clone(),
            errno: i32::try_from(-ret).unwrap_or(errno::EINVAL),
            message: format!("the hXDP module refused the {what}"),
        }
    }
}

/// A map's mirror from its `host_slot` answers. For per-CPU maps the hardware's value is CPU 0's; the other CPUs keep
/// what `old` had (what userspace last wrote), zero for a new key.
fn read_back_slots(
    spec: &MapSpec,
    possible_cpus: usize,
    old: Option<&Mirror>,
    answers: Vec<Answer>,
) -> Result<Mirror, HxdpRtlError> {
    let key_size = spec.key_size as usize;
    let value_size = spec.value_size as usize;
    let mut now = Mirror::new();
    for answer in answers {
        let Answer::Slot { hit, key, value } = answer else {
            return Err(unexpected("host_slot", answer));
        };
        if !hit {
            continue;
        }
        let (Some(key), Some(value)) = (key.get(..key_size), value.get(..value_size)) else {
            return Err(HxdpRtlError::Image(format!(
                "map {}: the module read back a slot shorter than the map's key or value",
                spec.name
            )));
        };
        let full = if is_percpu(spec.map_type) {
            let mut v = old
                .and_then(|o| o.get(key))
                .cloned()
                .unwrap_or_else(|| vec![0; syscall_value_size(spec, possible_cpus)]);
            v[..value_size].copy_from_slice(value);
            v
        } else {
            value.to_vec()
        };
        now.insert(key.to_vec(), full);
    }
    Ok(now)
}

/// [`build`] under an exclusive lock on a file in the cache directory: `build` serialises builds within one process,
/// this across processes (test suites start many `hwxdp` processes at once), so the second waits for the first's build
/// and then finds it cached instead of building the same module again.
fn locked_build(spec: &BuildSpec) -> Result<crate::Model, HxdpRtlError> {
    use std::os::fd::AsRawFd;
    let dir = spec.target_dir.join("rtlsim");
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| RtlError::Io {
            action,
            path,
            source,
        }
    };
    std::fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
    let path = dir.join(format!(".{TOP}.lock"));
    let file = std::fs::File::create(&path).map_err(io("cannot create", &path))?;
    // SAFETY: flock on a descriptor this function owns; it is released when `file` is closed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io("cannot lock", &path)(std::io::Error::last_os_error()).into());
    }
    let model = build(spec)?;
    drop(file);
    Ok(model)
}

/// Bytes of a value in the syscall's view: one copy per possible CPU, each padded to 8 bytes, for per-CPU maps.
fn syscall_value_size(spec: &MapSpec, possible_cpus: usize) -> usize {
    if is_percpu(spec.map_type) {
        (spec.value_size as usize).next_multiple_of(8) * possible_cpus
    } else {
        spec.value_size as usize
    }
}

/// Userspace may not read a `BPF_F_WRONLY` map.
fn readable(spec: &MapSpec) -> Result<(), MapError> {
    if spec.map_flags & hwxdp_maps::abi::map_flags::WRONLY != 0 {
        return Err(MapError {
            map: spec.name.clone(),
            errno: errno::EPERM,
            message: "map is write-only for userspace".into(),
        });
    }
    Ok(())
}

/// Checks that `image` is `spec` compiled and holds `program`; returns that program's index in the object.
fn check_image(
    image: &Image,
    spec: &ObjectSpec,
    program: Option<&str>,
) -> Result<usize, HxdpRtlError> {
    let Some(chosen) = spec.program(program) else {
        return Err(HxdpRtlError::Image(match program {
            Some(p) => format!("no program {p:?} in the object"),
            None => "the object has several programs: choose one".into(),
        }));
    };
    let entry = spec
        .programs
        .iter()
        .position(|p| p.name == chosen.name)
        .unwrap_or(0);
    if image.entries.len() != spec.programs.len() || image.maps.len() != spec.maps.len() {
        return Err(HxdpRtlError::Image(format!(
            "{} programs and {} maps, the object has {} and {}",
            image.entries.len(),
            image.maps.len(),
            spec.programs.len(),
            spec.maps.len()
        )));
    }
    for (i, (m, s)) in image.maps.iter().zip(&spec.maps).enumerate() {
        if (m.map_type, m.key_size, m.value_size, m.max_entries)
            != (s.map_type, s.key_size, s.value_size, s.max_entries)
        {
            return Err(HxdpRtlError::Image(format!(
                "map {i} ({}) differs from the object",
                s.name
            )));
        }
    }
    let start = image.entries[entry];
    if start == NO_ENTRY || start as usize >= image.bundles.len() {
        return Err(HxdpRtlError::Image(format!(
            "program {} is not in the image",
            chosen.name
        )));
    }
    Ok(entry)
}

/// The hardware's program index of each object program: the module starts every packet at program 0, so the chosen
/// program `entry` trades places with program 0. Program-array values (object indices) are translated when they are
/// written to the hardware; userspace keeps seeing the object's indices.
fn program_order(programs: usize, entry: usize) -> Vec<u32> {
    let mut order: Vec<u32> = (0..programs as u32).collect();
    order.swap(0, entry);
    order
}

/// The route table as `fib_*` command lines (`fib.sv`'s table port), in the reference's list order, which breaks ties.
fn route_commands(routes: &RouteTable) -> Vec<String> {
    let hex = |b: &[u8]| -> String { b.iter().map(|x| format!("{x:02x}")).collect() };
    let addr = |a: &IpAddr| match a {
        IpAddr::V4(v4) => hex(&v4.octets()),
        IpAddr::V6(v6) => hex(&v6.octets()),
    };
    let mut lines = vec!["fib_clear".to_string()];
    for d in &routes.devices {
        lines.push(format!(
            "fib_dev {:x} {} {:x}",
            d.ifindex,
            hex(&d.mac),
            d.mtu
        ));
    }
    for r in &routes.routes {
        let (kind, ifindex, gw) = match &r.kind {
            RouteKind::Unicast { ifindex, gateway } => {
                (0, *ifindex, gateway.as_ref().map_or("-".to_string(), addr))
            }
            RouteKind::Blackhole => (1, 0, "-".into()),
            RouteKind::Unreachable => (2, 0, "-".into()),
            RouteKind::Prohibit => (3, 0, "-".into()),
        };
        lines.push(format!(
            "fib_route {} {:x} {kind:x} {:x} {ifindex:x} {gw}",
            addr(&r.prefix),
            r.len,
            r.metric
        ));
    }
    for n in &routes.neighbors {
        lines.push(format!(
            "fib_neigh {} {:x} {}",
            addr(&n.ip),
            n.ifindex,
            hex(&n.mac)
        ));
    }
    lines
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

impl MapStore for HxdpRtl {
    fn specs(&self) -> &[MapSpec] {
        &self.specs
    }

    fn possible_cpus(&self) -> usize {
        self.possible_cpus
    }

    fn lookup(&mut self, map: usize, key: &[u8]) -> Result<Option<Vec<u8>>, MapError> {
        self.check_sizes(map, key, None)?;
        if self.mirror[map].is_none() {
            return self.reference.lookup(map, key);
        }
        readable(&self.specs[map])?;
        self.pull().map_err(|e| self.map_failure(map, e))?;
        Ok(self.mirror[map].as_ref().and_then(|m| m.get(key).cloned()))
    }

    fn update(&mut self, map: usize, key: &[u8], value: &[u8], flags: u64) -> Result<(), MapError> {
        self.check_sizes(map, key, Some(value))?;
        let spec = self.specs[map].clone();
        let readable = self.mirror[map].is_some();
        if readable {
            self.pull().map_err(|e| self.map_failure(map, e))?;
        } else if spec.map_type != map_type::RINGBUF {
            // The reference checks what the hardware cannot (device and program indices) and keeps the contents.
            self.reference.update(map, key, value, flags)?;
        }
        let mut hardware_value = value[..(spec.value_size as usize).min(value.len())].to_vec();
        if spec.map_type == map_type::PROG_ARRAY && hardware_value.len() == 4 {
            let program = u32::from_le_bytes([value[0], value[1], value[2], value[3]]);
            if let Some(&moved) = self.order.get(program as usize) {
                hardware_value = moved.to_le_bytes().to_vec();
            }
        }
        let ret = self.host_ret(
            map,
            Command::HostUpdate {
                map,
                flags,
                key,
                value: &hardware_value,
            },
        )?;
        if ret < 0 {
            return Err(self.ret_error(map, ret, "update"));
        }
        if let Some(mirror) = self.mirror[map].as_mut() {
            mirror.insert(key.to_vec(), value.to_vec());
        }
        // An LRU update may evict another entry: read the map back before trusting the mirror again.
        if spec.map_type == map_type::LRU_HASH {
            self.stale = true;
        }
        Ok(())
    }

    fn delete(&mut self, map: usize, key: &[u8]) -> Result<(), MapError> {
        self.check_sizes(map, key, None)?;
        if self.mirror[map].is_some() {
            self.pull().map_err(|e| self.map_failure(map, e))?;
        } else {
            self.reference.delete(map, key)?;
        }
        let ret = self.host_ret(map, Command::HostDelete { map, key })?;
        if ret < 0 {
            return Err(self.ret_error(map, ret, "delete"));
        }
        if let Some(mirror) = self.mirror[map].as_mut() {
            mirror.remove(key);
        }
        Ok(())
    }

    fn entries(&mut self, map: usize) -> Result<Entries, MapError> {
        self.spec(map)?;
        if self.mirror[map].is_none() {
            return self.reference.entries(map);
        }
        readable(&self.specs[map])?;
        self.pull().map_err(|e| self.map_failure(map, e))?;
        Ok(self.mirror[map]
            .as_ref()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default())
    }
}

impl Backend for HxdpRtl {
    fn name(&self) -> &str {
        "hxdp-rtl"
    }

    fn run(&mut self, pkt: &mut XdpBuff, md: &XdpMd) -> Result<Verdict, BackendError> {
        self.run_packet(pkt, md).map_err(|e| BackendError::Failed {
            backend: "hxdp-rtl".into(),
            message: e.to_string(),
        })
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        self
    }

    fn cycles(&self) -> Option<u64> {
        Some(self.last_cycles)
    }
}

impl Drop for HxdpRtl {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_ranges_parse_in_three_shapes() {
        assert_eq!(parse_packet_range("0..1"), Ok(0..1));
        assert_eq!(parse_packet_range("3..=5"), Ok(3..6));
        assert_eq!(parse_packet_range("7"), Ok(7..8));
        assert_eq!(
            parse_packet_range("5..5"),
            Err("5..5: the range holds no packet".into())
        );
        assert_eq!(
            parse_packet_range("a..2"),
            Err("\"a\" is not a packet number".into())
        );
    }

    #[test]
    fn per_cpu_values_read_back_replace_cpu_0_only() {
        let spec = MapSpec::new("counts", map_type::PERCPU_HASH, 2, 4, 8);
        let mut old = Mirror::new();
        old.insert(
            vec![1, 0],
            vec![9, 9, 9, 9, 0, 0, 0, 0, 7, 7, 7, 7, 0, 0, 0, 0],
        );
        old.insert(vec![2, 0], vec![5; 16]);
        let answers = vec![
            Answer::Slot {
                hit: true,
                key: vec![1, 0],
                value: vec![1, 2, 3, 4],
            },
            Answer::Slot {
                hit: false,
                key: vec![],
                value: vec![],
            },
            Answer::Slot {
                hit: true,
                key: vec![3, 0],
                value: vec![4, 3, 2, 1],
            },
        ];
        let now = read_back_slots(&spec, 2, Some(&old), answers).expect("reads");
        assert_eq!(
            now.into_iter().collect::<Vec<_>>(),
            vec![
                (
                    vec![1, 0],
                    vec![1, 2, 3, 4, 0, 0, 0, 0, 7, 7, 7, 7, 0, 0, 0, 0]
                ),
                (
                    vec![3, 0],
                    vec![4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
                ),
            ],
            "key 2 is gone from the hardware, key 3 is new"
        );
        let short = vec![Answer::Slot {
            hit: true,
            key: vec![1],
            value: vec![0; 4],
        }];
        assert!(read_back_slots(&spec, 2, None, short).is_err());
    }

    #[test]
    fn the_chosen_program_trades_places_with_program_0() {
        assert_eq!(program_order(3, 2), vec![2, 1, 0]);
        assert_eq!(program_order(3, 0), vec![0, 1, 2]);
        assert_eq!(program_order(1, 0), vec![0]);
    }

    #[test]
    fn routes_become_fib_lines_in_list_order() {
        use hwxdp_xdp::fib::{Device, Neighbor, Route};
        let table = RouteTable {
            devices: vec![Device {
                ifindex: 2,
                mac: [2, 0, 0, 0, 0, 0xaa],
                mtu: 1500,
            }],
            routes: vec![
                Route {
                    prefix: "10.1.0.0".parse().expect("ip"),
                    len: 16,
                    kind: RouteKind::Unicast {
                        ifindex: 2,
                        gateway: Some("10.1.0.1".parse().expect("ip")),
                    },
                    metric: 0,
                },
                Route {
                    prefix: "2001:db8::".parse().expect("ip"),
                    len: 32,
                    kind: RouteKind::Prohibit,
                    metric: 1024,
                },
            ],
            neighbors: vec![Neighbor {
                ip: "10.1.0.1".parse().expect("ip"),
                ifindex: 2,
                mac: [0xde, 0xad, 0, 0, 0, 1],
            }],
        };
        assert_eq!(
            route_commands(&table),
            vec![
                "fib_clear",
                "fib_dev 2 0200000000aa 5dc",
                "fib_route 0a010000 10 0 0 2 0a010001",
                "fib_route 20010db8000000000000000000000000 20 3 400 0 -",
                "fib_neigh 0a010001 2 dead00000001",
            ]
        );
    }

    #[test]
    fn the_build_needs_the_module_and_the_harness() {
        let dir = std::env::temp_dir().join(format!("hxdp-rtl-paths-{}", std::process::id()));
        let paths = RtlPaths::under(&dir);
        let err = paths
            .build_spec(&Params::for_lanes(4))
            .expect_err("nothing there");
        assert_eq!(
            err.to_string(),
            format!(
                "{}/rtl/sephirot/hxdp.sv is missing: the hXDP module needs it",
                dir.display()
            )
        );
    }

    #[test]
    fn the_build_takes_every_unit_with_the_parameters_and_tracing() {
        let dir = std::env::temp_dir().join(format!("hxdp-rtl-spec-{}", std::process::id()));
        let units = dir.join("rtl/sephirot");
        std::fs::create_dir_all(&units).expect("scratch");
        std::fs::create_dir_all(dir.join("sim/hxdp")).expect("scratch");
        for f in [
            "rtl/sephirot/hxdp.sv",
            "rtl/sephirot/alu.sv",
            "rtl/sephirot/w.vlt",
            "sim/hxdp/hxdp_harness.cpp",
        ] {
            std::fs::write(dir.join(f), "").expect("write");
        }
        std::fs::write(units.join("notes.txt"), "").expect("write");
        let spec = RtlPaths::under(&dir)
            .build_spec(&Params::for_lanes(2))
            .expect("spec");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            spec.sources,
            vec![
                PathBuf::from("sephirot/w.vlt"),
                PathBuf::from("sephirot/alu.sv"),
                PathBuf::from("sephirot/hxdp.sv")
            ]
        );
        assert!(spec.flags.contains(&"-GLANES=2".to_string()));
        assert!(spec.flags.contains(&"--trace".to_string()));
        assert_eq!(spec.top, "hxdp");
    }
}
