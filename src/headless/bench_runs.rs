//! `attnscope bench --runs N`: the same bench N times, each in a process of its own, and each
//! variant's mean over the runs with an interval from them. Separate processes, because what
//! differs from one run to the next (run99: 0.26% for a tile whose runs each claimed ±0.1–0.3%)
//! stays fixed inside one.

use serde_json::json;

use crate::cli::{BenchArgs, exit};
use crate::metrics::across_runs::{self, AcrossRuns};

/// A variant's line: its name, the runs summarized, other runs inside one run's ± (of how many),
/// and the runs' medians.
type Row = (String, Option<AcrossRuns>, (usize, usize), Vec<f64>);

/// `argv`: the command line after the program name (`bench …`), rerun without `--runs`.
pub fn bench_runs(args: BenchArgs, argv: &[String]) -> i32 {
    let runs = args.runs.unwrap_or(2) as usize;
    let here = !args.remote.place().is_remote();
    let outputs = match super::processes::run_each("bench", here, argv, runs, args.json) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let mut medians: std::collections::BTreeMap<String, Vec<(f64, f64, f64)>> = Default::default();
    let mut order: Vec<String> = Vec::new();
    let any_fail = outputs.iter().any(|o| o.code != 0);
    for out in &outputs {
        let rows = out.json["results"].as_array().cloned().unwrap_or_default();
        for r in rows {
            let (Some(name), Some(m)) = (r["variant"].as_str(), r["median_us"].as_f64()) else {
                continue;
            };
            let ci = &r["median_ci_us"];
            let (lo, hi) = (
                ci[0].as_f64().unwrap_or(f64::NAN),
                ci[1].as_f64().unwrap_or(f64::NAN),
            );
            if !order.iter().any(|o| o == name) {
                order.push(name.to_string());
            }
            medians
                .entry(name.to_string())
                .or_default()
                .push((m, lo, hi));
        }
    }
    let table: Vec<Row> = order
        .iter()
        .map(|name| {
            let points = &medians[name];
            let ms: Vec<f64> = points.iter().map(|p| p.0).collect();
            let finite: Vec<(f64, f64, f64)> = points
                .iter()
                .copied()
                .filter(|p| p.1.is_finite() && p.2.is_finite())
                .collect();
            (
                name.clone(),
                across_runs::across(&ms),
                across_runs::others_inside(&finite),
                ms,
            )
        })
        .collect();
    // The GPU's spread is the widest variant's: an interval must hold for any of them.
    let widest = table
        .iter()
        .filter_map(|t| t.1.map(|a| a.spread_rel))
        .filter(|r| r.is_finite())
        .fold(f64::NAN, f64::max);
    let saved = super::processes::remember(widest, runs);
    if args.json {
        let rows: Vec<serde_json::Value> = table
            .iter()
            .map(|(name, a, (inside, total), ms)| {
                json!({
                    "variant": name,
                    "runs": ms.len(),
                    "medians_us": ms,
                    "mean_us": a.map(|a| a.mean),
                    "mean_ci_us": a.map(|a| [a.mean - a.half_width, a.mean + a.half_width]),
                    "run_to_run_rel": a.map(|a| a.spread_rel),
                    "single_run_intervals_holding_other_runs": [inside, total],
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "runs": runs, "results": rows, "run_to_run_rel": widest, "saved": saved,
            }))
            .unwrap_or_default()
        );
    } else {
        print_table(&table, runs);
        println!("run-to-run spread of this GPU (the widest variant's σ): {saved}");
    }
    if any_fail { exit::CHECK_FAILED } else { 0 }
}

fn print_table(table: &[Row], runs: usize) {
    use crate::metrics::format::fixed;
    let w = table.iter().map(|t| t.0.len()).max().unwrap_or(7).max(7);
    println!("\n{runs} runs, each a process of its own, one after another");
    println!(
        "{:<w$} {:>5} {:>11} {:>10} {:>11} {:>22}",
        "variant", "runs", "mean µs", "±95%", "run-to-run", "one run's ± held"
    );
    for (name, a, (inside, total), ms) in table {
        let Some(a) = a else {
            println!(
                "{name:<w$} {:>5}  fewer than two runs with a median",
                ms.len()
            );
            continue;
        };
        let held = if *total == 0 {
            "—".to_string()
        } else {
            format!("{inside} of {total} other runs")
        };
        println!(
            "{name:<w$} {:>5} {:>11} {:>10} {:>11} {held:>22}",
            a.runs,
            fixed(a.mean, 3),
            format!("±{}%", fixed(a.half_width / a.mean * 100.0, 2)),
            format!("σ {}%", fixed(a.spread_rel * 100.0, 2)),
        );
    }
    println!(
        "mean: of the runs' medians; ±95%: Student's t over the runs (independent units); run-to-run: \
         the runs' standard deviation, what one run's median moves by; one run's ± held: how many \
         other runs' medians fell inside each run's own interval"
    );
}
