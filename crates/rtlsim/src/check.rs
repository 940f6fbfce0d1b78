//! Static checks of RTL sources: Verilator's lint (Yosys' synthesis check is in `synth`).

use std::path::{Path, PathBuf};

use crate::tool::{self, problem_lines};
use crate::RtlError;

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
