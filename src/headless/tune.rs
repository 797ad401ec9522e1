//! `attnscope tune`: times every candidate tile of one kernel path on one
//! shape and keeps the fastest correct one. The choice is cached per GPU,
//! architecture, kernel source and shape, so `bench --variants
//! mma+async@tuned` reuses it until the kernel or the GPU changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::bench::{Check, bench_one};
use super::{Run, fail};
use crate::cli::{TuneArgs, exit};
use crate::gpu::engine::{Engine, Timer};
use crate::gpu::measure::Plan;
use crate::session::event::GpuInfo;
use crate::session::{Shape, Variant};

/// One cached choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TunedEntry {
    /// The winning tile, as written after `@` in a variant name.
    pub tile: String,
    pub p50_us: f64,
    /// How many candidates were timed, and when (seconds since the epoch).
    pub candidates: usize,
    pub tuned_at: u64,
    /// "fast" (the cost model's finalists) or "all" (every candidate);
    /// absent in entries written before issue 41.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TuneCache {
    pub version: u32,
    pub entries: BTreeMap<String, TunedEntry>,
}

const CACHE_VERSION: u32 = 1;

/// What a choice depends on: the GPU and its architecture, the kernel source,
/// the path (its kernel and toggles) and the shape (causal included).
pub fn cache_key(gpu: &str, arch: &str, source_hash: &str, path: Variant, shape: &Shape) -> String {
    let flags = path_of(path).name();
    format!("{gpu}|{arch}|{source_hash}|{flags}|{shape}")
}

/// What `tune` tunes when no path is named: the primary kernel's path with
/// the most tiles to try, the later one on a tie (mma+async for the bundled
/// kernel).
pub fn default_path() -> Variant {
    // max_by_key keeps the last of equal maxima.
    Variant::all_paths()
        .into_iter()
        .max_by_key(|p| p.tune_tiles(None).len())
        .unwrap_or_else(Variant::start)
}

/// The path a variant runs: its kernel and toggles at the default tile.
pub fn path_of(v: Variant) -> Variant {
    match v.manifest() {
        Some(m) => Variant {
            tile: m.default_tile(),
            ..v
        },
        None => v,
    }
}

impl TuneCache {
    /// `$ATTNSCOPE_TUNE_CACHE`, else `$XDG_CACHE_HOME/attnscope/tuned.json`,
    /// else `~/.cache/attnscope/tuned.json`.
    pub fn default_path() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("ATTNSCOPE_TUNE_CACHE") {
            return Some(PathBuf::from(p));
        }
        crate::cache_dir::cache_dir().map(|c| c.join("tuned.json"))
    }

    /// The cache at `default_path()` (empty when there is no cache folder),
    /// with that path for saving.
    pub fn open() -> Result<(TuneCache, Option<PathBuf>), String> {
        let path = TuneCache::default_path();
        let cache = match &path {
            Some(p) => TuneCache::load(p)?,
            None => TuneCache::default(),
        };
        Ok((cache, path))
    }

    /// A missing file is an empty cache; an unreadable or corrupt one is an
    /// error naming the file (nothing is overwritten behind the user's back).
    pub fn load(path: &Path) -> Result<TuneCache, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TuneCache::default()),
            Err(e) => {
                return Err(format!(
                    "cannot read the tuning cache {}: {e}",
                    path.display()
                ));
            }
        };
        let cache: TuneCache = serde_json::from_str(&text).map_err(|e| {
            format!(
                "the tuning cache {} is corrupt ({e}); delete it and run attnscope tune again",
                path.display()
            )
        })?;
        if cache.version != CACHE_VERSION {
            return Err(format!(
                "the tuning cache {} has version {}, this attnscope writes {CACHE_VERSION}; delete it and tune again",
                path.display(),
                cache.version
            ));
        }
        Ok(cache)
    }

    /// Written whole to a temporary file, then renamed over the old one.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let why =
            |e: std::io::Error| format!("cannot write the tuning cache {}: {e}", path.display());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(why)?;
        }
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(&TuneCache {
            version: CACHE_VERSION,
            entries: self.entries.clone(),
        })
        .map_err(|e| format!("tuning cache: {e}"))?;
        std::fs::write(&tmp, text).map_err(why)?;
        std::fs::rename(&tmp, path).map_err(why)
    }
}

/// The tiles tuned over for a path: its manifest's `tune` list, those a GPU
/// of compute capability `cc` runs.
pub fn candidates(path: Variant, cc: Option<u32>) -> Vec<Variant> {
    path.tune_tiles(cc)
}

/// The candidates that take `shape` (their manifest's dtypes, head dims,
/// KV heads and key lengths) and this GPU can launch, and one line for each
/// it cannot (its shared memory per block is over the limit).
pub fn launchable(
    path: Variant,
    info: &crate::session::event::GpuInfo,
    shape: &Shape,
) -> (Vec<Variant>, Vec<String>) {
    let mut skipped = Vec::new();
    let d = shape.d;
    let tiles = candidates(path, Some(info.cc()))
        .into_iter()
        .filter(|v| v.runs(shape).is_ok())
        .filter(|v| match info.smem_refusal(v, d) {
            Some(why) => {
                skipped.push(why);
                false
            }
            None => true,
        })
        .collect();
    (tiles, skipped)
}

/// A timed candidate.
pub struct Trial {
    pub variant: Variant,
    pub row: serde_json::Value,
    /// The grouped median on the timer's grid (the measurement's), µs.
    pub median_us: Option<f64>,
    pub correct: bool,
}

/// The correct candidates with a median, fastest first.
pub fn ranked(trials: &[Trial]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..trials.len())
        .filter(|&i| trials[i].correct && trials[i].median_us.is_some_and(f64::is_finite))
        .collect();
    order.sort_by(|&a, &b| {
        let m = |i: usize| trials[i].median_us.unwrap_or(f64::INFINITY);
        m(a).total_cmp(&m(b))
    });
    order
}

/// The tuned trial, and what the race of the top two said (JSON, and a
/// line for the text output).
struct Choice {
    best: Option<usize>,
    race: serde_json::Value,
    line: String,
}

/// Ranks the trials by median, then races the top two and takes the race's
/// winner only when it calls a difference.
fn choose(run: &mut Run, trials: &[Trial], shape: &Shape, max_s: f64, quiet: bool) -> Choice {
    let order = ranked(trials);
    let (first, second) = match order.as_slice() {
        [] => {
            return Choice {
                best: None,
                race: super::tune_race::no_race_json("no correct candidate"),
                line: String::new(),
            };
        }
        [only] => {
            let why = "one correct candidate: nothing to race";
            return Choice {
                best: Some(*only),
                race: super::tune_race::no_race_json(why),
                line: format!("no race: {why}"),
            };
        }
        [a, b, ..] => (*a, *b),
    };
    let (a, b) = (trials[first].variant, trials[second].variant);
    if !quiet {
        eprintln!("  racing the top two: {} against {}", a.name(), b.name());
    }
    match super::tune_race::race_top_two(run, &a, &b, shape, max_s) {
        Ok(settled) => Choice {
            best: Some([first, second][settled.pick.index()]),
            race: settled.json(),
            line: settled.text(),
        },
        Err(e) => {
            let why = format!("the race failed ({e}); kept the lower median");
            Choice {
                best: Some(first),
                race: super::tune_race::no_race_json(&why),
                line: format!("no race: {why}"),
            }
        }
    }
}

/// What a tune times: every launchable candidate (`--all`) or the cost
/// model's finalists, built in parallel first.
pub struct Pick {
    pub mode: &'static str,
    pub tiles: Vec<Variant>,
    /// The finalists with the model's estimate (None: a tile it cannot
    /// read); empty with --all.
    pub finalists: Vec<(Variant, Option<f64>)>,
    /// How many candidates the path has at this shape on this GPU.
    pub candidates: usize,
}

impl Pick {
    pub fn json(&self) -> serde_json::Value {
        let fin: Vec<serde_json::Value> = self
            .finalists
            .iter()
            .map(|(v, e)| json!({"variant": v.name(), "estimate": e}))
            .collect();
        json!({"mode": self.mode, "candidates": self.candidates, "finalists": fin})
    }
}

/// The tiles to time for `path` at `shape`: all launchable candidates, or
/// the model's finalists (their cubins compiled in parallel now).
pub(super) fn pick(run: &mut Run, path: Variant, shape: &Shape, all: bool, quiet: bool) -> Pick {
    let (tiles, skipped) = launchable(path, &run.engine.info, shape);
    for why in skipped {
        if !quiet {
            eprintln!("  skipped: {why}");
        }
    }
    let candidates = tiles.len();
    let (mode, finalists) = if all {
        ("all", Vec::new())
    } else {
        let sms = run.engine.info.sm_count;
        let n = super::tune_model::FINALISTS;
        ("fast", super::tune_model::finalists(&tiles, shape, sms, n))
    };
    let tiles: Vec<Variant> = if all {
        tiles
    } else {
        finalists.iter().map(|f| f.0).collect()
    };
    let started = std::time::Instant::now();
    let built = run.engine.build_ahead(&tiles, shape);
    if !quiet {
        eprintln!(
            "  {} {} of {candidates}, built in parallel in {:.1} s{}",
            if all {
                "every candidate,"
            } else {
                "the cost model's finalists,"
            },
            tiles.len(),
            started.elapsed().as_secs_f64(),
            match built.iter().filter(|b| b.is_some()).count() {
                0 => String::new(),
                n => format!(" ({n} failed; their errors follow)"),
            }
        );
    }
    Pick {
        mode,
        tiles,
        finalists,
        candidates,
    }
}

/// Times each tile; returns the trials.
fn trials(
    run: &mut Run,
    tiles: &[Variant],
    shape: &Shape,
    plan: &Plan,
    check: &Check,
    quiet: bool,
) -> Vec<Trial> {
    let mut out = Vec::new();
    for &variant in tiles {
        let trial = match bench_one(
            &mut run.engine,
            &mut run.sink,
            &variant,
            shape,
            plan,
            None,
            check,
        ) {
            Ok((row, correct)) => Trial {
                variant,
                median_us: row["median_us"].as_f64(),
                correct,
                row,
            },
            Err(e) => Trial {
                variant,
                row: json!({"variant": variant.name(), "error": e.to_string()}),
                median_us: None,
                correct: false,
            },
        };
        if !quiet {
            eprintln!(
                "  {:<28} {}",
                trial.variant.name(),
                match (trial.median_us, trial.correct) {
                    (Some(p), true) => format!("{p:9.2} µs"),
                    (Some(p), false) => format!("{p:9.2} µs  WRONG RESULT, not eligible"),
                    _ => format!("error: {}", trial.row["error"].as_str().unwrap_or("?")),
                }
            );
        }
        out.push(trial);
    }
    out
}

/// The cache entry for trial `best`, the tuned one.
fn winner(trials: &[Trial], best: usize, mode: &str) -> TunedEntry {
    TunedEntry {
        tile: trials[best].variant.tile_text(),
        p50_us: trials[best].median_us.unwrap_or(f64::NAN),
        candidates: trials.len(),
        tuned_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        mode: Some(mode.to_string()),
    }
}

fn key_for(engine: &Engine, path: Variant, shape: &Shape) -> String {
    cache_key(
        &engine.info.name,
        &engine.arch,
        &engine.source_hash(path.kernel),
        path,
        shape,
    )
}

/// The tuned variant for a path on `shape`: from the cache, else tuned now
/// (and cached). Err is a message for the user.
pub(super) fn resolve(
    run: &mut Run,
    path: Variant,
    shape: &Shape,
    plan: &Plan,
    check: &Check,
) -> Result<Variant, String> {
    let path = path_of(path);
    let m = path.manifest().ok_or("cudnn has no tiles to tune")?;
    let (mut cache, cache_path) = TuneCache::open()?;
    let key = key_for(&run.engine, path, shape);
    if let Some(hit) = cache.entries.get(&key) {
        let tile = m
            .parse_tile(&hit.tile)
            .map_err(|e| format!("tuning cache entry {key}: {e}"))?;
        let v = Variant { tile, ..path };
        eprintln!(
            "attnscope: {} on {shape}: tuned tile {} (cached)",
            v.name(),
            hit.tile
        );
        return Ok(v);
    }
    eprintln!(
        "attnscope: no tuned tile for {path} on {shape} yet; tuning now (the cost model's finalists; attnscope tune --all times every tile)"
    );
    let started = std::time::Instant::now();
    let pick = pick(run, path, shape, false, false);
    let trials = trials(run, &pick.tiles, shape, plan, check, false);
    let choice = choose(run, &trials, shape, plan.max_s, false);
    if !choice.line.is_empty() {
        eprintln!("attnscope: {}", choice.line);
    }
    let best = choice
        .best
        .ok_or_else(|| "no candidate tile was correct".to_string())?;
    eprintln!(
        "attnscope: {} on {shape}: tuned tile {} in {:.1} s",
        path.name(),
        trials[best].variant.tile_text(),
        started.elapsed().as_secs_f64()
    );
    cache.entries.insert(key, winner(&trials, best, pick.mode));
    if let Some(p) = &cache_path {
        cache.save(p)?;
    }
    Ok(trials[best].variant)
}

/// Whether `v`, named `text` on the command line (None: a command's own
/// default), takes the tuned tile: the bundled kernel's tuned path
/// (`default_path`, mma+async) named without a tile, on Hopper, where the
/// manifest's default tile is far from the best (perf-log). An explicit
/// `@TILE` pins the tile; other GPUs keep the manifest's default.
pub fn tunes_by_default(v: &Variant, text: Option<&str>, info: &GpuInfo) -> bool {
    info.has_wgmma()
        && text.is_some_and(crate::cli::names_no_tile)
        && v.kernel == crate::session::KernelId::BUNDLED
        && *v == default_path()
}

/// `v` at its tuned tile when `tunes_by_default` says so (from the cache, or
/// tuned now on the finalists), else `v`. Err is a message for the user.
pub(super) fn default_tile(
    run: &mut Run,
    v: Variant,
    text: Option<&str>,
    shape: &Shape,
    plan: &Plan,
    check: &Check,
) -> Result<Variant, String> {
    if !tunes_by_default(&v, text, &run.engine.info) {
        return Ok(v);
    }
    let plan = Plan {
        max_s: plan.max_s.min(0.5),
        ..*plan
    };
    resolve(run, v, shape, &plan, check).map_err(|e| {
        format!("{v} on Hopper runs its tuned tile, and tuning failed ({e}); name a tile with @ to skip tuning")
    })
}

pub fn run(args: TuneArgs) -> i32 {
    let shape = args.problem.shape;
    let path = args.variant.unwrap_or_else(default_path);
    if path.is_library() {
        return fail(
            exit::USAGE,
            format!("{path} has no tiles to tune: give a kernel path (e.g. --variant mma+async)"),
        );
    }
    if !path.default_tile() {
        return fail(
            exit::USAGE,
            "tune picks the tile: give the toggles only (e.g. --variant mma+async)",
        );
    }
    let (mut cache, cache_path) = match TuneCache::open() {
        Ok(c) => c,
        Err(e) => return fail(exit::USAGE, e),
    };
    if let Err(code) = super::runnable([&path], &shape) {
        return code;
    }
    let started = std::time::Instant::now();
    let mut run = match Run::start(Timer::Cupti, 0.0, args.record.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let max_s = args.max_seconds.unwrap_or(if args.all { 1.0 } else { 0.5 });
    let plan = Plan {
        max_s,
        ..Plan::default()
    };
    let check = Check::new(args.inputs, args.seed);
    let pick = pick(&mut run, path, &shape, args.all, args.json);
    if !args.json {
        eprintln!(
            "tuning {} on {shape}: {} of {} candidate tiles ({}), up to {max_s} s each; {}",
            path.name(),
            pick.tiles.len(),
            pick.candidates,
            if args.all {
                "--all"
            } else {
                "the cost model's finalists; --all times every one"
            },
            check.describe()
        );
    }
    let trials = trials(&mut run, &pick.tiles, &shape, &plan, &check, args.json);
    let choice = choose(&mut run, &trials, &shape, max_s, args.json);
    let best = choice.best;
    run.sink.drain();
    let key = key_for(&run.engine, path, &shape);
    if let Some(b) = best {
        cache
            .entries
            .insert(key.clone(), winner(&trials, b, pick.mode));
        if let Some(Err(e)) = cache_path.as_deref().map(|p| cache.save(p)) {
            eprintln!("attnscope: {e}");
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    if args.json {
        let rows: Vec<&serde_json::Value> = trials.iter().map(|t| &t.row).collect();
        let mut out = json!({
            "gpu": run.engine.info, "shape": shape, "results": rows,
            "best": best.map(|b| trials[b].variant.name()), "cache_key": key,
            "cache": cache_path, "ranked_by": "median_us", "race": choice.race,
            "wall_s": wall_s,
        });
        if let (Some(o), serde_json::Value::Object(p)) = (out.as_object_mut(), pick.json()) {
            o.extend(p);
        }
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        print_trials(&run.engine, &shape, &trials, best, cache_path.as_deref());
        if !choice.line.is_empty() {
            println!("{}", choice.line);
        }
        println!(
            "{} of {} candidates timed ({}) in {wall_s:.1} s",
            trials.len(),
            pick.candidates,
            pick.mode
        );
    }
    if best.is_some() {
        0
    } else {
        exit::CHECK_FAILED
    }
}

/// The trials fastest first (incorrect ones last), the checks, and which
/// tile won and where it is cached.
fn print_trials(
    engine: &Engine,
    shape: &Shape,
    trials: &[Trial],
    best: Option<usize>,
    cache_path: Option<&Path>,
) {
    let mut order: Vec<&Trial> = trials.iter().collect();
    order.sort_by(|a, b| {
        let k = |t: &Trial| {
            if t.correct {
                t.median_us.unwrap_or(f64::INFINITY)
            } else {
                f64::INFINITY
            }
        };
        k(a).partial_cmp(&k(b)).unwrap_or(std::cmp::Ordering::Equal)
    });
    println!("{} ({}), {shape}", engine.info.name, engine.arch);
    println!(
        "{:<28} {:>9} {:>8} {:>5} {:>7} {:>7}",
        "variant", "p50 µs", "TFLOP/s", "regs", "smem", "correct"
    );
    for t in order {
        let r = &t.row;
        match t.median_us {
            Some(p) => println!(
                "{:<28} {:>9.2} {:>8.2} {:>5} {:>6}K {:>7}{}",
                t.variant.name(),
                p,
                r["tflops"].as_f64().unwrap_or(f64::NAN),
                r["registers"],
                r["smem_bytes"].as_u64().unwrap_or(0) / 1024,
                if t.correct {
                    "PASS"
                } else {
                    "FAIL, never picked"
                },
                if best.is_some_and(|b| std::ptr::eq(t, &trials[b])) {
                    "  ← tuned"
                } else {
                    ""
                }
            ),
            None => println!(
                "{:<28} ERROR {}",
                t.variant.name(),
                r["error"].as_str().unwrap_or("?")
            ),
        }
    }
    let rows: Vec<serde_json::Value> = trials.iter().map(|t| t.row.clone()).collect();
    super::bench::print_checks(&rows);
    match (best, cache_path) {
        (Some(b), Some(p)) => println!(
            "tuned: {} (cached in {})",
            trials[b].variant.name(),
            p.display()
        ),
        (Some(b), None) => println!(
            "tuned: {} (no cache folder: set HOME or XDG_CACHE_HOME)",
            trials[b].variant.name()
        ),
        (None, _) => println!("no candidate was correct; nothing cached"),
    }
}

#[cfg(test)]
mod tests;
