//! The interval of a run that holds whole power-cap cycles (`metrics::cycle`
//! says why). The bootstrap resamples batches within their phase of the
//! cycle. Placements are compared on what is left of each batch once its
//! phase's mean is taken out: a placement's ten-odd batches otherwise carry
//! the cycle's swing, and their spread read as placements an effect the
//! phases already hold (cuDNN at 45 µs, run185: placements 0.5–0.8% apart,
//! runs 0.17%). The placements' spread over their number is itself a
//! standard error of the run's value, noise included, so it stands instead
//! of the bootstrap's where it is the larger, not beside it. Runs that ran
//! their full 5 s at 45 µs on an H200, ten processes each (run186 and
//! run187 as printed, run185 replayed offline): cuDNN's printed ± 0.96–1.28
//! times the spread between processes (2.06 before, run168), the tile's
//! 0.94–1.48, other runs' medians inside 81–90 of 90 times.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{
    Grid, MIN_PLACEMENTS, Parts, log_half, mean_by_placement, mean_var, percentile_interval,
};
use crate::metrics::{across_runs, cycle};

/// A run's batches on their grid: their log-medians and placements.
pub(super) struct Run<'a> {
    pub grid: &'a Grid,
    pub logs: &'a [f64],
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
        let by_place = placements_off_phase(self.logs, self.placement, &phases);
        (low, high, parts(&by_place, se_within, n, lag))
    }
}

/// The rhythm of a run's batches (`cycle::rhythm`), except that a cycle
/// whose phases each hold one placement is the placements' own rotation
/// (batch i on placement i mod c): their effects would pass for the
/// cycle's profile and leave the interval, so such a run is judged as a
/// steady one, on placements and stretches.
pub(super) fn rhythm(logs: &[f64], placement: &[u32]) -> cycle::Rhythm {
    match cycle::rhythm(logs) {
        cycle::Rhythm::Cycles(lag) => {
            let phases = cycle::phases(logs.len(), lag);
            let mixed = phases
                .iter()
                .filter(|p| p.iter().any(|&i| placement[i] != placement[p[0]]))
                .count();
            if mixed * 2 >= phases.len() {
                cycle::Rhythm::Cycles(lag)
            } else {
                cycle::Rhythm::Steady
            }
        }
        other => other,
    }
}

/// Each placement's mean of its batches' log-medians less their phase's.
fn placements_off_phase(logs: &[f64], placement: &[u32], phases: &[Vec<usize>]) -> Vec<f64> {
    let mut off = logs.to_vec();
    for p in phases {
        let mean = p.iter().map(|&i| logs[i]).sum::<f64>() / p.len() as f64;
        p.iter().for_each(|&i| off[i] -= mean);
    }
    mean_by_placement(placement, &off)
}

/// The t interval's parts from the within-run error `se_within` and the
/// placements' values (logs, phases taken out).
fn parts(by_place: &[f64], se_within: f64, n: usize, lag: usize) -> Parts {
    let c = by_place.len();
    let cycles = n / lag;
    let (se, placement_rel, df) = if c >= MIN_PLACEMENTS {
        let (_, var) = mean_var(by_place);
        (
            (var / c as f64).max(se_within * se_within).sqrt(),
            var.sqrt(),
            c - 1,
        )
    } else {
        (se_within, 0.0, cycles - 1)
    };
    Parts {
        placements: c,
        placement_rel,
        segments: cycles,
        drift_rel: 0.0,
        se,
        df: df as f64,
        half: across_runs::t975(df) * se,
        cycle_batches: lag,
    }
}
