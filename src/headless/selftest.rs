//! `attnscope selftest`: every variant against the f64 reference over a
//! spread of shapes.

use serde_json::json;

use super::fail;
use crate::cli::{SelftestArgs, exit};
use crate::gpu::engine::Engine;
use crate::gpu::nvrtc::KERNEL_SOURCE;
use crate::session::{Shape, TileConfig, Variant};

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
