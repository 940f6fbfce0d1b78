//! `kernel`: the program in the running Linux kernel, one `BPF_PROG_TEST_RUN` a packet, in a private network
//! namespace holding the interfaces packets arrive on and routes point to.

use crate::registry::Entry;
use crate::{Backend, BackendError, Capabilities, Packet, Ran, Record, Setup, Timing};
use hwxdp_kernel::{KernelProgram, Sandbox};
use hwxdp_maps::MapStore;

/// The registry's line.
pub const ENTRY: Entry = Entry {
    name: "kernel",
    about: "the running Linux kernel (BPF_PROG_TEST_RUN with its JIT; needs root)",
    options: &[],
    needs_kernel: true,
    whole_trace: false,
    create,
};

fn create(setup: &Setup) -> Result<Box<dyn Backend>, BackendError> {
    let failed = |e: hwxdp_kernel::KernelError| BackendError::setup(ENTRY.name, e);
    hwxdp_kernel::bpf_available().map_err(failed)?;
    let sandbox = Sandbox::enter(setup.devices).map_err(failed)?;
    sandbox
        .install_routes(&setup.config.routes)
        .map_err(failed)?;
    let program = KernelProgram::load(setup.elf, setup.spec, setup.program).map_err(failed)?;
    Ok(Box::new(Kernel {
        rings: crate::Rings::of(setup),
        program,
        _sandbox: sandbox,
    }))
}

struct Kernel {
    program: KernelProgram,
    rings: crate::Rings,
    /// Dropped after the program: the thread leaves the namespace last.
    _sandbox: Sandbox,
}

impl Backend for Kernel {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            records_per_packet: self.rings.live(),
            ..Capabilities::default()
        }
    }

    fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
        let failed = |e: hwxdp_kernel::KernelError| BackendError::run(ENTRY.name, e);
        let mut out = Vec::with_capacity(packets.len());
        for packet in packets {
            let run = self
                .program
                .test_run(&packet.bytes, &packet.md)
                .map_err(failed)?;
            let records = drain(
                &mut self.program,
                self.rings.per_packet(),
                self.rings.perf_per_packet(),
            )
            .map_err(failed)?;
            out.push(Ran {
                retval: run.retval,
                output: run.output,
                meta_len: run.meta_len,
                records,
                ..Ran::default()
            });
        }
        Ok(out)
    }

    fn maps(&mut self) -> &mut dyn MapStore {
        &mut self.program
    }

    fn drain_records(&mut self) -> Result<Vec<Record>, BackendError> {
        drain(&mut self.program, self.rings.all(), self.rings.perf_all())
            .map_err(|e| BackendError::run(ENTRY.name, e))
    }

    /// The kernel times its own runs: each sampled packet `timing.repeat` times in one `BPF_PROG_TEST_RUN`.
    fn time(&mut self, packets: &[Packet], timing: &Timing) -> Result<f64, BackendError> {
        let step = (packets.len() / timing.samples.max(1)).max(1);
        let (mut total, mut sampled) = (0.0, 0usize);
        for packet in packets.iter().step_by(step) {
            total += self
                .program
                .bench(&packet.bytes, &packet.md, timing.repeat)
                .map_err(|e| BackendError::run(ENTRY.name, e))?;
            sampled += 1;
        }
        Ok(total / sampled.max(1) as f64)
    }
}

/// The records ring buffers `rings` and perf event arrays `perf` hold, consumed: ring buffers first. Samples the kernel
/// lost to a full perf ring are not records; the reference machine loses the same ones.
fn drain(
    program: &mut KernelProgram,
    rings: &[usize],
    perf: &[usize],
) -> Result<Vec<Record>, hwxdp_kernel::KernelError> {
    let mut records = crate::collect_records(rings, |map| program.ringbuf_drain(map))?;
    records.extend(crate::collect_samples(perf, |map| {
        program.perf_drain(map).map(|(samples, _lost)| samples)
    })?);
    Ok(records)
}
