//! Program analysis shared by every hardware backend.
//!
//! Every analysis is a separate struct computed on demand from the ones it needs, in the style of Cranelift:
//! [`ProgramCfg`] (basic blocks per function and the call graph) first, then [`DomTree`] and [`ControlEquivalence`],
//! [`Liveness`], [`Regions`] (pointer types and memory-region labels), [`StackLiveness`], [`ReachingDefs`], [`Ssa`],
//! [`Patterns`] (bounds checks, stack zeroing) and [`Paths`]. [`report`] prints all of it.
//!
//! Instructions are named by [`InsnId`], their index in [`hwxdp_object::ProgramSpec::insns`] (a `lddw` is one
//! instruction), blocks by [`BlockId`] within one function's [`Cfg`], functions by [`FuncId`].

pub mod cfg;
pub mod dom;
pub mod effects;
pub mod helpers;
pub mod liveness;
pub mod paths;
pub mod patterns;
pub mod reaching;
pub mod regions;
pub mod report;
pub mod ssa;
pub mod stack;
mod transfer;
pub mod value;

pub use cfg::{Block, CallSite, Cfg, EdgeKind, ProgramCfg};
pub use dom::{immediate_dominators, on_cycles, ControlEquivalence, DomTree, TreeIntervals};
pub use liveness::{Liveness, RegSet};
pub use paths::{Path, PathEnd, Paths};
pub use patterns::{BoundsCheck, BranchSide, CheckedArea, Patterns, ZeroRun};
pub use reaching::{Def, ReachingDefs};
pub use regions::{MemRegion, Regions};
pub use report::{report, report_with_maps};
pub use ssa::Ssa;
pub use stack::{StackBytes, StackLiveness};
pub use value::{Offset, State, Value};

use hwxdp_ebpf::InvalidInsn;
use std::fmt;
use thiserror::Error;

/// An instruction: its index in the program's instruction vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InsnId(pub u32);

/// A basic block of one function's [`Cfg`]; block 0 is the function's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

/// A function of the program: 0 is the program itself, the others are its bpf-to-bpf callees in address order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);

macro_rules! entity {
    ($ty:ident, $prefix:literal) => {
        impl $ty {
            /// The id as a vector index.
            pub const fn index(self) -> usize {
                self.0 as usize
            }

            /// The id of vector index `index`.
            pub const fn new(index: usize) -> Self {
                $ty(index as u32)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(&format!(concat!($prefix, "{}"), self.0))
            }
        }
    };
}

entity!(InsnId, "");
entity!(BlockId, "bb");
entity!(FuncId, "f");

/// Why a program cannot be analysed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum AnalysisError {
    /// The program has no instructions.
    #[error("program {program}: no instructions")]
    Empty {
        /// The program's name.
        program: String,
    },
    /// An instruction is not one of RFC 9669.
    #[error("program {program}: instruction {insn}: {source}")]
    Invalid {
        /// The program's name.
        program: String,
        /// The instruction's slot index (as llvm-objdump and the verifier number it).
        insn: usize,
        /// What is wrong with it.
        source: InvalidInsn,
    },
    /// A jump lands outside its function or inside a `lddw`.
    #[error("program {program}: instruction {insn}: jump target slot {slot} is not an instruction of {function}")]
    JumpTarget {
        /// The program's name.
        program: String,
        /// The jump's slot index.
        insn: usize,
        /// The target slot.
        slot: i64,
        /// The function the jump belongs to.
        function: String,
    },
    /// A bpf-to-bpf call's target is not the start of an instruction.
    #[error(
        "program {program}: instruction {insn}: call target slot {slot} is not an instruction"
    )]
    CallTarget {
        /// The program's name.
        program: String,
        /// The call's slot index.
        insn: usize,
        /// The target slot.
        slot: i64,
    },
    /// Execution can run past the last instruction of a function.
    #[error("program {program}: function {function} runs past its last instruction {insn}")]
    FallsOff {
        /// The program's name.
        program: String,
        /// The function's name.
        function: String,
        /// The slot index of the function's last instruction.
        insn: usize,
    },
}
