//! Yosys synthesis for Xilinx UltraScale+ (`synth_xilinx -family xcup`): a pass/fail check of sources on disk
//! ([`synth`], [`synth_with`]) and a full run over sources held in memory that counts what the design maps to
//! ([`run_synthesis`]: LUTs, LUTRAM, flip-flops, block and ultra RAM, DSPs, carry chains).

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::tool::{self, problem_lines};
use crate::RtlError;

/// The Debian package providing `yosys`.
const YOSYS_PACKAGE: &str = "yosys";

/// How often a running synthesis is polled for completion and its progress reported.
const POLL: Duration = Duration::from_millis(200);

/// Makes work directory names unique within this process.
static WORK_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Synthesizes `sources` for `top` with `yosys -q -p "read_verilog -sv ...; synth_xilinx -family xcup -top ..."`
/// and reports whether it succeeded; see [`run_synthesis`] for resource counts.
pub fn synth(sources: &[PathBuf], top: &str) -> Result<(), RtlError> {
    synth_with(sources, top, &[])
}

/// [`synth`] with `top`'s parameters overridden (`chparam -set NAME VALUE`), e.g. a smaller configuration whose
/// synthesis takes seconds rather than minutes.
pub fn synth_with(sources: &[PathBuf], top: &str, params: &[(&str, u64)]) -> Result<(), RtlError> {
    if sources.is_empty() {
        return Err(RtlError::NoSources {
            top: top.to_string(),
        });
    }
    let files: Vec<String> = sources
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    let params: Vec<(String, u64)> = params
        .iter()
        .map(|(name, value)| (name.to_string(), *value))
        .collect();
    let script = script(&files, top, &params, None);
    let finished = tool::run(
        Path::new("yosys"),
        YOSYS_PACKAGE,
        ["-q", "-p", script.as_str()],
        None,
    )?;
    if finished.success {
        return Ok(());
    }
    Err(RtlError::Synth {
        top: top.to_string(),
        log: problem_lines(&finished.text),
    })
}

/// The Yosys script: read `files`, override `top`'s `params`, synthesize for UltraScale+ and, when `stat_json` is
/// given, write the design's statistics there as JSON (and print them to the log). Yosys keeps quotes around a
/// `tee -o` file name, so `stat_json` must be a plain name without spaces.
fn script(
    files: &[String],
    top: &str,
    params: &[(String, u64)],
    stat_json: Option<&str>,
) -> String {
    let quoted: Vec<String> = files.iter().map(|f| format!("\"{f}\"")).collect();
    let mut script = format!("read_verilog -sv {}; ", quoted.join(" "));
    if !params.is_empty() {
        script.push_str("chparam");
        for (name, value) in params {
            script.push_str(&format!(" -set {name} {value}"));
        }
        script.push_str(&format!(" {top}; "));
    }
    script.push_str(&format!("synth_xilinx -family xcup -top {top}"));
    if let Some(path) = stat_json {
        // A parameterized top can come out of synthesis renamed `$paramod\<top>\<PARAM>=...` (Yosys 0.23 did so for
        // `hxdp` with `chparam -set LANES 1`), and `stat -top <top>` would then fail after the whole synthesis.
        script.push_str(&format!(
            "; rename -top {top}; stat -top {top}; tee -q -o {path} stat -json -top {top}"
        ));
    }
    script
}

/// One synthesis to run with [`run_synthesis`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthJob {
    /// The top module.
    pub top: String,
    /// Verilog sources as (relative path, text); they are written to a private directory under these paths, so
    /// Yosys' messages name them so (e.g. `rtl/sephirot/alu.sv:12`).
    pub sources: Vec<(String, String)>,
    /// Parameters of `top` to override, in order.
    pub params: Vec<(String, u64)>,
    /// Where Yosys' full log goes; kept after the run, whatever its outcome.
    pub log: PathBuf,
    /// The Yosys program, `yosys` from `PATH` unless overridden.
    pub yosys: PathBuf,
}

/// What a synthesis produced.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthReport {
    /// Cells of the whole design (the hierarchy under the top, flattened) by type, e.g. `LUT6`, `FDRE`.
    pub cells: BTreeMap<String, u64>,
    /// The cells counted as FPGA resources.
    pub resources: Resources,
    /// Wall-clock seconds of the Yosys run.
    pub seconds: f64,
    /// Yosys' version line, e.g. `Yosys 0.23 (git sha1 7ce5011c24b)`.
    pub yosys_version: String,
}

/// FPGA resources of an UltraScale+ netlist, from its cell counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    /// LUTs used as logic: LUT1 to LUT6.
    pub lut: u64,
    /// LUTs used as memory, in LUTs as Vivado's utilisation report counts them: distributed RAM (a RAM64M8 is 8
    /// LUTs, a RAM32M 4, a RAM64X1S 1, ...) and shift registers (SRL16E, SRLC32E: 1 each).
    pub lutram: u64,
    /// Flip-flops: FDRE, FDSE, FDCE, FDPE.
    pub ff: u64,
    /// Latches (LDCE, LDPE); hwxdp's RTL should have none.
    pub latch: u64,
    /// RAMB18E2 (and FIFO18E2) blocks.
    pub ramb18: u64,
    /// RAMB36E2 (and FIFO36E2) blocks.
    pub ramb36: u64,
    /// URAM288 blocks.
    pub uram: u64,
    /// DSP48E2 slices.
    pub dsp: u64,
    /// Carry chains: CARRY8 and CARRY4 cells (Yosys 0.23 maps UltraScale+ carry logic to CARRY4).
    pub carry: u64,
}

impl Resources {
    /// Counts the resources of a netlist's `cells` (type to count).
    pub fn from_cells(cells: &BTreeMap<String, u64>) -> Self {
        let mut r = Resources::default();
        for (cell, &count) in cells {
            match cell.as_str() {
                "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6" => r.lut += count,
                "FDRE" | "FDSE" | "FDCE" | "FDPE" => r.ff += count,
                "LDCE" | "LDPE" => r.latch += count,
                "RAMB18E2" | "FIFO18E2" => r.ramb18 += count,
                "RAMB36E2" | "FIFO36E2" => r.ramb36 += count,
                "URAM288" | "URAM288_BASE" => r.uram += count,
                "DSP48E2" => r.dsp += count,
                "CARRY8" | "CARRY4" => r.carry += count,
                other => r.lutram += count * lutram_luts(other),
            }
        }
        r
    }

    /// Block RAM in RAMB36 equivalents: a RAMB18E2 is half of one.
    pub fn bram36(&self) -> f64 {
        self.ramb36 as f64 + self.ramb18 as f64 / 2.0
    }
}

/// LUTs taken by one cell of a distributed-RAM or shift-register type (UltraScale+), 0 for any other cell.
fn lutram_luts(cell: &str) -> u64 {
    match cell {
        "RAM32X1S" | "RAM64X1S" | "SRL16E" | "SRLC16E" | "SRLC32E" => 1,
        "RAM32X1D" | "RAM64X1D" | "RAM128X1S" => 2,
        "RAM32M" | "RAM64M" | "RAM128X1D" | "RAM256X1S" => 4,
        "RAM32M16" | "RAM64M8" | "RAM256X1D" | "RAM512X1S" => 8,
        _ => 0,
    }
}

/// What `stat -json -top TOP` says about a design.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// The `creator` field: Yosys' version line.
    pub creator: String,
    /// The design's cells by type, the hierarchy flattened (instances of the design's own modules left out).
    pub cells: BTreeMap<String, u64>,
}

/// Reads the output of Yosys' `stat -json -top TOP`. The `design` section sums the hierarchy; without one (a
/// `stat` with no top), a design of a single module is read from that module.
pub fn parse_stat_json(text: &str) -> Result<Stat, String> {
    let value: serde_json::Value = serde_json::from_str(&without_hierarchy_lines(text))
        .map_err(|err| format!("stat output is not JSON: {err}"))?;
    let creator = value
        .get("creator")
        .and_then(|c| c.as_str())
        .unwrap_or_default()
        .to_string();
    let modules = value
        .get("modules")
        .and_then(|m| m.as_object())
        .ok_or("stat output has no `modules` object")?;
    let design = match value.get("design") {
        Some(design) => design,
        None if modules.len() == 1 => modules.values().next().expect("one module"),
        None => return Err("stat output has several modules and no `design` section".into()),
    };
    let by_type = design
        .get("num_cells_by_type")
        .and_then(|c| c.as_object())
        .ok_or("stat output has no `num_cells_by_type` for the design")?;
    let mut cells = BTreeMap::new();
    for (cell, count) in by_type {
        // A design's own (sub)modules appear as cell types of their parent; the design section expands them.
        if modules.contains_key(cell) || modules.contains_key(&format!("\\{cell}")) {
            continue;
        }
        let count = count
            .as_u64()
            .ok_or_else(|| format!("stat output: count of {cell} is not a number"))?;
        cells.insert(cell.clone(), count);
    }
    Ok(Stat { creator, cells })
}

/// `stat -json` output without the plain-text lines Yosys 0.23 mixes into it: for a hierarchy more than one level
/// deep it prints the submodule tree (`       alu      1`) between `modules` and `design`. Every line of the JSON
/// itself holds a quote or a bracket.
fn without_hierarchy_lines(text: &str) -> String {
    text.lines()
        .filter(|line| line.trim().is_empty() || line.contains(['"', '{', '}', '[', ']']))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Synthesizes `job` with Yosys, calling `progress` about five times a second with the pass Yosys is in (from its
/// log), and counts the resulting cells. The sources live in a private temporary directory, removed afterwards; the
/// log stays at `job.log` and a failure names it.
pub fn run_synthesis(
    job: &SynthJob,
    progress: &mut dyn FnMut(&str),
) -> Result<SynthReport, RtlError> {
    if job.sources.is_empty() {
        return Err(RtlError::NoSources {
            top: job.top.clone(),
        });
    }
    let work = work_dir()?;
    let result = run_in(job, &work, progress);
    // Best effort: a leftover temporary directory is harmless, and the result matters more.
    let _ = fs::remove_dir_all(&work);
    result
}

/// Creates a fresh directory for one run's sources.
fn work_dir() -> Result<PathBuf, RtlError> {
    let dir = std::env::temp_dir().join(format!(
        "hwxdp-synth-{}-{}",
        std::process::id(),
        WORK_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|source| RtlError::Io {
        action: "cannot create",
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// [`run_synthesis`] with its work directory made.
fn run_in(
    job: &SynthJob,
    work: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<SynthReport, RtlError> {
    for (relative, text) in &job.sources {
        let path = work.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|source| RtlError::Io {
                action: "cannot create",
                path: parent.to_path_buf(),
                source,
            })?;
        }
        fs::write(&path, text).map_err(|source| RtlError::Io {
            action: "cannot write",
            path: path.clone(),
            source,
        })?;
    }
    // Yosys resolves the log path against its own working directory (the work directory), so make it absolute.
    let log = absolute(&job.log)?;
    let console_path = work.join("yosys-console.txt");
    let console = fs::File::create(&console_path).map_err(|source| RtlError::Io {
        action: "cannot create",
        path: console_path.clone(),
        source,
    })?;
    let console_err = console.try_clone().map_err(|source| RtlError::Io {
        action: "cannot open",
        path: console_path.clone(),
        source,
    })?;
    let files: Vec<String> = job.sources.iter().map(|(path, _)| path.clone()).collect();
    let stat_name = "stat.json";
    let script = script(&files, &job.top, &job.params, Some(stat_name));
    let started = Instant::now();
    // A relative program path (`./yosys`) means the caller's directory, not the work directory Yosys runs in; a
    // bare name is looked up on PATH.
    let program = if job.yosys.is_relative() && job.yosys.components().count() > 1 {
        absolute(&job.yosys)?
    } else {
        job.yosys.clone()
    };
    let mut child = Command::new(&program)
        .arg("-q")
        .arg("-l")
        .arg(&log)
        .arg("-p")
        .arg(&script)
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(console)
        .stderr(console_err)
        .spawn()
        .map_err(|source| spawn_error(&job.yosys, source))?;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {
                if let Some(pass) = current_pass(&log) {
                    progress(&pass);
                }
                std::thread::sleep(POLL);
            }
            Err(source) => {
                let _ = child.kill();
                return Err(RtlError::Spawn {
                    tool: job.yosys.display().to_string(),
                    source,
                });
            }
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    if !status.success() {
        return Err(failure(job, &log, &console_path, status));
    }
    let stat_path = work.join(stat_name);
    let text = fs::read_to_string(&stat_path).map_err(|source| RtlError::Io {
        action: "cannot read Yosys' statistics",
        path: stat_path.clone(),
        source,
    })?;
    let stat = parse_stat_json(&text).map_err(|reason| RtlError::Synth {
        top: job.top.clone(),
        log: format!("{reason}\nfull log: {}", log.display()),
    })?;
    Ok(SynthReport {
        resources: Resources::from_cells(&stat.cells),
        cells: stat.cells,
        seconds,
        yosys_version: stat.creator,
    })
}

/// The error of a Yosys run that exited with `status`: its error lines (from the log, else its console output) and
/// where the full log is.
fn failure(job: &SynthJob, log: &Path, console: &Path, status: ExitStatus) -> RtlError {
    let log_text = fs::read_to_string(log).unwrap_or_default();
    let console_text = fs::read_to_string(console).unwrap_or_default();
    let text = if log_text.contains("ERROR") || console_text.trim().is_empty() {
        log_text
    } else {
        console_text
    };
    let problems = problem_lines(&text);
    let problems = if problems.trim().is_empty() {
        "yosys printed nothing".to_string()
    } else {
        problems
    };
    RtlError::Synth {
        top: job.top.clone(),
        log: format!("{problems}\n(yosys {status}; full log: {})", log.display()),
    }
}

/// A spawn failure as an error; a program that does not exist names the Debian package that provides it.
fn spawn_error(program: &Path, source: io::Error) -> RtlError {
    let tool = program.display().to_string();
    if source.kind() == io::ErrorKind::NotFound {
        RtlError::ToolMissing {
            tool,
            package: YOSYS_PACKAGE,
        }
    } else {
        RtlError::Spawn { tool, source }
    }
}

/// `path` made absolute against the current directory.
fn absolute(path: &Path) -> Result<PathBuf, RtlError> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    std::env::current_dir()
        .map(|cwd| cwd.join(path))
        .map_err(|source| RtlError::Io {
            action: "cannot resolve",
            path: path.to_path_buf(),
            source,
        })
}

/// The pass Yosys is in: the last `N.M. Executing X pass (...)` header in the tail of its log, as `X pass (...)`.
fn current_pass(log: &Path) -> Option<String> {
    const TAIL: u64 = 16 * 1024;
    let mut file = fs::File::open(log).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL))).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    last_pass(&text)
}

/// The last pass header of a piece of Yosys log.
fn last_pass(text: &str) -> Option<String> {
    text.lines().rev().find_map(|line| {
        let (number, rest) = line.split_once(". Executing ")?;
        let numbered = !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '.');
        // "Verilog-2005 frontend: /usr/share/yosys/xilinx/cells_sim.v" names a file; the step is enough.
        let step = rest.split(": ").next().unwrap_or(rest);
        numbered.then(|| step.trim_end_matches('.').to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `stat -json` of a wrapper `w` holding two `imem` instances (64 bundles in LUTRAM, 1024 in block RAM), as
    /// Yosys 0.23 printed it after `synth_xilinx -family xcup -top w`.
    const STAT: &str = r#"{
   "creator": "Yosys 0.23 (git sha1 7ce5011c24b)",
   "invocation": "stat -json ",
   "modules": {
      "$paramod$32c907bb3763bb0885c16033c053c04ac9dcc4fb\\imem": {
         "num_wires":         21,
         "num_cells":         3,
         "num_cells_by_type": {
            "LUT4": 1,
            "RAMB36E2": 2
         }
      },
      "$paramod$9256397a879748b29d2ad329e2b1bb0195d11618\\imem": {
         "num_wires":         12,
         "num_cells":         75,
         "num_cells_by_type": {
            "FDRE": 64,
            "LUT4": 1,
            "RAM64M8": 10
         }
      },
      "\\w": {
         "num_wires":         9,
         "num_cells":         138,
         "num_cells_by_type": {
            "$paramod$32c907bb3763bb0885c16033c053c04ac9dcc4fb\\imem": 1,
            "$paramod$9256397a879748b29d2ad329e2b1bb0195d11618\\imem": 1,
            "BUFG": 1,
            "IBUF": 7,
            "OBUF": 128
         }
      }
   },
      "design": {
         "num_wires":         42,
         "num_cells":         214,
         "num_cells_by_type": {
            "BUFG": 1,
            "FDRE": 64,
            "IBUF": 7,
            "LUT4": 2,
            "OBUF": 128,
            "RAM64M8": 10,
            "RAMB36E2": 2
         }
      }
}
"#;

    #[test]
    fn stat_json_of_a_hierarchy_is_read_from_the_design_section() {
        let stat = parse_stat_json(STAT).expect("valid stat output");
        assert_eq!(stat.creator, "Yosys 0.23 (git sha1 7ce5011c24b)");
        let expected: BTreeMap<String, u64> = [
            ("BUFG", 1),
            ("FDRE", 64),
            ("IBUF", 7),
            ("LUT4", 2),
            ("OBUF", 128),
            ("RAM64M8", 10),
            ("RAMB36E2", 2),
        ]
        .into_iter()
        .map(|(cell, count)| (cell.to_string(), count))
        .collect();
        assert_eq!(stat.cells, expected);
        let r = Resources::from_cells(&stat.cells);
        assert_eq!(
            r,
            Resources {
                lut: 2,
                lutram: 80,
                ff: 64,
                ramb36: 2,
                ..Resources::default()
            }
        );
        assert_eq!(r.bram36(), 2.0);
    }

    /// The shape of Yosys 0.23's `stat -json -top sephirot` for a two-level hierarchy (sephirot, lane, alu): the
    /// submodule tree is printed as text inside the JSON.
    const STAT_DEEP: &str = r#"{
   "creator": "Yosys 0.23 (git sha1 7ce5011c24b)",
   "invocation": "stat -json -top sephirot ",
   "modules": {
      "\\alu": {
         "num_cells":         3,
         "num_cells_by_type": {
            "CARRY4": 2,
            "LUT6": 1
         }
      },
      "\\lane": {
         "num_cells":         2,
         "num_cells_by_type": {
            "LUT2": 1,
            "alu": 1
         }
      },
      "\\sephirot": {
         "num_cells":         3,
         "num_cells_by_type": {
            "FDRE": 4,
            "lane": 2
         }
      }
   },
       alu                           1
      "design": {
         "num_cells":         12,
         "num_cells_by_type": {
            "CARRY4": 4,
            "FDRE": 4,
            "LUT2": 2,
            "LUT6": 2
         }
      }
}
"#;

    #[test]
    fn stat_json_of_a_deep_hierarchy_skips_the_text_yosys_mixes_in() {
        let stat = parse_stat_json(STAT_DEEP).expect("readable despite the stray line");
        let r = Resources::from_cells(&stat.cells);
        assert_eq!((r.lut, r.carry, r.ff), (4, 4, 4));
        assert_eq!(stat.cells.len(), 4);
        // Instances named without the backslash of the module's key are submodules too.
        let text = STAT_DEEP.replace("\"design\"", "\"unused\"");
        let only_modules = parse_stat_json(&text);
        assert!(only_modules.is_err(), "three modules, no design section");
        let one = r#"{"modules": {"\\lane": {"num_cells_by_type": {"LUT2": 1, "alu": 1}},
                      "\\alu": {"num_cells_by_type": {}}}, "design": {"num_cells_by_type": {"LUT2": 1, "alu": 1}}}"#;
        let cells = parse_stat_json(one).expect("valid").cells;
        assert_eq!(cells.keys().collect::<Vec<_>>(), ["LUT2"]);
    }

    #[test]
    fn a_single_module_without_design_section_is_read_and_bad_output_is_refused() {
        let single = r#"{"creator": "Yosys 0.23", "modules": {"\\alu": {"num_cells_by_type":
            {"LUT6": 10, "CARRY8": 3, "DSP48E2": 2, "RAMB18E2": 3, "URAM288": 1, "FDSE": 4, "LDCE": 1}}}}"#;
        let stat = parse_stat_json(single).expect("one module");
        let r = Resources::from_cells(&stat.cells);
        assert_eq!(
            (r.lut, r.carry, r.dsp, r.ramb18, r.uram, r.ff, r.latch),
            (10, 3, 2, 3, 1, 4, 1)
        );
        assert_eq!(r.bram36(), 1.5);
        assert!(parse_stat_json("not json").is_err());
        let two =
            r#"{"modules": {"\\a": {"num_cells_by_type": {}}, "\\b": {"num_cells_by_type": {}}}}"#;
        assert!(parse_stat_json(two)
            .unwrap_err()
            .contains("no `design` section"));
        let bad = r#"{"modules": {"\\a": {"num_cells_by_type": {"LUT1": "x"}}}}"#;
        assert!(parse_stat_json(bad).unwrap_err().contains("LUT1"));
    }

    #[test]
    fn the_script_sets_parameters_and_writes_statistics() {
        let params = vec![("LANES".to_string(), 2), ("AW".to_string(), 6)];
        assert_eq!(
            script(
                &["rtl/a.sv".into(), "rtl/b.sv".into()],
                "a",
                &params,
                Some("s.json")
            ),
            "read_verilog -sv \"rtl/a.sv\" \"rtl/b.sv\"; chparam -set LANES 2 -set AW 6 a; \
             synth_xilinx -family xcup -top a; rename -top a; stat -top a; tee -q -o s.json stat -json -top a"
        );
        assert_eq!(
            script(&["a.sv".into()], "a", &[], None),
            "read_verilog -sv \"a.sv\"; synth_xilinx -family xcup -top a"
        );
    }

    #[test]
    fn the_current_pass_is_the_last_header_in_the_log() {
        let log = "3.46. Executing XILINX_DFFOPT pass (optimize FF control signal usage).\nnoise\n\
                   3.47. Executing OPT_LUT_INS pass (discard unused LUT inputs).\nMapping 3 LUTs.\n";
        assert_eq!(
            last_pass(log).as_deref(),
            Some("OPT_LUT_INS pass (discard unused LUT inputs)")
        );
        assert_eq!(last_pass("nothing here\n"), None);
        assert_eq!(
            last_pass(
                "1.2. Executing Verilog-2005 frontend: /usr/share/yosys/xilinx/cells_sim.v\n"
            )
            .as_deref(),
            Some("Verilog-2005 frontend")
        );
    }
}
