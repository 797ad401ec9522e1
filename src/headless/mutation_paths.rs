//! Which of `selftest --mutations`' shapes reach which path of a variant
//! (issue 56): a ragged key tail with and without the causal mask, a ragged
//! query tail, grouped-query heads, and each head dimension the variant can
//! launch at. A planted bug is only proven where a shape reaches its path;
//! the test below fails when a path of a planted variant has no shape. The
//! decode tiles' split counts are not listed here (the grid, not the tile,
//! sets them).

use crate::session::{Shape, Variant};

/// The most shared memory a block may take on the Hopper GPUs the tool is
/// run on (H100, H200): 227 KiB.
const SMEM_LIMIT: u32 = 232_448;

/// A path and whether a shape reaches it, given the tile's query and key
/// rows (BLOCK_M, BLOCK_N).
pub struct Path {
    pub name: &'static str,
    reaches: fn(&Shape, u32, u32) -> bool,
}

pub const PATHS: [Path; 7] = [
    Path {
        name: "a ragged key tail under the causal mask",
        reaches: |s, _, n| s.causal && s.kv_len % n != 0,
    },
    Path {
        name: "a ragged key tail without a mask",
        reaches: |s, _, n| !s.causal && s.kv_len % n != 0,
    },
    Path {
        name: "a ragged query tail",
        reaches: |s, m, _| s.s % m != 0,
    },
    Path {
        name: "grouped-query heads",
        reaches: |s, _, _| s.kv_heads < s.h,
    },
    Path {
        name: "D 64",
        reaches: |s, _, _| s.d == 64,
    },
    Path {
        name: "D 128",
        reaches: |s, _, _| s.d == 128,
    },
    Path {
        name: "D 256",
        reaches: |s, _, _| s.d == 256,
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
    if v.manifest().is_none() {
        return Vec::new();
    }
    let rows = |define: &str| v.param(define).map_or(64, |x| x.max(1) as u32);
    let (bm, bn) = (rows("BLOCK_M"), rows("BLOCK_N"));
    PATHS
        .iter()
        .filter(|p| {
            // A head dimension is a path where some shape of it launches.
            let probe = |d: u32| Shape::new(1, 2, 200, d).with_causal(true);
            match p.name {
                "D 64" => launches(v, &probe(64).with_dtype(shapes[0].dtype)),
                "D 128" => launches(v, &probe(128).with_dtype(shapes[0].dtype)),
                "D 256" => launches(v, &probe(256).with_dtype(shapes[0].dtype)),
                _ => true,
            }
        })
        .map(|p| {
            let hit = shapes
                .iter()
                .find(|s| launches(v, s) && (p.reaches)(s, bm, bn))
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
}
