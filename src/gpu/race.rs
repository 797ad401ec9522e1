//! The A/B race: A and B launched alternately on the same inputs until the
//! speedup's 95% interval is within ±1%, or a time limit.

use std::time::Instant;

use super::engine::{Engine, EngineError};
use crate::metrics::abstats;
use crate::session::event::{AbReport, L2Mode, LatencyBatch};
use crate::session::{Shape, Variant};

#[derive(Clone, Copy, Debug)]
pub struct RacePlan {
    pub l2: L2Mode,
    pub min_s: f64,
    pub max_s: f64,
    /// Stop when the interval's half-width is under this share of the speedup.
    pub rel_ci: f64,
}

impl Default for RacePlan {
    fn default() -> Self {
        RacePlan {
            l2: L2Mode::Hot,
            min_s: 1.0,
            max_s: 10.0,
            rel_ci: 0.01,
        }
    }
}

/// Samples kept per side; beyond this the race has long converged.
const KEEP: usize = 400_000;
/// How often a live verdict is published.
const REPORT_EVERY_S: f64 = 0.5;

pub enum RaceEvent {
    Batch(LatencyBatch),
    Report(AbReport),
}

pub fn race(
    engine: &mut Engine,
    a: &Variant,
    b: &Variant,
    shape: &Shape,
    plan: &RacePlan,
    mut emit: impl FnMut(RaceEvent),
    mut keep_going: impl FnMut() -> bool,
) -> Result<AbReport, EngineError> {
    engine.prepare(a, shape)?;
    engine.prepare(b, shape)?;
    engine.time_interleaved(a, b, shape, 10, plan.l2)?; // warm-up
    let started = Instant::now();
    let (mut all_a, mut all_b) = (Vec::new(), Vec::new());
    let mut pairs = 8usize;
    let mut last_report = 0.0;
    let timer = engine.timer().name().to_string();
    loop {
        let (sa, sb) = engine.time_interleaved(a, b, shape, pairs, plan.l2)?;
        let mean = (sa.iter().chain(&sb).sum::<u64>() as f64 / (sa.len() + sb.len()).max(1) as f64)
            .max(1.0);
        // About 25 ms of GPU time per round.
        pairs = ((25e6 / (2.0 * mean)) as usize).clamp(4, 2048);
        if all_a.len() < KEEP {
            all_a.extend_from_slice(&sa);
            all_b.extend_from_slice(&sb);
        }
        let mut tagged = LatencyBatch {
            timer: timer.clone(),
            ..LatencyBatch::default()
        };
        engine.tag(&mut tagged);
        for (v, s) in [(a, sa), (b, sb)] {
            emit(RaceEvent::Batch(LatencyBatch {
                variant: *v,
                shape: *shape,
                l2: plan.l2,
                samples_ns: s,
                ..tagged.clone()
            }));
        }
        let elapsed = started.elapsed().as_secs_f64();
        let out_of_time = elapsed >= plan.max_s || !keep_going();
        if elapsed - last_report < REPORT_EVERY_S && !out_of_time {
            continue;
        }
        last_report = elapsed;
        let report = report(a, b, shape, &all_a, &all_b, false);
        let tight = abstats::interval_is_tight(
            report.speedup,
            (report.ci_low, report.ci_high),
            plan.rel_ci,
        );
        if out_of_time || (elapsed >= plan.min_s && tight) {
            return Ok(AbReport {
                done: true,
                ..report
            });
        }
        emit(RaceEvent::Report(report));
    }
}

fn report(a: &Variant, b: &Variant, shape: &Shape, sa: &[u64], sb: &[u64], done: bool) -> AbReport {
    let v = abstats::verdict(sa, sb, 7);
    let pct = |s: &[u64], q: f64| {
        let mut s = s.to_vec();
        s.sort_unstable();
        s.get(((s.len() as f64 - 1.0) * q).round() as usize)
            .map_or(f64::NAN, |x| *x as f64)
    };
    AbReport {
        a: *a,
        b: *b,
        shape: *shape,
        samples_a: sa.len() as u64,
        samples_b: sb.len() as u64,
        p50_a_ns: pct(sa, 0.5),
        p50_b_ns: pct(sb, 0.5),
        p90_a_ns: pct(sa, 0.9),
        p90_b_ns: pct(sb, 0.9),
        speedup: v.as_ref().map_or(f64::NAN, |v| v.speedup),
        ci_low: v.as_ref().map_or(f64::NAN, |v| v.ci.0),
        ci_high: v.as_ref().map_or(f64::NAN, |v| v.ci.1),
        p_value: v.as_ref().map_or(1.0, |v| v.p_value),
        test: "Mann-Whitney U, bootstrap CI".into(),
        verdict: v.map_or("not enough samples".into(), |v| v.text),
        done,
    }
}
