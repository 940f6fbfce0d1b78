//! Static checks of RTL sources: Verilator's lint and Yosys' synthesis for the UltraScale+ family.

use std::path::{Path, PathBuf};

use crate::tool::{self, problem_lines};
use crate::RtlError;

/// The Debian package providing `yosys`.
const YOSYS_PACKAGE: &str = "yosys";

/// Lints `sources` (Verilog files and `.vlt` waiver files) with `verilator --lint-only -Wall` under `top`. Any warning
/// fails the check, as `-Wall` makes every warning an error.
pub fn lint(sources: &[PathBuf], top: &str) -> Result<(), RtlError> {
    if sources.is_empty() {
        return Err(RtlError::NoSources {
            top: top.to_string(),
        });
    }
    let mut args: Vec<String> = vec![
        "--lint-only".into(),
        "-Wall".into(),
        "--top-module".into(),
        top.into(),
    ];
    args.extend(
        sources
            .iter()
            .map(|path| path.to_string_lossy().into_owned()),
    );
    let finished = tool::run(
        Path::new("verilator"),
        crate::build::VERILATOR_PACKAGE,
        &args,
        None,
    )?;
    // Verilator exits nonzero on any -Wall warning; a printed warning with a zero exit is still a failure.
    if finished.success && !finished.text.contains("%Warning") && !finished.text.contains("%Error")
    {
        return Ok(());
    }
    Err(RtlError::Lint {
        top: top.to_string(),
        log: problem_lines(&finished.text),
    })
}

/// Synthesizes `sources` for `top` with `yosys -q -p "read_verilog -sv ...; synth_xilinx -family xcup -top ..."`
/// and reports whether it succeeded; resource counts are left to the caller's own Yosys run.
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
        .map(|path| format!("\"{}\"", path.display()))
        .collect();
    let chparam: String = params
        .iter()
        .map(|(name, value)| format!("chparam -set {name} {value} {top}; "))
        .collect();
    let script = format!(
        "read_verilog -sv {}; {chparam}synth_xilinx -family xcup -top {top}",
        files.join(" ")
    );
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
