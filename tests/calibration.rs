//! Does the A/B interval mean what it says? Simulated races, drawn from
//! latency-like distributions on a 32 ns timer grid, go through the same
//! arithmetic as `attnscope ab` (`bootstrap::ratio_interval`, the rerun
//! widening of `across_runs::with_between_run`, `abstats::verdict_text`):
//! - A/A: the race's own 95% interval, before the timer-step padding,
//!   covers 1.0 at least 93% of the time;
//! - the bootstrap over single rounds that attnscope used alone before
//!   fails that test under the same model, which shows the test can fail;
//! - a true 2% difference is called at least 95% of the time and A/A races
//!   call a difference at most 2% of the time, on the full path a user gets.
//!
//! The model, per race (a kernel of 5–70 µs, 60–120 rounds of 150 launches
//! per side, as a 1–2 s race of 10 ms rounds):
//! - each round shares a drift (σ 0.5%) that hits both sides alike;
//! - each side has its own autocorrelated effect (AR(1), ρ 0.7, σ 0.3%):
//!   what the other kernel left in L2, where its CTAs landed, lasting;
//! - the SM clock wanders (AR(1), ρ 0.9, σ 1%) and the two kernels feel it
//!   differently (A fully, B at 80%: one is more memory-bound);
//! - a warm-up: the first rounds run slow (2%, decaying over 4 rounds),
//!   again felt as the clock is;
//! - each launch has 1% jitter and a 2% chance of a tail of a few percent;
//!   CUPTI timestamps are multiples of 32 ns, so a duration is quantized
//!   with a random phase.
//!
//! `independent_rounds` is the model this file used before (drift
//! independent per round, hitting both sides alike), under which the old
//! bootstrap passed: the test passed by construction.

use attnscope::metrics::abstats;
use attnscope::metrics::across_runs;
use attnscope::metrics::bootstrap;
use attnscope::session::run_spread::ASSUMED_RACE_REL;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

const STEP: f64 = 32.0;
const PER_ROUND: usize = 150;
/// Bootstrap resamples per simulated race (the product uses 2000).
const RESAMPLES: usize = 600;

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

/// An AR(1) series' next value: stationary σ `sigma`, lag-1 correlation `rho`.
fn ar1(rng: &mut ChaCha8Rng, last: f64, rho: f64, sigma: f64) -> f64 {
    rho * last + sigma * (1.0 - rho * rho).sqrt() * normal(rng)
}

#[derive(Clone, Copy)]
enum Model {
    /// Per-side AR(1) effects, a clock felt differently, a warm-up.
    Drifting,
    /// Drift independent per round and alike for both sides (the old model).
    IndependentRounds,
}

/// One race: per round, A's and B's samples. B's true time is A's ÷ `speedup`.
fn race(seed: u64, speedup: f64, model: Model) -> (Vec<Vec<u64>>, Vec<Vec<u64>>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let base: f64 = rng.random_range(5_000.0..70_000.0);
    let rounds = rng.random_range(60..=120);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    // Each AR(1) series starts from its stationary distribution.
    let mut side_a = 0.003 * normal(&mut rng);
    let mut side_b = 0.003 * normal(&mut rng);
    let mut clock = 0.01 * normal(&mut rng);
    let drifting = matches!(model, Model::Drifting);
    for t in 0..rounds {
        let shared = 0.005 * normal(&mut rng);
        let (ea, eb, felt_a, felt_b) = if drifting {
            side_a = ar1(&mut rng, side_a, 0.7, 0.003);
            side_b = ar1(&mut rng, side_b, 0.7, 0.003);
            clock = ar1(&mut rng, clock, 0.9, 0.01);
            let warm = 0.02 * (-(t as f64) / 4.0).exp();
            (side_a, side_b, clock + warm, 0.8 * (clock + warm))
        } else {
            let ea = 0.003 * normal(&mut rng);
            (ea, 0.003 * normal(&mut rng), 0.0, 0.0)
        };
        let ma = base * (1.0 + shared) * (1.0 + ea) * (1.0 + felt_a);
        let mb = base / speedup * (1.0 + shared) * (1.0 + eb) * (1.0 + felt_b);
        a.push((0..PER_ROUND).map(|_| launch(&mut rng, ma)).collect());
        b.push((0..PER_ROUND).map(|_| launch(&mut rng, mb)).collect());
    }
    (a, b)
}

fn race_interval(a: &[Vec<u64>], b: &[Vec<u64>], seed: u64) -> bootstrap::RatioInterval {
    let ra: Vec<&[u64]> = a.iter().map(Vec::as_slice).collect();
    let rb: Vec<&[u64]> = b.iter().map(Vec::as_slice).collect();
    bootstrap::ratio_interval(&ra, &rb, STEP, RESAMPLES, seed).expect("enough rounds")
}

/// The interval and verdict `attnscope ab` prints on a GPU where no race
/// spread was measured: the race's own, widened by the assumed between-run σ.
fn as_printed(r: bootstrap::RatioInterval) -> bootstrap::RatioInterval {
    let (low, high) = across_runs::with_between_run(r.ratio, r.low, r.high, ASSUMED_RACE_REL);
    bootstrap::RatioInterval { low, high, ..r }
}

/// How many of `races` A/A races' intervals cover 1.0, by the interval
/// `pick` takes from each.
fn a_a_coverage(
    races: u64,
    model: Model,
    pick: impl Fn(&bootstrap::RatioInterval) -> (f64, f64) + Sync,
) -> u64 {
    (0..races)
        .into_par_iter()
        .filter(|&i| {
            let (a, b) = race(i, 1.0, model);
            let (lo, hi) = pick(&race_interval(&a, &b, i));
            lo <= 1.0 && 1.0 <= hi
        })
        .count() as u64
}

#[test]
fn the_race_interval_covers_one_in_drifting_a_a_races() {
    let races = 600;
    let covered = a_a_coverage(races, Model::Drifting, |r| r.unpadded);
    println!("A/A, drifting model, before the timer's floor: {covered} of {races} cover 1.0");
    assert!(
        covered * 100 >= races * 93,
        "only {covered} of {races} A/A intervals cover 1.0"
    );
}

#[test]
fn the_bootstrap_over_single_rounds_fails_under_drift() {
    // What attnscope printed before: resampling rounds as if independent.
    let races = 600;
    let covered = a_a_coverage(races, Model::Drifting, |r| r.bootstrap);
    println!("A/A, drifting model, bootstrap of rounds alone: {covered} of {races} cover 1.0");
    assert!(
        covered * 100 < races * 93,
        "the bootstrap of single rounds was expected to undercover, but covered {covered} of {races}"
    );
    // Under the old model, where drift never lasts past a round, it passed.
    let old = a_a_coverage(races, Model::IndependentRounds, |r| r.bootstrap);
    println!("A/A, independent rounds, bootstrap of rounds alone: {old} of {races}");
    assert!(old * 100 >= races * 93, "{old} of {races}");
    let new = a_a_coverage(races, Model::IndependentRounds, |r| r.unpadded);
    println!("A/A, independent rounds, the race interval: {new} of {races}");
    assert!(new * 100 >= races * 93, "{new} of {races}");
}

#[test]
fn a_true_two_percent_difference_is_called() {
    let races = 600;
    let called = (0..races as u64)
        .into_par_iter()
        .filter(|&i| {
            let (a, b) = race(1_000_000 + i, 1.02, Model::Drifting);
            abstats::verdict_text(&as_printed(race_interval(&a, &b, i))).starts_with("B faster")
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
            let (a, b) = race(2_000_000 + i, 1.0, Model::Drifting);
            let v = abstats::verdict_text(&as_printed(race_interval(&a, &b, i)));
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
            let (a, b) = race(i, 1.0, Model::IndependentRounds);
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
