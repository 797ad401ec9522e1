//! `attnscope worker --job FILE --kernel LABEL=DIR…`: a dashboard's
//! headless command at the far end of a link (worker/far_command.rs starts
//! it). The kernels are registered under the labels the dashboard gave
//! them, so the job's variant names read back as they were meant; then the
//! command runs as if it had been typed here.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::fail;
use crate::cli::{AbArgs, BenchArgs, DeviceArg, SweepArgs};
use crate::exit;
use crate::session::manifest::registry;
use crate::session::protocol::Job;

pub fn run(file: &Path, kernels: &[(String, PathBuf)]) -> i32 {
    match prepare(file, kernels) {
        Ok(job) => dispatch(job),
        Err(e) => fail(exit::USAGE, e),
    }
}

fn prepare(file: &Path, kernels: &[(String, PathBuf)]) -> Result<Job, String> {
    let text = std::fs::read(file).map_err(|e| format!("job {}: {e}", file.display()))?;
    let job: Job =
        serde_json::from_slice(&text).map_err(|e| format!("job {}: {e}", file.display()))?;
    for (label, dir) in kernels {
        let m = registry::read_manifest(dir)
            .map_err(|e| format!("--kernel {label}={}: {e}", dir.display()))?;
        registry::register(label, m, Some(dir.clone()));
    }
    Ok(job)
}

fn dispatch(job: Job) -> i32 {
    let outcome = match job.command.as_str() {
        "bench" => args::<BenchArgs>(&job).map(|a| {
            select(&a.gpu);
            crate::headless::bench(a)
        }),
        "ab" => args::<AbArgs>(&job).map(|a| {
            select(&a.gpu);
            crate::headless::ab(a)
        }),
        "sweep" => args::<SweepArgs>(&job).map(|a| {
            select(&a.gpu);
            crate::headless::sweep(a)
        }),
        other => Err(format!(
            "the dashboard asked for `{other}`; a worker runs bench, ab and sweep"
        )),
    };
    outcome.unwrap_or_else(|e| fail(exit::USAGE, e))
}

/// The job's arguments as the command takes them; a field this binary does
/// not know, or one missing, is a dashboard of another version.
fn args<T: DeserializeOwned>(job: &Job) -> Result<T, String> {
    serde_json::from_value(job.args.clone()).map_err(|e| {
        format!(
            "the dashboard's {} job does not read here: {e}",
            job.command
        )
    })
}

/// Before anything opens a GPU, as main does for a command typed here.
fn select(gpu: &DeviceArg) {
    crate::gpu::device::select(gpu.device.clone());
}
