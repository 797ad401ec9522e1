//! The correctness oracle: attention in f64 on the CPU, and the comparison
//! rules (max abs error ≤ 1e-2 × max(1, max|V|), relative L2 ≤ 1e-3, no NaN,
//! nothing unwritten).

use rand::SeedableRng;
use rand::seq::index;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::session::Shape;

pub const MAX_ABS_TOL: f64 = 1e-2;
pub const REL_L2_TOL: f64 = 1e-3;

/// f64 reference for one (batch, head): `q`, `k`, `v` are that head's S×D
/// rows; returns S×D.
pub fn attention_head(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    s: usize,
    d: usize,
    causal: bool,
) -> Vec<f64> {
    let scale = 1.0 / (d as f64).sqrt();
    let mut out = vec![0.0f64; s * d];
    out.par_chunks_mut(d).enumerate().for_each(|(i, row)| {
        let end = if causal { i + 1 } else { s };
        let qi = &q[i * d..(i + 1) * d];
        let scores: Vec<f64> = (0..end)
            .map(|j| {
                qi.iter()
                    .zip(&k[j * d..(j + 1) * d])
                    .map(|(a, b)| *a as f64 * *b as f64)
                    .sum::<f64>()
                    * scale
            })
            .collect();
        let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = scores.iter().map(|x| (x - m).exp()).collect();
        let total: f64 = weights.iter().sum();
        for (j, w) in weights.iter().enumerate() {
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

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Comparison {
    pub max_abs_err: f64,
    pub rel_l2_err: f64,
    pub nan_count: u64,
    pub unwritten: u64,
}

impl Comparison {
    /// The rules with V's values at most 1 in size.
    pub fn pass(&self) -> bool {
        self.pass_scaled(1.0)
    }

    /// The rules for outputs `scale` times larger (|V| up to `scale`): the
    /// absolute tolerance grows with it; the relative one does not.
    pub fn pass_scaled(&self, scale: f64) -> bool {
        self.nan_count == 0
            && self.unwritten == 0
            && self.max_abs_err <= MAX_ABS_TOL * scale.max(1.0)
            && self.rel_l2_err <= REL_L2_TOL
            && self.max_abs_err.is_finite()
            && self.rel_l2_err.is_finite()
    }
}

/// Accumulates errors over heads; `poisoned(i)` says element `i` still holds
/// the poison value.
#[derive(Default)]
pub struct Accumulator {
    max_abs: f64,
    err_sq: f64,
    ref_sq: f64,
    nan: u64,
    unwritten: u64,
}

impl Accumulator {
    pub fn add(&mut self, got: &[f32], poisoned: &[bool], reference: &[f64]) {
        for ((g, p), r) in got.iter().zip(poisoned).zip(reference) {
            if *p {
                self.unwritten += 1;
                continue;
            }
            if g.is_nan() {
                self.nan += 1;
                continue;
            }
            let e = (*g as f64 - r).abs();
            self.max_abs = self.max_abs.max(e);
            self.err_sq += e * e;
            self.ref_sq += r * r;
        }
    }

    /// Counts NaN and poison in outputs not compared against the reference.
    pub fn scan_only(&mut self, got: &[f32], poisoned: &[bool]) {
        for (g, p) in got.iter().zip(poisoned) {
            if *p {
                self.unwritten += 1;
            } else if g.is_nan() {
                self.nan += 1;
            }
        }
    }

    pub fn finish(&self) -> Comparison {
        let rel = if self.ref_sq > 0.0 {
            (self.err_sq / self.ref_sq).sqrt()
        } else {
            self.err_sq.sqrt()
        };
        Comparison {
            max_abs_err: self.max_abs,
            rel_l2_err: rel,
            nan_count: self.nan,
            unwritten: self.unwritten,
        }
    }
}

/// The heads to compare against the reference: all of them for small shapes,
/// else as many as a few seconds of CPU allow, drawn from `seed` (always
/// including the first and the last head, where edge bugs live), ascending.
pub fn heads_to_check(shape: &Shape, seed: u64) -> Vec<usize> {
    let heads = shape.b as usize * shape.h as usize;
    let per_head = shape.s as f64 * shape.s as f64 * shape.d as f64;
    let budget = 4e9; // multiply-adds
    let n = ((budget / per_head) as usize).clamp(1, heads);
    if n >= heads {
        return (0..heads).collect();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5EED_4EAD);
    let mut chosen: Vec<usize> = index::sample(&mut rng, heads, n).into_vec();
    chosen[0] = 0;
    if n > 1 {
        chosen[1] = heads - 1;
    }
    chosen.sort_unstable();
    chosen.dedup();
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_gives_its_value() {
        // S=1: softmax over one score is 1, so O = V.
        let out = attention_head(&[1.0, 2.0], &[3.0, 4.0], &[0.5, -0.25], 1, 2, false);
        assert_eq!(out, vec![0.5, -0.25]);
    }

    #[test]
    fn hand_computed_two_keys() {
        // d=1, q=1, k=[0, ln 3 · 1] → scores 0 and ln 3, weights 1 and 3.
        let ln3 = 3f64.ln() as f32;
        let out = attention_head(&[1.0, 1.0], &[0.0, ln3], &[1.0, 5.0], 2, 1, false);
        // Row 0 and row 1 see the same keys: (1·1 + 3·5) / 4 = 4.
        assert!((out[0] - 4.0).abs() < 1e-6, "{out:?}");
        // Causal: row 0 sees key 0 only.
        let out = attention_head(&[1.0, 1.0], &[0.0, ln3], &[1.0, 5.0], 2, 1, true);
        assert!(
            (out[0] - 1.0).abs() < 1e-12 && (out[1] - 4.0).abs() < 1e-6,
            "{out:?}"
        );
    }

    #[test]
    fn comparison_rules() {
        let mut acc = Accumulator::default();
        acc.add(&[1.0, 2.0], &[false, false], &[1.0, 2.0]);
        assert!(acc.finish().pass());
        acc.add(&[f32::NAN], &[false], &[0.0]);
        assert_eq!(acc.finish().nan_count, 1);
        assert!(!acc.finish().pass());
        let mut acc = Accumulator::default();
        acc.add(&[0.0], &[true], &[0.0]);
        assert_eq!(acc.finish().unwritten, 1);
        assert!(!acc.finish().pass());
        let mut acc = Accumulator::default();
        acc.add(&[1.02], &[false], &[1.0]);
        assert!(!acc.finish().pass(), "0.02 abs error fails");
    }

    #[test]
    fn head_sampling() {
        assert_eq!(heads_to_check(&Shape::MISSION, 1).len(), 16);
        let big = Shape {
            b: 4,
            h: 64,
            s: 4096,
            d: 64,
            causal: false,
        };
        let h = heads_to_check(&big, 1);
        assert!(h.len() < 256 && h.len() >= 2, "{h:?}");
        assert_eq!((h[0], *h.last().unwrap()), (0, 255));
        assert!(h.windows(2).all(|w| w[0] < w[1]));
        // Another seed, other heads in between; the same seed, the same heads.
        assert_eq!(heads_to_check(&big, 1), h);
        assert_ne!(heads_to_check(&big, 2), h);
    }

    #[test]
    fn tolerance_scales_with_the_values() {
        let c = Comparison {
            max_abs_err: 5.0,
            rel_l2_err: 1e-4,
            nan_count: 0,
            unwritten: 0,
        };
        assert!(!c.pass());
        assert!(c.pass_scaled(60_000.0));
    }
}
