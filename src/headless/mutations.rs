//! `attnscope selftest --mutations`: every planted bug (the manifest's
//! test-only toggles with mutation sites) built into each variant that
//! lists it, run through the default check at nine shapes (fp16, then
//! bf16) beside the same variant without it, on the same inputs. A bug must
//! be caught at every shape where it changes O; a build or launch error is
//! an error, never a catch.

use std::collections::HashMap;

use serde_json::json;

use super::fail;
use super::selftest::shape;
use crate::cli::{SelftestArgs, exit};
use crate::gpu::engine::Engine;
use crate::session::check::Limit;
use crate::session::manifest::registry;
use crate::session::{Dtype, InputSet, Inputs, Shape, Toggles, Variant};

/// The planted bugs and the variants each is planted in, those a GPU of
/// compute capability `cc` runs.
pub(super) fn mutants(cc: u32) -> Vec<(String, Variant)> {
    let kernel = registry::primary();
    let m = registry::manifest(kernel);
    let mut out = Vec::new();
    for (i, t) in m.toggles.iter().enumerate() {
        for (bits, tile) in m.mutation_sites(i) {
            let v = Variant {
                kernel,
                toggles: Toggles(bits | 1 << i),
                tile,
            };
            if v.runs_on(cc) {
                out.push((t.name.clone(), v));
            }
        }
    }
    out
}

/// The variant without its test-only toggles.
pub(super) fn clean_of(mutant: Variant) -> Variant {
    let m = mutant.manifest().expect("a kernel variant");
    let test_only = m
        .toggles
        .iter()
        .enumerate()
        .filter(|(_, t)| t.test_only)
        .fold(0u64, |acc, (i, _)| acc | 1 << i);
    Variant {
        toggles: Toggles(mutant.toggles.0 & !test_only),
        ..mutant
    }
}

/// What the check made of one mutant at one shape.
#[derive(Clone, Debug, PartialEq)]
enum Cell {
    /// The check failed on these distributions.
    Caught(Vec<Inputs>),
    /// O differs from the clean variant's and every check passed; by how
    /// much, at most over the distributions (‖O − O_clean‖ ÷ ‖O_clean‖),
    /// and the mutant's error against the f64 reference over the clean
    /// variant's (relative L2, the most over the distributions): near 1, the
    /// bug moved O no further from the truth than rounding does.
    Missed(f64, f64),
    /// Every check passed, and in every region the pooled test reads (every
    /// row, a head, a query tile, a column, …) the bug moved O's mean by
    /// less than the smallest shift the clean variant's check is shown to
    /// catch there (its detection limits): no check could see it. With the
    /// largest of those moves over its limit, over the distributions.
    Below(f64),
    /// O is the clean variant's, bit for bit, on every distribution: the
    /// bug does not fire here (a causal bug at a non-causal shape).
    Silent,
    /// The variant's manifest does not take the shape (an ABI 1 kernel at
    /// grouped-query heads): nothing ran.
    NotTaken,
    Error(String),
}

impl Cell {
    fn text(&self, all: usize) -> String {
        match self {
            Cell::Caught(by) if by.len() == all => "caught".into(),
            Cell::Caught(by) => {
                let names: Vec<String> = by.iter().map(Inputs::to_string).collect();
                format!("caught ({})", names.join("+"))
            }
            Cell::Missed(moved, err) => format!(
                "MISSED ({}, err {err:.2}x)",
                crate::metrics::bias::percent(*moved)
            ),
            Cell::Below(ratio) => format!("below ({ratio:.2} of its limit)"),
            Cell::Silent => "silent".into(),
            Cell::NotTaken => "—".into(),
            Cell::Error(_) => "ERROR".into(),
        }
    }
}

/// How far `a` moved from `b` (bits of `dtype`, at `shape`) in each group
/// the pooled test reads (every row, each head, query tile, column, …),
/// over the limit the check was shown to reach for that group: the largest
/// ratio. A group whose own limit was not measured is held to one that is
/// no larger than its own: the measured group of its region when that pools
/// at least as many units, else the largest limit of a measured row group
/// pooling at least as many rows (more rows, a sharper test), else the
/// sharpest limit. A limit whose 1% went uncaught is over 1%: `PLANT_MAX`
/// stands for it. None when no limit was measured.
fn over_limits(shape: &Shape, a: &[u16], b: &[u16], limits: &[Limit]) -> Option<f64> {
    use crate::metrics::bias::{PLANT_MAX, limit_regions};
    use crate::session::check::Region;
    let d = shape.d as usize;
    let s = shape.s as usize;
    let mut p = crate::metrics::bias::Pooled::new(shape);
    for (i, (x, y)) in a.chunks(d).zip(b.chunks(d)).enumerate() {
        let got: Vec<f32> = x.iter().map(|&v| shape.dtype.to_f32(v)).collect();
        let want: Vec<f64> = y
            .iter()
            .map(|&v| f64::from(shape.dtype.to_f32(v)))
            .collect();
        p.add_row(i / s, i % s, &got, &want, 1.0);
    }
    let groups = p.group_means();
    let units = |region: Region, index: u64| {
        groups
            .iter()
            .filter(|g| (g.region, g.index) == (region, index))
            .fold(0.0, |n: f64, g| n.max(g.units))
    };
    // (region, index, units, limit) of each measured limit.
    let regions = limit_regions(shape);
    let measured: Vec<(Region, u64, f64, f64)> = limits
        .iter()
        .filter_map(|l| {
            let index = regions.iter().find(|r| r.0 == l.region)?.1;
            let limit = l.rel.unwrap_or(PLANT_MAX);
            Some((l.region, index, units(l.region, index), limit))
        })
        .collect();
    let sharpest = measured.iter().map(|m| m.3).reduce(f64::min)?;
    let limit_of = |g: &crate::metrics::bias::GroupMean| {
        let own = measured.iter().find(|m| (m.0, m.1) == (g.region, g.index));
        let same_region = measured.iter().find(|m| m.0 == g.region && m.2 >= g.units);
        // A column's units are single elements, noisier than rows: no row
        // group's limit bounds a column's, nor the other way round.
        let larger_rows = measured
            .iter()
            .filter(|m| m.0 != Region::Column && g.region != Region::Column && m.2 >= g.units)
            .map(|m| m.3)
            .reduce(f64::max);
        own.or(same_region)
            .map(|m| m.3)
            .or(larger_rows)
            .unwrap_or(sharpest)
    };
    Some(
        groups
            .iter()
            .filter(|g| g.mean > 0.0)
            .map(|g| g.mean / limit_of(g))
            .fold(0.0, f64::max),
    )
}

/// ‖a − b‖ ÷ ‖b‖ over two outputs (bits of `dtype`).
fn relative_change(dtype: Dtype, a: &[u16], b: &[u16]) -> f64 {
    let (mut diff, mut norm) = (0f64, 0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (dtype.to_f32(x) as f64, dtype.to_f32(y) as f64);
        if x.is_finite() && y.is_finite() {
            diff += (x - y) * (x - y);
            norm += y * y;
        }
    }
    if norm > 0.0 {
        (diff / norm).sqrt()
    } else {
        0.0
    }
}

/// The clean variant's output at (shape, distribution), its relative L2
/// error against the reference and its check's detection limits, or why it
/// did not run.
type CleanRun = (Vec<u16>, f64, Vec<Limit>);
type CleanRuns = HashMap<(Variant, Shape, Inputs), Result<CleanRun, String>>;

/// Everything the table and the JSON say.
#[derive(Default)]
struct Findings {
    rows: Vec<(String, Variant, Vec<Cell>)>,
    checks: Vec<serde_json::Value>,
    clean_failed: Vec<String>,
}

impl Findings {
    /// A mutant passes when it fired somewhere, was caught wherever it
    /// moved O as far as a check can see, and nothing errored.
    fn verdict(cells: &[Cell]) -> bool {
        cells.iter().any(|c| matches!(c, Cell::Caught(_)))
            && cells.iter().all(|c| {
                matches!(
                    c,
                    Cell::Caught(_) | Cell::Below(..) | Cell::Silent | Cell::NotTaken
                )
            })
    }

    fn failed(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|(_, _, cells)| !Findings::verdict(cells))
            .map(|(what, v, _)| format!("{what} in {}", clean_of(*v).name()))
            .collect()
    }
}

/// The clean variant's run at (shape, distribution, seed), once.
fn clean_run(
    engine: &mut Engine,
    runs: &mut CleanRuns,
    found: &mut Findings,
    (clean, shape, dist, seed): (Variant, Shape, Inputs, u64),
) -> Result<CleanRun, String> {
    runs.entry((clean, shape, dist))
        .or_insert_with(
            || match engine.check_output_with(&clean, &shape, dist, seed, true) {
                Ok((c, out)) => {
                    if !c.pass {
                        found.clean_failed.push(format!(
                            "{clean} {shape} {dist} (seed {seed}): {}",
                            crate::metrics::reference::why_failed(&c)
                        ));
                    }
                    let limits = c.bias.map(|b| b.limits).unwrap_or_default();
                    Ok((out, c.rel_l2_err, limits))
                }
                Err(e) => Err(format!("{clean} (unmutated) {shape} {dist}: {e}")),
            },
        )
        .clone()
}

/// One mutant at one shape, on every distribution.
fn cell(
    engine: &mut Engine,
    runs: &mut CleanRuns,
    found: &mut Findings,
    (what, mutant): (&str, Variant),
    shape: Shape,
    dists: &[Inputs],
    seed: u64,
) -> Cell {
    let clean = clean_of(mutant);
    if clean.runs(&shape).is_err() || engine.info.smem_refusal(&clean, shape.d).is_some() {
        return Cell::NotTaken;
    }
    let mut caught = Vec::new();
    let mut fired = false;
    let (mut moved, mut err) = (0f64, 0f64);
    // The largest move over its limit, None once one region moved past what any limit says.
    let mut below = Some(0f64);
    for &dist in dists {
        let (base, clean_err, limits) =
            match clean_run(engine, runs, found, (clean, shape, dist, seed)) {
                Ok(o) => o,
                Err(e) => return Cell::Error(e),
            };
        let (c, out) = match engine.check_output(&mutant, &shape, dist, seed) {
            Ok(r) => r,
            Err(e) => return Cell::Error(format!("{mutant} {shape} {dist}: {e}")),
        };
        let changed = out.iter().zip(&base).any(|(a, b)| a != b);
        fired |= changed;
        moved = moved.max(relative_change(shape.dtype, &out, &base));
        if changed {
            below = below
                .zip(over_limits(&shape, &out, &base, &limits))
                .map(|(a, b)| a.max(b));
        }
        if changed {
            err = err.max(c.rel_l2_err / clean_err.max(f64::MIN_POSITIVE));
        }
        if !c.pass {
            caught.push(dist);
        }
        found.checks.push(
            json!({"mutation": what, "mutant": mutant.name(), "shape": shape,
            "inputs": dist, "seed": seed, "fired": changed, "caught": !c.pass,
            "worst_ratio": c.worst_ratio(), "check": c}),
        );
    }
    match (caught.is_empty(), fired) {
        (false, _) => Cell::Caught(caught),
        (true, true) => match below {
            Some(r) if r < 1.0 => Cell::Below(r),
            _ => Cell::Missed(moved, err),
        },
        (true, false) => Cell::Silent,
    }
}

/// Runs every mutant through the check at each shape (shape i on seed
/// base + i, the clean variant on the same inputs). Exits 1 when a bug is
/// missed where it fires, never fires, or a build or launch fails, or when
/// an unmutated variant fails (the table would mean nothing).
pub(super) fn mutations(engine: &mut Engine, args: &SelftestArgs, base: u64) -> i32 {
    let dists = args
        .inputs
        .clone()
        .unwrap_or_else(InputSet::default_check)
        .0;
    let mutants = mutants(engine.info.cc());
    if mutants.is_empty() {
        return fail(
            exit::USAGE,
            "this kernel's manifest plants no bugs: give a test_only toggle mutation sites (docs/kernel-abi.md)",
        );
    }
    let dtypes = args
        .dtype
        .map_or(vec![Dtype::F16, Dtype::Bf16], |d| vec![d]);
    let mut all_ok = true;
    let mut docs = Vec::new();
    for dtype in dtypes {
        let shapes: Vec<Shape> = mutation_shapes()
            .iter()
            .map(|s| s.with_dtype(dtype))
            .collect();
        let mut seen = std::collections::HashSet::new();
        let every: Vec<Variant> = mutants
            .iter()
            .flat_map(|m| [m.1, clean_of(m.1)])
            .filter(|v| seen.insert(*v))
            .collect();
        super::calibrate::prebuild(engine, &every, &shapes, &[dtype]);
        let mut runs = CleanRuns::new();
        let mut found = Findings::default();
        for (what, mutant) in &mutants {
            let cells: Vec<Cell> = shapes
                .iter()
                .enumerate()
                .map(|(i, &s)| {
                    let seed = base + i as u64;
                    let at = (what.as_str(), *mutant);
                    cell(engine, &mut runs, &mut found, at, s, &dists, seed)
                })
                .collect();
            // A path this format never runs (the seeds' paths in bf16).
            if !cells.iter().all(|c| *c == Cell::NotTaken) {
                found.rows.push((what.clone(), *mutant, cells));
            }
        }
        all_ok &= found.failed().is_empty() && found.clean_failed.is_empty();
        if args.json {
            docs.push(json_of(dtype, &shapes, &found));
        } else {
            print_table(engine, (base, dtype), &shapes, &dists, &found);
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"gpu": engine.info, "base_seed": base,
                "inputs": dists, "by_dtype": docs}))
            .unwrap_or_default()
        );
    }
    if all_ok { 0 } else { exit::CHECK_FAILED }
}

/// The shapes every planted bug meets, in each format: the mission shape;
/// S = 333 causal (ragged query and key tails); not causal with more row
/// blocks than SMs, so persistent tiles walk several and split tiles'
/// groups merge in many CTAs; grouped-query heads (8 over 2) after a cache
/// with the mask aligned to the end, where a wrong KV head or a mask
/// aligned to the start changes O; D 128 and D 256 with ragged tails; 16
/// queries after 4,097 keys, where the decode tiles split the keys in more
/// splits than one round of their merge loads; two heads of 600 causal
/// rows, whose row blocks split their keys 1, 2 and 3 ways; and 16 queries
/// of one head over 135,168 keys, one row block that a decode tile splits
/// as many ways as the GPU holds (`mutation_paths` says which shape reaches
/// which path).
pub fn mutation_shapes() -> Vec<Shape> {
    vec![
        Shape::MISSION,
        shape("1,3,333,64", true),
        shape("1,72,333,64", false),
        shape("2,8/2,100/333,64", true),
        shape("1,4,333,128", true),
        shape("1,2,200,256", true),
        shape("1,8/2,16/4097,64", true),
        shape("1,2,600,64", true),
        shape("1,1,16/135168,64", true),
    ]
}

fn json_of(dtype: Dtype, shapes: &[Shape], f: &Findings) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = f
        .rows
        .iter()
        .map(|(what, mutant, cells)| {
            let by: Vec<serde_json::Value> = shapes
                .iter()
                .zip(cells)
                .map(|(s, c)| {
                    let (state, by, error) = match c {
                        Cell::Caught(by) => ("caught", by.clone(), None),
                        Cell::Missed(..) => ("missed", Vec::new(), None),
                        Cell::Below(..) => ("below_limit", Vec::new(), None),
                        Cell::Silent => ("silent", Vec::new(), None),
                        Cell::NotTaken => ("not_taken", Vec::new(), None),
                        Cell::Error(e) => ("error", Vec::new(), Some(e.clone())),
                    };
                    json!({"shape": s, "state": state, "caught_by": by, "error": error})
                })
                .collect();
            json!({"mutation": what, "path": clean_of(*mutant).name(), "mutant": mutant.name(),
                "ok": Findings::verdict(cells), "by_shape": by})
        })
        .collect();
    json!({"dtype": dtype, "shapes": shapes, "table": rows, "checks": f.checks,
        "not_caught": f.failed(), "unmutated_failures": f.clean_failed})
}

fn print_table(
    engine: &Engine,
    (base, dtype): (u64, Dtype),
    shapes: &[Shape],
    dists: &[Inputs],
    f: &Findings,
) {
    let names: Vec<String> = dists.iter().map(Inputs::to_string).collect();
    println!(
        "mutations on {} ({}), {dtype}: the check on {} inputs (shape i on seed {base} + i) against each planted bug",
        engine.info.name,
        engine.arch,
        names.join(", ")
    );
    println!(
        "caught: the check failed (on the distributions named, when not all); below (r of its limit): every check passed, and in each region the pooled test reads (every row, a head, a query tile, a column, …) the bug moved O's mean by less than the smallest shift the clean variant's check is shown to catch there, at most r times it (no check could see it); MISSED (x, err e): O moved x and the check passed, with the mutant's error e times the clean variant's; silent: the bug left O unchanged at that shape; —: the variant does not take the shape (its manifest); ERROR: a build or launch failed (never counted as caught)"
    );
    let w = f
        .rows
        .iter()
        .map(|(_, v, _)| clean_of(*v).name().len())
        .fold(24, usize::max);
    let cw = shapes
        .iter()
        .map(|s| s.to_string().len())
        .fold(18, usize::max);
    print!("{:<13} {:<w$}", "mutation", "path");
    for s in shapes {
        print!(" {:<cw$}", s.to_string());
    }
    println!(" verdict");
    for (what, v, cells) in &f.rows {
        print!("{what:<13} {:<w$}", clean_of(*v).name());
        for c in cells {
            print!(" {:<cw$}", c.text(dists.len()));
        }
        println!(
            " {}",
            if Findings::verdict(cells) {
                "ok"
            } else {
                "NOT CAUGHT"
            }
        );
    }
    for (what, v, cells) in &f.rows {
        for c in cells {
            if let Cell::Error(e) = c {
                println!("ERROR {what} in {}: {e}", clean_of(*v).name());
            }
        }
    }
    for c in &f.clean_failed {
        println!("the unmutated variant failed: {c}");
    }
    let unreached = super::mutation_paths::unreached(f.rows.iter().map(|r| clean_of(r.1)), shapes);
    if unreached.is_empty() {
        println!(
            "paths: every planted variant meets at these shapes each path it has (ragged key tails with and without the mask, a ragged query tail, grouped-query heads, each D it launches at)"
        );
    } else {
        println!("paths no shape here reaches: {}", unreached.join("; "));
    }
    let failed = f.failed();
    if failed.is_empty() && f.clean_failed.is_empty() {
        println!(
            "every planted bug ({} in {} variants) is caught wherever it moves O as far as the check can see, by the check on {} inputs",
            f.rows
                .iter()
                .map(|r| &r.0)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            f.rows.len(),
            names.join(" and ")
        );
    } else if !failed.is_empty() {
        println!("NOT CAUGHT: {}", failed.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutant_passes_only_when_caught_wherever_it_fires() {
        let u = vec![Inputs::Uniform];
        let ok = [
            Cell::Caught(u.clone()),
            Cell::Silent,
            Cell::Caught(u.clone()),
        ];
        assert!(Findings::verdict(&ok));
        assert!(!Findings::verdict(&[
            Cell::Caught(u.clone()),
            Cell::Missed(1e-4, 1.0)
        ]));
        assert_eq!(
            Cell::Missed(8e-6, 1.013).text(3),
            "MISSED (0.00080%, err 1.01x)"
        );
        assert!(
            !Findings::verdict(&[Cell::Silent, Cell::Silent]),
            "never fired"
        );
        assert!(
            !Findings::verdict(&[Cell::Caught(u.clone()), Cell::Error("launch".into())]),
            "an error is not a catch"
        );
        assert!(!Findings::verdict(&[Cell::Error("build".into())]));
        // Under what the check can see is no miss; a mutant caught nowhere still fails.
        assert!(Findings::verdict(&[
            Cell::Caught(u.clone()),
            Cell::Below(0.4)
        ]));
        assert!(!Findings::verdict(&[Cell::Below(0.4), Cell::Silent]));
        assert_eq!(Cell::Below(0.4).text(3), "below (0.40 of its limit)");
        assert_eq!(Cell::Caught(u).text(2), "caught (uniform)");
    }

    /// A bug is below the check's reach only where every region it moves moves less than that
    /// region's limit: one head 1% off is past a 0.5% head limit however small its share of O.
    #[test]
    fn a_move_is_held_to_each_regions_limit() {
        use crate::session::check::Region;
        let shape: Shape = "1,4,64,64".parse().unwrap();
        let d = Dtype::F16;
        let clean: Vec<u16> = (0..4 * 64 * 64)
            .map(|i| d.from_f32(1.0 + (i % 7) as f32 / 8.0))
            .collect();
        let mut moved = clean.clone();
        for x in &mut moved[..64 * 64] {
            *x = d.from_f32(d.to_f32(*x) * 1.01);
        }
        let limits = |head: f64| {
            [Region::All, Region::Head, Region::QueryTile, Region::Column]
                .map(|region| Limit {
                    region,
                    rel: Some(if region == Region::Head { head } else { 0.02 }),
                })
                .to_vec()
        };
        let r = over_limits(&shape, &moved, &clean, &limits(0.005)).unwrap();
        assert!(r > 1.9 && r < 2.1, "{r}");
        let r = over_limits(&shape, &moved, &clean, &limits(0.02)).unwrap();
        assert!(r < 1.0, "{r}");
        // A region with no measured limit is held to a row group's that pools as many rows or
        // more (here every row's, 2%: head 0's 1% is half of it) ...
        let r = over_limits(&shape, &moved, &clean, &limits(0.02)[..1]).unwrap();
        assert!(r > 0.45 && r < 0.55, "{r}");
        // ... one whose 1% went uncaught is over 1% (1% there is not below it), and no limit
        // at all is no evidence of being below.
        let mut uncaught = limits(0.02);
        uncaught[1].rel = None;
        let r = over_limits(&shape, &moved, &clean, &uncaught).unwrap();
        assert!(r > 0.95, "{r}");
        assert!(over_limits(&shape, &moved, &clean, &[]).is_none());
    }

    /// run181: a bias in the ragged last key tile moves, under the causal mask, only the rows of
    /// the last query tile, which the key-tile groups pool too; those groups are held to the last
    /// query tile's limit (the same rows), not to every row's, which is four times sharper.
    #[test]
    fn a_small_group_is_held_to_a_limit_of_its_size() {
        use crate::session::check::Region;
        let shape = Shape {
            causal: true,
            .."1,3,333,64".parse::<Shape>().unwrap()
        };
        let d = Dtype::F16;
        let clean: Vec<u16> = (0..3 * 333 * 64)
            .map(|i| d.from_f32(1.0 + (i % 7) as f32 / 8.0))
            .collect();
        let mut moved = clean.clone();
        for (i, x) in moved.iter_mut().enumerate() {
            if (i / 64) % 333 >= 320 {
                *x = d.from_f32(d.to_f32(*x) * 1.004);
            }
        }
        let limit = |region, rel| Limit {
            region,
            rel: Some(rel),
        };
        let limits = [
            limit(Region::All, 0.0005),
            limit(Region::Head, 0.001),
            limit(Region::QueryTile, 0.008),
            limit(Region::Column, 0.004),
        ];
        let r = over_limits(&shape, &moved, &clean, &limits).unwrap();
        assert!(r > 0.4 && r < 0.6, "{r}");
        // Over the last tile's limit it is no longer below.
        let mut tight = limits;
        tight[2].rel = Some(0.002);
        assert!(over_limits(&shape, &moved, &clean, &tight).unwrap() > 1.5);
    }

    #[test]
    fn every_planted_bug_has_sites_and_cleans_to_a_shipped_variant() {
        let all = mutants(90);
        let names: std::collections::BTreeSet<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
        for want in [
            "mutrescale",
            "mutmerge",
            "mutexp",
            "mutrow",
            "muttile",
            "mutlasthead",
            "mutlastbatch",
            "mutcolumn",
            "mutcausal",
            "mutnorm",
            "mutsplits",
            "mutbiashead",
            "mutbiascol",
            "mutbiaskeys",
            "mutbiastail",
        ] {
            assert!(names.contains(want), "{want} has no site");
        }
        for (what, v) in &all {
            let clean = clean_of(*v);
            assert_ne!(clean, *v, "{what}");
            assert!(clean.check().is_ok() && v.check().is_ok(), "{what} {v}");
        }
        // The seeds' paths and the mma epilogue carry each output bug.
        for what in [
            "mutrow",
            "muttile",
            "mutlasthead",
            "mutlastbatch",
            "mutcolumn",
            "mutcausal",
            "mutnorm",
            "mutbiashead",
            "mutbiascol",
            "mutbiaskeys",
            "mutbiastail",
        ] {
            let paths: Vec<String> = all
                .iter()
                .filter(|(n, _)| n == what)
                .map(|(_, v)| clean_of(*v).name())
                .collect();
            for p in ["scalar", "wmma+pv+async", "mma"] {
                assert!(paths.iter().any(|x| x == p), "{what} not in {p}: {paths:?}");
            }
        }
    }
}
