//! `hwxdp completions SHELL` and `hwxdp man [-o DIR]`: shell completion scripts and manual pages, generated from the
//! same declarations as `--help`, so that they never disagree with it.

use crate::common;
use anyhow::{Context, Result};
use clap_mangen::roff::{roman, Roff};
use clap_mangen::Man;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hwxdp completions`.
#[derive(clap::Args)]
#[command(after_help = crate::exit::AFTER_HELP)]
pub struct CompletionsArgs {
    /// The shell to complete for; the script goes to standard output (e.g. `hwxdp completions bash >
    /// /etc/bash_completion.d/hwxdp`).
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Arguments of `hwxdp man`.
#[derive(clap::Args)]
#[command(after_help = crate::exit::AFTER_HELP)]
pub struct ManArgs {
    /// Directory for `hwxdp.1` and one `hwxdp-COMMAND.1` per command; without it the `hwxdp.1` page goes to
    /// standard output.
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Runs `hwxdp completions`: the script for `args.shell` completing `command`.
pub fn completions(args: CompletionsArgs, mut command: clap::Command) -> Result<ExitCode> {
    let name = command.get_name().to_string();
    let mut stdout = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut command, name, &mut stdout);
    stdout.flush().context("standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `hwxdp man`: `command`'s page on standard output, or its page and one per subcommand in `args.out`.
pub fn man(args: ManArgs, command: clap::Command) -> Result<ExitCode> {
    // `help` is a subcommand clap adds by itself; it gets no page.
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let source = format!(
        "{} {}",
        command.get_name(),
        command.get_version().unwrap_or_default()
    );
    let Some(dir) = &args.out else {
        let (_, text) = page(&command, &source)?;
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(&text)
            .and_then(|()| stdout.flush())
            .context("standard output")?;
        return Ok(ExitCode::SUCCESS);
    };
    common::create_dir(dir)?;
    let commands =
        std::iter::once(&command).chain(command.get_subcommands().filter(|s| !s.is_hide_set()));
    let mut written = Vec::new();
    for cmd in commands {
        let (name, text) = page(cmd, &source)?;
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
        written.push(path.display().to_string());
    }
    println!("wrote {} pages: {}", written.len(), written.join(", "));
    Ok(ExitCode::SUCCESS)
}

/// The file name and roff text of `command`'s page (a subcommand's is `hwxdp-COMMAND.1`), its footer naming
/// `source` (hwxdp and its version). The text `--help` prints after the options comes last, paragraph by
/// paragraph: clap_mangen would run its lines together, which garbles the exit status table.
fn page(command: &clap::Command, source: &str) -> Result<(String, Vec<u8>)> {
    let after = command.get_after_help().map(|t| t.to_string());
    let man = Man::new(command.clone().after_help(None::<&str>)).source(source);
    let mut text = Vec::new();
    man.render(&mut text).context("rendering the page")?;
    if let Some(after) = after {
        let mut roff = Roff::new();
        after_help(&mut roff, &after);
        // The apostrophe preamble that every rendering starts with is already at the top of the page.
        let rendered = roff.render();
        let body = rendered
            .find("\n.SH ")
            .map_or(rendered.as_str(), |at| &rendered[at + 1..]);
        text.extend_from_slice(body.as_bytes());
    }
    Ok((man.get_filename(), text))
}

/// `text` (the after-help of a command) as roff: a paragraph that opens with `Exit status:` is the EXIT STATUS
/// section, the others go under NOTES; a paragraph with indented lines (a table) keeps its lines as they are, prose
/// is filled.
fn after_help(roff: &mut Roff, text: &str) {
    let mut section = "";
    for paragraph in text.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let (heading, body) = match paragraph.strip_prefix("Exit status:") {
            Some(rest) => ("EXIT STATUS", rest.trim_start_matches('\n')),
            None => ("NOTES", paragraph),
        };
        if heading != section {
            roff.control("SH", [heading]);
            section = heading;
        } else {
            roff.control("PP", []);
        }
        let lines: Vec<&str> = body.lines().collect();
        if lines.iter().any(|l| l.starts_with(' ')) {
            roff.control("nf", []);
            for line in lines {
                roff.text([roman(line)]);
            }
            roff.control("fi", []);
        } else {
            roff.text([roman(lines.join(" "))]);
        }
    }
}
