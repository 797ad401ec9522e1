//! The correctness oracle: attention in f64 on the CPU for the rows a check
//! compares, and the rules it judges by (docs/measurement.md, "The
//! correctness oracle"): per element |Δ| ≤ atol + rtol·|ref| with atol a few
//! units of the output format at the row's scale, per row a relative L2
//! bound; no NaN, no ±Inf, nothing unwritten; rows not compared must lie
//! inside V's range, column by column.

use half::f16;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::session::Shape;
use crate::session::check::{Bounds, DistCheck, Dtype, Worst};

/// f64 reference for every query row of one head: `q` is its S×D rows,
/// `k` and `v` its KV head's key-length×D rows; returns S×D.
pub fn attention_head(q: &[f32], k: &[f32], v: &[f32], shape: &Shape) -> Vec<f64> {
    let all: Vec<usize> = (0..shape.s as usize).collect();
    attention_rows(q, k, v, shape, &all)
}

/// f64 reference for the query rows `rows` of one head (inputs as for
/// `attention_head`): query i attends to the first `shape.keys_seen(i)`
/// keys, the causal mask aligned to the end. Returns rows.len()×D.
pub fn attention_rows(q: &[f32], k: &[f32], v: &[f32], shape: &Shape, rows: &[usize]) -> Vec<f64> {
    let d = shape.d as usize;
    let scale = 1.0 / (d as f64).sqrt();
    let mut out = vec![0.0f64; rows.len() * d];
    out.par_chunks_mut(d.max(1))
        .zip(rows.par_iter())
        .for_each_init(Vec::new, |scores: &mut Vec<f64>, (row, &i)| {
            let end = shape.keys_seen(i as u32) as usize;
            let qi = &q[i * d..(i + 1) * d];
            scores.clear();
            scores.extend((0..end).map(|j| dot(qi, &k[j * d..(j + 1) * d]) * scale));
            let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut total = 0.0;
            for (j, x) in scores.iter().enumerate() {
                let w = (x - m).exp();
                total += w;
                for (o, vv) in row.iter_mut().zip(&v[j * d..(j + 1) * d]) {
                    *o += w * *vv as f64;
                }
            }
            for o in row.iter_mut() {
                *o /= total;
            }
        });
    out
}

/// Σ a·b in f64 over eight running sums (one sum's chain of dependent adds
/// set the reference's speed; the order moves the result by about 1e-16).
fn dot(a: &[f32], b: &[f32]) -> f64 {
    let mut acc = [0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| *x as f64 * *y as f64)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] as f64 * y[l] as f64;
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// Query head `head` (b·H + h) of Q and its KV head's K and V, as f32 from
/// the host's bits: the three slices `attention_rows` takes. Query head h
/// of batch b reads KV head b·(KV heads) + h / (H / KV heads).
pub fn head_inputs(shape: &Shape, host: &[Vec<u16>; 3], head: usize) -> [Vec<f32>; 3] {
    let [k, v] = kv_inputs(shape, host, kv_index(shape, head));
    [q_input(shape, host, head), k, v]
}

/// Query head `head`'s rows of Q, as f32.
pub fn q_input(shape: &Shape, host: &[Vec<u16>; 3], head: usize) -> Vec<f32> {
    let n = shape.s as usize * shape.d as usize;
    to_f32(shape, &host[0][head * n..(head + 1) * n])
}

/// KV head `kv`'s rows of K and V, as f32: made once for the query heads
/// that share it (`query_heads_of`).
pub fn kv_inputs(shape: &Shape, host: &[Vec<u16>; 3], kv: usize) -> [Vec<f32>; 2] {
    let n = shape.kv_len as usize * shape.d as usize;
    [1, 2].map(|t| to_f32(shape, &host[t][kv * n..(kv + 1) * n]))
}

/// The query heads (b·H + h) that read KV head `kv`, ascending.
pub fn query_heads_of(shape: &Shape, kv: usize) -> std::ops::Range<usize> {
    let (h, kvh, group) = (
        shape.h as usize,
        shape.kv_heads as usize,
        shape.group() as usize,
    );
    let first = kv / kvh * h + kv % kvh * group;
    first..first + group
}

fn to_f32(shape: &Shape, bits: &[u16]) -> Vec<f32> {
    bits.iter().map(|&b| shape.dtype.to_f32(b)).collect()
}

/// The KV head (b·KV heads + kv) query head `head` (b·H + h) reads.
pub fn kv_index(shape: &Shape, head: usize) -> usize {
    let (h, kvh) = (shape.h as usize, shape.kv_heads as usize);
    head / h * kvh + shape.kv_head_of((head % h) as u32) as usize
}

impl Dtype {
    fn mantissa_bits(self) -> i32 {
        match self {
            Dtype::F16 => 10,
            Dtype::Bf16 => 7,
        }
    }

    fn min_exponent(self) -> i32 {
        match self {
            Dtype::F16 => -14,
            Dtype::Bf16 => -126,
        }
    }

    /// Unit roundoff: half the spacing at 1 (2⁻¹¹ for fp16, 2⁻⁸ for bf16).
    pub fn unit(self) -> f64 {
        (2.0f64).powi(-(self.mantissa_bits() + 1))
    }

    /// The spacing of the format's values at |x| (subnormals: the smallest).
    pub fn ulp(self, x: f64) -> f64 {
        let e = if x == 0.0 || !x.is_finite() {
            self.min_exponent()
        } else {
            (x.abs().log2().floor() as i32).max(self.min_exponent())
        };
        (2.0f64).powi(e - self.mantissa_bits())
    }

    /// `x` rounded to the format (to nearest even).
    pub fn round(self, x: f64) -> f64 {
        match self {
            Dtype::F16 => f16::from_f64(x).to_f64(),
            Dtype::Bf16 => half::bf16::from_f64(x).to_f64(),
        }
    }
}

impl Bounds {
    /// The absolute part for a row whose largest |ref| is `row_max`.
    pub fn atol(&self, row_max: f64) -> f64 {
        self.atol_ulps * self.format.ulp(row_max) + self.accumulation * row_max
    }

    /// The bound on |Δ| of one element.
    pub fn element(&self, atol: f64, reference: f64) -> f64 {
        atol + self.rtol_units * self.format.unit() * reference.abs()
    }

    /// The bound on ‖Δ‖₂ of a row whose ‖ref‖₂ is `norm` (never below the
    /// format's smallest spacing, for a row that is all zeros).
    pub fn row(&self, norm: f64) -> f64 {
        ((self.row_units * self.format.unit() + self.accumulation) * norm).max(self.format.ulp(0.0))
    }
}

/// Where in O: a head (b·H + h) and a row.
#[derive(Clone, Copy, Debug)]
pub struct At {
    pub head: u64,
    pub row: u64,
}

/// What a check has seen so far, over any rows of any heads (merge the
/// tallies of heads checked in parallel).
#[derive(Clone, Debug, Default)]
pub struct Tally {
    max_abs: f64,
    err_sq: f64,
    ref_sq: f64,
    nan: u64,
    inf: u64,
    unwritten: u64,
    out_of_range: u64,
    worst_element: Worst,
    worst_row: Worst,
}

impl Tally {
    /// Counts an element the rules never compare as a number; true when it
    /// is a finite written value.
    fn usable(&mut self, g: f32, poisoned: bool) -> bool {
        if poisoned {
            self.unwritten += 1;
        } else if g.is_nan() {
            self.nan += 1;
        } else if g.is_infinite() {
            self.inf += 1;
        } else {
            return true;
        }
        false
    }

    /// One row compared against its reference.
    pub fn compare_row(
        &mut self,
        b: &Bounds,
        at: At,
        got: &[f32],
        poisoned: &[bool],
        reference: &[f64],
    ) {
        let row_max = reference.iter().fold(0.0f64, |m, r| m.max(r.abs()));
        let atol = b.atol(row_max);
        let (mut err_sq, mut ref_sq) = (0.0, 0.0);
        for (c, ((&g, &p), &r)) in got.iter().zip(poisoned).zip(reference).enumerate() {
            if !self.usable(g, p) {
                continue;
            }
            let e = (g as f64 - r).abs();
            self.max_abs = self.max_abs.max(e);
            err_sq += e * e;
            ref_sq += r * r;
            // Compared without dividing: most elements are far inside.
            let limit = b.element(atol, r);
            if e > self.worst_element.ratio * limit {
                self.worst_element = Worst {
                    ratio: e / limit,
                    head: at.head,
                    row: at.row,
                    col: Some(c as u64),
                    got: g as f64,
                    want: r,
                };
            }
        }
        self.err_sq += err_sq;
        self.ref_sq += ref_sq;
        let (err, norm) = (err_sq.sqrt(), ref_sq.sqrt());
        let ratio = err / b.row(norm);
        if ratio > self.worst_row.ratio {
            self.worst_row = Worst {
                ratio,
                head: at.head,
                row: at.row,
                col: None,
                got: err,
                want: norm,
            };
        }
    }

    /// One row not compared: written, finite, and inside each column's
    /// range in V (`range[c]`: the smallest and largest V[·, c] of the
    /// head), give or take the format's atol at the range's scale.
    pub fn scan_row(&mut self, b: &Bounds, got: &[f32], poisoned: &[bool], range: &[(f32, f32)]) {
        for ((&g, &p), &(lo, hi)) in got.iter().zip(poisoned).zip(range) {
            if !self.usable(g, p) {
                continue;
            }
            let slack = b.atol((lo.abs()).max(hi.abs()) as f64);
            let g = g as f64;
            if g < lo as f64 - slack || g > hi as f64 + slack {
                self.out_of_range += 1;
            }
        }
    }

    pub fn merge(mut self, o: Tally) -> Tally {
        self.max_abs = self.max_abs.max(o.max_abs);
        self.err_sq += o.err_sq;
        self.ref_sq += o.ref_sq;
        self.nan += o.nan;
        self.inf += o.inf;
        self.unwritten += o.unwritten;
        self.out_of_range += o.out_of_range;
        if o.worst_element.ratio > self.worst_element.ratio {
            self.worst_element = o.worst_element;
        }
        if o.worst_row.ratio > self.worst_row.ratio {
            self.worst_row = o.worst_row;
        }
        self
    }

    /// The verdict: every element and row within its bound, nothing NaN,
    /// infinite, unwritten or out of V's range. Inputs and seed are the
    /// caller's to fill in.
    pub fn finish(&self) -> DistCheck {
        let rel = if self.ref_sq > 0.0 {
            (self.err_sq / self.ref_sq).sqrt()
        } else {
            self.err_sq.sqrt()
        };
        let within = |w: &Worst| w.ratio.is_finite() && w.ratio <= 1.0;
        DistCheck {
            pass: self.nan == 0
                && self.inf == 0
                && self.unwritten == 0
                && self.out_of_range == 0
                && within(&self.worst_element)
                && within(&self.worst_row),
            max_abs_err: self.max_abs,
            rel_l2_err: rel,
            worst_element: self.worst_element.clone(),
            worst_row: self.worst_row.clone(),
            nan_count: self.nan,
            inf_count: self.inf,
            unwritten: self.unwritten,
            out_of_range: self.out_of_range,
            ..DistCheck::default()
        }
    }
}

/// Each column's smallest and largest value in one head's V (keys×D).
pub fn column_ranges(v: &[f32], d: usize) -> Vec<(f32, f32)> {
    let mut out = vec![(f32::INFINITY, f32::NEG_INFINITY); d];
    for row in v.chunks(d.max(1)) {
        for (r, &x) in out.iter_mut().zip(row) {
            *r = (r.0.min(x), r.1.max(x));
        }
    }
    out
}

/// Multiply-adds of the f64 reference one distribution of a check may
/// spend: one row costs about (the keys it sees)·D. The default check's
/// three distributions spend what its two did before offset joined
/// (4e9 each, a few seconds of CPU).
pub const ROW_BUDGET: f64 = 8e9 / 3.0;

/// The rows a check compares: every (batch, head) gets its share, always
/// its first and last row (where edge bugs live) and at least two rows;
/// the others one from each of equal stretches of the head's rows, drawn
/// from `seed` (stratified: a bug confined to a block of rows at least a
/// stretch long is always compared, where a plain draw missed such a block
/// for some seeds), so the same seed compares the same rows.
pub struct RowSample {
    /// Per head (b·H + h), ascending row numbers.
    pub rows: Vec<Vec<usize>>,
}

impl RowSample {
    pub fn checked(&self) -> u64 {
        self.rows.iter().map(|r| r.len() as u64).sum()
    }
}

pub fn rows_to_check(shape: &Shape, seed: u64) -> RowSample {
    let heads = shape.b as usize * shape.h as usize;
    let s = shape.s as usize;
    let per_row = (shape.pairs() / f64::from(shape.s) * f64::from(shape.d)).max(1.0);
    let per_head = ((ROW_BUDGET / per_row) as usize / heads.max(1)).clamp(2.min(s), s);
    let rows = (0..heads)
        .map(|head| {
            if per_head >= s {
                return (0..s).collect();
            }
            let mut rng = ChaCha8Rng::seed_from_u64(
                seed ^ 0x5EED_4EAD ^ (head as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            let mut chosen: Vec<usize> = (0..per_head)
                .map(|k| rng.random_range(k * s / per_head..(k + 1) * s / per_head))
                .collect();
            chosen[0] = 0;
            chosen[per_head - 1] = s - 1;
            chosen
        })
        .collect();
    RowSample { rows }
}

/// What a check compared, in words: "rows 4,096 of 1,048,576 in all 64
/// heads (B×H)" (heads of every batch: beside H8 of B2, 16); sessions from
/// before row sampling: "heads 0,17,63 of 64".
pub fn coverage_text(c: &crate::session::event::CorrectnessReport) -> String {
    if c.rows_checked == 0 {
        return if c.heads_total == 0 {
            String::new() // a session from before heads were counted
        } else if c.heads.is_empty() {
            format!("all {} heads (B×H)", c.heads_total)
        } else {
            let named: Vec<String> = c.heads.iter().map(u64::to_string).collect();
            format!("heads {} of {}", named.join(","), c.heads_total)
        };
    }
    let rows = if c.rows_checked == c.rows_total {
        format!("all {} rows", grouped(c.rows_total))
    } else {
        format!(
            "rows {} of {}",
            grouped(c.rows_checked),
            grouped(c.rows_total)
        )
    };
    let heads = if c.heads_checked == c.heads_total {
        format!("all {} heads (B×H)", grouped(c.heads_total))
    } else {
        format!(
            "{} of {} heads (B×H)",
            grouped(c.heads_checked),
            grouped(c.heads_total)
        )
    };
    format!("{rows} in {heads}")
}

/// One line per failing check: where it went furthest past a bound.
pub fn failures(c: &crate::session::event::CorrectnessReport) -> Vec<String> {
    c.checks
        .iter()
        .filter(|d| !d.pass)
        .map(|d| {
            format!(
                "FAIL on {} inputs (seed {}): {}",
                d.inputs,
                d.seed,
                why_failed(d)
            )
        })
        .collect()
}

/// What one distribution's failed check broke: the rules past their bounds,
/// where, and the counts.
pub fn why_failed(d: &DistCheck) -> String {
    let mut parts = Vec::new();
    let (e, r) = (&d.worst_element, &d.worst_row);
    if e.ratio > 1.0 || e.ratio.is_nan() {
        parts.push(format!(
            "an element {:.1}× its bound at head {} row {} column {} ({:.4e} for {:.4e})",
            e.ratio,
            e.head,
            e.row,
            e.col.unwrap_or(0),
            e.got,
            e.want
        ));
    }
    if r.ratio > 1.0 || r.ratio.is_nan() {
        parts.push(format!(
            "a row {:.1}× its bound at head {} row {} (‖Δ‖ {:.2e} of ‖ref‖ {:.2e})",
            r.ratio, r.head, r.row, r.got, r.want
        ));
    }
    if let Some(w) = d
        .bias
        .as_ref()
        .filter(|b| !b.pass)
        .and_then(|b| b.worst.as_ref())
    {
        parts.push(bias_failure(w));
    }
    for (n, what) in [
        (d.nan_count, "NaN"),
        (d.inf_count, "±Inf"),
        (d.unwritten, "unwritten"),
        (d.out_of_range, "outside V's range"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.join("; ")
}

/// What a report says under its verdict: the pooled test's line, then one
/// per failing check.
pub fn check_lines(c: &crate::session::event::CorrectnessReport) -> Vec<String> {
    let pooled = pooled_text(c);
    (!pooled.is_empty())
        .then_some(pooled)
        .into_iter()
        .chain(failures(c))
        .collect()
}

/// A failing pooled mean in words: "head 7 shifted by +0.052% of its
/// scale (t 14.2, past the 6.6 rounding explains; 512 rows)".
fn bias_failure(w: &crate::session::check::BiasWorst) -> String {
    use crate::session::check::{Region, Stat};
    let verb = match w.stat {
        Stat::Shift => "shifted by",
        Stat::Scale => "scaled by 1",
    };
    let units = if w.region == Region::Column {
        "elements"
    } else {
        "rows"
    };
    format!(
        "{} {verb}{}{} of its scale (t {:.1}, past the {:.1} rounding explains; {} {units})",
        w.region.name(w.index),
        if w.value >= 0.0 { "+" } else { "" },
        super::bias::percent(w.value),
        w.t,
        w.threshold,
        grouped(w.units),
    )
}

/// The pooled test of a report's first distribution in a line: its worst
/// mean against what rounding explains and the measured detection limits
/// ("pooled: worst 0.4 of its threshold (column 12); catches a shift ≥
/// 0.0049% in every row, …"); empty for sessions from before it.
pub fn pooled_text(c: &crate::session::event::CorrectnessReport) -> String {
    let Some(b) = c.checks.iter().find_map(|d| d.bias.as_ref()) else {
        return String::new();
    };
    let worst = c
        .checks
        .iter()
        .filter_map(|d| d.bias.as_ref()?.worst.as_ref())
        .max_by(|a, b| a.ratio().total_cmp(&b.ratio()));
    let mut out = match worst {
        Some(w) => format!(
            "pooled: worst mean {:.2} of what rounding explains ({})",
            w.ratio(),
            w.region.name(w.index)
        ),
        None => "pooled: too few rows to pool".to_string(),
    };
    let limits = super::bias::limits_text(&b.limits);
    if !limits.is_empty() {
        out.push_str("; ");
        out.push_str(&limits);
    }
    out
}

/// 1048576 → "1,048,576".
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests;
