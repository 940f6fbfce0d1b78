//! The running harness process: commands written to its stdin, answers read from its stdout with a deadline, its
//! stderr kept for error messages. The process is killed when the handle is dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command as Process, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use super::protocol::{self, Answer, Command};
use super::HxdpRtlError;

/// Most stderr bytes kept for an error message (the harness's last words).
const STDERR_KEEP: usize = 4096;

/// Commands written before their answers are read, in [`Harness::batch`]: small enough that the commands fit in the
/// pipe's buffer while the harness blocks writing answers nobody reads yet.
const BATCH: usize = 256;

/// A started harness.
pub(crate) struct Harness {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<std::io::Result<String>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    timeout: Duration,
    /// Set once the harness failed: later commands fail at once with the same story.
    dead: Option<String>,
    /// Every command and answer, when `HWXDP_RTL_LOG` names a file (for debugging the module).
    log: Option<std::io::BufWriter<std::fs::File>>,
}

impl Harness {
    /// Starts `executable` with piped stdin, stdout and stderr.
    pub(crate) fn spawn(executable: &Path, timeout: Duration) -> Result<Harness, HxdpRtlError> {
        let mut child = Process::new(executable)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| HxdpRtlError::Start {
                executable: executable.to_path_buf(),
                source,
            })?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        // A thread per pipe: a blocking read cannot time out, a channel receive can.
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let stop = line.is_err();
                if tx.send(line).is_err() || stop {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let keep = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut chunk = [0u8; 1024];
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                let mut kept = keep.lock().unwrap_or_else(|p| p.into_inner());
                kept.extend_from_slice(&chunk[..n]);
                let excess = kept.len().saturating_sub(STDERR_KEEP);
                kept.drain(..excess);
            }
        });
        Ok(Harness {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            timeout,
            dead: None,
            log: std::env::var_os("HWXDP_RTL_LOG")
                .and_then(|p| std::fs::File::create(p).ok())
                .map(std::io::BufWriter::new),
        })
    }

    /// Sends one command and returns its answer; an `error` answer becomes [`HxdpRtlError::Refused`].
    pub(crate) fn call(&mut self, command: &Command) -> Result<Answer, HxdpRtlError> {
        let line = command.line();
        self.send(&line)?;
        self.answer(&line)
    }

    /// Sends many commands, writing up to [`BATCH`] before reading their answers (a round trip per command would
    /// dominate a map dump); answers come back in order.
    pub(crate) fn batch(&mut self, commands: &[Command]) -> Result<Vec<Answer>, HxdpRtlError> {
        let mut answers = Vec::with_capacity(commands.len());
        for chunk in commands.chunks(BATCH) {
            let lines: Vec<String> = chunk.iter().map(Command::line).collect();
            let mut text = lines.join("\n");
            text.push('\n');
            self.write(&text, &lines[0])?;
            for line in &lines {
                answers.push(self.answer(line)?);
            }
        }
        Ok(answers)
    }

    /// Asks the harness to end, waits a moment for it to flush its files, then kills it if it still runs.
    pub(crate) fn quit(&mut self) {
        if self.stdin.is_none() {
            return;
        }
        if self.dead.is_none() {
            let _ = self.send(&Command::Quit.line());
        }
        self.stdin = None;
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn send(&mut self, line: &str) -> Result<(), HxdpRtlError> {
        self.write(&format!("{line}\n"), line)
    }

    fn write(&mut self, text: &str, command: &str) -> Result<(), HxdpRtlError> {
        if let Some(log) = self.log.as_mut() {
            let _ = log.write_all(text.as_bytes());
        }
        if let Some(story) = &self.dead {
            return Err(HxdpRtlError::Dead {
                command: command.to_string(),
                story: story.clone(),
            });
        }
        let written = match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(text.as_bytes())
                .and_then(|()| stdin.flush()),
            None => Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        };
        if written.is_err() {
            return Err(self.died(command));
        }
        Ok(())
    }

    fn answer(&mut self, command: &str) -> Result<Answer, HxdpRtlError> {
        let line = match self.lines.recv_timeout(self.timeout) {
            Ok(Ok(line)) => line,
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => return Err(self.died(command)),
            Err(RecvTimeoutError::Timeout) => {
                let seconds = self.timeout.as_secs();
                self.dead = Some(format!("no answer to {command:?} within {seconds} s"));
                let _ = self.child.kill();
                return Err(HxdpRtlError::Timeout {
                    command: command.to_string(),
                    seconds,
                });
            }
        };
        if let Some(log) = self.log.as_mut() {
            let _ = writeln!(log, "> {line}");
        }
        match protocol::parse(&line) {
            Ok(Answer::Error(what)) => {
                // After its own timeout the module may still hold the packet: nothing later can be trusted.
                if what.contains("timeout") {
                    self.dead = Some(what.clone());
                }
                Err(HxdpRtlError::Refused {
                    command: command.to_string(),
                    what,
                })
            }
            Ok(answer) => Ok(answer),
            Err(source) => {
                self.dead = Some(source.to_string());
                let _ = self.child.kill();
                Err(HxdpRtlError::Protocol {
                    command: command.to_string(),
                    source,
                })
            }
        }
    }

    /// The harness stopped answering: its exit status and last stderr lines, remembered for later commands.
    fn died(&mut self, command: &str) -> HxdpRtlError {
        // The output pipe closes a moment before the process is reaped.
        let mut status = None;
        for _ in 0..50 {
            if let Ok(Some(s)) = self.child.try_wait() {
                status = Some(s);
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        if status.is_none() {
            let _ = self.child.kill();
            status = self.child.wait().ok();
        }
        // Give the stderr thread a moment to take the last bytes.
        thread::sleep(Duration::from_millis(20));
        let stderr = {
            let kept = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
            String::from_utf8_lossy(&kept).trim().to_string()
        };
        let status = status.map_or_else(|| "unknown status".to_string(), |s| s.to_string());
        let story = if stderr.is_empty() {
            status
        } else {
            format!("{status}: {stderr}")
        };
        self.dead = Some(story.clone());
        HxdpRtlError::Exited {
            command: command.to_string(),
            story,
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.quit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A stand-in harness: a shell script with `body`, in a fresh scratch file.
    fn fake(name: &str, body: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("hxdp-fake-{name}-{}", std::process::id()));
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    /// Starts the script, retrying while it is "text file busy": another test thread's fork may still hold the
    /// script's write descriptor between its fork and its exec.
    fn spawn(name: &str, body: &str, timeout: Duration) -> Harness {
        let path = fake(name, body);
        for _ in 0..100 {
            match Harness::spawn(&path, timeout) {
                Err(HxdpRtlError::Start { source, .. })
                    if source.kind() == std::io::ErrorKind::ExecutableFileBusy =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                started => return started.expect("the script starts"),
            }
        }
        panic!("{} stayed busy", path.display());
    }

    #[test]
    fn answers_come_back_in_order_and_error_lines_are_refusals() {
        let mut h = spawn(
            "order",
            "read a; echo ok; read a; echo 'ret 0'; read a; echo 'error map 3: type 1b not built'; \
             read a; echo 'error packet: timeout: no result after 1000000 cycles'; read a; echo ok",
            Duration::from_secs(20),
        );
        let answers = h
            .batch(&[Command::MapsDone, Command::HostSlot { map: 0, slot: 0 }])
            .expect("two answers");
        assert_eq!(answers, vec![Answer::Ok, Answer::Ret(0)]);
        let err = h.call(&Command::MapsDone).expect_err("refused");
        assert_eq!(
            err.to_string(),
            "hXDP harness refused \"maps_done\": map 3: type 1b not built"
        );
        // A refusal leaves the harness usable; its own timeout does not.
        let err = h.call(&Command::Counters).expect_err("timeout");
        assert!(
            err.to_string()
                .ends_with("timeout: no result after 1000000 cycles"),
            "{err}"
        );
        let err = h
            .call(&Command::Counters)
            .expect_err("dead after a timeout");
        assert!(matches!(err, HxdpRtlError::Dead { .. }), "{err}");
    }

    #[test]
    fn a_crash_reports_the_exit_status_and_stderr_and_later_commands_fail_at_once() {
        let mut h = spawn(
            "crash",
            "read a; echo 'assertion failed in aps' >&2; exit 3",
            Duration::from_secs(20),
        );
        let err = h.call(&Command::Counters).expect_err("crashed");
        let text = err.to_string();
        assert!(
            text.starts_with("hXDP harness exited during \"counters\": exit status: 3"),
            "{text}"
        );
        assert!(text.ends_with("assertion failed in aps"), "{text}");
        let again = h.call(&Command::Counters).expect_err("dead");
        assert!(
            again
                .to_string()
                .contains("it failed earlier (exit status: 3"),
            "{again}"
        );
    }

    #[test]
    fn a_silent_harness_times_out_and_is_killed() {
        let mut h = spawn("silent", "sleep 30", Duration::from_millis(300));
        let err = h.call(&Command::Counters).expect_err("no answer");
        assert!(matches!(err, HxdpRtlError::Timeout { .. }), "{err}");
        // Killed, so it ends long before its 30 s sleep.
        let status = h.child.wait().expect("reaped");
        assert!(!status.success(), "{status}");
    }

    #[test]
    fn a_malformed_answer_is_a_protocol_error() {
        let mut h = spawn("garbage", "read a; echo 'hello'", Duration::from_secs(20));
        let err = h.call(&Command::Counters).expect_err("garbage");
        assert_eq!(
            err.to_string(),
            "hXDP harness, after \"counters\": malformed answer \"hello\": unknown answer \"hello\""
        );
    }
}
