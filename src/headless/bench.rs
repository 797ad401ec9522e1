//! `attnscope bench`: build, check and time variants back to back, one table.

use serde_json::json;

use super::{Run, Sink, fail, sampler_cost, tune};
use crate::cli::{BenchArgs, VariantSpec, exit};
use crate::gpu::engine::{Engine, EngineError, Timer};
use crate::gpu::executor::Worker;
use crate::gpu::measure::{self, Plan};
use crate::metrics::histogram::LatencyStats;
use crate::session::event::*;
use crate::session::{InputSet, Inputs, Shape};

pub fn bench(args: BenchArgs) -> i32 {
    let shape = args.problem.shape;
    let wanted = if args.timer == "events" {
        Timer::CudaEvents
    } else {
        Timer::Cupti
    };
    let named: Vec<crate::session::Variant> = args.variants.0.iter().map(|s| s.variant()).collect();
    if let Err(code) = super::runnable(&named, &shape) {
        return code;
    }
    let mut run = match Run::start(wanted, args.telemetry_hz, args.record.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let plan = Plan {
        l2: if args.cold_l2 {
            L2Mode::Cold
        } else {
            L2Mode::Hot
        },
        regime: args.regime,
        max_s: args.max_seconds,
        warm_s: args.warm_seconds,
        ..Plan::default()
    };
    let check = Check::new(args.inputs, args.seed);
    let variants = match resolve_tuned(&mut run, &args.variants.0, &shape, &plan, &check) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let Run {
        mut engine,
        mut sink,
        sampler,
        started,
    } = run;
    let timer = engine.timer();
    let mut rows = Vec::new();
    let mut any_fail = false;
    for variant in &variants {
        match bench_one(
            &mut engine,
            &mut sink,
            variant,
            &shape,
            &plan,
            args.launches,
            &check,
        ) {
            Ok((row, pass)) => {
                any_fail |= !pass;
                rows.push(row);
            }
            Err(e) => {
                any_fail = true;
                eprintln!("attnscope: {variant}: {e}");
                rows.push(json!({"variant": variant.name(), "error": e.to_string()}));
            }
        }
    }
    let cudnn_us = add_vs_cudnn(&mut rows);
    let gpu = &engine.info;
    let cost = sampler_cost(&sampler, started.elapsed().as_secs_f64());
    drop(sampler);
    sink.drain();
    if let Some(c) = cost {
        print_sampler_cost(&c, args.telemetry_hz);
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "gpu": gpu, "shape": shape, "l2": engine.isolation.l2_in(plan.regime, plan.l2), "regime": plan.regime.name(),
                "timer": timer, "timer_resolution_ns": engine.timer_step_ns,
                "inputs": check.inputs.to_string(), "seed": check.seed, "results": rows
            }))
            .unwrap_or_default()
        );
    } else {
        print_table(&engine, &shape, &plan, &check, &rows, cudnn_us.is_some());
    }
    if any_fail { exit::CHECK_FAILED } else { 0 }
}

/// The variants to bench, each `@tuned` one (and a bare mma+async on
/// Hopper) replaced by the tile tuned for this shape; the exit code when
/// one cannot be tuned.
fn resolve_tuned(
    run: &mut Run,
    specs: &[VariantSpec],
    shape: &Shape,
    plan: &Plan,
    check: &Check,
) -> Result<Vec<crate::session::Variant>, i32> {
    let mut variants = Vec::new();
    for spec in specs {
        match *spec {
            VariantSpec::Fixed(v) => variants.push(v),
            VariantSpec::Bare(v) => {
                let text = v.name();
                match tune::default_tile(run, v, Some(&text), shape, plan, check) {
                    Ok(t) => variants.push(t),
                    Err(e) => return Err(fail(exit::USAGE, e)),
                }
            }
            VariantSpec::Tuned(v) => {
                let tune_plan = Plan {
                    max_s: plan.max_s.min(1.0),
                    ..*plan
                };
                match tune::resolve(run, v, shape, &tune_plan, check) {
                    Ok(t) => variants.push(t),
                    Err(e) => return Err(fail(exit::USAGE, format!("{v}@tuned: {e}"))),
                }
            }
        }
    }
    Ok(variants)
}

/// Each variant's time over cuDNN's, when cuDNN ran in this bench and
/// passed its check; cuDNN's median, µs.
fn add_vs_cudnn(rows: &mut [serde_json::Value]) -> Option<f64> {
    let cudnn_us = cudnn_median_us(rows);
    if let Some(c) = cudnn_us {
        for r in rows.iter_mut() {
            if let Some(m) = r["median_us"].as_f64() {
                r["vs_cudnn"] = json!(m / c);
            }
        }
    }
    cudnn_us
}

fn print_sampler_cost(c: &super::SamplerCost, hz: f64) {
    eprintln!(
        "attnscope: telemetry: {} NVML samples at {} Hz over {:.1} s used {:.3}% of one core \
             ({:.2} ms of it inside NVML queries)",
        c.samples,
        hz,
        c.wall_s,
        c.share * 100.0,
        c.query_ms
    );
}

/// The bench's heading, one row per variant, the checks and the footnotes.
fn print_table(
    engine: &Engine,
    shape: &Shape,
    plan: &Plan,
    check: &Check,
    rows: &[serde_json::Value],
    with_cudnn: bool,
) {
    let (gpu, timer) = (&engine.info, engine.timer());
    println!(
        "{} ({}), {shape}, {} ({:?} L2), GPU time per launch from {} (step {})",
        gpu.name,
        engine.arch,
        plan.regime.name(),
        engine.isolation.l2_in(plan.regime, plan.l2),
        timer.name(),
        engine.timer_step_ns.map_or("unknown".into(), |s| format!(
            "{} ns",
            crate::metrics::format::step_text(s)
        ))
    );
    println!("{}", check.describe());
    if plan.warm_s > 0.0 {
        println!(
            "each variant ran untimed first, in the same regime: at least {} s (--warm-seconds) and, back to back, until the SM clock stopped falling (at most {} s)",
            plan.warm_s,
            crate::gpu::measure::WARM_MAX_S
        );
    }
    let w = name_width(rows);
    println!(
        "{:<w$} {:>9} {:>8} {:>9} {:>9} {:>8} {:>6} {:>9} {:>5} {:>7} {:>6} {:>7}{}",
        "variant",
        "p50 µs",
        "±95%",
        "p90 µs",
        "p99 µs",
        "TFLOP/s",
        "roof",
        "margin",
        "regs",
        "smem",
        "spill",
        "correct",
        if with_cudnn { "  ÷ cuDNN" } else { "" }
    );
    let mut any_at_step = false;
    for r in rows {
        if let Some(e) = r.get("error") {
            println!("{:<w$} ERROR {}", r["variant"].as_str().unwrap_or(""), e);
            continue;
        }
        let (line, at_step) = row_line(r, w);
        any_at_step |= at_step;
        println!("{line}");
    }
    println!(
        "p50: grouped median on the timer's grid; ±95%: where a rerun's median lands, from this run's \
         units ({}; docs/measurement.md)",
        rerun_sources(rows)
    );
    if let Some(line) = busy_line(rows) {
        println!("{line}");
    }
    if let Some(note) = host_bound_note(rows) {
        println!("{note}");
    }
    print_checks(rows);
    if any_at_step {
        println!("{AT_STEP_NOTE}");
    }
    if let Some(note) = no_interval_note(rows) {
        println!("{note}");
    }
    if any_roof(rows) {
        println!("{ROOF_NOTE}");
    }
    if with_cudnn {
        println!("÷ cuDNN: p50 over cuDNN's p50 in this run, same regime (below 1: faster)");
    }
}

/// What each row's interval was made of, said once: "mma+async: 64 placements and 6 stretches
/// of this run (placements spread 0.41%)".
fn rerun_sources(rows: &[serde_json::Value]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for r in rows {
        if let (Some(s), Some(rel)) = (
            r["between_run_source"].as_str(),
            r["between_run_rel"].as_f64(),
        ) {
            let name = r["variant"].as_str().unwrap_or("");
            let spread = if s.contains("placements") {
                format!(
                    " (placements spread {}%)",
                    crate::metrics::format::fixed(rel * 100.0, 2)
                )
            } else {
                String::new()
            };
            seen.push(format!("{name}: {s}{spread}"));
        }
    }
    if seen.is_empty() {
        "not recorded".into()
    } else {
        seen.join("; ")
    }
}

/// One variant's row of the table, and whether its interval is the timer's
/// step.
fn row_line(r: &serde_json::Value, w: usize) -> (String, bool) {
    let (noise, at_step) = noise_cell(r);
    let vs = r["vs_cudnn"]
        .as_f64()
        .map_or(String::new(), |x| format!("  {x:>7.3}"));
    // Unknown resources (cuDNN's kernel) print as —, never as 0.
    let num = |v: &serde_json::Value| v.as_u64().map_or("—".to_string(), |n| n.to_string());
    let smem = if r["registers"].is_null() {
        "—".to_string()
    } else {
        format!("{}K", r["smem_bytes"].as_u64().unwrap_or(0) / 1024)
    };
    let line = format!(
        "{:<w$} {:>9.2} {:>8} {:>9.2} {:>9.2} {:>8.2} {:>6} {:>9} {:>5} {:>7} {:>6} {:>7}{vs}",
        r["variant"].as_str().unwrap_or(""),
        r["median_us"].as_f64().unwrap_or(f64::NAN),
        noise,
        r["p90_us"].as_f64().unwrap_or(f64::NAN),
        r["p99_us"].as_f64().unwrap_or(f64::NAN),
        r["tflops"].as_f64().unwrap_or(f64::NAN),
        roof_cell(r),
        margin_text(r),
        num(&r["registers"]),
        smem,
        num(&r["spill_bytes"]),
        if r["correct"].as_bool() == Some(true) {
            "PASS"
        } else {
            "FAIL"
        },
    );
    (line, at_step)
}

/// A row's interval as a table cell (`±0.33%`, `*` when it is the timer's step, which a footnote
/// explains once) and whether it was: a note inside the cell would push the columns after it.
pub(super) fn noise_cell(r: &serde_json::Value) -> (String, bool) {
    let rel = r["rel_noise"].as_f64().unwrap_or(f64::NAN);
    // With a rerun term the cell is wider than the step; the mark is for intervals that are the step.
    let at_step =
        r["limited_by_resolution"].as_bool() == Some(true) && r["between_run_rel"].is_null();
    let cell = if rel.is_finite() {
        format!(
            "±{}%{}",
            crate::metrics::format::fixed(rel * 100.0, 2),
            if at_step { "*" } else { "" }
        )
    } else {
        "?".into()
    };
    (cell, at_step)
}

/// How busy each variant kept the GPU back to back (median over batches of
/// kernel time over the batch's time, the gap before it included), when
/// the timer could tell.
pub(super) fn busy_line(rows: &[serde_json::Value]) -> Option<String> {
    let parts: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let f = r["busy_fraction"].as_f64()?;
            Some(format!(
                "{} {}%",
                r["variant"].as_str().unwrap_or("?"),
                crate::metrics::format::fixed(f * 100.0, 1)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "GPU busy in the kernels, median over batches (gaps between batches count): {}",
            parts.join(", ")
        )
    })
}

/// Below this share of busy GPU time a back-to-back row ran mostly after an
/// idle GPU, as if alone.
const HOST_BOUND_BELOW: f64 = 0.5;

/// The rows whose host could not keep the GPU fed back to back (a `py:`
/// call's Python outlasting its kernels), said so: their times are those of
/// kernels that start on an idle GPU, not under sustained load.
pub(super) fn host_bound_note(rows: &[serde_json::Value]) -> Option<String> {
    let parts: Vec<String> = rows
        .iter()
        .filter(|r| {
            r["busy_fraction"]
                .as_f64()
                .is_some_and(|f| f < HOST_BOUND_BELOW)
        })
        .map(|r| {
            let host = r["launch_overhead_us"]
                .as_f64()
                .map(|us| {
                    format!(
                        ", {} µs of host time a call",
                        crate::metrics::format::fixed(us, 0)
                    )
                })
                .unwrap_or_default();
            format!("{}{host}", r["variant"].as_str().unwrap_or("?"))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "host-bound back to back (the GPU waited for the host most of the time, so these kernels start on an idle GPU, as if run alone): {}",
            parts.join("; ")
        )
    })
}

/// The footnote for a `*` in the interval column.
pub(super) const AT_STEP_NOTE: &str =
    "* the interval is the timer's step: the median is steadier than the timer resolves";

/// The footnote for a `?` in the interval column: which rows had too few
/// batches for one, and what gives them more. A `py:` call also pays
/// Python's launch on the CPU, so its batches fill the time slowly.
pub(super) fn no_interval_note(rows: &[serde_json::Value]) -> Option<String> {
    let short: Vec<String> = rows
        .iter()
        .filter(|r| r.get("error").is_none() && r.get("not_taken").is_none())
        .filter(|r| noise_cell(r).0 == "?")
        .map(|r| {
            format!(
                "{} ({} batch{})",
                r["variant"].as_str().unwrap_or("?"),
                r["batches"].as_u64().unwrap_or(0),
                if r["batches"].as_u64() == Some(1) {
                    ""
                } else {
                    "es"
                }
            )
        })
        .collect();
    (!short.is_empty()).then(|| {
        format!(
            "? no interval: {} in the time given, where an interval needs {}; raise --max-seconds",
            short.join(", "),
            crate::metrics::bootstrap::MIN_BLOCKS
        )
    })
}

/// cuDNN's median in a table's rows, µs, when it ran and passed its check
/// (a ratio to a wrong kernel is no ratio).
pub(super) fn cudnn_median_us(rows: &[serde_json::Value]) -> Option<f64> {
    rows.iter()
        .find(|r| r["variant"] == "cudnn" && r["correct"].as_bool() == Some(true))
        .and_then(|r| r["median_us"].as_f64())
}

/// A row's margin: the bounds over its worst error ("3.9×"; below 1× fails).
pub(super) fn margin_text(r: &serde_json::Value) -> String {
    r["margin"]
        .as_f64()
        .map_or("—".into(), |m| format!("{m:.1}×"))
}

/// Under a table: what the checks compared, and each failure's worst place.
pub(super) fn print_checks(rows: &[serde_json::Value]) {
    let mut said = Vec::new();
    for r in rows {
        if let Some(c) = r["checked"].as_str().filter(|c| !said.contains(c)) {
            println!(
                "checked: {c}; margin: the bounds over the worst error, elements and rows (docs/measurement.md)"
            );
            said.push(c);
        }
    }
    for r in rows {
        let Ok(c) =
            serde_json::from_value::<crate::session::event::CorrectnessReport>(r["check"].clone())
        else {
            continue;
        };
        for line in crate::metrics::reference::check_lines(&c) {
            println!("{}: {line}", c.variant.name());
        }
    }
}

/// The variant column's width: wide enough for tuned names such as
/// mma+async@64x64s2w8k2.
pub(super) fn name_width(rows: &[serde_json::Value]) -> usize {
    rows.iter()
        .filter_map(|r| r["variant"].as_str())
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(16)
}

/// What a correctness check draws: distributions and a seed (printed, so
/// `--inputs … --seed` reproduces it).
#[derive(Clone, Debug)]
pub struct Check {
    pub inputs: InputSet,
    pub seed: u64,
}

impl Check {
    /// `--inputs` and `--seed`, a fresh seed when none was given.
    pub fn new(inputs: InputSet, seed: Option<u64>) -> Check {
        Check {
            inputs,
            seed: seed.unwrap_or_else(crate::session::inputs::fresh_seed),
        }
    }

    /// The line commands print before they check.
    pub fn describe(&self) -> String {
        format!(
            "correctness on {} inputs, seed {} (--inputs {} --seed {} reproduces it)",
            self.inputs
                .0
                .iter()
                .map(Inputs::to_string)
                .collect::<Vec<_>>()
                .join(" and "),
            self.seed,
            self.inputs,
            self.seed
        )
    }
}

/// Builds, checks and times one variant for `bench`, recording as it goes
/// (a failure too, as the live worker records it, so a session says why a
/// variant has no times); returns its table row and whether it was correct.
pub(super) fn bench_one(
    engine: &mut Engine,
    sink: &mut Sink,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    launches: Option<u32>,
    check: &Check,
) -> Result<(serde_json::Value, bool), EngineError> {
    sink.event(Event::VariantSelected(VariantSelected {
        variant: *variant,
        shape: *shape,
    }));
    let result = time_one(engine, sink, variant, shape, plan, launches, check);
    if let Err(e) = &result {
        sink.event(failure(variant, e));
    }
    result
}

/// A failed variant's event: a compile error with its log, else the fault.
fn failure(variant: &Variant, e: &EngineError) -> Event {
    match e {
        EngineError::Build(crate::gpu::nvrtc::BuildError::Compile { log, arch, .. }) => {
            Event::BuildFailed(BuildFailure {
                variant: *variant,
                arch: arch.clone(),
                log: log.clone(),
            })
        }
        e => Event::Error(ErrorReport {
            source: "gpu".into(),
            message: e.to_string(),
            variant: Some(*variant),
        }),
    }
}

/// `bench_one` after the selection.
fn time_one(
    engine: &mut Engine,
    sink: &mut Sink,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    launches: Option<u32>,
    check: &Check,
) -> Result<(serde_json::Value, bool), EngineError> {
    let build = engine.prepare(variant, shape)?;
    sink.event(Event::BuildFinished(Worker::build_report(
        engine, variant, shape, &build,
    )));
    let check = engine.check(variant, shape, &check.inputs, check.seed)?;
    sink.event(Event::Correctness(check.clone()));
    let mut stats = LatencyStats::default();
    // The fastest SM clock a batch ran at: the tensor roof's clock.
    let mut clock: Option<u32> = None;
    let done = match launches {
        Some(n) => {
            let (d, batch) = measure::fixed(engine, variant, shape, plan, n as usize)?;
            stats.extend(&batch.samples_ns);
            clock = batch.sm_clock_mhz;
            sink.event(Event::Latency(batch));
            d
        }
        None => {
            let on_batch = |b: LatencyBatch| {
                stats.extend(&b.samples_ns);
                clock = clock.max(b.sm_clock_mhz);
                sink.drain();
                sink.event(Event::Latency(b));
            };
            measure::measure(engine, variant, shape, plan, on_batch, || true)?.0
        }
    };
    sink.event(Event::MeasurementDone(done.clone()));
    let pass = check.pass;
    let p = stats.percentiles().unwrap_or_default();
    let row = json!({
        "variant": variant.name(),
        "shape": shape,
        "regime": plan.regime.name(),
        "median_us": done.median_ns / 1e3,
        "median_ci_us": [done.ci_low_ns.map(|x| x / 1e3), done.ci_high_ns.map(|x| x / 1e3)],
        "p50_us": p.p50_ns / 1e3, "p90_us": p.p90_ns / 1e3, "p99_us": p.p99_ns / 1e3, "min_us": p.min_ns / 1e3,
        "samples": p.count,
        "batches": done.batches,
        "rel_noise": done.rel_noise,
        "noise": crate::metrics::format::median_interval(&done),
        "limited_by_resolution": done.limited_by_resolution,
        "run_ci_us": done.reruns.as_ref().map(|r| [r.run_low / 1e3, r.run_high / 1e3]),
        "between_run_rel": done.reruns.as_ref().map(|r| r.between_run_rel),
        "between_run_source": done.reruns.as_ref().map(|r| r.source.clone()),
        "warm_s": done.warm_s.unwrap_or(0.0),
        "busy_fraction": done.busy_fraction,
        "wall_s": done.wall_s,
        "within_batch_rel": done.within_batch_rel,
        "between_batch_rel": done.between_batch_rel,
        "inputs": check.inputs_text(),
        "seed": check.seed,
        "stop_reason": done.stop_reason,
        "launch_overhead_us": done.launch_overhead_us,
        "tflops": shape.flops() / (done.median_ns * 1e-9) / 1e12,
        "speed_of_light": light_json(engine, shape, done.median_ns, clock),
        "max_abs_err": check.max_abs_err,
        "rel_l2_err": check.rel_l2_err,
        "correct": check.pass,
        // The bounds over the worst error (elements and rows, every check):
        // above 1 passes by that factor.
        "margin": check.worst_ratio().map(|r| 1.0 / r),
        "checked": crate::metrics::reference::coverage_text(&check),
        "pooled": crate::metrics::reference::pooled_text(&check),
        "check": check,
        // cuDNN's kernel has no PTXAS report: its resources are unknown, not 0.
        "registers": (!variant.is_library()).then_some(build.registers),
        "smem_bytes": engine.smem_bytes(variant, shape).unwrap_or(0) + build.smem_static_bytes,
        "spill_bytes": (!variant.is_library())
            .then_some(build.spill_store_bytes + build.spill_load_bytes),
    });
    Ok((row, pass))
}

/// Where a median puts the variant under this GPU's roofs
/// (`metrics::roofline`): the tensor peak at `clock_mhz` (else the device's
/// rated clock) and the copy bandwidth measured at start. Null when nothing
/// can be placed.
fn light_json(
    engine: &mut Engine,
    shape: &Shape,
    median_ns: f64,
    clock_mhz: Option<u32>,
) -> serde_json::Value {
    use crate::metrics::roofline::{Roofs, place};
    let bw = engine.copy_bandwidth().ok().map(|c| c.roof());
    let rated = Some(engine.expected_mhz);
    let clock = crate::metrics::roofline::roof_clock(clock_mhz, rated, rated);
    let roofs = Roofs::of(engine.info.cc(), engine.info.sm_count, clock, bw);
    let Some(l) = place(shape.flops(), shape.io_bytes(), median_ns * 1e-9, &roofs) else {
        return serde_json::Value::Null;
    };
    json!({
        "tb_per_s": l.bytes_per_s / 1e12,
        "intensity": l.intensity,
        "peak_pct": l.peak_pct,
        "bandwidth_pct": l.bandwidth_pct,
        "roof_pct": l.roof_pct,
        "bound": l.bound.map(|b| b.word()),
        "clock_mhz": clock,
        "peak_tflops": roofs.peak_flops.map(|p| p / 1e12),
        "memory_roof_tb_per_s": roofs.bandwidth.map(|b| b / 1e12),
    })
}

/// What the roof column means, printed under a table that has one.
pub(super) const ROOF_NOTE: &str = "roof: the time against the lower roof over the problem's FLOPs per byte of Q, K, V \
     and O (C: the tensor peak at the batches' SM clock, M: the faster of a copy and a read-only stream measured at start)";

/// Whether any row was placed under a roof.
pub(super) fn any_roof(rows: &[serde_json::Value]) -> bool {
    rows.iter()
        .any(|r| r["speed_of_light"]["roof_pct"].is_f64())
}

/// A row's "% of the roof" cell: "71% C" under the compute roof, "85% M"
/// under the memory roof, — when no roof is known.
pub(super) fn roof_cell(r: &serde_json::Value) -> String {
    let l = &r["speed_of_light"];
    match (l["roof_pct"].as_f64(), l["bound"].as_str()) {
        (Some(p), Some(b)) => {
            let bound = if b == "memory" {
                crate::metrics::roofline::Bound::Memory
            } else {
                crate::metrics::roofline::Bound::Compute
            };
            format!("{p:.0}% {}", bound.letter())
        }
        _ => "—".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roof_cells_name_the_binding_roof() {
        let row = |pct: f64, bound: &str| serde_json::json!({"speed_of_light": {"roof_pct": pct, "bound": bound}});
        assert_eq!(roof_cell(&row(70.6, "compute")), "71% C");
        assert_eq!(roof_cell(&row(85.2, "memory")), "85% M");
        assert_eq!(roof_cell(&serde_json::json!({"speed_of_light": null})), "—");
    }

    #[test]
    fn no_ratio_to_a_cudnn_that_failed_its_check() {
        let rows = |correct| {
            vec![
                serde_json::json!({"variant": "scalar", "median_us": 60.0, "correct": true}),
                serde_json::json!({"variant": "cudnn", "median_us": 8.0, "correct": correct}),
            ]
        };
        assert_eq!(cudnn_median_us(&rows(true)), Some(8.0));
        assert_eq!(cudnn_median_us(&rows(false)), None);
        assert_eq!(margin_text(&serde_json::json!({"margin": 3.94})), "3.9×");
        assert_eq!(margin_text(&serde_json::json!({})), "—");
        // The sweep's table printed the interval's note inside its column.
        let at_step = serde_json::json!({"rel_noise": 0.0033, "limited_by_resolution": true});
        assert_eq!(noise_cell(&at_step), ("±0.33%*".to_string(), true));
        assert_eq!(noise_cell(&serde_json::json!({})), ("?".to_string(), false));
    }

    #[test]
    fn a_missing_interval_is_explained_with_its_batches() {
        let with = serde_json::json!({"variant": "cudnn", "rel_noise": 0.003, "batches": 15});
        let without = serde_json::json!({"variant": "py:flex", "rel_noise": null, "batches": 3});
        assert_eq!(no_interval_note(std::slice::from_ref(&with)), None);
        let note = no_interval_note(&[with, without]).expect("a row without an interval");
        assert!(note.contains("py:flex (3 batches)"), "{note}");
        assert!(note.contains("needs 5"), "{note}");
        let busy = [
            serde_json::json!({"variant": "mma", "busy_fraction": 0.9912}),
            serde_json::json!({"variant": "cudnn", "busy_fraction": null}),
        ];
        assert_eq!(
            busy_line(&busy).unwrap(),
            "GPU busy in the kernels, median over batches (gaps between batches count): mma 99.1%"
        );
        assert_eq!(busy_line(&busy[1..]), None);
    }

    #[test]
    fn a_host_bound_row_is_named_with_its_host_time() {
        let rows = [
            serde_json::json!({"variant": "cudnn", "busy_fraction": 0.996, "launch_overhead_us": 6.9}),
            serde_json::json!({"variant": "py:flex", "busy_fraction": 0.086, "launch_overhead_us": 169.3}),
            serde_json::json!({"variant": "mma", "busy_fraction": null}),
        ];
        let note = host_bound_note(&rows).expect("py:flex is host-bound");
        assert!(
            note.ends_with(": py:flex, 169 µs of host time a call"),
            "{note}"
        );
        assert_eq!(host_bound_note(&rows[..1]), None);
    }
}
