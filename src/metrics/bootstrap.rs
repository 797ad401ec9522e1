//! Intervals from independent units. Launches inside one batch share its
//! clock, its L2 state and whatever else drifted while it ran, so they are
//! not independent samples: every interval here resamples whole batches (a
//! block bootstrap), and none is narrower than the timer can resolve.
//!
//! Resampling batches assumes they are independent, and they are not quite:
//! the clock wanders under a power cap for seconds, so neighbouring batches
//! (and race rounds) share it. Every interval is therefore also at least as
//! wide as one from `SEGMENTS` runs of consecutive batches (batch means with
//! Student's t), which autocorrelation cannot fool the way a bootstrap of
//! single batches is fooled (`tests/calibration.rs`).
//!
//! Medians are grouped medians: a timer with a 32 ns step reports a 6.5 µs
//! kernel on about 35 values, and the plain median of such data jumps from
//! one value to the next; interpolating inside the step where the cumulative
//! count crosses one half gives a median that moves smoothly with the data.

use std::collections::BTreeMap;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Bootstrap resamples for a final interval.
pub const ROUNDS: usize = 2000;
/// Fewer batches than this give no interval: the bootstrap of a handful of
/// blocks is too optimistic to print.
pub const MIN_BLOCKS: usize = 5;
/// Runs of consecutive batches (or rounds) for the segment interval: few, so
/// that neighbouring segments share little drift; Student's t pays for it.
pub const SEGMENTS: usize = 3;

/// Samples of several batches reduced to counts on one grid of values.
struct Grid {
    /// Grid step in ns: the timer's resolution (at least 1 ns).
    step: f64,
    /// Grid cell index → the value it stands for, ascending.
    values: Vec<f64>,
    /// Per batch: (cell, count) for every occupied cell.
    blocks: Vec<Vec<(u32, u32)>>,
}

impl Grid {
    fn new(blocks: &[&[u64]], step: f64) -> Grid {
        let step = step.max(1.0);
        let cell = |v: u64| (v as f64 / step).round() as u64;
        let mut index: BTreeMap<u64, u32> = BTreeMap::new();
        for b in blocks {
            for &v in *b {
                index.entry(cell(v)).or_insert(0);
            }
        }
        for (i, slot) in index.values_mut().enumerate() {
            *slot = i as u32;
        }
        let values = index.keys().map(|c| *c as f64 * step).collect();
        let blocks = blocks
            .iter()
            .map(|b| {
                let mut counts: BTreeMap<u32, u32> = BTreeMap::new();
                for &v in *b {
                    *counts.entry(index[&cell(v)]).or_insert(0) += 1;
                }
                counts.into_iter().collect()
            })
            .collect();
        Grid {
            step,
            values,
            blocks,
        }
    }

    /// The grouped median of the chosen blocks (with repeats).
    fn median(&self, chosen: impl Iterator<Item = usize>, counts: &mut [u64]) -> f64 {
        counts.iter_mut().for_each(|c| *c = 0);
        for b in chosen {
            for &(i, n) in &self.blocks[b] {
                counts[i as usize] += u64::from(n);
            }
        }
        grouped_median(&self.values, counts, self.step)
    }
}

/// The median of counts on a grid of `step`, interpolated inside the cell
/// where the cumulative count crosses one half (each cell spans ±step/2).
pub fn grouped_median(values: &[f64], counts: &[u64], step: f64) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return f64::NAN;
    }
    let half = total as f64 / 2.0;
    let mut below = 0u64;
    for (v, &c) in values.iter().zip(counts) {
        if c == 0 {
            continue;
        }
        if (below + c) as f64 >= half {
            let into = (half - below as f64) / c as f64;
            return v - step / 2.0 + into * step;
        }
        below += c;
    }
    values.last().copied().unwrap_or(f64::NAN)
}

/// The grouped median of raw samples on the timer's grid.
pub fn median(samples: &[u64], resolution_ns: f64) -> f64 {
    let g = Grid::new(&[samples], resolution_ns);
    let mut counts = vec![0u64; g.values.len()];
    g.median(std::iter::once(0), &mut counts)
}

/// A median with its 95% interval from a block bootstrap over batches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MedianInterval {
    pub median_ns: f64,
    pub low_ns: f64,
    pub high_ns: f64,
    pub blocks: usize,
    pub samples: u64,
    pub resolution_ns: f64,
    /// The bootstrap's own interval was narrower than one timer step; the
    /// bounds shown are the step's (±half a step around the median).
    pub limited_by_resolution: bool,
    /// Typical spread inside one batch: median over batches of the batch's
    /// robust standard deviation (IQR ÷ 1.349), over the median.
    pub within_rel: f64,
    /// Spread between batches: the robust standard deviation of the batch
    /// medians, over the median.
    pub between_rel: f64,
}

impl MedianInterval {
    /// Half the interval's width over the median.
    pub fn rel_halfwidth(&self) -> f64 {
        (self.high_ns - self.low_ns) / 2.0 / self.median_ns
    }

    /// One timer step over the median.
    pub fn step_rel(&self) -> f64 {
        self.resolution_ns / self.median_ns
    }
}

/// The 95% percentile interval of `draws`, which it sorts.
fn percentile_interval(draws: &mut [f64]) -> (f64, f64) {
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((q * (draws.len() - 1) as f64).round() as usize).min(draws.len() - 1)];
    (at(0.025), at(0.975))
}

/// The 95% interval from segments (`logs`: the logs of their medians or
/// ratios; Student's t over them) around `centre`, the whole run's value, and
/// around the segments' own mean where that differs: the two estimates
/// disagree when a drift did not average out, and the interval holds both.
fn segment_interval(logs: &[f64], centre: f64) -> Option<(f64, f64)> {
    let k = logs.len();
    if k < 2 {
        return None;
    }
    let mean = logs.iter().sum::<f64>() / k as f64;
    let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    let half = super::across_runs::t975(k - 1) * (var / k as f64).sqrt();
    let c = centre.ln();
    Some(((c.min(mean) - half).exp(), (c.max(mean) + half).exp()))
}

/// `n` items cut into `SEGMENTS` runs of consecutive ones, as evenly as
/// possible; none when there are fewer than two items per segment.
fn segments(n: usize) -> Vec<std::ops::Range<usize>> {
    if n < 2 * SEGMENTS {
        return Vec::new();
    }
    (0..SEGMENTS)
        .map(|s| s * n / SEGMENTS..(s + 1) * n / SEGMENTS)
        .collect()
}

/// Robust standard deviation, IQR ÷ 1.349 (σ for a normal distribution).
fn robust_sd(sorted: &[f64]) -> f64 {
    if sorted.len() < 2 {
        return 0.0;
    }
    let at =
        |q: f64| sorted[((q * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1)];
    (at(0.75) - at(0.25)) / 1.349
}

fn spreads(blocks: &[&[u64]], median: f64, step: f64) -> (f64, f64) {
    let mut within: Vec<f64> = Vec::new();
    let mut medians: Vec<f64> = Vec::new();
    for b in blocks.iter().filter(|b| !b.is_empty()) {
        let mut v: Vec<f64> = b.iter().map(|x| *x as f64).collect();
        v.sort_by(f64::total_cmp);
        let m = self::median(b, step);
        within.push(robust_sd(&v) / m);
        medians.push(m);
    }
    within.sort_by(f64::total_cmp);
    medians.sort_by(f64::total_cmp);
    let w = within.get(within.len() / 2).copied().unwrap_or(f64::NAN);
    (w, robust_sd(&medians) / median)
}

/// The median of all samples with a block-bootstrap 95% interval; None
/// under `MIN_BLOCKS` non-empty batches.
pub fn median_interval(
    blocks: &[&[u64]],
    resolution_ns: f64,
    rounds: usize,
    seed: u64,
) -> Option<MedianInterval> {
    let blocks: Vec<&[u64]> = blocks.iter().copied().filter(|b| !b.is_empty()).collect();
    if blocks.len() < MIN_BLOCKS {
        return None;
    }
    let grid = Grid::new(&blocks, resolution_ns);
    let mut counts = vec![0u64; grid.values.len()];
    let median_ns = grid.median(0..blocks.len(), &mut counts);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = blocks.len();
    let mut draws: Vec<f64> = (0..rounds.max(1))
        .map(|_| {
            let chosen: Vec<usize> = (0..n).map(|_| rng.random_range(0..n)).collect();
            grid.median(chosen.into_iter(), &mut counts)
        })
        .collect();
    let (mut low_ns, mut high_ns) = percentile_interval(&mut draws);
    let logs: Vec<f64> = segments(n)
        .into_iter()
        .map(|r| grid.median(r, &mut counts).ln())
        .collect();
    if let Some((lo, hi)) = segment_interval(&logs, median_ns) {
        low_ns = low_ns.min(lo);
        high_ns = high_ns.max(hi);
    }
    let half_step = grid.step / 2.0;
    let limited_by_resolution = (high_ns - low_ns) < grid.step;
    if limited_by_resolution {
        low_ns = low_ns.min(median_ns - half_step);
        high_ns = high_ns.max(median_ns + half_step);
    }
    let (within_rel, between_rel) = spreads(&blocks, median_ns, grid.step);
    Some(MedianInterval {
        median_ns,
        low_ns,
        high_ns,
        blocks: n,
        samples: blocks.iter().map(|b| b.len() as u64).sum(),
        resolution_ns: grid.step,
        limited_by_resolution,
        within_rel,
        between_rel,
    })
}

/// p50(A) ÷ p50(B) of a race with its 95% interval, from a paired block
/// bootstrap over the race's rounds (each round's A and B stay together, so
/// drift that hit both alike cancels).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioInterval {
    pub median_a_ns: f64,
    pub median_b_ns: f64,
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub blocks: usize,
    pub resolution_ns: f64,
    pub limited_by_resolution: bool,
    /// Share of resamples on the far side of 1.0, doubled (two-sided); at
    /// least one over the number of resamples.
    pub p_value: f64,
    /// The paired bootstrap over single rounds alone: what attnscope printed
    /// before (it undercovers when rounds share drift).
    pub bootstrap: (f64, f64),
    /// The interval before the timer's floor: the wider of the bootstrap and
    /// the segment interval. `ab --calibrate` scores this too, so a
    /// calibration tests the statistics and not the padding.
    pub unpadded: (f64, f64),
}

pub fn ratio_interval(
    rounds_a: &[&[u64]],
    rounds_b: &[&[u64]],
    resolution_ns: f64,
    rounds: usize,
    seed: u64,
) -> Option<RatioInterval> {
    let keep: Vec<usize> = (0..rounds_a.len().min(rounds_b.len()))
        .filter(|&i| !rounds_a[i].is_empty() && !rounds_b[i].is_empty())
        .collect();
    if keep.len() < MIN_BLOCKS {
        return None;
    }
    let a: Vec<&[u64]> = keep.iter().map(|&i| rounds_a[i]).collect();
    let b: Vec<&[u64]> = keep.iter().map(|&i| rounds_b[i]).collect();
    let (ga, gb) = (Grid::new(&a, resolution_ns), Grid::new(&b, resolution_ns));
    let (mut ca, mut cb) = (vec![0u64; ga.values.len()], vec![0u64; gb.values.len()]);
    let n = keep.len();
    let median_a_ns = ga.median(0..n, &mut ca);
    let median_b_ns = gb.median(0..n, &mut cb);
    let ratio = median_a_ns / median_b_ns;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut draws: Vec<f64> = (0..rounds.max(1))
        .map(|_| {
            let chosen: Vec<usize> = (0..n).map(|_| rng.random_range(0..n)).collect();
            ga.median(chosen.iter().copied(), &mut ca) / gb.median(chosen.into_iter(), &mut cb)
        })
        .collect();
    let below = draws.iter().filter(|r| **r <= 1.0).count() as f64;
    let above = draws.iter().filter(|r| **r >= 1.0).count() as f64;
    let total = draws.len() as f64;
    let p_value = (2.0 * below.min(above) / total).clamp(1.0 / total, 1.0);
    let bootstrap = percentile_interval(&mut draws);
    let (mut low, mut high) = bootstrap;
    let logs: Vec<f64> = segments(n)
        .into_iter()
        .map(|r| (ga.median(r.clone(), &mut ca) / gb.median(r, &mut cb)).ln())
        .collect();
    if let Some((lo, hi)) = segment_interval(&logs, ratio) {
        low = low.min(lo);
        high = high.max(hi);
    }
    let unpadded = (low, high);
    // Each median can sit anywhere within half a step of where the timer put it.
    let step = ga.step;
    let floor = step / 2.0 / median_a_ns + step / 2.0 / median_b_ns;
    let limited_by_resolution = low > ratio * (1.0 - floor) || high < ratio * (1.0 + floor);
    low = low.min(ratio * (1.0 - floor));
    high = high.max(ratio * (1.0 + floor));
    Some(RatioInterval {
        median_a_ns,
        median_b_ns,
        ratio,
        low,
        high,
        blocks: n,
        resolution_ns: step,
        limited_by_resolution,
        p_value,
        bootstrap,
        unpadded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_median_interpolates_inside_the_step() {
        // 10 samples at 100, 10 at 132 on a 32 ns grid: the half falls at the
        // boundary between the two cells, 116.
        let m = grouped_median(&[100.0, 132.0], &[10, 10], 32.0);
        assert!((m - 116.0).abs() < 1e-9, "{m}");
        // All in one cell: the cell's centre.
        let m = grouped_median(&[100.0], &[7], 32.0);
        assert!((m - 100.0).abs() < 1e-9, "{m}");
        // Three quarters in the upper cell: a quarter of the way into it... 1/3 in.
        let m = grouped_median(&[100.0, 132.0], &[5, 15], 32.0);
        assert!((m - (116.0 + 32.0 / 3.0)).abs() < 1e-9, "{m}");
        assert!(grouped_median(&[], &[], 32.0).is_nan());
        // With a 1 ns grid it is the ordinary median to within half a nanosecond.
        let v: Vec<u64> = (1..=101).collect();
        assert!((median(&v, 1.0) - 51.0).abs() <= 0.5);
    }

    #[test]
    fn too_few_blocks_give_no_interval() {
        let b = vec![1000u64; 10];
        let blocks: Vec<&[u64]> = vec![&b; MIN_BLOCKS - 1];
        assert!(median_interval(&blocks, 1.0, 100, 1).is_none());
        assert!(ratio_interval(&blocks, &blocks, 1.0, 100, 1).is_none());
    }

    #[test]
    fn a_constant_median_is_never_narrower_than_one_step() {
        let b = vec![6496u64; 200];
        let blocks: Vec<&[u64]> = vec![&b; 20];
        let m = median_interval(&blocks, 32.0, 200, 1).unwrap();
        assert!(m.limited_by_resolution);
        assert!((m.high_ns - m.low_ns - 32.0).abs() < 1e-9, "{m:?}");
        assert!((m.within_rel).abs() < 1e-12 && m.between_rel.abs() < 1e-12);
        let r = ratio_interval(&blocks, &blocks, 32.0, 200, 1).unwrap();
        assert!(
            r.limited_by_resolution && r.low < 1.0 && r.high > 1.0,
            "{r:?}"
        );
        // One step of 6.5 µs each side: ±0.49% in all.
        assert!((r.high - 1.0 - 32.0 / 6496.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn between_batch_spread_shows_when_batches_disagree() {
        // Each batch is tight, but batches sit 1% apart.
        let batches: Vec<Vec<u64>> = (0..20).map(|i| vec![10_000 + (i % 2) * 100; 100]).collect();
        let refs: Vec<&[u64]> = batches.iter().map(Vec::as_slice).collect();
        let m = median_interval(&refs, 1.0, 500, 3).unwrap();
        assert!(m.within_rel < 1e-9, "{m:?}");
        assert!(m.between_rel > 0.005, "{m:?}");
        // The interval covers both levels' mixture, not one batch's.
        assert!(m.high_ns - m.low_ns > 10.0, "{m:?}");
    }
}
