//! A Verilator harness process spoken to in lines: a command on its stdin, its answers on its stdout, the reason it
//! died on its stderr. The eBPFlow engine, the eBPFlow NIC and the Warp Engine drivers all talk to their harnesses
//! this way; each turns [`Died`] into its own error.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The harness exited (or closed its pipes) while `command` was outstanding.
#[derive(Debug)]
pub(crate) struct Died {
    /// The command, as [`short`] shows it.
    pub command: String,
    /// The exit status and the harness's last words on stderr.
    pub story: String,
}

/// A started harness.
pub(crate) struct LineHarness {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl LineHarness {
    /// Starts `executable` with its three streams piped.
    pub(crate) fn start(executable: &Path) -> io::Result<LineHarness> {
        let mut child = Command::new(executable)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        Ok(LineHarness {
            child,
            stdin,
            stdout,
        })
    }

    /// Writes one command line.
    pub(crate) fn send(&mut self, line: &str) -> Result<(), Died> {
        if writeln!(self.stdin, "{line}").is_err() || self.stdin.flush().is_err() {
            return Err(self.died(line));
        }
        Ok(())
    }

    /// Reads one answer line (without its line end) to `command`.
    pub(crate) fn read(&mut self, command: &str) -> Result<String, Died> {
        let mut answer = String::new();
        match self.stdout.read_line(&mut answer) {
            Ok(n) if n > 0 => Ok(answer.trim_end().to_string()),
            _ => Err(self.died(command)),
        }
    }

    /// [`LineHarness::send`] then [`LineHarness::read`].
    pub(crate) fn call(&mut self, line: &str) -> Result<String, Died> {
        self.send(line)?;
        self.read(line)
    }

    /// Sends `lines`, each of which the harness answers `ok`, a chunk at a time before reading the chunk's answers
    /// (the pipe holds them); the first other answer is `refused(line, answer)`.
    pub(crate) fn batch<E: From<Died>>(
        &mut self,
        lines: &[String],
        refused: impl Fn(&str, String) -> E,
    ) -> Result<(), E> {
        for chunk in lines.chunks(256) {
            let mut text = chunk.join("\n");
            text.push('\n');
            if self.stdin.write_all(text.as_bytes()).is_err() || self.stdin.flush().is_err() {
                return Err(self.died(&chunk[0]).into());
            }
            for line in chunk {
                let answer = self.read(line)?;
                if answer != "ok" {
                    return Err(refused(line, answer));
                }
            }
        }
        Ok(())
    }

    /// Ends the harness and says why it went away.
    fn died(&mut self, command: &str) -> Died {
        let _ = self.child.kill();
        let status = self
            .child
            .wait()
            .map_or_else(|e| e.to_string(), |s| s.to_string());
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        let stderr = stderr.trim();
        Died {
            command: short(command),
            story: if stderr.is_empty() {
                status
            } else {
                format!("{status}: {stderr}")
            },
        }
    }
}

impl Drop for LineHarness {
    /// Asks the harness to quit and gives it half a second before killing it.
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Bytes as hex pairs, the harnesses' byte format.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hex pairs as bytes; `None` for an odd length or a character that is not a hex digit.
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// A command as error messages show it: at most 80 characters.
pub(crate) fn short(line: &str) -> String {
    if line.len() > 80 {
        let mut end = 77;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &line[..end])
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_odd_or_bad_text() {
        assert_eq!(hex(&[0, 0xab, 7]), "00ab07");
        assert_eq!(unhex("00ab07"), Some(vec![0, 0xab, 7]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
    }

    #[test]
    fn long_commands_are_cut_to_80_characters() {
        assert_eq!(short("pkt 00"), "pkt 00");
        let long = "x".repeat(200);
        assert_eq!(short(&long).len(), 80);
        assert!(short(&long).ends_with("..."));
    }

    #[test]
    fn a_harness_that_exits_is_reported_with_its_command_and_stderr() {
        let mut harness = LineHarness::start(Path::new("/bin/sh")).expect("sh starts");
        harness.send("echo gone >&2; exit 3").expect("sh reads");
        let died = harness.read("the command").expect_err("sh exited");
        assert_eq!(died.command, "the command");
        assert!(died.story.contains("gone"), "{}", died.story);
    }
}
