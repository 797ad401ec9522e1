//! The pooled test for systematic error (issue 56). A correct kernel's
//! errors are roundings that point every way, so their mean over many rows
//! shrinks as 1/√n; a bug's share one sign and stay. Every compared row
//! gives two units, its error Δ = O − ref relative to the row's scale (its
//! RMS) averaged over the row (a shift), and Δ projected on the reference
//! (a scale: O read 1 + x times too large); every element gives the same
//! for its column. ref here is the f64 reference rounded to the output
//! format, as a perfect kernel writes it: the rounding of O itself is then
//! no error, and it had to go, since rows that share a head's K and V can
//! hold nearly the same values and round them the same way (an H200 run of
//! cuDNN and a tile at B4 H16 S4096 D64 read 21 times what independent
//! rows explain, against the unrounded reference; run169). Their means over every row, each head, each batch, each
//! 64-row query tile, each count of key tiles seen (causal) and each column
//! are tested against their own standard errors, with a Bonferroni family
//! bound, and must also pass a floor of a tenth of the format's unit
//! (smaller means are no error a user would chase, and a kernel's constants
//! in fp32 leave biases near 1e-7). The rows are the units, so errors that
//! share a row never count twice.

use rayon::prelude::*;

use super::abstats::t_of_z;
use super::reference::{At, Tally};
use crate::session::check::{BiasCheck, BiasWorst, Bounds, Limit, Region, Stat};
use crate::session::{Dtype, Shape};

/// The false-failure rate of one check's whole family of means, for normal
/// errors: calibrated on kernels we did not write (docs/measurement.md).
pub const FAMILY_ALPHA: f64 = 1e-7;
/// Units a mean needs to be tested (a decode shape's head holds 16 rows).
/// The Cornish–Fisher expansion of Student's t runs up to 4% low this far
/// out at 15 degrees of freedom, hence `threshold`'s margin.
pub const MIN_UNITS: f64 = 16.0;
/// A mean must also exceed this many units of the format (0.0049% in fp16,
/// 0.039% in bf16).
pub const FLOOR_UNITS: f64 = 0.1;
/// Query and key tiles' height.
const TILE: usize = 64;
/// The largest shift a detection limit tries (1%), halved until missed.
/// The largest shift a detection limit plants: a limit not caught there is over it.
pub const PLANT_MAX: f64 = 0.01;
const PLANT_STEPS: usize = 16;

/// Sums for a ratio mean Σu ÷ Σw over units (w = 1 for a plain mean).
#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    n: f64,
    su: f64,
    sw: f64,
    suu: f64,
    suw: f64,
    sww: f64,
}

impl Acc {
    fn add(&mut self, u: f64, w: f64, sign: f64) {
        self.n += sign;
        self.su += sign * u;
        self.sw += sign * w;
        self.suu += sign * u * u;
        self.suw += sign * u * w;
        self.sww += sign * w * w;
    }

    fn merge(&mut self, o: &Acc) {
        self.n += o.n;
        self.su += o.su;
        self.sw += o.sw;
        self.suu += o.suu;
        self.suw += o.suw;
        self.sww += o.sww;
    }

    /// The mean and its standard error (the ratio estimator's, from the
    /// units' residuals about it).
    fn estimate(&self) -> Option<(f64, f64)> {
        if self.n < MIN_UNITS - 0.5 || self.sw <= 0.0 {
            return None;
        }
        let m = self.su / self.sw;
        let resid = (self.suu - 2.0 * m * self.suw + m * m * self.sww).max(0.0);
        let se = (resid * self.n / (self.n - 1.0)).sqrt() / self.sw;
        Some((m, se))
    }
}

/// Where each region's groups start in the accumulators.
#[derive(Clone, Copy, Debug)]
struct Layout {
    shape: Shape,
    heads: usize,
    batches: usize,
    qtiles: usize,
    ktiles: usize,
    d: usize,
}

impl Layout {
    fn new(shape: &Shape) -> Layout {
        let heads = shape.b as usize * shape.h as usize;
        Layout {
            shape: *shape,
            heads,
            // One batch, or no causal mask: the group would repeat "every row".
            batches: if shape.b > 1 { shape.b as usize } else { 0 },
            qtiles: (shape.s as usize).div_ceil(TILE),
            ktiles: if shape.causal {
                (shape.kv_len as usize).div_ceil(TILE)
            } else {
                0
            },
            d: shape.d as usize,
        }
    }

    fn regions(&self) -> [(Region, usize); 6] {
        [
            (Region::All, 1),
            (Region::Head, self.heads),
            (Region::Batch, self.batches),
            (Region::QueryTile, self.qtiles),
            (Region::KeyTiles, self.ktiles),
            (Region::Column, self.d),
        ]
    }

    fn start(&self, region: Region) -> usize {
        let mut at = 0;
        for (r, n) in self.regions() {
            if r == region {
                return at;
            }
            at += n;
        }
        at
    }

    fn len(&self) -> usize {
        self.regions().iter().map(|r| r.1).sum()
    }

    /// The group a region's index names, and back.
    fn region_of(&self, group: usize) -> (Region, u64) {
        let mut at = 0;
        for (r, n) in self.regions() {
            if group < at + n {
                return (r, (group - at) as u64);
            }
            at += n;
        }
        (Region::All, 0)
    }
}

/// A reference row rounded to the format, as the pooled test compares
/// against it (a kernel's exact answer is at best the rounded one).
pub fn rounded_row(dtype: Dtype, want: &[f64]) -> Vec<f64> {
    want.iter().map(|&w| dtype.round(w)).collect()
}

/// A row's scale: the RMS of its reference.
fn row_scale(want: &[f64]) -> f64 {
    (want.iter().map(|w| w * w).sum::<f64>() / want.len().max(1) as f64).sqrt()
}

/// One group's |mean| and how many units (rows, or a column's elements) it pooled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupMean {
    pub region: Region,
    pub index: u64,
    pub mean: f64,
    pub units: f64,
}

/// The pooled sums of one check: add rows (in any order, in parallel and
/// merged), then ask for the verdict.
#[derive(Clone, Debug)]
pub struct Pooled {
    layout: Layout,
    acc: Vec<[Acc; 2]>,
}

impl Pooled {
    pub fn new(shape: &Shape) -> Pooled {
        let layout = Layout::new(shape);
        Pooled {
            acc: vec![[Acc::default(); 2]; layout.len()],
            layout,
        }
    }

    /// One compared row (query row `row` of head `head`, b·H + h), added
    /// (`sign` 1) or taken out (-1). Rows with anything unusable are left
    /// to the other rules, as are rows whose reference is all zeros.
    pub fn add_row(&mut self, head: usize, row: usize, got: &[f32], want: &[f64], sign: f64) {
        let rounded = rounded_row(self.layout.shape.dtype, want);
        self.add_row_rounded(head, row, got, want, &rounded, sign);
    }

    /// `add_row` with the reference already rounded to the format
    /// (`rounded_row`): a caller judging many outputs against one
    /// reference rounds it once.
    pub fn add_row_rounded(
        &mut self,
        head: usize,
        row: usize,
        got: &[f32],
        want: &[f64],
        rounded: &[f64],
        sign: f64,
    ) {
        let l = self.layout;
        let d = want.len().max(1) as f64;
        let scale = row_scale(want);
        if scale <= 0.0 || !scale.is_finite() || got.iter().any(|g| !g.is_finite()) {
            return;
        }
        let (mut shift, mut proj) = (0.0, 0.0);
        let col0 = l.start(Region::Column);
        let per = 1.0 / scale;
        for (c, ((&g, &w), &wr)) in got.iter().zip(want).zip(rounded).enumerate() {
            let e = (g as f64 - wr) * per;
            let r = w * per;
            shift += e;
            proj += e * r;
            if c < l.d {
                let at = col0 + c;
                self.acc[at][0].add(e, 1.0, sign);
                self.acc[at][1].add(e * r, r * r, sign);
            }
        }
        let (shift, proj) = (shift / d, proj / d);
        let mut groups = [usize::MAX; 5];
        groups[0] = l.start(Region::All);
        groups[1] = l.start(Region::Head) + head;
        groups[2] = l.start(Region::QueryTile) + row / TILE;
        if l.batches > 0 {
            groups[3] = l.start(Region::Batch) + head / l.shape.h as usize;
        }
        if l.ktiles > 0 {
            let seen = l.shape.keys_seen(row as u32) as usize;
            groups[4] = l.start(Region::KeyTiles) + seen.max(1).div_ceil(TILE) - 1;
        }
        for g in groups.into_iter().filter(|&g| g != usize::MAX) {
            self.acc[g][0].add(shift, 1.0, sign);
            self.acc[g][1].add(proj, 1.0, sign);
        }
    }

    /// The largest |mean| of each region's groups (shift or scale, with
    /// enough units to be tested): how far a change moved what the pooled
    /// test looks at, region by region.
    pub fn group_means(&self) -> Vec<GroupMean> {
        let mut out = Vec::new();
        for (g, pair) in self.acc.iter().enumerate() {
            let (region, index) = self.layout.region_of(g);
            for acc in pair {
                if let Some((m, _)) = acc.estimate() {
                    out.push(GroupMean {
                        region,
                        index,
                        mean: m.abs(),
                        units: acc.n,
                    });
                }
            }
        }
        out
    }

    pub fn merge(mut self, o: &Pooled) -> Pooled {
        for (a, b) in self.acc.iter_mut().zip(&o.acc) {
            a[0].merge(&b[0]);
            a[1].merge(&b[1]);
        }
        self
    }

    /// The verdict under `bounds`: a mean fails past what rounding explains
    /// statistically, and past both a tenth of the format's unit and what a
    /// long fp32 accumulation explains (`Bounds::accumulation`).
    pub fn verdict(&self, bounds: &Bounds) -> BiasCheck {
        let unit = bounds.format.unit();
        let mut tested = Vec::new();
        for (g, pair) in self.acc.iter().enumerate() {
            for (s, acc) in pair.iter().enumerate() {
                if let Some((m, se)) = acc.estimate() {
                    tested.push((g, s, m, se, acc.n));
                }
            }
        }
        let k = tested.len().max(1) as f64;
        let z = upper_normal_quantile(FAMILY_ALPHA / (2.0 * k));
        let floor = (FLOOR_UNITS * unit).max(bounds.accumulation);
        let mut worst: Option<(bool, BiasWorst)> = None;
        let mut pass = true;
        for (g, s, m, se, n) in tested.iter().copied() {
            let t = if se > 0.0 {
                m / se
            } else if m == 0.0 {
                0.0
            } else {
                m.signum() * 1e12
            };
            let threshold = threshold(z, n - 1.0);
            let fails = m.abs() > floor && t.abs() > threshold;
            pass &= !fails;
            let (region, index) = self.layout.region_of(g);
            let w = BiasWorst {
                region,
                index,
                stat: if s == 0 { Stat::Shift } else { Stat::Scale },
                value: m,
                t,
                threshold,
                floor,
                units: n.round() as u64,
            };
            let better = worst
                .as_ref()
                .is_none_or(|(f, b)| (fails, w.ratio()) > (*f, b.ratio()));
            if better {
                worst = Some((fails, w));
            }
        }
        BiasCheck {
            pass,
            tests: tested.len() as u64,
            worst: worst.map(|w| w.1),
            limits: Vec::new(),
        }
    }
}

/// Student's t at the tail the normal gives `z`, with `df` degrees of
/// freedom, raised by 2/df: over the exact quantile at z 5.5 to 6.5 for df
/// 15 to 511 (the expansion alone is up to 4% under it at df 15).
pub fn threshold(z: f64, df: f64) -> f64 {
    t_of_z(z, df) * (1.0 + 2.0 / df.max(1.0))
}

/// z with P(Z > z) = p for a standard normal, p in (0, 0.5] (Acklam's
/// rational approximation, relative error under 1.2e-9).
pub fn upper_normal_quantile(p: f64) -> f64 {
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    let p = p.clamp(1e-300, 0.5);
    if p < 0.02425 {
        let q = (-2.0 * p.ln()).sqrt();
        let num = ((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5];
        let den = (((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0;
        -num / den
    } else {
        let q = 0.5 - p;
        let r = q * q;
        let num = (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q;
        let den = ((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0;
        num / den
    }
}

/// One compared row for the detection limits: the kernel's output (bits
/// of the shape's dtype) and the reference.
pub struct Row<'a> {
    pub head: usize,
    pub row: usize,
    pub got: &'a [u16],
    pub want: &'a [f64],
}

/// The row as it is, and with `delta` × its scale added to the columns
/// `cols` before the output's rounding, as a bug inside a kernel adds it:
/// the kernel's unrounded value is taken anywhere in the rounding cell of
/// what it wrote (a dither from the row and column, so a shift under half
/// a unit moves some values and not others, and the mean moves by it).
fn planted(r: &Row, dtype: Dtype, delta: f64, cols: std::ops::Range<usize>) -> [Vec<f32>; 2] {
    let scale = row_scale(r.want);
    let got: Vec<f32> = r.got.iter().map(|&b| dtype.to_f32(b)).collect();
    let moved = got
        .iter()
        .enumerate()
        .map(|(c, &g)| {
            if cols.contains(&c) {
                let g = g as f64;
                let dither = (cell_position(r.head, r.row, c) - 0.5) * dtype.ulp(g) * 0.999;
                dtype.round(g + dither + delta * scale) as f32
            } else {
                g
            }
        })
        .collect();
    [got, moved]
}

/// A position in [0, 1) for an element, the same every time (splitmix64).
fn cell_position(head: usize, row: usize, col: usize) -> f64 {
    let mut z = (head as u64) << 40 ^ (row as u64) << 12 ^ col as u64;
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as f64 / 2f64.powi(64)
}

/// The regions a check states its limits for: every row, the last head,
/// column 0, and the last query tile (where ragged tails live).
pub fn limit_regions(shape: &Shape) -> [(Region, u64); 4] {
    let heads = (shape.b as u64 * shape.h as u64).max(1);
    [
        (Region::All, 0),
        (Region::Head, heads - 1),
        (Region::Column, 0),
        (Region::QueryTile, (shape.s.max(1) as u64 - 1) / TILE as u64),
    ]
}

/// The smallest shift the check catches in each of `limit_regions`,
/// measured: a shift of 1%, then half that and so on, is added to the
/// region's outputs (rounded to the format) and the whole check (element
/// and row bounds, and the pooled means) judges them, until one passes.
/// `base` holds every row of `rows` as they are.
pub fn detection_limits(shape: &Shape, bounds: &Bounds, rows: &[Row], base: &Pooled) -> Vec<Limit> {
    let d = shape.d as usize;
    // Each row's reference rounded once, for every region and shift size.
    let rounded: Vec<Vec<f64>> = rows
        .par_iter()
        .map(|r| rounded_row(shape.dtype, r.want))
        .collect();
    limit_regions(shape)
        .into_iter()
        .map(|(region, index)| {
            let inside = |r: &Row| match region {
                Region::Head => r.head as u64 == index,
                Region::QueryTile => (r.row / TILE) as u64 == index,
                _ => true,
            };
            let cols = if region == Region::Column {
                index as usize..index as usize + 1
            } else {
                0..d
            };
            // Planted rows are written everywhere: no element is poison.
            let written = vec![false; d];
            let mut caught = None;
            let mut delta = PLANT_MAX;
            for _ in 0..PLANT_STEPS {
                let (delta_sums, tally) = rows
                    .par_iter()
                    .zip(&rounded)
                    .filter(|(r, _)| inside(r))
                    .fold(
                        || (Pooled::new(shape), Tally::default()),
                        |(mut p, mut t), (r, wr)| {
                            let [was, g] = planted(r, shape.dtype, delta, cols.clone());
                            p.add_row_rounded(r.head, r.row, &was, r.want, wr, -1.0);
                            p.add_row_rounded(r.head, r.row, &g, r.want, wr, 1.0);
                            let at = At {
                                head: r.head as u64,
                                row: r.row as u64,
                            };
                            t.compare_row(bounds, at, &g, &written, r.want);
                            (p, t)
                        },
                    )
                    .reduce(
                        || (Pooled::new(shape), Tally::default()),
                        |a, b| (a.0.merge(&b.0), a.1.merge(b.1)),
                    );
                let pooled = base.clone().merge(&delta_sums);
                if pooled.verdict(bounds).pass && tally.finish().pass {
                    break;
                }
                caught = Some(delta);
                delta /= 2.0;
            }
            Limit {
                region,
                rel: caught,
            }
        })
        .collect()
}

/// Where a limit was planted, as a sentence says it.
fn place(region: Region) -> &'static str {
    match region {
        Region::All => "every row",
        Region::Head => "one head",
        Region::Batch => "one batch",
        Region::QueryTile => "the last query tile",
        Region::KeyTiles => "one key tile",
        Region::Column => "one column",
    }
}

/// "catches a shift ≥ 0.0049% in every row, 0.031% in one head, …".
pub fn limits_text(limits: &[Limit]) -> String {
    let parts: Vec<String> = limits
        .iter()
        .map(|l| match l.rel {
            Some(r) => format!("{} in {}", percent(r), place(l.region)),
            None => format!("none of 1% in {}", place(l.region)),
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("catches a shift ≥ {}", parts.join(", "))
    }
}

/// 0.000049 → "0.0049%"; two significant digits.
pub fn percent(x: f64) -> String {
    let p = x * 100.0;
    if p == 0.0 || !p.is_finite() {
        return format!("{p}%");
    }
    let digits = (1 - p.abs().log10().floor() as i32).max(0) as usize;
    format!("{p:.digits$}%")
}

#[cfg(test)]
mod tests;
