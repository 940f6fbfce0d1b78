//! Per-packet figures added up over a trace, the same way for every backend: what it reports (instructions and
//! paths for software, cycles for processors, a pipeline's packets per cycle), and packets per second at the
//! `--clock-mhz` clocks.

use hwxdp_backend::{Ran, Summary};
use serde::Serialize;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Fewest, mean and most of a per-packet figure.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    /// Fewest.
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// Most.
    pub max: u64,
}

#[derive(Default)]
struct Acc {
    n: u64,
    total: u64,
    min: u64,
    max: u64,
}

impl Acc {
    fn add(&mut self, v: u64) {
        self.min = if self.n == 0 { v } else { self.min.min(v) };
        self.max = self.max.max(v);
        self.total += v;
        self.n += 1;
    }

    fn spread(&self) -> Option<Spread> {
        (self.n > 0).then(|| Spread {
            min: self.min,
            mean: self.total as f64 / self.n as f64,
            max: self.max,
        })
    }
}

/// Path ids are already hashes: hashing them again (SipHash, per packet) would be wasted work.
#[derive(Default)]
struct PathHashHasher(u64);

impl Hasher for PathHashHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// The figures of a trace's packets on one backend.
#[derive(Default)]
pub struct Tally {
    insns: Acc,
    cycles: Acc,
    paths: HashSet<u64, BuildHasherDefault<PathHashHasher>>,
    /// Packets stopped by a fault.
    pub faults: usize,
    /// The first ten faults, with their packet.
    pub first_faults: Vec<String>,
}

impl Tally {
    /// Adds packet `index`'s result.
    pub fn add(&mut self, index: usize, ran: &Ran) {
        if let Some(i) = ran.insns {
            self.insns.add(i);
        }
        if let Some(c) = ran.cycles {
            self.cycles.add(c);
        }
        if let Some(p) = ran.path {
            self.paths.insert(p);
        }
        if let Some(f) = &ran.fault {
            self.faults += 1;
            if self.first_faults.len() < 10 {
                self.first_faults.push(format!("packet {index}: {f}"));
            }
        }
    }

    /// Instructions per packet, where the backend counts them.
    pub fn insns(&self) -> Option<Spread> {
        self.insns.spread()
    }

    /// Cycles per packet, where the backend counts them.
    pub fn cycles(&self) -> Option<Spread> {
        self.cycles.spread()
    }

    /// Distinct paths, where the backend tells them apart.
    pub fn paths(&self) -> Option<usize> {
        (self.insns.n > 0).then_some(self.paths.len())
    }
}

/// Millions of packets per second at one clock.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mpps {
    /// The clock, in MHz.
    pub clock_mhz: f64,
    /// Millions of packets per second.
    pub mpps: f64,
}

/// The hardware's packet rate at each clock: from cycles per packet (a processor) or packets per cycle (a pipeline);
/// empty for software.
pub fn mpps(clocks: &[f64], cycles: Option<&Spread>, summary: &Summary) -> Vec<Mpps> {
    let per_cycle = match (summary.packets_per_cycle, cycles) {
        (Some(ppc), _) => ppc,
        (None, Some(c)) if c.mean > 0.0 => 1.0 / c.mean,
        _ => return Vec::new(),
    };
    clocks
        .iter()
        .map(|&clock_mhz| Mpps {
            clock_mhz,
            mpps: clock_mhz * per_cycle,
        })
        .collect()
}

/// "6.53 Mpps at 156.25 MHz, 10.44 Mpps at 250 MHz".
pub fn mpps_text(rates: &[Mpps]) -> String {
    rates
        .iter()
        .map(|r| format!("{:.2} Mpps at {} MHz", r.mpps, r.clock_mhz))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The backend's own figures as "4 lanes, 30 bundles".
pub fn figures_text(summary: &Summary) -> String {
    summary
        .figures
        .iter()
        .map(|f| {
            if f.value.fract() == 0.0 {
                format!("{} {}", f.value, f.label)
            } else {
                format!("{:.3} {}", f.value, f.label)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The backend's own figures as a JSON object, keyed as [`hwxdp_backend::Figure::key`].
pub fn figures_json(summary: &Summary) -> serde_json::Map<String, serde_json::Value> {
    summary
        .figures
        .iter()
        .map(|f| {
            let value = if f.value.fract() == 0.0 && f.value.abs() < 9e15 {
                serde_json::Value::from(f.value as i64)
            } else {
                serde_json::Value::from(f.value)
            };
            (f.key.to_string(), value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processors_and_pipelines_get_rates_at_every_clock_and_software_none() {
        let cycles = Spread {
            min: 20,
            mean: 25.0,
            max: 30,
        };
        let rates = mpps(&[100.0, 250.0], Some(&cycles), &Summary::default());
        assert_eq!(rates[0].mpps, 4.0);
        assert_eq!(rates[1].mpps, 10.0);
        let pipeline = Summary {
            packets_per_cycle: Some(0.5),
            ..Summary::default()
        };
        assert_eq!(mpps(&[250.0], None, &pipeline)[0].mpps, 125.0);
        assert!(mpps(&[250.0], None, &Summary::default()).is_empty());
        assert_eq!(
            mpps_text(&rates),
            "4.00 Mpps at 100 MHz, 10.00 Mpps at 250 MHz"
        );
    }

    #[test]
    fn software_counts_instructions_and_paths_hardware_cycles() {
        let mut t = Tally::default();
        let ran = |insns, path, cycles| Ran {
            insns,
            path,
            cycles,
            ..Ran::default()
        };
        t.add(0, &ran(Some(10), Some(1), None));
        t.add(1, &ran(Some(30), Some(1), None));
        assert_eq!(t.insns().map(|s| s.mean), Some(20.0));
        assert_eq!(t.paths(), Some(1));
        assert_eq!(t.cycles(), None);
        let mut h = Tally::default();
        h.add(0, &ran(None, None, Some(7)));
        assert_eq!(h.insns(), None);
        assert_eq!(h.paths(), None);
        assert_eq!(h.cycles().map(|s| s.max), Some(7));
    }
}
