//! The kernel as an hwxdp backend.

use crate::KernelProgram;
use hwxdp_maps::MapStore;
use hwxdp_xdp::{Backend, BackendError, Verdict, XdpBuff, XdpMd};

/// The `kernel` backend: each packet is one `BPF_PROG_TEST_RUN` of a [`KernelProgram`].
#[derive(Debug)]
pub struct KernelBackend {
    program: KernelProgram,
}

impl KernelBackend {
    /// A backend running `program`'s chosen program.
    pub fn new(program: KernelProgram) -> Self {
        KernelBackend { program }
    }

    /// The loaded program, for what the `Backend` trait does not cover (ring buffers, bench).
    pub fn program_mut(&mut self) -> &mut KernelProgram {
        &mut self.program
    }
}

fn failed(message: impl ToString) -> BackendError {
    BackendError::Failed {
        backend: "kernel".to_string(),
        message: message.to_string(),
    }
}

impl Backend for KernelBackend {
    fn name(&self) -> &str {
        "kernel"
    }

    /// Runs the packet's data with its metadata area, and writes back what the kernel returned.
    fn run(&mut self, pkt: &mut XdpBuff, md: &XdpMd) -> Result<Verdict, BackendError> {
        let run = self
            .program
            .test_run_with_meta(pkt.meta(), pkt.data(), md)
            .map_err(failed)?;
        pkt.set_output(&run.output, run.meta_len).map_err(failed)?;
        Ok(run.verdict())
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        &mut self.program
    }
}
