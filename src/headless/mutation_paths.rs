//! Which of `selftest --mutations`' shapes reach which path of a variant
//! (issue 56): a ragged key tail with and without the causal mask, a ragged
//! query tail, grouped-query heads, each head dimension the variant can
//! launch at; for the split-KV decode tiles (d) one split, splits merged in
//! one round of loads and in several, row blocks of different split counts
//! (the causal mask) over several heads, and the most splits the grid asks
//! for; for persistent tiles (r) a CTA walking several tiles and a last
//! round part full. A planted bug is only proven where a shape reaches its
//! path; the test below fails when a path of a planted variant has no shape.
//! The split counts and rounds follow `kernels/attention/decode.cuh` on a
//! GPU of 132 multiprocessors (H100 SXM, H200).

use crate::session::{Shape, Variant};

/// The most shared memory a block may take on the Hopper GPUs the tool is
/// run on (H100, H200): 227 KiB.
const SMEM_LIMIT: u32 = 232_448;

/// Multiprocessors of the H100 SXM and H200.
const SMS: u32 = 132;

/// What a variant's launch at a shape does, as far as the paths ask.
pub struct Geometry {
    /// Query and key rows of a tile (BLOCK_M, BLOCK_N).
    bm: u32,
    bn: u32,
    /// Split-KV decode: per row block, its split count and the splits one
    /// round of the merge loads.
    splits: Vec<(u32, u32)>,
    /// The grid's split count and the most any shape can ask of this tile
    /// (every multiprocessor filled by one row block).
    grid_splits: u32,
    most_splits: u32,
    /// Persistent tiles: the row-block tiles and the CTAs walking them.
    persistent: Option<(u32, u32)>,
}

impl Geometry {
    pub fn of(v: &Variant, shape: &Shape) -> Geometry {
        let param = |define: &str| v.param(define).unwrap_or(0).max(0) as u32;
        let (bm, bn) = (param("BLOCK_M").max(1), param("BLOCK_N").max(1));
        let mut g = Geometry {
            bm,
            bn,
            splits: Vec::new(),
            grid_splits: 0,
            most_splits: 0,
            persistent: None,
        };
        if param("PERSIST") == 1 {
            let tiles = shape.s.div_ceil(bm) * shape.h * shape.b;
            g.persistent = Some((tiles, tiles.min(SMS)));
        }
        if param("DECODE") == 1 {
            let grid = |s: &Shape| v.launch_shape(s, SMS).map_or(1, |l| l.grid.1);
            g.grid_splits = grid(shape);
            let one_block = Shape::new(1, 1, 1, shape.d)
                .with_dtype(shape.dtype)
                .with_kv(1, 1 << 20);
            g.most_splits = grid(&one_block);
            g.splits = decode_splits(shape, g.grid_splits, (bm, bn * param("SPLIT").max(1)), {
                param("WARPS") * 32
            });
        }
        g
    }
}

/// Per row block (`decode.cuh`): its split count (the grid's, no more than
/// the key tiles its causal rows read, within the scratch) and the splits a
/// round of the merge loads.
fn decode_splits(
    shape: &Shape,
    grid: u32,
    (bm, kv_rows): (u32, u32),
    threads: u32,
) -> Vec<(u32, u32)> {
    let (sq, sk, d) = (shape.s, shape.kv_len, shape.d);
    let rows = shape.h / shape.kv_heads.max(1) * sq;
    let n_rb = rows.div_ceil(bm);
    let units = n_rb * shape.kv_heads * shape.b;
    let slots = (1u32 << 22) / (bm * (d + 2));
    let per_unit = if units > 1 << 14 {
        1
    } else {
        grid.min(slots / units.max(1))
    };
    (0..n_rb)
        .map(|rb| {
            let q0 = rb * bm;
            let r_last = (q0 + bm).min(rows) - 1;
            let i_max = if q0 / sq != r_last / sq {
                sq - 1
            } else {
                r_last % sq
            };
            let kv_end = if shape.causal {
                sk.min(i_max + 1 + sk - sq)
            } else {
                sk
            };
            let nsplit = per_unit.min(kv_end.div_ceil(kv_rows)).max(1);
            let valid = bm.min(rows - q0);
            let unroll = if valid * (d / 4) <= threads || valid * (d / 8) <= threads {
                16
            } else {
                (16 / (bm * d / 8).div_ceil(threads)).max(1)
            };
            (nsplit, unroll)
        })
        .collect()
}

/// A path: whether a variant has it at all, and whether a shape reaches it.
pub struct Path {
    pub name: &'static str,
    has: fn(&Geometry) -> bool,
    reaches: fn(&Shape, &Geometry) -> bool,
}

fn always(_: &Geometry) -> bool {
    true
}

fn decode(g: &Geometry) -> bool {
    !g.splits.is_empty()
}

fn persistent(g: &Geometry) -> bool {
    g.persistent.is_some()
}

pub const PATHS: [Path; 14] = [
    Path {
        name: "a ragged key tail under the causal mask",
        has: always,
        reaches: |s, g| s.causal && s.kv_len % g.bn != 0,
    },
    Path {
        name: "a ragged key tail without a mask",
        has: always,
        reaches: |s, g| !s.causal && s.kv_len % g.bn != 0,
    },
    Path {
        name: "a ragged query tail",
        has: always,
        reaches: |s, g| s.s % g.bm != 0,
    },
    Path {
        name: "grouped-query heads",
        has: always,
        reaches: |s, _| s.kv_heads < s.h,
    },
    Path {
        name: "D 64",
        has: always,
        reaches: |s, _| s.d == 64,
    },
    Path {
        name: "D 128",
        has: always,
        reaches: |s, _| s.d == 128,
    },
    Path {
        name: "D 256",
        has: always,
        reaches: |s, _| s.d == 256,
    },
    Path {
        name: "one key split (no merge)",
        has: decode,
        reaches: |_, g| g.splits.iter().any(|&(n, _)| n == 1),
    },
    Path {
        name: "key splits merged in one round",
        has: decode,
        reaches: |_, g| g.splits.iter().any(|&(n, u)| n > 1 && n <= u),
    },
    Path {
        name: "key splits merged over several rounds",
        has: decode,
        reaches: |_, g| g.splits.iter().any(|&(n, u)| n > u),
    },
    Path {
        name: "row blocks of different split counts over several heads",
        has: decode,
        reaches: |s, g| {
            let merged = |n: &u32| *n > 1;
            let mut counts: Vec<u32> = g.splits.iter().map(|x| x.0).filter(merged).collect();
            counts.dedup();
            s.kv_heads * s.b > 1 && counts.len() > 1
        },
    },
    Path {
        name: "the most key splits the GPU holds",
        has: decode,
        reaches: |_, g| {
            g.grid_splits == g.most_splits && g.splits.iter().any(|&(n, _)| n == g.most_splits)
        },
    },
    Path {
        name: "a persistent CTA walking several tiles",
        has: persistent,
        reaches: |_, g| g.persistent.is_some_and(|(tiles, ctas)| tiles > ctas),
    },
    Path {
        name: "a persistent last round part full",
        has: persistent,
        reaches: |_, g| {
            g.persistent
                .is_some_and(|(tiles, ctas)| tiles > ctas && tiles % ctas != 0)
        },
    },
];

/// Whether `v` launches at `shape`: its manifest takes it and its shared
/// memory at that D fits (the figure `GpuInfo::smem_over` judges on a GPU).
pub fn launches(v: &Variant, shape: &Shape) -> bool {
    v.runs(shape).is_ok() && v.smem_bytes(shape.d) <= SMEM_LIMIT
}

/// For each path `v` has at all (a D it cannot launch at is no path), the
/// first of `shapes` that reaches it, or None.
pub fn coverage(v: &Variant, shapes: &[Shape]) -> Vec<(&'static str, Option<Shape>)> {
    if v.manifest().is_none() || shapes.is_empty() {
        return Vec::new();
    }
    // A head dimension is a path where some shape of it launches.
    let probe = |d: u32| {
        Shape::new(1, 2, 200, d)
            .with_causal(true)
            .with_dtype(shapes[0].dtype)
    };
    let base = Geometry::of(v, &probe(64));
    PATHS
        .iter()
        .filter(|p| match p.name {
            "D 64" => launches(v, &probe(64)),
            "D 128" => launches(v, &probe(128)),
            "D 256" => launches(v, &probe(256)),
            _ => (p.has)(&base),
        })
        .map(|p| {
            let hit = shapes
                .iter()
                .find(|s| launches(v, s) && (p.reaches)(s, &Geometry::of(v, s)))
                .copied();
            (p.name, hit)
        })
        .collect()
}

/// "variant: path" for each path of `variants` (each once) that none of
/// `shapes` reaches.
pub fn unreached(variants: impl IntoIterator<Item = Variant>, shapes: &[Shape]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for v in variants {
        if !seen.insert(v.name()) {
            continue;
        }
        for (path, hit) in coverage(&v, shapes) {
            if hit.is_none() {
                out.push(format!("{}: {path}", v.name()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_planted_variant_meets_every_path_it_has() {
        let shapes = super::super::mutations::mutation_shapes();
        let mut seen = std::collections::BTreeSet::new();
        let mut missing = Vec::new();
        for (_, v) in super::super::mutations::mutants(90) {
            let clean = super::super::mutations::clean_of(v);
            if !seen.insert(clean.name()) {
                continue;
            }
            for (path, hit) in coverage(&clean, &shapes) {
                if hit.is_none() {
                    missing.push(format!("{}: {path}", clean.name()));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "paths no mutation shape reaches: {missing:?}"
        );
        assert!(seen.len() > 10, "{seen:?}");
    }

    #[test]
    fn a_shape_list_without_a_ragged_tail_is_caught() {
        let v: Variant = "mma".parse().unwrap();
        let even = [Shape::MISSION];
        let got = coverage(&v, &even);
        let tail = got
            .iter()
            .find(|(p, _)| *p == "a ragged query tail")
            .unwrap();
        assert!(
            tail.1.is_none(),
            "S512 has no query tail at 64 rows: {got:?}"
        );
        assert!(got.iter().any(|(p, hit)| *p == "D 64" && hit.is_some()));
        // D 256 is a path of the tile that fits it, and the mutation shapes reach it;
        // a tile over shared memory at D 128 has no D-128 path.
        let shapes = super::super::mutations::mutation_shapes();
        let d256: Variant = "mma+async@128x32s3w8gqptor".parse().unwrap();
        let c = coverage(&d256, &shapes);
        assert!(
            c.iter()
                .any(|(p, hit)| *p == "D 256" && hit.is_some_and(|s| s.d == 256)),
            "{c:?}"
        );
        let wide: Variant = "mma+async@192x128s3w12gqptor".parse().unwrap();
        assert!(!coverage(&wide, &shapes).iter().any(|(p, _)| *p == "D 128"));
    }

    #[test]
    fn split_paths_follow_the_decode_grid() {
        let d: Variant = "mma+async@32x32s3w4k2d".parse().unwrap();
        let at = |s: &str, causal: bool| {
            let shape = super::super::selftest::shape(s, causal);
            Geometry::of(&d, &shape)
        };
        // Two heads of 600 causal rows: blocks split 1, 2 and 3 ways.
        let g = at("1,2,600,64", true);
        let mut counts: Vec<u32> = g.splits.iter().map(|x| x.0).collect();
        counts.dedup();
        assert_eq!(counts, vec![1, 2, 3], "{:?}", g.splits);
        // 16 queries of one head over 135,168 keys, one row block: 132 SMs
        // x 4 CTAs, merged 16 splits a round.
        let g = at("1,1,16/135168,64", true);
        assert_eq!((g.grid_splits, g.most_splits), (528, 528));
        assert_eq!(g.splits, vec![(528, 16)]);
        // Without those two shapes the paths are named as unreached.
        let shapes = super::super::mutations::mutation_shapes();
        let missing = unreached([d], &shapes[..7]);
        assert!(
            missing
                .iter()
                .any(|m| m.ends_with("the most key splits the GPU holds"))
                && missing.iter().any(|m| m.ends_with("over several heads")),
            "{missing:?}"
        );
        assert!(unreached([d], &shapes).is_empty());
        // A persistent tile walks several tiles only past 132 of them.
        let r: Variant = "mma+async@128x128s3w8gqptor".parse().unwrap();
        let g = Geometry::of(&r, &super::super::selftest::shape("1,72,333,64", false));
        assert_eq!(g.persistent, Some((216, 132)));
    }
}
