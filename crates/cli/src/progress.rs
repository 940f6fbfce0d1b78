//! Progress bars on a terminal, nothing when piped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A bar over `len` packets, hidden unless standard error is a terminal.
pub fn packets(len: usize, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(packets_style());
    bar.set_message(what.to_string());
    bar
}

/// A counter of packets for a trace read as a stream (its length unknown), hidden unless standard error is a terminal.
pub fn counter(what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(counter_style());
    bar.set_message(what.to_string());
    bar
}

/// One line on standard error before long work (a model being built), terminal or not.
pub fn note(line: &str) {
    eprintln!("hwxdp: {line}");
}

fn packets_style() -> ProgressStyle {
    ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} packets ({rate}, eta {eta})")
        .map(|s| s.progress_chars("=> ").with_key("rate", rate))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

fn counter_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {msg} {pos} packets ({rate})")
        .map(|s| s.with_key("rate", rate))
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// A style key for whole packets per second: rates without fractions.
fn rate(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(w, "{:.0}/s", state.per_sec());
}

#[cfg(test)]
mod tests {
    use super::*;
    use indicatif::TermLike;
    use std::sync::{Arc, Mutex};

    /// A terminal that keeps what is drawn on it.
    #[derive(Debug, Default, Clone)]
    struct Screen(Arc<Mutex<String>>);

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().expect("screen").push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What `style` draws for a bar that has counted some packets.
    fn drawn(style: ProgressStyle, len: Option<u64>) -> String {
        let screen = Screen::default();
        let bar = ProgressBar::with_draw_target(
            len,
            ProgressDrawTarget::term_like(Box::new(screen.clone())),
        );
        bar.set_style(style);
        bar.set_message("run");
        for _ in 0..3 {
            bar.inc(7);
            std::thread::sleep(std::time::Duration::from_millis(30));
        }
        bar.abandon();
        let text = screen.0.lock().expect("screen").clone();
        text
    }

    #[test]
    fn rates_are_whole_packets_per_second() {
        for (style, len) in [(packets_style(), Some(100)), (counter_style(), None)] {
            let text = drawn(style, len);
            let rate = text
                .rsplit('(')
                .next()
                .and_then(|r| r.split("/s").next())
                .unwrap_or_default()
                .to_string();
            assert!(
                !rate.is_empty() && rate.chars().all(|c| c.is_ascii_digit()),
                "not a whole rate: {rate:?} in {text:?}"
            );
        }
    }
}
