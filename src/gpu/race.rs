//! The A/B race: A and B launched in rounds of ABBA order (the opener
//! alternating per round) on the same inputs, each round on the next of the
//! run's placements (`gpu/engine/placement.rs`), until the race is decided
//! (`abstats::decide`: a difference past its boundary, or an interval inside
//! its band) or a time limit. Rounds and placements are the units: the
//! interval resamples whole rounds, A and B together, and reads the spread
//! between placements.

use std::time::Instant;

use super::engine::{Engine, EngineError};
use crate::metrics::abstats::{self, DISCARD_PER_ROUND};
use crate::metrics::bootstrap;
use crate::session::event::{AbReport, Decision, L2Mode, LatencyBatch, Regime, Reruns};
use crate::session::{Shape, Variant};

#[derive(Clone, Copy, Debug)]
pub struct RacePlan {
    pub l2: L2Mode,
    /// Interleaved (back to back, alternating) or isolated (a gap and an
    /// emptied L2 before every launch).
    pub regime: Regime,
    pub min_s: f64,
    pub max_s: f64,
    /// The least half-width (relative) of the no-difference band
    /// (`ab --by`); the race's own resolution widens it.
    pub band: f64,
}

impl Default for RacePlan {
    fn default() -> Self {
        RacePlan {
            l2: L2Mode::Hot,
            regime: Regime::Interleaved,
            min_s: 1.0,
            max_s: 10.0,
            band: 0.0,
        }
    }
}

/// Samples kept per side; beyond this the race has long converged.
const KEEP: usize = 400_000;
/// How often a live verdict is published.
const REPORT_EVERY_S: f64 = 0.5;
/// Bootstrap resamples for the running verdicts (the final one uses more).
const QUICK_ROUNDS: usize = 400;
/// About this much GPU time per round, ns: short rounds make more
/// independent units.
const ROUND_NS: f64 = 10e6;
/// Launches per round in the isolated regime (each costs the idle gap).
const ISOLATED_ROUND: usize = 24;

pub enum RaceEvent {
    Batch(LatencyBatch),
    Report(Box<AbReport>),
}

/// What the race has gathered: each round's kept samples per side.
#[derive(Default)]
pub struct Rounds {
    pub a: Vec<Vec<u64>>,
    pub b: Vec<Vec<u64>>,
    /// Per round, the placement it ran on (`gpu/engine/placement.rs`).
    pub placement: Vec<u32>,
    /// Per round, how much slower the first kept launch was than the round's median.
    pub first_excess: Vec<f64>,
}

impl Rounds {
    /// Splits one round's samples (in launch order) by side, dropping the
    /// first `DISCARD_PER_ROUND`.
    pub fn add(&mut self, order: &[bool], samples: &[u64], placement: u32) -> (Vec<u64>, Vec<u64>) {
        let (mut sa, mut sb) = (Vec::new(), Vec::new());
        for (&is_a, &ns) in order.iter().zip(samples).skip(DISCARD_PER_ROUND) {
            if is_a { sa.push(ns) } else { sb.push(ns) }
        }
        let mut sorted: Vec<u64> = samples.iter().skip(DISCARD_PER_ROUND).copied().collect();
        sorted.sort_unstable();
        if let (Some(first), Some(mid)) = (samples.first(), sorted.get(sorted.len() / 2)) {
            self.first_excess.push(*first as f64 / *mid as f64 - 1.0);
        }
        self.a.push(sa.clone());
        self.b.push(sb.clone());
        self.placement.push(placement);
        (sa, sb)
    }

    fn samples(&self) -> usize {
        self.a.iter().chain(&self.b).map(Vec::len).sum()
    }
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
    let placements = engine.prepare_placements(&[*a, *b], shape)?;
    let result = race_placed(
        engine,
        (a, b),
        shape,
        plan,
        placements,
        &mut emit,
        &mut keep_going,
    );
    engine.use_placement(0, 0);
    result
}

fn race_placed(
    engine: &mut Engine,
    (a, b): (&Variant, &Variant),
    shape: &Shape,
    plan: &RacePlan,
    placements: usize,
    emit: &mut impl FnMut(RaceEvent),
    keep_going: &mut impl FnMut() -> bool,
) -> Result<AbReport, EngineError> {
    let regime = plan.regime;
    // Warm-up: both kernels loaded, clocks up.
    engine.time_sequence(&[*a, *b, *b, *a].repeat(4), shape, plan.l2, regime)?;
    let started = Instant::now();
    let mut rounds = Rounds::default();
    let mut launches = if regime == Regime::Isolated {
        ISOLATED_ROUND
    } else {
        16
    };
    let mut last_report = 0.0;
    let timer = engine.timer().name().to_string();
    for round in 0u64.. {
        let order = abstats::abba_order(round, launches);
        let variants: Vec<Variant> = order.iter().map(|&x| if x { *a } else { *b }).collect();
        let place = (round % placements.max(1) as u64) as usize;
        engine.use_placement(place, place);
        let (samples, host_us) = engine.time_sequence(&variants, shape, plan.l2, regime)?;
        if regime != Regime::Isolated {
            launches = super::measure::launches_for(ROUND_NS, &samples, host_us);
        }
        let (sa, sb) = if rounds.samples() < 2 * KEEP {
            rounds.add(&order, &samples, place as u32)
        } else {
            Rounds::default().add(&order, &samples, place as u32)
        };
        let mut tagged = LatencyBatch {
            timer: timer.clone(),
            regime: Some(regime),
            l2: engine.isolation.l2_in(regime, plan.l2),
            gap_us: (regime == Regime::Isolated).then_some(engine.isolation.gap_us),
            inputs: Some(engine.timing_inputs),
            shape: *shape,
            placement: (placements > 1).then_some(place as u32),
            ..LatencyBatch::default()
        };
        engine.tag(&mut tagged);
        for (v, s) in [(a, sa), (b, sb)] {
            emit(RaceEvent::Batch(LatencyBatch {
                variant: *v,
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
        let step = engine.timer_step_ns.unwrap_or(1.0);
        let look = Look {
            fraction: (elapsed / plan.max_s).min(1.0),
            band: plan.band,
        };
        let now = report(
            (a, b),
            shape,
            &rounds,
            (step, &timer),
            regime,
            QUICK_ROUNDS,
            look,
        );
        let interrupted = out_of_time && elapsed < plan.max_s;
        if let Some(stop) = stop_after(&now, elapsed, plan, interrupted) {
            return Ok(ending(stop, now, look, |look| {
                report(
                    (a, b),
                    shape,
                    &rounds,
                    (step, &timer),
                    regime,
                    bootstrap::ROUNDS,
                    look,
                )
            }));
        }
        emit(RaceEvent::Report(Box::new(now)));
    }
    unreachable!("the round counter does not run out")
}

/// Whether a race stops after the look that made `now`, `elapsed` seconds
/// in: `decided` (a difference called, or the interval inside its band,
/// after `plan.min_s`), `time_limit`, `interrupted` (a new command).
pub fn stop_after(
    now: &AbReport,
    elapsed: f64,
    plan: &RacePlan,
    interrupted: bool,
) -> Option<&'static str> {
    let decided = matches!(
        now.decision,
        Some(Decision::Faster | Decision::Slower | Decision::Same)
    );
    if elapsed >= plan.max_s {
        Some("time_limit")
    } else if interrupted {
        Some("interrupted")
    } else if elapsed >= plan.min_s && decided {
        Some("decided")
    } else {
        None
    }
}

/// The report a race ends with after it stopped for `stop` at the look
/// that made `now`: decided, that look's own (a report with more resamples
/// could move a standard error at the boundary and say otherwise: run165);
/// at the time limit or interrupted, `judge` at the limit's boundary (an
/// interrupted race is judged as if it had ended).
pub fn ending(
    stop: &'static str,
    now: AbReport,
    look: Look,
    judge: impl FnOnce(Look) -> AbReport,
) -> AbReport {
    let last = if stop == "decided" {
        now
    } else {
        judge(Look {
            fraction: 1.0,
            ..look
        })
    };
    AbReport {
        done: true,
        stop_reason: Some(stop.into()),
        ..last
    }
}

/// When a report is made: the share of the race's time limit gone (1 at
/// the limit) and the least no-difference band.
#[derive(Clone, Copy, Debug)]
pub struct Look {
    pub fraction: f64,
    pub band: f64,
}

/// The race's report so far: the speedup, its interval and the verdict.
pub fn report(
    (a, b): (&Variant, &Variant),
    shape: &Shape,
    rounds: &Rounds,
    (step, timer): (f64, &str),
    regime: Regime,
    bootstrap: usize,
    look: Look,
) -> AbReport {
    let ra: Vec<&[u64]> = rounds.a.iter().map(Vec::as_slice).collect();
    let rb: Vec<&[u64]> = rounds.b.iter().map(Vec::as_slice).collect();
    let ratio = bootstrap::ratio_interval_placed(&ra, &rb, &rounds.placement, step, bootstrap, 7);
    let call = ratio.map(|r| abstats::decide(&r, look.fraction, look.band));
    let covers = ratio.map(|r| Reruns {
        run_low: r.low,
        run_high: r.high,
        between_run_rel: r.parts.placement_rel,
        source: crate::gpu::measure::units_text(&r.parts),
        unpadded: Some(r.unpadded),
    });
    let side_a = bootstrap::median_interval(&ra, step, 200, 11);
    let side_b = bootstrap::median_interval(&rb, step, 200, 13);
    let all_a: Vec<u64> = rounds.a.concat();
    let all_b: Vec<u64> = rounds.b.concat();
    let pct = |s: &[u64], q: f64| {
        let mut s = s.to_vec();
        s.sort_unstable();
        s.get(((s.len() as f64 - 1.0) * q).round() as usize)
            .map_or(f64::NAN, |x| *x as f64)
    };
    let mut excess = rounds.first_excess.clone();
    excess.sort_by(f64::total_cmp);
    AbReport {
        a: *a,
        b: *b,
        shape: *shape,
        samples_a: all_a.len() as u64,
        samples_b: all_b.len() as u64,
        p50_a_ns: ratio.map_or_else(|| bootstrap::median(&all_a, step), |r| r.median_a_ns),
        p50_b_ns: ratio.map_or_else(|| bootstrap::median(&all_b, step), |r| r.median_b_ns),
        p90_a_ns: pct(&all_a, 0.9),
        p90_b_ns: pct(&all_b, 0.9),
        speedup: ratio.map_or(f64::NAN, |r| r.ratio),
        ci_low: ratio.map_or(f64::NAN, |r| r.low),
        ci_high: ratio.map_or(f64::NAN, |r| r.high),
        p_value: ratio.map_or(1.0, |r| r.p_value),
        test: match ratio.map(|r| (r.blocks, r.parts.placements)) {
            Some((n, p)) if p > 1 => format!("{n} rounds on {p} placements"),
            Some((n, _)) => format!("bootstrap over {n} rounds"),
            None => format!("bootstrap over {} rounds", rounds.a.len()),
        },
        verdict: ratio.zip(call).map_or_else(
            || format!("not enough rounds yet (needs {})", bootstrap::MIN_BLOCKS),
            |(r, c)| abstats::verdict_text(&r, &c),
        ),
        done: false,
        regime: Some(regime),
        timer: timer.into(),
        resolution_ns: Some(step),
        limited_by_resolution: ratio.is_some_and(|r| r.limited_by_resolution),
        design: abstats::DESIGN.into(),
        rounds: rounds.a.len() as u64,
        first_launch_excess: excess.get(excess.len() / 2).copied(),
        within_rel_a: side_a.map(|m| m.within_rel),
        between_rel_a: side_a.map(|m| m.between_rel),
        within_rel_b: side_b.map(|m| m.within_rel),
        between_rel_b: side_b.map(|m| m.between_rel),
        reruns: covers,
        decision: call.map(|c| c.decision),
        resolution_rel: call.map(|c| c.resolution),
        placements: ratio.map(|r| r.parts.placements as u32).filter(|&p| p > 1),
        placement_rel: ratio
            .filter(|r| r.parts.placements > 1)
            .map(|r| r.parts.placement_rel),
        stop_reason: None,
    }
}
