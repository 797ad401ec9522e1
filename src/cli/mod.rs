//! Command-line interface: the subcommands and their validated arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::gpu::device::DeviceSpec;
use crate::session::{InputSet, Inputs, Regime, Shape, Variant};

pub use crate::exit;

pub mod argv;
mod link;
mod problem;
mod resolve;
mod selftest;
mod sweep;
mod variants;
pub use link::{RemoteArgs, WorkerArgs, parse_labelled_dir};
pub use problem::ProblemArgs;
pub use selftest::SelftestArgs;
pub use sweep::{MergeArgs, SweepArgs};
pub use variants::{
    VariantList, VariantNames, VariantSpec, names_no_tile, parse_variant_list, parse_variants,
};

#[derive(Debug, Parser)]
#[command(
    name = "attnscope",
    version,
    about = "A terminal dashboard for attention-kernel engineers: live WMMA / cp.async toggles, \
             latency histograms, hardware counters, gates, A/B races, recorded sessions.",
    after_help = "With no subcommand: live on a GPU; with no usable GPU, replays the newest real session in sessions/ (`attnscope doctor` says what is missing)."
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Cmd>,
    /// With no subcommand: `attnscope live`'s options.
    #[command(flatten)]
    pub live: LiveArgs,
}

// One per process, made once: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Live dashboard on the GPU (the default).
    Live(LiveArgs),
    /// Play a recorded session back through the same screen, or summarize it.
    Replay(ReplayArgs),
    /// Time variants headless: p50/p90/p99, TFLOP/s, max error, registers, spills.
    Bench(BenchArgs),
    /// Race two variants headless: interleaved launches, speedup with a 95% interval, a verdict.
    Ab(AbArgs),
    /// Check every variant against the f64 reference over a spread of shapes.
    Selftest(SelftestArgs),
    /// Turn a session into PNG and SVG charts, CSV tables and a Chrome trace (Perfetto).
    Export(ExportArgs),
    /// Collect hardware counters for one variant and print its Nsight-style
    /// gates; exits 1 when any gate fails (for a GPU CI runner).
    Gates(GatesArgs),
    /// Compile variants for an architecture and print the PTXAS resource report
    /// (no GPU needed: NVRTC only).
    Build(BuildArgs),
    /// Pick the fastest correct tile of a path on a shape from a cost model's
    /// finalists (`--all`: every tile); cached for `…@tuned`.
    Tune(TuneArgs),
    /// Time variants over many shapes headless and write one session
    /// (`--devices all`: every GPU of the host at once).
    Sweep(SweepArgs),
    /// Combine sessions from several GPUs or hosts into one file, each
    /// source's variants labelled (h100:wmma+pv+async beside h200:…).
    Merge(MergeArgs),
    /// Which libraries, GPU, driver and CUDA versions; what is missing and how to fix it.
    Doctor(DeviceArg),
    /// Write a starter kernel folder (a small scalar kernel with one toggle
    /// and its manifest) and print the command that opens it live.
    New(NewArgs),
    /// The GPU side of `--worker-cmd` / `--remote`: commands as JSON lines on stdin, events as JSON
    /// lines on stdout; `--replay FILE` plays a recorded session instead of a GPU.
    Worker(WorkerArgs),
    /// Launch one variant N times and exit, nothing else: a clean target for
    /// `ncu` (scripts/ncu-crosscheck.sh).
    #[command(hide = true)]
    Launch(LaunchArgs),
    /// The clock probe against NVML: probe lengths, the globaltimer's step,
    /// and the SM clock each reads (docs/measurement.md).
    #[command(hide = true)]
    Clocks(DeviceArg),
}

#[derive(Debug, Args)]
pub struct GatesArgs {
    /// The variant to judge, e.g. wmma+pv+async or scalar@64x64s2w4 (default:
    /// the kernel's start variant, wmma+pv+async for the bundled one). Hopper: a bare mma+async is tuned.
    #[arg(long = "variant", id = "variant", value_name = "VARIANT")]
    pub variant_arg: Option<String>,
    /// `variant_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub variant: Option<Variant>,
    #[command(flatten)]
    pub problem: ProblemArgs,
    /// Gate thresholds: a TOML file, or `seeds` for the seeds' table as written (default: the built-in
    /// assets/gates.toml, resource limits from the device).
    #[arg(long, value_name = "FILE|seeds")]
    pub gates: Option<PathBuf>,
    /// Extra metrics to collect (TOML `[[metric]]` tables: name, unit, display).
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// L2 before each counter pass: cold (emptied, as ncu does by default) or hot.
    #[arg(long, default_value = "cold", value_parser = ["cold", "hot"])]
    pub l2: String,
    /// Counter range: auto (one per kernel, as ncu) or user (one pushed range around the launch).
    #[arg(long, default_value = "auto", value_parser = ["auto", "user"])]
    pub range: String,
    /// Longest timing per variant for the speedup gate, seconds (0.5 to 600).
    #[arg(long, default_value_t = 1.0, value_parser = parse_seconds)]
    pub max_seconds: f64,
    /// Input distributions of the correctness check, comma-separated, each
    /// on the same seed: uniform, normal:σ, rising, outliers, ties, large, or
    /// all (`attnscope selftest --help` lists them). The default's rising
    /// inputs make the online softmax rescale.
    #[arg(long, default_value = "uniform,rising,offset", value_parser = parse_input_set)]
    pub inputs: InputSet,
    /// Seed of the check's inputs, 0 to 2⁶⁴−1 (default: a fresh one, printed).
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also record the run as a session file.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// A kernel folder (a .cu and its .toml manifest) to use instead of the
    /// bundled kernel: variant names are its toggles (docs/kernel-abi.md).
    #[arg(long, value_name = "DIR")]
    pub kernels: Option<PathBuf>,
    #[command(flatten)]
    pub gpu: DeviceArg,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The session file (.jsonl, or zstd/gzip-compressed: .jsonl.zst, .jsonl.gz).
    pub file: PathBuf,
    /// Folder for the files (created if missing; files of the same name are replaced).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Gate thresholds for the gates chart: a TOML file, or `seeds` (default: assets/gates.toml).
    #[arg(long, value_name = "FILE|seeds")]
    pub gates: Option<PathBuf>,
    /// Stop at the first corrupt line instead of skipping it.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct LaunchArgs {
    /// Default: the kernel's start variant.
    #[arg(long = "variant", id = "variant", value_name = "VARIANT")]
    pub variant_arg: Option<String>,
    /// `variant_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub variant: Option<Variant>,
    #[command(flatten)]
    pub problem: ProblemArgs,
    /// Launches, 1 to 1000.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub count: u32,
    /// A kernel folder (a .cu and its .toml manifest) to use instead of the
    /// bundled kernel: variant names are its toggles (docs/kernel-abi.md).
    #[arg(long, value_name = "DIR")]
    pub kernels: Option<PathBuf>,
    #[command(flatten)]
    pub gpu: DeviceArg,
}

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct BenchArgs {
    #[command(flatten)]
    pub problem: ProblemArgs,
    /// `all` (every toggle combination the kernel allows, at its default tile) or a comma-separated list, e.g.
    /// scalar,wmma+pv+async,mma+async@tuned (`@tuned`: the tile `attnscope tune` chose; on
    /// Hopper a bare mma+async is tuned too, mma+async@TILE pins a tile).
    #[arg(
        long = "variants",
        id = "variants",
        value_name = "VARIANTS",
        default_value = "all"
    )]
    #[serde(skip)]
    pub variants_arg: String,
    /// `variants_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub variants: VariantList,
    /// Flush L2 between launches.
    #[arg(long)]
    pub cold_l2: bool,
    /// Longest sampling time per variant, seconds (0.5 to 600).
    #[arg(long, default_value_t = 5.0, value_parser = parse_seconds)]
    pub max_seconds: f64,
    /// Run each variant untimed for this long first, in the same regime,
    /// seconds (0 to 600): under a power cap the clock falls within the first
    /// few hundred milliseconds of load (an H200 at B1 H32/8 S4096: 1978 to
    /// about 1600 MHz, run161), so a measurement right after an idle GPU
    /// reads fast; longer loads settle further.
    #[arg(long, default_value_t = crate::gpu::measure::DEFAULT_WARM_S, value_parser = parse_warm_seconds)]
    pub warm_seconds: f64,
    /// Per-launch timer: cupti (kernel activity records) or events (CUDA events).
    #[arg(long, default_value = "cupti", value_parser = ["cupti", "events"])]
    pub timer: String,
    /// Time exactly this many launches per variant instead of sampling to a
    /// stable median (for compute-sanitizer runs), 1 to 1000000.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub launches: Option<u32>,
    /// NVML telemetry samples per second, 0 (off) to 100.
    #[arg(long, default_value_t = 10.0, value_parser = parse_hz)]
    pub telemetry_hz: f64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also record the run as a session file.
    #[arg(long, value_name = "FILE")]
    #[serde(skip)]
    pub record: Option<PathBuf>,
    /// back-to-back (the same kernel queued, the default) or isolated (an
    /// idle gap and an emptied L2 before every launch, as Nsight Compute times).
    #[arg(long, default_value = "back-to-back", value_parser = parse_solo_regime)]
    pub regime: Regime,
    /// Input distributions of the correctness check, comma-separated, each
    /// on the same seed: uniform, normal:σ, rising, outliers, ties, large, or
    /// all (`attnscope selftest --help` lists them). The default's rising
    /// inputs make the online softmax rescale.
    #[arg(long, default_value = "uniform,rising,offset", value_parser = parse_input_set)]
    #[serde(with = "crate::session::as_text")]
    pub inputs: InputSet,
    /// Seed of the check's inputs, 0 to 2⁶⁴−1 (default: a fresh one, printed).
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// A kernel folder (a .cu and its .toml manifest) to use instead of the
    /// bundled kernel: variant names are its toggles (docs/kernel-abi.md).
    #[arg(long, value_name = "DIR")]
    #[serde(skip)]
    pub kernels: Option<PathBuf>,
    /// Run the whole bench this many times, 2 to 100, each in a process of its own, one after
    /// another, and report each variant's mean over the runs with a 95% interval from them, and
    /// how many of the other runs' medians each run's interval holds (nothing is saved: every
    /// run samples what differs between processes itself; docs/measurement.md).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=100), conflicts_with = "record")]
    #[serde(skip)]
    pub runs: Option<u32>,
    #[command(flatten)]
    #[serde(skip)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    pub gpu: DeviceArg,
}

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct AbArgs {
    /// Variant in slot A, the baseline (default: the kernel's base, scalar for
    /// the bundled one); DIR:variant for another kernel folder.
    #[arg(long = "a", id = "a", value_name = "A")]
    #[serde(skip)]
    pub a_arg: Option<String>,
    /// `a_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub a: Option<Variant>,
    /// Variant in slot B, the candidate (default: the kernel's start,
    /// wmma+pv+async for the bundled one). Hopper: a bare mma+async is tuned.
    #[arg(long = "b", id = "b", value_name = "B")]
    #[serde(skip)]
    pub b_arg: Option<String>,
    /// `b_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub b: Option<Variant>,
    #[command(flatten)]
    pub problem: ProblemArgs,
    /// interleaved (A and B alternate back to back, ABBA order) or isolated
    /// (an idle gap and an emptied L2 before every launch, as Nsight Compute times).
    #[arg(long, default_value = "interleaved", value_parser = parse_race_regime)]
    pub regime: Regime,
    /// Longest race, seconds (0.5 to 600).
    #[arg(long, default_value_t = 10.0, value_parser = parse_seconds)]
    pub ab_seconds: f64,
    /// Exit 1 unless the verdict is this: faster (B faster than A), slower,
    /// or same (no difference detected). For a CI job.
    #[arg(long, value_parser = ["faster", "slower", "same"])]
    pub expect: Option<String>,
    /// With --expect: by at least this many percent (faster/slower: the whole
    /// interval beyond it; same: the whole interval within ±PCT).
    #[arg(long, value_name = "PCT", requires = "expect", value_parser = parse_percent)]
    pub by: Option<f64>,
    /// Calibrate instead of comparing: race this variant against itself
    /// `--races` times and count how many intervals cover 1.0 (exits 1 under 90%).
    #[arg(long = "calibrate", id = "calibrate", value_name = "VARIANT", conflicts_with_all = ["expect"])]
    #[serde(skip)]
    pub calibrate_arg: Option<String>,
    /// `calibrate_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub calibrate: Option<Variant>,
    /// Races for --calibrate (2 to 200, default 20); with --a and --b, race them this many times
    /// in this process and count the verdicts (how often a planted difference is called).
    #[arg(long, conflicts_with_all = ["expect", "offsets"], value_parser = clap::value_parser!(u32).range(2..=200))]
    pub races: Option<u32>,
    /// Inputs of both checks, comma-separated, each on the same seed (see
    /// `attnscope selftest --help`); the race runs on the first.
    #[arg(long, default_value = "uniform,rising,offset", value_parser = parse_input_set)]
    #[serde(with = "crate::session::as_text")]
    pub inputs: InputSet,
    /// Race even when a side fails its correctness check (no verdict
    /// otherwise: `ab` exits 1 before the race).
    #[arg(long)]
    pub allow_incorrect: bool,
    /// Seed of the inputs, 0 to 2⁶⁴−1 (default: a fresh one, printed).
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// NVML telemetry samples per second, 0 (off) to 100.
    #[arg(long, default_value_t = 10.0, value_parser = parse_hz)]
    pub telemetry_hz: f64,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also record the race as a session file.
    #[arg(long, value_name = "FILE")]
    #[serde(skip)]
    pub record: Option<PathBuf>,
    /// A kernel folder (a .cu and its .toml manifest) to use instead of the
    /// bundled kernel: variant names are its toggles (docs/kernel-abi.md).
    #[arg(long, value_name = "DIR")]
    #[serde(skip)]
    pub kernels: Option<PathBuf>,
    /// Run the race this many times, 2 to 100, each in a process of its own, one after another,
    /// and measure how much its speedup moves between processes and how many pairs of intervals
    /// overlap (nothing is saved; docs/measurement.md).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=100), conflicts_with_all = ["record", "calibrate"])]
    #[serde(skip)]
    pub runs: Option<u32>,
    /// What moves a race between processes: race A and B for --ab-seconds at --levels levels of
    /// each factor (control, buffers, code, seed, idle, all; docs/measurement.md).
    #[arg(long, value_name = "FACTORS", hide = true, conflicts_with_all = ["calibrate", "expect", "runs"])]
    #[serde(skip)]
    pub offsets: Option<String>,
    /// Levels of each factor for --offsets (2 to 16).
    #[arg(long, default_value_t = 8, hide = true, value_parser = clap::value_parser!(u32).range(2..=16))]
    #[serde(skip)]
    pub levels: u32,
    #[command(flatten)]
    #[serde(skip)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    pub gpu: DeviceArg,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// `all`, or a comma-separated list, e.g. wmma+pv+async,mma+async@64x64s2w8k2.
    #[arg(
        long = "variants",
        id = "variants",
        value_name = "VARIANTS",
        default_value = "all"
    )]
    pub variants_arg: String,
    /// `variants_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub variants: VariantList,
    /// Target architecture, sm_75 or newer (NVRTC 13's oldest); a variant that needs more (the
    /// bundled kernel's async and mma paths need sm_80) fails its build and says why.
    #[arg(long, default_value = "sm_90", value_parser = parse_arch)]
    pub arch: String,
    /// Head dimension (the bundled kernel: 64, 128, and 256 on the tiles that fit it).
    #[arg(long, default_value_t = 64, value_parser = parse_head_dim)]
    pub d: u32,
    /// Element type to build for: fp16 or bf16 (a kernel of ABI 2 gets it as ATTN_BF16; variants
    /// that do not take it say so).
    #[arg(long, value_name = "TYPE", default_value = "fp16", value_parser = problem::parse_dtype)]
    pub dtype: crate::session::Dtype,
    /// A kernel folder (a .cu and its .toml manifest) to use instead of the
    /// bundled kernel: variant names are its toggles (docs/kernel-abi.md).
    #[arg(long, value_name = "DIR")]
    pub kernels: Option<PathBuf>,
    /// Also write each cubin here as VARIANT.cubin (for nvdisasm or cuobjdump -sass).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn parse_arch(text: &str) -> Result<String, String> {
    let n: u32 = text
        .strip_prefix("sm_")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("arch '{text}' is not of the form sm_90"))?;
    if n < 75 {
        return Err(format!(
            "arch {text} is too old: NVRTC 13 builds sm_75 and newer (each toggle's manifest entry says what it needs)"
        ));
    }
    Ok(text.to_string())
}

/// A head dimension the primary kernel runs (its manifest's head_dims).
pub fn parse_head_dim(text: &str) -> Result<u32, String> {
    let m =
        crate::session::manifest::registry::manifest(crate::session::manifest::registry::primary());
    let all = m.all_head_dims();
    let dims: Vec<String> = all.iter().map(u32::to_string).collect();
    match text.parse::<u32>() {
        Ok(d) if all.contains(&d) => Ok(d),
        _ => Err(format!(
            "D={text} is not supported: {} runs D = {}",
            m.name,
            dims.join(", ")
        )),
    }
}

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The path to tune, toggles only (the tile is what is chosen), e.g.
    /// mma+async (default: the kernel's path with the most tiles to try).
    #[arg(long = "variant", id = "variant", value_name = "VARIANT")]
    pub variant_arg: Option<String>,
    /// `variant_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub variant: Option<Variant>,
    #[command(flatten)]
    pub problem: ProblemArgs,
    /// Longest sampling time per candidate, seconds (0.5 to 600; default
    /// 0.5 for the finalists, 1 with --all).
    #[arg(long, value_parser = parse_seconds)]
    pub max_seconds: Option<f64>,
    /// Time every candidate tile (the exhaustive search, minutes) instead of
    /// the cost model's few finalists.
    #[arg(long)]
    pub all: bool,
    /// Input distributions of the correctness check, comma-separated, each
    /// on the same seed: uniform, normal:σ, rising, outliers, ties, large, or
    /// all (`attnscope selftest --help` lists them). The default's rising
    /// inputs make the online softmax rescale.
    #[arg(long, default_value = "uniform,rising,offset", value_parser = parse_input_set)]
    pub inputs: InputSet,
    /// Seed of the check's inputs, 0 to 2⁶⁴−1 (default: a fresh one, printed).
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Print JSON instead of a table (with mode, finalists, wall_s).
    #[arg(long)]
    pub json: bool,
    /// Also record the run as a session file.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// A kernel folder (a .cu and its .toml manifest) to use instead of the
    /// bundled kernel: variant names are its toggles (docs/kernel-abi.md).
    #[arg(long, value_name = "DIR")]
    pub kernels: Option<PathBuf>,
    #[command(flatten)]
    pub gpu: DeviceArg,
}

pub fn parse_hz(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("rate '{text}' is not a number"))?;
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("{v} Hz is out of range: 0 (off) ≤ Hz ≤ 100"));
    }
    Ok(v)
}

pub fn parse_warm_seconds(text: &str) -> Result<f64, String> {
    seconds_from(text, 0.0, "warm seconds")
}

pub fn parse_seconds(text: &str) -> Result<f64, String> {
    seconds_from(text, 0.5, "seconds")
}

/// Seconds from `min` to 600; `name` says which in the range message.
fn seconds_from(text: &str, min: f64, name: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("seconds '{text}' is not a number"))?;
    if !(min..=600.0).contains(&v) {
        return Err(format!("{v} s is out of range: {min} ≤ {name} ≤ 600"));
    }
    Ok(v)
}

#[derive(Debug, Args)]
pub struct LiveArgs {
    /// Record from the start to this file (default: press r to record into sessions/); a
    /// name ending .zst (.gz) records zstd (gzip).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Gate thresholds: a TOML file, or `seeds` for the seeds' table as written (default: the built-in
    /// assets/gates.toml, resource limits from the device).
    #[arg(long, value_name = "FILE|seeds")]
    pub gates: Option<PathBuf>,
    /// Starting shape as B,H,S,D, KV heads and keys after a slash (8,32/8,1/32768,128); `s`
    /// cycles the presets, Llama 3 prefill and decode among them.
    #[arg(long, value_name = "B,H,S,D", value_parser = parse_shape_text)]
    pub shape: Option<Shape>,
    /// Starting element type: fp16 or bf16.
    #[arg(long, value_name = "TYPE", value_parser = problem::parse_dtype)]
    pub dtype: Option<crate::session::Dtype>,
    /// Starting key/value heads (grouped-query attention), dividing H.
    #[arg(long, value_name = "N")]
    pub kv_heads: Option<u32>,
    /// Starting keys per head (a KV cache's length).
    #[arg(long, value_name = "N")]
    pub kv_len: Option<u32>,
    /// Start with the causal mask on (aligned to the end).
    #[arg(long)]
    pub causal: bool,
    /// Starting variant, e.g. scalar, wmma, wmma+pv+async.
    #[arg(long = "variant", id = "variant", value_name = "VARIANT")]
    pub variant_arg: Option<String>,
    /// `variant_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub variant: Option<Variant>,
    /// Python variants for P to cycle: py:NAME (bundled adapters), py:MODULE:FUNCTION, comma-separated.
    #[arg(long, value_name = "LIST", value_parser = variants::parse_python_list)]
    pub py: Option<variants::VariantNames>,
    /// Longest A/B race, seconds (0.5 to 600).
    #[arg(long, default_value_t = 10.0, value_parser = parse_seconds)]
    pub ab_seconds: f64,
    /// Starting regime: back-to-back or isolated (R switches; races are
    /// interleaved, or isolated when this is).
    #[arg(long, value_parser = parse_solo_regime)]
    pub regime: Option<Regime>,
    /// Starting input distribution of the correctness checks (I cycles).
    #[arg(long, value_parser = parse_inputs)]
    pub inputs: Option<Inputs>,
    /// NVML telemetry samples per second, 0 (off) to 100.
    #[arg(long, default_value_t = 10.0, value_parser = parse_hz)]
    pub telemetry_hz: f64,
    /// Extra metrics for `g` to collect (TOML `[[metric]]` tables: name, unit, display).
    #[arg(long, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// A kernel folder (a .cu and its .toml manifest) to use instead of the
    /// bundled kernel, rebuilt whenever you save either file.
    #[arg(long, value_name = "DIR")]
    pub kernels: Option<PathBuf>,
    /// Another kernel folder to switch to with K and race against (repeatable;
    /// the bundled kernel is always there as `bundled`).
    #[arg(long, value_name = "DIR")]
    pub also: Vec<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    pub gpu: DeviceArg,
}

impl Default for LiveArgs {
    /// What `attnscope` with no subcommand runs: the same as `attnscope live`.
    fn default() -> Self {
        LiveArgs {
            record: None,
            gates: None,
            shape: None,
            dtype: None,
            kv_heads: None,
            kv_len: None,
            causal: false,
            variant_arg: None,
            variant: None,
            py: None,
            ab_seconds: 10.0,
            regime: None,
            inputs: None,
            telemetry_hz: 10.0,
            metrics: None,
            kernels: None,
            also: Vec::new(),
            remote: RemoteArgs::default(),
            gpu: DeviceArg::default(),
        }
    }
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The session file (.jsonl, or zstd/gzip-compressed: .jsonl.zst, .jsonl.gz).
    pub file: PathBuf,
    /// Playback speed, 0.25 to 256.
    #[arg(long, default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,
    /// Print the final tables and exit, without the dashboard.
    #[arg(long)]
    pub summary: bool,
    /// With --summary: print JSON instead of text.
    #[arg(long, requires = "summary")]
    pub json: bool,
    /// Stop at the first corrupt line instead of skipping it.
    #[arg(long)]
    pub strict: bool,
    /// Gate thresholds: a TOML file, or `seeds` for the seeds' table as written (default: the built-in
    /// assets/gates.toml, resource limits from the device).
    #[arg(long, value_name = "FILE|seeds")]
    pub gates: Option<PathBuf>,
}

pub fn parse_shape(text: &str) -> Result<Shape, String> {
    let shape = parse_shape_text(text)?;
    shape.validate()?;
    Ok(shape)
}

/// A shape's text, checked only once the other problem flags are folded in
/// (`ProblemArgs::finish`): `1,32/8,4,128` may need `--causal` off, say.
pub fn parse_shape_text(text: &str) -> Result<Shape, String> {
    text.parse().map_err(|e| too_large(text).unwrap_or(e))
}

/// A field of a shape's text too large to read as a number, said against
/// its limit: the shape's parser, reading each as a u32, calls it "not a
/// positive integer".
fn too_large(text: &str) -> Option<String> {
    use crate::session::shape::{MAX_GRID_YZ, MAX_LEN};
    let fields: [&[(&str, u32)]; 4] = [
        &[("B", MAX_GRID_YZ)],
        &[("H", MAX_GRID_YZ), ("KV heads", MAX_GRID_YZ)],
        &[("S", MAX_LEN), ("keys", MAX_LEN)],
        &[("D", 256)],
    ];
    let unreadable = |n: &str| {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && n.parse::<u32>().is_err()
    };
    text.split(',')
        .zip(fields)
        .flat_map(|(part, names)| part.split('/').map(str::trim).zip(names))
        .find(|(n, _)| unreadable(n))
        .map(|(n, (name, max))| {
            format!("shape '{text}': {name}={n} is over the limit: 1 ≤ {name} ≤ {max}")
        })
}

/// A seed. clap's own u64 parser says only "invalid digit found in string".
pub fn parse_seed(text: &str) -> Result<u64, String> {
    text.parse().map_err(|_| {
        format!(
            "'{text}' is not a seed: a whole number from 0 to {}",
            u64::MAX
        )
    })
}

pub fn parse_inputs(text: &str) -> Result<Inputs, String> {
    text.parse()
}

pub fn parse_input_set(text: &str) -> Result<InputSet, String> {
    text.parse()
}

/// A solo regime: back-to-back or isolated (interleaved is a race's).
pub fn parse_solo_regime(text: &str) -> Result<Regime, String> {
    match text.parse()? {
        Regime::Interleaved => Err(
            "interleaved needs two variants: race them with `attnscope ab` (or x in live)".into(),
        ),
        r => Ok(r),
    }
}

/// A race's regime: interleaved or isolated.
pub fn parse_race_regime(text: &str) -> Result<Regime, String> {
    match text.parse()? {
        Regime::BackToBack => Err(
            "a race alternates its two variants: interleaved or isolated, not back-to-back".into(),
        ),
        r => Ok(r),
    }
}

pub fn parse_percent(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{text}' is not a percentage"))?;
    if !(0.0..=1000.0).contains(&v) {
        return Err(format!("{v}% is out of range: 0 ≤ PCT ≤ 1000"));
    }
    Ok(v)
}

pub fn parse_speed(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("speed '{text}' is not a number"))?;
    if !(0.25..=256.0).contains(&v) {
        return Err(format!("speed {v} is out of range: 0.25 ≤ speed ≤ 256"));
    }
    Ok(v)
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The folder to create (it must not exist, or be empty).
    pub dir: PathBuf,
    /// The kernel's name in its manifest (default: the folder's name).
    #[arg(long)]
    pub name: Option<String>,
}

/// Which GPU a command runs on (every command that opens one).
#[derive(Clone, Debug, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct DeviceArg {
    /// The GPU: a CUDA ordinal (0, 1, …; counted after CUDA_VISIBLE_DEVICES)
    /// or a UUID as `nvidia-smi -L` prints it (GPU-3f2a…; a unique prefix will do).
    #[arg(long, value_name = "N|UUID", default_value = "0", value_parser = parse_device)]
    #[serde(with = "crate::session::as_text")]
    pub device: DeviceSpec,
}

pub fn parse_device(text: &str) -> Result<DeviceSpec, String> {
    text.parse()
}

impl Cmd {
    /// The GPU the command asks for; None for commands that open none.
    pub fn device(&self) -> Option<&DeviceSpec> {
        let arg = match self {
            Cmd::Live(a) => &a.gpu,
            Cmd::Bench(a) => &a.gpu,
            Cmd::Ab(a) => &a.gpu,
            Cmd::Selftest(a) => &a.gpu,
            Cmd::Gates(a) => &a.gpu,
            Cmd::Tune(a) => &a.gpu,
            Cmd::Worker(a) => &a.gpu,
            Cmd::Launch(a) => &a.gpu,
            Cmd::Doctor(a) | Cmd::Clocks(a) => a,
            Cmd::Sweep(a) => &a.gpu,
            Cmd::Replay(_) | Cmd::Export(_) | Cmd::Build(_) | Cmd::New(_) | Cmd::Merge(_) => {
                return None;
            }
        };
        Some(&arg.device)
    }
}
