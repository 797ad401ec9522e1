//! `attnscope ab`: race two variants headless and print the verdict.

use serde_json::json;

use super::{Run, fail};
use crate::cli::{AbArgs, exit};
use crate::gpu::engine::Timer;
use crate::gpu::race::{self, RaceEvent, RacePlan};
use crate::gpu::worker::Worker;
use crate::session::Shape;
use crate::session::event::*;

pub fn ab(args: AbArgs) -> i32 {
    let shape = Shape {
        causal: args.causal,
        ..args.shape
    };
    let Run {
        mut engine,
        mut sink,
        sampler,
        ..
    } = match Run::start(Timer::Cupti, args.telemetry_hz, args.record.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    for v in [args.a, args.b] {
        match engine.prepare(&v, &shape) {
            Ok(b) => sink.event(Event::BuildFinished(Worker::build_report(
                &engine, &v, &shape, &b,
            ))),
            Err(e) => return fail(exit::CHECK_FAILED, format!("{v}: {e}")),
        }
    }
    let plan = RacePlan {
        max_s: args.ab_seconds,
        ..RacePlan::default()
    };
    let report = race::race(
        &mut engine,
        &args.a,
        &args.b,
        &shape,
        &plan,
        |e| {
            sink.drain();
            match e {
                RaceEvent::Batch(b) => sink.event(Event::Latency(b)),
                RaceEvent::Report(r) => sink.event(Event::AbResult(r)),
            }
        },
        || true,
    );
    let report = match report {
        Ok(r) => r,
        Err(e) => return fail(exit::CHECK_FAILED, e),
    };
    sink.event(Event::AbResult(report.clone()));
    drop(sampler);
    sink.drain();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"gpu": engine.info, "timer": engine.timer(), "ab": report})
            )
            .unwrap_or_default()
        );
    } else {
        println!(
            "{} ({}), {shape}, GPU time per launch from {}, launches interleaved A, B, A, B…",
            engine.info.name,
            engine.arch,
            engine.timer().name()
        );
        println!(
            "A = {:<16} p50 {:>9.2} µs  p90 {:>9.2} µs  n {}",
            report.a.name(),
            report.p50_a_ns / 1e3,
            report.p90_a_ns / 1e3,
            report.samples_a
        );
        println!(
            "B = {:<16} p50 {:>9.2} µs  p90 {:>9.2} µs  n {}",
            report.b.name(),
            report.p50_b_ns / 1e3,
            report.p90_b_ns / 1e3,
            report.samples_b
        );
        println!(
            "speedup p50(A)/p50(B) = {:.4}× [{:.4}, {:.4}] 95% bootstrap CI; Mann-Whitney U p = {:.3e}",
            report.speedup, report.ci_low, report.ci_high, report.p_value
        );
        println!("verdict: {}", report.verdict);
    }
    0
}
