//! Program warping (the warping paper, `docs/warp.md`): the Warp Optimizer turns the first part of an XDP program —
//! parsing and classification that only read the packet's first chunk — into prioritised match-action rules, and
//! the Warp Engine in software applies them in front of the reference machine.
//!
//! [`optimize`] walks the entry function as Algorithm 1 does ([`walk`]) over the CFG, liveness and stack liveness of
//! `hwxdp-analysis`, fits the rules to the engine's [`Params`] (walking less deeply until they fit) and gives a
//! [`Warp`]: the rules, the key extractors and a [`Report`]. [`Engine`] runs packets through them;
//! [`check::compare_trace`] checks a warped run against a plain one, packet by packet.

pub mod check;
pub mod classify;
mod engine;
mod fit;
mod params;
pub mod render;
pub mod restore;
pub mod rules;
pub mod state;
pub mod sym;
pub mod ternary;
pub mod trace;
pub mod walk;

pub use classify::BlockClass;
pub use engine::{Engine, Run};
pub use fit::{optimize, optimize_profiled, optimize_program, Report, Rule, Warp};
pub use params::Params;
pub use restore::{Extraction, Restore, StackValue, Value};
pub use state::Stop;
pub use walk::{Action, Decision, Profile};

use thiserror::Error;

/// Why a program cannot be warped or a warped run cannot be checked.
#[derive(Debug, Error)]
pub enum WarpError {
    /// The program does not analyse.
    #[error(transparent)]
    Analysis(#[from] hwxdp_analysis::AnalysisError),
    /// No program of that name.
    #[error("no program {0:?} in the object")]
    NoProgram(String),
    /// The reference machine cannot run the program.
    #[error(transparent)]
    Load(#[from] hwxdp_xdp::LoadError),
    /// A frame XDP cannot hold.
    #[error("packet {packet}: {source}")]
    Packet {
        /// Index in the trace.
        packet: usize,
        /// Why.
        source: hwxdp_xdp::BuffError,
    },
    /// A rule's restore does not fit the machine (a bug of the optimizer).
    #[error("packet {packet}: rule {rule}: {source}")]
    Resume {
        /// Index in the trace.
        packet: usize,
        /// The rule.
        rule: usize,
        /// Why.
        source: hwxdp_xdp::ResumeError,
    },
    /// The maps of a `--maps` preload do not load.
    #[error(transparent)]
    Maps(#[from] hwxdp_maps::json::JsonError),
    /// A rule of the equivalence trace no frame can hit.
    #[error(transparent)]
    Unreachable(#[from] hwxdp_gen::warp::Unreachable),
    /// The maps cannot be read back.
    #[error(transparent)]
    MapRead(#[from] hwxdp_maps::MapError),
}
