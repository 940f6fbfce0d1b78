//! The eBPFlow NIC (`rtl/ebpflow/ebpflow_nic.sv`: ports, round-robin dispatch to the engines, the action modules, the
//! output arbiters and crossbar, the TX queues) under Verilator.
//!
//! [`NicRtl::new`] builds the model for a [`NicConfig`] (ports and engines per port are Verilog parameters, so each
//! configuration is its own cached model) and starts its harness (`sim/ebpflow/ebpflow_nic_harness.cpp`, whose header
//! is the protocol). [`NicRtl::load`] writes a program into every engine's instruction memory; [`NicRtl::run`]
//! streams packets, each with its input port and an identity, into the RX ports and returns every copy that left a TX
//! queue ([`NicOutput`]: the queue, the identity, the engine that ran it, the frame, the cycles). A packet the action
//! module dropped leaves no copy; a flood leaves one per port. The identity rides in the metadata header's
//! timestamp-seconds field (bytes 3..6), so a program that rewrites that field loses it.

use std::path::PathBuf;

use crate::build::locked_build;
use crate::ebpflow::{EbpflowPaths, IMEM_SLOTS, MAX_FRAME};
use crate::line_harness::{short, unhex, Died, LineHarness};
use crate::unit::{SpecError, Unit};
use crate::{BuildSpec, Model, RtlError};

/// The model's top.
pub const TOP: &str = "ebpflow_nic";

/// The harness, embedded so that an installed binary needs no checkout.
const HARNESS: &str = include_str!("../../../sim/ebpflow/ebpflow_nic_harness.cpp");

/// The NIC: the files of `rtl/ebpflow/` with the NIC's harness.
const NIC: Unit = Unit {
    dir: "ebpflow",
    top: TOP,
    harness_name: "ebpflow_nic_harness.cpp",
    harness_text: HARNESS,
    sim_dir: "ebpflow",
};

/// The most ports a model takes (the action codes name ports in 16 bits, the header's queue byte in 8).
pub const MAX_PORTS: usize = 16;

/// The most engines per port a model takes.
pub const MAX_ENGINES_PER_PORT: usize = 16;

/// Why the NIC's model could not be built, loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum NicRtlError {
    /// Verilator could not build the model (or is missing).
    #[error(transparent)]
    Build(#[from] RtlError),
    /// A source file the model needs is missing.
    #[error("{path} is missing: the eBPFlow NIC needs it")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The configuration is not one the NIC can be built with.
    #[error("an eBPFlow NIC of {ports} ports with {engines_per_port} engines each: {why}")]
    Config {
        /// Ports asked for.
        ports: usize,
        /// Engines per port asked for.
        engines_per_port: usize,
        /// What is wrong.
        why: &'static str,
    },
    /// The program or a packet does not fit the NIC.
    #[error("{what} does not fit the eBPFlow NIC: {need}, it takes {have}")]
    TooBig {
        /// The program's slots, a frame's bytes or a port number.
        what: &'static str,
        /// What was asked for.
        need: usize,
        /// What the NIC takes.
        have: usize,
    },
    /// The harness executable could not be started.
    #[error("cannot start the eBPFlow NIC harness {executable}: {source}")]
    Start {
        /// The executable.
        executable: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The harness answered something the protocol does not allow, or refused the command.
    #[error("eBPFlow NIC harness, after {command:?}: {answer:?}")]
    Protocol {
        /// The command (long ones cut).
        command: String,
        /// Its answer.
        answer: String,
    },
    /// The coprocessor refused a map-table entry.
    #[error("the eBPFlow NIC's coprocessor refused map {map}: {answer}")]
    Refused {
        /// The map.
        map: String,
        /// The harness's answer.
        answer: String,
    },
    /// The NIC did not drain within the harness's cycle limit.
    #[error("the eBPFlow NIC did not drain within the harness's cycle limit")]
    Timeout,
    /// The harness exited while a command was outstanding.
    #[error("eBPFlow NIC harness exited during {command:?}: {story}")]
    Exited {
        /// The command (long ones cut).
        command: String,
        /// Exit status and its last words on stderr.
        story: String,
    },
}

impl From<SpecError> for NicRtlError {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::Missing(path) => NicRtlError::Missing { path },
            SpecError::Io(e) => NicRtlError::Build(e),
        }
    }
}

/// Ports and engines per port (the top's `PORTS` and `ENGINES_PER_PORT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicConfig {
    /// RX ports, and as many TX port queues.
    pub ports: usize,
    /// Engines behind each port's demux.
    pub engines_per_port: usize,
}

impl Default for NicConfig {
    /// The thesis's NIC: 4 ports of 4 engines.
    fn default() -> Self {
        NicConfig {
            ports: 4,
            engines_per_port: 4,
        }
    }
}

impl NicConfig {
    /// The TX queues: the ports', the host queue, the controller's.
    pub fn queues(&self) -> usize {
        self.ports + 2
    }

    /// The TX queue with harness index `q`.
    pub fn queue(&self, q: usize) -> Option<TxQueue> {
        match q {
            q if q < self.ports => Some(TxQueue::Port(q)),
            q if q == self.ports => Some(TxQueue::Host),
            q if q == self.ports + 1 => Some(TxQueue::Controller),
            _ => None,
        }
    }

    fn check(&self) -> Result<(), NicRtlError> {
        let why = if self.ports == 0 || self.engines_per_port == 0 {
            Some("at least one of each")
        } else if self.ports > MAX_PORTS {
            Some("at most 16 ports")
        } else if self.engines_per_port > MAX_ENGINES_PER_PORT {
            Some("at most 16 engines a port")
        } else {
            None
        };
        match why {
            Some(why) => Err(NicRtlError::Config {
                ports: self.ports,
                engines_per_port: self.engines_per_port,
                why,
            }),
            None => Ok(()),
        }
    }

    /// The Verilator build of the NIC in this configuration, from `paths`' sources into its cache.
    pub fn build_spec(&self, paths: &EbpflowPaths) -> Result<BuildSpec, NicRtlError> {
        self.check()?;
        let mut spec = NIC.spec(
            paths.source_root.as_deref(),
            &paths.cache_dir,
            &paths.verilator,
        )?;
        let (p, g) = (self.ports, self.engines_per_port);
        spec.flags.extend([
            format!("-GPORTS={p}"),
            format!("-GENGINES_PER_PORT={g}"),
            "-CFLAGS".to_string(),
            format!("-DNIC_PORTS={p}"),
            "-CFLAGS".to_string(),
            format!("-DNIC_ENGINES_PER_PORT={g}"),
        ]);
        Ok(spec)
    }

    /// [`NicConfig::build_spec`] with the coprocessor's stores at `sizes` (the default sizes add no flag, so
    /// their model is the one of [`NicConfig::build_spec`]).
    pub fn build_spec_sized(
        &self,
        paths: &EbpflowPaths,
        sizes: CoprocSizes,
    ) -> Result<BuildSpec, NicRtlError> {
        let mut spec = self.build_spec(paths)?;
        let default = CoprocSizes::default();
        if sizes.cam_entries != default.cam_entries {
            spec.flags
                .push(format!("-GCAM_ENTRIES={}", sizes.cam_entries));
        }
        if sizes.tcam_entries != default.tcam_entries {
            spec.flags
                .push(format!("-GTCAM_ENTRIES={}", sizes.tcam_entries));
        }
        if sizes.hash_buckets != default.hash_buckets {
            spec.flags
                .push(format!("-GHB_BUCKETS={}", sizes.hash_buckets));
        }
        if sizes.hash_entries != default.hash_entries {
            spec.flags
                .push(format!("-GHB_ENTRIES={}", sizes.hash_entries));
        }
        if sizes.vm_words != default.vm_words {
            spec.flags.push(format!("-GVM_WORDS={}", sizes.vm_words));
        }
        // The harness sizes its host port's key and value from the same numbers.
        if sizes.key_bytes != default.key_bytes {
            spec.flags.extend([
                format!("-GKEY_BYTES={}", sizes.key_bytes),
                "-CFLAGS".to_string(),
                format!("-DNIC_KEY_BYTES={}", sizes.key_bytes),
            ]);
        }
        if sizes.val_bytes != default.val_bytes {
            spec.flags.extend([
                format!("-GVAL_BYTES={}", sizes.val_bytes),
                "-CFLAGS".to_string(),
                format!("-DNIC_VAL_BYTES={}", sizes.val_bytes),
            ]);
        }
        Ok(spec)
    }

    /// Builds the model, or finds it in the cache.
    pub fn model(&self, paths: &EbpflowPaths) -> Result<Model, NicRtlError> {
        self.model_sized(paths, CoprocSizes::default())
    }

    /// Builds the model with the coprocessor's stores at `sizes`, or finds it in the cache.
    pub fn model_sized(
        &self,
        paths: &EbpflowPaths,
        sizes: CoprocSizes,
    ) -> Result<Model, NicRtlError> {
        let spec = self.build_spec_sized(paths, sizes)?;
        let notify = paths.notify;
        let engines = self.ports * self.engines_per_port;
        let mut announce = || {
            if let Some(notify) = notify {
                notify(&format!(
                    "building the eBPFlow NIC model with {engines} engines (first time, ~{} s)",
                    30 + 10 * engines
                ));
            }
        };
        Ok(locked_build(&spec, TOP, &mut announce)?)
    }
}

/// The coprocessor's stores a model is built with (`ebpflow_nic`'s `CAM_ENTRIES`, `TCAM_ENTRIES`, `HB_BUCKETS`,
/// `HB_ENTRIES`, `VM_WORDS`, `KEY_BYTES` and `VAL_BYTES`): each size is its own cached model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoprocSizes {
    /// Exact-match entries of the flip-flop CAM, shared by the LRU_HASH maps.
    pub cam_entries: usize,
    /// LPM entries shared by the LPM_TRIE maps.
    pub tcam_entries: usize,
    /// Buckets (of [`HASH_WAYS`] slots, in block RAM) shared by the HASH maps: each takes
    /// [`hash_buckets`]`(max_entries)`.
    pub hash_buckets: usize,
    /// The HASH maps' `max_entries` together (their free-index stacks).
    pub hash_entries: usize,
    /// 64-bit words of value memory (block RAM) shared by every map's values.
    pub vm_words: usize,
    /// The longest key (a multiple of 8): the bytes a map helper gathers at r2, and the width of the CAM, TCAM and
    /// bucket rows.
    pub key_bytes: usize,
    /// The longest value a map update carries (a multiple of 8): the bytes an update gathers at r3.
    pub val_bytes: usize,
}

/// Slots a bucket of the coprocessor's HASH store (`ebpflow_coproc`'s `HB_WAYS`).
pub const HASH_WAYS: u64 = 4;

/// Entries of the stash the HASH maps share (`HB_STASH`): a map's dumps cover its buckets' slots and these.
pub const HASH_STASH: u64 = 4;

/// The buckets a HASH map of `max_entries` takes: the first power of two with twice `max_entries` slots.
pub fn hash_buckets(max_entries: u64) -> u64 {
    let mut buckets = 1;
    while buckets * HASH_WAYS < 2 * max_entries {
        buckets <<= 1;
    }
    buckets
}

impl Default for CoprocSizes {
    /// The NIC's defaults: 64 CAM and 32 TCAM entries, 64 buckets for 128 HASH entries, 4096 value words, 16-byte
    /// keys and 32-byte values.
    fn default() -> Self {
        CoprocSizes {
            cam_entries: 64,
            tcam_entries: 32,
            hash_buckets: 64,
            hash_entries: 128,
            vm_words: 4096,
            key_bytes: 16,
            val_bytes: 32,
        }
    }
}

/// How the action modules read r0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultMode {
    /// An XDP verdict: XDP_TX to the input port, XDP_PASS to the host queue, XDP_REDIRECT to the coprocessor's
    /// target, the rest dropped.
    Xdp,
    /// The thesis's action codes (Table 4.2).
    Actions,
}

/// A TX queue of the NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TxQueue {
    /// A port's transmit queue.
    Port(usize),
    /// The host queue (PCIe).
    Host,
    /// The controller's queue.
    Controller,
}

/// A packet offered to the NIC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicPacket {
    /// The RX port it arrives on.
    pub port: usize,
    /// Its identity (the header's timestamp-seconds field), to find it among the outputs.
    pub id: u32,
    /// Idle cycles between two of its beats (0: a beat a cycle).
    pub gap: u32,
    /// The frame.
    pub frame: Vec<u8>,
}

/// A packet copy that left a TX queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicOutput {
    /// The queue it left.
    pub queue: TxQueue,
    /// Its identity.
    pub id: u32,
    /// The engine that ran it (port * engines per port + engine).
    pub engine: usize,
    /// The header's destination-queue byte as the action module wrote it (the queue, 0xff for a flood).
    pub dest_queue: u8,
    /// The cycle its first beat was taken at its RX port, counted from the start of the run.
    pub in_cycle: u64,
    /// The cycle its last beat left the TX queue.
    pub out_cycle: u64,
    /// The frame as the program left it.
    pub frame: Vec<u8>,
}

/// What a run gave back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicRun {
    /// Every copy that left a TX queue, in the order their last beats left.
    pub outputs: Vec<NicOutput>,
    /// Cycles from the start until every packet was in and the NIC idle.
    pub cycles: u64,
}

/// A map's entries as (key, value) bytes.
pub type MapEntries = Vec<(Vec<u8>, Vec<u8>)>;

/// A packet for [`NicRtl::observe`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offered {
    /// The packet.
    pub packet: NicPacket,
    /// The header's source-queue byte (the program's `rx_queue_index`).
    pub rx_queue: u8,
    /// The program it runs: 0 the one active at the start, k the k-th of the epochs.
    pub epoch: u32,
}

/// The end of one engine's run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicResult {
    /// The packet's identity.
    pub id: u32,
    /// The engine.
    pub engine: usize,
    /// r0 at the exit.
    pub r0: u64,
    /// The run faulted.
    pub fault: bool,
    /// Cycles from the first beat to the exit, both counted.
    pub cycles: u64,
}

/// A packet the action module sent to no queue, as it left its engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicDropped {
    /// Its identity.
    pub id: u32,
    /// The engine that ran it.
    pub engine: usize,
    /// The frame as the program left it.
    pub frame: Vec<u8>,
}

/// What [`NicRtl::observe`] saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// Copies that left a TX queue, in the order their last beats left.
    pub outputs: Vec<NicOutput>,
    /// Every run, in the order they ended.
    pub results: Vec<NicResult>,
    /// Every dropped packet.
    pub dropped: Vec<NicDropped>,
    /// Cycles from the start until every packet was in, every swap made and the NIC idle.
    pub cycles: u64,
    /// Program swaps made under traffic.
    pub swaps: u32,
}

/// A map-table entry of the coprocessor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NicMap {
    /// The map's name, for errors.
    pub name: String,
    /// The coprocessor's type (`BPF_MAP_TYPE_*` of HASH, ARRAY, LRU_HASH, LPM_TRIE, DEVMAP).
    pub map_type: u32,
    /// Key bytes.
    pub key_size: u32,
    /// Value bytes.
    pub value_size: u32,
    /// Entries.
    pub max_entries: u32,
}

/// A host-port request: helper ids 1, 2, 3 (r1 the map, r4 the flags, the key and the value), 256 and 257 (read or
/// write the window word at r1, r2 the data), 258 (entry r2 of map r1: r0 bit 0 in use, bits 63..1 its value
/// index), 259 (the positions 258 takes for map r1: a HASH map's bucket slots and the stash, else max_entries).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostRequest {
    /// The request.
    pub id: u32,
    /// r1.
    pub r1: u64,
    /// r2.
    pub r2: u64,
    /// r4.
    pub r4: u64,
    /// The key bytes (at most the model's [`CoprocSizes::key_bytes`]).
    pub key: Vec<u8>,
    /// The value bytes (at most the model's [`CoprocSizes::val_bytes`]).
    pub value: Vec<u8>,
}

/// A started NIC model.
pub struct NicRtl {
    config: NicConfig,
    harness: LineHarness,
}

impl NicRtl {
    /// Builds (or takes from the cache) the model of `config` and starts its harness.
    pub fn new(paths: &EbpflowPaths, config: NicConfig) -> Result<NicRtl, NicRtlError> {
        NicRtl::with_sizes(paths, config, CoprocSizes::default())
    }

    /// [`NicRtl::new`] with the coprocessor's stores at `sizes`.
    pub fn with_sizes(
        paths: &EbpflowPaths,
        config: NicConfig,
        sizes: CoprocSizes,
    ) -> Result<NicRtl, NicRtlError> {
        let model = config.model_sized(paths, sizes)?;
        let harness =
            LineHarness::start(&model.executable).map_err(|source| NicRtlError::Start {
                executable: model.executable.clone(),
                source,
            })?;
        Ok(NicRtl { config, harness })
    }

    /// The configuration the model was built with.
    pub fn config(&self) -> NicConfig {
        self.config
    }

    /// Writes the program's slots into the idle bank of the double-buffered instruction memory from slot 0, sets
    /// its length and swaps the banks: the packets of the next run execute it. Between runs (the NIC is idle).
    pub fn load(&mut self, slots: &[u64]) -> Result<(), NicRtlError> {
        if slots.len() > IMEM_SLOTS {
            return Err(NicRtlError::TooBig {
                what: "program (slots)",
                need: slots.len(),
                have: IMEM_SLOTS,
            });
        }
        let mut lines: Vec<String> = slots
            .iter()
            .enumerate()
            .map(|(i, s)| format!("imem {i:x} {s:x}"))
            .collect();
        lines.push(format!("len {:x}", slots.len()));
        lines.push("swap".to_string());
        self.batch(&lines)
    }

    /// How the action modules read r0 from now on.
    pub fn set_mode(&mut self, mode: ResultMode) -> Result<(), NicRtlError> {
        let flag = u8::from(mode == ResultMode::Xdp);
        self.batch(&[format!("xdp {flag}")])
    }

    /// The ifindex of port 0 (4 when the model starts, as the cycle model's `--ifindex`): an XDP_REDIRECT to
    /// ifindex `base + p` leaves on port p, one to an ifindex that is none of the NIC's on the host queue.
    pub fn set_ifindex_base(&mut self, base: u32) -> Result<(), NicRtlError> {
        self.batch(&[format!("ifindex {base:x}")])
    }

    /// Back-pressure: every TX queue takes a beat in `percent` (1 to 100) of the cycles, drawn from `seed`.
    pub fn set_tx_ready(&mut self, percent: u8, seed: u64) -> Result<(), NicRtlError> {
        self.batch(&[format!("ready {percent} {seed:x}")])
    }

    /// Refuses a packet for a port the NIC does not have or a frame longer than its input takes.
    fn check_packet(&self, p: &NicPacket) -> Result<(), NicRtlError> {
        if p.port >= self.config.ports {
            return Err(NicRtlError::TooBig {
                what: "input port",
                need: p.port,
                have: self.config.ports,
            });
        }
        if p.frame.len() > MAX_FRAME {
            return Err(NicRtlError::TooBig {
                what: "frame (bytes)",
                need: p.frame.len(),
                have: MAX_FRAME,
            });
        }
        Ok(())
    }

    /// Streams `packets` (each port's in their order, the ports in parallel) and runs until the NIC is idle.
    pub fn run(&mut self, packets: &[NicPacket]) -> Result<NicRun, NicRtlError> {
        let mut lines = Vec::with_capacity(packets.len());
        for p in packets {
            self.check_packet(p)?;
            lines.push(format!(
                "pkt {:x} {:x} {:x} {}",
                p.port,
                p.id,
                p.gap,
                hex(&p.frame)
            ));
        }
        self.batch(&lines)?;
        self.harness.send("go")?;
        let mut outputs = Vec::new();
        loop {
            let answer = self.harness.read("go")?;
            if answer == "timeout" {
                return Err(NicRtlError::Timeout);
            }
            if let Some(rest) = answer.strip_prefix("done ") {
                let (cycles, _) = done(rest).ok_or_else(|| protocol("go", &answer))?;
                return Ok(NicRun { outputs, cycles });
            }
            outputs.push(self.output(&answer)?);
        }
    }

    /// Keeps program `index`'s slots in the harness for [`NicRtl::observe`]'s swaps.
    pub fn keep_program(&mut self, index: usize, slots: &[u64]) -> Result<(), NicRtlError> {
        if slots.len() > IMEM_SLOTS {
            return Err(NicRtlError::TooBig {
                what: "program (slots)",
                need: slots.len(),
                have: IMEM_SLOTS,
            });
        }
        let text: String = slots.iter().map(|s| format!("{s:016x}")).collect();
        self.batch(&[format!("prog {index:x} {text}")])
    }

    /// Streams `packets` as [`NicRtl::run`] does and reports every run and every packet: the copies that left a TX
    /// queue, each run's result and each packet the crossbar dropped. Packet epoch k > 0 runs kept program
    /// `epochs[k - 1]` ([`NicRtl::keep_program`]), swapped in under traffic: it is written into the idle bank
    /// while epoch k - 1 runs, and the banks swap once every packet of the epochs before has entered its engine
    /// and before any packet of epoch k does. Epoch 0 runs the program active now.
    pub fn observe(
        &mut self,
        packets: &[Offered],
        epochs: &[usize],
    ) -> Result<Observed, NicRtlError> {
        let mut lines = vec!["results 1".to_string()];
        lines.extend(epochs.iter().map(|e| format!("sched {e:x}")));
        for o in packets {
            let p = &o.packet;
            self.check_packet(p)?;
            lines.push(format!(
                "pkt {:x} {:x} {:x} {} {:x} {:x}",
                p.port,
                p.id,
                p.gap,
                hex(&p.frame),
                o.rx_queue,
                o.epoch
            ));
        }
        self.batch(&lines)?;
        self.harness.send("go")?;
        let mut seen = Observed::default();
        loop {
            let answer = self.harness.read("go")?;
            if answer == "timeout" {
                return Err(NicRtlError::Timeout);
            }
            if let Some(rest) = answer.strip_prefix("done ") {
                let (cycles, swaps) = done(rest).ok_or_else(|| protocol("go", &answer))?;
                seen.cycles = cycles;
                seen.swaps = swaps;
                self.batch(&["results 0".to_string()])?;
                return Ok(seen);
            }
            match answer.split_whitespace().next() {
                Some("res") => seen.results.push(result(&answer)?),
                Some("drop") => seen.dropped.push(dropped(&answer)?),
                _ => seen.outputs.push(self.output(&answer)?),
            }
        }
    }

    /// Writes the coprocessor's map table, entry i of `maps` at index i (the number a program passes in r1), laid
    /// out in that order, after clearing the table and zeroing the value memory. A map the coprocessor refuses is an
    /// error naming it.
    pub fn map_table(&mut self, maps: &[NicMap]) -> Result<(), NicRtlError> {
        self.batch(&["mtclear".to_string()])?;
        for (i, m) in maps.iter().enumerate() {
            let line = format!(
                "map {i:x} {:x} {:x} {:x} {:x}",
                m.map_type, m.key_size, m.value_size, m.max_entries
            );
            let answer = self.harness.call(&line)?;
            if answer != "ok" {
                return Err(NicRtlError::Refused {
                    map: m.name.clone(),
                    answer,
                });
            }
        }
        Ok(())
    }

    /// One request on the coprocessor's host port while the NIC is idle (docs/ebpflow.md, "Host port"): r0 and the
    /// key bytes the coprocessor answered.
    pub fn host(&mut self, request: &HostRequest) -> Result<(u64, Vec<u8>), NicRtlError> {
        let line = format!(
            "host {:x} {:x} {:x} {:x} {} {}",
            request.id,
            request.r1,
            request.r2,
            request.r4,
            hex(&request.key),
            hex(&request.value)
        );
        let answer = self.harness.call(&line)?;
        let bad = || protocol(&line, &answer);
        let f: Vec<&str> = answer.split_whitespace().collect();
        if f.len() != 3 || f[0] != "r0" {
            return Err(bad());
        }
        let r0 = u64::from_str_radix(f[1], 16).map_err(|_| bad())?;
        Ok((r0, unhex(f[2]).ok_or_else(bad)?))
    }

    /// Writes 8-byte words of the map-value window (`(offset, word)`: the offset minus `MAPV_BASE`, map in bits
    /// 23..20) through the host port (request 257) while the NIC is idle, a chunk of requests down the pipe before
    /// their answers are read: a table of thousands of words (a DPI automaton) in a few round trips.
    pub fn write_words(&mut self, words: &[(u64, u64)]) -> Result<(), NicRtlError> {
        let lines: Vec<String> = words
            .iter()
            .map(|(at, word)| format!("host 101 {at:x} {word:x} 0 - -"))
            .collect();
        for chunk in lines.chunks(256) {
            for line in chunk {
                self.harness.send(line)?;
            }
            for line in chunk {
                let answer = self.harness.read(line)?;
                if answer.split_whitespace().nth(1) != Some("0") {
                    return Err(protocol(line, &answer));
                }
            }
        }
        Ok(())
    }

    /// Every entry in use of map-table entry `map` (`max` entries of `key_size`-byte keys and `words` value words
    /// each), read through the host port: key and value bytes (the whole value words).
    pub fn entries(
        &mut self,
        map: usize,
        max: u32,
        key_size: u32,
        words: u32,
    ) -> Result<MapEntries, NicRtlError> {
        let line = format!("entries {map:x} {max:x} {key_size:x} {words:x}");
        self.harness.send(&line)?;
        let mut out = Vec::new();
        loop {
            let answer = self.harness.read(&line)?;
            if answer == "end" {
                return Ok(out);
            }
            let f: Vec<&str> = answer.split_whitespace().collect();
            let bytes = |t: &str| if t == "-" { Some(Vec::new()) } else { unhex(t) };
            match (
                f.as_slice(),
                f.get(1).and_then(|k| bytes(k)),
                f.get(2).and_then(|v| bytes(v)),
            ) {
                (["e", _, _], Some(k), Some(v)) => out.push((k, v)),
                _ => return Err(protocol(&line, &answer)),
            }
        }
    }

    /// One `out` line.
    fn output(&self, answer: &str) -> Result<NicOutput, NicRtlError> {
        let bad = || protocol("go", answer);
        let f: Vec<&str> = answer.split_whitespace().collect();
        if f.len() != 8 || f[0] != "out" {
            return Err(bad());
        }
        let num = |i: usize| u64::from_str_radix(f[i], 16).map_err(|_| bad());
        let queue = self.config.queue(num(1)? as usize).ok_or_else(bad)?;
        let frame = if f[7] == "-" {
            Vec::new()
        } else {
            unhex(f[7]).ok_or_else(bad)?
        };
        Ok(NicOutput {
            queue,
            id: u32::try_from(num(2)?).map_err(|_| bad())?,
            engine: num(3)? as usize,
            dest_queue: u8::try_from(num(4)?).map_err(|_| bad())?,
            in_cycle: num(5)?,
            out_cycle: num(6)?,
            frame,
        })
    }

    /// Sends `lines`, each answered `ok`.
    fn batch(&mut self, lines: &[String]) -> Result<(), NicRtlError> {
        self.harness
            .batch(lines, |line, answer| protocol(line, &answer))
    }
}

impl From<Died> for NicRtlError {
    fn from(died: Died) -> Self {
        NicRtlError::Exited {
            command: died.command,
            story: died.story,
        }
    }
}

/// `CYCLES SWAPS` of a done line.
fn done(rest: &str) -> Option<(u64, u32)> {
    let mut f = rest.split_whitespace();
    let cycles = u64::from_str_radix(f.next()?, 16).ok()?;
    let swaps = f
        .next()
        .map_or(Some(0), |s| u32::from_str_radix(s, 16).ok())?;
    Some((cycles, swaps))
}

/// A `res ID ENGINE R0 FAULT CYCLES` line.
fn result(answer: &str) -> Result<NicResult, NicRtlError> {
    let bad = || protocol("go", answer);
    let f: Vec<&str> = answer.split_whitespace().collect();
    if f.len() != 6 {
        return Err(bad());
    }
    let num = |i: usize| u64::from_str_radix(f[i], 16).map_err(|_| bad());
    Ok(NicResult {
        id: u32::try_from(num(1)?).map_err(|_| bad())?,
        engine: num(2)? as usize,
        r0: num(3)?,
        fault: num(4)? != 0,
        cycles: num(5)?,
    })
}

/// A `drop ID ENGINE BYTES` line.
fn dropped(answer: &str) -> Result<NicDropped, NicRtlError> {
    let bad = || protocol("go", answer);
    let f: Vec<&str> = answer.split_whitespace().collect();
    if f.len() != 4 {
        return Err(bad());
    }
    let num = |i: usize| u64::from_str_radix(f[i], 16).map_err(|_| bad());
    Ok(NicDropped {
        id: u32::try_from(num(1)?).map_err(|_| bad())?,
        engine: num(2)? as usize,
        frame: if f[3] == "-" {
            Vec::new()
        } else {
            unhex(f[3]).ok_or_else(bad)?
        },
    })
}

fn protocol(command: &str, answer: &str) -> NicRtlError {
    NicRtlError::Protocol {
        command: short(command),
        answer: short(answer),
    }
}

/// Bytes as hex pairs, `-` for none (the harness reads an empty field so).
fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".to_string();
    }
    crate::line_harness::hex(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queues_are_the_ports_then_host_then_controller() {
        let c = NicConfig {
            ports: 2,
            engines_per_port: 3,
        };
        assert_eq!(c.queues(), 4);
        assert_eq!(c.queue(1), Some(TxQueue::Port(1)));
        assert_eq!(c.queue(2), Some(TxQueue::Host));
        assert_eq!(c.queue(3), Some(TxQueue::Controller));
        assert_eq!(c.queue(4), None);
    }

    #[test]
    fn a_configuration_sets_the_parameters_and_the_harness_sizes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let paths = EbpflowPaths {
            source_root: Some(root),
            ..EbpflowPaths::embedded("/cache")
        };
        let spec = NicConfig {
            ports: 2,
            engines_per_port: 2,
        }
        .build_spec(&paths)
        .expect("spec");
        assert_eq!(spec.top, TOP);
        for flag in [
            "-GPORTS=2",
            "-GENGINES_PER_PORT=2",
            "-DNIC_PORTS=2",
            "-DNIC_ENGINES_PER_PORT=2",
        ] {
            assert!(
                spec.flags.iter().any(|f| f == flag),
                "{flag}: {:?}",
                spec.flags
            );
        }
        let embedded = NicConfig::default()
            .build_spec(&EbpflowPaths::embedded("/cache"))
            .expect("embedded");
        assert_eq!(embedded.testbench_text.as_deref(), Some(HARNESS));
        let err = NicConfig {
            ports: 0,
            engines_per_port: 4,
        }
        .build_spec(&paths)
        .expect_err("no ports");
        assert_eq!(
            err.to_string(),
            "an eBPFlow NIC of 0 ports with 4 engines each: at least one of each"
        );
    }
}
