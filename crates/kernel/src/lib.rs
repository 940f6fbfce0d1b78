//! Runs an object's XDP programs in the running Linux kernel: loads them with libbpf, runs packets with
//! `BPF_PROG_TEST_RUN`, and shows the maps through the `bpf()` syscall. This is hwxdp's oracle for `verify` and its CPU
//! baseline for `bench`.
//!
//! Determinism: [`KernelProgram::load`] pins the calling thread to CPU 0, and [`Sandbox`] gives the thread its own
//! network namespace with the interfaces the packets claim to arrive on. Use a program from the thread that loaded it.

mod cpu;
mod error;
mod load;
mod log;
mod maps;
mod perf;
mod probe;
mod ringbuf;
mod routes;
mod run;
mod sandbox;

pub use cpu::possible_cpus;
pub use error::KernelError;
pub use load::KernelProgram;
pub use probe::bpf_available;
pub use run::KernelRun;
pub use sandbox::Sandbox;
