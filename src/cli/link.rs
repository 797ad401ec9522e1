//! Where the GPU work runs: `--worker-cmd`/`--remote` on the commands that
//! drive a GPU, and the worker's own arguments.

use std::path::PathBuf;

use clap::Args;

use super::{DeviceArg, parse_hz, parse_seconds};

/// Where the GPU worker runs (live, bench, ab, sweep): here, or wherever a
/// command starts it.
#[derive(Clone, Debug, Default, Args)]
pub struct RemoteArgs {
    /// Run the GPU work wherever this shell command starts `attnscope worker`
    /// (e.g. 'ssh gpu01 attnscope worker', 'srun --gres=gpu:1 attnscope worker',
    /// 'kubectl exec -i pod -- attnscope worker'); the screen, the tables and
    /// the session file stay here, only events cross.
    #[arg(long, value_name = "CMD", conflicts_with = "remote", value_parser = parse_command)]
    pub worker_cmd: Option<String>,
    /// Shorthand for --worker-cmd 'ssh HOST attnscope worker' (HOST as ssh
    /// takes it: a name, user@host, an alias of ~/.ssh/config; $ATTNSCOPE_SSH
    /// replaces `ssh`, e.g. 'ssh -F my_config').
    #[arg(long, value_name = "HOST", value_parser = parse_host)]
    pub remote: Option<String>,
    /// With --remote: the command that starts the worker there, when
    /// `attnscope` is not on the remote PATH of a non-interactive shell.
    #[arg(
        long,
        value_name = "CMD",
        default_value = "attnscope worker",
        requires = "remote",
        value_parser = parse_command
    )]
    pub remote_worker: String,
    /// How long the worker may take to say hello, seconds (1 to 3600; default 60): longer
    /// for a Slurm queue or a slow login; attnscope says every 5 s that it is still waiting.
    /// The worker then has as long again to read attnscope's hello (its setup).
    #[arg(long, value_name = "SECONDS", value_parser = parse_hello_wait)]
    pub hello_wait: Option<f64>,
}

impl RemoteArgs {
    pub fn place(&self) -> crate::worker::link::Place {
        let cmd = match (&self.worker_cmd, &self.remote) {
            (Some(c), _) => Some(c.clone()),
            (None, Some(host)) => {
                let ssh = std::env::var("ATTNSCOPE_SSH").unwrap_or_else(|_| "ssh".into());
                // Batch mode: nothing can prompt for a password under the
                // dashboard; keepalives notice a dead link within ~15 s.
                Some(format!(
                    "{ssh} -o BatchMode=yes -o ServerAliveInterval=5 -o ServerAliveCountMax=3 {host} {}",
                    self.remote_worker
                ))
            }
            (None, None) => None,
        };
        crate::worker::link::Place {
            cmd,
            hello_wait: self.hello_wait.map(std::time::Duration::from_secs_f64),
        }
    }
}

/// A blank command would reach `sh -c`, which runs nothing and exits 0:
/// reported only after the wait as "`` exited with code 0".
fn parse_command(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(
            "the command is empty: give the shell command that starts `attnscope worker` \
             (e.g. 'ssh gpu01 attnscope worker')"
                .into(),
        );
    }
    Ok(text.into())
}

fn parse_hello_wait(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("--hello-wait '{text}' is not a number of seconds"))?;
    if !(1.0..=3600.0).contains(&v) {
        return Err(format!(
            "--hello-wait {v} is out of range: 1 to 3600 seconds"
        ));
    }
    Ok(v)
}

fn parse_host(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && !text.starts_with('-')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@._-:[]%".contains(c));
    if ok {
        Ok(text.into())
    } else {
        Err(format!(
            "'{text}' is not a host name (a name, user@host or an ssh alias; use --worker-cmd for anything else)"
        ))
    }
}

/// How the worker process is started (by the dashboard, not by hand).
#[derive(Clone, Debug, Args)]
pub struct WorkerArgs {
    /// NVML telemetry samples per second, 0 (off) to 100.
    #[arg(long, default_value_t = 10.0, value_parser = parse_hz)]
    pub telemetry_hz: f64,
    /// Longest A/B race, seconds (0.5 to 600).
    #[arg(long, default_value_t = 10.0, value_parser = parse_seconds)]
    pub ab_seconds: f64,
    /// Metric names for `g`, comma-separated (default: the catalogue and the default gates').
    #[arg(long)]
    pub metric_names: Option<String>,
    /// A kernel folder under a label ("" for the primary kernel): LABEL=DIR,
    /// repeatable. A dashboard's hello replaces all of these.
    #[arg(long = "kernel", value_name = "LABEL=DIR", value_parser = parse_labelled_dir)]
    pub kernels: Vec<(String, PathBuf)>,
    /// No GPU: re-emit this recorded session's events through the protocol
    /// with fresh timestamps, looping (tests of the link, soaks, a demo).
    #[arg(long, value_name = "FILE", conflicts_with = "job")]
    pub replay: Option<PathBuf>,
    /// For a worker running a dashboard's headless command: the job it sent
    /// (worker/far_command.rs writes it), its kernels given by --kernel.
    #[arg(long, value_name = "FILE", hide = true)]
    pub job: Option<PathBuf>,
    /// With --replay: events per second as a multiple of the recorded rate
    /// (10 replays ten times faster), 0.01 to 10000.
    #[arg(long, default_value_t = 1.0, value_parser = parse_rate, requires = "replay")]
    pub rate: f64,
    /// With --replay, for tests of the link: every Nth event line goes out
    /// garbled (0: none).
    #[arg(long, default_value_t = 0, hide = true, requires = "replay")]
    pub garble_every: u64,
    #[command(flatten)]
    pub gpu: DeviceArg,
}

fn parse_rate(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if !(0.01..=10000.0).contains(&v) {
        return Err(format!("rate {v} is out of range: 0.01 ≤ rate ≤ 10000"));
    }
    Ok(v)
}

pub fn parse_labelled_dir(text: &str) -> Result<(String, PathBuf), String> {
    let (label, dir) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}' is not LABEL=DIR"))?;
    Ok((label.to_string(), PathBuf::from(dir)))
}

impl WorkerArgs {
    /// Err: a kernel folder that cannot be read.
    pub fn config(&self) -> Result<crate::worker::process::WorkerConfig, String> {
        let kernels = self
            .kernels
            .iter()
            .map(|(label, dir)| crate::session::protocol::KernelFiles::read(label, dir))
            .collect::<Result<_, _>>()?;
        Ok(crate::worker::process::WorkerConfig {
            telemetry_hz: self.telemetry_hz,
            ab_seconds: self.ab_seconds,
            metric_names: self
                .metric_names
                .as_ref()
                .map(|n| n.split(',').map(str::to_string).collect()),
            kernels,
            device: Some(self.gpu.device.to_string()),
        })
    }
}
