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
//! Placements (issue 55): what one process fixes once, the pages its
//! buffers land on and the addresses its modules load at, moves a kernel's
//! time by up to 1% between processes, and resampling one process's batches
//! cannot see it. A run therefore rotates through several placements
//! (`gpu/engine/placement.rs`), each batch or round tagged with its own, and
//! the interval treats placements as units: the spread between placements'
//! medians (Student's t over them) plus what drift between stretches of
//! time adds beyond the within-run noise, combined with Welch and
//! Satterthwaite's degrees of freedom. As the run sees more of each
//! placement the interval narrows toward what the placements' spread
//! allows, and the value it estimates is the average over placements, which
//! another process estimates too.
//!
//! Medians are grouped medians: a timer with a 32 ns step reports a 6.5 µs
//! kernel on about 35 values, and the plain median of such data jumps from
//! one value to the next; interpolating inside the step where the cumulative
//! count crosses one half gives a median that moves smoothly with the data.

use std::collections::BTreeMap;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::cycle;

mod cycles;
use cycles::Run;

/// Bootstrap resamples for a final interval.
pub const ROUNDS: usize = 2000;
/// Fewer batches than this give no interval: the bootstrap of a handful of
/// blocks is too optimistic to print.
pub const MIN_BLOCKS: usize = 5;
/// Stretches of consecutive batches (or rounds) for the drift term: at most
/// this many, two batches each at least, and none under 3.
pub const SEGMENTS: usize = 6;
/// Placements with data needed before their spread is used.
pub const MIN_PLACEMENTS: usize = 3;

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
    /// What the interval is made of (placements, drift, its standard error).
    pub parts: Parts,
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

/// Mean and sample variance.
fn mean_var(x: &[f64]) -> (f64, f64) {
    let k = x.len() as f64;
    let mean = x.iter().sum::<f64>() / k;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1.0).max(1.0);
    (mean, var)
}

/// What an interval is made of, on the log scale (relative).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Parts {
    /// Placements with data, and the spread of their values (σ, relative;
    /// the noise of the batches each holds included).
    pub placements: usize,
    pub placement_rel: f64,
    /// Stretches of time, and the drift between them beyond the noise (σ of
    /// the run's value it causes, relative).
    pub segments: usize,
    pub drift_rel: f64,
    /// The standard error of the run's value and its degrees of freedom.
    pub se: f64,
    pub df: f64,
    /// The 95% half-width, t(df)·se.
    pub half: f64,
    /// Batches a power-cap clock cycle lasts, when the interval stood on the
    /// run's whole cycles (`segments` then counts them); 0 otherwise.
    pub cycle_batches: usize,
}

/// The run's standard error from its placements' values (`by_placement`,
/// logs) and its stretches of time (`by_segment`, logs), given the
/// within-run standard error `se_within` (the bootstrap's): the spread of
/// placements' values over their number, plus whatever the stretches vary
/// by beyond the noise both already hold (with one placement, all of it).
/// None when neither has enough units.
pub fn combine(by_placement: &[f64], by_segment: &[f64], se_within: f64) -> Option<Parts> {
    let c = by_placement.len();
    let k = by_segment.len();
    let use_placements = c >= MIN_PLACEMENTS;
    let use_segments = k >= 3;
    if !use_placements && !use_segments {
        return None;
    }
    let within2 = if se_within.is_finite() {
        se_within * se_within
    } else {
        0.0
    };
    let (term_p, placement_rel) = if use_placements {
        let (_, var) = mean_var(by_placement);
        (var / c as f64, var.sqrt())
    } else {
        (0.0, 0.0)
    };
    let term_d = if use_segments {
        let (_, var) = mean_var(by_segment);
        if use_placements {
            (var / k as f64 - within2).max(0.0)
        } else {
            var / k as f64
        }
    } else {
        0.0
    };
    let se2 = term_p + term_d;
    let denom = if use_placements {
        term_p * term_p / (c - 1) as f64
    } else {
        0.0
    } + if use_segments {
        term_d * term_d / (k - 1) as f64
    } else {
        0.0
    };
    let df = if denom > 0.0 {
        (se2 * se2 / denom).max(1.0)
    } else {
        30.0
    };
    let se = se2.sqrt();
    Some(Parts {
        placements: c,
        placement_rel,
        segments: k,
        drift_rel: term_d.sqrt(),
        se,
        df,
        half: super::across_runs::t975(df.floor() as usize) * se,
        cycle_batches: 0,
    })
}

/// The units' values grouped by placement: for each placement id with
/// blocks, `log_value` of its blocks (a log), where finite.
fn by_placement(
    placement: &[u32],
    mut log_value: impl FnMut(&mut dyn Iterator<Item = usize>) -> f64,
) -> Vec<f64> {
    let mut ids: Vec<u32> = placement.to_vec();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|p| {
            let mut of = (0..placement.len()).filter(|&i| placement[i] == p);
            log_value(&mut of)
        })
        .filter(|x| x.is_finite())
        .collect()
}

/// Each placement's mean of `values` (one per unit), where finite.
fn mean_by_placement(placement: &[u32], values: &[f64]) -> Vec<f64> {
    by_placement(placement, |of| {
        let (sum, k) = of.fold((0.0, 0usize), |(s, k), i| (s + values[i], k + 1));
        sum / k as f64
    })
}

/// Half-width (log scale, the larger side) of an interval around `centre`.
fn log_half(centre: f64, low: f64, high: f64) -> f64 {
    let h = (high / centre).ln().max((centre / low).ln());
    if h.is_finite() { h.max(0.0) } else { 0.0 }
}

/// `n` items cut into up to `SEGMENTS` stretches of consecutive ones, two
/// items each at least, as evenly as possible; none under three stretches.
fn segments(n: usize) -> Vec<std::ops::Range<usize>> {
    let k = (n / 2).min(SEGMENTS);
    if k < 3 {
        return Vec::new();
    }
    (0..k).map(|s| s * n / k..(s + 1) * n / k).collect()
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

/// The median of all samples with its 95% interval, every batch on one
/// placement; None under `MIN_BLOCKS` non-empty batches.
pub fn median_interval(
    blocks: &[&[u64]],
    resolution_ns: f64,
    rounds: usize,
    seed: u64,
) -> Option<MedianInterval> {
    median_interval_placed(blocks, &vec![0; blocks.len()], resolution_ns, rounds, seed)
}

/// `median_interval_run` of a run that did not stop on its interval.
pub fn median_interval_placed(
    blocks: &[&[u64]],
    placement: &[u32],
    resolution_ns: f64,
    rounds: usize,
    seed: u64,
) -> Option<MedianInterval> {
    median_interval_run(blocks, placement, resolution_ns, rounds, seed, false)
}

/// The median of all samples with its 95% interval: the wider of a block
/// bootstrap over batches and t·se from `combine` (placements `placement`,
/// one per batch, and stretches of time); never narrower than the timer's
/// step. A run that holds `cycle::MIN_CYCLES` whole power-cap cycles and
/// ran its full time is judged on its cycles instead
/// (`cycles::Run::cycle_interval`). One that stopped because its interval
/// looked narrow enough (`stopped_on_interval`) is not: stopped the moment
/// an interval first read narrow, its cycles' interval was narrower than
/// its error (run187, 600 µs runs stopped after four cycles: 71 and 69 of
/// 90 other runs' medians inside; the stretches' interval of the same
/// runs, 86 and 90). None under `MIN_BLOCKS` non-empty batches.
pub fn median_interval_run(
    blocks: &[&[u64]],
    placement: &[u32],
    resolution_ns: f64,
    rounds: usize,
    seed: u64,
    stopped_on_interval: bool,
) -> Option<MedianInterval> {
    let (blocks, placement): (Vec<&[u64]>, Vec<u32>) = blocks
        .iter()
        .zip(placement.iter().chain(std::iter::repeat(&0)))
        .filter(|(b, _)| !b.is_empty())
        .map(|(b, p)| (*b, *p))
        .unzip();
    if blocks.len() < MIN_BLOCKS {
        return None;
    }
    let grid = Grid::new(&blocks, resolution_ns);
    let mut counts = vec![0u64; grid.values.len()];
    let median_ns = grid.median(0..blocks.len(), &mut counts);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = blocks.len();
    let logs: Vec<f64> = (0..n)
        .map(|i| grid.median(std::iter::once(i), &mut counts).ln())
        .collect();
    let (mut low_ns, mut high_ns, se_within, parts) = match cycles::rhythm(&logs, &placement) {
        cycle::Rhythm::Cycles(lag) if !stopped_on_interval => {
            let run = Run {
                grid: &grid,
                logs: &logs,
                placement: &placement,
                median_ns,
            };
            let (low, high, p) = run.cycle_interval(lag, rounds, &mut rng);
            (low, high, log_half(median_ns, low, high) / 1.96, Some(p))
        }
        _ => {
            let mut draws: Vec<f64> = (0..rounds.max(1))
                .map(|_| {
                    let chosen: Vec<usize> = (0..n).map(|_| rng.random_range(0..n)).collect();
                    grid.median(chosen.into_iter(), &mut counts)
                })
                .collect();
            let (low, high) = percentile_interval(&mut draws);
            let se_within = log_half(median_ns, low, high) / 1.96;
            let by_segment: Vec<f64> = segments(n)
                .into_iter()
                .map(|r| grid.median(r, &mut counts).ln())
                .collect();
            let by_place = by_placement(&placement, |of| grid.median(of, &mut counts).ln());
            let parts = combine(&by_place, &by_segment, se_within);
            (low, high, se_within, parts)
        }
    };
    if let Some(p) = parts {
        low_ns = low_ns.min(median_ns * (-p.half).exp());
        high_ns = high_ns.max(median_ns * p.half.exp());
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
        parts: parts.unwrap_or(Parts {
            se: se_within,
            df: 30.0,
            half: 1.96 * se_within,
            ..Parts::default()
        }),
    })
}

/// A quick estimate of a run's interval from its batches' medians alone
/// (`batch_medians`, each batch on `placement`): its relative 95%
/// half-width and whether the timer's step (`resolution_ns`) sets it. It
/// costs one pass over the batches, so a stopping rule can ask for it every
/// few batches while the GPU runs: the full interval (a bootstrap over every
/// sample, regridded) took longer than a batch once a run held a few
/// hundred batches, and the GPU ran dry behind it (run167: busy fell from
/// 99% to 47% and the kernel read 10% faster by the end of a 5 s run).
/// None under `MIN_BLOCKS` batches, and while the batches move as a slow
/// wave the run has not yet seen `cycle::MIN_CYCLES` whole cycles of (it
/// would stop on whichever phase it is in).
pub fn quick_half_width(
    batch_medians: &[f64],
    placement: &[u32],
    resolution_ns: f64,
) -> Option<(f64, bool)> {
    let (logs, place): (Vec<f64>, Vec<u32>) = batch_medians
        .iter()
        .zip(placement.iter().chain(std::iter::repeat(&0)))
        .map(|(m, p)| (m.ln(), *p))
        .filter(|(x, _)| x.is_finite())
        .unzip();
    let n = logs.len();
    if n < MIN_BLOCKS {
        return None;
    }
    let (mean, var) = mean_var(&logs);
    let se_within = (var / n as f64).sqrt();
    let step_half = resolution_ns.max(1.0) / 2.0 / mean.exp();
    // A run stopped on its interval is judged on stretches
    // (`median_interval_run`), so the rule that stops it reads them too: one
    // that read the cycles stopped 45 µs runs after four, where the
    // stretches' interval was ±1.2–3.0% (run188).
    if cycles::rhythm(&logs, &place) == cycle::Rhythm::Unresolved {
        return None;
    }
    let by_segment: Vec<f64> = segments(n)
        .into_iter()
        .map(|r| logs[r.clone()].iter().sum::<f64>() / r.len() as f64)
        .collect();
    let by_place = mean_by_placement(&place, &logs);
    let half = combine(&by_place, &by_segment, se_within)
        .map_or(1.96 * se_within, |p| p.half)
        .max(1.96 * se_within);
    Some((half.max(step_half), step_half >= half))
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
    /// What the interval is made of (placements, drift, its standard error).
    pub parts: Parts,
}

pub fn ratio_interval(
    rounds_a: &[&[u64]],
    rounds_b: &[&[u64]],
    resolution_ns: f64,
    rounds: usize,
    seed: u64,
) -> Option<RatioInterval> {
    let zeros = vec![0; rounds_a.len().min(rounds_b.len())];
    ratio_interval_placed(rounds_a, rounds_b, &zeros, resolution_ns, rounds, seed)
}

/// As `ratio_interval`, each round on placement `placement[i]`: the interval
/// is the wider of the paired bootstrap over rounds and t·se from `combine`
/// over the placements' ratios and stretches of rounds.
pub fn ratio_interval_placed(
    rounds_a: &[&[u64]],
    rounds_b: &[&[u64]],
    placement: &[u32],
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
    let place: Vec<u32> = keep
        .iter()
        .map(|&i| placement.get(i).copied().unwrap_or(0))
        .collect();
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
    let se_within = log_half(ratio, low, high) / 1.96;
    let by_segment: Vec<f64> = segments(n)
        .into_iter()
        .map(|r| (ga.median(r.clone(), &mut ca) / gb.median(r, &mut cb)).ln())
        .collect();
    let by_place = by_placement(&place, |of| {
        let chosen: Vec<usize> = of.collect();
        (ga.median(chosen.iter().copied(), &mut ca) / gb.median(chosen.into_iter(), &mut cb)).ln()
    });
    let parts = combine(&by_place, &by_segment, se_within);
    if let Some(p) = parts {
        low = low.min(ratio * (-p.half).exp());
        high = high.max(ratio * p.half.exp());
    }
    let unpadded = (low, high);
    // Each median can sit anywhere within half a step of where the timer put it.
    let step = ga.step;
    let floor = step / 2.0 / median_a_ns + step / 2.0 / median_b_ns;
    let limited_by_resolution = low > ratio * (1.0 - floor) || high < ratio * (1.0 + floor);
    low = low.min(ratio * (1.0 - floor));
    high = high.max(ratio * (1.0 + floor));
    let mut parts = parts.unwrap_or(Parts {
        se: se_within,
        df: 30.0,
        half: 1.96 * se_within,
        ..Parts::default()
    });
    // The timer's floor is a standard error too: a decision reads this.
    let floor_se = floor / 1.96;
    if parts.se < floor_se {
        parts.se = floor_se;
        parts.half = parts.half.max(floor);
    }
    parts.se = parts.se.max(se_within);
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
        parts,
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
    fn the_quick_interval_reads_placements_and_the_timer() {
        // 64 batches of a 10 µs kernel on 16 placements 1% apart (σ), little else.
        let medians: Vec<f64> = (0..64)
            .map(|i| 10_000.0 * (1.0 + 0.01 * (((i % 16) as f64 * 0.37).sin())))
            .collect();
        let place: Vec<u32> = (0..64).map(|i| i % 16).collect();
        let (half, at_step) = quick_half_width(&medians, &place, 1.0).unwrap();
        // About t₁₅ · 0.7% / 4.
        assert!(half > 0.002 && half < 0.006, "{half}");
        assert!(!at_step);
        // Steadier than a 32 ns step of a 6 µs kernel: the step's half.
        let flat = vec![6_000.0; 20];
        let (half, at_step) = quick_half_width(&flat, &[0; 20], 32.0).unwrap();
        assert!(at_step && (half - 16.0 / 6_000.0).abs() < 1e-12, "{half}");
        assert!(quick_half_width(&flat[..4], &[0; 4], 32.0).is_none());
    }

    #[test]
    fn placements_widen_an_interval_and_segments_see_drift() {
        // A block bootstrap alone sees batches; placements 2% apart, each
        // visited in turn, make the run's value uncertain by their spread.
        let batches: Vec<Vec<u64>> = (0..48)
            .map(|i| vec![10_000 + (i % 8) as u64 * 200; 50])
            .collect();
        let refs: Vec<&[u64]> = batches.iter().map(Vec::as_slice).collect();
        let place: Vec<u32> = (0..48).map(|i| (i % 8) as u32).collect();
        let placed = median_interval_placed(&refs, &place, 1.0, 300, 1).unwrap();
        assert_eq!(placed.parts.placements, 8);
        assert!(placed.parts.placement_rel > 0.01, "{:?}", placed.parts);
        let one = median_interval(&refs, 1.0, 300, 1).unwrap();
        assert_eq!(one.parts.placements, 1);
        assert!(placed.high_ns - placed.low_ns >= one.high_ns - one.low_ns);
        // With one placement, stretches that drift apart widen it.
        let drift: Vec<Vec<u64>> = (0..48).map(|i| vec![10_000 + i as u64 * 20; 50]).collect();
        let refs: Vec<&[u64]> = drift.iter().map(Vec::as_slice).collect();
        let d = median_interval(&refs, 1.0, 300, 1).unwrap();
        assert!(
            d.parts.segments == SEGMENTS && d.parts.drift_rel > 0.01,
            "{:?}",
            d.parts
        );
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
