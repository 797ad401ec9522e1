//! Input generators for the correctness oracle: Q, K, V for a shape, from a
//! distribution and a seed. Deterministic: each (seed, head, tensor) has its
//! own random stream, so the values do not depend on the thread count.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::session::{Dtype, Inputs, Shape};

/// Log2 units the running maximum climbs at each step of `rising`: past the
/// kernels' lazy-rescale threshold of 8. In bf16 (fp32's range) a P kept
/// against a stale maximum overflows only past 2^128, so the steps are 40:
/// the four a row meets after a first tile of 128 keys at S 333 pass it
/// (`mutexp`, which fp16's 2^16 shows at 12 a step).
pub fn rise_log2(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::F16 => 12.0,
        Dtype::Bf16 => 40.0,
    }
}
/// Steps of `rising` over a sequence.
pub const RISES: usize = 6;

fn rng(seed: u64, head: usize, tensor: u64) -> ChaCha8Rng {
    let mixed = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((head as u64).wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(tensor);
    ChaCha8Rng::seed_from_u64(mixed)
}

fn normal(r: &mut ChaCha8Rng) -> f32 {
    // Box-Muller.
    let u1: f32 = r.random_range(f32::EPSILON..1.0);
    let u2: f32 = r.random_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f32::consts::PI * u2).cos()
}

/// The key positions where `rising` steps up: spread over the sequence and
/// off tile boundaries.
pub fn rise_positions(s: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (1..=RISES)
        .map(|m| m * s / (RISES + 1) + s / 23)
        .filter(|&p| p > 0 && p < s)
        .collect();
    p.dedup();
    p
}

/// Q, K and V for `shape` as bits of its dtype, in BHSD order: Q has B·H
/// heads of S rows, K and V B·(KV heads) heads of key-length rows.
pub fn generate(inputs: Inputs, shape: &Shape, seed: u64) -> [Vec<u16>; 3] {
    let d = shape.d as usize;
    let (rises, rise) = (
        rise_positions(shape.kv_len as usize),
        rise_log2(shape.dtype),
    );
    let lens = [shape.q_elements(), shape.kv_elements(), shape.kv_elements()];
    let rows = [shape.s, shape.kv_len, shape.kv_len].map(|r| r as usize * d);
    let mut out = lens.map(|n| vec![0u16; n]);
    for (tensor, buf) in out.iter_mut().enumerate() {
        buf.par_chunks_mut(rows[tensor].max(1))
            .enumerate()
            .for_each(|(head, chunk)| {
                let mut r = rng(seed, head, tensor as u64);
                let mut values = vec![0f32; chunk.len()];
                fill(inputs, tensor, &mut values, d, (&rises, rise), &mut r);
                for (bits, x) in chunk.iter_mut().zip(values) {
                    *bits = shape.dtype.from_f32(x);
                }
            });
    }
    out
}

/// One head's values, each already what the dtype holds exactly or close
/// (rounding happens once, in `generate`).
fn fill(
    inputs: Inputs,
    tensor: usize,
    chunk: &mut [f32],
    d: usize,
    (rises, rise): (&[usize], f64),
    r: &mut ChaCha8Rng,
) {
    let uniform = |r: &mut ChaCha8Rng, a: f32| r.random_range(-a..=a);
    let (q, k) = (tensor == 0, tensor == 1);
    match inputs {
        Inputs::Uniform => chunk.iter_mut().for_each(|x| *x = uniform(r, 1.0)),
        Inputs::Normal { sigma_milli } => {
            let sigma = sigma_milli as f32 / 1000.0;
            chunk
                .iter_mut()
                .for_each(|x| *x = (normal(r) * sigma).clamp(-60_000.0, 60_000.0));
        }
        Inputs::Rising => {
            // Score of key j ≈ level(j)·rise·ln 2 nats: Q's first
            // coordinate is 4, K's carries the level; the rest is noise.
            const Q0: f32 = 4.0;
            for (j, row) in chunk.chunks_mut(d).enumerate() {
                for (c, x) in row.iter_mut().enumerate() {
                    *x = if c == 0 && q {
                        Q0
                    } else if c == 0 && k {
                        let level = rises.iter().filter(|&&p| p <= j).count() as f64;
                        let nats = level * rise * std::f64::consts::LN_2;
                        let k0 = nats * (d as f64).sqrt() / Q0 as f64;
                        k0 as f32 + r.random_range(-0.25f32..=0.25)
                    } else {
                        uniform(r, 1.0)
                    };
                }
            }
        }
        Inputs::Outliers => {
            for row in chunk.chunks_mut(d) {
                let big = k && r.random_range(0.0f32..1.0) < 0.01;
                let a = if big { 40.0 } else { 1.0 };
                row.iter_mut().for_each(|x| *x = uniform(r, a));
            }
        }
        Inputs::Ties => {
            if k {
                let first: Vec<f32> = (0..d).map(|_| uniform(r, 1.0)).collect();
                for row in chunk.chunks_mut(d) {
                    row.copy_from_slice(&first);
                }
            } else {
                chunk.iter_mut().for_each(|x| *x = uniform(r, 1.0));
            }
        }
        Inputs::Large => {
            let a = if tensor == 2 { 60_000.0 } else { 16.0 };
            chunk.iter_mut().for_each(|x| *x = uniform(r, a));
        }
        Inputs::Offset => {
            let v = tensor == 2;
            chunk.iter_mut().for_each(|x| {
                *x = if v {
                    r.random_range(0.0f32..=60_000.0)
                } else {
                    uniform(r, 1.0)
                }
            });
        }
    }
}

/// The largest |V| over the given values (bits of `dtype`), at least 1:
/// outputs are convex combinations of V's rows, so the oracle's absolute
/// tolerance scales by it.
pub fn value_scale(v: &[u16], dtype: Dtype) -> f64 {
    v.iter()
        .map(|&x| dtype.to_f32(x).abs() as f64)
        .fold(1.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(s: u32, d: u32) -> Shape {
        Shape::new(1, 2, s, d)
    }

    fn f32s(x: &[u16]) -> Vec<f32> {
        x.iter().map(|&b| Dtype::F16.to_f32(b)).collect()
    }

    #[test]
    fn deterministic_from_the_seed() {
        for i in Inputs::ALL {
            let a = generate(i, &shape(77, 64), 5);
            let b = generate(i, &shape(77, 64), 5);
            let c = generate(i, &shape(77, 64), 6);
            assert_eq!(a, b, "{i}");
            assert_ne!(a[2], c[2], "{i}: another seed, other values");
            for t in &a {
                assert!(f32s(t).iter().all(|x| x.is_finite()), "{i}");
            }
        }
    }

    /// Scores of one row in log2 units, from the fp16 values the GPU sees.
    fn scores_log2(q: &[u16], k: &[u16], s: usize, d: usize, row: usize) -> Vec<f64> {
        let (q, k) = (f32s(q), f32s(k));
        (0..s)
            .map(|j| {
                let dot: f64 = (0..d)
                    .map(|c| q[row * d + c] as f64 * k[j * d + c] as f64)
                    .sum();
                dot / (d as f64).sqrt() * std::f64::consts::LOG2_E
            })
            .collect()
    }

    /// How often a row's running maximum rises by more than 8 log2 units
    /// after its first key (what makes the kernels rescale O).
    fn rescales(scores: &[f64]) -> usize {
        let mut m = scores[0];
        let mut n = 0;
        for &x in &scores[1..] {
            if x > m + 8.0 {
                n += 1;
                m = x;
            }
        }
        n
    }

    #[test]
    fn rising_raises_every_rows_running_max_several_times() {
        for (s, d) in [(512usize, 64usize), (333, 128), (4097, 64)] {
            let [q, k, _] = generate(Inputs::Rising, &shape(s as u32, d as u32), 9);
            for row in [0, s / 2, s - 1] {
                let n = rescales(&scores_log2(&q, &k, s, d, row));
                assert!(
                    n >= 5,
                    "S={s} D={d} row {row}: the max rose past 8 log2 only {n} times"
                );
            }
        }
    }

    #[test]
    fn rising_overflows_a_stale_maximum_in_each_format() {
        // A P kept against the first tile's maximum (mutexp) must overflow
        // the format P is packed in: fp16 past 2^16, bf16 (fp32's range)
        // past 2^128. At 12 log2 a step, bf16 rose only 48 after a first
        // tile of 128 keys at S 333, and the bug went unseen (run176).
        for (dtype, over) in [(Dtype::F16, 16.0), (Dtype::Bf16, 128.0)] {
            let sh = shape(333, 64).with_dtype(dtype);
            let [q, k, _] = generate(Inputs::Rising, &sh, 9);
            let (q, k) = (
                q.iter().map(|&b| dtype.to_f32(b)).collect::<Vec<_>>(),
                k.iter().map(|&b| dtype.to_f32(b)).collect::<Vec<_>>(),
            );
            let row = 332;
            let scores: Vec<f64> = (0..333)
                .map(|j| {
                    let dot: f64 = (0..64)
                        .map(|c| q[row * 64 + c] as f64 * k[j * 64 + c] as f64)
                        .sum();
                    dot / 8.0 * std::f64::consts::LOG2_E
                })
                .collect();
            let first = scores[..128].iter().copied().fold(f64::MIN, f64::max);
            let last = scores.iter().copied().fold(f64::MIN, f64::max);
            assert!(
                last - first > over,
                "{dtype:?}: the maximum after the first tile rose {:.1} log2, not past {over}",
                last - first
            );
        }
    }

    #[test]
    fn uniform_never_rescales_after_the_first_key() {
        // Why `rising` exists: with uniform inputs the lazy rescale never runs.
        let [q, k, _] = generate(Inputs::Uniform, &shape(512, 64), 9);
        for row in [0, 100, 511] {
            assert_eq!(rescales(&scores_log2(&q, &k, 512, 64, row)), 0);
        }
    }

    #[test]
    fn ties_make_every_key_equal_and_large_stays_finite() {
        let [_, k, _] = generate(Inputs::Ties, &shape(40, 64), 2);
        assert!(k[..64 * 40].chunks(64).all(|r| r == &k[..64]));
        let [q, _, v] = generate(Inputs::Large, &shape(40, 64), 2);
        let scale = |x: &[u16]| value_scale(x, Dtype::F16);
        assert!(scale(&v) > 50_000.0 && scale(&v) <= 60_000.0);
        assert!(scale(&q) <= 16.0);
    }

    #[test]
    fn outliers_are_a_few_large_keys() {
        let [_, k, _] = generate(Inputs::Outliers, &shape(4000, 64), 3);
        let big = k
            .chunks(64)
            .filter(|r| f32s(r).iter().any(|x| x.abs() > 2.0))
            .count();
        assert!((20..=150).contains(&big), "{big} of 8000 keys are large");
    }

    #[test]
    fn kv_heads_and_keys_size_k_and_v_and_bf16_rounds_to_bf16() {
        let gqa = Shape::new(2, 8, 3, 64)
            .with_kv(2, 700)
            .with_dtype(Dtype::Bf16)
            .with_causal(true);
        let [q, k, v] = generate(Inputs::Rising, &gqa, 4);
        assert_eq!(q.len(), 2 * 8 * 3 * 64);
        assert_eq!((k.len(), v.len()), (2 * 2 * 700 * 64, 2 * 2 * 700 * 64));
        // Rising runs over the keys: the one query row climbs past each rise.
        let bf = |x: &[u16]| x.iter().map(|&b| Dtype::Bf16.to_f32(b)).collect::<Vec<_>>();
        let (qf, kf) = (bf(&q[..3 * 64]), bf(&k[..700 * 64]));
        let scores: Vec<f64> = (0..700)
            .map(|j| {
                (0..64)
                    .map(|c| qf[c] as f64 * kf[j * 64 + c] as f64)
                    .sum::<f64>()
                    / 8.0
                    * std::f64::consts::LOG2_E
            })
            .collect();
        assert!(rescales(&scores) >= 5);
        // The same draw as fp16 differs only by rounding to bf16's 8 bits.
        let [q16, ..] = generate(Inputs::Rising, &gqa.with_dtype(Dtype::F16), 4);
        for (a, b) in q.iter().zip(&q16) {
            let (a, b) = (Dtype::Bf16.to_f32(*a), Dtype::F16.to_f32(*b));
            assert!((a - b).abs() <= b.abs() / 128.0, "{a} {b}");
        }
    }

    #[test]
    fn rise_positions_stay_inside_and_off_tile_edges() {
        let p = rise_positions(512);
        assert_eq!(p.len(), RISES);
        assert!(p.iter().all(|&x| x > 0 && x < 512 && x % 64 != 0), "{p:?}");
        assert!(rise_positions(1).is_empty());
    }
}
