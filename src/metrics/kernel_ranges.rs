//! One call's counters from one CUPTI range per kernel, as Nsight Compute
//! would give them for the call: why not one range around the call is in
//! `gpu::profiler::RangeMode` (a Python call's host time between its
//! kernels would count as the GPU's elapsed time).

/// The time metric every per-kernel collection also asks for: the weight
/// of each kernel's rates.
pub const DURATION: &str = "gpu__time_duration.sum";

/// Whether a metric is a rate or a fraction (of peak, per second, per
/// cycle, a ratio) or a launch's attribute (registers a thread), which
/// kernels run one after another average by their time, rather than a
/// count, which they add.
fn is_rate(name: &str) -> bool {
    name.contains("peak_")
        || name.contains("max_rate")
        || name.contains("per_")
        || name.ends_with("pct")
        || name.ends_with("ratio")
        || name.starts_with("launch__")
        || name.starts_with("device__")
}

/// The call's value of each metric in `names` from `ranges` (one row of
/// values per kernel, in `names`' order): counts summed, rates weighted by
/// each kernel's `DURATION`. A `*_active` percentage would weigh by active
/// cycles, which CUPTI does not give per metric; the kernel's time stands
/// in; so does it for a per-instruction ratio, whose right weight is its
/// denominator. NaN where any kernel's value is NaN, or where a rate has no
/// time. One range is returned as it is.
pub fn combine(names: &[String], ranges: &[Vec<f64>]) -> Vec<f64> {
    if let [one] = ranges {
        return one.clone();
    }
    let time = names.iter().position(|n| n == DURATION);
    let weights: Vec<f64> = ranges
        .iter()
        .map(|r| time.map_or(f64::NAN, |t| r[t]))
        .collect();
    let total: f64 = weights.iter().sum();
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let values = ranges.iter().map(|r| r[i]);
            if is_rate(name) {
                values.zip(&weights).map(|(v, w)| v * w).sum::<f64>() / total
            } else {
                values.sum()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn counts_add_and_rates_weigh_by_each_kernels_time() {
        // run159's py:sdpa_flash shape: a long kernel and a short one.
        let n = names(&[
            DURATION,
            "dram__bytes_read.sum",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpc__cycles_elapsed.max",
            "dram__bytes.sum.per_second",
        ]);
        let v = combine(
            &n,
            &[
                vec![12_000.0, 3.0e6, 40.0, 20_000.0, 2.5e11],
                vec![1_000.0, 1.0e5, 4.0, 1_500.0, 1.0e11],
            ],
        );
        assert_eq!(v[0], 13_000.0);
        assert_eq!(v[1], 3.1e6);
        assert!((v[2] - (40.0 * 12.0 + 4.0) / 13.0).abs() < 1e-9, "{}", v[2]);
        assert_eq!(v[3], 21_500.0);
        assert!(
            (v[4] - (2.5e11 * 12.0 + 1.0e11) / 13.0).abs() < 1.0,
            "{}",
            v[4]
        );
    }

    #[test]
    fn one_kernel_is_itself_and_a_missing_time_leaves_rates_unknown() {
        let n = names(&[
            DURATION,
            "sm__warps_active.avg.pct_of_peak_sustained_active",
        ]);
        assert_eq!(combine(&n, &[vec![5.0, 23.1]]), vec![5.0, 23.1]);
        // A single kernel needs no time: every collection of one range goes through here.
        let n = names(&["sm__warps_active.avg.pct_of_peak_sustained_active"]);
        assert_eq!(combine(&n, &[vec![23.1]]), vec![23.1]);
        let n = names(&["sm__warps_active.avg.pct_of_peak_sustained_active", "x.sum"]);
        let v = combine(&n, &[vec![20.0, 1.0], vec![30.0, 2.0]]);
        assert!(v[0].is_nan() && v[1] == 3.0, "{v:?}");
        // Nsight Compute's other spellings of a rate or an attribute average too.
        for rate in [
            "sm__maximum_warps_per_active_cycle_pct",
            "smsp__thread_inst_executed_per_inst_executed.ratio",
            "launch__registers_per_thread",
            "launch__grid_size",
            "gpc__cycles_elapsed.avg.per_second",
            "sm__inst_executed_pipe_tensor.avg.peak_sustained",
            "dram__throughput.avg.pct_of_peak_burst_elapsed",
            "lts__t_bytes.sum.max_rate",
        ] {
            let n = names(&[DURATION, rate]);
            assert_eq!(
                combine(&n, &[vec![1.0, 10.0], vec![3.0, 30.0]])[1],
                25.0,
                "{rate}"
            );
        }
        let n = names(&[DURATION, "x.sum"]);
        assert!(combine(&n, &[vec![1.0, f64::NAN], vec![1.0, 2.0]])[1].is_nan());
    }
}
