//! One eBPFlow engine (`rtl/ebpflow/`, the top `ebpflow_conformance`: the engine, its instruction memory, the
//! conformance environment's unwind helper and a coprocessor of its own for maps) under Verilator.
//!
//! [`EbpflowRtl::new`] builds the model (or takes it from the cache: [`EbpflowPaths`], from the sources embedded in
//! the binary unless `HWXDP_ROOT` names a checkout) and starts its harness (`sim/ebpflow/ebpflow_harness.cpp`, whose
//! header is the protocol). [`EbpflowRtl::load`] writes a program's slots into the instruction memory;
//! [`EbpflowRtl::run`] streams a frame in behind its metadata header ([`Header`], the thesis's Table 4.1) at a chosen
//! pace and returns r0, the fault flag, the cycle count and the frame as it left; [`EbpflowRtl::dump`] reads the
//! whole data memory (header, frame, stack); [`EbpflowRtl::map_table`] gives the coprocessor maps (none by default: a
//! map helper or map-value access faults, as in the conformance environment). The engine's memory map is [`BASE`] + [`FRAME_OFFSET`] for the frame and
//! [`BASE`] + [`STACK_OFFSET`] for the stack frames: at start r1 is the frame's address (0 for an empty frame), r2 its
//! length and r10 the top of the first 512-byte stack frame.

use std::path::PathBuf;

use crate::build::locked_build;
use crate::line_harness::{hex, short, unhex, Died, LineHarness};
use crate::unit::{SpecError, Unit};
use crate::{BuildSpec, Model, RtlError};

/// The model's top.
pub const TOP: &str = "ebpflow_conformance";

/// The data memory's address in the engine's address space (`ebpflow_core`'s `BASE`).
pub const BASE: u64 = 0x1_0000;

/// Where the frame starts in the data memory: after the 32-byte metadata header.
pub const FRAME_OFFSET: u64 = 32;

/// Where the stack frames start in the data memory (`RX_BYTES`).
pub const STACK_OFFSET: u64 = 4096;

/// Bytes of the data memory: header and frame, then eight 512-byte stack frames.
pub const MEMORY_BYTES: usize = 8192;

/// The longest frame the engine takes.
pub const MAX_FRAME: usize = STACK_OFFSET as usize - FRAME_OFFSET as usize;

/// Instruction-memory slots of the model.
pub const IMEM_SLOTS: usize = 4096;

/// The map-value window: map *m*'s values start at `MAPV_BASE + (m << 20)` (the coprocessor contract).
pub const MAPV_BASE: u64 = 0x0100_0000;

/// Maps the model's coprocessor holds.
pub const MAP_SLOTS: usize = 8;

/// The harness, embedded so that an installed binary needs no checkout.
const HARNESS: &str = include_str!("../../../sim/ebpflow/ebpflow_harness.cpp");

/// The harness's file name, in a checkout's `sim/ebpflow/` and in the build.
const HARNESS_NAME: &str = "ebpflow_harness.cpp";

/// The unit: the files of `rtl/ebpflow/`.
const UNIT: &str = "ebpflow";

/// Roughly how long a first build takes on a loaded two-core machine, for the notification.
const BUILD_SECONDS: u32 = 30;

/// Why the engine's model could not be built, loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum EbpflowRtlError {
    /// Verilator could not build the model (or is missing).
    #[error(transparent)]
    Build(#[from] RtlError),
    /// A source file the model needs is missing.
    #[error("{path} is missing: the eBPFlow engine needs it")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The program or the frame does not fit the engine.
    #[error("{what} too big for the eBPFlow engine: {need}, it holds {have}")]
    TooBig {
        /// The program's slots or the frame's bytes.
        what: &'static str,
        /// What was asked for.
        need: usize,
        /// What the engine holds.
        have: usize,
    },
    /// The harness executable could not be started.
    #[error("cannot start the eBPFlow harness {executable}: {source}")]
    Start {
        /// The executable.
        executable: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The harness answered something the protocol does not allow, or refused the command.
    #[error("eBPFlow harness, after {command:?}: {answer:?}")]
    Protocol {
        /// The command (long ones cut).
        command: String,
        /// Its answer.
        answer: String,
    },
    /// The engine did not finish within the harness's cycle limit.
    #[error("eBPFlow engine did not finish {command:?} within the harness's cycle limit")]
    Timeout {
        /// The command (long ones cut).
        command: String,
    },
    /// The harness exited while a command was outstanding.
    #[error("eBPFlow harness exited during {command:?}: {story}")]
    Exited {
        /// The command (long ones cut).
        command: String,
        /// Exit status and its last words on stderr.
        story: String,
    },
}

/// Where the engine's sources come from, where its model is cached and which Verilator builds it.
#[derive(Clone, Debug)]
pub struct EbpflowPaths {
    /// A checkout whose `rtl/ebpflow/` and `sim/ebpflow/ebpflow_harness.cpp` the model is built from instead of the
    /// sources embedded in the binary (`None`, the default).
    pub source_root: Option<PathBuf>,
    /// The directory models are cached in ([`crate::cache_dir`] by default).
    pub cache_dir: PathBuf,
    /// The Verilator program.
    pub verilator: PathBuf,
    /// Called with one line right before Verilator builds a model that is not in the cache.
    pub notify: Option<fn(&str)>,
}

impl EbpflowPaths {
    /// The sources embedded in the binary, cached in `cache_dir`, `verilator` from `PATH`, no notification.
    pub fn embedded(cache_dir: impl Into<PathBuf>) -> EbpflowPaths {
        EbpflowPaths {
            source_root: None,
            cache_dir: cache_dir.into(),
            verilator: PathBuf::from("verilator"),
            notify: None,
        }
    }

    /// What the environment asks for ([`crate::ENVIRONMENT`]): the embedded sources unless `HWXDP_ROOT` names a
    /// checkout, the cache [`crate::cache_dir`], Verilator from `HWXDP_VERILATOR` or `PATH`.
    pub fn from_env() -> EbpflowPaths {
        EbpflowPaths {
            source_root: std::env::var_os("HWXDP_ROOT")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            cache_dir: crate::cache_dir(),
            verilator: crate::env::verilator(),
            notify: None,
        }
    }

    /// The Verilator build of the model: every file of `rtl/ebpflow/` (its `.vlt` waivers first) and the harness.
    pub fn build_spec(&self) -> Result<BuildSpec, EbpflowRtlError> {
        Ok(ENGINE.spec(
            self.source_root.as_deref(),
            &self.cache_dir,
            &self.verilator,
        )?)
    }

    /// Builds the model, or finds it in the cache, under a lock that makes concurrent processes build it once.
    pub fn model(&self) -> Result<Model, EbpflowRtlError> {
        let spec = self.build_spec()?;
        let notify = self.notify;
        let mut announce = || {
            if let Some(notify) = notify {
                notify(&format!(
                    "building the eBPFlow engine model (first time, ~{BUILD_SECONDS} s)"
                ));
            }
        };
        Ok(locked_build(&spec, TOP, &mut announce)?)
    }
}

/// The engine and its harness.
const ENGINE: Unit = Unit {
    dir: UNIT,
    top: TOP,
    harness_name: HARNESS_NAME,
    harness_text: HARNESS,
    sim_dir: "ebpflow",
};

impl From<SpecError> for EbpflowRtlError {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::Missing(path) => EbpflowRtlError::Missing { path },
            SpecError::Io(e) => EbpflowRtlError::Build(e),
        }
    }
}

/// The metadata header ahead of the frame (Table 4.1 of the thesis; the length is the frame's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// Input port (byte 0).
    pub input_port: u8,
    /// Source queue (byte 1).
    pub source_queue: u8,
    /// Destination queue (byte 2).
    pub destination_queue: u8,
    /// Timestamp, seconds (bytes 3..6).
    pub seconds: u32,
    /// Timestamp, nanoseconds (bytes 7..10).
    pub nanoseconds: u32,
}

impl Header {
    /// The first beat's tuser for a frame of `len` bytes: the header's bytes 0..15, little-endian.
    pub fn tuser(&self, len: u16) -> u128 {
        u128::from(self.input_port)
            | u128::from(self.source_queue) << 8
            | u128::from(self.destination_queue) << 16
            | u128::from(self.seconds) << 24
            | u128::from(self.nanoseconds) << 56
            | u128::from(len) << 88
    }
}

/// What one run gave back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// r0 when the program ended (0 after a fault).
    pub r0: u64,
    /// The engine stopped the program (an access out of bounds, an instruction that does not exist, a call too deep,
    /// a helper's fault, a slot past the program's end).
    pub fault: bool,
    /// Cycles from the first input beat to the end of the run, both counted (the engine's count).
    pub cycles: u64,
    /// The cycle the result came out, counted from the first beat's cycle (0).
    pub done_at: u64,
    /// The cycle the last input beat was taken, counted the same way.
    pub last_beat_at: u64,
    /// The frame as it left the engine.
    pub frame: Vec<u8>,
}

/// A started engine model.
pub struct EbpflowRtl {
    harness: LineHarness,
}

impl EbpflowRtl {
    /// Builds (or takes from the cache) the model and starts its harness.
    pub fn new(paths: &EbpflowPaths) -> Result<EbpflowRtl, EbpflowRtlError> {
        let model = paths.model()?;
        let harness =
            LineHarness::start(&model.executable).map_err(|source| EbpflowRtlError::Start {
                executable: model.executable.clone(),
                source,
            })?;
        Ok(EbpflowRtl { harness })
    }

    /// Writes the program's slots (8 bytes each, as the ELF holds them; a 16-byte lddw is two) into the instruction
    /// memory from slot 0 and sets the program's length.
    pub fn load(&mut self, slots: &[u64]) -> Result<(), EbpflowRtlError> {
        if slots.len() > IMEM_SLOTS {
            return Err(EbpflowRtlError::TooBig {
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
        self.batch(&lines)
    }

    /// Writes the coprocessor's map table, map *i* of `maps` at index *i* (the number a program passes in r1), laid
    /// out in that order. Once per model: the table cannot be rewritten; a map the coprocessor refuses (a type it
    /// does not have, a key over 16 or a value over 32 bytes, more entries than its stores hold) is an error.
    pub fn map_table(&mut self, maps: &[hwxdp_object::MapSpec]) -> Result<(), EbpflowRtlError> {
        if maps.len() > MAP_SLOTS {
            return Err(EbpflowRtlError::TooBig {
                what: "map table (maps)",
                need: maps.len(),
                have: MAP_SLOTS,
            });
        }
        let lines: Vec<String> = maps
            .iter()
            .enumerate()
            .map(|(i, m)| {
                format!(
                    "map {i:x} {:x} {:x} {:x} {:x}",
                    m.map_type, m.key_size, m.value_size, m.max_entries
                )
            })
            .collect();
        self.batch(&lines)
    }

    /// Zeroes the data memory (header, frame and stack), as a fresh engine has it.
    pub fn clear(&mut self) -> Result<(), EbpflowRtlError> {
        self.batch(&["clear".to_string()])
    }

    /// Streams `frame` in behind `header`, `gap` idle cycles between two 8-byte beats (0: a beat every cycle), and
    /// runs until the engine is idle again.
    pub fn run(&mut self, header: &Header, frame: &[u8], gap: u32) -> Result<Run, EbpflowRtlError> {
        if frame.len() > MAX_FRAME {
            return Err(EbpflowRtlError::TooBig {
                what: "frame (bytes)",
                need: frame.len(),
                have: MAX_FRAME,
            });
        }
        let bytes = if frame.is_empty() {
            "-".to_string()
        } else {
            hex(frame)
        };
        let line = format!("run {gap:x} {:x} {bytes}", header.tuser(frame.len() as u16));
        let answer = self.call(&line)?;
        let bad = || EbpflowRtlError::Protocol {
            command: short(&line),
            answer: answer.clone(),
        };
        let fields: Vec<&str> = answer.split_whitespace().collect();
        if fields.len() != 7 || fields[0] != "result" {
            return Err(bad());
        }
        let num = |i: usize| u64::from_str_radix(fields[i], 16).map_err(|_| bad());
        let frame = if fields[6] == "-" {
            Vec::new()
        } else {
            unhex(fields[6]).ok_or_else(bad)?
        };
        Ok(Run {
            r0: num(1)?,
            fault: num(2)? != 0,
            cycles: num(3)?,
            done_at: num(4)?,
            last_beat_at: num(5)?,
            frame,
        })
    }

    /// The whole data memory, [`MEMORY_BYTES`] bytes: the header (bytes 0..31), the frame, the stack frames.
    pub fn dump(&mut self) -> Result<Vec<u8>, EbpflowRtlError> {
        let answer = self.call("dump")?;
        answer
            .strip_prefix("mem ")
            .and_then(unhex)
            .filter(|m| m.len() == MEMORY_BYTES)
            .ok_or_else(|| EbpflowRtlError::Protocol {
                command: "dump".into(),
                answer: short(&answer),
            })
    }

    /// Sends `lines`, each answered `ok`.
    fn batch(&mut self, lines: &[String]) -> Result<(), EbpflowRtlError> {
        self.harness
            .batch(lines, |line, answer| EbpflowRtlError::Protocol {
                command: short(line),
                answer,
            })
    }

    fn call(&mut self, line: &str) -> Result<String, EbpflowRtlError> {
        let answer = self.harness.call(line)?;
        if answer == "timeout" {
            return Err(EbpflowRtlError::Timeout {
                command: short(line),
            });
        }
        if answer.starts_with("error") {
            return Err(EbpflowRtlError::Protocol {
                command: short(line),
                answer,
            });
        }
        Ok(answer)
    }
}

impl From<Died> for EbpflowRtlError {
    fn from(died: Died) -> Self {
        EbpflowRtlError::Exited {
            command: died.command,
            story: died.story,
        }
    }
}

/// A program's bytes (8 a slot, little-endian) as slots; a trailing partial slot is refused.
pub fn slots_of(bytes: &[u8]) -> Option<Vec<u64>> {
    if !bytes.len().is_multiple_of(8) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_table_4_1_little_endian() {
        let h = Header {
            input_port: 1,
            source_queue: 2,
            destination_queue: 3,
            seconds: 0x0405_0607,
            nanoseconds: 0x0809_0a0b,
        };
        let bytes = h.tuser(0x0c0d).to_le_bytes();
        assert_eq!(
            bytes[..13],
            [1, 2, 3, 7, 6, 5, 4, 0x0b, 0x0a, 9, 8, 0x0d, 0x0c]
        );
        assert_eq!(bytes[13..], [0, 0, 0]);
    }

    #[test]
    fn slots_are_little_endian_and_whole() {
        assert_eq!(
            slots_of(&[0xb7, 0, 0, 0, 7, 0, 0, 0]),
            Some(vec![0x7_0000_00b7])
        );
        assert_eq!(slots_of(&[0; 9]), None);
    }

    #[test]
    fn the_embedded_sources_are_the_checkouts() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let embedded = EbpflowPaths::embedded("/cache")
            .build_spec()
            .expect("embedded");
        let checkout = EbpflowPaths {
            source_root: Some(root.clone()),
            ..EbpflowPaths::embedded("/cache")
        }
        .build_spec()
        .expect("checkout");
        let names: Vec<&std::path::Path> =
            embedded.texts.iter().map(|(p, _)| p.as_path()).collect();
        assert_eq!(names, checkout.sources);
        for (path, text) in &embedded.texts {
            let file = std::fs::read_to_string(root.join("rtl").join(path)).expect("source");
            assert!(
                file == *text,
                "{} differs from the checkout",
                path.display()
            );
        }
        let harness = std::fs::read_to_string(&checkout.testbench).expect("harness");
        assert_eq!(embedded.testbench_text.as_deref(), Some(harness.as_str()));
    }

    #[test]
    fn a_missing_checkout_names_the_file() {
        let dir = std::env::temp_dir().join(format!("ebpflow-paths-{}", std::process::id()));
        let err = EbpflowPaths {
            source_root: Some(dir.clone()),
            ..EbpflowPaths::embedded("/cache")
        }
        .build_spec()
        .expect_err("nothing there");
        assert_eq!(
            err.to_string(),
            format!(
                "{}/rtl/ebpflow/ebpflow_conformance.sv is missing: the eBPFlow engine needs it",
                dir.display()
            )
        );
    }
}
