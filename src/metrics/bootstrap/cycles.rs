//! The interval of a run that holds whole power-cap cycles (`metrics::cycle`
//! says why): the bootstrap resamples batches within their phase of the
//! cycle, the placements' spread is added as elsewhere, and a run that
//! stopped on its interval adds how far its value moved over its last cycle
//! (a rerun stops a cycle earlier or later). Replayed on run168 and run167's
//! sessions (run175): cuDNN at 45 µs from 2.03 to 1.48 times the spread
//! between processes, every other run's median still inside.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{Grid, MIN_PLACEMENTS, Parts, by_placement, log_half, mean_var, percentile_interval};
use crate::metrics::{across_runs, cycle};

/// A run's batches on their grid, with the placement of each.
pub(super) struct Run<'a> {
    pub grid: &'a Grid,
    pub placement: &'a [u32],
    pub median_ns: f64,
}

impl Run<'_> {
    /// The phase-stratified bootstrap's interval (low, high) and the parts
    /// of the t interval for a cycle of `lag` batches.
    pub fn cycle_interval(
        &self,
        lag: usize,
        rounds: usize,
        rng: &mut ChaCha8Rng,
        converged: bool,
    ) -> (f64, f64, Parts) {
        let n = self.grid.blocks.len();
        let phases = cycle::phases(n, lag);
        let mut counts = vec![0u64; self.grid.values.len()];
        let mut draws: Vec<f64> = (0..rounds.max(1))
            .map(|_| {
                let mut chosen = Vec::with_capacity(n);
                for p in &phases {
                    chosen.extend((0..p.len()).map(|_| p[rng.random_range(0..p.len())]));
                }
                self.grid.median(chosen.into_iter(), &mut counts)
            })
            .collect();
        let (low, high) = percentile_interval(&mut draws);
        let m = self.median_ns;
        let f = cycle::within_phase_correction(&phases);
        let (low, high) = (
            m * ((low / m).ln() * f).exp(),
            m * ((high / m).ln() * f).exp(),
        );
        let se_within = log_half(m, low, high) / 1.96;
        let by_place = by_placement(self.placement, |of| self.grid.median(of, &mut counts).ln());
        let stop = if converged {
            m.ln() - self.grid.median(0..n - lag, &mut counts).ln()
        } else {
            0.0
        };
        (low, high, parts(&by_place, se_within, stop, n, lag))
    }
}

/// The t interval's parts: within-run error `se_within`, the placements'
/// spread over their number, and `stop`, the last cycle's move (all logs).
fn parts(by_place: &[f64], se_within: f64, stop: f64, n: usize, lag: usize) -> Parts {
    let c = by_place.len();
    let (term_p, placement_rel) = if c >= MIN_PLACEMENTS {
        let (_, var) = mean_var(by_place);
        (var / c as f64, var.sqrt())
    } else {
        (0.0, 0.0)
    };
    let cycles = n / lag;
    let se = (se_within * se_within + term_p + stop * stop).sqrt();
    let df = if c >= MIN_PLACEMENTS {
        c - 1
    } else {
        cycles - 1
    };
    Parts {
        placements: c,
        placement_rel,
        segments: cycles,
        drift_rel: stop.abs(),
        se,
        df: df as f64,
        half: across_runs::t975(df) * se,
        cycle_batches: lag,
    }
}

/// The stopping rule's half-width (log) from batch log-medians alone, one
/// pass: the within-phase variance of the mean, the placements' spread,
/// and the move of the last cycle (a rule that stops here stops on it).
pub(super) fn quick_half(logs: &[f64], place: &[u32], lag: usize) -> f64 {
    let n = logs.len();
    let phases = cycle::phases(n, lag);
    let within: f64 = phases
        .iter()
        .filter(|p| p.len() > 1)
        .map(|p| {
            let x: Vec<f64> = p.iter().map(|&i| logs[i]).collect();
            mean_var(&x).1 / x.len() as f64
        })
        .sum::<f64>()
        / (lag * lag) as f64;
    let se_within = within.sqrt() * cycle::within_phase_correction(&phases);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let stop = mean(logs) - mean(&logs[..n - lag]);
    let by_place = by_placement(place, |of| {
        let (sum, k) = of.fold((0.0, 0usize), |(s, k), i| (s + logs[i], k + 1));
        sum / k as f64
    });
    parts(&by_place, se_within, stop, n, lag).half
}
