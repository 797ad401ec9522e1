//! `attnscope selftest`: every path and tile family against the f64
//! reference, over odd shapes and every input distribution; `--mutations`
//! (mutations.rs) plants bugs and shows the default check catches them.

use serde_json::json;

use super::fail;
use crate::cli::{SelftestArgs, exit};
use crate::gpu::engine::Engine;
use crate::session::manifest::registry;
use crate::session::{Inputs, Shape, Variant};

pub(super) fn shape(text: &str, causal: bool) -> Shape {
    let s: Shape = text.parse().expect("a valid shape literal");
    s.with_causal(causal)
}

/// Shapes every path meets with every distribution: one key, fewer keys
/// than a tile (causal too), S around tile edges, the mission shape, D=128
/// causal with partial tiles, and a sequence one past a power of two.
pub fn selftest_shapes() -> Vec<Shape> {
    vec![
        shape("1,1,1,64", false),
        shape("1,2,17,64", true),
        shape("1,2,63,64", false),
        shape("1,2,65,64", true),
        shape("1,2,127,64", false),
        Shape::MISSION,
        Shape::MISSION.with_causal(true),
        shape("1,3,333,128", true),
        shape("1,2,4097,64", false),
    ]
}

/// Shapes with more row blocks than an H100 has SMs: a persistent tile's
/// CTAs each walk several, handing Q and the K/V stages from one to the
/// next. Causal, blocks differ in work; not causal (72 heads: 144 to 432
/// blocks, for 192- to 64-row tiles), the last round is part empty. The
/// quick subset takes the first three.
fn many_blocks_shapes() -> Vec<Shape> {
    vec![
        shape("4,64,333,64", true),
        shape("2,48,333,128", true),
        shape("1,72,333,64", false),
        shape("1,72,333,128", false),
    ]
}

/// Not causal, rows of 17 and 33 K/V tiles, more row blocks than SMs and
/// the last round part empty: a persistent CTA walks several long blocks.
/// For named variants (step 37's stream-K tiles cut such blocks anywhere).
fn long_rows_shapes() -> Vec<Shape> {
    vec![shape("1,9,4097,64", false), shape("1,9,2049,128", false)]
}

/// Shapes for the quick subset.
fn quick_shapes() -> Vec<Shape> {
    vec![
        shape("1,2,17,64", true),
        Shape::MISSION,
        shape("1,3,333,128", true),
    ]
}

/// The attention LLMs run (ABI 2): bf16, grouped-query heads, prefill
/// against a longer cache and decode (1 to 16 queries over up to 32k keys)
/// with the mask aligned to the end, odd lengths, one query, more queries
/// than keys without a mask, and D 256. A variant whose manifest does not
/// take one skips it (counted, not failed).
pub fn llm_shapes() -> Vec<Shape> {
    use crate::session::Dtype::{Bf16, F16};
    let at = |text: &str, causal: bool, dtype| shape(text, causal).with_dtype(dtype);
    vec![
        at("1,2,333,64", true, Bf16),
        at("2,8,512,128", false, Bf16),
        at("1,8/2,333,128", true, Bf16),
        at("1,8/2,257,64", false, F16),
        at("1,4/1,100/1000,64", true, Bf16),
        at("2,8/2,77/4097,128", true, F16),
        at("4,32/8,1/4097,128", true, Bf16),
        at("2,8,1/777,64", true, F16),
        at("1,16/2,16/32768,128", true, Bf16),
        at("1,8/1,3/129,64", false, Bf16),
        at("1,4,300/17,64", false, F16),
        at("1,4/2,333,256", true, Bf16),
        at("1,2,129,256", false, F16),
    ]
}

/// One check to run.
struct Case {
    variant: Variant,
    shape: Shape,
    inputs: Inputs,
}

/// The checks for the primary kernel, all from its manifest: every path
/// (toggle combination) over the shapes and distributions; the base, the
/// start and the last path past 65535 heads and at S=4096; every tile `t`
/// cycles through, on each path it applies to, at the mission shape and a
/// causal split, and at D=128 when the kernel runs it. Only what a GPU of
/// compute capability `cc` runs.
fn cases(args: &SelftestArgs, cc: u32) -> Vec<Case> {
    let kernel = registry::primary();
    let dists: Vec<Inputs> = match &args.inputs {
        Some(set) => set.0.clone(),
        None => Inputs::ALL.to_vec(),
    };
    let pick = |want: &[Inputs]| -> Vec<Inputs> {
        want.iter().copied().filter(|i| dists.contains(i)).collect()
    };
    let mut out = Vec::new();
    let mut add = |variants: &[Variant], shapes: &[Shape], inputs: &[Inputs]| {
        for &variant in variants {
            for &shape in shapes.iter().filter(|s| variant.runs(s).is_ok()) {
                for &inputs in inputs {
                    out.push(Case {
                        variant,
                        shape,
                        inputs,
                    });
                }
            }
        }
    };
    // Named variants take the paths' shapes and nothing else.
    if let Some(named) = &args.variants {
        add(&named.0, &selftest_shapes(), &dists);
        add(&named.0, &many_blocks_shapes(), &dists);
        add(&named.0, &long_rows_shapes(), &dists);
        add(&named.0, &llm_shapes(), &dists);
        return out;
    }
    let paths: Vec<Variant> = Variant::paths_of(kernel)
        .into_iter()
        .filter(|v| v.runs_on(cc))
        .collect();
    let tiles: Vec<Variant> = paths
        .iter()
        .flat_map(|p| p.cycle_tiles(Some(cc)))
        .filter(|v| !v.default_tile())
        .collect();
    let split_causal = shape("1,3,333,64", true);
    let d128 = shape("1,3,333,128", true);
    let rising = [Inputs::Rising];
    if args.quick {
        let three = pick(&[Inputs::Uniform, Inputs::Rising, Inputs::Large]);
        add(&paths, &quick_shapes(), &three);
        add(&tiles, &[Shape::MISSION], &pick(&rising));
        add(&tiles, &[shape("2,4,512,128", true)], &pick(&rising));
        add(&tiles, &many_blocks_shapes()[..3], &pick(&rising));
        let llm = llm_shapes();
        add(&paths, &llm, &pick(&rising));
        add(
            &tiles,
            &[llm[2], llm[5], llm[6], llm[8], llm[11]],
            &pick(&rising),
        );
        return out;
    }
    add(&paths, &selftest_shapes(), &dists);
    let mut edges = vec![Variant::base_of(kernel), Variant::start_of(kernel)];
    if let Some(last) = paths.last().filter(|l| !edges.contains(l)) {
        edges.push(*last);
    }
    // The launch geometry past 65535 heads (the bundled kernel: heads in y,
    // batches in z).
    add(
        &edges,
        &[shape("256,256,17,64", false), shape("256,257,1,64", true)],
        &pick(&[Inputs::Uniform]),
    );
    add(
        &edges[1..],
        &[shape("4,16,4096,64", false)],
        &pick(&[Inputs::Uniform, Inputs::Rising]),
    );
    add(
        &tiles,
        &[Shape::MISSION, split_causal],
        &pick(&[Inputs::Uniform, Inputs::Rising, Inputs::Outliers]),
    );
    add(&tiles, &[d128], &pick(&[Inputs::Rising, Inputs::Large]));
    add(&tiles, &many_blocks_shapes(), &pick(&rising));
    add(&paths, &llm_shapes(), &dists);
    add(&tiles, &llm_shapes(), &pick(&rising));
    out
}

/// What one check found.
pub(super) struct Outcome {
    pass: bool,
    row: serde_json::Value,
}

fn run_case(engine: &mut Engine, case: &Case, seed: u64) -> Outcome {
    let Case {
        variant: v,
        shape,
        inputs,
    } = case;
    match engine.check_output(v, shape, *inputs, seed) {
        // A Python function that does not take the shape: skipped, as a
        // manifest's refusal is.
        Err(crate::gpu::engine::EngineError::NotTaken(why)) => Outcome {
            pass: true,
            row: json!({"variant": v.name(), "shape": shape, "inputs": inputs, "pass": true,
                "not_taken": why, "seed": seed}),
        },
        Ok((c, _)) => Outcome {
            pass: c.pass,
            row: json!({"variant": v.name(), "shape": shape, "inputs": inputs, "pass": c.pass,
                "max_abs_err": c.max_abs_err, "rel_l2_err": c.rel_l2_err, "nan": c.nan_count,
                "unwritten": c.unwritten, "seed": seed, "value_scale": c.value_scale,
                "worst_ratio": c.worst_ratio(), "check": c}),
        },
        Err(e) => Outcome {
            pass: false,
            row: json!({"variant": v.name(), "shape": shape, "inputs": inputs, "pass": false,
                "error": e.to_string(), "seed": seed}),
        },
    }
}

pub fn selftest(args: SelftestArgs) -> i32 {
    let mut engine = match Engine::new() {
        Ok(e) => e,
        Err(e) => return fail(exit::NO_GPU, e),
    };
    let base = args.seed.unwrap_or_else(crate::session::inputs::fresh_seed);
    if args.mutations {
        return super::mutations::mutations(&mut engine, &args, base);
    }
    if let Some(seeds) = args.calibrate {
        return super::calibrate::calibrate(&mut engine, &args, base, seeds);
    }
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    let mut failures: Vec<Failure> = Vec::new();
    let all = cases(&args, engine.info.cc());
    if !args.json {
        println!(
            "selftest on {} ({}): {} cases, base seed {base} (--seed {base} reproduces them)",
            engine.info.name,
            engine.arch,
            all.len()
        );
    }
    for (i, case) in all.iter().enumerate() {
        if let Some(why) = engine.info.smem_refusal(&case.variant, case.shape.d) {
            if !skipped.contains(&why) {
                if !args.json {
                    println!("skip {why}");
                }
                skipped.push(why);
            }
            continue;
        }
        let seed = base + i as u64;
        let Outcome { pass, row } = run_case(&mut engine, case, seed);
        if !pass {
            failures.push(Failure {
                case: format!("{} at {}", case.variant.name(), case.shape),
                inputs: case.inputs.to_string(),
                why: failure_reason(&row),
            });
        }
        if !args.json {
            let name = case.variant.name();
            let shape = case.shape.to_string();
            match (row.get("error"), row.get("not_taken")) {
                (_, Some(why)) => println!(
                    "skip {name:<28} {shape:<24} {:<9} not run: {why}",
                    case.inputs
                ),
                (Some(e), _) => println!("FAIL {name:<28} {shape:<24} {:<9} {e}", case.inputs),
                _ => println!(
                    "{} {name:<28} {shape:<24} {:<9} max|Δ| {:.2e}  rel L2 {:.2e}  worst {:.3} of its bound  NaN {}  unwritten {}",
                    if pass { "ok  " } else { "FAIL" },
                    case.inputs.to_string(),
                    row["max_abs_err"].as_f64().unwrap_or(f64::NAN),
                    row["rel_l2_err"].as_f64().unwrap_or(f64::NAN),
                    row["worst_ratio"].as_f64().unwrap_or(f64::NAN),
                    row["nan"],
                    row["unwritten"]
                ),
            }
        }
        results.push(row);
    }
    let ran = results.len();
    let failed = failures.len();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"gpu": engine.info, "base_seed": base,
                "cases": results, "failed": failed, "skipped": skipped}))
            .unwrap_or_default()
        );
    } else {
        // The failures again, a line per variant and shape, so the end of a
        // long run says what failed without scrolling back.
        for line in recap(&failures) {
            println!("{line}");
        }
        println!(
            "selftest on {} ({}): {} passed, {} failed, {} tiles skipped (over this GPU's shared memory)",
            engine.info.name,
            engine.arch,
            ran - failed,
            failed,
            skipped.len()
        );
    }
    if failed > 0 { exit::CHECK_FAILED } else { 0 }
}

/// A failed case as the recap groups it.
struct Failure {
    /// `VARIANT at SHAPE`.
    case: String,
    inputs: String,
    /// The error's first line, or how far past its bound the worst element was.
    why: String,
}

/// An error's first line; else NaN, then elements left unwritten, then how
/// far past its bound the worst element was.
fn failure_reason(row: &serde_json::Value) -> String {
    if let Some(e) = row.get("error").and_then(|e| e.as_str()) {
        return e.lines().next().unwrap_or("").to_string();
    }
    let count = |k: &str| row[k].as_u64().unwrap_or(0);
    match (count("nan"), count("unwritten")) {
        (n, _) if n > 0 => format!("{n} NaN"),
        (_, u) if u > 0 => format!("{u} elements unwritten"),
        _ => format!(
            "worst {:.3} of its bound",
            row["worst_ratio"].as_f64().unwrap_or(f64::NAN)
        ),
    }
}

/// `FAILED VARIANT at SHAPE: INPUTS (WHY)`, one line per variant and shape in
/// the order they first failed, the inputs that failed listed and the first
/// reason given.
fn recap(failures: &[Failure]) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<&str>, &str)> = Vec::new();
    for f in failures {
        match groups.iter_mut().find(|(case, _, _)| *case == f.case) {
            Some((_, inputs, _)) => inputs.push(&f.inputs),
            None => groups.push((&f.case, vec![&f.inputs], &f.why)),
        }
    }
    groups
        .into_iter()
        .map(|(case, inputs, why)| format!("FAILED {case}: {} ({why})", inputs.join(", ")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recap_groups_failures_by_variant_and_shape() {
        let f = |case: &str, inputs: &str, why: &str| Failure {
            case: case.into(),
            inputs: inputs.into(),
            why: why.into(),
        };
        let lines = recap(&[
            f(
                "py:flex at B1 H4/1 S100/1000 D64",
                "uniform",
                "NoValidChoicesError",
            ),
            f(
                "py:flex at B2 H8/2 S77/4097 D128",
                "uniform",
                "NoValidChoicesError",
            ),
            f(
                "py:flex at B1 H4/1 S100/1000 D64",
                "ties",
                "NoValidChoicesError",
            ),
        ]);
        assert_eq!(
            lines,
            [
                "FAILED py:flex at B1 H4/1 S100/1000 D64: uniform, ties (NoValidChoicesError)",
                "FAILED py:flex at B2 H8/2 S77/4097 D128: uniform (NoValidChoicesError)",
            ]
        );
        assert!(recap(&[]).is_empty());
        let row = |v: serde_json::Value| failure_reason(&v);
        assert_eq!(
            row(json!({"error": "NoValidChoicesError\nmore"})),
            "NoValidChoicesError"
        );
        assert_eq!(row(json!({"nan": 3, "unwritten": 5})), "3 NaN");
        assert_eq!(
            row(json!({"nan": 0, "unwritten": 5})),
            "5 elements unwritten"
        );
        assert_eq!(
            row(json!({"nan": 0, "worst_ratio": 1.5})),
            "worst 1.500 of its bound"
        );
    }

    #[test]
    fn many_blocks_shapes_outnumber_an_h100s_sms() {
        // 64-, 128- and 192-row tiles: more row blocks than 132 SMs, and
        // without a mask a last round that is part empty.
        for s in many_blocks_shapes() {
            for rows in [64, 128, 192] {
                let blocks = s.b * s.h * s.s.div_ceil(rows);
                assert!(blocks > 132, "{s} at {rows} rows: {blocks} blocks");
                if !s.causal {
                    assert_ne!(blocks % 132, 0, "{s} at {rows} rows");
                }
            }
        }
        assert!(!many_blocks_shapes()[2].causal && many_blocks_shapes()[2].d == 64);
    }
}
