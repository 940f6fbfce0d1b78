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
    script_for(files, top, params, stat_json, &Flow::default())
}

/// [`script`] for a [`Flow`]: its family, `-noiopad` out of context, and after the statistics (when `flow.path`)
/// the longest register-to-register path written to [`LTP_FILE`] (see [`LogicPath`]).
fn script_for(
    files: &[String],
    top: &str,
    params: &[(String, u64)],
    stat_json: Option<&str>,
    flow: &Flow,
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
    let ooc = if flow.out_of_context { " -noiopad" } else { "" };
    script.push_str(&format!(
        "synth_xilinx -family {}{ooc} -top {top}",
        flow.family
    ));
    if let Some(path) = stat_json {
        // A parameterized top can come out of synthesis renamed `$paramod\<top>\<PARAM>=...` (Yosys 0.23 did so for
        // `hxdp` with `chparam -set LANES 1`), and `stat -top <top>` would then fail after the whole synthesis.
        script.push_str(&format!(
            "; rename -top {top}; stat -top {top}; tee -q -o {path} stat -json -top {top}"
        ));
        if flow.path {
            script.push_str(&format!("; {}", path_commands()));
        }
    }
    script
}

/// The file the longest path goes to, in the work directory.
const LTP_FILE: &str = "ltp.txt";

/// Yosys commands that write the longest register-to-register path to [`LTP_FILE`]: the netlist flattened, its
/// combinational cells renamed by type (`hwxdp_lut7`, `hwxdp_muxf3`, `hwxdp_carry12`; `rename -enumerate` renames
/// only cells with private names, which every LUT, MUXF and carry cell Yosys maps has), and `ltp` over the wires
/// and those cells alone, so flip-flops, RAM blocks, LUTRAM, DSPs, I/O and clock buffers end every path.
fn path_commands() -> String {
    let mut commands = String::from("flatten");
    for (pattern, cells) in PATH_CELLS {
        commands.push_str(&format!("; rename -enumerate -pattern {pattern}% {cells}"));
    }
    let selection: Vec<&str> = PATH_CELLS.iter().map(|(_, cells)| *cells).collect();
    commands.push_str(&format!(
        "; tee -q -o {LTP_FILE} ltp -noff w:* {}",
        selection.join(" ")
    ));
    commands
}

/// The combinational cells a register-to-register path is counted through: (name prefix, Yosys selection).
const PATH_CELLS: [(&str, &str); 3] = [
    ("hwxdp_lut", "t:LUT*"),
    ("hwxdp_muxf", "t:MUXF*"),
    ("hwxdp_carry", "t:CARRY*"),
];

/// An FPGA (or the FPGA of a board) that `hwxdp synth --device` reports shares of, with its capacities as its vendor's
/// data sheet gives them (docs/rtl.md, "Synthesis", names each data sheet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    /// The name on the command line: `xcu50`, `xcu250`, `xcu280`, `vcu118`, `xc7vx690t`.
    pub name: &'static str,
    /// What it is, e.g. `Alveo U50 (XCU50)`.
    pub board: &'static str,
    /// The Yosys family its netlist is mapped for: `xcup` (UltraScale+) or `xc7` (7 series).
    pub family: &'static str,
    /// CLB LUTs.
    pub lut: u64,
    /// CLB flip-flops (registers).
    pub ff: u64,
    /// 36 Kb block RAMs (each two 18 Kb ones).
    pub bram36: u64,
    /// 288 Kb UltraRAMs (none on 7 series).
    pub uram: u64,
    /// DSP slices (DSP48E2; DSP48E1 on 7 series).
    pub dsp: u64,
    /// The data sheet the figures come from.
    pub source: &'static str,
}

/// The devices `hwxdp synth --device` knows; the first is the default.
pub const DEVICES: [Device; 5] = [
    Device {
        name: "xcu50",
        board: "Alveo U50 (XCU50)",
        family: "xcup",
        lut: 872_000,
        ff: 1_743_000,
        bram36: 1_344,
        uram: 640,
        dsp: 5_952,
        source: "AMD DS965, Alveo U50 Data Center Accelerator Card Data Sheet, Table 1",
    },
    Device {
        name: "xcu250",
        board: "Alveo U250 (XCU250)",
        family: "xcup",
        lut: 1_728_000,
        ff: 3_456_000,
        bram36: 2_688,
        uram: 1_280,
        dsp: 12_288,
        source: "AMD DS962, Alveo U200 and U250 Data Center Accelerator Cards Data Sheet, Table 1",
    },
    Device {
        name: "xcu280",
        board: "Alveo U280 (XCU280)",
        family: "xcup",
        lut: 1_304_000,
        ff: 2_607_000,
        bram36: 2_016,
        uram: 960,
        dsp: 9_024,
        source: "AMD DS963, Alveo U280 Data Center Accelerator Card Data Sheet, Table 1",
    },
    Device {
        name: "vcu118",
        board: "VCU118 board (Virtex UltraScale+ XCVU9P)",
        family: "xcup",
        lut: 1_182_240,
        ff: 2_364_480,
        bram36: 2_160,
        uram: 960,
        dsp: 6_840,
        source: "AMD DS890, UltraScale Architecture and Product Data Sheet: Overview, Virtex UltraScale+ table (VU9P)",
    },
    Device {
        name: "xc7vx690t",
        board: "NetFPGA SUME (Virtex-7 XC7VX690T)",
        family: "xc7",
        lut: 433_200,
        ff: 866_400,
        bram36: 1_470,
        uram: 0,
        dsp: 3_600,
        source: "AMD DS180, 7 Series FPGAs Data Sheet: Overview, Virtex-7 table (XC7VX690T)",
    },
];

/// The device called `name` in [`DEVICES`].
pub fn device(name: &str) -> Option<&'static Device> {
    DEVICES.iter().find(|d| d.name == name)
}

/// One resource of a netlist against a device's capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    /// `LUT`, `FF`, `BRAM`, `URAM` or `DSP`.
    pub resource: &'static str,
    /// What the netlist uses (LUTs as logic and as memory together; BRAM in RAMB36 equivalents).
    pub used: f64,
    /// What the device has.
    pub capacity: u64,
}

impl Share {
    /// The share in percent (infinite when the device has none of it and the netlist uses some).
    pub fn percent(&self) -> f64 {
        if self.capacity == 0 {
            return if self.used > 0.0 { f64::INFINITY } else { 0.0 };
        }
        100.0 * self.used / self.capacity as f64
    }

    /// Whether the device has enough of it.
    pub fn fits(&self) -> bool {
        self.used <= self.capacity as f64
    }
}

impl Resources {
    /// The netlist's shares of `device`: LUT (logic and LUTRAM), FF, BRAM (RAMB36 equivalents), URAM, DSP.
    pub fn shares(&self, device: &Device) -> [Share; 5] {
        let share = |resource, used: f64, capacity| Share {
            resource,
            used,
            capacity,
        };
        [
            share("LUT", (self.lut + self.lutram) as f64, device.lut),
            share("FF", self.ff as f64, device.ff),
            share("BRAM", self.bram36(), device.bram36),
            share("URAM", self.uram as f64, device.uram),
            share("DSP", self.dsp as f64, device.dsp),
        ]
    }
}

/// The verdict lines of a synthesis on `device` at a target clock of `target_mhz`: whether the netlist fits (and
/// if not, every resource it has too little of), and whether the Fmax estimate of its longest path reaches the
/// target clock (when the path was measured).
pub fn verdicts(
    resources: &Resources,
    path: Option<&LogicPath>,
    device: &Device,
    target_mhz: f64,
) -> Vec<String> {
    let shares = resources.shares(device);
    let over: Vec<String> = shares
        .iter()
        .filter(|s| !s.fits())
        .map(|s| {
            if s.capacity == 0 {
                format!("{} {:.0} (it has none)", s.resource, s.used)
            } else {
                format!(
                    "{} {:.0} of {} ({:.0}%)",
                    s.resource,
                    s.used,
                    s.capacity,
                    s.percent()
                )
            }
        })
        .collect();
    let mut lines = Vec::new();
    if over.is_empty() {
        let largest = shares
            .iter()
            .max_by(|a, b| a.percent().total_cmp(&b.percent()))
            .expect("five shares");
        lines.push(format!(
            "fits the {} {}: largest share {} {:.1}%",
            device.name,
            device.board,
            largest.resource,
            largest.percent()
        ));
    } else {
        lines.push(format!(
            "DOES NOT FIT the {} {}: {}",
            device.name,
            device.board,
            over.join(", ")
        ));
    }
    if let Some(path) = path {
        let fmax = path.fmax_mhz(&DELAYS);
        if fmax >= target_mhz {
            lines.push(format!(
                "estimated {fmax:.0} MHz: at or above the {target_mhz:.0} MHz target clock"
            ));
        } else {
            lines.push(format!(
                "UNDER THE TARGET CLOCK: estimated {fmax:.0} MHz, below {target_mhz:.0} MHz"
            ));
        }
    }
    lines
}

/// How a synthesis is run: the FPGA family, whether out of context, whether the longest path is measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    /// `synth_xilinx -family`: `xcup` (UltraScale+) or `xc7` (7 series).
    pub family: String,
    /// `-noiopad`: no IBUF/OBUF on the top's ports (the module is a block inside a larger design, as on a shell).
    pub out_of_context: bool,
    /// Measure the longest register-to-register path ([`SynthReport::path`]).
    pub path: bool,
}

impl Default for Flow {
    /// UltraScale+, I/O buffers inserted, no path: what [`run_synthesis`] has always done.
    fn default() -> Self {
        Flow {
            family: "xcup".into(),
            out_of_context: false,
            path: false,
        }
    }
}

impl Flow {
    /// Out of context on `device`'s family, with the longest path measured: what `hwxdp synth` runs.
    pub fn for_device(device: &Device) -> Self {
        Flow {
            family: device.family.into(),
            out_of_context: true,
            path: true,
        }
    }
}

/// The combinational cells on the longest register-to-register path of a netlist, by kind, as Yosys' `ltp` finds it
/// over LUTs, wide multiplexers and carry cells (every other cell ends a path). The longest path counts cells, so a
/// carry chain of 32 bits is 8 CARRY4 cells there, where its delay is nearer one LUT's; [`LogicPath::delay_ns`]
/// weighs them apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogicPath {
    /// LUT1-LUT6 cells (and any cell with a public name, counted as a LUT).
    pub luts: u64,
    /// MUXF7, MUXF8, MUXF9 cells.
    pub muxes: u64,
    /// CARRY4/CARRY8 cells.
    pub carries: u64,
}

/// The delays an Fmax estimate assumes for one logic level, in nanoseconds. Not a timing analysis: no placement,
/// no routing, no fan-out; see [`DELAYS`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delays {
    /// A LUT and the route into the next cell.
    pub lut_ns: f64,
    /// A MUXF7/8/9 (inside the slice, no general route).
    pub mux_ns: f64,
    /// One carry cell of a chain.
    pub carry_ns: f64,
    /// The launching register's clock-to-out and the capturing register's setup, with clock skew.
    pub register_ns: f64,
}

/// The assumed delays (docs/rtl.md, "Synthesis"), for an UltraScale+ of speed grade -2. They are this project's
/// planning figures, not a vendor's: the UltraScale+ data sheets (DS922, DS923) publish no per-LUT or routing delays
/// (Vivado's timing models hold them), and routing dominates a LUT's own sub-0.1 ns. 0.5 ns per LUT level is a LUT
/// plus an average net, which puts 7 levels (with 0.4 ns for the launching register's clock-to-out and the
/// capturing one's setup) at 256 MHz; a MUXF stays inside the slice (0.1 ns), and a carry cell passes 4 or 8 bits
/// along a dedicated chain (0.1 ns). An estimate from a netlist without placement, not a timing report.
pub const DELAYS: Delays = Delays {
    lut_ns: 0.5,
    mux_ns: 0.1,
    carry_ns: 0.1,
    register_ns: 0.4,
};

impl LogicPath {
    /// The logic levels: every cell on the path, as Vivado's report counts them.
    pub fn levels(&self) -> u64 {
        self.luts + self.muxes + self.carries
    }

    /// The path's estimated delay under `delays`, registers included.
    pub fn delay_ns(&self, delays: &Delays) -> f64 {
        delays.register_ns
            + self.luts as f64 * delays.lut_ns
            + self.muxes as f64 * delays.mux_ns
            + self.carries as f64 * delays.carry_ns
    }

    /// The estimated maximum clock in MHz under `delays`.
    pub fn fmax_mhz(&self, delays: &Delays) -> f64 {
        1000.0 / self.delay_ns(delays)
    }
}

/// Reads what `ltp` printed (`Longest topological path in TOP (length=N):` and one line per wire, `(via CELL)`
/// naming the cell driving it) into the cells of the path by kind; `length=-1` (no combinational cell at all) is
/// an empty path.
pub fn parse_ltp(text: &str) -> Result<LogicPath, String> {
    let header = text
        .lines()
        .find(|line| line.contains("Longest topological path"))
        .ok_or("no `Longest topological path` line in ltp's output")?;
    let length: i64 = header
        .split_once("length=")
        .and_then(|(_, rest)| rest.split(')').next())
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("no length in `{}`", header.trim()))?;
    let mut path = LogicPath::default();
    for line in text.lines() {
        let Some((_, via)) = line.rsplit_once("(via ") else {
            continue;
        };
        let cell = via.trim_end().trim_end_matches(')');
        if cell.starts_with(PATH_CELLS[1].0) {
            path.muxes += 1;
        } else if cell.starts_with(PATH_CELLS[2].0) {
            path.carries += 1;
        } else {
            path.luts += 1;
        }
    }
    if length >= 0 && path.levels() != length as u64 {
        return Err(format!(
            "ltp says length={length} but lists {} cells",
            path.levels()
        ));
    }
    Ok(path)
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
    /// The longest register-to-register path, when the [`Flow`] asked for it.
    pub path: Option<LogicPath>,
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
                "RAMB18E2" | "FIFO18E2" | "RAMB18E1" | "FIFO18E1" => r.ramb18 += count,
                "RAMB36E2" | "FIFO36E2" | "RAMB36E1" | "FIFO36E1" => r.ramb36 += count,
                "URAM288" | "URAM288_BASE" => r.uram += count,
                "DSP48E2" | "DSP48E1" => r.dsp += count,
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
    run_synthesis_with(job, &Flow::default(), progress)
}

/// [`run_synthesis`] as `flow` says: the family, out of context or not, and the longest register-to-register path
/// ([`SynthReport::path`]) when `flow.path`.
pub fn run_synthesis_with(
    job: &SynthJob,
    flow: &Flow,
    progress: &mut dyn FnMut(&str),
) -> Result<SynthReport, RtlError> {
    if job.sources.is_empty() {
        return Err(RtlError::NoSources {
            top: job.top.clone(),
        });
    }
    let work = work_dir()?;
    let result = run_in(job, flow, &work, progress);
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
    flow: &Flow,
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
    let script = script_for(&files, &job.top, &job.params, Some(stat_name), flow);
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
    let path = if flow.path {
        let ltp_path = work.join(LTP_FILE);
        let text = fs::read_to_string(&ltp_path).map_err(|source| RtlError::Io {
            action: "cannot read Yosys' longest path",
            path: ltp_path.clone(),
            source,
        })?;
        Some(parse_ltp(&text).map_err(|reason| RtlError::Synth {
            top: job.top.clone(),
            log: format!("{reason}\nfull log: {}", log.display()),
        })?)
    } else {
        None
    };
    Ok(SynthReport {
        resources: Resources::from_cells(&stat.cells),
        cells: stat.cells,
        seconds,
        yosys_version: stat.creator,
        path,
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

    /// What Yosys 0.23's `ltp` printed for a 32-bit add into a register, its cells renamed by [`path_commands`].
    const LTP: &str = "4. Executing LTP pass (find longest path).

Longest topological path in t (length=5):
    0: \\b_q [1]
    1: $auto$alumacc.cc:485:replace_alu$1617.X [1] (via hwxdp_lut128)
    2: $auto$alumacc.cc:485:replace_alu$1617.CO [3] (via hwxdp_carry0)
    3: $auto$alumacc.cc:485:replace_alu$1617.Y [28] (via hwxdp_carry7)
    4: $abc$1.y (via hwxdp_muxf2)
    5: $0\\s_q[31:0] [28] (via hwxdp_lut123)
";

    #[test]
    fn the_longest_path_is_read_by_cell_kind_and_estimated() {
        let path = parse_ltp(LTP).expect("valid ltp output");
        assert_eq!(
            path,
            LogicPath {
                luts: 2,
                muxes: 1,
                carries: 2
            }
        );
        assert_eq!(path.levels(), 5);
        // 0.4 + 2 * 0.5 + 0.1 + 2 * 0.1 = 1.7 ns.
        assert!((path.delay_ns(&DELAYS) - 1.7).abs() < 1e-9);
        assert!((path.fmax_mhz(&DELAYS) - 1000.0 / 1.7).abs() < 1e-6);
        let empty = parse_ltp("Longest topological path in t (length=-1):\n").expect("empty");
        assert_eq!(empty.levels(), 0);
        assert!(parse_ltp("nothing").is_err());
        let short = LTP.replace("length=5", "length=6");
        assert!(parse_ltp(&short).unwrap_err().contains("length=6"));
    }

    #[test]
    fn a_device_flow_is_out_of_context_on_its_family_and_measures_the_path() {
        let u50 = device("xcu50").expect("known");
        let text = script_for(
            &["a.sv".into()],
            "a",
            &[],
            Some("s.json"),
            &Flow::for_device(u50),
        );
        assert!(
            text.contains("synth_xilinx -family xcup -noiopad -top a"),
            "{text}"
        );
        assert!(text.ends_with(
            "flatten; rename -enumerate -pattern hwxdp_lut% t:LUT*; rename -enumerate -pattern hwxdp_muxf% \
             t:MUXF*; rename -enumerate -pattern hwxdp_carry% t:CARRY*; tee -q -o ltp.txt ltp -noff w:* t:LUT* \
             t:MUXF* t:CARRY*"
        ), "{text}");
        let sume = device("xc7vx690t").expect("known");
        let text = script_for(&["a.sv".into()], "a", &[], None, &Flow::for_device(sume));
        assert_eq!(
            text,
            "read_verilog -sv \"a.sv\"; synth_xilinx -family xc7 -noiopad -top a"
        );
        assert_eq!(DEVICES[0].name, "xcu50");
        assert!(device("xcu9000").is_none());
    }

    #[test]
    fn verdicts_say_plainly_what_does_not_fit_and_what_is_too_slow() {
        let u50 = device("xcu50").expect("known");
        let small = Resources {
            lut: 80_000,
            lutram: 7_200,
            ff: 10_000,
            ramb36: 10,
            ramb18: 4,
            ..Resources::default()
        };
        let shares = small.shares(u50);
        assert_eq!(shares[0].used, 87_200.0);
        assert!((shares[0].percent() - 10.0).abs() < 1e-9);
        assert_eq!(shares[2].used, 12.0);
        let fast = LogicPath {
            luts: 6,
            ..LogicPath::default()
        };
        assert_eq!(
            verdicts(&small, Some(&fast), u50, 250.0),
            [
                "fits the xcu50 Alveo U50 (XCU50): largest share LUT 10.0%",
                "estimated 294 MHz: at or above the 250 MHz target clock"
            ]
        );
        let big = Resources {
            lut: 1_960_000,
            uram: 1,
            ..Resources::default()
        };
        let slow = LogicPath {
            luts: 12,
            carries: 8,
            muxes: 0,
        };
        let sume = device("xc7vx690t").expect("known");
        assert_eq!(
            verdicts(&big, Some(&slow), sume, 250.0),
            [
                "DOES NOT FIT the xc7vx690t NetFPGA SUME (Virtex-7 XC7VX690T): LUT 1960000 of 433200 (452%), \
                 URAM 1 (it has none)",
                "UNDER THE TARGET CLOCK: estimated 139 MHz, below 250 MHz"
            ]
        );
        assert_eq!(verdicts(&small, None, u50, 250.0).len(), 1);
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
