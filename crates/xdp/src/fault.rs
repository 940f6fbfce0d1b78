//! Why a program was stopped, and why a program cannot be run at all.

use thiserror::Error;

/// A run-time fault: the program ends with `XDP_ABORTED` and this diagnostic. `insn` is the slot index, as
/// `llvm-objdump -d` numbers instructions, within the program named by `program`.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{program}: instruction {insn}: {kind}")]
pub struct Fault {
    /// Name of the program that was running (differs from the entry program after a tail call).
    pub program: String,
    /// Slot index of the faulting instruction.
    pub insn: usize,
    /// What happened.
    pub kind: FaultKind,
}

/// What went wrong at run time.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum FaultKind {
    /// A load or store outside the region its address points into.
    #[error("{access} of {size} bytes at {addr} is out of bounds ({why})")]
    OutOfBounds {
        /// `load` or `store`.
        access: &'static str,
        /// Access size.
        size: usize,
        /// The address, described.
        addr: String,
        /// The bounds it broke.
        why: String,
    },
    /// An access through something that is not a pointer (NULL included).
    #[error("{access} of {size} bytes through {addr}")]
    NotAPointer {
        /// `load` or `store`.
        access: &'static str,
        /// Access size.
        size: usize,
        /// The value used as address, described.
        addr: String,
    },
    /// A helper was given an argument it cannot use.
    #[error("helper {}: {message}", helper_label(helper))]
    Helper {
        /// Helper name (a kernel helper's is shown with its id: `bpf_map_lookup_elem (1)`).
        helper: &'static str,
        /// What was wrong.
        message: String,
    },
    /// The instruction budget ran out: the program loops, or is far longer than any verified program could run.
    #[error("instruction budget of {budget} exhausted")]
    Budget {
        /// The budget.
        budget: u64,
    },
    /// bpf-to-bpf calls nested deeper than the kernel allows.
    #[error("call depth exceeds {max} frames")]
    CallDepth {
        /// The limit.
        max: usize,
    },
    /// A write into a huge array needed more memory than hwxdp allows a program's maps (the message names the map).
    #[error("{message}")]
    MapMemory {
        /// The map's error: its name and the memory figures.
        message: String,
    },
    /// The jump or fall-through left the program.
    #[error("execution left the program")]
    FellOff,
}

/// `name (id)` for a kernel helper's name, the name alone for anything else (`decode`, the conformance suite's).
fn helper_label(name: &str) -> String {
    match hwxdp_ebpf::abi::helper_id(name) {
        Some(id) => format!("{name} ({id})"),
        None => name.to_string(),
    }
}

/// A program the reference machine cannot run, found before any packet.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum LoadError {
    /// No program of that name or section.
    #[error("no program {wanted:?} in the object (programs: {available})")]
    NoSuchProgram {
        /// What was asked for.
        wanted: String,
        /// The programs there are.
        available: String,
    },
    /// The object has several programs and none was chosen.
    #[error("the object has several programs, choose one with --program (programs: {available})")]
    Ambiguous {
        /// The programs there are.
        available: String,
    },
    /// Something in the program the machine does not support.
    #[error("{program}: instruction {insn}: {message}")]
    Unsupported {
        /// Program name.
        program: String,
        /// Slot index.
        insn: usize,
        /// What is unsupported.
        message: String,
    },
    /// The maps could not be created.
    #[error("{0}")]
    Map(#[from] hwxdp_maps::MapError),
}
