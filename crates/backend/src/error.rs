//! Why a backend could not be created or could not run packets.

use thiserror::Error;

/// The error of the boxed sources: every crate's error type below the backends.
pub type Source = Box<dyn std::error::Error + Send + Sync>;

/// Why a backend could not be created or could not run packets (a program's fault is a result, not an error).
#[derive(Debug, Error)]
pub enum BackendError {
    /// `--backend NAME` names no backend.
    #[error("no backend {name:?} (backends: {known})")]
    Unknown {
        /// The name given.
        name: String,
        /// Every registered name.
        known: String,
    },
    /// An option was given that none of the chosen backends takes.
    #[error("{option} is an option of --backend {owners}, not of {chosen}")]
    Option {
        /// The option, as spelled on the command line.
        option: &'static str,
        /// The backends that take it.
        owners: String,
        /// The backends chosen.
        chosen: String,
    },
    /// A command asked for something the backend cannot report.
    #[error("--backend {backend} cannot {what}")]
    Unsupported {
        /// The backend.
        backend: &'static str,
        /// What it cannot do, and what to use instead.
        what: String,
    },
    /// The backend could not be created.
    #[error("--backend {backend}: {source}")]
    Setup {
        /// The backend.
        backend: &'static str,
        /// Why.
        source: Source,
    },
    /// The backend could not run a packet (or a batch of them).
    #[error("{backend}: {source}")]
    Run {
        /// The backend.
        backend: &'static str,
        /// Why.
        source: Source,
    },
}

impl BackendError {
    /// A setup error of `backend`.
    pub fn setup(backend: &'static str, source: impl Into<Source>) -> BackendError {
        BackendError::Setup {
            backend,
            source: source.into(),
        }
    }

    /// A run error of `backend`.
    pub fn run(backend: &'static str, source: impl Into<Source>) -> BackendError {
        BackendError::Run {
            backend,
            source: source.into(),
        }
    }
}
