//! How much of a batch's GPU time went to its kernels. Back to back, the GPU
//! should never wait on the host: an idle gap between batches lets it cool
//! and clock up, and its kernels then read faster than under sustained load.

/// The longest gap between two kernels fed back to back that is the GPU's
/// own: 1.6 µs is the most seen (run115, an H100, 225 KiB of shared memory a
/// CTA). A median gap past it is the host's. A `py:` call spends 150–200 µs
/// of host time for 8–13 µs of kernels (run147), so every gap of its batch
/// is that long, and taking the median as the GPU's own would count none of
/// it as waiting (flex read 92% busy while the GPU idled most of the time).
pub const OWN_GAP_CAP_NS: u64 = 4_000;

/// What a gap between two kernels holds of the GPU's own time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnGap {
    /// Measured with no host in the way: the same launches queued behind a
    /// spinning kernel, so that each waited for the one before and never for
    /// the host (`Engine::own_gap_ns`). A host that feeds every launch late
    /// by the same amount shows as waiting (issue 55: a kernel fed every
    /// 10.4 µs for 6.5 µs of work read 100% busy under the batch's median).
    Baseline(u64),
    /// The batch's median gap, up to `cap`: where no baseline was measured.
    Median { cap: u64 },
}

/// The share of `[from, last end]` the GPU was not waiting for work, where
/// `from` is `prev_end` (the previous batch's last kernel end, so the wait
/// before this batch counts) or else this batch's first start. A GPU fed
/// back to back still leaves a gap between one kernel's end and the next's
/// start (about 1.6 µs on an H100 for a kernel using 225 KiB of shared
/// memory, run115): `own_gap` says how much (a measured baseline, or the
/// batch's median gap up to a cap; no cap where every launch waits behind
/// an L2 scrub whose records are not kept), and only what a gap holds
/// beyond it is waiting (the host late with the next launch, or the
/// next batch). Overlapping spans count once. None for no spans or a
/// zero-length window.
pub fn busy_fraction(spans: &[(u64, u64)], prev_end: Option<u64>, own_gap: OwnGap) -> Option<f64> {
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
    let gaps = gaps(&sorted);
    let own = match own_gap {
        OwnGap::Baseline(ns) => ns,
        OwnGap::Median { cap } => median(&gaps).unwrap_or(0).min(cap),
    };
    let waited: u64 = gaps
        .iter()
        .chain(std::iter::once(&(first - from)))
        .map(|g| g.saturating_sub(own))
        .sum();
    Some(1.0 - waited.min(window) as f64 / window as f64)
}

/// The gaps between consecutive spans sorted by start (overlaps count as
/// none: a call of two kernels that overlap leaves no gap).
fn gaps(sorted: &[(u64, u64)]) -> Vec<u64> {
    let Some(&(_, mut reach)) = sorted.first() else {
        return Vec::new();
    };
    let mut gaps = Vec::with_capacity(sorted.len());
    for &(s, e) in &sorted[1..] {
        gaps.push(s.saturating_sub(reach));
        reach = reach.max(e);
    }
    gaps
}

/// The upper median of `values`; None when there are none.
fn median(values: &[u64]) -> Option<u64> {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

/// The median gap between consecutive spans sorted by start: the GPU's own
/// gap when the spans were queued with no host in the way.
pub fn median_gap(sorted: &[(u64, u64)]) -> Option<u64> {
    median(&gaps(sorted))
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

    const CAPPED: OwnGap = OwnGap::Median {
        cap: OWN_GAP_CAP_NS,
    };

    #[test]
    fn a_host_bound_batch_reads_idle_and_a_scrubbed_one_busy() {
        // run147's py:flex back to back: 10 µs of kernel every 169 µs, every gap alike.
        let calls: Vec<(u64, u64)> = (0..20)
            .map(|i| (i * 169_000, i * 169_000 + 10_000))
            .collect();
        let f = busy_fraction(&calls, None, CAPPED).unwrap();
        // 200 µs of kernels and 19 gaps of the 4 µs cap, over 3221 µs.
        assert!((f - 276.0 / 3221.0).abs() < 1e-9, "{f}");
        // Gaps within the cap stay the GPU's own.
        let fed: Vec<(u64, u64)> = (0..20).map(|i| (i * 11_600, i * 11_600 + 10_000)).collect();
        assert_eq!(busy_fraction(&fed, None, CAPPED), Some(1.0));
        // Cold L2: every gap holds a scrub whose records are dropped, the GPU's work, not a wait.
        let scrubbed: Vec<(u64, u64)> =
            (0..20).map(|i| (i * 60_000, i * 60_000 + 10_000)).collect();
        assert_eq!(
            busy_fraction(&scrubbed, None, OwnGap::Median { cap: u64::MAX }),
            Some(1.0)
        );
    }

    #[test]
    fn evenly_late_launches_show_against_a_measured_baseline() {
        // Issue 55: 6.5 µs of kernel every 10.4 µs, the GPU's own gap 1.2 µs.
        let fed: Vec<(u64, u64)> = (0..40).map(|i| (i * 10_400, i * 10_400 + 6_500)).collect();
        // The batch's own median gap (3.9 µs, under the cap) hides the host entirely.
        assert_eq!(busy_fraction(&fed, None, CAPPED), Some(1.0));
        // Against the baseline, 2.7 µs of each 10.4 µs was waiting.
        let f = busy_fraction(&fed, None, OwnGap::Baseline(1_200)).unwrap();
        let window = 39.0 * 10_400.0 + 6_500.0;
        assert!((f - (1.0 - 39.0 * 2_700.0 / window)).abs() < 1e-12, "{f}");
        // Fed as fast as the GPU goes, the baseline reads full.
        let tight: Vec<(u64, u64)> = (0..40).map(|i| (i * 7_700, i * 7_700 + 6_500)).collect();
        assert_eq!(
            busy_fraction(&tight, None, OwnGap::Baseline(1_200)),
            Some(1.0)
        );
    }

    #[test]
    fn the_median_gap_of_queued_launches() {
        assert_eq!(
            median_gap(&[(0, 10), (12, 20), (21, 30), (33, 40)]),
            Some(2)
        );
        assert_eq!(median_gap(&[(0, 10)]), None);
        assert_eq!(median_gap(&[]), None);
        // Overlapping kernels (a call of two) leave no gap between them.
        assert_eq!(median_gap(&[(0, 10), (5, 12), (14, 20)]), Some(2));
    }

    #[test]
    fn back_to_back_kernels_are_fully_busy() {
        assert_eq!(
            busy_fraction(&[(0, 10), (10, 20), (20, 30)], None, CAPPED),
            Some(1.0)
        );
        assert_eq!(
            busy_fraction(&[(0, 10), (10, 20)], Some(0), CAPPED),
            Some(1.0)
        );
    }

    #[test]
    fn only_gaps_beyond_the_gpus_own_count_as_waiting() {
        // Kernels 2 ns apart (the GPU's own launch gap) and the previous
        // batch ending 2 ns before: nothing waited.
        let stream = [(10, 20), (22, 32), (34, 44), (46, 56)];
        assert_eq!(busy_fraction(&stream, Some(8), CAPPED), Some(1.0));
        // The host kept the GPU 10 ns after the previous batch: 8 ns beyond
        // the GPU's own gap, of a 56 ns window.
        assert_eq!(
            busy_fraction(&stream, Some(0), CAPPED),
            Some(1.0 - 8.0 / 56.0)
        );
        // A launch 18 ns late inside the batch: 16 ns of waiting in 62.
        let late = [(0, 10), (12, 22), (40, 50), (52, 62)];
        assert_eq!(busy_fraction(&late, None, CAPPED), Some(1.0 - 16.0 / 62.0));
    }

    #[test]
    fn overlapping_spans_count_once() {
        assert_eq!(
            busy_fraction(&[(0, 100), (10, 20)], None, CAPPED),
            Some(1.0)
        );
        assert_eq!(
            busy_fraction(&[(0, 10), (5, 15), (15, 25)], None, CAPPED),
            Some(1.0)
        );
        // Out of order as delivered.
        assert_eq!(
            busy_fraction(&[(24, 34), (0, 10), (12, 22)], Some(0), CAPPED),
            Some(1.0)
        );
    }

    #[test]
    fn one_kernel_and_no_kernel() {
        assert_eq!(busy_fraction(&[(5, 15)], None, CAPPED), Some(1.0));
        assert_eq!(
            busy_fraction(&[(5, 15)], Some(0), CAPPED),
            Some(1.0 - 5.0 / 15.0)
        );
        assert_eq!(busy_fraction(&[], Some(3), CAPPED), None);
        assert_eq!(busy_fraction(&[(7, 7)], None, CAPPED), None);
        // A previous end later than the first start adds no gap.
        assert_eq!(busy_fraction(&[(5, 15)], Some(9), CAPPED), Some(1.0));
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
