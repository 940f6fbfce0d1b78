//! Running the external tools and picking the lines worth showing out of their output.

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::process::Command;

use crate::RtlError;

/// At most this many problem lines are carried by an error.
const MAX_PROBLEM_LINES: usize = 20;

/// What a finished tool run left behind.
pub(crate) struct Finished {
    /// The exit status was zero.
    pub(crate) success: bool,
    /// Standard output followed by standard error.
    pub(crate) text: String,
}

/// Runs `program` with `args` (in `cwd` when given) to completion, capturing its output. A program that does not
/// exist is reported as missing together with the Debian `package` that provides it.
pub(crate) fn run<I, S>(
    program: &Path,
    package: &'static str,
    args: I,
    cwd: Option<&Path>,
) -> Result<Finished, RtlError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_with_env(program, package, args, cwd, &[])
}

/// [`run`] with `env` added to the program's environment.
pub(crate) fn run_with_env<I, S>(
    program: &Path,
    package: &'static str,
    args: I,
    cwd: Option<&Path>,
    env: &[(&str, &OsStr)],
) -> Result<Finished, RtlError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(program);
    command.args(args);
    command.envs(env.iter().copied());
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let output = command.output().map_err(|source| {
        let tool = program.display().to_string();
        if source.kind() == io::ErrorKind::NotFound {
            RtlError::ToolMissing { tool, package }
        } else {
            RtlError::Spawn { tool, source }
        }
    })?;
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Ok(Finished {
        success: output.status.success(),
        text,
    })
}

/// The first lines of `text` that report a problem (Verilator's `%Error`/`%Warning`, a compiler's `error:`, Yosys'
/// `ERROR:`), or its last lines when none is recognisable, so that an error always shows something.
pub(crate) fn problem_lines(text: &str) -> String {
    let is_problem = |line: &&str| {
        let trimmed = line.trim_start();
        trimmed.starts_with("%Error")
            || trimmed.starts_with("%Warning")
            || trimmed.starts_with("ERROR")
            || line.contains("error:")
            || line.contains("Error ")
    };
    let problems: Vec<&str> = text
        .lines()
        .filter(is_problem)
        .take(MAX_PROBLEM_LINES)
        .collect();
    if !problems.is_empty() {
        return problems.join("\n");
    }
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(MAX_PROBLEM_LINES);
    lines[start..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_lines_prefer_errors_and_fall_back_to_the_tail() {
        let log = "make: entering\n%Error: alu.sv:3:1: syntax error\nnoise\n%Warning-WIDTH: alu.sv:9: width\n";
        assert_eq!(
            problem_lines(log),
            "%Error: alu.sv:3:1: syntax error\n%Warning-WIDTH: alu.sv:9: width"
        );
        assert_eq!(problem_lines("one\ntwo\n"), "one\ntwo");
    }

    #[test]
    fn a_missing_program_names_its_package() {
        let missing = Path::new("hwxdp-no-such-tool");
        match run(missing, "some-package", ["--version"], None) {
            Err(RtlError::ToolMissing { tool, package }) => {
                assert_eq!(tool, "hwxdp-no-such-tool");
                assert_eq!(package, "some-package");
            }
            Err(other) => panic!("expected a missing tool, got {other}"),
            Ok(_) => panic!("a program that does not exist ran"),
        }
    }
}
