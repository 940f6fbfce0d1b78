//! Exit codes of the `hwxdp` commands and the words every command's `--help` uses for them.
//!
//! The texts are constants so that a command takes them as it is declared: `#[command(after_help =
//! crate::exit::AFTER_HELP)]` for a command that only succeeds or fails, `#[command(after_help =
//! crate::exit::AFTER_HELP_CHECK)]` for one that checks something (runs two programs side by side, tests
//! expectations) and can find a difference. `hwxdp --help` gives the second: 1 wherever a command has a check.

/// Exit code of a usage, input or setup error (a failed check is 1, success 0): bad options (clap exits with it too), an unreadable or refused input,
/// a missing tool, an output that could not be written.
pub const ERROR: u8 = 2;

/// The exit status paragraph of a command without a check of its own (0 or 2).
pub const AFTER_HELP: &str = "\
Exit status:
  0  success
  2  usage, input or setup error";

/// The exit status paragraph of a command that checks something (0, 1 or 2).
pub const AFTER_HELP_CHECK: &str = "\
Exit status:
  0  success: every check passed
  1  a check failed: the programs differ
  2  usage, input or setup error";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paragraphs_give_the_codes() {
        for (code, text) in [(0, "success"), (ERROR, "usage, input or setup error")] {
            let line = format!("  {code}  {text}");
            assert!(AFTER_HELP.contains(&line), "{AFTER_HELP}");
            assert!(AFTER_HELP_CHECK.contains(&line), "{AFTER_HELP_CHECK}");
        }
        assert!(AFTER_HELP_CHECK.contains("  1  a check failed"));
        assert!(!AFTER_HELP.contains("  1  "));
    }
}
