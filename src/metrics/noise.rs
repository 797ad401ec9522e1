//! When to stop sampling: the relative noise of the median, from the
//! distribution-free 95% confidence interval of the median by order statistics.

/// Half-width of the 95% interval of the median over the median, for
/// samples sorted ascending. `None` under 8 samples.
pub fn median_rel_noise(sorted: &[u64]) -> Option<f64> {
    let n = sorted.len();
    if n < 8 {
        return None;
    }
    let median = median(sorted)?;
    // Ranks n/2 ∓ 1.96·√n/2 (normal approximation to the binomial).
    let half = 1.96 * (n as f64).sqrt() / 2.0;
    let lo = ((n as f64 / 2.0 - half).floor().max(0.0)) as usize;
    let hi = ((n as f64 / 2.0 + half).ceil() as usize).min(n - 1);
    Some((sorted[hi] - sorted[lo]) as f64 / 2.0 / median)
}

pub fn median(sorted: &[u64]) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    Some(if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0
    })
}

/// The stopping rule: noise under `target` after `min_s`, or `max_s` reached.
pub fn should_stop(
    noise: Option<f64>,
    elapsed_s: f64,
    target: f64,
    min_s: f64,
    max_s: f64,
) -> Option<&'static str> {
    if elapsed_s >= min_s && noise.is_some_and(|n| n < target) {
        Some("converged")
    } else if elapsed_s >= max_s {
        Some("time_limit")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[1, 2, 3]), Some(2.0));
        assert_eq!(median(&[1, 2, 3, 4]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn noise_by_order_statistics() {
        // n = 100: ranks 50 ∓ 9.8 → 40 and 60 (floor/ceil); values 1..=100 at
        // those ranks are 41 and 61; half-width 10 over median 50.5.
        let v: Vec<u64> = (1..=100).collect();
        let noise = median_rel_noise(&v).unwrap();
        assert!((noise - 10.0 / 50.5).abs() < 1e-12, "{noise}");
        assert_eq!(median_rel_noise(&[5; 7]), None);
        assert_eq!(median_rel_noise(&[5; 100]), Some(0.0));
    }

    #[test]
    fn stopping_rule() {
        assert_eq!(should_stop(Some(0.001), 0.4, 0.005, 0.5, 10.0), None);
        assert_eq!(
            should_stop(Some(0.001), 0.6, 0.005, 0.5, 10.0),
            Some("converged")
        );
        assert_eq!(should_stop(Some(0.01), 0.6, 0.005, 0.5, 10.0), None);
        assert_eq!(
            should_stop(None, 10.0, 0.005, 0.5, 10.0),
            Some("time_limit")
        );
    }
}
