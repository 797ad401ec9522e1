//! Intervals from separate runs. A run's own interval resamples its batches, so it cannot see
//! what differs from one process to the next (run99: the tile's runs differed by 0.26% while
//! each run's ± was 0.09–0.27%). Runs are the independent units for that: the mean of their
//! medians with a Student-t interval over them, and their spread.

/// The 97.5% quantile of Student's t for `df` degrees of freedom (1 to 30 exact to three
/// decimals; past 30, the value at 30, which is a little wide).
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T[df.clamp(1, 30) - 1]
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AcrossRuns {
    pub runs: usize,
    /// The mean of the runs' medians.
    pub mean: f64,
    /// 95% half-width of that mean, from the runs (t with runs − 1 degrees of freedom).
    pub half_width: f64,
    /// The runs' standard deviation over their mean: what one run's median moves by.
    pub spread_rel: f64,
}

/// The runs' medians summarized; None for fewer than two finite ones.
pub fn across(medians: &[f64]) -> Option<AcrossRuns> {
    let m: Vec<f64> = medians.iter().copied().filter(|x| x.is_finite()).collect();
    let n = m.len();
    if n < 2 {
        return None;
    }
    let mean = m.iter().sum::<f64>() / n as f64;
    let var = m.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    Some(AcrossRuns {
        runs: n,
        mean,
        half_width: t975(n - 1) * sd / (n as f64).sqrt(),
        spread_rel: if mean != 0.0 { sd / mean } else { f64::NAN },
    })
}

/// How many of the other runs' medians fall inside each run's own interval, and of how many:
/// the test a run's ± must pass to be read across runs. `runs`: (median, low, high).
pub fn others_inside(runs: &[(f64, f64, f64)]) -> (usize, usize) {
    let mut inside = 0;
    let mut total = 0;
    for (i, &(_, lo, hi)) in runs.iter().enumerate() {
        for (j, &(m, _, _)) in runs.iter().enumerate() {
            if i != j {
                total += 1;
                inside += usize::from(lo <= m && m <= hi);
            }
        }
    }
    (inside, total)
}

/// An interval's half-width on the log scale, relative to `centre`: its wider side (0 when it
/// has none, or none that is finite).
fn log_half(centre: f64, low: f64, high: f64) -> f64 {
    let h = (high / centre).ln().max((centre / low).ln()).max(0.0);
    if h.is_finite() { h } else { 0.0 }
}

/// `centre` ± `half` on the log scale.
fn around(centre: f64, half: f64) -> (f64, f64) {
    (centre * (-half).exp(), centre * half.exp())
}

/// This run's own half-width (log scale) and a between-run σ, combined: √(h² + (1.96 σ)²).
fn with_sigma(centre: f64, low: f64, high: f64, sigma_rel: f64) -> f64 {
    (log_half(centre, low, high).powi(2) + (1.96 * sigma_rel).powi(2)).sqrt()
}

/// Where a rerun's value lands, 95%: this run's own interval (half-width `h`, relative, the
/// larger side on the log scale) and a between-run σ (relative). Two runs differ by
/// var(X₂ − X₁) = 2(se² + σ²), so the half-width is √2 · √(h² + (1.96 σ)²).
pub fn rerun_interval(centre: f64, low: f64, high: f64, sigma_rel: f64) -> (f64, f64) {
    around(
        centre,
        std::f64::consts::SQRT_2 * with_sigma(centre, low, high, sigma_rel),
    )
}

/// time(a) ÷ time(b) for two medians from different runs (or sessions), each with its rerun
/// interval: a 95% interval of the ratio with each side's own and between-run error. A rerun
/// interval's half is √2 times its side's error, hence the ÷2.
pub fn cross_run_ratio(a: (f64, f64, f64), b: (f64, f64, f64)) -> (f64, f64, f64) {
    let h = ((log_half(a.0, a.1, a.2).powi(2) + log_half(b.0, b.1, b.2).powi(2)) / 2.0).sqrt();
    let r = a.0 / b.0;
    let (lo, hi) = around(r, h);
    (r, lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerun_interval_adds_the_between_run_term() {
        // This run alone ±0.1%, nothing between runs: √2 wider, for the rerun's own error.
        let (lo, hi) = rerun_interval(100.0, 99.9, 100.1, 0.0);
        assert!((hi / 100.0 - 1.0 - 0.1414e-2).abs() < 2e-6, "{hi}");
        assert!((100.0 / lo - 1.0 - 0.1414e-2).abs() < 2e-6, "{lo}");
        // run99's tile: ±0.1% alone, σ 0.3% between runs → ±0.85%.
        let (_, hi) = rerun_interval(100.0, 99.9, 100.1, 0.003);
        assert!((hi / 100.0 - 1.0 - 0.0085).abs() < 2e-4, "{hi}");
        // The wider side counts; a degenerate interval gives the between-run term alone.
        let (lo, _) = rerun_interval(100.0, 99.0, 100.1, 0.0);
        assert!(lo < 98.6, "{lo}");
        let (lo, hi) = rerun_interval(100.0, f64::NAN, f64::NAN, 0.001);
        assert!(lo < 100.0 && hi > 100.0, "{lo} {hi}");
        // Two rerun intervals of ±1% each: their ratio is known to ±1%.
        let (r, lo, hi) = cross_run_ratio((101.0, 100.0, 102.01), (100.0, 99.0099, 101.0));
        assert!((r - 1.01).abs() < 1e-12);
        assert!(
            (hi / r - 1.01).abs() < 1e-4 && (r / lo - 1.01).abs() < 1e-4,
            "{lo} {hi}"
        );
    }

    #[test]
    fn the_mean_of_runs_and_its_interval() {
        // Eight runs' medians of one tile, µs (run99's, as its batches give them).
        let tile = [
            49.824, 49.609, 49.809, 49.761, 49.681, 49.985, 49.665, 50.016,
        ];
        let a = across(&tile).unwrap();
        assert_eq!(a.runs, 8);
        assert!((a.mean - 49.79375).abs() < 1e-9);
        // sd 0.1472 µs: 0.296% of the mean; ±2.365 × sd / √8 = 0.123 µs.
        assert!((a.spread_rel * 100.0 - 0.2956).abs() < 0.001, "{a:?}");
        assert!((a.half_width - 0.1231).abs() < 0.001, "{a:?}");
        assert_eq!(across(&[1.0]), None);
        assert_eq!(across(&[1.0, f64::NAN]), None);
        assert_eq!(t975(0), 12.706);
        assert_eq!(t975(100), 2.042);
    }

    #[test]
    fn other_runs_inside_an_interval_are_counted() {
        let runs = [(1.0, 0.9, 1.1), (1.05, 1.04, 1.06), (2.0, 1.9, 2.1)];
        // Run 1 holds run 2's median; run 2 holds none; run 3 holds none.
        assert_eq!(others_inside(&runs), (1, 6));
    }
}
