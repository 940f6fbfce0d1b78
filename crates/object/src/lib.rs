//! Reads an ELF object built by `clang -O2 -g -target bpf` (libbpf conventions) into an [`ObjectSpec`]: the programs
//! with their bpf-to-bpf calls linked in and their map references resolved to indices into [`ObjectSpec::maps`], and
//! every map including the `.rodata`/`.data`/`.bss` globals. Pure data: no syscalls.

mod spec;

pub use spec::*;
