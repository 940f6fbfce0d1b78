//! The hwxdp reference machine: runs an XDP program with the Linux kernel's semantics, instruction by instruction.
//!
//! Addresses are region-tagged (see [`region`]), so every access is checked against the region it points into and any
//! fault ends the program with `XDP_ABORTED` and a diagnostic, never a panic.

mod backend;
mod buff;
mod verdict;

pub use backend::*;
pub use buff::*;
pub use verdict::*;
