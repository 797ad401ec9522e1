//! The dashboard's data: a pure fold of the event stream. `apply` is the only
//! place it changes; rendering and summaries read it.

use std::collections::{BTreeMap, VecDeque};

use crate::metrics::gates::{self, GateResult, GateSet};
use crate::metrics::roofline::{Light, Roofs, place, roof_clock};
use crate::session::Regime;
use crate::session::event::*;

mod builds;
mod edits;
mod fold;
mod race_clock;
mod run;

pub use builds::same_build;
pub use edits::EditState;
pub use race_clock::{ClockTally, RaceClock};
pub use run::{BATCH_KEEP, Conditions, RunState, SPREAD_MIN_SAMPLES};

/// Telemetry kept for sparklines: 60 s at 10 Hz.
pub const TELEMETRY_KEEP: usize = 600;
/// Event-log lines kept.
pub const LOG_KEEP: usize = 400;

/// What one variant at one shape has shown so far.
#[derive(Clone, Debug, Default)]
pub struct VariantState {
    /// The current run of each regime (None: a session recorded before
    /// regimes). A number without its regime is not a number.
    pub runs: BTreeMap<Option<Regime>, RunState>,
    /// Runs a change of conditions ended (another L2 mode, source or
    /// inputs), oldest first, each with its regime: kept, never mixed in.
    pub older: Vec<(Option<Regime>, RunState)>,
    pub l2_cold_samples: u64,
    /// Samples from batches flagged as throttled or below the expected clock.
    pub throttled_samples: u64,
    /// Samples from batches that carried clock information at all.
    pub clock_tagged_samples: u64,
    pub sm_clock_seen: Option<(u32, u32)>,
    pub build: Option<BuildReport>,
    pub build_failure: Option<BuildFailure>,
    pub correctness: Option<CorrectnessReport>,
    pub counters: Option<CounterReport>,
    /// Why the last counter collection failed, until one succeeds.
    pub counters_error: Option<String>,
    /// The newest fault while it was selected at this shape (a launch the
    /// GPU refused, a check that could not run), until it has samples.
    pub fault: Option<String>,
}

impl VariantState {
    pub fn run(&self, regime: Option<Regime>) -> Option<&RunState> {
        self.runs.get(&regime).filter(|r| r.latency.count() > 0)
    }

    /// The regime to show when none is asked for: `prefer` if it has
    /// samples, else the one with the most.
    pub fn shown(&self, prefer: Option<Regime>) -> Option<(Option<Regime>, &RunState)> {
        if let Some(r) = self.run(prefer) {
            return Some((prefer, r));
        }
        self.runs
            .iter()
            .filter(|(_, r)| r.latency.count() > 0)
            .max_by_key(|(_, r)| r.latency.count())
            .map(|(k, r)| (*k, r))
    }

    /// Every sample of every regime, for totals.
    pub fn samples(&self) -> u64 {
        self.runs.values().map(|r| r.latency.count()).sum()
    }

    /// The median of the current run in `regime`: the measurement's
    /// (grouped, with its interval) when there is one, else the
    /// histogram's p50.
    pub fn median_ns(&self, regime: Option<Regime>) -> Option<f64> {
        self.run(regime)?.median_ns()
    }

    /// The newest run in `regime` whose conditions compare with `like`.
    pub fn run_like(&self, regime: Option<Regime>, like: &Conditions) -> Option<&RunState> {
        let current = self.run(regime).filter(|r| r.conditions.comparable(like));
        current.or_else(|| {
            self.older
                .iter()
                .rev()
                .find(|(r, run)| {
                    *r == regime && run.latency.count() > 0 && run.conditions.comparable(like)
                })
                .map(|(_, run)| run)
        })
    }

    /// Adds a batch to the current run of its regime, first ending that
    /// run if it was measured under other conditions.
    fn add_batch(&mut self, regime: Option<Regime>, conditions: Conditions, samples: &[u64]) {
        let run = self.runs.entry(regime).or_default();
        if run.latency.count() > 0 && run.conditions != conditions {
            let ended = std::mem::take(run);
            self.older.push((regime, ended));
        }
        let run = self.runs.entry(regime).or_default();
        run.conditions = conditions;
        run.add_batch(samples);
    }

    /// The 95% interval of `median_ns(regime)`, ns, when that median is a
    /// measurement's with one.
    pub fn median_ci_ns(&self, regime: Option<Regime>) -> Option<(f64, f64)> {
        self.run(regime)?.interval_ns().map(|(_, lo, hi)| (lo, hi))
    }
}

/// Where a speedup comes from: one definition for the screen, the
/// summaries, the gates and the charts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpeedupSource {
    /// The A/B race of the pair (interleaved or isolated), with its interval.
    Race(Option<Regime>),
    /// Each variant's own median in one regime (no race of the pair).
    Solo(Option<Regime>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Speedup {
    /// time(base) ÷ time(variant): above 1, the variant is faster.
    pub value: f64,
    /// Its 95% interval: the race's; for solo medians, the ratio of their
    /// intervals' far ends (wider than 95%: the two are not paired).
    pub ci: Option<(f64, f64)>,
    pub source: SpeedupSource,
}

impl Speedup {
    /// "race, interleaved" or "solo medians, back-to-back".
    pub fn source_label(&self) -> String {
        match self.source {
            SpeedupSource::Race(r) => format!("race, {}", regime_name(r)),
            SpeedupSource::Solo(r) => format!("solo medians, {}", regime_name(r)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub variant: Variant,
    pub shape: Shape,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LogLine {
    pub t_us: u64,
    pub level: Level,
    pub text: String,
}

#[derive(Clone, Debug, Default)]
pub struct SessionState {
    pub header: Option<SessionHeader>,
    pub current: Option<Key>,
    pub variants: BTreeMap<Key, VariantState>,
    pub telemetry: VecDeque<TelemetrySample>,
    pub ab: Option<AbReport>,
    /// When the newest selection and the newest race result came: a race is
    /// what the screen shows until a variant is selected after it.
    pub selected_at_us: u64,
    pub ab_at_us: u64,
    pub counter_progress: Option<CounterProgress>,
    pub log: VecDeque<LogLine>,
    pub last_t_us: u64,
    pub events: u64,
    pub errors: u64,
    pub bookmarks: Vec<(u64, String)>,
    /// Why there is no telemetry, when NVML said so.
    pub telemetry_error: Option<String>,
    /// The regime solo sampling is in now (from the newest solo batch).
    pub regime: Option<Regime>,
    /// The distribution of the newest correctness check.
    pub inputs: Option<crate::session::Inputs>,
    /// The SM clock the in-kernel probe read after the newest probed batch, MHz.
    pub probe_mhz: Option<u32>,
    /// Each watched kernel's edits, by kernel label ("" the primary one).
    pub edits: BTreeMap<String, Vec<EditState>>,
    /// The newest edit verdict, or race of an earlier edit, in words.
    pub edit_line: Option<(EditOutcome, String)>,
    /// The newest batch's busy fraction (back to back, CUPTI), when known.
    pub busy: Option<f64>,
    /// The clock tags of the newest race's own rounds (`race_clock.rs`).
    pub race_clock: Option<RaceClock>,
    /// Rounds that may belong to a race not yet reported, by variant, shape
    /// and regime.
    race_open: BTreeMap<(Variant, Shape, Option<Regime>), ClockTally>,
    /// The shape of each source's newest selection ("" for a single GPU):
    /// what a build recorded without its shape was made for.
    selected_shape: BTreeMap<String, Shape>,
    /// Each check's report by what it checked (`builds.rs`), so an earlier
    /// edit's build, kept under another name, keeps its check.
    checked: BTreeMap<builds::CheckKey, CorrectnessReport>,
}

impl SessionState {
    /// Lines are kept in time order, whatever the file's: a session merged
    /// before merges sorted by time holds one GPU's events, then the
    /// other's. A tie keeps the file's order.
    fn log(&mut self, t_us: u64, level: Level, text: String) {
        if self.log.len() == LOG_KEEP {
            // Older than every line kept: not among the newest.
            if self.log.front().is_some_and(|l| l.t_us > t_us) {
                return;
            }
            self.log.pop_front();
        }
        // Almost always the end: a search from there.
        let at = self.log.len() - self.log.iter().rev().take_while(|l| l.t_us > t_us).count();
        self.log.insert(at, LogLine { t_us, level, text });
    }

    /// The variant's states at every shape (a counter failure is the
    /// profiler's, not one shape's); one at the current shape when it has none.
    fn states_of(&mut self, variant: Variant) -> impl Iterator<Item = &mut VariantState> {
        if !self.variants.keys().any(|k| k.variant == variant) {
            let shape = self.current.map_or(Shape::MISSION, |k| k.shape);
            self.variants.entry(Key { variant, shape }).or_default();
        }
        self.variants
            .iter_mut()
            .filter(move |(k, _)| k.variant == variant)
            .map(|(_, s)| s)
    }

    pub fn current_state(&self) -> Option<(&Key, &VariantState)> {
        let key = self.current.as_ref()?;
        Some((key, self.variants.get(key)?))
    }

    /// Values the gates read: counters plus attnscope's own.
    pub fn gate_values(&self, key: &Key) -> BTreeMap<String, f64> {
        let Some(s) = self.variants.get(key) else {
            return BTreeMap::new();
        };
        let mut values = s
            .counters
            .as_ref()
            .map(|c| c.values.clone())
            .unwrap_or_default();
        // cuDNN's kernel has no PTXAS report: its resources stay unknown.
        if let Some(b) = s.build.as_ref().filter(|_| !key.variant.is_library()) {
            values.insert("attnscope:registers".into(), b.registers as f64);
            values.insert(
                "attnscope:smem_bytes".into(),
                f64::from(b.smem_static_bytes) + f64::from(b.smem_dynamic_bytes),
            );
            values.insert(
                "attnscope:spill_bytes".into(),
                f64::from(b.spill_store_bytes) + f64::from(b.spill_load_bytes),
            );
        }
        if let Some(c) = &s.correctness {
            values.insert("attnscope:correct".into(), if c.pass { 1.0 } else { 0.0 });
        }
        if let Some(sp) = self.speedup_vs_scalar(key) {
            values.insert("attnscope:speedup_vs_scalar".into(), sp.value);
        }
        if let Some(sp) = self.speedup_vs_cudnn(key) {
            values.insert("attnscope:speedup_vs_cudnn".into(), sp.value);
        }
        if let Some((median, _)) = self.shown_median(key) {
            values.insert("attnscope:median_us".into(), median / 1e3);
            if median > 0.0 {
                let tflops = key.shape.flops() / (median * 1e-9) / 1e12;
                values.insert("attnscope:tflops".into(), tflops);
            }
        }
        if let Some(l) = self.speed_of_light(key) {
            let pcts = [
                ("attnscope:peak_pct", l.peak_pct),
                ("attnscope:bandwidth_pct", l.bandwidth_pct),
                ("attnscope:roof_pct", l.roof_pct),
            ];
            for (name, v) in pcts {
                if let Some(v) = v {
                    values.insert(name.into(), v);
                }
            }
        }
        values
    }

    /// `gate_values` with the intervals that come with them (the median's,
    /// the speedups'), less any speedup from a race still running: no gate
    /// reads an unfinished race, and the third map says why.
    #[allow(clippy::type_complexity)]
    fn gate_inputs(
        &self,
        key: &Key,
    ) -> (
        BTreeMap<String, f64>,
        BTreeMap<String, (f64, f64)>,
        BTreeMap<String, String>,
    ) {
        let mut values = self.gate_values(key);
        let mut intervals = BTreeMap::new();
        let mut waiting = BTreeMap::new();
        let speedups = [
            ("attnscope:speedup_vs_scalar", self.speedup_vs_scalar(key)),
            ("attnscope:speedup_vs_cudnn", self.speedup_vs_cudnn(key)),
        ];
        for (name, sp) in speedups {
            let Some(sp) = sp else { continue };
            let running = self.ab.as_ref().filter(|ab| !ab.done);
            match (sp.source, running) {
                (SpeedupSource::Race(_), Some(ab)) => {
                    values.remove(name);
                    waiting.insert(
                        name.to_string(),
                        format!(
                            "not collected: waits for the race of {} against {} to finish",
                            ab.a, ab.b
                        ),
                    );
                }
                _ => {
                    if let Some(ci) = sp.ci {
                        intervals.insert(name.to_string(), ci);
                    }
                }
            }
        }
        if let Some(ci) = self.shown_median(key).and_then(|(_, ci)| ci) {
            intervals.insert("attnscope:median_us".into(), (ci.0 / 1e3, ci.1 / 1e3));
        }
        (values, intervals, waiting)
    }

    /// The median a gate reads for `key`, ns, with its interval: in the
    /// session's regime now, else back to back, else isolated, else one
    /// recorded before regimes (the order solo speedups use).
    fn shown_median(&self, key: &Key) -> Option<(f64, Option<(f64, f64)>)> {
        let v = self.variants.get(key)?;
        [
            self.regime,
            Some(Regime::BackToBack),
            Some(Regime::Isolated),
            None,
        ]
        .into_iter()
        .find_map(|r| Some((v.median_ns(r)?, v.median_ci_ns(r))))
    }

    /// The one speedup of `key` over `base` at the same shape: the ratio of
    /// medians from their race when the last race was this pair; otherwise
    /// each one's solo median in the same regime (the session's regime now,
    /// else back-to-back, else isolated, else one recorded before regimes).
    pub fn speedup(&self, base: &Key, key: &Key) -> Option<Speedup> {
        // No speedup over, or of, a kernel that failed its check.
        let wrong = |k: &Key| {
            self.variants
                .get(k)
                .and_then(|v| v.correctness.as_ref())
                .is_some_and(|c| !c.pass)
        };
        if wrong(base) || wrong(key) {
            return None;
        }
        if let Some(ab) = self
            .ab
            .as_ref()
            .filter(|ab| ab.shape == key.shape && ab.speedup.is_finite() && base.shape == key.shape)
        {
            let ci = (ab.ci_low.is_finite() && ab.ci_high.is_finite())
                .then_some((ab.ci_low, ab.ci_high));
            if (ab.a, ab.b) == (base.variant, key.variant) {
                return Some(Speedup {
                    value: ab.speedup,
                    ci,
                    source: SpeedupSource::Race(ab.regime),
                });
            }
            if (ab.b, ab.a) == (base.variant, key.variant) {
                return Some(Speedup {
                    value: 1.0 / ab.speedup,
                    ci: ci.map(|(lo, hi)| (1.0 / hi, 1.0 / lo)),
                    source: SpeedupSource::Race(ab.regime),
                });
            }
        }
        let (b, k) = (self.variants.get(base)?, self.variants.get(key)?);
        let mut order = vec![
            self.regime,
            Some(Regime::BackToBack),
            Some(Regime::Isolated),
            None,
        ];
        order.dedup();
        order.into_iter().find_map(|r| {
            let mine = k.run(r)?;
            let theirs = b.run_like(r, &mine.conditions)?;
            let value = theirs.median_ns()? / mine.median_ns()?;
            // Two runs' medians: each interval is for a rerun, so the ratio's
            // is across runs (`across_runs::cross_run_ratio`).
            let ci = theirs
                .interval_ns()
                .zip(mine.interval_ns())
                .map(|(t, m)| crate::metrics::across_runs::cross_run_ratio(t, m))
                .map(|(_, lo, hi)| (lo, hi));
            Some(Speedup {
                value,
                ci,
                source: SpeedupSource::Solo(r),
            })
        })
    }

    /// Against its kernel's base variant (the scalar kernel, for the bundled
    /// one) at the same shape, the same tile where the base has it; cuDNN
    /// against the primary kernel's base.
    pub fn speedup_vs_scalar(&self, key: &Key) -> Option<Speedup> {
        let base = if key.variant.is_library() {
            Variant::base()
        } else {
            Variant::base_of(key.variant.kernel)
        };
        let same_tile = Key {
            variant: Variant {
                tile: key.variant.tile,
                ..base
            },
            shape: key.shape,
        };
        let base = if self.variants.contains_key(&same_tile) {
            same_tile
        } else {
            Key {
                variant: base,
                shape: key.shape,
            }
        };
        self.speedup(&base, key)
    }

    /// Against cuDNN at the same shape (above 1: faster than cuDNN).
    pub fn speedup_vs_cudnn(&self, key: &Key) -> Option<Speedup> {
        if key.variant.is_cudnn() {
            return None;
        }
        let base = Key {
            variant: key.variant.cudnn_beside(),
            shape: key.shape,
        };
        self.speedup(&base, key)
    }

    /// The gates for `key`; a counter gate with no value says why: not yet
    /// collected (press g), CUPTI refused the metric, or collection failed.
    pub fn gates(&self, set: &GateSet, key: &Key) -> Vec<GateResult> {
        let (values, intervals, waiting) = self.gate_inputs(key);
        let gpu = self.gpu_of(key.variant);
        let mut results =
            gates::evaluate_with_intervals(set, &key.variant, &values, &intervals, gpu);
        let s = self.variants.get(key);
        for (r, spec) in results.iter_mut().zip(&set.gates) {
            let gates::Status::NotApplicable(why) = &mut r.status else {
                continue;
            };
            if let Some(w) = spec.value.iter().find_map(|v| waiting.get(v)) {
                *why = w.clone();
                continue;
            }
            if key.variant.is_library()
                && spec.value.iter().any(|v| {
                    matches!(
                        v.as_str(),
                        "attnscope:registers" | "attnscope:smem_bytes" | "attnscope:spill_bytes"
                    )
                })
            {
                *why = if key.variant.is_cudnn() {
                    "not applicable: cuDNN's kernel has no PTXAS report".into()
                } else {
                    format!("not applicable: {} has no PTXAS report", key.variant)
                };
                continue;
            }
            let Some(counter) = why.strip_prefix("not collected: ") else {
                continue;
            };
            if counter.starts_with("attnscope:")
                || !spec.value.iter().chain(&spec.per).any(|n| n == counter)
            {
                continue;
            }
            let refused = s
                .and_then(|s| s.counters.as_ref())
                .and_then(|c| c.refused.get(counter));
            *why = match (refused, s.and_then(|s| s.counters_error.as_ref())) {
                (Some(reason), _) => format!("refused: {counter}: {reason}"),
                (None, Some(err)) => format!("counters failed: {err}"),
                (None, None) if s.is_some_and(|s| s.counters.is_some()) => {
                    format!("not collected: {counter} was not in the metric list")
                }
                (None, None) => format!("not collected: {counter} (press g to collect counters)"),
            };
        }
        results
    }

    /// Why `key` has no samples, as the session records it or its header
    /// shows: a fault while it was selected, a failed build, or a tile over
    /// its GPU's shared memory or outside its kernel's head dimensions (a
    /// sweep skips those; sessions from before sweeps recorded why say so
    /// nowhere else). None when it has samples, or nothing says why.
    pub fn why_untimed(&self, key: &Key) -> Option<String> {
        let v = self.variants.get(key)?;
        if v.samples() > 0 {
            return None;
        }
        if let Some(fault) = &v.fault {
            return Some(format!("failed: {fault}"));
        }
        if let Some(f) = &v.build_failure {
            let first = first_error_line(&f.log).unwrap_or("see the log");
            return Some(format!("build failed: {first}"));
        }
        let d = key.shape.d;
        if let Err(why) = key.variant.runs(&key.shape) {
            return Some(format!("not built for {}: {why}", key.shape));
        }
        let gpu = self.gpu_of(key.variant)?;
        let need = gpu.smem_over(&key.variant, d)?;
        Some(format!(
            "did not fit: needs {} KiB of shared memory per block at D={d}, the {} allows {} KiB",
            need.div_ceil(1024),
            gpu.name,
            gpu.max_smem_per_block / 1024
        ))
    }

    /// The GPU `variant` ran on: in a merged session its source's, else the
    /// session's.
    fn gpu_of(&self, variant: Variant) -> Option<&GpuInfo> {
        let h = self.header.as_ref()?;
        let source = variant.source();
        match h.sources.iter().find(|s| s.label == source) {
            Some(s) => s.gpu.as_ref(),
            None => h.gpu.as_ref(),
        }
    }

    /// The bandwidths measured where `variant` ran.
    pub fn copy_bandwidth_of(&self, variant: Variant) -> Option<&CopyBandwidth> {
        let h = self.header.as_ref()?;
        let source = variant.source();
        match h.sources.iter().find(|s| s.label == source) {
            Some(s) => s.copy_bandwidth.as_ref(),
            None => h.copy_bandwidth.as_ref(),
        }
    }

    /// The roofs over `key`'s variant: its GPU's tensor peak at the highest
    /// SM clock its batches saw (else the last probe's, else the clock the
    /// session started at), never above the device's rated clock (else
    /// NVML's maximum), and the memory roof measured there.
    pub fn roofs(&self, key: &Key) -> Option<Roofs> {
        let gpu = self.gpu_of(key.variant)?;
        let seen = self.variants.get(key).and_then(|s| s.sm_clock_seen);
        let at_start = self
            .header
            .as_ref()
            .and_then(|h| h.clocks_at_start.as_ref());
        let clock = roof_clock(
            seen.map(|(_, hi)| hi),
            self.probe_mhz.or(at_start.map(|c| c.sm_mhz)),
            gpu.max_sm_mhz.or(at_start.map(|c| c.sm_max_mhz)),
        );
        Some(Roofs::of(
            gpu.cc(),
            gpu.sm_count,
            clock,
            self.copy_bandwidth_of(key.variant).map(CopyBandwidth::roof),
        ))
    }

    /// Where `key`'s shown median puts it under the roofs: FLOPs of the
    /// pairs it computes, bytes of Q, K, V and O moved once.
    pub fn speed_of_light(&self, key: &Key) -> Option<Light> {
        let (median_ns, _) = self.shown_median(key)?;
        let shape = key.shape;
        place(
            shape.flops(),
            shape.io_bytes(),
            median_ns * 1e-9,
            &self.roofs(key)?,
        )
    }

    /// The telemetry reasons of the newest sample that mean real throttling.
    pub fn throttle_now(&self) -> Vec<String> {
        self.telemetry
            .back()
            .map(|t| active_throttles(&t.throttle_reasons))
            .unwrap_or_default()
    }
}

/// Clock-event reasons that slow a kernel (idle and application-clock settings do not).
pub fn active_throttles(reasons: &[String]) -> Vec<String> {
    reasons
        .iter()
        .filter(|r| !matches!(r.as_str(), "idle" | "applications_clocks_setting" | "none"))
        .cloned()
        .collect()
}

/// The first line of a compiler log that reports an error.
pub fn first_error_line(log: &str) -> Option<&str> {
    log.lines().find(|l| l.contains("error")).map(str::trim)
}
