//! Captures libbpf's warnings (which carry the verifier log) instead of letting libbpf print them.

use libbpf_rs::PrintLevel;
use std::cell::RefCell;

/// How many lines of the verifier log an error keeps.
pub(crate) const LOG_TAIL_LINES: usize = 20;

const BEGIN: &str = "-- BEGIN PROG LOAD LOG --";
const END: &str = "-- END PROG LOAD LOG --";

thread_local! {
    /// libbpf calls its print callback on the thread doing the work, so each thread sees its own messages.
    static CAPTURED: RefCell<String> = const { RefCell::new(String::new()) };
}

fn capture(_level: PrintLevel, message: String) {
    CAPTURED.with(|c| c.borrow_mut().push_str(&message));
}

/// Routes libbpf's warnings into this thread's capture buffer and empties it.
///
/// The callback is process-wide (libbpf has one); this crate is the only user of libbpf in hwxdp, and a library must
/// not print.
pub(crate) fn start_capture() {
    libbpf_rs::set_print(Some((PrintLevel::Warn, capture)));
    CAPTURED.with(|c| c.borrow_mut().clear());
}

/// The last [`LOG_TAIL_LINES`] lines of the last verifier log libbpf reported since [`start_capture`], or of all its
/// warnings when it reported no verifier log.
pub(crate) fn captured_tail() -> Vec<String> {
    CAPTURED.with(|c| tail_of(&c.borrow()))
}

/// The whole verifier log libbpf reported last since [`start_capture`], `None` when it reported none (a map that
/// could not be created, an object libbpf refused before loading any program).
pub(crate) fn captured_log() -> Option<String> {
    CAPTURED.with(|c| log_of(&c.borrow()))
}

/// What libbpf said failed to load since [`start_capture`]: `program <name>`, `map <name>`, or `object`.
pub(crate) fn failed_part() -> String {
    CAPTURED.with(|c| failed_part_of(&c.borrow()))
}

fn failed_part_of(text: &str) -> String {
    let quoted_before = |kind: &str, marker: &str| {
        let end = text.find(marker)?;
        let start = text[..end].rfind(&format!("{kind} '"))? + kind.len() + 2;
        text.get(start..end).map(str::to_string)
    };
    if let Some(name) = quoted_before("prog", "': BPF program load failed") {
        format!("program {name}")
    } else if let Some(name) = quoted_before("map", "': failed to create") {
        format!("map {name}")
    } else {
        "object".to_string()
    }
}

/// The text between the last pair of BEGIN/END markers, without the rest of the marker lines.
fn body_of(text: &str) -> Option<&str> {
    match (text.rfind(BEGIN), text.rfind(END)) {
        (Some(begin), Some(end)) if begin < end => {
            let body = &text[begin + BEGIN.len()..end];
            Some(body.strip_prefix('\n').unwrap_or(body))
        }
        _ => None,
    }
}

fn log_of(text: &str) -> Option<String> {
    body_of(text)
        .filter(|body| !body.trim().is_empty())
        .map(str::to_string)
}

fn tail_of(text: &str) -> Vec<String> {
    let body = body_of(text).unwrap_or(text);
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    let skip = lines.len().saturating_sub(LOG_TAIL_LINES);
    lines[skip..]
        .iter()
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{failed_part_of, log_of, tail_of};

    #[test]
    fn keeps_the_end_of_the_verifier_log_only() {
        let mut text =
            String::from("libbpf: prog 'p': BPF program load failed: Permission denied\n");
        text.push_str("libbpf: prog 'p': -- BEGIN PROG LOAD LOG --\n");
        for i in 0..30 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str("-- END PROG LOAD LOG --\nlibbpf: failed to load object\n");
        let tail = tail_of(&text);
        assert_eq!(tail.len(), 20);
        assert_eq!(tail.first().map(String::as_str), Some("line 10"));
        assert_eq!(tail.last().map(String::as_str), Some("line 29"));
        let whole = log_of(&text).expect("a verifier log");
        assert!(
            whole.starts_with("line 0\n") && whole.ends_with("line 29\n"),
            "{whole}"
        );
        assert_eq!(whole.lines().count(), 30);
    }

    #[test]
    fn names_the_program_or_map_that_failed() {
        let prog = "libbpf: prog 'xdp_reject': BPF program load failed: Permission denied\n";
        assert_eq!(failed_part_of(prog), "program xdp_reject");
        let map = "libbpf: map 'big': failed to create: Argument list too long(-7)\n";
        assert_eq!(failed_part_of(map), "map big");
        assert_eq!(failed_part_of("libbpf: something else\n"), "object");
    }

    #[test]
    fn falls_back_to_all_warnings() {
        assert_eq!(tail_of("a\n\nb\n"), vec!["a".to_string(), "b".to_string()]);
        assert_eq!(log_of("a\n\nb\n"), None);
    }
}
