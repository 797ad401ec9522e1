//! `attnscope selftest --calibrate SEEDS`: the default check run on
//! implementations we did not write (cuDNN, PyTorch's SDPA backends,
//! FlexAttention, the Triton tutorial) and on every shipped tile, at the
//! calibration shapes, seed after seed, in fp16 and bf16. Every failure is
//! a false failure: this is the rate docs/measurement.md states, and the
//! rows' errors in units of the format are the evidence the bounds are set
//! from.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;

use super::selftest::shape;
use crate::cli::{SelftestArgs, exit};
use crate::gpu::engine::{Engine, EngineError};
use crate::session::manifest::registry;
use crate::session::{Dtype, InputSet, Shape, Variant};

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

    fn quantile(&self, q: f64) -> f64 {
        let mut v = self.row_units.clone();
        v.sort_by(f64::total_cmp);
        v.get(((v.len().max(1) - 1) as f64 * q).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    }
}

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
    let mut records: BTreeMap<(String, Dtype), Record> = BTreeMap::new();
    let mut done = 0;
    let late = || {
        args.deadline
            .is_some_and(|d| start.elapsed().as_secs_f64() > d)
    };
    'seeds: for s in 0..seeds {
        let seed = base + u64::from(s);
        for &dtype in &dtypes {
            for shape in shapes.iter().map(|s| s.with_dtype(dtype)) {
                // A seed cut short still counts its checks; `seeds` counts whole ones.
                if late() {
                    break 'seeds;
                }
                for &dist in &dists {
                    for v in &variants {
                        let r = records.entry((v.name(), dtype)).or_default();
                        if v.runs(&shape).is_err() || engine.info.smem_refusal(v, shape.d).is_some()
                        {
                            r.not_taken += 1;
                            continue;
                        }
                        match engine.check_output(v, &shape, dist, seed) {
                            Err(EngineError::NotTaken(_)) => r.not_taken += 1,
                            Err(e) => r.errors.push(format!("{shape} {dist} seed {seed}: {e}")),
                            Ok((c, _)) => {
                                r.checks += 1;
                                let u = dtype.unit();
                                let w = &c.worst_row;
                                if w.want > 0.0 {
                                    r.row_units.push(w.got / w.want / u);
                                }
                                r.worst_element = r.worst_element.max(c.worst_element.ratio);
                                if let Some(b) = c.bias.as_ref().and_then(|b| b.worst.as_ref()) {
                                    r.pooled = r.pooled.max(b.ratio());
                                }
                                if !c.pass {
                                    let what = format!(
                                        "{shape} {dist} seed {seed}: element {:.2}, row {:.2} of their bounds, pooled {:.2}, NaN {}, ±Inf {}",
                                        c.worst_element.ratio,
                                        c.worst_row.ratio,
                                        c.bias
                                            .as_ref()
                                            .and_then(|b| b.worst.as_ref())
                                            .map_or(0.0, |w| w.ratio()),
                                        c.nan_count,
                                        c.inf_count
                                    );
                                    r.failures.push(json!({"what": what, "check": c}));
                                }
                            }
                        }
                    }
                }
            }
        }
        done += 1;
    }
    report(
        engine,
        (base, done, start.elapsed().as_secs_f64()),
        &shapes,
        &records,
        args.json,
    )
}

fn report(
    engine: &Engine,
    (base, seeds, secs): (u64, u32, f64),
    shapes: &[Shape],
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
                "seeds": seeds, "seconds": secs, "shapes": shapes, "checks": checks,
                "false_failures": failed, "by_variant": rows}))
            .unwrap_or_default()
        );
    } else {
        println!(
            "calibration on {}: {seeds} seeds from {base} × {} shapes × the default check, {checks} checks in {secs:.0} s",
            engine.info.name,
            shapes.len()
        );
        println!(
            "row error: each check's worst row, ‖Δ‖ ÷ ‖ref‖ in units u of the format (the bound is 4); element: the worst element over its bound; pooled: the worst mean over what rounding explains (1 fails)"
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
