//! The headless commands: bench, selftest, doctor, gates. They drive the GPU
//! room's engine and print tables or JSON.

pub mod gates;
pub mod tune;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Instant;

use serde_json::json;

use crate::cli::{AbArgs, BenchArgs, BuildArgs, SelftestArgs, VariantSpec, exit};
use crate::gpu::engine::{Engine, EngineError, Timer};
use crate::gpu::libs::{self, Lib};
use crate::gpu::measure::{self, Plan};
use crate::gpu::nvrtc::{self, KERNEL_SOURCE};
use crate::gpu::race::{self, RaceEvent, RacePlan};
use crate::gpu::telemetry::{self, Sampler};
use crate::gpu::worker::Worker;
use crate::metrics::histogram::LatencyStats;
use crate::session::event::*;
use crate::session::recorder::Recorder;
use crate::session::{Shape, TileConfig};

pub fn bench(args: BenchArgs) -> i32 {
    let shape = Shape {
        causal: args.causal,
        ..args.shape
    };
    let wanted = if args.timer == "events" {
        Timer::CudaEvents
    } else {
        Timer::Cupti
    };
    let source = match kernel_source(args.kernels.as_deref()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut run = match Run::start_with(source, wanted, args.telemetry_hz, args.record.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let plan = Plan {
        l2: if args.cold_l2 {
            L2Mode::Cold
        } else {
            L2Mode::Hot
        },
        max_s: args.max_seconds,
        ..Plan::default()
    };
    let mut variants = Vec::new();
    for spec in &args.variants.0 {
        match *spec {
            VariantSpec::Fixed(v) => variants.push(v),
            VariantSpec::Tuned(v) => {
                let tune_plan = Plan {
                    max_s: plan.max_s.min(1.0),
                    ..plan
                };
                match tune::resolve(&mut run, v.toggles, &shape, &tune_plan) {
                    Ok(t) => variants.push(t),
                    Err(e) => return fail(exit::USAGE, format!("{v}@tuned: {e}")),
                }
            }
        }
    }
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
    let gpu = &engine.info;
    let cost = sampler_cost(&sampler, started.elapsed().as_secs_f64());
    drop(sampler);
    sink.drain();
    if let Some(c) = cost {
        eprintln!(
            "attnscope: telemetry: {} NVML samples at {} Hz over {:.1} s used {:.3}% of one core \
             ({:.2} ms of it inside NVML queries)",
            c.samples,
            args.telemetry_hz,
            c.wall_s,
            c.share * 100.0,
            c.query_ms
        );
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"gpu": gpu, "shape": shape, "l2": plan.l2, "timer": timer, "results": rows})
            )
            .unwrap_or_default()
        );
    } else {
        println!(
            "{} ({}), {shape}, {:?} L2, GPU time per launch from {}",
            gpu.name,
            engine.arch,
            plan.l2,
            timer.name()
        );
        // Wide enough for tuned names such as mma+async@64x64s2w8k2.
        let w = rows
            .iter()
            .filter_map(|r| r["variant"].as_str())
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(0)
            .max(16);
        println!(
            "{:<w$} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9} {:>5} {:>7} {:>6} {:>7}",
            "variant",
            "p50 µs",
            "p90 µs",
            "p99 µs",
            "noise",
            "TFLOP/s",
            "max err",
            "regs",
            "smem",
            "spill",
            "correct"
        );
        for r in &rows {
            if let Some(e) = r.get("error") {
                println!("{:<w$} ERROR {}", r["variant"].as_str().unwrap_or(""), e);
                continue;
            }
            println!(
                "{:<w$} {:>9.2} {:>9.2} {:>9.2} {:>6.2}% {:>8.2} {:>9.2e} {:>5} {:>6}K {:>6} {:>7}",
                r["variant"].as_str().unwrap_or(""),
                r["p50_us"].as_f64().unwrap_or(f64::NAN),
                r["p90_us"].as_f64().unwrap_or(f64::NAN),
                r["p99_us"].as_f64().unwrap_or(f64::NAN),
                r["rel_noise"].as_f64().unwrap_or(f64::NAN) * 100.0,
                r["tflops"].as_f64().unwrap_or(f64::NAN),
                r["max_abs_err"].as_f64().unwrap_or(f64::NAN),
                r["registers"],
                r["smem_bytes"].as_u64().unwrap_or(0) / 1024,
                r["spill_bytes"],
                if r["correct"].as_bool() == Some(true) {
                    "PASS"
                } else {
                    "FAIL"
                },
            );
        }
    }
    if any_fail { exit::CHECK_FAILED } else { 0 }
}

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

/// Where a headless run's events go: a session file, when asked for.
struct Sink {
    recorder: Option<Recorder>,
    started: Instant,
    telemetry: mpsc::Receiver<Stamped>,
    /// The dashboard's fold of what was written, for commands that judge it.
    state: Option<crate::ui::state::SessionState>,
}

impl Sink {
    fn new(
        path: Option<&Path>,
        started: Instant,
        telemetry: mpsc::Receiver<Stamped>,
    ) -> Result<Sink, String> {
        let recorder = path
            .map(|p| {
                Recorder::create(p).map_err(|e| format!("cannot record to {}: {e}", p.display()))
            })
            .transpose()?;
        Ok(Sink {
            recorder,
            started,
            telemetry,
            state: None,
        })
    }

    fn event(&mut self, event: Event) {
        self.stamped(Stamped::since(self.started, event));
    }

    fn stamped(&mut self, s: Stamped) {
        if let Some(state) = self.state.as_mut() {
            state.apply(&s);
        }
        if let Some(r) = self.recorder.as_mut()
            && let Err(e) = r.append(&s)
        {
            eprintln!("attnscope: recording stopped: {e}");
            self.recorder = None;
        }
    }

    /// Moves pending telemetry samples into the session.
    fn drain(&mut self) {
        while let Ok(s) = self.telemetry.try_recv() {
            self.stamped(s);
        }
    }
}

/// What a headless GPU run starts with: the engine on the chosen timer, the
/// session sink (with its header written) and the telemetry sampler.
struct Run {
    engine: Engine,
    sink: Sink,
    sampler: Option<Sampler>,
    started: Instant,
}

impl Run {
    /// Err holds the exit code, the reason already printed.
    fn start(timer: Timer, telemetry_hz: f64, record: Option<&Path>) -> Result<Run, i32> {
        Run::start_with(KERNEL_SOURCE.to_string(), timer, telemetry_hz, record)
    }

    /// With another kernel source (`bench --kernels DIR`).
    fn start_with(
        source: String,
        timer: Timer,
        telemetry_hz: f64,
        record: Option<&Path>,
    ) -> Result<Run, i32> {
        let mut engine = Engine::new(source).map_err(|e| fail(exit::NO_GPU, e))?;
        engine.use_timer(timer);
        if let Some(note) = &engine.timer_note {
            eprintln!("attnscope: {note}");
        }
        let started = Instant::now();
        let (sampler, nvml, telemetry_rx) = start_telemetry(&mut engine, telemetry_hz, started);
        let shared = nvml
            .as_ref()
            .map(telemetry::shared_gpu_warning)
            .or_else(|| {
                telemetry::open()
                    .ok()
                    .map(|n| telemetry::shared_gpu_warning(&n))
            })
            .flatten();
        if let Some(w) = &shared {
            eprintln!("attnscope: warning: {w}");
        }
        let mut sink =
            Sink::new(record, started, telemetry_rx).map_err(|e| fail(exit::USAGE, e))?;
        sink.event(Event::Header(Worker::new_header(
            &engine,
            std::env::args().collect(),
            nvml.as_ref(),
        )));
        if let Some(w) = shared {
            sink.event(Event::Error(ErrorReport {
                source: "gpu".into(),
                message: w,
                variant: None,
            }));
        }
        Ok(Run {
            engine,
            sink,
            sampler,
            started,
        })
    }
}

/// Starts NVML telemetry for a headless run; samples go to `record` via a
/// channel drained by the caller.
fn start_telemetry(
    engine: &mut Engine,
    hz: f64,
    started: Instant,
) -> (
    Option<Sampler>,
    Option<nvml_wrapper::Nvml>,
    mpsc::Receiver<Stamped>,
) {
    let (tx, rx) = mpsc::channel();
    if hz <= 0.0 {
        return (None, None, rx);
    }
    match (telemetry::open(), telemetry::open()) {
        (Ok(nvml), Ok(for_header)) => {
            let sampler = Sampler::spawn(
                nvml,
                hz,
                move |t| {
                    tx.send(Stamped::since(started, Event::Telemetry(t)))
                        .is_ok()
                },
                |e| eprintln!("attnscope: telemetry stopped: {e}"),
            );
            engine.telemetry = Some(Arc::clone(&sampler.shared));
            (Some(sampler), Some(for_header), rx)
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("attnscope: no telemetry: {e}");
            (None, None, rx)
        }
    }
}

struct SamplerCost {
    share: f64,
    wall_s: f64,
    samples: u64,
    query_ms: f64,
}

/// The share of one core the sampler used over `wall_s`, with its breakdown.
fn sampler_cost(sampler: &Option<Sampler>, wall_s: f64) -> Option<SamplerCost> {
    let sh = &sampler.as_ref()?.shared;
    let cpu = sh.cpu_ns.load(Ordering::Relaxed) as f64 / 1e9;
    Some(SamplerCost {
        share: cpu / wall_s.max(1e-9),
        wall_s,
        samples: sh.samples.load(Ordering::Relaxed),
        query_ms: sh.query_cpu_ns.load(Ordering::Relaxed) as f64 / 1e6,
    })
}

/// Builds, checks and times one variant for `bench`, recording as it goes;
/// returns its table row and whether it was correct.
fn bench_one(
    engine: &mut Engine,
    sink: &mut Sink,
    variant: &Variant,
    shape: &Shape,
    plan: &Plan,
    launches: Option<u32>,
) -> Result<(serde_json::Value, bool), EngineError> {
    sink.event(Event::VariantSelected(VariantSelected {
        variant: *variant,
        shape: *shape,
    }));
    let build = engine.prepare(variant, shape)?;
    sink.event(Event::BuildFinished(Worker::build_report(
        engine, variant, shape, &build,
    )));
    let check = engine.check(variant, shape, 42)?;
    sink.event(Event::Correctness(check.clone()));
    let mut stats = LatencyStats::default();
    let done = match launches {
        Some(n) => {
            let (d, batch) = measure::fixed(engine, variant, shape, plan, n as usize)?;
            stats.extend(&batch.samples_ns);
            sink.event(Event::Latency(batch));
            d
        }
        None => {
            let on_batch = |b: LatencyBatch| {
                stats.extend(&b.samples_ns);
                sink.drain();
                sink.event(Event::Latency(b));
            };
            measure::measure(engine, variant, shape, plan, on_batch, || true)?.0
        }
    };
    sink.event(Event::MeasurementDone(done.clone()));
    let p = stats.percentiles().unwrap_or_default();
    let row = json!({
        "variant": variant.name(),
        "shape": shape,
        "p50_us": p.p50_ns / 1e3, "p90_us": p.p90_ns / 1e3, "p99_us": p.p99_ns / 1e3, "min_us": p.min_ns / 1e3,
        "samples": p.count,
        "rel_noise": done.rel_noise,
        "stop_reason": done.stop_reason,
        "launch_overhead_us": done.launch_overhead_us,
        "tflops": shape.flops() / (p.p50_ns * 1e-9) / 1e12,
        "max_abs_err": check.max_abs_err,
        "rel_l2_err": check.rel_l2_err,
        "correct": check.pass,
        "registers": build.registers,
        "smem_bytes": engine.smem_bytes(variant, shape.d).unwrap_or(0) + build.smem_static_bytes,
        "spill_bytes": build.spill_store_bytes + build.spill_load_bytes,
    });
    Ok((row, check.pass))
}

/// The shapes the self-test covers: tiny, odd S, mission, causal, D=128, large.
pub fn selftest_shapes() -> Vec<Shape> {
    vec![
        Shape {
            b: 1,
            h: 1,
            s: 1,
            d: 64,
            causal: false,
        },
        Shape {
            b: 1,
            h: 2,
            s: 77,
            d: 64,
            causal: false,
        },
        Shape {
            b: 1,
            h: 2,
            s: 77,
            d: 64,
            causal: true,
        },
        Shape::MISSION,
        Shape {
            causal: true,
            ..Shape::MISSION
        },
        Shape {
            b: 1,
            h: 3,
            s: 333,
            d: 128,
            causal: false,
        },
        Shape {
            b: 2,
            h: 4,
            s: 512,
            d: 128,
            causal: true,
        },
        Shape {
            b: 4,
            h: 16,
            s: 4096,
            d: 64,
            causal: false,
        },
    ]
}

pub fn selftest(args: SelftestArgs) -> i32 {
    let mut engine = match Engine::new(KERNEL_SOURCE.to_string()) {
        Ok(e) => e,
        Err(e) => return fail(exit::NO_GPU, e),
    };
    let mut cases = Vec::new();
    let mma: Vec<Variant> = ["mma", "mma+async"]
        .iter()
        .map(|v| v.parse().expect("valid"))
        .collect();
    for shape in selftest_shapes() {
        for v in Variant::all_toggles()
            .into_iter()
            .chain(mma.iter().copied())
        {
            cases.push((v, shape));
        }
    }
    // The mma path's tuning candidates, on the mission shape and on a causal
    // one whose last tiles are partial (and empty for some split groups).
    let wgmma = engine.info.has_wgmma();
    for tile in TileConfig::presets_for(mma[0].toggles, wgmma) {
        for v in &mma {
            for shape in [
                Shape::MISSION,
                Shape {
                    b: 1,
                    h: 3,
                    s: 333,
                    d: 64,
                    causal: true,
                },
            ] {
                cases.push((Variant { tile, ..*v }, shape));
            }
        }
    }
    // wgmma's second 64-column block of D (another descriptor offset).
    if wgmma {
        for tile in ["64x64s2w4g", "64x64s3w8k2g"] {
            for shape in ["1,3,333,128", "2,4,512,128"] {
                let shape = Shape {
                    causal: true,
                    ..shape.parse().expect("valid")
                };
                cases.push((mma[1].with_tile(tile), shape));
            }
        }
    }
    for tile in &TileConfig::PRESETS[1..] {
        for mut v in Variant::all_toggles() {
            v.tile = *tile;
            cases.push((v, Shape::MISSION));
            cases.push((
                v,
                Shape {
                    b: 1,
                    h: 2,
                    s: 77,
                    d: 64,
                    causal: true,
                },
            ));
        }
    }
    let mut results = Vec::new();
    let mut failed = 0;
    for (i, (v, shape)) in cases.iter().enumerate() {
        let seed = 1000 + i as u64;
        let r = engine.check(v, shape, seed);
        let (pass, row) = match r {
            Ok(c) => (
                c.pass,
                json!({"variant": v.name(), "shape": shape, "pass": c.pass, "max_abs_err": c.max_abs_err,
                "rel_l2_err": c.rel_l2_err, "nan": c.nan_count, "unwritten": c.unwritten, "seed": seed}),
            ),
            Err(e) => (
                false,
                json!({"variant": v.name(), "shape": shape, "pass": false, "error": e.to_string()}),
            ),
        };
        failed += usize::from(!pass);
        if !args.json {
            match row.get("error") {
                Some(e) => println!("FAIL {:<28} {:<22} {e}", v.name(), shape.to_string()),
                None => println!(
                    "{} {:<28} {:<22} max|Δ| {:.2e}  rel L2 {:.2e}  NaN {}  unwritten {}",
                    if pass { "ok  " } else { "FAIL" },
                    v.name(),
                    shape.to_string(),
                    row["max_abs_err"].as_f64().unwrap_or(f64::NAN),
                    row["rel_l2_err"].as_f64().unwrap_or(f64::NAN),
                    row["nan"],
                    row["unwritten"]
                ),
            }
        }
        results.push(row);
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"gpu": engine.info, "cases": results, "failed": failed})
            )
            .unwrap_or_default()
        );
    } else {
        println!(
            "selftest on {} ({}): {} passed, {} failed",
            engine.info.name,
            engine.arch,
            cases.len() - failed,
            failed
        );
    }
    if failed > 0 { exit::CHECK_FAILED } else { 0 }
}

/// The bundled kernel, or `--kernels DIR`'s copy; Err is the exit code, the
/// reason printed.
fn kernel_source(dir: Option<&Path>) -> Result<String, i32> {
    crate::gpu::kernel_watch::source_or_bundled(dir).map_err(|e| fail(exit::USAGE, e))
}

/// `attnscope build`: NVRTC only, so it runs on machines with no GPU.
pub fn build(args: BuildArgs) -> i32 {
    let mut variants = Vec::new();
    for spec in &args.variants.0 {
        match *spec {
            VariantSpec::Fixed(v) => variants.push(v),
            VariantSpec::Tuned(v) => {
                return fail(
                    exit::USAGE,
                    format!(
                        "{}@tuned: build has no GPU to tune on; name a tile (`attnscope tune` prints the winner)",
                        v.name()
                    ),
                );
            }
        }
    }
    let source = match kernel_source(args.kernels.as_deref()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Err(e) = nvrtc::nvrtc_version() {
        return fail(exit::NO_GPU, e);
    }
    if let Some(Err(e)) = args.out.as_deref().map(std::fs::create_dir_all) {
        let dir = args.out.as_deref().unwrap_or(Path::new("")).display();
        return fail(exit::USAGE, format!("--out {dir}: {e}"));
    }
    println!(
        "{:<28} {:>5} {:>12} {:>9} {:>6} {:>8}  families",
        "variant", "regs", "static smem", "spill B", "stack", "ms"
    );
    let builder = nvrtc::Builder::new(source).without_disk_cache();
    let shape = Shape {
        d: args.d,
        ..Shape::MISSION
    };
    let mut failed = 0;
    for v in variants {
        match builder.build(&v, &shape, &args.arch) {
            Ok(b) => {
                println!(
                    "{:<28} {:>5} {:>12} {:>9} {:>6} {:>8.0}  {}",
                    v.name(),
                    b.registers,
                    b.smem_static_bytes,
                    b.spill_store_bytes + b.spill_load_bytes,
                    b.stack_bytes,
                    b.compile_ms,
                    b.families.join(" ")
                );
                // ptxas's advice (wgmma serialized, and the like) is part of the report.
                for line in b.log.lines().filter(|l| l.contains("warning")) {
                    println!("    {}", line.trim());
                }
                if let Some(dir) = &args.out {
                    let path = dir.join(format!("{}.cubin", v.name()));
                    if let Err(e) = std::fs::write(&path, &b.cubin) {
                        failed += 1;
                        eprintln!("attnscope: cannot write {}: {e}", path.display());
                    }
                }
            }
            Err(e) => {
                failed += 1;
                println!("{:<28} FAILED", v.name());
                eprintln!("{e}");
            }
        }
    }
    if failed > 0 { exit::CHECK_FAILED } else { 0 }
}

pub fn doctor() -> i32 {
    let mut problems = 0;
    println!("attnscope {} doctor", env!("CARGO_PKG_VERSION"));
    for lib in [Lib::Cuda, Lib::Nvrtc, Lib::Cupti, Lib::Nvml] {
        match libs::ensure(lib) {
            Ok(f) => println!(
                "  ok   {:<20} {}",
                lib.name(),
                f.path.map_or("(found on the loader's path)".into(), |p| p
                    .display()
                    .to_string())
            ),
            Err(e) => {
                problems += usize::from(matches!(lib, Lib::Cuda | Lib::Nvrtc));
                println!("  MISSING {e}");
            }
        }
    }
    match nvrtc::nvrtc_version() {
        Ok((a, b)) => println!(
            "  ok   NVRTC {a}.{b}; headers in {:?}",
            nvrtc::include_dirs()
        ),
        Err(e) => println!("  --   NVRTC version unknown: {e}"),
    }
    match crate::gpu::probe() {
        Ok(()) => match Engine::new(KERNEL_SOURCE.to_string()) {
            Ok(e) => println!(
                "  ok   GPU 0: {} ({}), {} SMs, {} MiB L2, {} GiB, driver {}",
                e.info.name,
                e.arch,
                e.info.sm_count,
                e.info.l2_bytes >> 20,
                e.info.memory_bytes >> 30,
                e.driver_version().unwrap_or_else(|| "?".into())
            ),
            Err(e) => {
                problems += 1;
                println!("  FAIL GPU: {e}");
            }
        },
        Err(e) => {
            problems += 1;
            println!("  FAIL GPU: {e}");
        }
    }
    match profiling_admin_only(Path::new("/proc/driver/nvidia/params")) {
        Some(true) => println!(
            "  --   hardware counters need admin: RmProfilingAdminOnly=1. Run as root, or set \
             `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d and reboot"
        ),
        Some(false) => {
            println!("  ok   hardware counters open to all users (RmProfilingAdminOnly=0)")
        }
        None => println!("  --   profiling permission unknown (no /proc/driver/nvidia/params)"),
    }
    match crate::gpu::profiler::library_ok() {
        Ok(()) => println!(
            "  ok   CUPTI range profiler and profiler host API present (g, attnscope gates)"
        ),
        Err(e) => println!("  --   no hardware counters: {e}"),
    }
    if problems == 0 {
        println!("live mode is available");
        0
    } else {
        println!(
            "live mode is not available here; `attnscope` will replay the bundled session instead"
        );
        exit::NO_GPU
    }
}

fn profiling_admin_only(params: &Path) -> Option<bool> {
    let text = std::fs::read_to_string(params).ok()?;
    let line = text
        .lines()
        .find(|l| l.starts_with("RmProfilingAdminOnly"))?;
    Some(line.split(':').nth(1)?.trim() == "1")
}

fn fail(code: i32, message: impl std::fmt::Display) -> i32 {
    eprintln!("attnscope: {message}");
    code
}
