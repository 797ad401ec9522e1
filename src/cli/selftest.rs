//! `attnscope selftest`'s arguments.

use std::path::PathBuf;

use clap::Args;

use super::{DeviceArg, VariantNames, parse_input_set};
use crate::session::{Dtype, InputSet, Inputs};

#[derive(Debug, Args)]
#[command(after_help = selftest_help())]
pub struct SelftestArgs {
    /// Only these input distributions, comma-separated (default: every
    /// one; with --mutations and --calibrate, the default check's
    /// uniform,rising,offset; see below).
    #[arg(long, value_parser = parse_input_set)]
    pub inputs: Option<InputSet>,
    /// A subset: every path and tile on a few shapes (3.5 minutes on an H100).
    #[arg(long)]
    pub quick: bool,
    /// Only these variants (comma-separated, e.g. mma+async@128x64s3w8gqpt),
    /// each over the paths' shapes (S=512, causal and not; S=333 causal at
    /// D=128; S=4097), more row blocks than SMs (S=333, causal and not;
    /// S=4097 and 2049, not causal), every distribution, in one process.
    /// With --calibrate: the implementations to check (default: cuDNN,
    /// PyTorch's SDPA backends, FlexAttention, the Triton tutorial and every
    /// shipped tile).
    #[arg(long = "variants", id = "variants", value_name = "VARIANTS", conflicts_with_all = ["quick", "mutations"])]
    pub variants_arg: Option<String>,
    /// `variants_arg` checked against the registered kernels (cli/resolve.rs).
    #[arg(skip)]
    pub variants: Option<VariantNames>,
    /// Prove the oracle has teeth: build each path with each planted bug
    /// (the manifest's mutation sites) and run the default check on it at
    /// nine shapes, in fp16 and then bf16; exits 1 if the check misses one
    /// where it fires, or a build or launch fails.
    #[arg(long)]
    pub mutations: bool,
    /// With --mutations or --calibrate: one format only (default: fp16 and
    /// bf16, each in turn).
    #[arg(long, value_name = "TYPE", value_parser = super::problem::parse_dtype)]
    pub dtype: Option<Dtype>,
    /// Measure the check's false failures on implementations we did not
    /// write: SEEDS seeds at each of the calibration shapes, every variant,
    /// the default check; prints each one's failures, worst row error and
    /// pooled means (docs/measurement.md, "The pooled test").
    #[arg(long, value_name = "SEEDS", conflicts_with_all = ["quick", "mutations"],
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub calibrate: Option<u32>,
    /// With --calibrate: stop after this many seconds, between two shapes
    /// (the report counts the seeds done whole and every check run).
    #[arg(long, value_name = "SECONDS", requires = "calibrate")]
    pub deadline: Option<f64>,
    /// Base seed, 0 to 2⁶⁴−1 (each case adds its index; default: a fresh one, printed).
    #[arg(long, value_parser = super::parse_seed)]
    pub seed: Option<u64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// A kernel folder (a .cu and its .toml manifest) to use instead of the
    /// bundled kernel: variant names are its toggles (docs/kernel-abi.md).
    #[arg(long, value_name = "DIR")]
    pub kernels: Option<PathBuf>,
    #[command(flatten)]
    pub gpu: DeviceArg,
}

fn selftest_help() -> String {
    format!(
        "Input distributions (--inputs on bench, ab, gates, tune, sweep and selftest: a comma-separated list or all; \
         every command but selftest checks on uniform,rising,offset unless told; I in live picks one and the rest of the default joins it):\n{}",
        Inputs::help()
    )
}
