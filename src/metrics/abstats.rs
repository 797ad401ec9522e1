//! A/B verdicts. The speedup is p50(A) ÷ p50(B) of one race (grouped
//! medians on the timer's grid); its interval comes from the race's rounds
//! and placements (`bootstrap::ratio_interval_placed`).
//!
//! A race looks at its data every half second and may stop at any look, so
//! a plain 95% interval excluding 1.0 would call a difference in an A/A
//! race far more often than 5% of the time. A difference is called when
//! |log ratio| ÷ its standard error passes a boundary that is high early
//! and `Z_FINAL` at the time limit (O'Brien and Fleming's shape, z ÷ √t):
//! a large change is called within a second, a small one at the end with
//! nearly the power of a single look, and an A/A race calls a difference
//! about 1% of the time over all its looks (`tests/calibration.rs`). There
//! is no fixed smallest effect: the race's resolution, the smallest
//! difference it would call 9 times in 10 by its time limit, comes from its
//! own standard error and is said with the verdict.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::bootstrap::RatioInterval;
use crate::session::event::Decision;

/// The boundary at the time limit, in standard errors (two-sided 0.8% at
/// one look).
pub const Z_FINAL: f64 = 2.65;
/// Standard errors beyond the boundary a true difference must sit to be
/// called 9 times in 10.
pub const POWER_Z: f64 = 1.2816;
/// Earliest share of the time limit the boundary is computed for: before
/// it the boundary stays at its value there (√10 × `Z_FINAL`).
const MIN_FRACTION: f64 = 0.1;

/// The boundary, in standard errors, at `fraction` of the time limit.
pub fn boundary(fraction: f64) -> f64 {
    Z_FINAL / fraction.clamp(MIN_FRACTION, 1.0).sqrt()
}

/// Student's t quantile with `df` degrees of freedom at the tail
/// probability the normal gives `z` (Cornish and Fisher's expansion, within
/// 1% of the exact quantile for z ≤ 3.5 and df ≥ 3): a standard error known
/// from few placements or stretches needs a larger multiple.
pub fn t_of_z(z: f64, df: f64) -> f64 {
    let v = df.max(1.0);
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v * v * v)
}

/// A race's call at one look: the decision, the smallest difference it
/// would call 9 times in 10 by its time limit, and the band inside which
/// an interval reads as no difference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Call {
    pub decision: Decision,
    /// Relative: 0.006 reads "could see ≥ 0.6%".
    pub resolution: f64,
    pub band: f64,
}

/// The call at `fraction` of the time limit (1 at the limit): `min_band`
/// (relative) widens the no-difference band, as `ab --by` does. The
/// standard error is projected to the limit as 1/√time.
pub fn decide(r: &RatioInterval, fraction: f64, min_band: f64) -> Call {
    let f = fraction.clamp(1e-6, 1.0);
    let se = r.parts.se;
    let df = r.parts.df;
    let se_final = se * f.sqrt();
    let t_final = t_of_z(Z_FINAL, df);
    let resolution = (t_final + POWER_Z) * se_final;
    let band = min_band.max(t_final * se_final);
    let z = r.ratio.ln().abs() / se;
    let decision = if !(se > 0.0 && z.is_finite()) {
        Decision::Undecided
    } else if z > t_of_z(boundary(f), df) {
        if r.ratio > 1.0 {
            Decision::Faster
        } else {
            Decision::Slower
        }
    } else if r.low >= 1.0 / (1.0 + band) && r.high <= 1.0 + band {
        Decision::Same
    } else {
        Decision::Undecided
    };
    Call {
        decision,
        resolution,
        band,
    }
}

/// What the race found, in words: "B faster by 12.3%", "B slower by 4.0%",
/// "B 3.65× faster" once B takes half the time or less ("slower by 2542%"
/// reads worse than "26.42× slower"), or "no difference detected" with what
/// it could have seen.
pub fn verdict_text(r: &RatioInterval, call: &Call) -> String {
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    match call.decision {
        Decision::Faster if r.ratio >= 2.0 => format!("B {:.2}× faster", r.ratio),
        Decision::Faster => format!("B faster by {}", pct(r.ratio - 1.0)),
        Decision::Slower if r.ratio <= 0.5 => format!("B {:.2}× slower", 1.0 / r.ratio),
        Decision::Slower => format!("B slower by {}", pct(1.0 / r.ratio - 1.0)),
        Decision::Same => format!(
            "no difference detected: none beyond ±{} (this race could see ≥ {})",
            pct(call.band),
            pct(call.resolution)
        ),
        Decision::Undecided if r.limited_by_resolution => format!(
            "no difference detected (within the timer's resolution; this race could see ≥ {})",
            pct(call.resolution)
        ),
        Decision::Undecided => format!(
            "no difference detected (this race could see ≥ {})",
            pct(call.resolution)
        ),
    }
}

/// Launches at the start of each race round that are not samples: the
/// first after the host's pause between rounds, one of each side.
pub const DISCARD_PER_ROUND: usize = 2;

/// How a race orders its launches, said in its report.
pub const DESIGN: &str =
    "ABBA order, the opener alternating per round, the first 2 launches of each round discarded";

/// Round `round`'s launch order, `true` for A: ABBA ABBA … on even rounds,
/// BAAB BAAB … on odd ones, so neither side always opens a round or always
/// follows the other. `launches` is rounded up to a multiple of 4.
pub fn abba_order(round: u64, launches: usize) -> Vec<bool> {
    let quad = if round.is_multiple_of(2) {
        [true, false, false, true]
    } else {
        [false, true, true, false]
    };
    quad.iter()
        .copied()
        .cycle()
        .take(launches.div_ceil(4) * 4)
        .collect()
}

/// The interval attnscope used to print: every launch resampled as if
/// independent. Kept only so the calibration tests can show why it is not
/// used: launches in a batch are correlated and the timer quantizes, so its
/// intervals are far too narrow (an A/A race excluded 1.0).
pub fn per_launch_interval(a: &[u64], b: &[u64], rounds: usize, seed: u64) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut buf_a, mut buf_b) = (vec![0u64; a.len()], vec![0u64; b.len()]);
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| {
            for x in buf_a.iter_mut() {
                *x = a[rng.random_range(0..a.len())];
            }
            for x in buf_b.iter_mut() {
                *x = b[rng.random_range(0..b.len())];
            }
            plain_median(&mut buf_a) / plain_median(&mut buf_b)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((q * (rounds - 1) as f64).round() as usize).min(rounds - 1)];
    Some((at(0.025), at(0.975)))
}

/// The ordinary median (the mean of the two middle values when even).
pub fn plain_median(values: &mut [u64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let (_, m, _) = values.select_nth_unstable(n / 2);
    let hi = *m as f64;
    if n % 2 == 1 {
        return hi;
    }
    let lo = *values[..n / 2].iter().max().expect("n ≥ 2") as f64;
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A race's interval with a standard error of `se` (relative) on
    /// `df` degrees of freedom; 95% bounds from it.
    fn interval(ratio: f64, se: f64, df: f64) -> RatioInterval {
        let half = t_of_z(1.96, df) * se;
        let (low, high) = (ratio * (-half).exp(), ratio * half.exp());
        RatioInterval {
            median_a_ns: 1000.0 * ratio,
            median_b_ns: 1000.0,
            ratio,
            low,
            high,
            blocks: 40,
            resolution_ns: 1.0,
            limited_by_resolution: false,
            p_value: 0.5,
            bootstrap: (low, high),
            unpadded: (low, high),
            parts: crate::metrics::bootstrap::Parts {
                se,
                df,
                half,
                ..Default::default()
            },
        }
    }

    fn text(r: &RatioInterval, fraction: f64) -> String {
        verdict_text(r, &decide(r, fraction, 0.0))
    }

    #[test]
    fn verdicts_in_words() {
        assert_eq!(text(&interval(1.2, 0.001, 60.0), 1.0), "B faster by 20.0%");
        assert_eq!(text(&interval(0.8, 0.001, 60.0), 1.0), "B slower by 25.0%");
        // Past a factor of two, a factor: not "slower by 2542.0%".
        assert_eq!(
            text(&interval(1.0 / 26.42, 0.001, 60.0), 1.0),
            "B 26.42× slower"
        );
        assert_eq!(text(&interval(3.654, 0.001, 60.0), 1.0), "B 3.65× faster");
        // No fixed smallest effect: 0.3% is called when the race resolves it.
        assert_eq!(
            text(&interval(1.003, 0.0005, 60.0), 1.0),
            "B faster by 0.3%"
        );
        // Not resolved: no difference, and what the race could have seen.
        let t = text(&interval(1.003, 0.002, 60.0), 1.0);
        assert!(t.starts_with("no difference detected"), "{t}");
        assert!(t.contains("could see ≥ 0.8%"), "{t}");
    }

    #[test]
    fn the_boundary_is_high_early_and_z_final_at_the_limit() {
        // 1% at a standard error of 0.3%: 3.3 errors, past the final boundary
        // (2.65, a little more at 60 df) but not the early one (8.4 at a tenth).
        let r = interval(1.01, 0.003, 60.0);
        assert_eq!(decide(&r, 1.0, 0.0).decision, Decision::Faster);
        assert_eq!(decide(&r, 0.1, 0.0).decision, Decision::Undecided);
        // A large difference is called at once.
        assert_eq!(
            decide(&interval(1.05, 0.003, 60.0), 0.1, 0.0).decision,
            Decision::Faster
        );
        // Few degrees of freedom ask for more: 3.3 errors at 5 df is not past 4.26.
        assert_eq!(
            decide(&interval(1.01, 0.003, 5.0), 1.0, 0.0).decision,
            Decision::Undecided
        );
        // Inside the band (the race's resolution, or --by): the same.
        let same = interval(1.0002, 0.0005, 60.0);
        let call = decide(&same, 1.0, 0.0);
        assert_eq!(call.decision, Decision::Same);
        assert!(text(&same, 1.0).starts_with("no difference detected: none beyond ±"));
        assert_eq!(
            decide(&interval(1.004, 0.003, 60.0), 1.0, 0.02).decision,
            Decision::Same
        );
        // Early, the band is what the race will resolve by its limit.
        assert!(decide(&same, 0.25, 0.0).band < call.band);
        assert!(boundary(0.01) == boundary(0.1) && boundary(1.0) == Z_FINAL);
    }

    #[test]
    fn t_quantiles_from_z() {
        // t at 97.5% (z 1.96): 2.571 (5 df), 2.228 (10), 2.042 (30).
        for (df, t) in [(5.0, 2.571), (10.0, 2.228), (30.0, 2.042)] {
            assert!(
                (t_of_z(1.96, df) / t - 1.0).abs() < 0.01,
                "{df}: {}",
                t_of_z(1.96, df)
            );
        }
        // Two-sided 0.8% (z 2.652): 4.262 (5 df), 3.301 (10), 2.841 (30), 2.706 (100).
        for (df, t) in [(5.0, 4.262), (10.0, 3.301), (30.0, 2.841), (100.0, 2.706)] {
            assert!(
                (t_of_z(2.652, df) / t - 1.0).abs() < 0.02,
                "{df}: {}",
                t_of_z(2.652, df)
            );
        }
    }

    #[test]
    fn abba_orders_balance_position() {
        let even = abba_order(0, 8);
        let odd = abba_order(1, 6);
        assert_eq!(even, [true, false, false, true, true, false, false, true]);
        assert_eq!(odd, [false, true, true, false, false, true, true, false]);
        // Over two rounds each side opens once, and each is as often first
        // of a pair as second.
        for o in [&even, &odd] {
            assert_eq!(o.iter().filter(|a| **a).count() * 2, o.len());
        }
        assert_ne!(even[0], odd[0]);
    }

    #[test]
    fn medians() {
        assert_eq!(plain_median(&mut [3, 1, 2]), 2.0);
        assert_eq!(plain_median(&mut [4, 1, 3, 2]), 2.5);
        assert!(plain_median(&mut []).is_nan());
    }
}
