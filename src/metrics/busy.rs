//! How much of a batch's GPU time went to its kernels. Back to back, the GPU
//! should never wait on the host: an idle gap between batches lets it cool
//! and clock up, and its kernels then read faster than under sustained load.

/// The share of `[from, last end]` covered by `spans` (start, end in ns),
/// where `from` is `prev_end` (the previous batch's last kernel end, so the
/// idle before this batch counts) or else this batch's first start.
/// Overlapping spans count once. None for no spans or a zero-length window.
pub fn busy_fraction(spans: &[(u64, u64)], prev_end: Option<u64>) -> Option<f64> {
    let mut sorted: Vec<(u64, u64)> = spans.iter().map(|&(s, e)| (s.min(e), s.max(e))).collect();
    sorted.sort_unstable();
    let first = sorted.first()?.0;
    let last = sorted.iter().map(|s| s.1).max()?;
    // A previous end after this batch's first start (clock skew between
    // records, or a caller's mistake) adds no gap rather than a negative one.
    let from = prev_end.map_or(first, |p| p.min(first));
    let window = last - from;
    if window == 0 {
        return None;
    }
    let mut covered = 0u64;
    let mut reach = from;
    for (s, e) in sorted {
        let s = s.max(reach);
        if e > s {
            covered += e - s;
            reach = e;
        }
    }
    Some(covered as f64 / window as f64)
}

/// The median of the batches' busy fractions that are known.
pub fn median_busy(fractions: &[Option<f64>]) -> Option<f64> {
    let mut known: Vec<f64> = fractions
        .iter()
        .flatten()
        .copied()
        .filter(|f| f.is_finite())
        .collect();
    if known.is_empty() {
        return None;
    }
    known.sort_by(f64::total_cmp);
    let n = known.len();
    Some(if n % 2 == 1 {
        known[n / 2]
    } else {
        (known[n / 2 - 1] + known[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_to_back_kernels_are_fully_busy() {
        assert_eq!(
            busy_fraction(&[(0, 10), (10, 20), (20, 30)], None),
            Some(1.0)
        );
        assert_eq!(busy_fraction(&[(0, 10), (10, 20)], Some(0)), Some(1.0));
    }

    #[test]
    fn gaps_inside_and_before_the_batch_count_as_idle() {
        // 20 ns of kernels in a 40 ns window.
        assert_eq!(busy_fraction(&[(0, 10), (30, 40)], None), Some(0.5));
        // The host kept the GPU waiting 60 ns after the previous batch.
        assert_eq!(
            busy_fraction(&[(100, 120), (120, 140)], Some(40)),
            Some(0.4)
        );
    }

    #[test]
    fn overlapping_spans_count_once() {
        // Two kernels overlapping by 5 ns cover 15 of 20 ns, never over 1.
        assert_eq!(
            busy_fraction(&[(0, 10), (5, 15), (20, 20)], None),
            Some(0.75)
        );
        assert_eq!(busy_fraction(&[(0, 100), (10, 20)], None), Some(1.0));
        // Out of order as delivered.
        assert_eq!(busy_fraction(&[(30, 40), (0, 10)], None), Some(0.5));
    }

    #[test]
    fn one_kernel_and_no_kernel() {
        assert_eq!(busy_fraction(&[(5, 15)], None), Some(1.0));
        assert_eq!(busy_fraction(&[(5, 15)], Some(0)), Some(10.0 / 15.0));
        assert_eq!(busy_fraction(&[], Some(3)), None);
        assert_eq!(busy_fraction(&[(7, 7)], None), None);
        // A previous end later than the first start adds no gap.
        assert_eq!(busy_fraction(&[(5, 15)], Some(9)), Some(1.0));
    }

    #[test]
    fn the_run_reports_the_median_of_known_batches() {
        assert_eq!(median_busy(&[]), None);
        assert_eq!(median_busy(&[None, None]), None);
        assert_eq!(
            median_busy(&[Some(0.9), None, Some(0.99), Some(0.98)]),
            Some(0.98)
        );
        assert_eq!(median_busy(&[Some(0.9), Some(1.0)]), Some(0.95));
    }
}
