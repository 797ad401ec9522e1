//! Sampling one variant until its median is known well enough: batches of
//! about 25 ms, each handed out as it completes. The median's interval comes
//! from resampling whole batches (launches inside one are correlated) and is
//! never narrower than the timer's step.

use std::time::Instant;

use super::engine::{Collected, Engine, EngineError, Queued};
use crate::metrics::across_runs;
use crate::metrics::bootstrap::{self, MedianInterval};
use crate::session::event::{L2Mode, LatencyBatch, MeasurementDone, Regime, Reruns};
use crate::session::{Shape, Variant};

#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub l2: L2Mode,
    /// Back to back or isolated (an interleaved regime is a race's).
    pub regime: Regime,
    pub target_noise: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub warmup: usize,
    /// Untimed back-to-back load before sampling, seconds: under a power cap
    /// a GPU's clock settles over seconds of sustained load.
    pub warm_s: f64,
}

/// Untimed back-to-back load before a run samples, seconds: long enough
/// for a power cap's first fall of the clock (run161).
pub const DEFAULT_WARM_S: f64 = 0.3;

impl Default for Plan {
    fn default() -> Self {
        Plan {
            l2: L2Mode::Hot,
            regime: Regime::BackToBack,
            target_noise: 0.005,
            min_s: 0.5,
            max_s: 5.0,
            warmup: 20,
            warm_s: DEFAULT_WARM_S,
        }
    }
}

/// Samples kept for the interval (older batches are still reported).
const KEEP: usize = 400_000;
/// About this much GPU time per batch, ns.
const BATCH_NS: f64 = 25e6;
/// How often the stopping rule bootstraps the batches so far, seconds.
const CHECK_EVERY_S: f64 = 0.1;
/// Isolated launches cost the gap each: fewer per batch, ~25 ms of wall time.
const ISOLATED_BATCH: usize = 20;
/// Back to back, the clock probe runs on the first batch and every this
/// many after: a probe waits for the launch queue to drain, idling the GPU.
const PROBE_EVERY: usize = 8;

/// Exactly `n` timed launches after one warm-up (sanitizer runs); returns the
/// summary and the one batch (one batch gives no interval).
pub fn fixed(
    engine: &mut Engine,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    n: usize,
) -> Result<(MeasurementDone, LatencyBatch), EngineError> {
    engine.prepare(variant, shape)?;
    engine.time_batch(variant, shape, 1, plan.l2, plan.regime)?;
    let started = Instant::now();
    let (samples, host_us) = engine.time_batch(variant, shape, n, plan.l2, plan.regime)?;
    let batch = batch_event(engine, variant, shape, plan, samples, None);
    let done = summary(
        engine,
        variant,
        shape,
        plan,
        (&[batch.samples_ns.as_slice()], &[0]),
        started,
        "fixed_count",
        Some(host_us),
    );
    Ok((done, batch))
}

fn batch_event(
    engine: &Engine,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    samples: Vec<u64>,
    busy: Option<f64>,
) -> LatencyBatch {
    let isolated = plan.regime == Regime::Isolated;
    LatencyBatch {
        variant: *variant,
        shape: *shape,
        l2: engine.isolation.l2_in(plan.regime, plan.l2),
        regime: Some(plan.regime),
        samples_ns: samples,
        sm_clock_mhz: None,
        throttled: None,
        timer: engine.timer().name().into(),
        gap_us: isolated.then_some(engine.isolation.gap_us),
        inputs: Some(engine.timing_inputs),
        busy,
        placement: None,
    }
}

/// Whether batch `index` (from 0) of a run gets a clock probe: every one
/// isolated (the GPU idles there anyway), the first and every
/// `PROBE_EVERY`-th back to back.
fn probed(index: usize, regime: Regime) -> bool {
    regime == Regime::Isolated || index.is_multiple_of(PROBE_EVERY)
}

/// Where a run's batches come from. Back to back, the next batch is always
/// queued before the last one is read, so the GPU never waits on the host;
/// isolated, one batch at a time (that regime idles on purpose).
struct Source {
    queued: Option<Queued>,
    /// The host cost of one launch call: the least batch mean (see `next`).
    launch_us: Option<f64>,
    /// Placements the batches rotate through, and the next batch's number.
    placements: usize,
    next_index: usize,
}

impl Source {
    fn start(
        engine: &mut Engine,
        variant: &Variant,
        shape: &Shape,
        plan: &Plan,
        size: usize,
        placements: usize,
    ) -> Result<Source, EngineError> {
        let mut source = Source {
            queued: None,
            launch_us: None,
            placements: placements.max(1),
            next_index: 0,
        };
        if plan.regime == Regime::Isolated {
            return Ok(source);
        }
        engine.begin_pipeline()?;
        source.place_next(engine);
        source.queued = Some(engine.enqueue_batch(variant, shape, size, plan.l2)?);
        Ok(source)
    }

    /// The next batch's placement, in turn.
    fn place_next(&mut self, engine: &mut Engine) -> usize {
        let k = self.next_index % self.placements;
        self.next_index += 1;
        engine.use_placement(k, k);
        k
    }

    /// The next batch read back, `size` launches queued behind it first.
    fn next(
        &mut self,
        engine: &mut Engine,
        variant: &Variant,
        shape: &Shape,
        plan: &Plan,
        size: usize,
    ) -> Result<Collected, EngineError> {
        let Some(q) = self.queued.take() else {
            let placement = self.place_next(engine);
            let (samples, host_us) =
                engine.time_batch(variant, shape, size, plan.l2, plan.regime)?;
            return Ok(Collected {
                samples,
                host_us,
                busy: None,
                lost: false,
                placement,
            });
        };
        self.place_next(engine);
        self.queued = Some(engine.enqueue_batch(variant, shape, size, plan.l2)?);
        let c = engine.collect_batch(q, self.queued.as_ref())?;
        if c.lost {
            // The driver's CUPTI gave up records of running kernels: the
            // engine drained everything; go on one batch at a time (no
            // busy fraction from here on) rather than fail the run.
            self.queued = None;
            return self.next(engine, variant, shape, plan, size);
        }
        // The least of the batches' mean host cost per launch: a batch's
        // launches can block on a full launch queue, and the first launch
        // after a flush pays for CUPTI's new record buffer.
        self.launch_us = Some(self.launch_us.map_or(c.host_us, |x| x.min(c.host_us)));
        Ok(c)
    }

    /// Waits for the batch still queued, its samples unread.
    fn stop(self, engine: &mut Engine) -> Result<(), EngineError> {
        match self.queued {
            Some(q) => engine.discard_batch(q),
            None => Ok(()),
        }
    }
}

/// Launches in the next batch: about BATCH_NS back to back, of GPU time or
/// of the host's time per launch (`host_us`), whichever is longer: a `py:`
/// call's Python costs more than its kernels at small shapes, and batches
/// sized by GPU time alone left a half-second run 3 batches, too few for an
/// interval (run146). An isolated batch keeps its count (each launch costs
/// the gap).
fn next_batch(batch: usize, samples: &[u64], host_us: f64, regime: Regime) -> usize {
    if regime == Regime::Isolated {
        return batch;
    }
    launches_for(BATCH_NS, samples, host_us)
}

/// Launches that fill `span_ns` back to back (8 to 4096): by the batch's
/// mean GPU time per launch or the host's time per launch call, whichever
/// is longer. Races size their rounds with it too.
pub fn launches_for(span_ns: f64, samples: &[u64], host_us: f64) -> usize {
    let mean_ns = samples.iter().sum::<u64>() as f64 / samples.len().max(1) as f64;
    let host_ns = if host_us.is_finite() {
        host_us * 1e3
    } else {
        0.0
    };
    ((span_ns / mean_ns.max(host_ns).max(1.0)) as usize).clamp(8, 4096)
}

/// The longest warm-up while the clock is still falling, seconds.
pub const WARM_MAX_S: f64 = 3.0;
/// How often a back-to-back warm-up probes the SM clock, and the stretch of
/// time whose probes are compared with the stretch before.
const WARM_PROBE_EVERY_S: f64 = 0.1;
const WARM_WINDOW_S: f64 = 0.25;

/// Whether the clock has stopped falling: the probes of the last
/// `WARM_WINDOW_S` average at least 99% of those of the window before
/// (two probes in each at least). Under a power cap the clock falls for a
/// second or two of sustained load; run165's 600 µs tile, warmed 0.3 s,
/// read 591 or 596 µs by process (47% of other runs' medians inside an
/// interval), and warmed 2 s, 604–608 µs (97%, run166).
pub fn clock_settled(probes: &[(f64, u32)], now: f64) -> bool {
    let mean = |from: f64, to: f64| {
        let v: Vec<f64> = probes
            .iter()
            .filter(|(t, _)| *t > from && *t <= to)
            .map(|(_, m)| f64::from(*m))
            .collect();
        (v.len() >= 2).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    match (
        mean(now - WARM_WINDOW_S, now),
        mean(now - 2.0 * WARM_WINDOW_S, now - WARM_WINDOW_S),
    ) {
        (Some(recent), Some(before)) => recent >= 0.99 * before,
        _ => false,
    }
}

/// Untimed batches of the regime's own from `source`, their samples
/// discarded: at least `plan.warm_s`, and back to back until the SM clock
/// has stopped falling (`clock_settled`) or `WARM_MAX_S`; returns the size
/// of the next batch and how long it warmed.
fn warm(
    engine: &mut Engine,
    source: &mut Source,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    mut batch: usize,
) -> Result<(usize, f64), EngineError> {
    let started = Instant::now();
    let watch = plan.regime == Regime::BackToBack && plan.warm_s > 0.0;
    let mut probes: Vec<(f64, u32)> = Vec::new();
    let mut last_probe = f64::NEG_INFINITY;
    loop {
        let t = started.elapsed().as_secs_f64();
        let long_enough = t >= plan.warm_s && (!watch || clock_settled(&probes, t));
        if long_enough || t >= WARM_MAX_S.max(plan.warm_s) {
            return Ok((batch, t));
        }
        let c = source.next(engine, variant, shape, plan, batch)?;
        batch = next_batch(batch, &c.samples, c.host_us, plan.regime);
        if watch && t - last_probe >= WARM_PROBE_EVERY_S {
            last_probe = t;
            if let Ok(mhz) = engine.probe_clock() {
                probes.push((started.elapsed().as_secs_f64(), mhz));
            }
        }
    }
}

/// The widest interval a measurement prints for a rerun: past it, a run
/// says how much longer it would need instead (a ±31% says nothing).
pub const MAX_PRINTED_REL: f64 = 0.05;

/// Seconds more a run of `elapsed_s` whose interval is ±`rel` would need to
/// reach ±`target`, the interval narrowing as one over the square root of
/// time; at least a tenth of a second.
pub fn seconds_more(elapsed_s: f64, rel: f64, target: f64) -> f64 {
    if !(rel.is_finite() && target > 0.0 && elapsed_s.is_finite()) {
        return f64::NAN;
    }
    (elapsed_s * ((rel / target).powi(2) - 1.0)).max(0.1)
}

#[allow(clippy::too_many_arguments)]
fn summary(
    engine: &Engine,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    (batches, placement): (&[&[u64]], &[u32]),
    started: Instant,
    stop_reason: &str,
    launch_overhead_us: Option<f64>,
) -> MeasurementDone {
    let step = engine.timer_step_ns.unwrap_or(1.0);
    let all: Vec<u64> = batches.concat();
    let stopped_on_interval = stop_reason.starts_with("converged");
    let interval = bootstrap::median_interval_run(
        batches,
        placement,
        step,
        bootstrap::ROUNDS,
        17,
        stopped_on_interval,
    );
    let wall_s = started.elapsed().as_secs_f64();
    let reruns = interval.as_ref().map(rerun_of);
    let rel = interval
        .zip(reruns.as_ref())
        .map_or(f64::NAN, |(m, r)| (r.1 - r.0) / 2.0 / m.median_ns);
    let too_wide = rel.is_finite() && rel > MAX_PRINTED_REL;
    let needs_more_s = too_wide.then(|| seconds_more(wall_s, rel, MAX_PRINTED_REL));
    let reruns = reruns.filter(|_| !too_wide);
    let placements = placement.iter().copied().max().map_or(1, |p| p + 1);
    MeasurementDone {
        variant: *variant,
        shape: *shape,
        samples: all.len() as u64,
        median_ns: interval.map_or_else(|| bootstrap::median(&all, step), |m| m.median_ns),
        rel_noise: if too_wide { f64::NAN } else { rel },
        wall_s,
        stop_reason: stop_reason.into(),
        launch_overhead_us,
        regime: Some(plan.regime),
        ci_low_ns: reruns.as_ref().map(|r| r.0),
        ci_high_ns: reruns.as_ref().map(|r| r.1),
        batches: batches.len() as u64,
        resolution_ns: engine.timer_step_ns,
        limited_by_resolution: interval.is_some_and(|m| m.limited_by_resolution),
        within_batch_rel: interval.map(|m| m.within_rel),
        between_batch_rel: interval.map(|m| m.between_rel),
        warm_s: (plan.warm_s > 0.0).then_some(plan.warm_s),
        reruns: reruns.map(|r| r.2),
        busy_fraction: None,
        needs_more_s,
        placements: (placements > 1).then_some(placements),
    }
}

/// Where a rerun's median lands, from this run's interval (placements and
/// drift included): two runs each known to that interval differ by √2 of
/// it. (low, high, what it covers).
pub fn rerun_of(m: &MedianInterval) -> (f64, f64, Reruns) {
    let (low, high) = across_runs::rerun_interval(m.median_ns, m.low_ns, m.high_ns, 0.0);
    let covers = Reruns {
        run_low: m.low_ns,
        run_high: m.high_ns,
        between_run_rel: m.parts.placement_rel,
        source: units_text(&m.parts),
        unpadded: None,
    };
    (low, high, covers)
}

/// What an interval's units were, in words: "16 placements × 8 stretches".
pub fn units_text(p: &bootstrap::Parts) -> String {
    if p.cycle_batches > 0 {
        let cycles = format!(
            "{} whole clock cycles of {} batches",
            p.segments, p.cycle_batches
        );
        return if p.placements >= bootstrap::MIN_PLACEMENTS {
            format!("{} placements and {cycles} of this run", p.placements)
        } else {
            format!("{cycles} of this run (one placement)")
        };
    }
    match (p.placements, p.segments) {
        (c, k) if c >= bootstrap::MIN_PLACEMENTS && k >= 3 => {
            format!("{c} placements and {k} stretches of this run")
        }
        (c, _) if c >= bootstrap::MIN_PLACEMENTS => format!("{c} placements of this run"),
        (_, k) if k >= 3 => format!("{k} stretches of this run (one placement)"),
        _ => "this run's batches".into(),
    }
}

/// The stopping rule: the median's interval within ±`target` (or as narrow as
/// the timer allows) after `min_s`, or `max_s` reached.
/// `interval`: the run's relative half-width so far and whether the timer's
/// step sets it (`bootstrap::quick_half_width`).
pub fn should_stop(
    interval: Option<(f64, bool)>,
    elapsed_s: f64,
    target: f64,
    min_s: f64,
    max_s: f64,
) -> Option<&'static str> {
    let tight = interval.is_some_and(|m| m.0 < target);
    let at_step = interval.is_some_and(|m| m.1);
    if elapsed_s >= min_s && tight {
        Some("converged")
    } else if elapsed_s >= min_s && at_step {
        Some("converged_at_timer_step")
    } else if elapsed_s >= max_s {
        Some("time_limit")
    } else {
        None
    }
}

/// Measures `variant`, calling `on_batch` per batch; `keep_going` is asked
/// between batches (a new command can interrupt). Returns the summary and
/// the last batch.
pub fn measure(
    engine: &mut Engine,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    mut on_batch: impl FnMut(LatencyBatch),
    mut keep_going: impl FnMut() -> bool,
) -> Result<(MeasurementDone, LatencyBatch), EngineError> {
    engine.prepare(variant, shape)?;
    let placements = engine.prepare_placements(&[*variant], shape)?;
    if plan.regime == Regime::BackToBack {
        engine.measure_own_gap(variant, shape)?;
    }
    let result = measure_placed(
        engine,
        variant,
        shape,
        plan,
        placements,
        &mut on_batch,
        &mut keep_going,
    );
    engine.use_placement(0, 0);
    result
}

fn measure_placed(
    engine: &mut Engine,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    placements: usize,
    on_batch: &mut impl FnMut(LatencyBatch),
    keep_going: &mut impl FnMut() -> bool,
) -> Result<(MeasurementDone, LatencyBatch), EngineError> {
    let warmup = if plan.regime == Regime::Isolated {
        2
    } else {
        plan.warmup
    };
    engine.time_batch(variant, shape, warmup, plan.l2, plan.regime)?;
    let first = if plan.regime == Regime::Isolated {
        ISOLATED_BATCH
    } else {
        16
    };
    let mut source = Source::start(engine, variant, shape, plan, first, placements)?;
    let (mut batch, warmed_s) = warm(engine, &mut source, variant, shape, plan, first)?;
    let started = Instant::now();
    let mut kept: Vec<Vec<u64>> = Vec::new();
    let mut kept_place: Vec<u32> = Vec::new();
    let mut kept_medians: Vec<f64> = Vec::new();
    let mut kept_samples = 0usize;
    let mut overhead_us = Vec::new();
    let mut busy = Vec::new();
    let step = engine.timer_step_ns.unwrap_or(1.0);
    let mut last_check = f64::NEG_INFINITY;
    let (stop_reason, last) = loop {
        let c = source.next(engine, variant, shape, plan, batch)?;
        overhead_us.push(c.host_us);
        busy.push(c.busy);
        batch = next_batch(batch, &c.samples, c.host_us, plan.regime);
        if kept_samples < KEEP {
            kept_samples += c.samples.len();
            kept_medians.push(bootstrap::median(&c.samples, step));
            kept.push(c.samples.clone());
            kept_place.push(c.placement as u32);
        }
        let mut batch_event = batch_event(engine, variant, shape, plan, c.samples, c.busy);
        batch_event.placement = (placements > 1).then_some(c.placement as u32);
        if probed(busy.len() - 1, plan.regime) {
            engine.tag(&mut batch_event);
        }
        on_batch(batch_event.clone());
        let elapsed = started.elapsed().as_secs_f64();
        // Judged from the batches' medians, one pass (the full interval
        // is made once, at the end): at most every CHECK_EVERY_S, and
        // always at the time limit.
        let due = elapsed - last_check >= CHECK_EVERY_S || elapsed >= plan.max_s;
        let interval = if due && elapsed >= plan.min_s {
            last_check = elapsed;
            bootstrap::quick_half_width(&kept_medians, &kept_place, step)
        } else {
            None
        };
        if let Some(reason) =
            should_stop(interval, elapsed, plan.target_noise, plan.min_s, plan.max_s)
        {
            break (reason.to_string(), batch_event);
        }
        if !keep_going() {
            break ("interrupted".to_string(), batch_event);
        }
    };
    let launch_us = source.launch_us;
    source.stop(engine)?;
    overhead_us.sort_by(f64::total_cmp);
    let refs: Vec<&[u64]> = kept.iter().map(Vec::as_slice).collect();
    let mut done = summary(
        engine,
        variant,
        shape,
        plan,
        (&refs, &kept_place),
        started,
        &stop_reason,
        launch_us.or_else(|| overhead_us.get(overhead_us.len() / 2).copied()),
    );
    done.busy_fraction = crate::metrics::busy::median_busy(&busy);
    done.warm_s = (warmed_s > 0.0).then_some(warmed_s);
    Ok((done, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_about_25_ms_back_to_back_and_keep_their_size_isolated() {
        assert_eq!(next_batch(16, &[1_000_000; 4], 5.0, Regime::BackToBack), 25);
        assert_eq!(next_batch(16, &[10; 4], 0.0, Regime::BackToBack), 4096);
        assert_eq!(next_batch(16, &[100_000_000], 5.0, Regime::BackToBack), 8);
        assert_eq!(next_batch(20, &[1_000_000; 4], 5.0, Regime::Isolated), 20);
        assert_eq!(
            next_batch(16, &[1_000_000; 4], f64::NAN, Regime::BackToBack),
            25
        );
    }

    #[test]
    fn a_launch_the_host_takes_longer_over_sizes_its_batch_by_the_host() {
        // run146's py:sdpa_flash: 12.9 µs kernels, 129 µs of Python a call. By GPU time a batch
        // held 1938 calls, a quarter of a second; by the host's time, 25 ms.
        assert_eq!(next_batch(16, &[12_900; 4], 129.0, Regime::BackToBack), 193);
        assert_eq!(next_batch(16, &[12_900; 4], 2.0, Regime::BackToBack), 1937);
    }

    #[test]
    fn back_to_back_probes_the_clock_on_the_first_and_every_eighth_batch() {
        let probed_at: Vec<usize> = (0..20).filter(|&i| probed(i, Regime::BackToBack)).collect();
        assert_eq!(probed_at, [0, 8, 16]);
        assert!((0..20).all(|i| probed(i, Regime::Isolated)));
    }

    #[test]
    fn stopping_rule() {
        let (tight, loose, step) = ((0.001, false), (0.01, false), (0.016, true));
        assert_eq!(should_stop(Some(tight), 0.4, 0.005, 0.5, 10.0), None);
        assert_eq!(
            should_stop(Some(tight), 0.6, 0.005, 0.5, 10.0),
            Some("converged")
        );
        assert_eq!(should_stop(Some(loose), 0.6, 0.005, 0.5, 10.0), None);
        // A kernel short against the timer's step converges at the step.
        assert_eq!(
            should_stop(Some(step), 0.6, 0.005, 0.5, 10.0),
            Some("converged_at_timer_step")
        );
        assert_eq!(
            should_stop(None, 10.0, 0.005, 0.5, 10.0),
            Some("time_limit")
        );
        assert_eq!(should_stop(None, 1.0, 0.005, 0.5, 10.0), None);
    }
}
