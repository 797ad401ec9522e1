//! Sampling one variant until the median is stable: batches of about 25 ms,
//! each handed out as it completes.

use std::time::Instant;

use super::engine::{Engine, EngineError};
use crate::metrics::noise;
use crate::session::event::{L2Mode, LatencyBatch, MeasurementDone};
use crate::session::{Shape, Variant};

#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub l2: L2Mode,
    pub target_noise: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub warmup: usize,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            l2: L2Mode::Hot,
            target_noise: 0.005,
            min_s: 0.5,
            max_s: 5.0,
            warmup: 20,
        }
    }
}

/// Samples kept for the stopping rule (older ones are still reported in batches).
const KEEP: usize = 200_000;

/// Exactly `n` timed launches after one warm-up (sanitizer runs); returns the
/// summary and the one batch.
pub fn fixed(
    engine: &mut Engine,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    n: usize,
) -> Result<(MeasurementDone, LatencyBatch), EngineError> {
    engine.prepare(variant, shape)?;
    engine.time_batch(variant, shape, 1, plan.l2)?;
    let started = Instant::now();
    let (mut samples, host_us) = engine.time_batch(variant, shape, n, plan.l2)?;
    let batch = LatencyBatch {
        variant: *variant,
        shape: *shape,
        l2: plan.l2,
        samples_ns: samples.clone(),
        sm_clock_mhz: None,
        throttled: None,
        timer: engine.timer().name().into(),
    };
    samples.sort_unstable();
    let done = MeasurementDone {
        variant: *variant,
        shape: *shape,
        samples: samples.len() as u64,
        median_ns: noise::median(&samples).unwrap_or(f64::NAN),
        rel_noise: noise::median_rel_noise(&samples).unwrap_or(f64::NAN),
        wall_s: started.elapsed().as_secs_f64(),
        stop_reason: "fixed_count".into(),
        launch_overhead_us: Some(host_us),
    };
    Ok((done, batch))
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
    engine.time_batch(variant, shape, plan.warmup, plan.l2)?;
    let started = Instant::now();
    let mut all: Vec<u64> = Vec::new();
    let mut batch = 16usize;
    let mut overhead_us = Vec::new();
    let (stop_reason, last) = loop {
        let (samples, host_us) = engine.time_batch(variant, shape, batch, plan.l2)?;
        overhead_us.push(host_us);
        let mean_ns = samples.iter().sum::<u64>() as f64 / samples.len().max(1) as f64;
        // Aim for about 25 ms of GPU time per batch.
        batch = ((25e6 / mean_ns.max(1.0)) as usize).clamp(8, 4096);
        if all.len() < KEEP {
            all.extend_from_slice(&samples);
        }
        let mut batch_event = LatencyBatch {
            variant: *variant,
            shape: *shape,
            l2: plan.l2,
            samples_ns: samples,
            sm_clock_mhz: None,
            throttled: None,
            timer: engine.timer().name().into(),
        };
        engine.tag(&mut batch_event);
        on_batch(batch_event.clone());
        all.sort_unstable();
        let elapsed = started.elapsed().as_secs_f64();
        if let Some(reason) = noise::should_stop(
            noise::median_rel_noise(&all),
            elapsed,
            plan.target_noise,
            plan.min_s,
            plan.max_s,
        ) {
            break (reason.to_string(), batch_event);
        }
        if !keep_going() {
            break ("interrupted".to_string(), batch_event);
        }
    };
    overhead_us.sort_by(f64::total_cmp);
    let done = MeasurementDone {
        variant: *variant,
        shape: *shape,
        samples: all.len() as u64,
        median_ns: noise::median(&all).unwrap_or(f64::NAN),
        rel_noise: noise::median_rel_noise(&all).unwrap_or(f64::NAN),
        wall_s: started.elapsed().as_secs_f64(),
        stop_reason,
        launch_overhead_us: overhead_us.get(overhead_us.len() / 2).copied(),
    };
    Ok((done, last))
}
