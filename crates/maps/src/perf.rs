//! PERF_EVENT_ARRAY (kernel/bpf/arraymap.c, kernel/trace/bpf_trace.c, kernel/events/ring_buffer.c) as hwxdp's consumer
//! sees it: one `PERF_COUNT_SW_BPF_OUTPUT` event opened on each possible CPU at the index of that CPU, as libbpf's
//! `perf_buffer__new` opens them, each with a ring of [`PERF_RING_BYTES`] of data.
//!
//! A sample is a `PERF_RECORD_SAMPLE` of `PERF_SAMPLE_RAW` only: an 8-byte header, a `u32` size, then the raw bytes
//! (the program's data, then the packet bytes `BPF_F_CTXLEN_MASK` asked for) padded with zeros so that size and bytes
//! end on 8 bytes. The consumer is handed the padded bytes. A sample that does not fit is lost (`-ENOSPC`); the next
//! sample that fits carries a 24-byte `PERF_RECORD_LOST` in front of it.

use std::collections::VecDeque;

/// Pages of data in each CPU's ring, the `page_cnt` of `perf_buffer__new` (the kernel side opens the same).
pub const PERF_RING_PAGES: usize = 64;
/// Bytes of data in each CPU's ring.
pub const PERF_RING_BYTES: u64 = (PERF_RING_PAGES as u64) * 4096;
/// `struct perf_event_header`.
const HEADER: u64 = 8;
/// `PERF_RECORD_LOST`: header, id, lost count (no `sample_id_all`).
const LOST_RECORD: u64 = 24;

/// What `bpf_perf_event_output` returned when it did not write a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerfFail {
    /// The index is beyond `max_entries`.
    E2big,
    /// No event at the index (no possible CPU there).
    Enoent,
    /// The event at the index belongs to another CPU than the one running.
    Eopnotsupp,
    /// The ring is full: the sample is lost.
    Enospc,
}

impl PerfFail {
    /// The negative errno the helper returns.
    pub fn errno(self) -> i64 {
        -match self {
            PerfFail::E2big => 7,
            PerfFail::Enoent => 2,
            PerfFail::Eopnotsupp => 95,
            PerfFail::Enospc => 28,
        }
    }
}

/// A sample as the consumer reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// The CPU whose ring it was written to.
    pub cpu: u32,
    /// The raw bytes, padded with zeros as the kernel pads them.
    pub bytes: Vec<u8>,
    /// Where in `bytes` the packet bytes `BPF_F_CTXLEN_MASK` asked for are (empty when none were).
    pub packet: std::ops::Range<usize>,
}

/// One CPU's ring: samples not read yet, the bytes they (and lost records) take.
#[derive(Clone, Debug, Default)]
struct CpuRing {
    samples: VecDeque<(Vec<u8>, std::ops::Range<usize>)>,
    used: u64,
    lost_pending: bool,
}

/// The events of one PERF_EVENT_ARRAY, one ring per index that has an event.
#[derive(Clone, Debug)]
pub(crate) struct PerfEventArray {
    max_entries: u32,
    rings: Vec<CpuRing>,
}

/// The raw bytes of a sample of `data`: padded with zeros so that the `u32` size and they end on 8 bytes.
pub fn raw_sample(data: &[u8]) -> Vec<u8> {
    let padded = (data.len() + 4).next_multiple_of(8) - 4;
    let mut raw = data.to_vec();
    raw.resize(padded, 0);
    raw
}

impl PerfEventArray {
    /// An array of `max_entries` (0: one per possible CPU, as libbpf sizes it) with events at `0..possible_cpus`.
    pub(crate) fn new(max_entries: u32, possible_cpus: usize) -> PerfEventArray {
        let max_entries = if max_entries == 0 {
            possible_cpus as u32
        } else {
            max_entries
        };
        let events = possible_cpus.min(max_entries as usize);
        PerfEventArray {
            max_entries,
            rings: vec![CpuRing::default(); events],
        }
    }

    /// `__bpf_perf_event_output` for a program on `cpu`, `index` the low 32 bits of the flags
    /// (`BPF_F_CURRENT_CPU` already resolved to `cpu`), `data` the sample's bytes before padding, whose last
    /// `packet_bytes` are packet bytes.
    pub(crate) fn output(
        &mut self,
        cpu: usize,
        index: u32,
        data: &[u8],
        packet_bytes: usize,
    ) -> Result<(), PerfFail> {
        if index >= self.max_entries {
            return Err(PerfFail::E2big);
        }
        let ring = self.rings.get_mut(index as usize).ok_or(PerfFail::Enoent)?;
        if index as usize != cpu {
            return Err(PerfFail::Eopnotsupp);
        }
        let raw = raw_sample(data);
        let mut size = HEADER + 4 + raw.len() as u64;
        if ring.lost_pending {
            size += LOST_RECORD;
        }
        // CIRC_SPACE: one byte of the ring is never used, so with 8-byte records the last 8 stay free.
        if ring.used + size > PERF_RING_BYTES - 1 {
            ring.lost_pending = true;
            return Err(PerfFail::Enospc);
        }
        ring.used += size;
        ring.lost_pending = false;
        let packet = data.len() - packet_bytes.min(data.len())..data.len();
        ring.samples.push_back((raw, packet));
        Ok(())
    }

    /// The consumer: every unread sample, CPU by CPU and in order within a CPU; frees the rings.
    pub(crate) fn drain(&mut self) -> Vec<Sample> {
        let mut out = Vec::new();
        for (cpu, ring) in self.rings.iter_mut().enumerate() {
            out.extend(ring.samples.drain(..).map(|(bytes, packet)| Sample {
                cpu: cpu as u32,
                bytes,
                packet,
            }));
            ring.used = 0;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_padded_so_that_size_and_bytes_end_on_8() {
        assert_eq!(raw_sample(&[1, 2, 3]), [1, 2, 3, 0]);
        assert_eq!(raw_sample(&[1; 4]), [1, 1, 1, 1]);
        assert_eq!(raw_sample(&[1; 5]).len(), 12);
        assert_eq!(raw_sample(&[]).len(), 4);
    }

    #[test]
    fn indices_are_checked_as_the_kernel_does() {
        let mut p = PerfEventArray::new(4, 2);
        assert_eq!(p.output(0, 4, b"x", 0), Err(PerfFail::E2big));
        assert_eq!(p.output(0, 3, b"x", 0), Err(PerfFail::Enoent));
        assert_eq!(p.output(0, 1, b"x", 0), Err(PerfFail::Eopnotsupp));
        assert_eq!(p.output(1, 1, b"xy", 1), Ok(()));
        assert_eq!(
            p.drain(),
            vec![Sample {
                cpu: 1,
                bytes: vec![b'x', b'y', 0, 0],
                packet: 1..2
            }]
        );
        assert_eq!(PerfEventArray::new(0, 3).max_entries, 3);
    }

    #[test]
    fn a_full_ring_loses_samples_and_the_next_carries_a_lost_record() {
        let mut p = PerfEventArray::new(1, 1);
        let sample = vec![7u8; 4092]; // 8 + 4 + 4092 = 4104 bytes a record
        let mut written = 0;
        while p.output(0, 0, &sample, 0).is_ok() {
            written += 1;
        }
        assert_eq!(written, (PERF_RING_BYTES - 1) / 4104);
        let left = PERF_RING_BYTES - written * 4104;
        // A sample that would fit alone does not fit with the lost record in front of it.
        let small = vec![1u8; (left - 8 - 4 - 24 + 1) as usize];
        assert_eq!(p.output(0, 0, &small, 0), Err(PerfFail::Enospc));
        assert_eq!(p.output(0, 0, &[1u8; 4], 0), Ok(()));
        assert_eq!(p.drain().len(), written as usize + 1);
    }
}
