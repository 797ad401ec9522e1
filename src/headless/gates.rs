//! `attnscope gates`: one variant's counters, correctness and speed judged by
//! the same gate set and the same fold the dashboard uses, as a table or JSON,
//! exit 1 on any FAIL. And `launch`, the bare target ncu profiles.

use serde_json::json;

use super::bench::{Check, bench_one};
use super::{Run, fail};
use crate::cli::{GatesArgs, LaunchArgs, exit};
use crate::gpu::engine::{CounterFailure, Engine, Timer};
use crate::gpu::measure::Plan;
use crate::gpu::profiler::RangeMode;
use crate::metrics::catalogue;
use crate::metrics::format::metric;
use crate::metrics::gates::{self, GateSet, Status};
use crate::model::state::{Key, SessionState};
use crate::session::event::*;
use crate::session::{Shape, Variant};

pub fn run(args: GatesArgs) -> i32 {
    let set = match GateSet::load(args.gates.as_deref()) {
        Ok(s) => s,
        Err(e) => return fail(exit::USAGE, e),
    };
    let defs = match catalogue::load(args.metrics.as_deref()) {
        Ok(d) => d,
        Err(e) => return fail(exit::USAGE, e),
    };
    let names = catalogue::collect_list(&defs, &set);
    let shape = args.problem.shape;
    let l2 = if args.l2 == "hot" {
        L2Mode::Hot
    } else {
        L2Mode::Cold
    };
    let range = if args.range == "user" {
        RangeMode::User
    } else {
        RangeMode::Auto
    };
    let mut run = match super::runnable([&args.variant.unwrap_or_else(Variant::start)], &shape)
        .and_then(|()| Run::start(Timer::Cupti, 0.0, args.record.as_deref()))
    {
        Ok(r) => r,
        Err(code) => return code,
    };
    let check = Check::new(args.inputs.clone(), args.seed);
    // A bare mma+async on Hopper is judged at its tuned tile (tune.rs).
    let variant = match super::tune::default_tile(
        &mut run,
        args.variant.unwrap_or_else(Variant::start),
        args.variant_arg.as_deref(),
        &shape,
        &Plan::default(),
        &check,
    ) {
        Ok(v) => v,
        Err(e) => return fail(exit::USAGE, e),
    };
    let Run {
        mut engine,
        mut sink,
        ..
    } = run;
    sink.state = Some(SessionState::default());
    let plan = Plan {
        max_s: args.max_seconds,
        min_s: args.max_seconds.min(0.5),
        ..Plan::default()
    };
    let mut timed = vec![variant];
    let needs_scalar = set
        .gates
        .iter()
        .any(|g| g.value.iter().any(|v| v == "attnscope:speedup_vs_scalar"));
    let scalar = scalar_beside(variant);
    if needs_scalar && variant != scalar {
        timed.push(scalar);
    }
    if !args.json {
        eprintln!("attnscope: {}", check.describe());
    }
    for v in &timed {
        // bench_one records the failure in the session.
        if let Err(e) = bench_one(&mut engine, &mut sink, v, &shape, &plan, None, &check) {
            eprintln!("attnscope: {v}: {e}");
        }
    }
    sink.event(Event::VariantSelected(VariantSelected { variant, shape }));
    let (counters_event, counter_error) =
        collect_counters(&mut engine, variant, shape, &names, l2, range, args.json);
    sink.event(counters_event);
    let state = sink.state.take().unwrap_or_default();
    let key = Key { variant, shape };
    let results = state.gates(&set, &key);
    let counters = state.variants.get(&key).and_then(|s| s.counters.clone());
    // Every timed variant's check, with its seeds and distributions.
    let checks: Vec<&CorrectnessReport> = timed
        .iter()
        .filter_map(|v| {
            state
                .variants
                .get(&Key { variant: *v, shape })
                .and_then(|s| s.correctness.as_ref())
        })
        .collect();
    let failed = results.iter().filter(|r| r.status == Status::Fail).count();
    let out = Outcome {
        variant,
        shape,
        defs: &defs,
        counters: counters.as_ref(),
        counter_error: counter_error.as_deref(),
        checks: &checks,
        results: &results,
    };
    out.print(&engine, args.json);
    if failed > 0 { exit::CHECK_FAILED } else { 0 }
}

/// What `attnscope gates` found, for its output.
struct Outcome<'a> {
    variant: Variant,
    shape: Shape,
    defs: &'a [catalogue::MetricDef],
    counters: Option<&'a CounterReport>,
    counter_error: Option<&'a str>,
    checks: &'a [&'a CorrectnessReport],
    results: &'a [gates::GateResult],
}

impl Outcome<'_> {
    /// The table, the counters and the checks, or all of it as JSON.
    fn print(&self, engine: &Engine, json: bool) {
        let Outcome {
            variant,
            shape,
            defs,
            counters,
            counter_error,
            checks,
            results,
        } = *self;
        let failed = results.iter().filter(|r| r.status == Status::Fail).count();
        // Undecided is not a failure (exit 0): the data cannot tell, and a CI
        // gate that flips on noise is worse than one that says so.
        let undecided = results
            .iter()
            .filter(|r| matches!(r.status, Status::Undecided(_)))
            .count();
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({
                    "gpu": engine.info,
                    "variant": variant.name(),
                    "shape": shape,
                    "counters": counters,
                    "counter_error": counter_error,
                    "checks": checks,
                    "gates": results,
                    "failed": failed,
                    "undecided": undecided,
                }))
                .unwrap_or_default()
            );
        } else {
            print_table(engine, &variant, &shape, defs, counters, results);
            if let Some(e) = counter_error {
                eprintln!("attnscope: counters: {e}");
            }
            print_checks(checks);
            if undecided > 0 {
                println!(
                    "{undecided} gate(s) undecided (?): the interval straddles the threshold; \
                     they do not fail the command. Sample longer (--max-seconds) or race the pair \
                     (attnscope ab) to decide."
                );
            }
        }
    }
}

/// The scalar kernel on the same tile, or on the default one where the
/// scalar path cannot take the tile (K/V splits, 32 rows per warp).
fn scalar_beside(variant: Variant) -> Variant {
    // scalar path cannot take the tile (K/V splits, 32 rows per warp).
    let base = if variant.is_library() {
        Variant::base()
    } else {
        Variant::base_of(variant.kernel)
    };
    let same_tile = Variant {
        tile: variant.tile,
        ..base
    };
    if same_tile.check().is_ok() {
        same_tile
    } else {
        base
    }
}

/// The variant's counters, as the event the session records, and the
/// error in words when there are none.
fn collect_counters(
    engine: &mut Engine,
    variant: Variant,
    shape: Shape,
    names: &[String],
    l2: L2Mode,
    range: RangeMode,
    json: bool,
) -> (Event, Option<String>) {
    let t = std::time::Instant::now();
    let collected = engine.collect_counters(&variant, &shape, names, l2, range, &mut |k, n| {
        if !json {
            eprint!("\rattnscope: counters pass {k} of {n}");
        }
        true
    });
    if !json {
        eprintln!();
    }
    let wall_ms = t.elapsed().as_secs_f64() * 1e3;
    match collected {
        Ok(c) => (
            Event::Counters(CounterReport {
                variant,
                shape,
                range: c.range(),
                values: c.values,
                passes: c.passes,
                collection_ms: wall_ms,
                l2,
                chip: engine.counter_chip().unwrap_or_default(),
                refused: c.refused,
                setup_ms: c.setup_ms,
            }),
            None,
        ),
        Err(e) => {
            let no_gpu = matches!(e, CounterFailure::Engine(_));
            let event = Event::Error(ErrorReport {
                source: if no_gpu { "gpu" } else { "cupti" }.into(),
                message: e.to_string(),
                variant: Some(variant),
            });
            (event, Some(e.to_string()))
        }
    }
}

/// Each timed variant's check, and the failures' lines.
fn print_checks(checks: &[&CorrectnessReport]) {
    for c in checks {
        println!(
            "check of {}: {} on {} inputs (seed {}), {}",
            c.variant.name(),
            if c.pass { "PASS" } else { "FAIL" },
            c.inputs_text(),
            c.seed,
            crate::metrics::reference::coverage_text(c)
        );
        for line in crate::metrics::reference::check_lines(c) {
            println!("  {line}");
        }
    }
}

fn print_table(
    engine: &Engine,
    variant: &Variant,
    shape: &Shape,
    defs: &[catalogue::MetricDef],
    counters: Option<&CounterReport>,
    results: &[gates::GateResult],
) {
    println!(
        "{} ({}), {variant} at {shape}{}",
        engine.info.name,
        engine.arch,
        counters.map_or(String::new(), |c| format!(
            ", counters on {} in {} passes, {:.0} ms ({:.0} ms setup), range {}, L2 {:?}",
            c.chip, c.passes, c.collection_ms, c.setup_ms, c.range, c.l2
        ))
    );
    println!(
        "{:<22} {:>12} {:>12}  {:<4}  why",
        "gate", "value", "threshold", ""
    );
    for r in results {
        let why = r.note();
        println!(
            "{:<22} {:>12} {:>12}  {:<4}  {why}",
            r.name,
            r.value
                .map(|v| metric(v, &r.unit))
                .unwrap_or_else(|| "—".into()),
            format!("{} {}", r.op.symbol(), metric(r.threshold, &r.unit)),
            r.status.to_string(),
        );
    }
    if let Some(c) = counters {
        println!(
            "\n{:<68} {:>16}  unit",
            "metric (Nsight Compute name)", "value"
        );
        for (name, v) in &c.values {
            let def = defs.iter().find(|d| &d.name == name);
            let unit = def.map_or("", |d| d.unit.as_str());
            println!("{name:<68} {v:>16.4}  {unit}");
            if let Some(note) = def.and_then(|d| d.note.as_deref()) {
                println!("{:<68}   note: {note}", "");
            }
        }
        for (name, why) in &c.refused {
            println!("{name:<68} {:>16}  {why}", "refused");
        }
    }
}

/// Prepares and launches one variant `count` times, then exits: no CUPTI, no
/// timing, nothing on the stream but the kernel (and its inputs' upload).
pub fn launch(args: LaunchArgs) -> i32 {
    let shape = args.problem.shape;
    let variant = args.variant.unwrap_or_else(Variant::start);
    if let Err(code) = super::runnable([&variant], &shape) {
        return code;
    }
    let mut engine = match Engine::new() {
        Ok(e) => e,
        Err(e) => return fail(exit::NO_GPU, e),
    };
    match engine.launch_n(&variant, &shape, args.count as usize) {
        Ok(()) => 0,
        Err(e) => fail(exit::CHECK_FAILED, format!("{variant}: {e}")),
    }
}
