//! The eHDL paper's analytical model of throughput under RAW hazards (appendix A.1), and the same reasoning applied
//! to this generator's stall checks, so a measured pipeline can be set beside both.
//!
//! Notation as in the paper: `N` flows, `L` stages between a map read and the write that may hazard with it, `K`
//! stages flushed on a hazard (the stages up to the read, plus 4 cycles to reload), `T` the hazard-free throughput
//! (one packet per clock).

/// Cycles the paper's pipeline spends reloading after a flush, on top of the flushed stages.
pub const FLUSH_RELOAD_CYCLES: u32 = 4;

/// `H(N, s) = sum 1/i^s` for `i = 1..=N`: the normaliser of a Zipf distribution (the paper approximates it by
/// `ln N` for `s = 1`; the exact sum is used here so the probabilities add up to 1).
pub fn harmonic(flows: u64, exponent: f64) -> f64 {
    (1..=flows).map(|i| (i as f64).powf(-exponent)).sum()
}

/// Equation 1: the flush probability with `flows` equally popular flows, `1 - e^(-L^2 / 2N)` (the birthday paradox).
pub fn flush_probability_uniform(flows: u64, distance: u32) -> f64 {
    let l = distance as f64;
    1.0 - (-(l * l) / (2.0 * flows as f64)).exp()
}

/// The Zipf flush probability: flow `i` has probability `p_i = 1 / (i^s H)`, and flushes when it occurs at least
/// twice among `L` consecutive packets, `P_f(i) ≈ L(L-1)/2 · p_i² · (1 - p_i)^(L-2)`; `P_f = sum P_f(i)`, at most 1
/// (for large `L` the approximation's sum passes 1: then nearly every packet meets one of its flow).
pub fn flush_probability_zipf(flows: u64, exponent: f64, distance: u32) -> f64 {
    let h = harmonic(flows, exponent);
    let l = distance as f64;
    let sum: f64 = (1..=flows)
        .map(|i| {
            let p = (i as f64).powf(-exponent) / h;
            l * (l - 1.0) / 2.0 * p * p * (1.0 - p).powf(l - 2.0)
        })
        .sum();
    sum.min(1.0)
}

/// Equation 2: `T_p = T / ((1 - P_f) + K P_f)`.
pub fn pipeline_throughput(hazard_free: f64, flushed: f64, flush_probability: f64) -> f64 {
    hazard_free / ((1.0 - flush_probability) + flushed * flush_probability)
}

/// Equation 3: the most stages that can be flushed while keeping throughput `target`.
pub fn max_flushed_stages(hazard_free: f64, target: f64, flush_probability: f64) -> f64 {
    (hazard_free / target - (1.0 - flush_probability)) / flush_probability
}

/// Expected clock cycles per packet of this generator's stall checks for a read at stage `e` and a write at
/// `e + L`: a packet waits at `e` while an older packet of its flow is in `e + 1 .. e + L - 1`, so a predecessor `d`
/// packets ahead (back to back, `d < L`) costs `L - d` bubbles. With flow probabilities `p_i` and the nearest
/// same-flow predecessor geometric, `1 + sum_i p_i sum_{d=1}^{L-1} p_i (1 - p_i)^(d-1) (L - d)`. Bubbles spread
/// later packets apart, which this first-order figure ignores (it slightly overstates the cost). One flow gives
/// `L` cycles per packet; `L = 1` never stalls.
pub fn stall_cycles_per_packet(probabilities: impl IntoIterator<Item = f64>, distance: u32) -> f64 {
    let l = distance as i64;
    1.0 + probabilities
        .into_iter()
        .map(|p| {
            p * (1..l)
                .map(|d| p * (1.0 - p).powi(d as i32 - 1) * (l - d) as f64)
                .sum::<f64>()
        })
        .sum::<f64>()
}

/// The flow probabilities of a Zipf distribution over `flows` flows with exponent `s`.
pub fn zipf_probabilities(flows: u64, exponent: f64) -> impl Iterator<Item = f64> {
    let h = harmonic(flows, exponent);
    (1..=flows).map(move |i| (i as f64).powf(-exponent) / h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's Table 4 (50K Zipf flows, 250 Mpps, 148 Mpps to keep): P_f 1%, 3%, 6%, 10% and K_max 61, 21, 11,
    /// 7 for L = 2..5. With the exact normaliser instead of ln N the probabilities come out a little higher (1.3%,
    /// 3.6%, 6.7%, 10.4%) and K_max 55, 20, 11, 7.
    #[test]
    fn reproduces_table_4() {
        // The paper's percentages are truncated.
        let paper = [
            (2, 1.0, 61.0),
            (3, 3.0, 21.0),
            (4, 6.0, 11.0),
            (5, 10.0, 7.0),
        ];
        for (l, percent_paper, k_paper) in paper {
            let pf = flush_probability_zipf(50_000, 1.0, l);
            assert_eq!(
                (pf * 100.0).floor(),
                percent_paper,
                "L={l}: P_f {pf} vs the paper's {percent_paper}%"
            );
            let k = max_flushed_stages(250.0, 148.0, pf);
            assert!(
                (k - k_paper).abs() / k_paper < 0.11,
                "L={l}: K_max {k} vs {k_paper}"
            );
        }
    }

    #[test]
    fn equations_1_and_2() {
        assert!(
            (flush_probability_uniform(50_000, 2) - (1.0 - (-4.0f64 / 100_000.0).exp())).abs()
                < 1e-12
        );
        assert_eq!(pipeline_throughput(250.0, 40.0, 0.0), 250.0);
        assert_eq!(pipeline_throughput(250.0, 40.0, 1.0), 250.0 / 40.0);
        assert!((pipeline_throughput(250.0, 11.0, 0.1) - 250.0 / 2.0).abs() < 1e-9);
    }

    #[test]
    fn stall_cost_bounds() {
        // One flow: every packet waits for its predecessor to reach the write stage.
        assert!((stall_cycles_per_packet([1.0], 3) - 3.0).abs() < 1e-12);
        assert!((stall_cycles_per_packet([1.0], 2) - 2.0).abs() < 1e-12);
        assert_eq!(stall_cycles_per_packet([1.0], 1), 1.0);
        // Two equally likely flows, L = 2: half the packets follow one of their own flow.
        assert!((stall_cycles_per_packet([0.5, 0.5], 2) - 1.5).abs() < 1e-12);
        assert_eq!(flush_probability_zipf(50_000, 1.0, 30), 1.0);
        let zipf = stall_cycles_per_packet(zipf_probabilities(50_000, 1.0), 2);
        let pf = flush_probability_zipf(50_000, 1.0, 2);
        assert!((zipf - 1.0 - pf).abs() < 1e-3, "{zipf} vs 1 + {pf}");
    }
}
