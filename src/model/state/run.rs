//! A run: one variant's latency under one set of conditions, with the
//! spreads within and between its batches.

use std::collections::VecDeque;

use crate::metrics::histogram::LatencyStats;
use crate::session::event::{L2Mode, MeasurementDone};

/// What, besides the variant, shape and regime, a run was measured under.
/// A change of any starts a new run; None: not recorded (older sessions).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conditions {
    pub l2: L2Mode,
    /// The source hash of the variant's newest build before the batch.
    pub source: Option<String>,
    /// The distribution the timed launches read.
    pub inputs: Option<crate::session::Inputs>,
}

impl Conditions {
    /// Whether two variants' runs may be compared: the same L2 mode and
    /// inputs (their sources differ by nature).
    pub fn comparable(&self, other: &Conditions) -> bool {
        self.l2 == other.l2 && self.inputs == other.inputs
    }
}

/// Latency of one variant under one set of conditions (a run).
#[derive(Clone, Debug, Default)]
pub struct RunState {
    pub conditions: Conditions,
    pub latency: LatencyStats,
    pub batches: u64,
    /// The newest batch medians (up to `BATCH_KEEP`), for the between-batch spread.
    pub batch_medians: VecDeque<f64>,
    /// The newest batches' own robust spread over their median; None for a
    /// batch of fewer than `SPREAD_MIN_SAMPLES`, whose quartiles say nothing.
    pub batch_spreads: VecDeque<Option<f64>>,
    /// The last completed measurement of this run.
    pub measurement: Option<MeasurementDone>,
}

/// Batch medians kept per run for the between-batch spread.
pub const BATCH_KEEP: usize = 512;
/// The fewest samples whose quartiles make a batch's own spread (a race's
/// rounds may keep 7).
pub const SPREAD_MIN_SAMPLES: usize = 8;

/// (IQR ÷ 1.349, median) of sorted values: a robust σ and the centre.
fn robust(sorted: &[f64]) -> (f64, f64) {
    let at =
        |q: f64| sorted[((q * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1)];
    ((at(0.75) - at(0.25)) / 1.349, at(0.5))
}

impl RunState {
    /// The measurement's (median, low, high) in ns, when it has an interval.
    pub fn interval_ns(&self) -> Option<(f64, f64, f64)> {
        let m = self.measurement.as_ref()?;
        let (lo, hi) = (m.ci_low_ns?, m.ci_high_ns?);
        (m.median_ns.is_finite() && lo.is_finite() && hi.is_finite() && lo > 0.0).then_some((
            m.median_ns,
            lo,
            hi,
        ))
    }

    /// The run's median: its measurement's (grouped, with its interval)
    /// when there is one, else the histogram's p50.
    pub fn median_ns(&self) -> Option<f64> {
        self.measurement
            .as_ref()
            .map(|m| m.median_ns)
            .filter(|m| m.is_finite())
            .or_else(|| self.latency.percentiles().map(|p| p.p50_ns))
    }

    /// Robust spread of the batch medians (IQR ÷ 1.349) over their median.
    pub fn between_batch_rel(&self) -> Option<f64> {
        if self.batch_medians.len() < 5 {
            return None;
        }
        let mut v: Vec<f64> = self.batch_medians.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        let (sd, mid) = robust(&v);
        Some(sd / mid)
    }

    /// The typical batch's own robust spread over its median, over the
    /// batches large enough to have one; None when none is.
    pub fn within_batch_rel(&self) -> Option<f64> {
        let mut v: Vec<f64> = self.batch_spreads.iter().flatten().copied().collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[v.len() / 2])
    }

    pub(super) fn add_batch(&mut self, samples: &[u64]) {
        self.latency.extend(samples);
        self.batches += 1;
        if samples.is_empty() {
            return;
        }
        let mut v: Vec<f64> = samples.iter().map(|x| *x as f64).collect();
        v.sort_by(f64::total_cmp);
        let (sd, mid) = robust(&v);
        if self.batch_medians.len() == BATCH_KEEP {
            self.batch_medians.pop_front();
            self.batch_spreads.pop_front();
        }
        self.batch_medians.push_back(mid);
        self.batch_spreads
            .push_back((v.len() >= SPREAD_MIN_SAMPLES).then_some(sd / mid));
    }
}
