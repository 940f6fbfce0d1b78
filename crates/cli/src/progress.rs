//! Progress bars on a terminal, nothing when piped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A bar over `len` packets, hidden unless standard error is a terminal.
pub fn packets(len: usize, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let style =
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} packets ({rate}, eta {eta})")
            .map(|s| s.progress_chars("=> ").with_key("rate", rate))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(what.to_string());
    bar
}

/// A counter of packets for a trace read as a stream (its length unknown), hidden unless standard error is a terminal.
pub fn counter(what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let style = ProgressStyle::with_template("{spinner} {msg} {pos} packets ({rate})")
        .map(|s| s.with_key("rate", rate))
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.set_message(what.to_string());
    bar
}

/// One line on standard error before long work (a model being built), terminal or not.
pub fn note(line: &str) {
    eprintln!("hwxdp: {line}");
}

/// A style key for whole packets per second: rates without fractions.
fn rate(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(w, "{:.0}/s", state.per_sec());
}
