//! The Warp Engine (`rtl/warp/`, the top `warp_engine`) under Verilator.
//!
//! [`WarpRtl::new`] builds the model for a [`Params`] and a data width (or takes it from the cache: [`WarpPaths`],
//! from the sources embedded in the binary unless `HWXDP_ROOT` names a checkout) and starts its harness
//! (`sim/warp/warp_harness.cpp`, whose header is the protocol). [`WarpRtl::load`] writes a warped program's rules
//! through the engine's configuration port ([`config_writes`] turns a [`Warp`] into the port's writes);
//! [`WarpRtl::run`] streams packets back to back and gives, per packet, the engine's [`Decision`] and the frame as it
//! left, with the clocks it entered and left at.

use std::path::PathBuf;

use hwxdp_warp::{Action, Params, Value, Warp};
use hwxdp_xdp::{Resume, ResumeValue, StackWrite};

use crate::build::locked_build;
use crate::line_harness::{hex, short, unhex, Died, LineHarness};
use crate::unit::{SpecError, Unit};
use crate::{BuildSpec, Model, RtlError};

/// The model's top.
pub const TOP: &str = "warp_engine";

/// The harness, embedded so that an installed binary needs no checkout.
const HARNESS: &str = include_str!("../../../sim/warp/warp_harness.cpp");

/// The engine and its harness.
const ENGINE: Unit = Unit {
    dir: "warp",
    top: TOP,
    harness_name: "warp_harness.cpp",
    harness_text: HARNESS,
    sim_dir: "warp",
};

/// Bits of one TCAM slice (`warp_tcam`): each slice is one 512-word RAM.
const SLICE_BITS: usize = 9;

/// Configuration-port memories (`warp_engine`'s `cfg_sel_i`).
const SEL_KEY: u8 = 0;
const SEL_TCAM: u8 = 1;
const SEL_ACTION: u8 = 2;
const SEL_REGS: u8 = 3;
const SEL_STACK: u8 = 4;

/// Why the engine's model could not be built, configured or run.
#[derive(Debug, thiserror::Error)]
pub enum WarpRtlError {
    /// Verilator could not build the model (or is missing).
    #[error(transparent)]
    Build(#[from] RtlError),
    /// A source file the model needs is missing.
    #[error("{path} is missing: the Warp Engine needs it")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The rules need more of the engine than the model has, or a value its configuration cannot hold.
    #[error("the rules do not fit the Warp Engine: {0}")]
    DoesNotFit(String),
    /// The harness executable could not be started.
    #[error("cannot start the Warp Engine harness {executable}: {source}")]
    Start {
        /// The executable.
        executable: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The harness answered something the protocol does not allow, or refused the command.
    #[error("Warp Engine harness, after {command:?}: {answer:?}")]
    Protocol {
        /// The command (long ones cut).
        command: String,
        /// Its answer.
        answer: String,
    },
    /// The packets did not all leave within the harness's clock limit.
    #[error("Warp Engine did not emit every packet within the harness's clock limit")]
    Timeout,
    /// The harness exited while a command was outstanding.
    #[error("Warp Engine harness exited during {command:?}: {story}")]
    Exited {
        /// The command (long ones cut).
        command: String,
        /// Exit status and its last words on stderr.
        story: String,
    },
}

impl From<SpecError> for WarpRtlError {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::Missing(path) => WarpRtlError::Missing { path },
            SpecError::Io(e) => WarpRtlError::Build(e),
        }
    }
}

/// Where the engine's sources come from, where its model is cached and which Verilator builds it.
#[derive(Clone, Debug)]
pub struct WarpPaths {
    /// A checkout whose `rtl/warp/` and `sim/warp/warp_harness.cpp` the model is built from instead of the sources
    /// embedded in the binary (`None`, the default).
    pub source_root: Option<PathBuf>,
    /// The directory models are cached in ([`crate::cache_dir`] by default).
    pub cache_dir: PathBuf,
    /// The Verilator program.
    pub verilator: PathBuf,
    /// AXI4-Stream data bits (a multiple of 64; 512 in the NIC, 64 makes a faster model).
    pub data_width: u32,
}

impl WarpPaths {
    /// The sources embedded in the binary, cached in `cache_dir`, `verilator` from `PATH`, a 512-bit data path.
    pub fn embedded(cache_dir: impl Into<PathBuf>) -> WarpPaths {
        WarpPaths {
            source_root: None,
            cache_dir: cache_dir.into(),
            verilator: PathBuf::from("verilator"),
            data_width: 512,
        }
    }

    /// The Verilator build of the engine sized for `params`: every file of `rtl/warp/` and `rtl/common/`, the
    /// harness, and the parameters as `-G` overrides.
    pub fn build_spec(&self, params: &Params) -> Result<BuildSpec, WarpRtlError> {
        let mut spec = ENGINE.spec(
            self.source_root.as_deref(),
            &self.cache_dir,
            &self.verilator,
        )?;
        let sizes = [
            ("DATA_W", self.data_width),
            ("CHUNK", params.chunk.into()),
            ("KEY_BYTES", params.key_bytes.into()),
            ("KEY_EXTRACTORS", params.key_extractors.into()),
            ("KEY_READ", params.key_read.into()),
            ("TCAM_ENTRIES", params.tcam_entries.into()),
            ("REG_EXTRACTORS", params.reg_extractors.into()),
            ("STACK_EXTRACTORS", params.stack_extractors.into()),
        ];
        spec.flags = sizes.iter().map(|(n, v)| format!("-G{n}={v}")).collect();
        spec.flags.extend([
            "-CFLAGS".to_string(),
            format!(
                "-DWARP_DATA_W={} -DWARP_STACK_EXTRACTORS={}",
                self.data_width, params.stack_extractors
            ),
        ]);
        Ok(spec)
    }

    /// Builds the model, or finds it in the cache, under a lock that makes concurrent processes build it once.
    pub fn model(&self, params: &Params) -> Result<Model, WarpRtlError> {
        let spec = self.build_spec(params)?;
        Ok(locked_build(&spec, TOP, &mut || {})?)
    }
}

/// One configuration-port write: memory, address (line, stage or RAM word), word of the line (or TCAM slice), data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigWrite {
    /// `cfg_sel_i`.
    pub sel: u8,
    /// `cfg_addr_i`.
    pub addr: u16,
    /// `cfg_word_i`.
    pub word: u8,
    /// `cfg_wdata_i`.
    pub data: u64,
}

/// The configuration-port writes that load `warp`'s rules into an engine built for `warp.params`: every key stage
/// (unused ones disabled), every word of every TCAM slice, and the action, register and stack lines of each TCAM
/// line (entries in priority order, a rule's lines repeated for each of its entries).
pub fn config_writes(warp: &Warp) -> Result<Vec<ConfigWrite>, WarpRtlError> {
    let p = &warp.params;
    let mut out = key_writes(warp)?;
    let entries: Vec<(usize, &hwxdp_warp::rules::KeyEntry)> = warp
        .rules
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.entries.iter().map(move |e| (i, e)))
        .collect();
    if entries.len() > p.tcam_entries as usize {
        return Err(WarpRtlError::DoesNotFit(format!(
            "{} TCAM entries, the engine has {}",
            entries.len(),
            p.tcam_entries
        )));
    }
    out.extend(tcam_writes(
        &entries.iter().map(|(_, e)| *e).collect::<Vec<_>>(),
        p,
    ));
    for (line, (rule, _)) in entries.iter().enumerate() {
        out.extend(line_writes(warp, *rule, line as u16)?);
    }
    Ok(out)
}

/// The key stages' words.
fn key_writes(warp: &Warp) -> Result<Vec<ConfigWrite>, WarpRtlError> {
    let p = &warp.params;
    let layout = &warp.layout;
    if layout.extractors.len() > p.key_extractors as usize || layout.key_bytes > p.key_bytes {
        return Err(WarpRtlError::DoesNotFit(format!(
            "{} key extractors and {} key bytes, the engine has {} and {}",
            layout.extractors.len(),
            layout.key_bytes,
            p.key_extractors,
            p.key_bytes
        )));
    }
    let mut out = Vec::new();
    for stage in 0..p.key_extractors {
        let data = match layout.extractors.get(stage as usize) {
            None => 0,
            Some(e) => {
                let (len, offset) = match e.source {
                    hwxdp_warp::rules::KeySource::Chunk(o) => (0u64, o),
                    hwxdp_warp::rules::KeySource::Length(o) => (1, o),
                };
                if e.width > p.key_read.min(4) || offset > 255 || e.key_offset > 255 {
                    return Err(WarpRtlError::DoesNotFit(format!(
                        "key extractor {stage}: {e:?}"
                    )));
                }
                let mask = e
                    .mask
                    .iter()
                    .enumerate()
                    .fold(0u64, |m, (i, b)| m | u64::from(*b) << (32 + 8 * i));
                1 | len << 1
                    | u64::from(offset) << 8
                    | u64::from(e.width) << 16
                    | u64::from(e.key_offset) << 24
                    | mask
            }
        };
        out.push(ConfigWrite {
            sel: SEL_KEY,
            addr: stage,
            word: 0,
            data,
        });
    }
    Ok(out)
}

/// Every word of every TCAM slice (`warp_tcam`) for the lines `entries` (line `e` is `entries[e]`) of a
/// `params.key_bytes`-byte key: bit `e` of word `a` of slice `s` is set when line `e` accepts `a` there.
pub fn tcam_writes(entries: &[&hwxdp_warp::rules::KeyEntry], p: &Params) -> Vec<ConfigWrite> {
    let key_bits = p.key_bytes as usize * 8;
    let slices = key_bits.div_ceil(SLICE_BITS);
    let bit = |bytes: &[u8], k: usize| bytes.get(k / 8).is_some_and(|b| b >> (k % 8) & 1 == 1);
    let mut out = Vec::with_capacity(slices << SLICE_BITS);
    for s in 0..slices {
        let fields: Vec<(u16, u16)> = entries
            .iter()
            .map(|e| {
                (0..SLICE_BITS).fold((0u16, 0u16), |(v, m), i| {
                    let k = s * SLICE_BITS + i;
                    (
                        v | u16::from(bit(&e.value, k)) << i,
                        m | u16::from(bit(&e.mask, k)) << i,
                    )
                })
            })
            .collect();
        for a in 0..1u16 << SLICE_BITS {
            let data = fields
                .iter()
                .enumerate()
                .filter(|(_, (v, m))| (a ^ v) & m == 0)
                .fold(0u64, |w, (e, _)| w | 1 << e);
            out.push(ConfigWrite {
                sel: SEL_TCAM,
                addr: a,
                word: s as u8,
                data,
            });
        }
    }
    out
}

/// The action, register and stack lines of TCAM line `line`, which belongs to rule `rule`.
fn line_writes(warp: &Warp, rule: usize, line: u16) -> Result<Vec<ConfigWrite>, WarpRtlError> {
    let p = &warp.params;
    let r = &warp.rules[rule];
    let write = |sel, word, data| ConfigWrite {
        sel,
        addr: line,
        word,
        data,
    };
    let priority = u64::from(u16::try_from(r.priority).map_err(|_| too_big("rule", rule))?);
    let mut out = Vec::new();
    match &r.action {
        Action::Verdict { retval, .. } => {
            out.push(write(
                SEL_ACTION,
                0,
                1 | priority << 16 | u64::from(*retval) << 32,
            ));
            out.push(write(SEL_ACTION, 1, 0));
        }
        Action::Restore(x) => {
            // The action line's r0 field (the verdict's return value for a verdict) holds a restore's r0, which
            // the hXDP module's resume port sets zero-extended.
            let r0 = match x.r0 {
                None => 0,
                Some(r0) => u32::try_from(r0).map_err(|_| {
                    WarpRtlError::DoesNotFit(format!(
                        "rule {rule} restores r0 = {r0:#x}: the RTL engine's action line holds a 32-bit r0"
                    ))
                })?,
            };
            if x.regs.len() > p.reg_extractors as usize
                || x.stack.len() > p.stack_extractors as usize
            {
                return Err(WarpRtlError::DoesNotFit(format!(
                    "rule {rule}: {} registers and {} stack writes, the engine has {} and {}",
                    x.regs.len(),
                    x.stack.len(),
                    p.reg_extractors,
                    p.stack_extractors
                )));
            }
            let warped = u32::try_from(x.warped).map_err(|_| too_big("warped count", rule))?;
            out.push(write(SEL_ACTION, 0, priority << 16 | u64::from(r0) << 32));
            out.push(write(
                SEL_ACTION,
                1,
                u64::from(x.slot) | u64::from(warped) << 32,
            ));
            for i in 0..p.reg_extractors as usize {
                let (a, b) = match x.regs.get(i) {
                    None => (0, 0),
                    Some((reg, v)) => {
                        let (a, b) = value_words(v, rule)?;
                        (a | u64::from(*reg) << 4, b)
                    }
                };
                out.push(write(SEL_REGS, 2 * i as u8, a));
                out.push(write(SEL_REGS, 2 * i as u8 + 1, b));
            }
            for i in 0..p.stack_extractors as usize {
                let (a, b) = match x.stack.get(i) {
                    None => (0, 0),
                    Some(s) => {
                        let off =
                            i16::try_from(s.offset).map_err(|_| too_big("stack offset", rule))?;
                        let (a, b) = value_words(&s.value, rule)?;
                        (a | u64::from(s.size) << 4 | u64::from(off as u16) << 32, b)
                    }
                };
                out.push(write(SEL_STACK, 2 * i as u8, a));
                out.push(write(SEL_STACK, 2 * i as u8 + 1, b));
            }
        }
    }
    Ok(out)
}

fn too_big(what: &str, rule: usize) -> WarpRtlError {
    WarpRtlError::DoesNotFit(format!("rule {rule}: {what} too large for its field"))
}

/// `warp_extract`'s two configuration words for a restored value (the register or size field left 0).
fn value_words(v: &Value, rule: usize) -> Result<(u64, u64), WarpRtlError> {
    Ok(match *v {
        Value::Const { value } => (1, value),
        Value::Extract(e) => {
            if e.offset > 255 || e.length > 8 {
                return Err(too_big("extraction", rule));
            }
            let a = 2
                | u64::from(e.offset) << 8
                | u64::from(e.length) << 16
                | u64::from(e.big_endian) << 20
                | u64::from(e.shift as u8) << 24;
            (a, e.mask)
        }
        Value::Length { offset } => (3, offset as u64),
        Value::Context => (4, 0),
        Value::Packet { offset } => (5, offset as u64),
        Value::PacketEnd { offset } => (6, offset as u64),
        Value::Stack { offset } => (7, offset as u64),
        Value::Map { map } => (8, u64::from(map)),
    })
}

/// What the engine decided for one packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// No rule matched: the processor runs the packet from the start.
    Miss,
    /// Rule `rule` gave the verdict `retval`.
    Verdict {
        /// The rule's priority.
        rule: usize,
        /// r0.
        retval: u32,
    },
    /// Rule `rule` restored this context.
    Restore {
        /// The rule's priority.
        rule: usize,
        /// Slot, r1-r9, stack writes and warped instructions.
        resume: Resume,
    },
}

/// One packet through the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passed {
    /// The engine's decision.
    pub decision: Decision,
    /// The length the engine counted.
    pub len: usize,
    /// The frame as it left.
    pub bytes: Vec<u8>,
    /// The clock its last beat went in (the first clock of the run is 0).
    pub in_at: u64,
    /// The clock its first beat came out.
    pub out_at: u64,
}

/// A started engine model.
pub struct WarpRtl {
    harness: LineHarness,
}

impl WarpRtl {
    /// Builds (or takes from the cache) the model for `params` and starts its harness.
    pub fn new(paths: &WarpPaths, params: &Params) -> Result<WarpRtl, WarpRtlError> {
        let model = paths.model(params)?;
        let harness =
            LineHarness::start(&model.executable).map_err(|source| WarpRtlError::Start {
                executable: model.executable.clone(),
                source,
            })?;
        Ok(WarpRtl { harness })
    }

    /// Loads `warp`'s rules (the model must have been built for `warp.params`).
    pub fn load(&mut self, warp: &Warp) -> Result<(), WarpRtlError> {
        let lines: Vec<String> = config_writes(warp)?
            .iter()
            .map(|w| format!("cfg {:x} {:x} {:x} {:x}", w.sel, w.addr, w.word, w.data))
            .collect();
        self.batch(&lines)
    }

    /// Streams `packets` back to back, the output ready in clock `c` when bit `c % 64` of `ready` is set.
    pub fn run(&mut self, packets: &[Vec<u8>], ready: u64) -> Result<Vec<Passed>, WarpRtlError> {
        let lines: Vec<String> = packets.iter().map(|p| format!("pkt {}", hex(p))).collect();
        self.batch(&lines)?;
        let command = format!("go {ready:x}");
        self.harness.send(&command)?;
        let mut out = Vec::with_capacity(packets.len());
        for _ in packets {
            let answer = self.harness.read(&command)?;
            out.push(parse_record(&answer).ok_or_else(|| refused(&command, answer))?);
        }
        let answer = self.harness.read(&command)?;
        if !answer.starts_with("done ") {
            return Err(refused(&command, answer));
        }
        Ok(out)
    }

    /// Sends `lines`, each answered `ok`.
    fn batch(&mut self, lines: &[String]) -> Result<(), WarpRtlError> {
        self.harness.batch(lines, refused)
    }
}

/// The error for `answer`, which is not what `command` expects.
fn refused(command: &str, answer: String) -> WarpRtlError {
    if answer == "timeout" {
        return WarpRtlError::Timeout;
    }
    WarpRtlError::Protocol {
        command: short(command),
        answer: short(&answer),
    }
}

impl From<Died> for WarpRtlError {
    fn from(died: Died) -> Self {
        WarpRtlError::Exited {
            command: died.command,
            story: died.story,
        }
    }
}

/// A `rec` line of the harness.
fn parse_record(line: &str) -> Option<Passed> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() != 14 || f[0] != "rec" {
        return None;
    }
    let num = |s: &str| u64::from_str_radix(s, 16).ok();
    let list = |s: &str| -> Option<Vec<u64>> { s.split(',').map(num).collect() };
    let (hit, verdict, rule) = (num(f[3])? != 0, num(f[4])? != 0, num(f[5])? as usize);
    let decision = if !hit {
        Decision::Miss
    } else if verdict {
        Decision::Verdict {
            rule,
            retval: num(f[6])? as u32,
        }
    } else {
        let (kinds, values) = (list(f[10])?, list(f[11])?);
        if kinds.len() != 9 || values.len() != 9 {
            return None;
        }
        let mut regs = [None; 9];
        for (r, slot) in regs.iter_mut().enumerate() {
            *slot = resume_value(kinds[r], values[r])?;
        }
        let mut stack = Vec::new();
        if f[12] != "-" {
            for w in f[12].split(',') {
                let parts = w.split(':').map(num).collect::<Option<Vec<u64>>>()?;
                let [size, off, kind, value] = parts[..] else {
                    return None;
                };
                stack.push(StackWrite {
                    off: i64::from(off as u16 as i16),
                    size: size as u8,
                    value: resume_value(kind, value)??,
                });
            }
        }
        Decision::Restore {
            rule,
            resume: Resume {
                slot: num(f[7])? as usize,
                // The record's r0 is 0 where the rule restores none, as where it restores 0.
                r0: Some(num(f[6])?).filter(|&r0| r0 != 0),
                regs,
                stack,
                skipped: num(f[8])?,
            },
        }
    };
    Some(Passed {
        decision,
        len: num(f[9])? as usize,
        bytes: if f[13] == "-" {
            Vec::new()
        } else {
            unhex(f[13])?
        },
        in_at: num(f[1])?,
        out_at: num(f[2])?,
    })
}

/// A register's output kind and value as the machine's value; `Some(None)` for a register not restored.
fn resume_value(kind: u64, value: u64) -> Option<Option<ResumeValue>> {
    Some(Some(match kind {
        0 => return Some(None),
        1 => ResumeValue::Scalar(value),
        2 => ResumeValue::Context,
        3 => ResumeValue::Packet(value as i64),
        4 => ResumeValue::PacketEnd(value as i64),
        5 => ResumeValue::Stack(value as i64),
        6 => ResumeValue::Map(value as u32),
        _ => return None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwxdp_warp::rules::{Extractor, KeyEntry, KeyLayout, KeySource};
    use hwxdp_warp::Rule;

    /// `n` verdict rules of one exact entry each over the ethertype.
    fn warp(n: u16) -> Warp {
        Warp {
            program: "t".into(),
            params: Params::default(),
            layout: KeyLayout {
                extractors: vec![Extractor {
                    source: KeySource::Chunk(12),
                    width: 2,
                    mask: vec![0xff, 0x0f],
                    key_offset: 0,
                }],
                key_bytes: 2,
            },
            rules: (0..n)
                .map(|i| Rule {
                    priority: i.into(),
                    matches: Vec::new(),
                    entries: vec![KeyEntry {
                        value: i.to_be_bytes().to_vec(),
                        mask: vec![0xff, 0xff],
                    }],
                    action: Action::Verdict {
                        retval: 2,
                        exit: 0,
                        warped: 1,
                    },
                    path: Vec::new(),
                    stop: None,
                    fallback: None,
                })
                .collect(),
            blocks: Vec::new(),
            report: Default::default(),
        }
    }

    #[test]
    fn the_configuration_covers_every_stage_and_tcam_word() {
        let writes = config_writes(&warp(3)).expect("fits");
        let count = |sel| writes.iter().filter(|w| w.sel == sel).count();
        assert_eq!(count(SEL_KEY), 12);
        assert_eq!(count(SEL_TCAM), 15 * 512);
        assert_eq!(count(SEL_ACTION), 3 * 2);
        let key: Vec<u64> = writes
            .iter()
            .filter(|w| w.sel == SEL_KEY)
            .map(|w| w.data)
            .collect();
        assert_eq!(key[0], 1 | 12 << 8 | 2 << 16 | 0x0fff << 32);
        assert!(key[1..].iter().all(|&k| k == 0), "unused stages disabled");
        // Line 2 (key bytes 00 02: key bit 9, bit 0 of slice 1, set, key bits 10-15 clear, 16-17 past the 2-byte
        // entry free) accepts the four words of slice 1 whose low 7 bits are 1.
        let slice1: Vec<&ConfigWrite> = writes
            .iter()
            .filter(|w| w.sel == SEL_TCAM && w.word == 1 && w.data & 4 != 0)
            .collect();
        let addrs: Vec<u16> = slice1.iter().map(|w| w.addr).collect();
        assert_eq!(addrs, [0x001, 0x081, 0x101, 0x181]);
    }

    #[test]
    fn rules_beyond_the_engine_are_refused() {
        let err = config_writes(&warp(65)).expect_err("65 entries");
        assert_eq!(
            err.to_string(),
            "the rules do not fit the Warp Engine: 65 TCAM entries, the engine has 64"
        );
        let mut w = warp(1);
        w.layout.extractors[0].width = 3;
        assert!(config_writes(&w).is_err(), "a 3-byte key extractor");
    }

    #[test]
    fn a_record_line_becomes_a_restore() {
        let line = "rec 2 1f 1 0 3 0 2a 5 40 1,2,0,0,0,0,0,0,3 7,0,0,0,0,0,0,0,e \
                    4:fff8:1:abcd,8:fff0:5:fffffffffffffff0 0011";
        let p = parse_record(line).expect("parses");
        let Decision::Restore { rule, resume } = p.decision else {
            panic!("not a restore: {p:?}");
        };
        assert_eq!(
            (rule, resume.slot, resume.skipped, p.len),
            (3, 0x2a, 5, 0x40)
        );
        assert_eq!(resume.regs[0], Some(ResumeValue::Scalar(7)));
        assert_eq!(resume.regs[1], Some(ResumeValue::Context));
        assert_eq!(resume.regs[8], Some(ResumeValue::Packet(14)));
        assert_eq!(resume.regs[2], None);
        assert_eq!(
            resume.stack,
            vec![
                StackWrite {
                    off: -8,
                    size: 4,
                    value: ResumeValue::Scalar(0xabcd)
                },
                StackWrite {
                    off: -16,
                    size: 8,
                    value: ResumeValue::Stack(-16)
                }
            ]
        );
        assert_eq!(p.bytes, vec![0, 0x11]);
    }
}
