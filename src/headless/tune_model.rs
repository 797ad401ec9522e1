//! `tune`'s cost model: ranks a path's tiles at a shape without running
//! them, so only a few finalists are built and timed (issue 41).
//!
//! A tile's time is estimated as the busiest multiprocessor's share of the
//! row blocks, each block costing its keys × rows over the tile family's
//! rate plus a prologue (Q and the first K/V stages). The blocks are dealt
//! as the kernel deals them: persistent tiles (`PERSIST`) statically, one CTA
//! per SM, causal heaviest first and every other round backwards
//! (kernels/attention/tile_scheduler.cuh); other tiles greedily in launch
//! order onto as many CTAs per SM as shared memory and threads allow,
//! causal producer tiles (`WS`) heaviest first. So the model sees wave and
//! tail quantization over the SM count, causal imbalance, and how much of
//! an SM one CTA's warps fill. The family's rate comes from its flags
//! (wgmma, TMA with a producer warpgroup, ping-pong, persistent, Q in
//! registers, exponentials first, split groups apart, 128-key tiles and
//! 32-key ones, three consumer warpgroups at D 64): relative factors read
//! off the archived tune tables (tests/fixtures/tune_archive.txt), where they order the
//! families as measured (the 32-key penalty is a guess: the archive has no
//! 32-key tile below D 256). The estimate is a ranking, not a time.

use crate::session::manifest::LaunchShape;
use crate::session::{Shape, Variant};

/// Shared memory one SM holds (H100, sm_90: 228 KiB) and its threads.
const SM_SMEM: u32 = 228 * 1024;
const SM_THREADS: u32 = 2048;
/// Above this many row blocks the deal is summed, not simulated.
const SIMULATED_BLOCKS: u64 = 40_000;
/// A block's prologue in key-columns per row of Q and of each K/V stage.
const PROLOGUE: f64 = 16.0;

/// What the model reads of a tile: the bundled kernel's defines.
#[derive(Clone, Copy, Debug)]
struct Tile {
    bm: u32,
    bn: u32,
    stages: u32,
    warps: u32,
    split: u32,
}

fn flag(v: &Variant, define: &str) -> bool {
    v.param(define).is_some_and(|x| x != 0)
}

fn tile_of(v: &Variant) -> Option<Tile> {
    let get = |d: &str| {
        v.param(d)
            .and_then(|x| u32::try_from(x).ok())
            .filter(|&x| x > 0)
    };
    Some(Tile {
        bm: get("BLOCK_M")?,
        bn: get("BLOCK_N")?,
        stages: get("STAGES")?,
        warps: get("WARPS")?,
        split: v
            .param("SPLIT")
            .map_or(Some(1), |x| u32::try_from(x).ok())?
            .max(1),
    })
}

/// The family's rate, relative to an mma.sync tile's.
fn rate(v: &Variant, t: &Tile, d: u32) -> f64 {
    let on = |define: &str| flag(v, define);
    let mut r = 1.0;
    let wgmma = on("USE_WGMMA");
    if wgmma {
        r *= 1.6;
        // Key tiles of 128 amortize each tile's barriers and row-statistics
        // updates; tiles of 32 (made for D 256) pay them four times as often.
        if t.bn >= 128 {
            r *= 1.08;
        } else if t.bn <= 32 {
            r *= 0.85;
        }
        if t.stages >= 3 && !on("WS") {
            r *= 1.04;
        }
    }
    if on("WS") {
        // A producer warpgroup pays off with TMA loads; with cp.async it costs.
        r *= if on("TMA") { 1.25 } else { 0.85 };
    }
    for (define, gain) in [
        ("PINGPONG", 1.25),
        ("PERSIST", 1.04),
        ("Q_REGS", 1.05),
        ("STAGGER", 1.08),
    ] {
        if on(define) {
            r *= gain;
        }
    }
    if on("EXP_FIRST") && d >= 128 {
        r *= 1.05;
    }
    // Three consumer warpgroups (192 rows) fill the SM best at D 64.
    if t.warps / t.split >= 12 && d <= 64 {
        r *= 1.12;
    }
    r
}

/// The keys row block `j` of `bm` rows reads, in whole K/V tiles of `kv`
/// keys: all of them, or under the causal mask up to its last row's.
fn keys(shape: &Shape, j: u64, bm: u32, kv: u32) -> f64 {
    if !shape.causal {
        return f64::from(shape.kv_len);
    }
    let last = ((j + 1) * u64::from(bm)).min(u64::from(shape.s)).max(1) - 1;
    let seen = u64::from(shape.keys_seen(last as u32));
    let tiles = seen.div_ceil(u64::from(kv.max(1)));
    (tiles * u64::from(kv)).min(u64::from(shape.kv_len)) as f64
}

/// The keys one of `splits` CTAs of packed row block `j` reads (a split-KV
/// decode tile, `DECODE`): packed row r is query r % S of its group's head
/// r / S, so a block that spans two heads reads up to the last query's keys
/// (kernels/attention/decode.cuh); its K/V tiles are split evenly.
fn packed_keys(shape: &Shape, j: u64, bm: u32, kv: u32, splits: u64) -> f64 {
    let s = u64::from(shape.s.max(1));
    let rows = u64::from(shape.group().max(1)) * s;
    let q0 = j * u64::from(bm);
    let r_last = (q0 + u64::from(bm)).min(rows).max(1) - 1;
    let i_max = if q0 / s != r_last / s {
        s - 1
    } else {
        r_last % s
    };
    let seen = u64::from(shape.keys_seen(i_max as u32));
    let kv = u64::from(kv.max(1));
    let tiles = seen.div_ceil(kv).div_ceil(splits.max(1));
    (tiles * kv).min(u64::from(shape.kv_len)) as f64
}

/// Model units per byte of DRAM traffic. The compute side's units run at
/// 3,160 to 3,480 per µs at the archived D 128 tables (the fastest tile's
/// estimate over its p50; 4,600 to 5,100 at D 64), say 3,300, and the H100
/// copies 3.0 TB/s, 3.0e6 bytes per µs: 3,300 / 3.0e6 = 1.1e-3. Then at
/// every archived prefill shape the fastest tile's bytes cost under a fifth
/// of its compute (its rank is unchanged), while a split-KV decode tile at
/// B8 H32/8 S1/32768 (1.07 GB of K/V read once: 358 µs of copy, measured
/// 368 to 381 µs, cuDNN 352) is memory-bound in the model as on the GPU.
/// 64x64s2w4gq there reads K/V once per query head and is estimated 4× the
/// d tiles; it measured 1.65× (the L2 absorbs part of the re-reads, which
/// the model does not count: an upper bound, the ranking is what matters).
const UNITS_PER_BYTE: f64 = 1.1e-3;

/// The time to move what the launch reads and writes, in model units: Q
/// and O once, K and V once per K/V head for a decode tile (`DECODE` packs
/// a group's query heads into its rows) and once per query head otherwise,
/// at a bandwidth in proportion to the SMs its grid occupies.
fn memory(v: &Variant, shape: &Shape, grid: (u32, u32, u32), sms: u32) -> f64 {
    let reads = if flag(v, "DECODE") {
        1.0
    } else {
        f64::from(shape.group().max(1))
    };
    let bytes =
        2.0 * (2 * shape.q_elements()) as f64 + 2.0 * (2 * shape.kv_elements()) as f64 * reads;
    let ctas = u64::from(grid.0) * u64::from(grid.1) * u64::from(grid.2);
    let occupied = ctas.clamp(1, u64::from(sms)) as f64 / f64::from(sms);
    bytes * UNITS_PER_BYTE / occupied
}

/// The estimated time of `v` at `shape` on `sms` multiprocessors, in
/// arbitrary units (lower is faster): its compute, and at least the time
/// to move its bytes; None when the model cannot read the tile (another
/// kernel's parameters) or its launch.
pub fn estimate(v: &Variant, shape: &Shape, sms: u32) -> Option<f64> {
    let t = tile_of(v)?;
    let launch = v.launch_shape(shape, sms).ok()?;
    let sms = sms.max(1);
    let work = compute(v, &t, shape, launch, sms)?;
    Some(work.max(memory(v, shape, launch.grid, sms)))
}

fn compute(v: &Variant, t: &Tile, shape: &Shape, launch: LaunchShape, sms: u32) -> Option<f64> {
    let r = rate(v, t, shape.d);
    let kv = t.bn * t.split;
    // Decode tiles: a K/V head's packed row blocks, each split over grid.y.
    let decode = flag(v, "DECODE");
    let (n_m, heads, splits) = if decode {
        let hkv = shape.kv_heads.max(1);
        let rb = u64::from(launch.grid.0 / hkv).max(1);
        (
            rb,
            u64::from(shape.b) * u64::from(hkv),
            u64::from(launch.grid.1.max(1)),
        )
    } else {
        let heads = u64::from(shape.b) * u64::from(shape.h);
        (u64::from(shape.s.div_ceil(t.bm)), heads, 1)
    };
    let prologue = PROLOGUE * f64::from(t.bm + t.stages * kv);
    let cost = |j: u64| {
        let n = if decode {
            packed_keys(shape, j, t.bm, kv, splits)
        } else {
            keys(shape, j, t.bm, kv)
        };
        f64::from(t.bm) * n / r + prologue
    };
    // How much of an SM the resident CTAs' warps fill (two warpgroups do).
    let fill = |ctas: u32| (f64::from(ctas * t.warps) / 8.0).min(1.0);
    if flag(v, "PERSIST") {
        let grid = launch.grid.0.max(1);
        return Some(persistent(shape, n_m, heads, grid, &cost) / fill(1));
    }
    let by_smem = SM_SMEM / (launch.smem_bytes + 1024).max(1);
    let by_threads = SM_THREADS / launch.threads.max(1);
    let ctas = by_smem.min(by_threads).max(1);
    let slots = u64::from(sms * ctas);
    // Each resident CTA runs at its share of the SM.
    let slow = f64::from(ctas) / fill(ctas);
    let heavy_first = shape.causal && flag(v, "WS");
    let blocks = n_m * heads * splits;
    if blocks > SIMULATED_BLOCKS {
        let total: f64 = (0..n_m).map(&cost).sum::<f64>() * (heads * splits) as f64;
        return Some(total * slow / slots as f64 + (0..n_m).map(&cost).fold(0.0, f64::max));
    }
    let mut free = std::collections::BinaryHeap::new();
    for _ in 0..slots.min(blocks) {
        free.push(std::cmp::Reverse(0u64));
    }
    let mut end = 0.0f64;
    // Times kept as integers (ns-like units) so the heap orders them.
    for _ in 0..heads {
        for x in 0..n_m * splits {
            let x = x / splits;
            let j = if heavy_first { n_m - 1 - x } else { x };
            let std::cmp::Reverse(at) = free.pop()?;
            let done = at + (cost(j) * slow * 1e3) as u64;
            end = end.max(done as f64 / 1e3);
            free.push(std::cmp::Reverse(done));
        }
    }
    Some(end)
}

/// The busiest persistent CTA's work: item `i` goes to CTA `i mod grid` in
/// round `i / grid`, causal rounds alternately backwards, causal items
/// heaviest first across heads (tile_scheduler.cuh).
fn persistent(shape: &Shape, n_m: u64, heads: u64, grid: u32, cost: &dyn Fn(u64) -> f64) -> f64 {
    let grid = u64::from(grid);
    let items = n_m * heads;
    if items > SIMULATED_BLOCKS {
        let total: f64 = (0..n_m).map(cost).sum::<f64>() * heads as f64;
        return total / grid as f64 + (0..n_m).map(cost).fold(0.0, f64::max);
    }
    let mut load = vec![0.0f64; grid as usize];
    for item in 0..items {
        let (round, pos) = (item / grid, item % grid);
        let cta = if shape.causal && round % 2 == 1 {
            grid - 1 - pos
        } else {
            pos
        };
        let j = if shape.causal {
            n_m - 1 - item / heads
        } else {
            item % n_m
        };
        load[cta as usize] += cost(j);
    }
    load.into_iter().fold(0.0, f64::max)
}

/// How many tiles `tune` times by default. The archived tables need two
/// (tests/fixtures/tune_archive.txt: the fastest measured tile is among the model's first
/// two at every shape); five leave room at shapes the archive never tuned.
pub const FINALISTS: usize = 5;

/// The finalists among `tiles` at `shape`: the `n - 2` the model ranks
/// fastest (`n - 1` when `n` < 4), then, if those are all of one row class
/// (at most 64 rows, or more), the two fastest of the other class, since
/// where the small split tiles and the large persistent ones cross over is
/// the model's least certain call (at B4 H12 S777 D64 the model ties
/// 64x64s2w4g and 64x64s2w4gq, which measured 1.106 and 1.000 of the best:
/// run130); then the next fastest up to `n`. Tiles the model cannot read
/// are finalists too (it cannot rule them out). Fastest first, with
/// estimates.
pub fn finalists(
    tiles: &[Variant],
    shape: &Shape,
    sms: u32,
    n: usize,
) -> Vec<(Variant, Option<f64>)> {
    let mut ranked: Vec<(Variant, Option<f64>)> = tiles
        .iter()
        .map(|v| (*v, estimate(v, shape, sms)))
        .collect();
    ranked.sort_by(|a, b| {
        let key = |e: Option<f64>| e.unwrap_or(f64::NEG_INFINITY);
        key(a.1).total_cmp(&key(b.1))
    });
    let unread = ranked.iter().filter(|r| r.1.is_none()).count();
    let n = n.max(1).max(unread);
    if ranked.len() <= n {
        return ranked;
    }
    let small = |v: &Variant| v.param("BLOCK_M").is_some_and(|m| m <= 64);
    let reserved = if n >= 4 { 2 } else { 1 };
    let mut out: Vec<(Variant, Option<f64>)> = ranked[..n - reserved].to_vec();
    let first_small = out.first().map(|r| small(&r.0));
    if out.iter().all(|r| Some(small(&r.0)) == first_small) {
        out.extend(
            ranked[n - reserved..]
                .iter()
                .filter(|r| r.1.is_some() && Some(small(&r.0)) != first_small)
                .take(reserved),
        );
    }
    for r in &ranked[n - reserved..] {
        if out.len() == n {
            break;
        }
        if !out.iter().any(|o| o.0 == r.0) {
            out.push(*r);
        }
    }
    out.sort_by(|a, b| {
        let key = |e: Option<f64>| e.unwrap_or(f64::NEG_INFINITY);
        key(a.1).total_cmp(&key(b.1))
    });
    out
}

#[cfg(test)]
mod tests;
