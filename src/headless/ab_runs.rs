//! `attnscope ab --runs N`: the same race N times, each in a process of its own, and the spread of
//! its speedup between them. Nothing inside one race sees what differs from one process to the
//! next (run99: five races' speedups spread 0.058% while each knew its own to ±0.03%), so this
//! spread, saved for the GPU model, is what every later race adds for a rerun.

use serde_json::json;

use crate::cli::{AbArgs, exit};
use crate::metrics::across_runs;

/// A race's speedup and its interval, as one run printed them.
type Point = (f64, f64, f64);

pub fn ab_runs(args: AbArgs, argv: &[String]) -> i32 {
    let runs = args.runs.unwrap_or(2) as usize;
    let here = !args.remote.place().is_remote();
    let outputs = match super::processes::run_each("ab", here, argv, runs, args.json) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let points: Vec<Point> = outputs
        .iter()
        .filter_map(|o| {
            let ab = &o.json["ab"];
            Some((
                ab["speedup"].as_f64()?,
                ab["ci_low"].as_f64()?,
                ab["ci_high"].as_f64()?,
            ))
        })
        .collect();
    let logs: Vec<f64> = points.iter().map(|p| p.0.ln()).collect();
    // The σ of the log speedup is its relative σ.
    let spread = if logs.len() >= 2 {
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64).sqrt()
    } else {
        f64::NAN
    };
    let overlapping = overlapping_pairs(&points);
    let held = across_runs::others_inside(&points);
    let saved = super::processes::remember(spread, points.len());
    let any_fail = outputs.iter().any(|o| o.code != 0) || points.len() < runs;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "runs": runs, "speedups": points.iter().map(|p| p.0).collect::<Vec<_>>(),
                "intervals": points.iter().map(|p| [p.1, p.2]).collect::<Vec<_>>(),
                "run_to_run_rel": spread, "overlapping_pairs": [overlapping.0, overlapping.1],
                "single_run_intervals_holding_other_runs": [held.0, held.1], "saved": saved,
            }))
            .unwrap_or_default()
        );
    } else {
        println!("\n{runs} races, each a process of its own, one after another");
        for (i, p) in points.iter().enumerate() {
            println!("race {:>3}: {:.4}× [{:.4}, {:.4}]", i + 1, p.0, p.1, p.2);
        }
        println!(
            "run-to-run σ of the speedup {}%; {} of {} pairs of intervals overlap; {} of {} other races' speedups fell inside an interval",
            crate::metrics::format::fixed(spread * 100.0, 3),
            overlapping.0,
            overlapping.1,
            held.0,
            held.1
        );
        println!("{saved}");
    }
    if any_fail { exit::CHECK_FAILED } else { 0 }
}

/// Pairs of intervals that overlap, and of how many pairs.
fn overlapping_pairs(points: &[Point]) -> (usize, usize) {
    let mut overlap = 0;
    let mut total = 0;
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            total += 1;
            overlap += usize::from(a.1 <= b.2 && b.1 <= a.2);
        }
    }
    (overlap, total)
}

#[cfg(test)]
mod tests {
    use super::overlapping_pairs;

    #[test]
    fn pairs_of_intervals_that_overlap_are_counted() {
        let p = [(1.0, 0.9, 1.1), (1.05, 1.08, 1.2), (2.0, 1.9, 2.1)];
        assert_eq!(overlapping_pairs(&p), (1, 3));
        assert_eq!(overlapping_pairs(&p[..1]), (0, 0));
    }
}
