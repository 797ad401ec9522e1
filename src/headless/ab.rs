//! `attnscope ab`: race two variants headless and print the verdict; with
//! `--expect` gate a CI job on it; with `--calibrate` race one variant
//! against itself and count how often the interval covers 1.0.

use serde_json::json;

use super::{Run, Sink, fail};
use crate::cli::{AbArgs, exit};
use crate::gpu::engine::{Engine, Timer};
use crate::gpu::executor::Worker;
use crate::gpu::race::{self, RaceEvent, RacePlan};
use crate::metrics::format::{duration_ns, step_text};
use crate::session::Shape;
use crate::session::event::*;

pub fn ab(args: AbArgs) -> i32 {
    let shape = args.problem.shape;
    let (a, b) = (
        args.a.unwrap_or_else(Variant::base),
        args.b.unwrap_or_else(Variant::start),
    );
    let named = [a, b].into_iter().chain(args.calibrate).collect::<Vec<_>>();
    if let Err(code) = super::runnable(&named, &shape) {
        return code;
    }
    let mut run = match Run::start(Timer::Cupti, args.telemetry_hz, args.record.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    // The tune below times on the race's inputs.
    run.engine.timing_inputs = args.inputs.first();
    // A bare mma+async on Hopper races its tuned tile (tune.rs).
    let (a, b) = {
        let check = super::bench::Check::new(args.inputs.clone(), args.seed);
        let plan = crate::gpu::measure::Plan::default();
        let mut tuned = |v, text: &Option<String>| {
            super::tune::default_tile(&mut run, v, text.as_deref(), &shape, &plan, &check)
        };
        match (tuned(a, &args.a_arg), tuned(b, &args.b_arg)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return fail(exit::USAGE, e),
        }
    };
    let Run {
        mut engine,
        mut sink,
        sampler,
        ..
    } = run;
    let pair = match args.calibrate {
        Some(v) => (v, v),
        None => (a, b),
    };
    for v in [pair.0, pair.1] {
        match engine.prepare(&v, &shape) {
            Ok(b) => sink.event(Event::BuildFinished(Worker::build_report(
                &engine, &v, &shape, &b,
            ))),
            Err(e) => return fail(exit::CHECK_FAILED, format!("{v}: {e}")),
        }
    }
    let seed = args.seed.unwrap_or_else(crate::session::inputs::fresh_seed);
    let mut checks = Vec::new();
    let sides = if pair.0 == pair.1 {
        vec![pair.0]
    } else {
        vec![pair.0, pair.1]
    };
    for v in sides {
        match engine.check(&v, &shape, &args.inputs, seed) {
            Ok(c) => {
                sink.event(Event::Correctness(c.clone()));
                checks.push(c);
            }
            Err(e) => return fail(exit::CHECK_FAILED, format!("{v}: {e}")),
        }
    }
    if !args.json {
        print_checks(&checks, &args.inputs, seed);
    }
    if let Some(why) = refusal(&checks, args.allow_incorrect) {
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({
                    "gpu": engine.info, "checks": checks, "ab": null, "refused": why,
                }))
                .unwrap_or_default()
            );
        } else {
            println!("{why}");
        }
        drop(sampler);
        sink.drain();
        return exit::CHECK_FAILED;
    }
    // `--expect same --by P`: the race may stop once its interval is inside ±P.
    let band = match (args.expect.as_deref(), args.by) {
        (Some("same"), Some(p)) => p / 100.0,
        _ => 0.0,
    };
    let plan = RacePlan {
        max_s: args.ab_seconds,
        regime: args.regime,
        band,
        ..RacePlan::default()
    };
    let code = match (args.calibrate, args.offsets.as_deref()) {
        (Some(v), _) => calibrate(&mut engine, &mut sink, &v, &shape, &plan, &args),
        (None, Some(f)) => super::offsets::offsets(&mut engine, (a, b), &shape, &plan, f, &args),
        (None, None) if args.races.is_some() => {
            super::ab_repeat::repeat(&mut engine, &mut sink, (a, b), &shape, &plan, &args)
        }
        (None, None) => compare(
            &mut engine,
            &mut sink,
            &shape,
            &plan,
            &args,
            (a, b),
            &checks,
        ),
    };
    drop(sampler);
    sink.drain();
    code
}

/// Runs one race, recording its batches and reports.
pub(super) fn one_race(
    engine: &mut Engine,
    sink: &mut Sink,
    a: &Variant,
    b: &Variant,
    shape: &Shape,
    plan: &RacePlan,
) -> Result<AbReport, String> {
    let report = race::race(
        engine,
        a,
        b,
        shape,
        plan,
        |e| {
            sink.drain();
            match e {
                RaceEvent::Batch(b) => sink.event(Event::Latency(b)),
                RaceEvent::Report(r) => sink.event(Event::AbResult(*r)),
            }
        },
        || true,
    )
    .map_err(|e| e.to_string())?;
    sink.event(Event::AbResult(report.clone()));
    Ok(report)
}

/// The line that says how the race was timed.
pub(super) fn conditions(engine: &Engine, shape: &Shape, r: &AbReport) -> String {
    format!(
        "{} ({}), {shape}, {} ({}), GPU time per launch from {} (step {})",
        engine.info.name,
        engine.arch,
        regime_name(r.regime),
        r.design,
        r.timer,
        r.resolution_ns
            .map_or("unknown".into(), |s| format!("{} ns", step_text(s)))
    )
}

fn compare(
    engine: &mut Engine,
    sink: &mut Sink,
    shape: &Shape,
    plan: &RacePlan,
    args: &AbArgs,
    (a, b): (Variant, Variant),
    checks: &[CorrectnessReport],
) -> i32 {
    let report = match one_race(engine, sink, &a, &b, shape, plan) {
        Ok(r) => r,
        Err(e) => return fail(exit::CHECK_FAILED, e),
    };
    let all_correct = checks.iter().all(|c| c.pass);
    // A wrong kernel meets no expectation, whatever its speed.
    let expectation = args.expect.as_deref().map(|e| {
        expectation_met(e, args.by, &report).and_then(|ok| {
            if all_correct {
                Ok(ok)
            } else {
                Err(format!("{ok}, but a side fails its correctness check"))
            }
        })
    });
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "gpu": engine.info, "timer": engine.timer(),
                "timer_resolution_ns": engine.timer_step_ns, "ab": report, "checks": checks,
                "expect": args.expect, "by_pct": args.by,
                "expectation_met": expectation.as_ref().map(|r| r.is_ok()),
                "expectation": expectation.as_ref().map(|r| match r { Ok(s) | Err(s) => s.clone() }),
            }))
            .unwrap_or_default()
        );
    } else {
        println!("{}", conditions(engine, shape, &report));
        for (slot, v, p50, p90, n, within, between) in [
            (
                "A",
                &report.a,
                report.p50_a_ns,
                report.p90_a_ns,
                report.samples_a,
                report.within_rel_a,
                report.between_rel_a,
            ),
            (
                "B",
                &report.b,
                report.p50_b_ns,
                report.p90_b_ns,
                report.samples_b,
                report.within_rel_b,
                report.between_rel_b,
            ),
        ] {
            println!(
                "{slot} = {:<24} p50 {:>9}  p90 {:>9}  n {n}  spread within rounds {}, between rounds {}",
                v.name(),
                duration_ns(p50),
                duration_ns(p90),
                pct(within),
                pct(between)
            );
        }
        println!(
            "speedup p50(A)/p50(B) = {:.4}× [{:.4}, {:.4}] 95% ({}){}",
            report.speedup,
            report.ci_low,
            report.ci_high,
            report.test,
            if report.limited_by_resolution {
                "; this race's own interval is as narrow as the timer's step allows"
            } else {
                ""
            }
        );
        if let Some(r) = &report.reruns {
            println!(
                "  units: {}; placements' ratios spread σ {}% (docs/measurement.md)",
                r.source,
                crate::metrics::format::fixed(r.between_run_rel * 100.0, 3),
            );
        }
        if all_correct {
            println!("verdict: {}", report.verdict);
        } else {
            println!(
                "verdict: none (a side fails its correctness check; raced with --allow-incorrect: {})",
                report.verdict
            );
        }
        if let Some(r) = &expectation {
            match r {
                Ok(s) => println!("expectation met: {s}"),
                Err(s) => println!("EXPECTATION NOT MET: {s}"),
            }
        }
    }
    match expectation {
        Some(Err(_)) => exit::CHECK_FAILED,
        _ => 0,
    }
}

/// Why the race must not run: a side failed its check, and
/// `--allow-incorrect` was not given.
fn refusal(checks: &[CorrectnessReport], allow_incorrect: bool) -> Option<String> {
    let wrong: Vec<String> = checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| c.variant.name())
        .collect();
    (!wrong.is_empty() && !allow_incorrect).then(|| {
        format!(
            "no race, no verdict: {} fails its correctness check (--allow-incorrect races it anyway)",
            wrong.join(" and ")
        )
    })
}

/// Each side's check, one line each, and any failure's worst place.
fn print_checks(checks: &[CorrectnessReport], inputs: &crate::session::InputSet, seed: u64) {
    println!(
        "correctness on {} inputs, seed {seed} (--inputs {inputs} --seed {seed} reproduces it), {}",
        checks.first().map(|c| c.inputs_text()).unwrap_or_default(),
        checks
            .first()
            .map(crate::metrics::reference::coverage_text)
            .unwrap_or_default()
    );
    for c in checks {
        println!(
            "  {:<28} {}  margin {}",
            c.variant.name(),
            if c.pass { "PASS" } else { "FAIL" },
            c.worst_ratio()
                .map_or("—".into(), |r| format!("{:.1}×", 1.0 / r))
        );
        for line in crate::metrics::reference::check_lines(c) {
            println!("    {line}");
        }
    }
}

fn pct(rel: Option<f64>) -> String {
    rel.map_or("?".into(), |r| format!("±{:.2}%", r * 100.0))
}

/// Whether the race agrees with `--expect`; the message says why in words.
/// "faster" and "slower" need the race to have called it (and, with `--by`,
/// the whole interval past it); "same" needs no call, or with `--by` the
/// whole interval within ±by.
pub fn expectation_met(expect: &str, by_pct: Option<f64>, r: &AbReport) -> Result<String, String> {
    let by = by_pct.map_or(0.0, |p| p / 100.0);
    let interval = format!("[{:.4}, {:.4}]", r.ci_low, r.ci_high);
    let decided = r.decided();
    let more_than = |by: f64| {
        if by > 0.0 {
            format!(" by more than {:.1}%", by * 100.0)
        } else {
            " (called by the race)".into()
        }
    };
    let (ok, want) = match expect {
        "faster" => (
            decided == Decision::Faster && r.ci_low >= 1.0 + by,
            format!("B faster{}", more_than(by)),
        ),
        "slower" => (
            decided == Decision::Slower && r.ci_high <= 1.0 / (1.0 + by),
            format!("B slower{}", more_than(by)),
        ),
        _ => match by_pct {
            Some(p) => (
                r.ci_low >= 1.0 / (1.0 + by) && r.ci_high <= 1.0 + by,
                format!("no difference beyond ±{p:.1}%"),
            ),
            None => (
                !matches!(decided, Decision::Faster | Decision::Slower),
                "no difference detected".to_string(),
            ),
        },
    };
    let text = format!(
        "expected {want}; the speedup interval is {interval} ({})",
        r.verdict
    );
    if ok && r.ci_low.is_finite() {
        Ok(text)
    } else {
        Err(text)
    }
}

fn calibrate(
    engine: &mut Engine,
    sink: &mut Sink,
    v: &Variant,
    shape: &Shape,
    plan: &RacePlan,
    args: &AbArgs,
) -> i32 {
    let races = args.races.unwrap_or(20) as usize;
    let mut rows = Vec::new();
    let mut covered = 0usize;
    let mut own_covered = 0usize;
    let mut at_floor = 0usize;
    let mut called = 0usize;
    for i in 0..races {
        let r = match one_race(engine, sink, v, v, shape, plan) {
            Ok(r) => r,
            Err(e) => return fail(exit::CHECK_FAILED, e),
        };
        if i == 0 && !args.json {
            println!("A/A calibration of {v}: {}", conditions(engine, shape, &r));
        }
        let covers = r.ci_low <= 1.0 && 1.0 <= r.ci_high;
        covered += usize::from(covers);
        // The race's own interval before the timer's floor: what tests the statistics.
        let (lo, hi) = own_unpadded(&r);
        let own = lo <= 1.0 && 1.0 <= hi;
        own_covered += usize::from(own);
        at_floor += usize::from(r.limited_by_resolution);
        called += usize::from(matches!(r.decided(), Decision::Faster | Decision::Slower));
        if !args.json {
            println!(
                "race {:>3}: {:.4}× [{:.4}, {:.4}] {}; its own [{:.4}, {:.4}] {}{} {} rounds, first launch {:+.1}%  {}",
                i + 1,
                r.speedup,
                r.ci_low,
                r.ci_high,
                if covers { "covers 1.0" } else { "MISSES 1.0" },
                lo,
                hi,
                if own { "covers" } else { "MISSES" },
                if r.limited_by_resolution {
                    " (at the timer's floor)"
                } else {
                    ""
                },
                r.rounds,
                r.first_launch_excess.unwrap_or(f64::NAN) * 100.0,
                r.verdict
            );
        }
        rows.push(r);
    }
    let target = (races * 9).div_ceil(10);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "gpu": engine.info, "variant": v.name(), "shape": shape,
                "timer_resolution_ns": engine.timer_step_ns, "races": rows,
                "covered": covered, "of": races, "target": target, "differences_called": called,
                "own_covered_before_floor": own_covered, "at_timer_floor": at_floor,
            }))
            .unwrap_or_default()
        );
    } else {
        println!(
            "{own_covered} of {races} races' own intervals cover 1.0 before the timer's floor (target ≥ {target}); \
             {at_floor} of {races} were at the floor; {covered} of {races} printed intervals cover 1.0; \
             {called} verdicts called a difference"
        );
        if at_floor * 2 > races {
            println!(
                "most intervals were at the timer's floor: this calibrates the padding, not the statistics; calibrate a longer kernel"
            );
        }
    }
    if own_covered >= target {
        0
    } else {
        exit::CHECK_FAILED
    }
}

/// A race's own interval before the timer's floor; sessions without it give the printed one.
fn own_unpadded(r: &AbReport) -> (f64, f64) {
    r.reruns
        .as_ref()
        .and_then(|x| x.unpadded)
        .unwrap_or((r.ci_low, r.ci_high))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(low: f64, high: f64, verdict: &str) -> AbReport {
        let r = AbReport {
            speedup: (low + high) / 2.0,
            ci_low: low,
            ci_high: high,
            verdict: verdict.into(),
            ..AbReport::default()
        };
        AbReport {
            decision: Some(r.decided()),
            ..r
        }
    }

    #[test]
    fn a_side_that_fails_its_check_is_not_raced() {
        let check = |v: &str, pass| CorrectnessReport {
            variant: v.parse().unwrap(),
            pass,
            ..CorrectnessReport::default()
        };
        let both = [check("scalar", true), check("wmma+pv+async", true)];
        assert_eq!(refusal(&both, false), None);
        let b_wrong = [check("scalar", true), check("wmma+pv+async", false)];
        let why = refusal(&b_wrong, false).expect("refused");
        assert!(
            why.contains("wmma+pv+async fails") && !why.contains("scalar"),
            "{why}"
        );
        assert_eq!(refusal(&b_wrong, true), None, "--allow-incorrect races it");
    }

    #[test]
    fn expectations() {
        let faster = report(1.10, 1.12, "B faster by 11.0%");
        assert!(expectation_met("faster", None, &faster).is_ok());
        assert!(expectation_met("faster", Some(10.0), &faster).is_ok());
        assert!(expectation_met("faster", Some(15.0), &faster).is_err());
        assert!(expectation_met("slower", None, &faster).is_err());
        assert!(expectation_met("same", None, &faster).is_err());
        let same = report(0.995, 1.004, "no difference detected");
        assert!(expectation_met("same", None, &same).is_ok());
        assert!(expectation_met("same", Some(1.0), &same).is_ok());
        assert!(expectation_met("same", Some(0.1), &same).is_err());
        assert!(expectation_met("faster", None, &same).is_err());
        let slower = report(0.80, 0.82, "B slower by 23.5%");
        assert!(expectation_met("slower", Some(20.0), &slower).is_ok());
        assert!(
            expectation_met("faster", None, &slower)
                .unwrap_err()
                .contains("[0.8000, 0.8200]")
        );
        assert!(expectation_met("faster", None, &report(f64::NAN, f64::NAN, "x")).is_err());
    }
}
