//! The power cap's clock cycle, read off a run's batch medians (issue 55).
//!
//! Under a power cap an H200's SM clock falls and recovers about once a
//! second, and a batch's median swings up to 10% with it (run168: a
//! sawtooth, 37 batches of 25 ms a cycle). A run of several whole cycles is
//! far steadier than its batches suggest: a rerun sees the same cycles. So
//! once a run holds `MIN_CYCLES` whole ones, its interval treats each
//! batch's phase in the cycle as a stratum (the bootstrap resamples batches
//! within a phase, never across), where stretches of time that each cut a
//! cycle somewhere else read the cycle as drift (2.06 times the spread
//! between processes at 45 µs, run168). Before it holds four, a run whose
//! batches move slowly together has not seen what a rerun will see, and
//! its stopping rule waits (run167: a 600 µs run that stopped after 1.2 s,
//! one cycle and a bit, missed six of nine other runs' medians).

/// A cycle counts when the autocorrelation at its lag is at least this
/// (and above white noise's 95% bound, 2/√n).
const ACF_MIN: f64 = 0.3;
/// Whole cycles a run must hold before its interval leans on them: a
/// bootstrap within phases of three batches each said too little (run186:
/// 600 µs runs stopped at three cycles and their intervals held 75 and 62
/// of 90 other runs' medians; at 45 µs, four and five cycles held 88–90).
pub const MIN_CYCLES: usize = 4;
/// Batches whose neighbours correlate this much (lag 1) move as a slow wave
/// (every 45 µs and 600 µs run of run167 and run168 read 0.76 or more from
/// 19 batches on; the 6 µs runs, off the power cap, 0.57 at most).
pub const SLOW_WAVE: f64 = 0.7;

/// What a run's batch medians show of a slow rhythm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rhythm {
    /// No slow wave: batches are as good as independent.
    Steady,
    /// A cycle of this many batches, seen whole at least `MIN_CYCLES` times.
    Cycles(usize),
    /// A slow wave the run has not yet seen `MIN_CYCLES` whole cycles of.
    Unresolved,
}

/// The rhythm of `logs`, a run's batch log-medians in order.
pub fn rhythm(logs: &[f64]) -> Rhythm {
    // A clock cycle is a slow wave first: batches that alternate, or sit at
    // random, are no cycle to wait for, whatever their autocorrelation's
    // later peaks say.
    if logs.len() < 8 || autocorrelation(logs, 1) < SLOW_WAVE {
        return Rhythm::Steady;
    }
    match cycle_lag(logs) {
        Some(lag) if logs.len() / lag >= MIN_CYCLES => Rhythm::Cycles(lag),
        _ => Rhythm::Unresolved,
    }
}

/// Lag-`lag` autocorrelation (0 for a constant series).
fn autocorrelation(x: &[f64], lag: usize) -> f64 {
    let n = x.len();
    if lag >= n {
        return 0.0;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let d: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    if d <= 0.0 {
        return 0.0;
    }
    (0..n - lag)
        .map(|i| (x[i] - mean) * (x[i + lag] - mean))
        .sum::<f64>()
        / d
}

/// The period of `x` in items: the lag of the highest autocorrelation
/// after it first turns negative, up to n/2 (two cycles in the series), if
/// that peak reaches `ACF_MIN` and white noise's 95% bound.
pub fn cycle_lag(x: &[f64]) -> Option<usize> {
    let n = x.len();
    if n < 8 {
        return None;
    }
    let r: Vec<f64> = (1..=n / 2).map(|lag| autocorrelation(x, lag)).collect();
    let first_negative = r.iter().position(|&v| v < 0.0)?;
    if first_negative + 1 >= r.len() {
        return None;
    }
    let (at, peak) = r[first_negative..]
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, v)| (first_negative + i, *v))?;
    let bound = ACF_MIN.max(2.0 / (n as f64).sqrt());
    (peak >= bound).then_some(at + 1)
}

/// The batches of each phase of a `lag`-batch cycle: batch i is phase
/// i mod lag, the cycle counted from the run's first batch.
pub fn phases(n: usize, lag: usize) -> Vec<Vec<usize>> {
    (0..lag).map(|f| (f..n).step_by(lag).collect()).collect()
}

/// A bootstrap within strata of m items has (m−1)/m of the variance a
/// fresh draw has: the factor that undoes it on a standard error, for the
/// typical stratum of `phases`.
pub fn within_phase_correction(phases: &[Vec<usize>]) -> f64 {
    let mut sizes: Vec<usize> = phases.iter().map(Vec::len).collect();
    sizes.sort_unstable();
    let m = sizes.get(sizes.len() / 2).copied().unwrap_or(0) as f64;
    if m > 1.0 { (m / (m - 1.0)).sqrt() } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wave(n: usize, period: usize, noise_seed: u64) -> Vec<f64> {
        // A sawtooth with a little deterministic jitter.
        let mut s = noise_seed;
        (0..n)
            .map(|i| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let jitter = ((s >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.01;
                let t = (i % period) as f64 / period as f64;
                (if t < 0.1 { t } else { 0.1 - (t - 0.1) / 9.0 }) + jitter
            })
            .collect()
    }

    #[test]
    fn a_power_cycle_is_found_with_its_period_once_four_are_whole() {
        assert_eq!(rhythm(&wave(193, 37, 1)), Rhythm::Cycles(37));
        assert_eq!(rhythm(&wave(160, 40, 2)), Rhythm::Cycles(40));
        assert_eq!(rhythm(&wave(120, 40, 2)), Rhythm::Unresolved);
        // One cycle and a bit: a slow wave, not yet its cycles.
        assert_eq!(rhythm(&wave(47, 37, 3)), Rhythm::Unresolved);
    }

    #[test]
    fn white_noise_is_steady() {
        let mut s = 9u64;
        let x: Vec<f64> = (0..200)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 33) as f64
            })
            .collect();
        assert_eq!(rhythm(&x), Rhythm::Steady);
        assert_eq!(rhythm(&[1.0; 50]), Rhythm::Steady);
        let alternating: Vec<f64> = (0..40).map(|i| (i % 2) as f64).collect();
        assert_eq!(rhythm(&alternating), Rhythm::Steady);
    }

    #[test]
    fn phases_cover_every_batch_once() {
        let p = phases(10, 4);
        assert_eq!(
            p,
            vec![vec![0, 4, 8], vec![1, 5, 9], vec![2, 6], vec![3, 7]]
        );
        assert!((within_phase_correction(&p) - 1.5f64.sqrt()).abs() < 1e-12);
    }
}
