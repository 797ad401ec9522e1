use super::*;

/// One archived tune table: where it came from, its shape, each correct
/// tile's p50.
struct Table {
    source: String,
    shape: Shape,
    p50: Vec<(Variant, f64)>,
}

fn archive() -> Vec<Table> {
    let mut out: Vec<Table> = Vec::new();
    for line in include_str!("../../../tests/fixtures/tune_archive.txt").lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            [w, ..] if w.starts_with('#') => {}
            ["table", run, file, dims, rest @ ..] => {
                let mut shape: Shape = dims.parse().unwrap();
                for flag in rest {
                    shape = match *flag {
                        "causal" => shape.with_causal(true),
                        "bf16" => shape.with_dtype(crate::session::Dtype::Bf16),
                        _ => panic!("tune_archive.txt: unknown flag {flag} in {line}"),
                    };
                }
                out.push(Table {
                    source: format!("{run} {file}"),
                    shape,
                    p50: Vec::new(),
                });
            }
            [tile, p50, _smem] => {
                let v: Variant = format!("mma+async@{tile}").parse().unwrap();
                out.last_mut().unwrap().p50.push((v, p50.parse().unwrap()));
            }
            _ => panic!("tune_archive.txt: unreadable line {line}"),
        }
    }
    out
}

/// The check issue 41 asks for: at every archived shape, among the tiles
/// measured there, the finalists hold one within 2% of the fastest. The
/// model's first two alone do at all but one (run130's B4 H12 S777 D64,
/// where the model ties the best small tile with one 11% slower): the
/// other row class's two reserved places are what covers it.
#[test]
fn finalists_hold_a_tile_within_two_percent_of_the_best_at_every_archived_shape() {
    let tables = archive();
    assert_eq!(tables.len(), 19);
    let mut first_two_miss = Vec::new();
    for t in &tables {
        let best = t.p50.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let tiles: Vec<Variant> = t.p50.iter().map(|p| p.0).collect();
        let p50 = |v: &Variant| t.p50.iter().find(|p| p.0 == *v).unwrap().1;
        let all = finalists(&tiles, &t.shape, 132, FINALISTS);
        assert_eq!(all.len(), FINALISTS);
        let within = |fin: &[(Variant, Option<f64>)]| {
            fin.iter().map(|f| p50(&f.0)).fold(f64::INFINITY, f64::min) / best
        };
        assert!(
            within(&all) <= 1.02,
            "{} at {}: the finalists {:?} are {:.3}× the best",
            t.source,
            t.shape,
            all.iter().map(|f| f.0.tile_text()).collect::<Vec<_>>(),
            within(&all)
        );
        // Sorted by estimate, the first two are the model's own first two.
        if within(&all[..2]) > 1.02 {
            first_two_miss.push(format!("{} {}", t.source, t.shape));
        }
    }
    assert_eq!(first_two_miss, ["run130 s777-all.json B4 H12 S777 D64"]);
}

#[test]
fn every_listed_tile_is_read_by_the_model_at_every_head_dim_it_takes() {
    let path: Variant = "mma+async".parse().unwrap();
    for d in [64, 128, 256] {
        let shape = Shape::new(2, 16, 1000, d);
        for v in path.tune_tiles(Some(90)) {
            if v.runs(&shape).is_ok() {
                let e = estimate(&v, &shape, 132).unwrap();
                assert!(e.is_finite() && e > 0.0, "{v} at {shape}: {e}");
            }
        }
    }
    // cuDNN has no tile to read: never ruled out.
    let cudnn = Variant::cudnn_on("bundled");
    assert_eq!(estimate(&cudnn, &Shape::MISSION, 132), None);
}

#[test]
fn the_model_sees_waves_causal_work_and_the_sm_count() {
    let v: Variant = "mma+async@128x128s3w8gqpt".parse().unwrap();
    // Its compute: at 128 queries a head the bytes (17 MB) bind instead.
    let work = |s: &Shape| {
        let launch = v.launch_shape(s, 132).unwrap();
        compute(&v, &tile_of(&v).unwrap(), s, launch, 132).unwrap()
    };
    let one_wave = work(&Shape::new(1, 132, 128, 128));
    // One more block than SMs: a second wave for one block.
    let two = work(&Shape::new(1, 133, 128, 128));
    assert!(two > 1.9 * one_wave, "{one_wave} {two}");
    let big = Shape::new(2, 16, 4096, 128);
    let full = estimate(&v, &big, 132).unwrap();
    let causal = estimate(&v, &big.with_causal(true), 132).unwrap();
    assert!(
        causal < 0.6 * full && causal > 0.4 * full,
        "{full} {causal}"
    );
    assert!(estimate(&v, &big, 66).unwrap() > 1.8 * full);
}

#[test]
fn finalists_take_the_other_row_class_and_keep_what_the_model_cannot_read() {
    let path: Variant = "mma+async".parse().unwrap();
    let tiles = path.tune_tiles(Some(90));
    let small = |v: &Variant| v.param("BLOCK_M").unwrap() <= 64;
    for shape in [Shape::new(2, 8, 512, 64), Shape::new(2, 16, 4096, 128)] {
        let fin = finalists(&tiles, &shape, 132, FINALISTS);
        assert_eq!(fin.len(), FINALISTS);
        assert!(fin.iter().any(|f| small(&f.0)), "{shape}: {fin:?}");
        assert!(fin.iter().any(|f| !small(&f.0)), "{shape}: {fin:?}");
        let unique: std::collections::BTreeSet<String> = fin.iter().map(|f| f.0.name()).collect();
        assert_eq!(unique.len(), FINALISTS);
    }
    // Fewer tiles than finalists: all of them.
    assert_eq!(finalists(&tiles[..3], &Shape::MISSION, 132, 5).len(), 3);
    let mut with_cudnn = tiles.clone();
    with_cudnn.push(Variant::cudnn_on("bundled"));
    let fin = finalists(&with_cudnn, &Shape::MISSION, 132, 5);
    assert!(fin.iter().any(|f| f.0.is_cudnn() && f.1.is_none()));
}

fn ranked(shape: &Shape) -> Vec<(Variant, f64)> {
    let path: Variant = "mma+async".parse().unwrap();
    let mut r: Vec<(Variant, f64)> = path
        .tune_tiles(Some(90))
        .into_iter()
        .filter(|v| v.runs(shape).is_ok())
        .map(|v| (v, estimate(&v, shape, 132).unwrap()))
        .collect();
    r.sort_by(|a, b| a.1.total_cmp(&b.1));
    r
}

fn is_decode(v: &Variant) -> bool {
    v.param("DECODE").is_some_and(|x| x != 0)
}

/// At decode shapes (a few queries over long keys, grouped K/V heads) the
/// d tiles read K/V once per K/V head and fill the GPU with key splits;
/// the others read it once per query head (run129: 64x64s2w4gq 616 µs, the
/// d tiles 368 to 381 at B8 H32/8 S1/32768).
#[test]
fn at_decode_shapes_a_split_kv_tile_is_the_first_pick() {
    use crate::session::Dtype;
    for shape in [
        Shape::new(8, 32, 1, 128).with_kv(8, 32_768),
        Shape::new(8, 32, 1, 128).with_kv(8, 16_384),
        Shape::new(1, 32, 1, 128).with_kv(8, 4096),
        Shape::new(8, 64, 16, 128).with_kv(8, 16_384),
        Shape::new(8, 64, 1, 128).with_kv(8, 32_768),
    ] {
        let shape = shape.with_dtype(Dtype::Bf16).with_causal(true);
        let r = ranked(&shape);
        assert!(is_decode(&r[0].0), "{shape}: {}", r[0].0.tile_text());
        let gq: Variant = "mma+async@64x64s2w4gq".parse().unwrap();
        let e = estimate(&gq, &shape, 132).unwrap();
        assert!(e > 1.5 * r[0].1, "{shape}: 64x64s2w4gq {e} vs {}", r[0].1);
        let tiles: Vec<Variant> = r.iter().map(|x| x.0).collect();
        let fin = finalists(&tiles, &shape, 132, FINALISTS);
        assert!(is_decode(&fin[0].0), "{shape}: {fin:?}");
    }
}

/// At long prefill the d tiles (16 to 64 rows, mma.sync) rank far down:
/// never a finalist, at least 1.5× the model's best and outside its first
/// quarter.
#[test]
fn at_long_prefill_split_kv_tiles_rank_far_down() {
    use crate::session::Dtype;
    let mut shapes: Vec<Shape> = archive().iter().map(|t| t.shape).collect();
    shapes.extend(Shape::PRESETS.iter().filter(|s| s.s >= 1024));
    shapes.push(
        Shape::new(1, 32, 8192, 128)
            .with_kv(8, 8192)
            .with_dtype(Dtype::Bf16),
    );
    for shape in shapes.into_iter().filter(|s| s.s >= 1024) {
        let r = ranked(&shape);
        let tiles: Vec<Variant> = r.iter().map(|x| x.0).collect();
        let fin = finalists(&tiles, &shape, 132, FINALISTS);
        assert!(fin.iter().all(|f| !is_decode(&f.0)), "{shape}: {fin:?}");
        for (at, (v, e)) in r.iter().enumerate().filter(|x| is_decode(&x.1.0)) {
            let v = v.tile_text();
            assert!(*e > 1.5 * r[0].1, "{shape}: {v} {e} vs {}", r[0].1);
            assert!(at >= r.len() / 4, "{shape}: {v} ranks {at} of {}", r.len());
        }
    }
}
