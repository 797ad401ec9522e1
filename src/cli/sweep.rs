//! `sweep` (many shapes, one session) and `merge` (sessions from several
//! GPUs or hosts, one file).

use std::path::PathBuf;

use clap::Args;

use super::{
    DeviceArg, RemoteArgs, VariantList, parse_input_set, parse_seconds, parse_shape,
    parse_solo_regime,
};
use crate::session::{Dtype, InputSet, Regime, Shape};

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct SweepArgs {
    /// Shapes as B,H,S,D, separated by spaces or semicolons, e.g.
    /// '2,8,512,64;4,16,4096,64'; K/V heads and keys after a slash, e.g. '8,32/8,1/32768,128'.
    #[arg(long, required = true, num_args = 1.., value_delimiter = ';', value_name = "B,H,S,D", value_parser = parse_shape)]
    pub shapes: Vec<Shape>,
    /// Element type: fp16, bf16, or both (each shape twice).
    #[arg(long, default_value = "fp16", value_parser = ["fp16", "bf16", "both"])]
    pub dtype: String,
    /// `all` or a comma-separated list, as bench takes it (e.g. scalar,wmma+pv+async,cudnn).
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
    /// Causal mask: off, on, or both (each shape twice).
    #[arg(long, default_value = "off", value_parser = ["off", "on", "both"])]
    pub causal: String,
    /// Input distributions of the correctness checks, comma-separated
    /// (`selftest --help` lists them; rising makes the softmax rescale).
    #[arg(long, default_value = "uniform,rising,offset", value_parser = parse_input_set)]
    #[serde(with = "crate::session::as_text")]
    pub inputs: InputSet,
    /// Seed of the checks' inputs, 0 to 2⁶⁴−1 (default: a fresh one, printed).
    #[arg(long, value_parser = super::parse_seed)]
    pub seed: Option<u64>,
    /// back-to-back or isolated.
    #[arg(long, default_value = "back-to-back", value_parser = parse_solo_regime)]
    pub regime: Regime,
    /// Longest sampling time per variant and shape, seconds (0.5 to 600).
    #[arg(long, default_value_t = 2.0, value_parser = parse_seconds)]
    pub max_seconds: f64,
    /// NVML telemetry samples per second, 0 (off) to 100.
    #[arg(long, default_value_t = 10.0, value_parser = super::parse_hz)]
    pub telemetry_hz: f64,
    /// The session file to write (it must not exist).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Run only every Nth (shape, mask) pair from the Ith, as I/N (0 ≤ I < N):
    /// how a job array splits one sweep (scripts/slurm-sweep.sh).
    #[arg(long, value_name = "I/N", value_parser = parse_slice)]
    pub slice: Option<(usize, usize)>,
    /// `all`, or a comma-separated list of devices (ordinals or UUIDs): the
    /// whole sweep on each GPU in parallel, merged into --out (gpu0:…, gpu1:…).
    #[arg(long, value_name = "all|LIST", conflicts_with_all = ["slice", "worker_cmd", "remote"])]
    pub devices: Option<String>,
    /// A kernel folder to use instead of the bundled kernel.
    #[arg(long, value_name = "DIR")]
    #[serde(skip)]
    pub kernels: Option<PathBuf>,
    #[command(flatten)]
    #[serde(skip)]
    pub remote: RemoteArgs,
    #[command(flatten)]
    pub gpu: DeviceArg,
}

impl SweepArgs {
    /// Every (shape, mask, dtype) this run measures, in order.
    pub fn points(&self) -> Vec<Shape> {
        let masks: &[bool] = match self.causal.as_str() {
            "on" => &[true],
            "both" => &[false, true],
            _ => &[false],
        };
        let dtypes: &[Dtype] = match self.dtype.as_str() {
            "bf16" => &[Dtype::Bf16],
            "both" => &[Dtype::F16, Dtype::Bf16],
            _ => &[Dtype::F16],
        };
        let all = self.shapes.iter().flat_map(|s| {
            masks.iter().flat_map(move |&causal| {
                dtypes
                    .iter()
                    .map(move |&d| s.with_causal(causal).with_dtype(d))
            })
        });
        match self.slice {
            Some((i, n)) => all
                .enumerate()
                .filter(|(k, _)| k % n == i)
                .map(|(_, s)| s)
                .collect(),
            None => all.collect(),
        }
    }
}

pub fn parse_slice(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{text}' is not I/N with 0 ≤ I < N (e.g. 0/4)");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Session files to combine (two or more).
    #[arg(required = true, num_args = 2.., value_name = "FILES")]
    pub files: Vec<PathBuf>,
    /// The merged session (it must not exist).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// One label per file, comma-separated (default: from each GPU's name,
    /// h100, h200, h100-2 …); variants become LABEL:variant.
    #[arg(long, value_delimiter = ',')]
    pub labels: Option<Vec<String>>,
}
