//! A timer's step, read off the durations it reported for kernels of many
//! different lengths: a quantized timer puts every duration on a grid, so
//! the gaps between distinct durations are all multiples of its step.

/// Durations a rounding apart are one value of the timer (CUPTI converts GPU
/// ticks to ns with a slope, CUDA events report float milliseconds).
const SLACK_NS: f64 = 1.5;
/// A run of values closer than this that is wider than `FINE_NS` means a
/// fine timer, not a grid.
const FINE_NS: f64 = 8.0;
/// Share of gaps that must be multiples of the step.
const AGREE: f64 = 0.7;

/// The timer's step in ns, read off the durations of kernels of many
/// lengths; 1.0 for a timer finer than `FINE_NS`; None with fewer than 20
/// distinct values (not enough to tell). A few odd durations (a record
/// converted on another slope) do not hide the grid: the step is the typical
/// small gap, confirmed by most gaps being its multiples.
pub fn step_ns(durations: &[u64]) -> Option<f64> {
    let mut sorted: Vec<u64> = durations.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    // Chain values within 2·SLACK into one timer value.
    let mut clusters: Vec<(u64, u64, u64, u64)> = Vec::new(); // (first, last, sum, n)
    for x in sorted {
        match clusters.last_mut() {
            Some(c) if (x - c.1) as f64 <= 2.0 * SLACK_NS => {
                c.1 = x;
                c.2 += x;
                c.3 += 1;
            }
            _ => clusters.push((x, x, x, 1)),
        }
    }
    if clusters.len() < 20 {
        return None;
    }
    let wide = clusters
        .iter()
        .filter(|c| (c.1 - c.0) as f64 > FINE_NS)
        .count();
    if wide * 10 > clusters.len() {
        return Some(1.0);
    }
    let centres: Vec<f64> = clusters.iter().map(|c| c.2 as f64 / c.3 as f64).collect();
    let gaps: Vec<f64> = centres.windows(2).map(|w| w[1] - w[0]).collect();
    let mut small: Vec<f64> = gaps.clone();
    small.sort_by(f64::total_cmp);
    // The typical small gap: the median of the smallest quarter.
    let quarter = &small[..small.len().div_ceil(4)];
    let g0 = quarter[quarter.len() / 2];
    if g0 < FINE_NS {
        return Some(1.0);
    }
    let mut per_step: Vec<f64> = Vec::new();
    for g in &gaps {
        let k = (g / g0).round();
        if k >= 1.0 && (g - k * g0).abs() <= (2.0 * SLACK_NS).max(0.05 * g0) * k.sqrt() {
            per_step.push(g / k);
        }
    }
    if (per_step.len() as f64) < AGREE * gaps.len() as f64 {
        return Some(1.0);
    }
    per_step.sort_by(f64::total_cmp);
    Some(per_step[per_step.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_32_ns_grid_is_found() {
        let d: Vec<u64> = (0..300).map(|i| 3000 + (i * 7919 % 200) * 32).collect();
        assert_eq!(step_ns(&d), Some(32.0));
    }

    #[test]
    fn rounded_float_steps_are_found() {
        // Event-style: 500 ns steps, each reported ±1 ns.
        let d: Vec<u64> = (0..300)
            .map(|i| 10_000 + (i * 31 % 97) * 500 + (i % 3) - 1)
            .collect();
        let s = step_ns(&d).unwrap();
        assert!((s - 500.0).abs() < 1.5, "{s}");
    }

    #[test]
    fn a_fine_timer_reads_one_ns() {
        let d: Vec<u64> = (0..300).map(|i| 3000 + i * 7 % 1000 + i % 5).collect();
        assert_eq!(step_ns(&d), Some(1.0));
    }

    #[test]
    fn a_few_odd_durations_do_not_hide_the_grid() {
        // CUPTI-style: 31.8 ns steps rounded to whole ns, plus 5% off-grid values.
        let d: Vec<u64> = (0..400u64)
            .map(|i| {
                let on = (3000.0 + ((i * 7919) % 300) as f64 * 31.8).round() as u64;
                if i % 20 == 0 { on + 11 } else { on }
            })
            .collect();
        let s = step_ns(&d).unwrap();
        assert!((s - 31.8).abs() < 0.5, "{s}");
    }

    #[test]
    fn too_few_values_say_nothing() {
        assert_eq!(step_ns(&[32, 64, 96]), None);
        assert_eq!(step_ns(&[5000; 100]), None);
    }

    #[test]
    fn gaps_that_are_not_multiples_reject_the_grid() {
        // Mostly arbitrary gaps with a few 32s: not a 32 ns timer.
        let d: Vec<u64> = (0..300).map(|i| 3000 + i * 37 + (i * i) % 11).collect();
        assert_eq!(step_ns(&d), Some(1.0));
    }
}
