//! Errors of the kernel backend.

use std::fmt;
use thiserror::Error;

/// Something the kernel backend could not do.
#[derive(Debug, Error)]
pub enum KernelError {
    /// libbpf could not open the ELF object.
    #[error("cannot open object: {message}{}", LogTail(.log))]
    Open {
        /// libbpf's reason.
        message: String,
        /// The last lines libbpf logged.
        log: Vec<String>,
    },
    /// The object opened but did not load: the verifier rejected a program, or a map could not be created.
    #[error("cannot load {what}: {reason}{}", LogTail(.log))]
    Load {
        /// What failed to load: `program <name>`, `map <name>`, or `object` when libbpf did not say.
        what: String,
        /// Why, e.g. `permission denied (errno 13)`.
        reason: String,
        /// The last 20 lines of the verifier log (or of libbpf's warnings when there is no verifier log).
        log: Vec<String>,
        /// The whole verifier log, when the kernel's verifier refused a program (`None` for a map that could not
        /// be created).
        verifier_log: Option<String>,
    },
    /// The requested program is not an XDP program of the object.
    #[error("no xdp program {name} in the object (xdp programs: {})", .available.join(", "))]
    ProgramNotFound {
        /// The name asked for.
        name: String,
        /// The XDP programs the object has.
        available: Vec<String>,
    },
    /// The object as libbpf sees it does not match the `ObjectSpec`.
    #[error("map {map}: {reason}")]
    MapMismatch {
        /// The map (or global section) at fault.
        map: String,
        /// What differs.
        reason: String,
    },
    /// A map index that the `ObjectSpec` does not have, or a map of the wrong type for the operation.
    #[error("map index {index}: {reason}")]
    BadMap {
        /// The index asked for.
        index: usize,
        /// Why it cannot be used.
        reason: String,
    },
    /// A system call failed.
    #[error("{op} failed: {} (errno {errno})", errno_text(*.errno))]
    Syscall {
        /// The operation, with what it was applied to.
        op: String,
        /// The positive errno.
        errno: i32,
    },
    /// Something went wrong around a system call without the call failing: a request too large to make, or an
    /// answer that does not add up.
    #[error("{op}: {reason}")]
    Invalid {
        /// The operation, with what it was applied to.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// The netns sandbox could not be set up.
    #[error("sandbox: {step}: {message}")]
    Sandbox {
        /// The step that failed.
        step: String,
        /// What went wrong.
        message: String,
    },
    /// BPF cannot be used here at all.
    #[error("bpf unavailable: {reason}")]
    Unavailable {
        /// Why (not root, no bpf() syscall, ...).
        reason: String,
    },
}

impl KernelError {
    /// The whole verifier log of a program the kernel's verifier refused; `None` for every other error.
    pub fn verifier_log(&self) -> Option<&str> {
        match self {
            KernelError::Load {
                verifier_log: Some(log),
                ..
            } => Some(log),
            _ => None,
        }
    }

    /// A failed system call, with the errno of the calling thread.
    pub(crate) fn last_os(op: impl Into<String>) -> Self {
        KernelError::Syscall {
            op: op.into(),
            errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        }
    }

    /// A failed libbpf call that returned a negative errno.
    pub(crate) fn from_ret(op: impl Into<String>, ret: i32) -> Self {
        KernelError::Syscall {
            op: op.into(),
            errno: ret.saturating_neg(),
        }
    }
}

/// The errno's description in lower case, as `strerror` gives it.
pub(crate) fn errno_text(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    text.to_lowercase()
}

/// Formats log lines after an error message, one per line, nothing when there are none.
struct LogTail<'a>(&'a [String]);

impl fmt::Display for LogTail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in self.0 {
            write!(f, "\n  {line}")?;
        }
        Ok(())
    }
}
