//! A/B verdicts. The speedup is p50(A) ÷ p50(B) of one race (grouped
//! medians on the timer's grid); its interval comes from a paired block
//! bootstrap over the race's rounds (`bootstrap::ratio_interval`). The verdict
//! calls a difference only when the interval clears both 1.0 and the
//! practical threshold.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::bootstrap::RatioInterval;

/// Differences smaller than this are reported as no difference even when
/// the interval excludes 1.0: no kernel engineer acts on a 0.3% change.
pub const MIN_EFFECT: f64 = 0.005;

/// What the race found, in words: "B faster by 12.3%", "B slower by 4.0%", "B 3.65× faster"
/// once B takes half the time or less ("slower by 2542%" reads worse than "26.42× slower"),
/// or "no difference detected" with the reason.
pub fn verdict_text(r: &RatioInterval) -> String {
    let faster = r.low > 1.0 + MIN_EFFECT;
    let slower = r.high < 1.0 / (1.0 + MIN_EFFECT);
    if faster && r.ratio >= 2.0 {
        format!("B {:.2}× faster", r.ratio)
    } else if faster {
        format!("B faster by {:.1}%", (r.ratio - 1.0) * 100.0)
    } else if slower && r.ratio <= 0.5 {
        format!("B {:.2}× slower", 1.0 / r.ratio)
    } else if slower {
        format!("B slower by {:.1}%", (1.0 / r.ratio - 1.0) * 100.0)
    } else if r.low > 1.0 || r.high < 1.0 {
        format!(
            "no difference detected (the interval excludes 1.0 but not the {:.1}% threshold)",
            MIN_EFFECT * 100.0
        )
    } else if r.limited_by_resolution {
        "no difference detected (within the timer's resolution)".into()
    } else {
        "no difference detected".into()
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

/// The race stops when the interval is narrower than ±`rel` of the speedup.
pub fn interval_is_tight(speedup: f64, ci: (f64, f64), rel: f64) -> bool {
    (ci.1 - ci.0) / 2.0 <= rel * speedup
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

    fn interval(ratio: f64, low: f64, high: f64) -> RatioInterval {
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
        }
    }

    #[test]
    fn verdicts_need_both_one_and_the_threshold_cleared() {
        assert_eq!(
            verdict_text(&interval(1.2, 1.19, 1.21)),
            "B faster by 20.0%"
        );
        assert_eq!(
            verdict_text(&interval(0.8, 0.79, 0.81)),
            "B slower by 25.0%"
        );
        // Past a factor of two, a factor: not "slower by 2542.0%".
        assert_eq!(
            verdict_text(&interval(1.0 / 26.42, 0.0378, 0.0379)),
            "B 26.42× slower"
        );
        assert_eq!(verdict_text(&interval(3.654, 3.65, 3.66)), "B 3.65× faster");
        // Excludes 1.0, inside the threshold.
        assert!(
            verdict_text(&interval(1.003, 1.002, 1.004))
                .starts_with("no difference detected (the interval excludes 1.0")
        );
        // Covers 1.0.
        assert_eq!(
            verdict_text(&interval(1.01, 0.99, 1.03)),
            "no difference detected"
        );
        // Clears 1.0 and most of the threshold, but not all of it.
        assert!(verdict_text(&interval(1.02, 1.004, 1.03)).starts_with("no difference"));
        assert!(interval_is_tight(2.0, (1.99, 2.01), 0.01));
        assert!(!interval_is_tight(2.0, (1.9, 2.1), 0.01));
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
