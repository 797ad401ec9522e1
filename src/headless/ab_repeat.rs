//! `attnscope ab --a A --b B --races N`: the same race N times in one
//! process, each to its own verdict, and the verdicts counted: how often a
//! planted difference (a `y` delay, kernels/attention.toml) is called, and
//! how long a race took to call it (docs/measurement.md, "The smallest
//! difference a race calls").

use serde_json::json;

use super::ab::{conditions, one_race};
use super::{Sink, fail};
use crate::cli::{AbArgs, exit};
use crate::gpu::engine::Engine;
use crate::gpu::race::RacePlan;
use crate::session::Shape;
use crate::session::event::{AbReport, Decision, Variant};

pub fn repeat(
    engine: &mut Engine,
    sink: &mut Sink,
    (a, b): (Variant, Variant),
    shape: &Shape,
    plan: &RacePlan,
    args: &AbArgs,
) -> i32 {
    let races = args.races.unwrap_or(2) as usize;
    let mut rows: Vec<(AbReport, f64)> = Vec::with_capacity(races);
    for i in 0..races {
        let t = std::time::Instant::now();
        let r = match one_race(engine, sink, &a, &b, shape, plan) {
            Ok(r) => r,
            Err(e) => return fail(exit::CHECK_FAILED, e),
        };
        let secs = t.elapsed().as_secs_f64();
        if i == 0 && !args.json {
            println!(
                "{} raced {races} times: {}",
                a.name(),
                conditions(engine, shape, &r)
            );
        }
        if !args.json {
            println!(
                "race {:>3}: {:.4}× [{:.4}, {:.4}] in {secs:.1} s, {} rounds: {}",
                i + 1,
                r.speedup,
                r.ci_low,
                r.ci_high,
                r.rounds,
                r.verdict
            );
        }
        rows.push((r, secs));
    }
    let count = |d: Decision| rows.iter().filter(|(r, _)| r.decided() == d).count();
    let (faster, slower, same, undecided) = (
        count(Decision::Faster),
        count(Decision::Slower),
        count(Decision::Same),
        count(Decision::Undecided),
    );
    let mut secs: Vec<f64> = rows.iter().map(|r| r.1).collect();
    secs.sort_by(f64::total_cmp);
    let mut res: Vec<f64> = rows.iter().filter_map(|r| r.0.resolution_rel).collect();
    res.sort_by(f64::total_cmp);
    let mid = |v: &[f64]| v.get(v.len() / 2).copied().unwrap_or(f64::NAN);
    if args.json {
        let races: Vec<serde_json::Value> = rows
            .iter()
            .map(|(r, s)| json!({"report": r, "seconds": s}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "gpu": engine.info, "a": a.name(), "b": b.name(), "shape": shape,
                "races": races, "faster": faster, "slower": slower, "same": same,
                "undecided": undecided, "median_seconds": mid(&secs),
                "median_resolution_rel": mid(&res),
            }))
            .unwrap_or_default()
        );
    } else {
        println!(
            "{races} races: B called slower {slower}, faster {faster}; no difference {} ({same} within the band, {undecided} undecided); \
             median {:.1} s a race; median resolution {:.2}%",
            same + undecided,
            mid(&secs),
            mid(&res) * 100.0
        );
    }
    0
}
