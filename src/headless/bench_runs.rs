//! `attnscope bench --runs N`: the same bench N times, each in a process of its own, and each
//! variant's mean over the runs with an interval from them. Separate processes, because what
//! differs from one run to the next (run99: 0.26% for a tile whose runs each claimed ±0.1–0.3%)
//! stays fixed inside one.

use serde_json::json;

use super::fail;
use crate::cli::{BenchArgs, exit};
use crate::metrics::across_runs::{self, AcrossRuns};

/// A variant's line: its name, the runs summarized, other runs inside one run's ± (of how many),
/// and the runs' medians.
type Row = (String, Option<AcrossRuns>, (usize, usize), Vec<f64>);

/// `argv`: the command line after the program name (`bench …`), rerun without `--runs`.
pub fn bench_runs(args: BenchArgs, argv: &[String]) -> i32 {
    let runs = args.runs.unwrap_or(2) as usize;
    if args.remote.place().is_remote() {
        return fail(
            exit::USAGE,
            "--runs starts processes on this machine: run `attnscope bench --runs N` on the GPU's host (e.g. through ssh) instead of with --remote/--worker-cmd",
        );
    }
    let child = child_args(argv);
    let exe = std::env::current_exe().unwrap_or_else(|_| "attnscope".into());
    let mut medians: std::collections::BTreeMap<String, Vec<(f64, f64, f64)>> = Default::default();
    let mut order: Vec<String> = Vec::new();
    let mut any_fail = false;
    for i in 1..=runs {
        if !args.json {
            eprintln!("attnscope: run {i} of {runs}");
        }
        let out = match std::process::Command::new(&exe)
            .args(&child)
            .stderr(std::process::Stdio::inherit())
            .output()
        {
            Ok(o) => o,
            Err(e) => return fail(exit::USAGE, format!("cannot start {}: {e}", exe.display())),
        };
        let code = out.status.code().unwrap_or(exit::USAGE);
        // Exit 1 is a failed check with a table; anything else has no table to read.
        if code != 0 && code != exit::CHECK_FAILED {
            return fail(
                code,
                format!("run {i} of {runs} ended with exit code {code}"),
            );
        }
        any_fail |= code != 0;
        let rows = match serde_json::from_slice::<serde_json::Value>(&out.stdout) {
            Ok(v) => v["results"].as_array().cloned().unwrap_or_default(),
            Err(e) => {
                return fail(
                    exit::USAGE,
                    format!("run {i} of {runs} printed no table: {e}"),
                );
            }
        };
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
            serde_json::to_string_pretty(&json!({"runs": runs, "results": rows}))
                .unwrap_or_default()
        );
    } else {
        print_table(&table, runs);
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

/// The command line a run gets: this one without `--runs`, printing JSON.
fn child_args(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in argv {
        if skip {
            skip = false;
            continue;
        }
        if a == "--runs" {
            skip = true;
            continue;
        }
        if a.starts_with("--runs=") {
            continue;
        }
        out.push(a.clone());
    }
    if !out.iter().any(|a| a == "--json") {
        out.push("--json".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::child_args;

    #[test]
    fn each_run_gets_the_command_line_without_runs() {
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            child_args(&argv("bench --runs 8 --shape 2,8,512,64")),
            argv("bench --shape 2,8,512,64 --json")
        );
        assert_eq!(
            child_args(&argv("bench --runs=3 --json")),
            argv("bench --json")
        );
    }
}
