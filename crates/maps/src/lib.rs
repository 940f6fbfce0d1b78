//! BPF maps with the Linux kernel's semantics, and the JSON shape `bpftool map dump -j` prints.

mod store;

pub use store::*;
