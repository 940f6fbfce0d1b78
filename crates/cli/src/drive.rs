//! Feeding a trace to a backend: packets in order, in chunks that grow while the backend is fast (so the progress
//! counter moves on a slow RTL simulation and costs nothing on the reference machine), or the whole trace at once
//! for a backend that streams it back to back.

use anyhow::{Context, Result};
use hwxdp_backend::{Backend, Packet, Ran};
use indicatif::ProgressBar;
use std::time::{Duration, Instant};

/// The largest chunk handed to a packet-by-packet backend.
const MAX_CHUNK: usize = 4096;
/// A chunk that took less than this doubles.
const QUICK: Duration = Duration::from_millis(50);

/// Packets waiting for a backend, and where each result goes.
pub struct Feeder<'b> {
    backend: &'b mut dyn Backend,
    whole: bool,
    chunk: usize,
    pending: Vec<(usize, Packet)>,
    bar: ProgressBar,
}

impl<'b> Feeder<'b> {
    /// A feeder for `backend`, moving `bar` as results come back.
    pub fn new(backend: &'b mut dyn Backend, bar: ProgressBar) -> Feeder<'b> {
        let whole = backend.capabilities().whole_trace;
        Feeder {
            backend,
            whole,
            chunk: 1,
            pending: Vec::new(),
            bar,
        }
    }

    /// Queues packet `index`; runs the queue when it is a chunk long, giving each result to `each`.
    pub fn push(
        &mut self,
        index: usize,
        packet: Packet,
        each: &mut impl FnMut(usize, &Packet, Ran) -> Result<()>,
    ) -> Result<()> {
        self.pending.push((index, packet));
        if !self.whole && self.pending.len() >= self.chunk {
            self.flush(each)?;
        }
        Ok(())
    }

    /// Runs whatever is queued.
    pub fn flush(
        &mut self,
        each: &mut impl FnMut(usize, &Packet, Ran) -> Result<()>,
    ) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let (indices, packets): (Vec<usize>, Vec<Packet>) = pending.into_iter().unzip();
        let start = Instant::now();
        let results = self.backend.run(&packets).with_context(|| {
            format!(
                "packets {}..={}",
                indices.first().copied().unwrap_or(0),
                indices.last().copied().unwrap_or(0)
            )
        })?;
        if start.elapsed() < QUICK {
            self.chunk = (self.chunk * 2).min(MAX_CHUNK);
        } else {
            self.chunk = (self.chunk / 2).max(1);
        }
        anyhow::ensure!(
            results.len() == packets.len(),
            "{} gave {} results for {} packets",
            self.backend.name(),
            results.len(),
            packets.len()
        );
        for ((index, packet), ran) in indices.into_iter().zip(&packets).zip(results) {
            each(index, packet, ran)?;
        }
        self.bar.inc(packets.len() as u64);
        Ok(())
    }
}

/// Runs every packet of `packets` (index, packet) on `backend`, in order; `each` gets every result.
pub fn run_all(
    backend: &mut dyn Backend,
    packets: impl IntoIterator<Item = (usize, Packet)>,
    bar: ProgressBar,
    mut each: impl FnMut(usize, &Packet, Ran) -> Result<()>,
) -> Result<()> {
    let mut feeder = Feeder::new(backend, bar);
    for (index, packet) in packets {
        feeder.push(index, packet, &mut each)?;
    }
    feeder.flush(&mut each)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwxdp_backend::{BackendError, Capabilities};
    use hwxdp_maps::{MapStore, Maps};

    /// Records the size of every batch it is handed; sleeps `delay` per batch.
    struct Recorder {
        calls: Vec<usize>,
        delay: Duration,
        whole: bool,
        maps: Maps,
    }

    impl Backend for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn capabilities(&self) -> Capabilities {
            Capabilities {
                whole_trace: self.whole,
                ..Capabilities::default()
            }
        }
        fn run(&mut self, packets: &[Packet]) -> Result<Vec<Ran>, BackendError> {
            self.calls.push(packets.len());
            std::thread::sleep(self.delay);
            Ok(packets.iter().map(|_| Ran::default()).collect())
        }
        fn maps(&mut self) -> &mut dyn MapStore {
            &mut self.maps
        }
    }

    fn feed(delay: Duration, whole: bool, n: usize) -> (Vec<usize>, Vec<usize>) {
        let mut backend = Recorder {
            calls: Vec::new(),
            delay,
            whole,
            maps: Maps::new(&[], 1).expect("no maps"),
        };
        let mut seen = Vec::new();
        run_all(
            &mut backend,
            (0..n).map(|i| (i, Packet::default())),
            ProgressBar::hidden(),
            |i, _, _| {
                seen.push(i);
                Ok(())
            },
        )
        .expect("runs");
        (backend.calls, seen)
    }

    #[test]
    fn a_slow_backend_gets_packets_one_at_a_time_so_progress_moves() {
        let (calls, seen) = feed(QUICK, false, 4);
        assert_eq!(calls, [1, 1, 1, 1]);
        assert_eq!(seen, [0, 1, 2, 3]);
    }

    #[test]
    fn a_fast_backend_gets_growing_chunks_and_a_pipeline_the_whole_trace() {
        let (calls, seen) = feed(Duration::ZERO, false, 100);
        assert_eq!(calls, [1, 2, 4, 8, 16, 32, 37]);
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
        let (calls, _) = feed(Duration::ZERO, true, 100);
        assert_eq!(calls, [100]);
    }
}
