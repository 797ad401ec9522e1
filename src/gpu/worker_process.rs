//! `attnscope worker`: the GPU worker as a child process. Commands arrive as
//! JSON lines on stdin, events leave as JSON lines on stdout (the session
//! file's own line format). A kernel that faults kills this process, never
//! the dashboard; see supervisor.rs for the other side.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use super::engine::{Engine, Timer};
use super::telemetry::{self, Sampler};
use super::worker::Worker;
use crate::session::command::Command;
use crate::session::event::{ErrorReport, Event, Stamped};

/// Exit code after the CUDA context died (the supervisor restarts on any exit).
pub const EXIT_CONTEXT_LOST: i32 = 70;

/// How the worker process runs; the command line that fills it lives in `cli.rs`.
#[derive(Clone, Debug, Default)]
pub struct WorkerConfig {
    /// NVML telemetry samples per second; 0 is off.
    pub telemetry_hz: f64,
    /// Longest A/B race, seconds.
    pub ab_seconds: f64,
    /// Metric names for `g` (None: the catalogue and the default gates').
    pub metric_names: Option<Vec<String>>,
    /// Kernel folders by label ("" replaces the bundled kernel as the
    /// primary one), registered as the dashboard registered them.
    pub kernels: Vec<(String, std::path::PathBuf)>,
}

/// Parses one command line; the error names the line and what was wrong.
pub fn parse_command(line: &str) -> Result<Command, String> {
    serde_json::from_str(line).map_err(|e| format!("not a command: {e}"))
}

pub fn serve(args: WorkerConfig) -> i32 {
    let started = Instant::now();
    let out = Arc::new(Mutex::new(std::io::BufWriter::new(std::io::stdout())));
    let emit_to = |out: &Arc<Mutex<std::io::BufWriter<std::io::Stdout>>>, s: &Stamped| -> bool {
        let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
        serde_json::to_writer(&mut *w, s).is_ok() && w.write_all(b"\n").is_ok() && w.flush().is_ok()
    };
    for (label, dir) in &args.kernels {
        let loaded = crate::session::manifest::registry::read_manifest(dir).map(|m| {
            let dir = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            crate::session::manifest::registry::register(label, m, Some(dir))
        });
        if let Err(e) = loaded {
            emit_to(&out, &error(started, "worker", e));
            return crate::exit::USAGE;
        }
    }
    let mut engine = match Engine::new() {
        Ok(e) => e,
        Err(e) => {
            emit_to(
                &out,
                &error(
                    started,
                    "worker",
                    format!("the GPU worker cannot start: {e}"),
                ),
            );
            return crate::exit::NO_GPU;
        }
    };
    engine.use_timer(Timer::Cupti);
    let nvml = (args.telemetry_hz > 0.0).then(telemetry::open);
    let header = Stamped {
        t_us: 0,
        event: Event::Header(Worker::new_header(
            &mut engine,
            std::env::args().collect(),
            nvml.as_ref().and_then(|n| n.as_ref().ok()),
        )),
    };
    emit_to(&out, &header);
    if let Some(Ok(n)) = &nvml
        && let Some(w) = telemetry::shared_gpu_warning(n)
    {
        emit_to(&out, &error(started, "gpu", w));
    }
    let mut worker = Worker::new(engine, started);
    worker.ab_seconds = args.ab_seconds;
    if let Some(names) = args.metric_names {
        worker.metric_names = names;
    }
    let _sampler = match nvml {
        Some(Ok(nvml)) => {
            let (o1, o2) = (Arc::clone(&out), Arc::clone(&out));
            let sampler = Sampler::spawn(
                nvml,
                args.telemetry_hz,
                move |t| emit_to(&o1, &Stamped::since(started, Event::Telemetry(t))),
                move |e| {
                    emit_to(&o2, &error(started, "nvml", e));
                },
            );
            worker.set_telemetry(Arc::clone(&sampler.shared));
            Some(sampler)
        }
        Some(Err(e)) => {
            emit_to(&out, &error(started, "nvml", e));
            None
        }
        None => None,
    };
    let (tx, rx) = mpsc::channel();
    let commands_out = Arc::clone(&out);
    std::thread::spawn(move || {
        for (i, line) in std::io::stdin().lock().lines().enumerate() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            match parse_command(&line) {
                Ok(c) => {
                    if tx.send(c).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let message = format!("command line {}: {e}", i + 1);
                    emit_to(&commands_out, &error(started, "protocol", message));
                }
            }
        }
        // The dashboard went away: stop.
        let _ = tx.send(Command::Shutdown);
    });
    let run_out = Arc::clone(&out);
    worker.run(rx, move |s| emit_to(&run_out, &s));
    if worker.poisoned {
        EXIT_CONTEXT_LOST
    } else {
        0
    }
}

/// An error event from `source` (worker, gpu, nvml, protocol), not tied to a variant.
fn error(started: Instant, source: &str, message: String) -> Stamped {
    Stamped::since(
        started,
        Event::Error(ErrorReport {
            source: source.into(),
            message,
            variant: None,
        }),
    )
}
