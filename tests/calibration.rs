//! Does a race (and a solo median) mean what it says, across processes?
//! Simulated runs go through the product's own code, not a restatement of
//! it: rounds are fed to `gpu::race::Rounds` with the placement each ran
//! on, `race::report` judges them at looks as `race::race` does on a GPU,
//! `race::stop_after` decides when to stop and `race::ending` what the
//! race ends with; a solo run's batches go through
//! `bootstrap::median_interval_placed` and `measure::rerun_of`.
//!
//! The model (each simulated process on its own seed):
//! - placements: each copy of the inputs and module of a kernel shifts its
//!   time by a draw of its own (σ 0.55% per side, so a ratio moves by 0.78%
//!   σ between placements, as run161 measured on an H200); a process that
//!   never rotates has one draw for its whole life, which is the offset
//!   between processes issue 55 found;
//! - each round shares a drift (σ 0.5%) that hits both sides alike;
//! - each side has its own autocorrelated effect (AR(1), ρ 0.7, σ 0.3%);
//! - the SM clock wanders (AR(1), ρ 0.9, σ 1%) and the two kernels feel it
//!   differently (A fully, B at 80%: one is more memory-bound);
//! - a warm-up: the first rounds run slow (2%, decaying over 4 rounds);
//! - each launch has 1% jitter and a 2% chance of a tail of a few percent;
//!   CUPTI timestamps are multiples of 32 ns, so a duration is quantized
//!   with a random phase.
//!
//! What it shows: today's races (64 placements) hold across processes and
//! the method before issue 55 (one placement, an assumed 0.1% between-run
//! σ) does not; A/A races over all their looks call a difference about 1%
//! of the time; planted differences of 1% and 0.5% are called; intervals
//! within one race still cover under drift, where resampling single rounds
//! does not.

use attnscope::gpu::measure;
use attnscope::gpu::race::{self, Look, RacePlan, Rounds};
use attnscope::metrics::abstats;
use attnscope::metrics::across_runs;
use attnscope::metrics::bootstrap;
use attnscope::session::Variant;
use attnscope::session::event::{AbReport, Decision, Regime};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

const STEP: f64 = 32.0;
/// Launches per side per round: a 10 ms round of a 400 µs kernel.
const PER_ROUND: usize = 12;
/// Placements a run rotates through (`gpu::engine::MAX_PLACEMENTS`).
const PLACEMENTS: usize = 64;
/// σ of one placement's effect on one side's time.
const PLACEMENT_SIGMA: f64 = 0.0055;
/// Simulated seconds per round, and the race's plan in those seconds: 256
/// rounds at most, a look every 16 (16 looks; the product looks every
/// 0.5 s of a 10 s race, 20).
const ROUND_S: f64 = 0.01;
const LOOK_EVERY: usize = 16;
const PLAN: RacePlan = RacePlan {
    l2: attnscope::session::event::L2Mode::Hot,
    regime: Regime::Interleaved,
    min_s: 0.64,
    max_s: 2.56,
    band: 0.0,
};
/// Bootstrap resamples per report (the product's running reports use 400,
/// the last 2000; the bootstrap is only a floor under the t interval).
const RESAMPLES: usize = 100;

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

/// One process's hardware: the drifts and its placements' effects.
struct Process {
    rng: ChaCha8Rng,
    base: f64,
    side_a: f64,
    side_b: f64,
    clock: f64,
    t: usize,
    /// Per placement: the effect on A's and on B's time.
    placed: Vec<(f64, f64)>,
    /// The clock's wander per round: lag-1 correlation and σ.
    clock_rho: f64,
    clock_sigma: f64,
    /// How much of the clock's wander B feels (A feels all of it), and each
    /// side's own autocorrelated effect (lag-1, σ).
    felt_b: f64,
    side_rho: f64,
    side_sigma: f64,
}

impl Process {
    /// A process on `seed` timing kernels of `base` ns, its `placements`
    /// each moving a side's time by σ `sigma`.
    fn new(seed: u64, placements: usize, base: f64, sigma: f64) -> Process {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let placed = (0..placements)
            .map(|_| (sigma * normal(&mut rng), sigma * normal(&mut rng)))
            .collect();
        Process {
            side_a: 0.003 * normal(&mut rng),
            side_b: 0.003 * normal(&mut rng),
            clock: 0.01 * normal(&mut rng),
            rng,
            base,
            t: 0,
            placed,
            clock_rho: 0.9,
            clock_sigma: 0.01,
            felt_b: 0.8,
            side_rho: 0.7,
            side_sigma: 0.003,
        }
    }

    /// A race's drift as run161 measured it on an H200: per-round log
    /// ratios of 10 ms rounds spread 0.38–0.92% (placements included) with
    /// a lag-1 autocorrelation of 0.01–0.21, each side's own 0.24–0.72: the
    /// clock moves both sides nearly alike.
    fn measured(self) -> Process {
        Process {
            felt_b: 0.95,
            side_rho: 0.3,
            side_sigma: 0.0015,
            ..self
        }
    }

    /// The same with the clock wandering as `bench`'s 25 ms batches of the
    /// small tile did on an H200 (run161: lag-1 0.58, σ 0.46%).
    fn batches(self) -> Process {
        Process {
            clock_rho: 0.6,
            clock_sigma: 0.005,
            ..self
        }
    }

    /// The next round's samples, A's and B's, B's true time A's ÷ `speedup`.
    fn round(&mut self, speedup: f64, placement: usize) -> (Vec<u64>, Vec<u64>) {
        let (ma, mb) = self.means(speedup, placement);
        let rng = &mut self.rng;
        let a = (0..PER_ROUND).map(|_| launch(rng, ma)).collect();
        let b = (0..PER_ROUND).map(|_| launch(rng, mb)).collect();
        (a, b)
    }

    /// The next round's samples in launch order (`order`: true for A).
    fn round_in(&mut self, speedup: f64, placement: usize, order: &[bool]) -> Vec<u64> {
        let (ma, mb) = self.means(speedup, placement);
        let rng = &mut self.rng;
        order
            .iter()
            .map(|&is_a| launch(rng, if is_a { ma } else { mb }))
            .collect()
    }

    /// The next round's mean times of A and B.
    fn means(&mut self, speedup: f64, placement: usize) -> (f64, f64) {
        let rng = &mut self.rng;
        let shared = 0.005 * normal(rng);
        self.side_a = ar1(rng, self.side_a, self.side_rho, self.side_sigma);
        self.side_b = ar1(rng, self.side_b, self.side_rho, self.side_sigma);
        self.clock = ar1(rng, self.clock, self.clock_rho, self.clock_sigma);
        let warm = 0.02 * (-(self.t as f64) / 4.0).exp();
        self.t += 1;
        let (pa, pb) = self.placed[placement % self.placed.len()];
        let ma = self.base
            * (1.0 + shared)
            * (1.0 + self.side_a)
            * (1.0 + self.clock + warm)
            * (1.0 + pa);
        let mb = self.base / speedup
            * (1.0 + shared)
            * (1.0 + self.side_b)
            * (1.0 + self.felt_b * (self.clock + warm))
            * (1.0 + pb);
        (ma, mb)
    }
}

/// A race as `race::race` runs it: rounds in turn on the process's
/// placements, a report every `LOOK_EVERY` rounds, stopped by `stop_after`.
fn run_race(seed: u64, speedup: f64, placements: usize) -> AbReport {
    let p = Process::new(seed, placements, base_of(seed), PLACEMENT_SIGMA).measured();
    run_race_in(p, speedup, placements)
}

/// A kernel's time, 5–70 µs, the same for every process of a group.
fn base_of(group: u64) -> f64 {
    5_000.0 + (group.wrapping_mul(2_654_435_761) % 65_000) as f64
}

fn run_race_in(mut p: Process, speedup: f64, placements: usize) -> AbReport {
    let mut rounds = Rounds::default();
    let v = Variant::start();
    for r in 0usize.. {
        let place = r % placements;
        let order = abstats::abba_order(r as u64, 2 * PER_ROUND);
        let samples = p.round_in(speedup, place, &order);
        rounds.add(&order, &samples, place as u32);
        if (r + 1) % LOOK_EVERY != 0 {
            continue;
        }
        let elapsed = (r + 1) as f64 * ROUND_S;
        let look = Look {
            fraction: (elapsed / PLAN.max_s).min(1.0),
            band: PLAN.band,
        };
        let report = |look| {
            race::report(
                (&v, &v),
                &attnscope::session::Shape::MISSION,
                &rounds,
                (STEP, "cupti"),
                Regime::Interleaved,
                RESAMPLES,
                look,
            )
        };
        let now = report(look);
        if let Some(stop) = race::stop_after(&now, elapsed, &PLAN, false) {
            return race::ending(stop, now, look, report);
        }
    }
    unreachable!("the rounds do not run out")
}

/// The interval the method before issue 55 printed: one placement, the
/// race's own interval widened by an assumed between-run σ of 0.1%.
fn as_before(r: &AbReport) -> (f64, f64) {
    let own = r
        .reruns
        .as_ref()
        .map_or((r.ci_low, r.ci_high), |x| (x.run_low, x.run_high));
    let h = ((r.speedup / own.0)
        .ln()
        .max((own.1 / r.speedup).ln())
        .powi(2)
        + (1.96 * 0.001f64).powi(2))
    .sqrt();
    (r.speedup * (-h).exp(), r.speedup * h.exp())
}

/// Groups of five processes racing the same pair: (pairs of intervals
/// that overlap, pairs), by the interval `pick` takes from each race.
fn five_processes(
    groups: u64,
    placements: usize,
    pick: impl Fn(&AbReport) -> (f64, f64) + Sync,
) -> (usize, usize) {
    (0..groups)
        .into_par_iter()
        .map(|g| {
            // The pair is the same in every process: B 18% slower.
            let ivs: Vec<(f64, f64)> = (0..5)
                .map(|k| pick(&run_race(10_000 * g + k, 1.0 / 1.18, placements)))
                .collect();
            let mut overlap = 0;
            for i in 0..5 {
                for j in i + 1..5 {
                    overlap += usize::from(ivs[i].1 >= ivs[j].0 && ivs[j].1 >= ivs[i].0);
                }
            }
            (overlap, 10)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

#[test]
fn races_in_separate_processes_agree_with_placements_sampled() {
    let (overlap, pairs) = five_processes(20, PLACEMENTS, |r| (r.ci_low, r.ci_high));
    println!(
        "64 placements: {overlap} of {pairs} pairs of intervals from separate processes overlap"
    );
    assert!(overlap * 100 >= pairs * 95, "{overlap} of {pairs}");
}

#[test]
fn races_before_issue_55_disagree_across_processes() {
    // One placement per process and an assumed 0.1% σ: the method of e4c64c3.
    let (overlap, pairs) = five_processes(20, 1, as_before);
    println!("one placement, assumed σ: {overlap} of {pairs} pairs overlap");
    assert!(
        overlap * 100 < pairs * 90,
        "the old method was expected to fail across processes, but {overlap} of {pairs} overlap"
    );
}

/// Races of `speedup` on fresh processes, counted by what they decided.
fn decisions(races: u64, seed: u64, speedup: f64) -> Vec<Decision> {
    (0..races)
        .into_par_iter()
        .map(|i| run_race(seed + i, speedup, PLACEMENTS).decided())
        .collect()
}

#[test]
fn a_a_races_call_a_difference_about_one_time_in_a_hundred() {
    let races = 300;
    let d = decisions(races, 1_000_000, 1.0);
    let called = d
        .iter()
        .filter(|d| matches!(d, Decision::Faster | Decision::Slower))
        .count();
    println!("A/A over all looks: a difference called in {called} of {races}");
    assert!(called * 100 <= races as usize * 2, "{called} of {races}");
}

#[test]
fn planted_differences_of_one_and_half_a_percent_are_called() {
    let races = 100;
    for (pct, want) in [(1.0, 90), (0.5, 50)] {
        let d = decisions(
            races,
            2_000_000 + (pct * 1000.0) as u64,
            1.0 / (1.0 + pct / 100.0),
        );
        let slower = d.iter().filter(|d| **d == Decision::Slower).count();
        let wrong = d.iter().filter(|d| **d == Decision::Faster).count();
        println!("B {pct}% slower: called slower in {slower} of {races}, faster in {wrong}");
        assert!(slower >= want, "{pct}%: {slower} of {races}");
        assert_eq!(wrong, 0, "{pct}%: called the wrong way");
    }
}

#[test]
fn within_one_race_the_interval_covers_under_drift() {
    // One placement: what a race's own rounds say, the stretches of time
    // holding the drift that single rounds resampled would miss.
    let races = 300u64;
    let own = (0..races)
        .into_par_iter()
        .filter(|&i| {
            // No placement effect: the drift alone, which single rounds miss.
            let p = Process::new(3_000_000 + i, 1, base_of(i), 0.0);
            let r = run_race_in(p, 1.0, 1);
            let (lo, hi) = r
                .reruns
                .as_ref()
                .and_then(|x| x.unpadded)
                .expect("unpadded");
            lo <= 1.0 && 1.0 <= hi
        })
        .count();
    println!("A/A within a race, one placement: {own} of {races} own intervals cover 1.0");
    assert!(own as u64 * 100 >= races * 93, "{own} of {races}");
}

#[test]
fn resampling_single_rounds_alone_fails_under_drift() {
    let races = 300u64;
    let covered = (0..races)
        .into_par_iter()
        .filter(|&i| {
            let mut p = Process::new(4_000_000 + i, 1, base_of(i), 0.0);
            let (a, b): (Vec<Vec<u64>>, Vec<Vec<u64>>) = (0..120).map(|_| p.round(1.0, 0)).unzip();
            let ra: Vec<&[u64]> = a.iter().map(Vec::as_slice).collect();
            let rb: Vec<&[u64]> = b.iter().map(Vec::as_slice).collect();
            let r = bootstrap::ratio_interval(&ra, &rb, STEP, 400, i).expect("rounds");
            r.bootstrap.0 <= 1.0 && 1.0 <= r.bootstrap.1
        })
        .count() as u64;
    println!("A/A, bootstrap of single rounds alone: {covered} of {races} cover 1.0");
    assert!(covered * 100 < races * 93, "{covered} of {races}");
}

/// One solo run's batches (8 launches each) and their placements.
fn solo_run(seed: u64, base: f64, placements: usize, batches: usize) -> (Vec<Vec<u64>>, Vec<u32>) {
    let mut p = Process::new(seed, placements, base, PLACEMENT_SIGMA).batches();
    (0..batches)
        .map(|i| {
            let place = i % placements;
            let (a, _) = p.round(1.0, place);
            (a, place as u32)
        })
        .unzip()
}

/// How many other processes' medians fall inside each process's printed
/// (rerun) interval, over groups of eight processes.
fn solo_coverage(groups: u64, placements: usize) -> (usize, usize, f64) {
    let per: Vec<(usize, usize, f64)> = (0..groups)
        .into_par_iter()
        .map(|g| {
            let runs: Vec<(f64, f64, f64)> = (0..8)
                .map(|k| {
                    let (b, place) = solo_run(50_000 * g + k, base_of(g), placements, 64);
                    let refs: Vec<&[u64]> = b.iter().map(Vec::as_slice).collect();
                    let m = bootstrap::median_interval_placed(&refs, &place, STEP, 200, k)
                        .expect("batches");
                    let (lo, hi, _) = measure::rerun_of(&m);
                    (m.median_ns, lo, hi)
                })
                .collect();
            let (inside, of) = across_runs::others_inside(&runs);
            let hw: f64 = runs.iter().map(|r| (r.2 - r.1) / 2.0 / r.0).sum::<f64>() / 8.0;
            (inside, of, hw)
        })
        .collect();
    let inside = per.iter().map(|p| p.0).sum();
    let total = per.iter().map(|p| p.1).sum();
    (
        inside,
        total,
        per.iter().map(|p| p.2).sum::<f64>() / per.len() as f64,
    )
}

#[test]
fn solo_medians_hold_across_processes_with_placements_sampled() {
    let (inside, total, hw) = solo_coverage(30, PLACEMENTS);
    println!(
        "solo, 64 placements: {inside} of {total} other runs' medians inside (mean ±{:.2}%)",
        hw * 100.0
    );
    assert!(inside * 100 >= total * 90, "{inside} of {total}");
    let (inside, total, hw) = solo_coverage(30, 1);
    println!(
        "solo, one placement: {inside} of {total} (mean ±{:.2}%)",
        hw * 100.0
    );
    assert!(
        inside * 100 < total * 90,
        "one placement was expected to fail: {inside} of {total}"
    );
}

#[test]
fn the_old_per_launch_interval_fails_the_coverage_test() {
    // The arithmetic attnscope used first: every launch resampled as if
    // independent, plain medians.
    let races = 200u64;
    let covered = (0..races)
        .into_par_iter()
        .filter(|&i| {
            let mut p = Process::new(5_000_000 + i, 1, base_of(i), 0.0);
            let (a, b): (Vec<Vec<u64>>, Vec<Vec<u64>>) = (0..60).map(|_| p.round(1.0, 0)).unzip();
            let (lo, hi) =
                abstats::per_launch_interval(&a.concat(), &b.concat(), 200, i).expect("samples");
            lo <= 1.0 && 1.0 <= hi
        })
        .count() as u64;
    println!("A/A, per-launch bootstrap (old): {covered} of {races} intervals cover 1.0");
    assert!(covered * 100 < races * 93, "{covered} of {races}");
}
