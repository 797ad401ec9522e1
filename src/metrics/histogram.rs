//! Latency histograms: log-spaced buckets for drawing, hdrhistogram for
//! percentiles. Both are filled once per sample, never rebinned from raw data
//! at draw time.

use hdrhistogram::Histogram;

/// Fine buckets per decade; display bins merge these.
pub const BUCKETS_PER_DECADE: u32 = 400;
/// Fine buckets cover 1 ns .. 10^12 ns.
const DECADES: u32 = 12;
const FINE: usize = (BUCKETS_PER_DECADE * DECADES) as usize;

/// Lower edge of fine bucket `i`, in ns.
pub fn fine_edge(i: usize) -> f64 {
    10f64.powf(i as f64 / BUCKETS_PER_DECADE as f64)
}

/// The fine bucket a value lands in (values under 1 ns land in bucket 0):
/// the last bucket whose integer lower edge is at or below `ns`. A table
/// search, because a log10 per sample dominated folding large sessions.
pub fn fine_index(ns: u64) -> usize {
    int_edges()
        .partition_point(|&e| e <= ns)
        .saturating_sub(1)
        .min(FINE - 1)
}

/// Integer lower edges of the fine buckets, plus one past the last.
fn int_edges() -> &'static [u64] {
    static EDGES: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    EDGES.get_or_init(|| (0..=FINE).map(|i| fine_edge(i).ceil() as u64).collect())
}

/// Longest latency kept exactly (one hour); longer ones saturate here.
const MAX_NS: u64 = 3_600_000_000_000;

#[derive(Clone, Debug, PartialEq)]
pub struct Bin {
    pub lo_ns: f64,
    pub hi_ns: f64,
    pub count: u64,
}

#[derive(Clone, Debug)]
pub struct LatencyStats {
    fine: Vec<u64>,
    hdr: Histogram<u64>,
    sum_ns: u128,
    /// Exact extremes: hdrhistogram reports bucket edges.
    min_ns: u64,
    max_ns: u64,
    /// (lower edge, upper edge, index) of the bucket the last sample hit.
    last_bucket: (u64, u64, usize),
}

impl Default for LatencyStats {
    fn default() -> Self {
        LatencyStats {
            fine: vec![0; FINE],
            // 3 significant digits: percentiles within 0.1%, far under run-to-run noise.
            hdr: Histogram::new_with_bounds(1, MAX_NS, 3).expect("valid hdrhistogram bounds"),
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            last_bucket: (0, 0, usize::MAX),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Percentiles {
    pub count: u64,
    pub min_ns: f64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub max_ns: f64,
    pub mean_ns: f64,
}

impl LatencyStats {
    pub fn record(&mut self, ns: u64) {
        let ns = ns.max(1);
        // Neighbouring samples nearly always share a bucket: check the last one first.
        let (lo, hi, last) = self.last_bucket;
        let i = if lo <= ns && ns < hi {
            last
        } else {
            fine_index(ns)
        };
        if i != last {
            let edges = int_edges();
            self.last_bucket = (edges[i], edges[i + 1], i);
        }
        self.fine[i] += 1;
        self.hdr.saturating_record(ns);
        self.sum_ns += ns as u128;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn extend(&mut self, samples: &[u64]) {
        for &s in samples {
            self.record(s);
        }
    }

    pub fn count(&self) -> u64 {
        self.hdr.len()
    }

    pub fn percentile(&self, q: f64) -> f64 {
        self.hdr.value_at_quantile(q) as f64
    }

    pub fn percentiles(&self) -> Option<Percentiles> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        Some(Percentiles {
            count,
            min_ns: self.min_ns as f64,
            p50_ns: self.percentile(0.50),
            p90_ns: self.percentile(0.90),
            p99_ns: self.percentile(0.99),
            max_ns: self.max_ns as f64,
            mean_ns: self.sum_ns as f64 / count as f64,
        })
    }

    /// Index range of fine buckets holding samples.
    pub fn occupied(&self) -> Option<(usize, usize)> {
        let lo = self.fine.iter().position(|&c| c > 0)?;
        let hi = self.fine.iter().rposition(|&c| c > 0)?;
        Some((lo, hi))
    }

    /// `n` display bins over fine buckets `lo..=hi`, each covering the same
    /// number of fine buckets (the last may cover fewer).
    pub fn bins(&self, range: (usize, usize), n: usize) -> Vec<Bin> {
        let (lo, hi) = range;
        let n = n.max(1);
        let span = hi - lo + 1;
        let per = span.div_ceil(n).max(1);
        (lo..=hi)
            .step_by(per)
            .map(|start| {
                let end = (start + per - 1).min(hi);
                Bin {
                    lo_ns: fine_edge(start),
                    hi_ns: fine_edge(end + 1),
                    count: self.fine[start..=end].iter().sum(),
                }
            })
            .collect()
    }
}

/// The fine-bucket range that covers every given histogram.
pub fn joint_range<'a>(
    stats: impl IntoIterator<Item = &'a LatencyStats>,
) -> Option<(usize, usize)> {
    stats
        .into_iter()
        .filter_map(LatencyStats::occupied)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_are_log_spaced() {
        assert_eq!(fine_edge(0), 1.0);
        assert!((fine_edge(400) - 10.0).abs() < 1e-9);
        assert!((fine_edge(1600) - 10_000.0).abs() < 1e-6);
        assert_eq!(fine_index(1), 0);
        assert_eq!(fine_index(10), 400);
        assert_eq!(fine_index(9_999), 1599);
        assert_eq!(fine_index(10_000), 1600);
        assert_eq!(fine_index(u64::MAX), FINE - 1);
    }

    #[test]
    fn large_values_are_not_clamped() {
        let mut s = LatencyStats::default();
        s.extend(&[40_000, 12_000]);
        let p = s.percentiles().unwrap();
        assert_eq!((p.min_ns, p.max_ns), (12_000.0, 40_000.0));
    }

    #[test]
    fn percentiles_exact_on_small_values() {
        let mut s = LatencyStats::default();
        s.extend(&(1..=1000).collect::<Vec<u64>>());
        let p = s.percentiles().unwrap();
        assert_eq!(p.count, 1000);
        assert_eq!(p.min_ns, 1.0);
        assert_eq!(p.p50_ns, 500.0);
        assert_eq!(p.p90_ns, 900.0);
        assert_eq!(p.p99_ns, 990.0);
        assert_eq!(p.max_ns, 1000.0);
        assert_eq!(p.mean_ns, 500.5);
        assert!(LatencyStats::default().percentiles().is_none());
    }

    #[test]
    fn bins_merge_fine_buckets_and_keep_every_sample() {
        let mut s = LatencyStats::default();
        s.extend(&[10_000, 10_000, 12_000, 20_000, 99_000]);
        let (lo, hi) = s.occupied().unwrap();
        assert_eq!((lo, hi), (1600, fine_index(99_000)));
        let bins = s.bins((lo, hi), 4);
        assert_eq!(bins.len(), 4);
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 5);
        assert_eq!(bins[0].count, 3); // 10k, 10k, 12k within the first quarter (to ~17.7k)
        assert!((bins[0].lo_ns - 10_000.0).abs() < 1e-6);
        for w in bins.windows(2) {
            assert!((w[0].hi_ns - w[1].lo_ns).abs() < 1e-9);
        }
    }

    #[test]
    fn joint_range_spans_both() {
        let mut a = LatencyStats::default();
        let mut b = LatencyStats::default();
        a.record(1_000);
        b.record(50_000);
        assert_eq!(
            joint_range([&a, &b]),
            Some((fine_index(1_000), fine_index(50_000)))
        );
        assert_eq!(joint_range([&LatencyStats::default()]), None);
    }
}
