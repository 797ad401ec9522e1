//! A/B statistics: speedup = p50(A) / p50(B) with a 95% bootstrap interval,
//! and the Mann-Whitney U test (normal approximation with tie correction).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Differences smaller than this are reported as no difference even when
/// statistically detectable: with 10^5 samples a test sees 0.1% drifts that
/// no kernel engineer acts on.
pub const MIN_EFFECT: f64 = 0.005;
pub const ALPHA: f64 = 0.01;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample.
    pub u: f64,
    pub z: f64,
    pub p_value: f64,
}

/// Two-sided Mann-Whitney U test, normal approximation, no continuity
/// correction (scipy's `mannwhitneyu(..., method='asymptotic', use_continuity=False)`).
pub fn mann_whitney(a: &[u64], b: &[u64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut all: Vec<(u64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_unstable_by_key(|p| p.0);
    let n = all.len();
    let (mut rank_sum_a, mut tie_term) = (0.0f64, 0.0f64);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < n && all[j].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j share their average.
        let avg = (i + 1 + j) as f64 / 2.0;
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        rank_sum_a += avg * all[i..j].iter().filter(|p| p.1).count() as f64;
        i = j;
    }
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u = rank_sum_a - n1f * (n1f + 1.0) / 2.0;
    let mean = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)).max(1.0));
    if var <= 0.0 {
        return Some(MannWhitney {
            u,
            z: 0.0,
            p_value: 1.0,
        });
    }
    let z = (u - mean) / var.sqrt();
    Some(MannWhitney {
        u,
        z,
        p_value: erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0),
    })
}

/// Complementary error function, fractional error under 1.2e-7
/// (Numerical Recipes' Chebyshev fit, `erfcc`).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807
                            + t * (-1.13520398
                                + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

pub fn median_of(values: &mut [u64]) -> f64 {
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

/// 95% percentile-bootstrap interval of p50(A) / p50(B). At most `cap`
/// samples of each side are used (an even stride), `rounds` resamples.
pub fn speedup_interval(
    a: &[u64],
    b: &[u64],
    rounds: usize,
    cap: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let thin = |v: &[u64]| -> Vec<u64> {
        if v.len() <= cap {
            v.to_vec()
        } else {
            (0..cap).map(|i| v[i * v.len() / cap]).collect()
        }
    };
    let (a, b) = (thin(a), thin(b));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf_a = vec![0u64; a.len()];
    let mut buf_b = vec![0u64; b.len()];
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| {
            for x in buf_a.iter_mut() {
                *x = a[rng.random_range(0..a.len())];
            }
            for x in buf_b.iter_mut() {
                *x = b[rng.random_range(0..b.len())];
            }
            median_of(&mut buf_a) / median_of(&mut buf_b)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((q * (rounds - 1) as f64).round() as usize).min(rounds - 1)];
    Some((at(0.025), at(0.975)))
}

#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub speedup: f64,
    pub ci: (f64, f64),
    pub p_value: f64,
    pub text: String,
}

/// The verdict on B against A: faster, slower, or no significant difference.
pub fn verdict(a: &[u64], b: &[u64], seed: u64) -> Option<Verdict> {
    let speedup = median_of(&mut a.to_vec()) / median_of(&mut b.to_vec());
    let ci = speedup_interval(a, b, 1000, 20_000, seed)?;
    let mw = mann_whitney(a, b)?;
    let significant = mw.p_value < ALPHA && (ci.0 > 1.0 + MIN_EFFECT || ci.1 < 1.0 - MIN_EFFECT);
    let text = if mw.p_value >= ALPHA {
        format!("no significant difference (p={:.2})", mw.p_value)
    } else if !significant {
        format!(
            "no significant difference (|Δ| {:.2}% < {:.1}%)",
            (speedup - 1.0).abs() * 100.0,
            MIN_EFFECT * 100.0
        )
    } else if speedup > 1.0 {
        format!("B faster by {:.1}%", (speedup - 1.0) * 100.0)
    } else {
        format!("B slower by {:.1}%", (1.0 / speedup - 1.0) * 100.0)
    };
    Some(Verdict {
        speedup,
        ci,
        p_value: mw.p_value,
        text,
    })
}

/// The race stops when the interval is narrower than ±`rel` of the speedup.
pub fn interval_is_tight(speedup: f64, ci: (f64, f64), rel: f64) -> bool {
    (ci.1 - ci.0) / 2.0 <= rel * speedup
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_python_math_erfc() {
        // Expected values: Python 3.11 `math.erfc`.
        for (x, want) in [
            (0.5, 0.4795001221869535),
            (2.0, 0.004677734981047265),
            (4.0, 1.541725790028002e-08),
        ] {
            let got = erfc(x);
            assert!(
                ((got - want) / want).abs() < 1.2e-7,
                "erfc({x}) = {got}, want {want}"
            );
        }
        assert!((erfc(-0.5) - (2.0 - 0.4795001221869535)).abs() < 1e-7);
    }

    #[test]
    fn mann_whitney_matches_scipy() {
        // Expected: scipy 1.17.1 mannwhitneyu(a, b, alternative='two-sided',
        // method='asymptotic', use_continuity=False).
        let a = [10, 12, 11, 13, 15, 14, 16, 18, 17, 19];
        let b = [20, 22, 21, 12, 25, 24, 26, 28, 27, 29];
        let r = mann_whitney(&a, &b).unwrap();
        assert_eq!(r.u, 7.5);
        assert!(
            (r.p_value - 0.0013094231237714329).abs() / 0.0013094231237714329 < 1e-6,
            "{r:?}"
        );
        let a = [1, 2, 2, 3, 3, 3, 4];
        let b = [2, 3, 3, 4, 4, 5, 5, 6];
        let r = mann_whitney(&a, &b).unwrap();
        assert_eq!(r.u, 11.0);
        assert!(
            (r.p_value - 0.04334435674852682).abs() / 0.04334435674852682 < 1e-6,
            "{r:?}"
        );
        assert!(mann_whitney(&[], &b).is_none());
    }

    #[test]
    fn medians() {
        assert_eq!(median_of(&mut [3, 1, 2]), 2.0);
        assert_eq!(median_of(&mut [4, 1, 3, 2]), 2.5);
        assert!(median_of(&mut []).is_nan());
    }

    #[test]
    fn verdicts() {
        let a: Vec<u64> = (0..2000).map(|i| 40_000 + (i * 7919) % 400).collect();
        let b: Vec<u64> = (0..2000).map(|i| 20_000 + (i * 104_729) % 200).collect();
        let v = verdict(&a, &b, 1).unwrap();
        assert!((v.speedup - 2.0).abs() < 0.01, "{v:?}");
        assert!(v.ci.0 <= v.speedup && v.speedup <= v.ci.1);
        assert!(v.text.starts_with("B faster"), "{v:?}");
        let v = verdict(&b, &a, 1).unwrap();
        assert!(v.text.starts_with("B slower"), "{v:?}");
        // A/A: the same distribution in another order.
        let mut a2 = a.clone();
        a2.reverse();
        let v = verdict(&a, &a2, 1).unwrap();
        assert!(v.text.starts_with("no significant difference"), "{v:?}");
        assert!(interval_is_tight(2.0, (1.99, 2.01), 0.01));
        assert!(!interval_is_tight(2.0, (1.9, 2.1), 0.01));
    }
}
