//! `attnscope ab --offsets FACTORS` (hidden): what moves a race between
//! processes, looked for inside one. Two processes racing the same kernels
//! disagree by more than either race's interval (issue 55); each factor a
//! process fixes once is varied here at several levels, A and B raced for
//! a short while at each, and the spread of the ratio (and of each side's
//! median) across levels is set beside the control's, where nothing
//! changed. A factor whose spread matches the one between processes is the
//! offset; the table is in docs/measurement.md.

use std::time::{Duration, Instant};

use serde_json::json;

use super::fail;
use crate::cli::{AbArgs, exit};
use crate::gpu::engine::{Engine, EngineError};
use crate::gpu::race::{RacePlan, Rounds};
use crate::metrics::abstats;
use crate::metrics::bootstrap;
use crate::session::{Shape, Variant};

/// The factors, in the order a level visits them (rotated per level).
const FACTORS: [&str; 6] = ["control", "buffers", "code", "seed", "idle", "all"];
/// Idle before each race of the idle factor.
const IDLE: Duration = Duration::from_secs(2);
/// GPU time per round, ns (as the race's).
const ROUND_NS: f64 = 10e6;

/// One short race's result.
#[derive(Clone, Copy, Debug)]
struct Level {
    ratio: f64,
    median_a: f64,
    median_b: f64,
}

pub fn offsets(
    engine: &mut Engine,
    (a, b): (Variant, Variant),
    shape: &Shape,
    plan: &RacePlan,
    factors: &str,
    args: &AbArgs,
) -> i32 {
    let wanted: Vec<&str> = if factors == "all-factors" {
        FACTORS.to_vec()
    } else {
        factors.split(',').map(str::trim).collect()
    };
    if let Some(bad) = wanted.iter().find(|f| !FACTORS.contains(f)) {
        return fail(
            exit::USAGE,
            format!(
                "--offsets: unknown factor '{bad}' (known: {}, or all-factors)",
                FACTORS.join(", ")
            ),
        );
    }
    let levels = args.levels as usize;
    engine.set_placement_limit(levels);
    let have = match engine.prepare_placements(&[a, b], shape) {
        Ok(n) => n,
        Err(e) => return fail(exit::CHECK_FAILED, e),
    };
    if have < levels {
        eprintln!(
            "attnscope: only {have} placements fit in memory; buffer levels repeat after {have}"
        );
    }
    let mut results: Vec<Vec<Level>> = vec![Vec::new(); wanted.len()];
    for level in 0..levels {
        for k in 0..wanted.len() {
            let f = (level + k) % wanted.len();
            match one_level(engine, (a, b), shape, plan, wanted[f], level) {
                Ok(r) => results[f].push(r),
                Err(e) => {
                    return fail(
                        exit::CHECK_FAILED,
                        format!("{} at level {level}: {e}", wanted[f]),
                    );
                }
            }
        }
    }
    engine.use_placement(0, 0);
    report(engine, (a, b), shape, plan, &wanted, &results, args.json);
    0
}

/// Sets factor `f` to `level`, races, and puts it back.
fn one_level(
    engine: &mut Engine,
    (a, b): (Variant, Variant),
    shape: &Shape,
    plan: &RacePlan,
    f: &str,
    level: usize,
) -> Result<Level, EngineError> {
    let (bufs, code) = match f {
        "buffers" => (level, 0),
        "code" => (0, level),
        "all" => (level, level),
        _ => (0, 0),
    };
    engine.use_placement(bufs, code);
    if f == "seed" {
        engine.rewrite_timing_inputs(shape, 1 + level as u64)?;
    }
    if f == "idle" {
        engine.synchronize()?;
        std::thread::sleep(IDLE);
    }
    let r = short_race(engine, (a, b), shape, plan);
    if f == "seed" {
        engine.rewrite_timing_inputs(shape, 1)?;
    }
    engine.use_placement(0, 0);
    r
}

/// A and B in ABBA rounds for `plan.max_s`, on whatever placement is set.
fn short_race(
    engine: &mut Engine,
    (a, b): (Variant, Variant),
    shape: &Shape,
    plan: &RacePlan,
) -> Result<Level, EngineError> {
    let mut rounds = Rounds::default();
    let mut launches = 16;
    let started = Instant::now();
    for round in 0u64.. {
        let order = abstats::abba_order(round, launches);
        let vs: Vec<Variant> = order.iter().map(|&x| if x { a } else { b }).collect();
        let (samples, host_us) = engine.time_sequence(&vs, shape, plan.l2, plan.regime)?;
        launches = crate::gpu::measure::launches_for(ROUND_NS, &samples, host_us);
        rounds.add(&order, &samples, 0);
        if started.elapsed().as_secs_f64() >= plan.max_s && round >= 8 {
            break;
        }
    }
    let step = engine.timer_step_ns.unwrap_or(1.0);
    let median_a = bootstrap::median(&rounds.a.concat(), step);
    let median_b = bootstrap::median(&rounds.b.concat(), step);
    Ok(Level {
        ratio: median_a / median_b,
        median_a,
        median_b,
    })
}

/// σ of the logs, as a share: how much one level's value moves.
fn log_sd(values: impl Iterator<Item = f64>) -> f64 {
    let logs: Vec<f64> = values.map(f64::ln).filter(|x| x.is_finite()).collect();
    if logs.len() < 2 {
        return f64::NAN;
    }
    let m = logs.iter().sum::<f64>() / logs.len() as f64;
    (logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (logs.len() - 1) as f64).sqrt()
}

fn report(
    engine: &Engine,
    (a, b): (Variant, Variant),
    shape: &Shape,
    plan: &RacePlan,
    factors: &[&str],
    results: &[Vec<Level>],
    json_out: bool,
) {
    let rows: Vec<serde_json::Value> = factors
        .iter()
        .zip(results)
        .map(|(f, r)| {
            json!({
                "factor": f,
                "levels": r.len(),
                "ratio_sd_rel": log_sd(r.iter().map(|l| l.ratio)),
                "a_sd_rel": log_sd(r.iter().map(|l| l.median_a)),
                "b_sd_rel": log_sd(r.iter().map(|l| l.median_b)),
                "ratios": r.iter().map(|l| l.ratio).collect::<Vec<_>>(),
                "medians_a_ns": r.iter().map(|l| l.median_a).collect::<Vec<_>>(),
                "medians_b_ns": r.iter().map(|l| l.median_b).collect::<Vec<_>>(),
            })
        })
        .collect();
    if json_out {
        let out = json!({
            "gpu": engine.info, "a": a.name(), "b": b.name(), "shape": shape,
            "seconds_per_level": plan.max_s, "factors": rows,
        });
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return;
    }
    println!(
        "what moves A = {} against B = {} at {shape} on {} ({} s a level, interleaved):",
        a.name(),
        b.name(),
        engine.info.name,
        plan.max_s
    );
    println!(
        "| factor | levels | σ of the ratio | σ of A's median | σ of B's median | ratios (min–max) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    for (f, r) in factors.iter().zip(results) {
        let (lo, hi) = r
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), l| {
                (lo.min(l.ratio), hi.max(l.ratio))
            });
        let pct = |x: f64| format!("{:.3}%", x * 100.0);
        println!(
            "| {f} | {} | {} | {} | {} | {lo:.4}–{hi:.4} |",
            r.len(),
            pct(log_sd(r.iter().map(|l| l.ratio))),
            pct(log_sd(r.iter().map(|l| l.median_a))),
            pct(log_sd(r.iter().map(|l| l.median_b))),
        );
    }
}
