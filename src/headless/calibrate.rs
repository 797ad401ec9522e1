//! `attnscope selftest --calibrate SEEDS`: the default check run on
//! implementations we did not write (cuDNN, PyTorch's SDPA backends,
//! FlexAttention, the Triton tutorial) and on every shipped tile, at the
//! calibration shapes, seed after seed, in fp16 and bf16. Every failure is
//! a false failure: this is the rate docs/measurement.md states, and the
//! rows' errors in units of the format are the evidence the bounds are set
//! from.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use serde_json::json;

use super::selftest::shape;
use crate::cli::{SelftestArgs, exit};
use crate::gpu::engine::{Engine, EngineError, Reference};
use crate::session::check::DistCheck;
use crate::session::manifest::registry;
use crate::session::{Dtype, InputSet, Inputs, Shape, Variant};

/// Twenty-one shapes over the paths the oracle must not cry wolf on: D 64,
/// 128 and 256, causal and not, ragged query and key tails, grouped-query
/// heads, queries after a cache, decode (1, 3 and 16 queries over long
/// caches, where split tiles merge), more queries than keys. Small enough
/// that the f64 reference of one costs milliseconds.
pub fn calibration_shapes() -> Vec<Shape> {
    vec![
        Shape::MISSION,
        shape("1,4,333,64", true),
        shape("2,4,256,128", false),
        shape("1,4,333,128", true),
        shape("1,2,200,256", true),
        shape("1,2,256,256", false),
        shape("1,8/2,257,64", false),
        shape("1,8/2,333,128", true),
        shape("2,8/2,77/1025,128", true),
        shape("4,8/2,1/2049,128", true),
        shape("2,8/1,16/4097,64", true),
        shape("1,16/2,3/777,64", true),
        shape("1,4,129,64", false),
        shape("1,4,1000,64", true),
        shape("1,4/1,100/1000,64", true),
        shape("1,32,128,64", false),
        shape("2,4,64,128", false),
        shape("1,2,1024,128", true),
        shape("1,4,300/17,64", false),
        shape("1,4/2,333,256", true),
        shape("8,16,1/513,64", true),
    ]
}

/// cuDNN, the Python peers and every tile the primary kernel's mma path
/// cycles through.
fn default_variants() -> Vec<Variant> {
    let mut out: Vec<Variant> = [
        "cudnn",
        "py:sdpa_flash",
        "py:sdpa_efficient",
        "py:sdpa_math",
        "py:flex",
        "py:triton_tutorial",
    ]
    .iter()
    .filter_map(|n| n.parse().ok())
    .collect();
    let m = registry::manifest(registry::primary());
    if let Ok(base) = "mma+async".parse::<Variant>() {
        for tile in m.cycle_tiles(base.toggles.0) {
            out.push(Variant { tile, ..base });
        }
    }
    out
}

/// One variant's record in one format.
#[derive(Default)]
struct Record {
    checks: u64,
    not_taken: u64,
    failures: Vec<serde_json::Value>,
    /// Checks that could not run (a library refusing a shape at run time):
    /// neither a pass nor a false failure.
    errors: Vec<String>,
    /// Every check's worst row error, in units of the format (‖Δ‖ ÷ ‖ref‖ ÷ u).
    row_units: Vec<f64>,
    worst_element: f64,
    /// The largest pooled mean over what rounding explains.
    pooled: f64,
}

/// Bins of the row-error histogram: 0.01u wide from 0 to 8u, the last
/// one holding everything above.
const HIST_BINS: usize = 801;

impl Record {
    /// The row errors as counts per 0.01u, so runs in pieces merge
    /// (`scripts/calibrate_table.py` takes several files).
    fn histogram(&self) -> Vec<u64> {
        let mut h = vec![0u64; HIST_BINS];
        for x in &self.row_units {
            h[((x / 0.01) as usize).min(HIST_BINS - 1)] += 1;
        }
        h
    }

    /// One check of this variant, pass or fail.
    fn add(&mut self, c: &DistCheck, shape: &Shape) {
        self.checks += 1;
        let w = &c.worst_row;
        if w.want > 0.0 {
            self.row_units.push(w.got / w.want / shape.dtype.unit());
        }
        self.worst_element = self.worst_element.max(c.worst_element.ratio);
        let pooled = c
            .bias
            .as_ref()
            .and_then(|b| b.worst.as_ref())
            .map_or(0.0, |w| w.ratio());
        self.pooled = self.pooled.max(pooled);
        if !c.pass {
            let what = format!(
                "{shape} {} seed {}: {}",
                c.inputs,
                c.seed,
                crate::metrics::reference::why_failed(c)
            );
            self.failures.push(json!({"what": what, "check": c}));
        }
    }

    fn quantile(&self, q: f64) -> f64 {
        let mut v = self.row_units.clone();
        v.sort_by(f64::total_cmp);
        v.get(((v.len().max(1) - 1) as f64 * q).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    }
}

/// One unit of work for the judges: every output the variants gave on one
/// set of inputs.
struct Job {
    shape: Shape,
    dist: Inputs,
    seed: u64,
    host: Arc<[Vec<u16>; 3]>,
    /// (variant, its O) in the order they ran.
    outputs: Vec<(String, Vec<u16>)>,
}

/// One set of inputs drawn ahead of the launches.
struct Drawn {
    shape: Shape,
    dist: Inputs,
    host: Arc<[Vec<u16>; 3]>,
}

/// Draws every seed's inputs in the order the launches take them (each
/// format, each shape, each distribution), a shape's distributions in
/// parallel, until the seeds are done or the receiver is gone.
fn draw_ahead(
    (dtypes, shapes, dists): (&Vec<Dtype>, &Vec<Shape>, &Vec<Inputs>),
    base: u64,
    seeds: u32,
    tx: std::sync::mpsc::SyncSender<Drawn>,
) {
    for s in 0..seeds {
        let seed = base + u64::from(s);
        for &dtype in dtypes {
            for shape in shapes.iter().map(|s| s.with_dtype(dtype)) {
                let drawn: Vec<Drawn> = dists
                    .par_iter()
                    .map(|&dist| Drawn {
                        shape,
                        dist,
                        host: Arc::new(crate::metrics::qkv::generate(dist, &shape, seed)),
                    })
                    .collect();
                for d in drawn {
                    if tx.send(d).is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// Judges a job: the reference made once, each distinct O judged once
/// (the judge is a function of O's bits and the reference, so a variant
/// whose O is bit for bit another's gets that check), every variant's
/// check recorded.
fn judge(job: Job, records: &Mutex<BTreeMap<(String, Dtype), Record>>, distinct: &Mutex<u64>) {
    let r = Reference::from_host(&job.shape, job.dist, job.seed, job.host);
    // Positions of the first output of each distinct O, and each output's.
    let mut first_at: Vec<usize> = Vec::new();
    let mut which = Vec::with_capacity(job.outputs.len());
    for (i, (_, out)) in job.outputs.iter().enumerate() {
        let w = first_at.iter().position(|&f| job.outputs[f].1 == *out);
        which.push(w.unwrap_or_else(|| {
            first_at.push(i);
            first_at.len() - 1
        }));
    }
    let checks: Vec<DistCheck> = first_at
        .par_iter()
        .map(|&i| r.judge_output(&job.outputs[i].1))
        .collect();
    *distinct.lock().unwrap_or_else(|e| e.into_inner()) += checks.len() as u64;
    let mut records = records.lock().unwrap_or_else(|e| e.into_inner());
    for ((name, _), &w) in job.outputs.iter().zip(&which) {
        let rec = records.entry((name.clone(), job.shape.dtype)).or_default();
        rec.add(&checks[w], &job.shape);
    }
}

/// Threads judging while the GPU runs the next inputs (each judge is
/// itself parallel over heads and outputs).
const JUDGES: usize = 4;

pub(super) fn calibrate(engine: &mut Engine, args: &SelftestArgs, base: u64, seeds: u32) -> i32 {
    let variants = args
        .variants
        .as_ref()
        .map_or_else(default_variants, |v| v.0.clone());
    let dists = args
        .inputs
        .clone()
        .unwrap_or_else(InputSet::default_check)
        .0;
    let dtypes = args
        .dtype
        .map_or(vec![Dtype::F16, Dtype::Bf16], |d| vec![d]);
    let shapes = calibration_shapes();
    let start = Instant::now();
    prebuild(engine, &variants, &shapes, &dtypes);
    eprintln!(
        "calibrate: {} variants built in {:.0} s",
        variants.len(),
        start.elapsed().as_secs_f64()
    );
    let records: Mutex<BTreeMap<(String, Dtype), Record>> = Mutex::new(BTreeMap::new());
    let distinct = Mutex::new(0u64);
    let late = || {
        args.deadline
            .is_some_and(|d| start.elapsed().as_secs_f64() > d)
    };
    let mut done = 0;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(2 * JUDGES);
    let rx = Mutex::new(rx);
    // Inputs drawn ahead, off the thread that launches: drawing them is
    // as slow as running sixty variants on them.
    let (gtx, grx) = std::sync::mpsc::sync_channel::<Drawn>(2 * dists.len());
    let plan = (&dtypes, &shapes, &dists);
    std::thread::scope(|scope| {
        scope.spawn(move || draw_ahead(plan, base, seeds, gtx));
        for _ in 0..JUDGES {
            let (rx, records, distinct) = (&rx, &records, &distinct);
            scope.spawn(move || {
                loop {
                    let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    match job {
                        Ok(job) => judge(job, records, distinct),
                        Err(_) => break,
                    }
                }
            });
        }
        let note = |v: &Variant, dtype: Dtype, f: &dyn Fn(&mut Record)| {
            let mut r = records.lock().unwrap_or_else(|e| e.into_inner());
            f(r.entry((v.name(), dtype)).or_default());
        };
        'seeds: for s in 0..seeds {
            let seed = base + u64::from(s);
            let t = Instant::now();
            // Time the GPU thread stood waiting for the judges: which side sets the pace.
            let mut waited = 0.0;
            for _ in 0..dtypes.len() * shapes.len() {
                // A seed cut short still counts its checks; `seeds` counts whole ones.
                if late() {
                    break 'seeds;
                }
                for _ in 0..dists.len() {
                    let Ok(Drawn { shape, dist, host }) = grx.recv() else {
                        break 'seeds;
                    };
                    let dtype = shape.dtype;
                    let mut outputs = Vec::new();
                    for v in &variants {
                        if v.runs(&shape).is_err() || engine.info.smem_refusal(v, shape.d).is_some()
                        {
                            note(v, dtype, &|r| r.not_taken += 1);
                            continue;
                        }
                        match engine.output_for_check(v, &shape, (dist, seed), &host) {
                            Ok(out) => outputs.push((v.name(), out)),
                            Err(EngineError::NotTaken(_)) => note(v, dtype, &|r| r.not_taken += 1),
                            Err(e) => {
                                let e = format!("{shape} {dist} seed {seed}: {e}");
                                note(v, dtype, &|r| r.errors.push(e.clone()));
                            }
                        }
                    }
                    let job = Job {
                        shape,
                        dist,
                        seed,
                        host,
                        outputs,
                    };
                    let w = Instant::now();
                    if tx.send(job).is_err() {
                        break 'seeds;
                    }
                    waited += w.elapsed().as_secs_f64();
                }
            }
            done += 1;
            eprintln!(
                "calibrate: seed {seed} in {:.2} s, {waited:.2} s of it waiting for the judges ({:.0} s so far)",
                t.elapsed().as_secs_f64(),
                start.elapsed().as_secs_f64()
            );
        }
        drop(tx);
        // The drawing thread stops at its next send.
        drop(grx);
    });
    let records = records.into_inner().unwrap_or_else(|e| e.into_inner());
    let distinct = distinct.into_inner().unwrap_or_else(|e| e.into_inner());
    report(
        engine,
        (base, done, start.elapsed().as_secs_f64()),
        (&shapes, distinct),
        &records,
        args.json,
    )
}

/// Every tile compiled up front, in parallel, for each format, head
/// dimension and head grouping the shapes need (the libraries and Python
/// peers build on first use); `selftest --mutations` builds its mutants so.
pub(super) fn prebuild(
    engine: &mut Engine,
    variants: &[Variant],
    shapes: &[Shape],
    dtypes: &[Dtype],
) {
    let mut seen = std::collections::HashSet::new();
    for &dtype in dtypes {
        for shape in shapes.iter().map(|s| s.with_dtype(dtype)) {
            if !seen.insert((shape.d, shape.dtype, shape.same_kv())) {
                continue;
            }
            let takers: Vec<Variant> = variants
                .iter()
                .filter(|v| {
                    !v.is_library()
                        && v.runs(&shape).is_ok()
                        && engine.info.smem_refusal(v, shape.d).is_none()
                })
                .copied()
                .collect();
            engine.build_ahead(&takers, &shape);
        }
    }
}

fn report(
    engine: &Engine,
    (base, seeds, secs): (u64, u32, f64),
    (shapes, distinct): (&[Shape], u64),
    records: &BTreeMap<(String, Dtype), Record>,
    json_out: bool,
) -> i32 {
    let failed: u64 = records.values().map(|r| r.failures.len() as u64).sum();
    let checks: u64 = records.values().map(|r| r.checks).sum();
    if json_out {
        let rows: Vec<serde_json::Value> = records
            .iter()
            .map(|((v, dtype), r)| {
                json!({"variant": v, "dtype": dtype, "checks": r.checks, "not_taken": r.not_taken,
                "false_failures": r.failures.len(), "failures": r.failures, "errors": r.errors,
                "row_units_p50": r.quantile(0.5), "row_units_p99": r.quantile(0.99),
                "row_units_max": r.quantile(1.0), "row_units_hist_0_01u": r.histogram(),
                "worst_element_ratio": r.worst_element,
                "pooled_max_ratio": r.pooled})
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"gpu": engine.info, "base_seed": base,
                "seeds": seeds, "seconds": secs, "shapes": shapes, "checks": checks, "distinct_outputs_judged": distinct,
                "false_failures": failed, "by_variant": rows}))
            .unwrap_or_default()
        );
    } else {
        println!(
            "calibration on {}: {seeds} seeds from {base} × {} shapes × the default check, {checks} checks ({distinct} distinct outputs judged) in {secs:.0} s",
            engine.info.name,
            shapes.len()
        );
        println!(
            "row error: each check's worst row, ‖Δ‖ ÷ ‖ref‖ in units u of the format (the bound is 2); element: the worst element over its bound; pooled: the worst mean over what rounding explains (1 fails)"
        );
        println!(
            "{:<34} {:<5} {:>7} {:>6} {:>6} {:>9} {:>9} {:>9} {:>8} {:>7}",
            "variant",
            "type",
            "checks",
            "FAILS",
            "errors",
            "row p50",
            "p99",
            "max",
            "element",
            "pooled"
        );
        for ((v, dtype), r) in records {
            if r.checks == 0 && r.errors.is_empty() {
                continue;
            }
            println!(
                "{v:<34} {:<5} {:>7} {:>6} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>8.3} {:>7.3}",
                dtype.to_string(),
                r.checks,
                r.failures.len(),
                r.errors.len(),
                r.quantile(0.5),
                r.quantile(0.99),
                r.quantile(1.0),
                r.worst_element,
                r.pooled
            );
        }
        for ((v, dtype), r) in records {
            for f in r.failures.iter().take(3) {
                println!("FAIL {v} {dtype}: {}", f["what"].as_str().unwrap_or("?"));
            }
            for e in r.errors.iter().take(2) {
                println!("error {v} {dtype}: {e}");
            }
        }
        println!("false failures: {failed} of {checks} checks");
    }
    if failed == 0 { 0 } else { exit::CHECK_FAILED }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::reference;

    /// The f64 reference of every row, rounded to the shape's format: what
    /// a perfect kernel writes.
    fn perfect(shape: &Shape, host: &[Vec<u16>; 3]) -> Vec<u16> {
        let heads = (shape.b * shape.h) as usize;
        let mut out = Vec::new();
        for h in 0..heads {
            let [q, k, v] = reference::head_inputs(shape, host, h);
            for x in reference::attention_head(&q, &k, &v, shape) {
                out.push(match shape.dtype {
                    Dtype::F16 => half::f16::from_f64(x).to_bits(),
                    Dtype::Bf16 => half::bf16::from_f64(x).to_bits(),
                });
            }
        }
        out
    }

    #[test]
    fn a_job_judges_each_distinct_output_once_and_records_every_variant() {
        for dtype in [Dtype::F16, Dtype::Bf16] {
            let shape = shape("1,2,96,64", true).with_dtype(dtype);
            let host = Arc::new(crate::metrics::qkv::generate(Inputs::Uniform, &shape, 3));
            let good = perfect(&shape, &host);
            // One row 2% off: past the 2u row bound in both formats.
            let mut bad = good.clone();
            let d = shape.d as usize;
            for x in &mut bad[40 * d..41 * d] {
                *x = match dtype {
                    Dtype::F16 => {
                        half::f16::from_f32(half::f16::from_bits(*x).to_f32() * 1.02).to_bits()
                    }
                    Dtype::Bf16 => {
                        half::bf16::from_f32(half::bf16::from_bits(*x).to_f32() * 1.02).to_bits()
                    }
                };
            }
            let job = Job {
                shape,
                dist: Inputs::Uniform,
                seed: 3,
                host,
                outputs: vec![
                    ("a".into(), good.clone()),
                    ("b".into(), bad),
                    ("c".into(), good),
                ],
            };
            let (records, distinct) = (Mutex::new(BTreeMap::new()), Mutex::new(0));
            judge(job, &records, &distinct);
            assert_eq!(*distinct.lock().unwrap(), 2, "{dtype}");
            let r = records.into_inner().unwrap();
            let at = |n: &str| &r[&(n.to_string(), dtype)];
            for n in ["a", "b", "c"] {
                assert_eq!(at(n).checks, 1, "{n} {dtype}");
            }
            assert!(
                at("a").failures.is_empty() && at("c").failures.is_empty(),
                "{dtype}"
            );
            assert_eq!(at("b").failures.len(), 1, "{dtype}");
            let what = at("b").failures[0]["what"].as_str().unwrap().to_string();
            assert!(what.contains("a row") && what.contains("row 40"), "{what}");
            // The perfect output's worst row is its own rounding: at most u.
            assert!(at("a").row_units[0] <= 1.0 + 1e-9, "{dtype}");
        }
    }
}
