//! Does the A/B interval mean what it says? Simulated races, drawn from
//! latency-like distributions on a 32 ns timer grid with drift between
//! batches, go through the same arithmetic as `attnscope ab`
//! (`bootstrap::ratio_interval`, `abstats::verdict_text`):
//! - A/A: the 95% interval covers 1.0 at least 93% of the time;
//! - a true 2% difference is called at least 95% of the time;
//! - the per-launch bootstrap attnscope printed before fails the first
//!   test, which shows the test can fail.
//!
//! The model, per race (a kernel of 5–70 µs): rounds of interleaved
//! launches; each round shares a drift (clock, heat: σ 0.5%) and each side
//! gets its own round effect (σ 0.3%: what the other kernel left in L2,
//! where its CTAs landed); each launch has 1% jitter (a 6.5 µs kernel then
//! spreads over about 35 timer values, as measured on an H100) and a 2%
//! chance of a tail of a few percent; CUPTI timestamps are multiples of
//! 32 ns, so a duration is quantized with a random phase.

use attnscope::metrics::abstats;
use attnscope::metrics::bootstrap;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

const STEP: f64 = 32.0;
const ROUNDS: usize = 40;
const PER_ROUND: usize = 150;

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box-Muller.
    let u1: f64 = rng.random_range(f64::EPSILON..1.0);
    let u2: f64 = rng.random_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn launch(rng: &mut ChaCha8Rng, mean_ns: f64) -> u64 {
    let mut t = mean_ns * (1.0 + 0.01 * normal(rng));
    if rng.random_range(0.0..1.0) < 0.02 {
        let u: f64 = rng.random_range(f64::EPSILON..1.0);
        t += mean_ns * 0.03 * -u.ln();
    }
    let phase: f64 = rng.random_range(0.0..STEP);
    (((t + phase) / STEP).floor() * STEP) as u64
}

/// One race: per round, A's and B's samples. B's true time is A's ÷ `speedup`.
fn race(seed: u64, speedup: f64) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let base: f64 = rng.random_range(5_000.0..70_000.0);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let drift = 1.0 + 0.005 * normal(&mut rng);
        let ea = 1.0 + 0.003 * normal(&mut rng);
        let eb = 1.0 + 0.003 * normal(&mut rng);
        let ma = base * drift * ea;
        let mb = base / speedup * drift * eb;
        a.push((0..PER_ROUND).map(|_| launch(&mut rng, ma)).collect());
        b.push((0..PER_ROUND).map(|_| launch(&mut rng, mb)).collect());
    }
    (a, b)
}

fn block_interval(a: &[Vec<u64>], b: &[Vec<u64>], seed: u64) -> bootstrap::RatioInterval {
    let ra: Vec<&[u64]> = a.iter().map(Vec::as_slice).collect();
    let rb: Vec<&[u64]> = b.iter().map(Vec::as_slice).collect();
    bootstrap::ratio_interval(&ra, &rb, STEP, 1000, seed).expect("enough rounds")
}

#[test]
fn block_interval_covers_one_in_a_a_races() {
    let races = 1000;
    let covered = (0..races as u64)
        .into_par_iter()
        .filter(|&i| {
            let (a, b) = race(i, 1.0);
            let r = block_interval(&a, &b, i);
            r.low <= 1.0 && 1.0 <= r.high
        })
        .count();
    println!("A/A, block bootstrap over rounds: {covered} of {races} intervals cover 1.0");
    assert!(
        covered * 100 >= races * 93,
        "only {covered} of {races} A/A intervals cover 1.0"
    );
}

#[test]
fn block_interval_detects_a_two_percent_difference() {
    let races = 1000;
    let called = (0..races as u64)
        .into_par_iter()
        .filter(|&i| {
            let (a, b) = race(1_000_000 + i, 1.02);
            abstats::verdict_text(&block_interval(&a, &b, i)).starts_with("B faster")
        })
        .count();
    println!("true 2% difference: called 'B faster' in {called} of {races} races");
    assert!(
        called * 100 >= races * 95,
        "a 2% difference was called in only {called} of {races} races"
    );
}

#[test]
fn a_a_verdicts_say_no_difference() {
    let races = 300;
    let wrong: Vec<String> = (0..races as u64)
        .into_par_iter()
        .filter_map(|i| {
            let (a, b) = race(2_000_000 + i, 1.0);
            let v = abstats::verdict_text(&block_interval(&a, &b, i));
            (!v.starts_with("no difference detected")).then_some(v)
        })
        .collect();
    println!(
        "A/A verdicts other than 'no difference detected': {}",
        wrong.len()
    );
    assert!(wrong.len() * 100 <= races * 2, "{wrong:?}");
}

#[test]
fn the_old_per_launch_interval_fails_the_coverage_test() {
    // The arithmetic attnscope used before: every launch resampled as if
    // independent, plain medians. Fewer races (it is slow), same model.
    let races = 200;
    let covered = (0..races as u64)
        .into_par_iter()
        .filter(|&i| {
            let (a, b) = race(i, 1.0);
            let a: Vec<u64> = a.concat();
            let b: Vec<u64> = b.concat();
            let (lo, hi) = abstats::per_launch_interval(&a, &b, 200, i).expect("samples");
            lo <= 1.0 && 1.0 <= hi
        })
        .count();
    println!("A/A, per-launch bootstrap (old): {covered} of {races} intervals cover 1.0");
    assert!(
        covered * 100 < races * 93,
        "the old interval was expected to undercover, but covered {covered} of {races}"
    );
}
