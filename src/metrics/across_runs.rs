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

#[cfg(test)]
mod tests {
    use super::*;

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
