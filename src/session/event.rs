//! The one event stream: everything the live worker, the recorder and replay
//! exchange. Owned data only, serde-versioned, stamped with time since start.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::variant::{Shape, Toggles, Variant};
pub use bandwidth::CopyBandwidth;
pub use edit::{EditOutcome, EditRecord, EditVerdict};
pub use python::PythonBuild;
pub use race::{AbReport, Decision};
pub use source::SourceInfo;

/// Bumped when a change would make an old reader misread a new file.
/// Additive changes (new optional fields, new event kinds) keep the version:
/// readers ignore unknown fields and skip unknown kinds. A field added after
/// schema 2 carries `#[serde(default)]` (older files lack it); every other
/// field is required, so a damaged line is refused, never read as zeros.
/// 3: a shape may carry a dtype, KV heads and a key length (kernel ABI 2);
/// a reader of 2 would take a bf16 grouped-query shape for the plain one,
/// so it is told the file is newer. Shapes of older files read as the plain
/// case (`Shape`'s wire form).
pub const SCHEMA_VERSION: u32 = 3;
/// The oldest version this reader converts (1: variants as named fields
/// of the bundled kernel).
pub const OLDEST_SCHEMA: u32 = 1;

/// One line of a session file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stamped {
    /// Microseconds since the session started.
    pub t_us: u64,
    pub event: Event,
}

impl Stamped {
    /// `event`, stamped with the time elapsed since `started`.
    pub fn since(started: std::time::Instant, event: Event) -> Stamped {
        Stamped {
            t_us: started.elapsed().as_micros() as u64,
            event,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Header(SessionHeader),
    VariantSelected(VariantSelected),
    BuildFinished(BuildReport),
    BuildFailed(BuildFailure),
    Latency(LatencyBatch),
    MeasurementDone(MeasurementDone),
    Correctness(CorrectnessReport),
    CounterProgress(CounterProgress),
    Counters(CounterReport),
    Telemetry(TelemetrySample),
    AbResult(AbReport),
    Error(ErrorReport),
    Bookmark(Bookmark),
    /// A kernel folder's manifest changed mid-session: variants of that
    /// label mean this manifest's toggles from here on.
    KernelLoaded(super::manifest::registry::KernelRecord),
    /// A watched kernel folder's source changed (added after schema 2).
    Edit(EditRecord),
    /// What an edit did: its race against the build before, or why none
    /// ran (added after schema 2).
    EditVerdict(EditVerdict),
    /// A kind written by a newer tool: kept in the stream, shown as nothing.
    #[serde(other)]
    Unknown,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    pub tool: String,
    pub tool_version: String,
    pub schema_version: u32,
    pub host: String,
    pub command_line: Vec<String>,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    pub gpu: Option<GpuInfo>,
    /// The CUDA version the driver supports (cuDriverGetVersion), e.g. 13.0.
    pub driver_version: Option<String>,
    /// The NVIDIA driver release from NVML, e.g. 580.159.04.
    pub nvidia_driver: Option<String>,
    pub cuda_version: Option<String>,
    pub kernel_source_hash: Option<String>,
    /// The kernels the session knows, each with its manifest, so a replay
    /// names their toggles as recorded (empty before kernel manifests:
    /// the bundled kernel). Written only when not empty, so it may be absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<super::manifest::registry::KernelRecord>,
    pub clocks_at_start: Option<ClockInfo>,
    pub power_limit_w: Option<f64>,
    /// The per-launch timer (`cupti` or `cuda_events`) and its step in ns,
    /// measured at start; None in sessions recorded before it was.
    pub timer: Option<String>,
    pub timer_resolution_ns: Option<f64>,
    /// Host ns per GPU globaltimer ns over a 10 ms clock probe: the clock
    /// probe's calibration (its readings are divided by it).
    pub globaltimer_vs_host: Option<f64>,
    /// A merged session's sources (`attnscope merge`): each GPU or host and
    /// the label its variants carry; empty for a session of one GPU. Added
    /// after schema 2 and written only when not empty: may be absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceInfo>,
    /// This GPU model's run-to-run spreads as measured (`bench --runs`,
    /// `ab --runs`) when the session started; absent when none were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_spread: Option<super::run_spread::GpuSpread>,
    /// The DRAM bandwidth a copy kernel reached when the session started:
    /// the speed-of-light panel's memory roof. Added after schema 3 and
    /// written only when measured: may be absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_bandwidth: Option<CopyBandwidth>,
    /// Set by a replaying worker (`attnscope worker --replay FILE`): the
    /// recording its events come from, so a dashboard shows a replay as one
    /// and never as live. Written only when set: may be absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed_from: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    pub name: String,
    pub cc_major: u32,
    pub cc_minor: u32,
    pub sm_count: u32,
    pub l2_bytes: u64,
    pub memory_bytes: u64,
    /// Largest dynamic shared memory a block may opt into, bytes (0: not recorded).
    pub max_smem_per_block: u32,
    /// GPU-xxxxxxxx-…: which of a host's GPUs this was. Added after
    /// schema 2 (older sessions: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The PCI bus id as CUDA writes it, "0000:65:00.0". Added after
    /// schema 2 (older sessions: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    /// The SM clock CUDA rates the device at, MHz: what caps the tensor
    /// roof's clock. Added after schema 3 (older sessions: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sm_mhz: Option<u32>,
}

impl GpuInfo {
    /// Hopper (sm_90) runs the wgmma tiles; nothing else does (sm_90a code).
    pub fn has_wgmma(&self) -> bool {
        (self.cc_major, self.cc_minor) == (9, 0)
    }

    /// The compute capability as a manifest's arch needs count it (90 for sm_90).
    pub fn cc(&self) -> u32 {
        self.cc_major
            .saturating_mul(10)
            .saturating_add(self.cc_minor)
    }

    /// Why `v` cannot launch here at head dimension `d` (its shared memory
    /// per block is over this GPU's limit), in one line; None if it can or
    /// the limit was not recorded.
    pub fn smem_refusal(&self, v: &Variant, d: u32) -> Option<String> {
        self.smem_over(v, d).map(|need| {
            format!(
                "{} at D={d} needs {} KiB of shared memory per block; {} allows {} KiB",
                v.name(),
                need.div_ceil(1024),
                self.name,
                self.max_smem_per_block / 1024
            )
        })
    }

    /// The shared memory per block `v` needs at head dimension `d`, in
    /// bytes, when that is over this GPU's limit; None if it fits or the
    /// limit was not recorded.
    pub fn smem_over(&self, v: &Variant, d: u32) -> Option<u32> {
        let need = v.smem_bytes(d);
        (self.max_smem_per_block > 0 && need > self.max_smem_per_block).then_some(need)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockInfo {
    pub sm_mhz: u32,
    pub mem_mhz: u32,
    pub sm_max_mhz: u32,
    pub mem_max_mhz: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VariantSelected {
    pub variant: Variant,
    pub shape: Shape,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildReport {
    pub variant: Variant,
    pub arch: String,
    pub registers: u32,
    pub smem_static_bytes: u32,
    pub smem_dynamic_bytes: u32,
    pub stack_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    #[serde(deserialize_with = "nan_null::de")]
    pub compile_ms: f64,
    /// True when the cubin came from the build cache.
    pub cached: bool,
    /// Instruction families found in the PTX: `wmma`, `mma`, `cp.async`, `ldmatrix`.
    pub families: Vec<String>,
    pub ptxas_log: String,
    /// Hash of the kernel source it was built from (changes with `--kernels` edits).
    pub source_hash: String,
    /// A Python variant's file and versions (added after schema 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<PythonBuild>,
    /// The shape it was built for: its head dim, dtype and K/V layout are
    /// what the compile saw (added after schema 3; absent before, when the
    /// fold takes the newest selection's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildFailure {
    pub variant: Variant,
    pub arch: String,
    pub log: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum L2Mode {
    /// Back-to-back launches on the same buffers.
    #[default]
    Hot,
    /// L2 flushed between launches.
    Cold,
}

/// How launches were placed when they were timed. The same kernel differs by
/// up to 20% between regimes, so every latency carries its own.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    /// The same kernel queued back to back (bench, live sampling).
    #[default]
    BackToBack,
    /// Alternating with another kernel, as in an A/B race.
    Interleaved,
    /// An idle gap and an emptied L2 before each launch, as Nsight Compute
    /// times a kernel.
    Isolated,
}

impl Regime {
    pub const ALL: [Regime; 3] = [Regime::BackToBack, Regime::Interleaved, Regime::Isolated];

    /// `back-to-back`, `interleaved`, `isolated`: the CLI's and the screen's word.
    pub fn name(self) -> &'static str {
        match self {
            Regime::BackToBack => "back-to-back",
            Regime::Interleaved => "interleaved",
            Regime::Isolated => "isolated",
        }
    }

    /// One line for help texts and the docs.
    pub fn describe(self) -> &'static str {
        match self {
            Regime::BackToBack => {
                "the same kernel queued back to back, L2 as the last launch left it"
            }
            Regime::Interleaved => "alternating with the other variant of a race (ABBA order)",
            Regime::Isolated => {
                "an idle gap and an emptied L2 before every launch, as Nsight Compute times"
            }
        }
    }
}

impl std::str::FromStr for Regime {
    type Err = String;
    fn from_str(text: &str) -> Result<Regime, String> {
        Regime::ALL
            .into_iter()
            .find(|r| r.name() == text || format!("{r:?}").eq_ignore_ascii_case(text))
            .ok_or_else(|| {
                format!("regime '{text}' is not one of back-to-back, interleaved, isolated")
            })
    }
}

/// What a regime name says when a session predates regimes.
pub fn regime_name(r: Option<Regime>) -> &'static str {
    r.map_or("regime not recorded", Regime::name)
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyBatch {
    pub variant: Variant,
    pub shape: Shape,
    pub l2: L2Mode,
    /// How the launches were placed; None in sessions recorded before regimes.
    pub regime: Option<Regime>,
    /// Per-launch GPU durations.
    #[serde(deserialize_with = "samples::deserialize")]
    pub samples_ns: Vec<u64>,
    /// SM clock measured in-kernel around the batch, when known. Back to
    /// back, only every 8th batch (and the first) is probed; the others
    /// carry None here and in `throttled`, so they count as untagged.
    pub sm_clock_mhz: Option<u32>,
    /// Whether the batch ran throttled or below the expected clock, when known.
    pub throttled: Option<bool>,
    /// The timer that produced the samples: `cupti` or `events`.
    pub timer: String,
    /// Idle gap before each launch (isolated regime), microseconds; written
    /// only for that regime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_us: Option<u32>,
    /// The distribution the timed launches read (seed 1). Added after
    /// schema 2: absent in older sessions (not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<super::inputs::Inputs>,
    /// Share of the batch's GPU time spent in its kernels: their spans'
    /// union over the time from the previous batch's last kernel end (else
    /// this batch's first start) to this batch's last end. Back to back
    /// only, CUPTI timer only; added after schema 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<f64>,
    /// Which placement (copy of the inputs and module of the kernel) the
    /// batch ran on, of the run's rotation (`gpu/engine/placement.rs`).
    /// Added after schema 2: absent in older sessions and where a run used
    /// one placement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MeasurementDone {
    pub variant: Variant,
    pub shape: Shape,
    pub samples: u64,
    #[serde(deserialize_with = "nan_null::de")]
    pub median_ns: f64,
    /// Relative noise of the median (half-width of its 95% interval / median).
    #[serde(deserialize_with = "nan_null::de")]
    pub rel_noise: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub wall_s: f64,
    /// Why sampling stopped: `converged` or `time_limit`.
    pub stop_reason: String,
    /// Host-side cost of one launch, microseconds.
    pub launch_overhead_us: Option<f64>,
    /// The regime the samples were taken in (None: recorded before regimes).
    pub regime: Option<Regime>,
    /// The median's 95% interval from a block bootstrap over batches, ns.
    pub ci_low_ns: Option<f64>,
    pub ci_high_ns: Option<f64>,
    /// Batches the interval resampled.
    pub batches: u64,
    /// The timer's step, ns; no interval is narrower than one step.
    pub resolution_ns: Option<f64>,
    /// The interval is the timer's step, the data being steadier than that.
    pub limited_by_resolution: bool,
    /// Robust spread inside a batch and between batch medians, over the median.
    pub within_batch_rel: Option<f64>,
    pub between_batch_rel: Option<f64>,
    /// Seconds of untimed load before sampling (`bench --warm-seconds`).
    /// Added after schema 2, written only when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_s: Option<f64>,
    /// What the interval covers beyond this run's batches (added after schema 2): with
    /// it, `ci_low_ns`/`ci_high_ns` say where a rerun's median lands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reruns: Option<Reruns>,
    /// Median over the run's batches of their busy fraction
    /// (`LatencyBatch::busy`); added after schema 2, written only when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_fraction: Option<f64>,
    /// When the run could not support an interval of at most ±5% for a
    /// rerun: about how many more seconds it would need for its target
    /// (`ci_low_ns`/`ci_high_ns` are then None). Added after schema 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_more_s: Option<f64>,
    /// Placements (copies of the inputs, modules of the kernel) the run
    /// rotated through. Added after schema 2; absent: one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placements: Option<u32>,
}

/// An interval widened for reruns: this run's own interval (the wider of a
/// bootstrap over batches and one over runs of consecutive batches, in ns
/// for a median, as a ratio for a race) and the between-run σ added to it
/// (a median's says where a rerun lands; a race's is for the speedup itself).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reruns {
    pub run_low: f64,
    pub run_high: f64,
    /// The between-run standard deviation over the median (or speedup).
    pub between_run_rel: f64,
    /// Where that σ came from, in words.
    pub source: String,
    /// A race's own interval before the timer's floor (what `ab
    /// --calibrate` scores: the statistics, not the padding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unpadded: Option<(f64, f64)>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CorrectnessReport {
    pub variant: Variant,
    pub shape: Shape,
    /// The first check's seed and distribution (every check is in `checks`).
    pub seed: u64,
    pub inputs: super::inputs::Inputs,
    /// Heads with rows compared against the reference, of `heads_total`;
    /// sessions before row sampling compared whole heads and named them in
    /// `heads` when not all.
    pub heads_checked: u64,
    pub heads_total: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heads: Vec<u64>,
    /// Rows compared against the reference, of B·H·S (0: a session from
    /// before row sampling). Added after schema 2: absent in older sessions.
    #[serde(default)]
    pub rows_checked: u64,
    #[serde(default)]
    pub rows_total: u64,
    /// The largest max(1, max |V|) of the checks.
    #[serde(deserialize_with = "nan_null::de")]
    pub value_scale: f64,
    /// The largest of the checks'.
    #[serde(deserialize_with = "nan_null::de")]
    pub max_abs_err: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub rel_l2_err: f64,
    pub nan_count: u64,
    /// Outputs still holding the poison value after the run.
    pub unwritten: u64,
    /// Every check passed.
    pub pass: bool,
    /// The rules the checks were judged by (absent before per-row bounds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<super::check::Bounds>,
    /// One per input distribution, each with its seed. Added after schema 2:
    /// absent in older sessions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<super::check::DistCheck>,
}

impl CorrectnessReport {
    /// The distributions checked, e.g. "uniform+rising".
    pub fn inputs_text(&self) -> String {
        if self.checks.is_empty() {
            return self.inputs.to_string();
        }
        self.checks
            .iter()
            .map(|c| c.inputs.to_string())
            .collect::<Vec<_>>()
            .join("+")
    }

    /// The largest ratio of an error to its bound over the checks (at most
    /// 1 passes); None before per-row bounds.
    pub fn worst_ratio(&self) -> Option<f64> {
        self.checks
            .iter()
            .map(super::check::DistCheck::worst_ratio)
            .reduce(f64::max)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterProgress {
    pub variant: Variant,
    pub pass: u32,
    pub passes: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterReport {
    pub variant: Variant,
    pub shape: Shape,
    #[serde(deserialize_with = "nan_null::map")]
    pub values: BTreeMap<String, f64>,
    pub passes: u32,
    #[serde(deserialize_with = "nan_null::de")]
    pub collection_ms: f64,
    /// Cold: L2 emptied before each pass, as `ncu` does by default.
    pub l2: L2Mode,
    /// The chip CUPTI profiled (e.g. GH100).
    pub chip: String,
    /// Metrics asked for but refused, with CUPTI's reason.
    pub refused: BTreeMap<String, String>,
    /// Of collection_ms, the one-time setup (CUPTI init, config image).
    #[serde(deserialize_with = "nan_null::de")]
    pub setup_ms: f64,
    /// `auto` (a range per kernel, as ncu; "auto (N kernels combined)" for a
    /// call of several) or `user` (a pushed range).
    pub range: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySample {
    pub sm_clock_mhz: u32,
    pub mem_clock_mhz: u32,
    pub sm_max_mhz: u32,
    #[serde(deserialize_with = "nan_null::de")]
    pub power_w: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub power_limit_w: f64,
    pub temp_c: u32,
    pub util_gpu_pct: u32,
    pub util_mem_pct: u32,
    pub mem_used_bytes: u64,
    pub mem_total_bytes: u64,
    /// NVML clock-event reasons, decoded to names; `idle` alone is not throttling.
    pub throttle_reasons: Vec<String>,
    pub pcie_rx_kib_s: Option<u32>,
    pub pcie_tx_kib_s: Option<u32>,
    /// GPU memory this process holds.
    pub process_mem_bytes: Option<u64>,
    pub mem_max_mhz: Option<u32>,
    /// In a merged session: the source (GPU) it was read from. Added after
    /// schema 2, written only in merged sessions.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

impl TelemetrySample {
    /// Whether a screen of `header`'s session shows it: a merged session's
    /// telemetry panel and clock line follow its first source, so samples
    /// of two GPUs never make one line.
    pub fn shown_in(&self, header: Option<&SessionHeader>) -> bool {
        self.source.is_empty()
            || header
                .and_then(|h| h.sources.first())
                .is_none_or(|first| first.label == self.source)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorReport {
    /// Where it happened: `build`, `launch`, `cupti`, `nvml`, `worker`, `session`.
    pub source: String,
    pub message: String,
    pub variant: Option<Variant>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Bookmark {
    pub label: String,
}

/// serde_json writes a NaN or an infinity as null (a measurement with no
/// value: a race stopped after one round, a check of a kernel that wrote
/// NaN). Read back, null is NaN again, so such an event still parses
/// instead of being lost.
pub(super) mod nan_null {
    use serde::{Deserialize, Deserializer};

    pub fn de<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }

    pub fn map<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<std::collections::BTreeMap<String, f64>, D::Error> {
        let m = std::collections::BTreeMap::<String, Option<f64>>::deserialize(d)?;
        Ok(m.into_iter()
            .map(|(k, v)| (k, v.unwrap_or(f64::NAN)))
            .collect())
    }
}

mod samples;

/// Reads the `type` tag from the raw object, then parses the payload struct
/// straight from the same text. serde's derived internally tagged enum would
/// first buffer every value (each latency sample) into an intermediate tree;
/// this is about twice as fast on sample-heavy sessions, same format.
impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Event, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        struct Tag<'a> {
            #[serde(rename = "type", borrow)]
            kind: std::borrow::Cow<'a, str>,
        }
        let raw: Box<serde_json::value::RawValue> = Deserialize::deserialize(deserializer)?;
        let text = raw.get();
        // Our writer puts the tag first; read it without scanning the object.
        let fast = text
            .strip_prefix("{\"type\":\"")
            .and_then(|rest| rest.split_once('"'))
            .map(|(kind, _)| std::borrow::Cow::Borrowed(kind))
            .filter(|k| !k.contains('\\'));
        let tag = match fast {
            Some(kind) => Tag { kind },
            None => serde_json::from_str(text).map_err(D::Error::custom)?,
        };
        // The outer parser adds where in the line; the message says which event.
        let kind = tag.kind.as_ref();
        let fail =
            |e: serde_json::Error| D::Error::custom(format!("{kind}: {}", without_position(&e)));
        fn payload<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
            serde_json::from_str(text)
        }
        Ok(match kind {
            "header" => Event::Header(payload(text).map_err(fail)?),
            "variant_selected" => Event::VariantSelected(payload(text).map_err(fail)?),
            "build_finished" => Event::BuildFinished(payload(text).map_err(fail)?),
            "build_failed" => Event::BuildFailed(payload(text).map_err(fail)?),
            "latency" => Event::Latency(payload(text).map_err(fail)?),
            "measurement_done" => Event::MeasurementDone(payload(text).map_err(fail)?),
            "correctness" => Event::Correctness(payload(text).map_err(fail)?),
            "counter_progress" => Event::CounterProgress(payload(text).map_err(fail)?),
            "counters" => Event::Counters(payload(text).map_err(fail)?),
            "telemetry" => Event::Telemetry(payload(text).map_err(fail)?),
            "ab_result" => Event::AbResult(payload(text).map_err(fail)?),
            "error" => Event::Error(payload(text).map_err(fail)?),
            "bookmark" => Event::Bookmark(payload(text).map_err(fail)?),
            "kernel_loaded" => Event::KernelLoaded(payload(text).map_err(fail)?),
            "edit" => Event::Edit(payload(text).map_err(fail)?),
            "edit_verdict" => Event::EditVerdict(payload(text).map_err(fail)?),
            _ => Event::Unknown,
        })
    }
}

/// A serde_json error's message without its " at line 1 column 9" (the
/// reader says which line; a column counted from the event's own text
/// would mislead).
pub fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&at).map_or(text.clone(), str::to_string)
}

impl Event {
    /// An error from `source` (worker, gpu, nvml, link, …), tied to a variant or not.
    pub fn error(source: &str, message: String, variant: Option<Variant>) -> Event {
        Event::Error(ErrorReport {
            source: source.into(),
            message,
            variant,
        })
    }

    /// Every variant the event names (a merge relabels them).
    pub fn variants_mut(&mut self) -> Vec<&mut Variant> {
        match self {
            Event::VariantSelected(e) => vec![&mut e.variant],
            Event::BuildFinished(e) => vec![&mut e.variant],
            Event::BuildFailed(e) => vec![&mut e.variant],
            Event::Latency(e) => vec![&mut e.variant],
            Event::MeasurementDone(e) => vec![&mut e.variant],
            Event::Correctness(e) => vec![&mut e.variant],
            Event::CounterProgress(e) => vec![&mut e.variant],
            Event::Counters(e) => vec![&mut e.variant],
            Event::AbResult(e) => vec![&mut e.a, &mut e.b],
            Event::Error(e) => e.variant.iter_mut().collect(),
            Event::Header(_)
            | Event::Telemetry(_)
            | Event::Bookmark(_)
            | Event::KernelLoaded(_)
            | Event::Edit(_)
            | Event::EditVerdict(_)
            | Event::Unknown => Vec::new(),
        }
    }

    /// A short kind name, for logs and summaries.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Header(_) => "header",
            Event::VariantSelected(_) => "variant_selected",
            Event::BuildFinished(_) => "build_finished",
            Event::BuildFailed(_) => "build_failed",
            Event::Latency(_) => "latency",
            Event::MeasurementDone(_) => "measurement_done",
            Event::Correctness(_) => "correctness",
            Event::CounterProgress(_) => "counter_progress",
            Event::Counters(_) => "counters",
            Event::Telemetry(_) => "telemetry",
            Event::AbResult(_) => "ab_result",
            Event::Error(_) => "error",
            Event::Bookmark(_) => "bookmark",
            Event::KernelLoaded(_) => "kernel_loaded",
            Event::Edit(_) => "edit",
            Event::EditVerdict(_) => "edit_verdict",
            Event::Unknown => "unknown",
        }
    }
}

mod bandwidth;
pub mod edit;
mod python;
mod race;
pub(crate) mod schema1;
mod source;

#[cfg(test)]
mod tests;
