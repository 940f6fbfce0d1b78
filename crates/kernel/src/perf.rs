//! Reading the samples a program wrote with `bpf_perf_event_output` to a `BPF_MAP_TYPE_PERF_EVENT_ARRAY` map: libbpf's
//! perf buffer opens a `PERF_COUNT_SW_BPF_OUTPUT` event on each CPU, maps its ring ([`PERF_RING_PAGES`] pages of
//! data, as the reference machine models them) and stores the event fds in the map at the CPUs' indices.

use crate::{KernelError, KernelProgram};
use hwxdp_maps::perf::{Sample, PERF_RING_PAGES};
use libbpf_rs::libbpf_sys;

/// What the callbacks collect between two drains.
#[derive(Debug, Default)]
struct Collected {
    /// The samples (raw bytes as the kernel padded them), in the order libbpf hands them out.
    samples: Vec<Sample>,
    /// Samples the kernel lost because a ring was full.
    lost: u64,
}

/// One perf event array's perf buffer.
#[derive(Debug)]
pub(crate) struct PerfReader {
    pb: *mut libbpf_sys::perf_buffer,
    /// Boxed: libbpf keeps its address as the callbacks' context.
    collected: Box<Collected>,
}

unsafe extern "C" fn on_sample(
    ctx: *mut libc::c_void,
    cpu: libc::c_int,
    data: *mut libc::c_void,
    size: u32,
) {
    // SAFETY: `ctx` is the boxed `Collected` of the PerfReader that owns the perf buffer, alive while it is; `data`
    // points to `size` readable bytes for the duration of this call.
    unsafe {
        let collected = &mut *ctx.cast::<Collected>();
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), size as usize).to_vec();
        // The kernel's sample does not say where packet bytes start.
        collected.samples.push(Sample {
            cpu: cpu as u32,
            bytes,
            packet: 0..0,
        });
    }
}

unsafe extern "C" fn on_lost(ctx: *mut libc::c_void, _cpu: libc::c_int, count: u64) {
    // SAFETY: as in `on_sample`.
    unsafe {
        (*ctx.cast::<Collected>()).lost += count;
    }
}

impl PerfReader {
    /// Opens the events of perf event array `fd` (named `name` in errors) and puts them in the map.
    pub(crate) fn open(fd: i32, name: &str) -> Result<PerfReader, KernelError> {
        let mut collected = Box::<Collected>::default();
        let ctx: *mut Collected = &mut *collected;
        // SAFETY: the callbacks match libbpf's types and use `ctx` only as the boxed Collected, which lives as long as
        // the perf buffer (freed first in Drop); a null `opts` asks for the defaults.
        let pb = unsafe {
            libbpf_sys::perf_buffer__new(
                fd,
                PERF_RING_PAGES as libbpf_sys::size_t,
                Some(on_sample),
                Some(on_lost),
                ctx.cast(),
                std::ptr::null(),
            )
        };
        if pb.is_null() {
            return Err(KernelError::last_os(format!("perf_buffer__new on {name}")));
        }
        Ok(PerfReader { pb, collected })
    }

    /// Every sample written since the last drain, CPU by CPU; and how many were lost.
    fn drain(&mut self, name: &str) -> Result<(Vec<Sample>, u64), KernelError> {
        // SAFETY: `pb` is live until Drop.
        let rc = unsafe { libbpf_sys::perf_buffer__consume(self.pb) };
        if rc < 0 {
            return Err(KernelError::from_ret(
                format!("perf_buffer__consume on {name}"),
                rc,
            ));
        }
        let samples = std::mem::take(&mut self.collected.samples);
        Ok((samples, std::mem::take(&mut self.collected.lost)))
    }
}

impl Drop for PerfReader {
    fn drop(&mut self) {
        // SAFETY: `pb` came from perf_buffer__new and is freed once, here.
        unsafe { libbpf_sys::perf_buffer__free(self.pb) };
    }
}

/// Opens a perf buffer on every PERF_EVENT_ARRAY of `specs` (fds by map index).
pub(crate) fn open_all(
    specs: &[hwxdp_object::MapSpec],
    fds: &[std::os::fd::OwnedFd],
) -> Result<Vec<(usize, PerfReader)>, KernelError> {
    use std::os::fd::AsRawFd;
    specs
        .iter()
        .zip(fds)
        .enumerate()
        .filter(|(_, (s, _))| s.map_type == libbpf_sys::BPF_MAP_TYPE_PERF_EVENT_ARRAY)
        .map(|(i, (s, fd))| Ok((i, PerfReader::open(fd.as_raw_fd(), &s.name)?)))
        .collect()
}

impl KernelProgram {
    /// The samples written to perf event array `map` since the last drain, CPU by CPU and oldest first within a CPU
    /// (their `packet` range is empty: the kernel does not say where packet bytes start), and the number the kernel
    /// lost to a full ring.
    pub fn perf_drain(&mut self, map: usize) -> Result<(Vec<Sample>, u64), KernelError> {
        let name = self
            .specs
            .get(map)
            .map(|s| s.name.clone())
            .unwrap_or_default();
        let reader = self
            .perf
            .iter_mut()
            .find(|(m, _)| *m == map)
            .map(|(_, r)| r)
            .ok_or_else(|| KernelError::BadMap {
                index: map,
                reason: format!("{name} is not a perf event array"),
            })?;
        reader.drain(&name)
    }
}
