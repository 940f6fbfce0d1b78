//! The hwxdp reference machine: runs an XDP program with the Linux kernel's semantics, instruction by instruction.
//!
//! Addresses are region-tagged (see [`region`]), so every access is checked against the region it points into and any
//! fault ends the program with `XDP_ABORTED` and a diagnostic, never a panic.

pub mod alu;
mod backend;
mod buff;
mod exec;
mod fault;
pub mod fib;
pub mod helpers;
mod hosted;
mod machine;
mod memory;
mod prepare;
pub mod printk;
pub mod region;
mod resume;
mod verdict;

pub use backend::*;
pub use buff::*;
pub use exec::{MAX_CALL_FRAMES, MAX_TAIL_CALLS, STACK_BYTES};
pub use fault::*;
pub use hosted::Hosted;
pub use hwxdp_maps as maps;
pub use machine::*;
pub use prepare::Program;
pub use resume::{Resume, ResumeError, ResumeValue, StackWrite};
pub use verdict::*;
