//! The headless commands, one file each: bench, ab, selftest, build, doctor,
//! gates, tune. They drive the GPU room's engine and print tables or JSON;
//! this file keeps what they share: the session sink, the run setup with its
//! telemetry, and the error helpers.

mod ab;
mod ab_repeat;
mod ab_runs;
mod bench;
mod bench_runs;
mod build;
mod calibrate;
mod clocks;
mod doctor;
mod doctor_python;
pub mod gates;
mod mutation_paths;
mod mutations;
mod new;
mod offsets;
mod processes;
mod selftest;
mod sweep;
pub mod tune;
mod tune_model;
mod tune_race;

pub use ab::ab;
pub use ab_runs::ab_runs;
pub use bench::bench;
pub use bench_runs::bench_runs;
pub use build::{build, smem_limit};
pub use clocks::clocks;
pub use doctor::doctor;
pub use new::{new_kernel, write_starter};
pub use selftest::{selftest, selftest_shapes};
pub use sweep::sweep;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Instant;

use crate::cli::exit;
use crate::gpu::engine::{Engine, Timer};
use crate::gpu::executor::Worker;
use crate::gpu::telemetry::{self, Sampler};
use crate::session::event::*;
use crate::session::recorder::Recorder;
use crate::session::sink::EventSink;

/// A headless run's events: stamped on the run's clock and written through
/// the one event sink (session/sink.rs) to the session file, when asked
/// for, and to the worker running this command for a dashboard elsewhere.
struct Sink {
    out: EventSink,
    started: Instant,
    telemetry: mpsc::Receiver<Stamped>,
    /// The dashboard's fold of what was written, for commands that judge it.
    state: Option<crate::model::state::SessionState>,
}

impl Sink {
    fn new(
        path: Option<&Path>,
        started: Instant,
        telemetry: mpsc::Receiver<Stamped>,
    ) -> Result<Sink, String> {
        let recorder = path
            .map(|p| {
                Recorder::create(p).map_err(|e| format!("cannot record to {}: {e}", p.display()))
            })
            .transpose()?;
        // A worker running this command (worker/far_command.rs) takes every event too.
        let forward: Option<Box<dyn std::io::Write + Send>> =
            match std::env::var_os(crate::worker::far_command::EVENTS_SOCKET_ENV) {
                Some(p) => Some(Box::new(std::io::BufWriter::new(
                    std::os::unix::net::UnixStream::connect(&p).map_err(|e| {
                        format!(
                            "cannot reach the worker's events socket {}: {e}",
                            p.display()
                        )
                    })?,
                ))),
                None => None,
            };
        Ok(Sink {
            out: EventSink::new(recorder, forward),
            started,
            telemetry,
            state: None,
        })
    }

    fn event(&mut self, event: Event) {
        self.stamped(Stamped::since(self.started, event));
    }

    fn stamped(&mut self, s: Stamped) {
        let stopped = match self.state.as_mut() {
            Some(state) => self.out.put(&s, state),
            None => self.out.put(&s, &mut ()),
        };
        for line in stopped {
            eprintln!("attnscope: {line}");
        }
    }

    /// Moves pending telemetry samples into the session.
    fn drain(&mut self) {
        while let Ok(s) = self.telemetry.try_recv() {
            self.stamped(s);
        }
    }
}

/// What a headless GPU run starts with: the engine on the chosen timer, the
/// session sink (with its header written) and the telemetry sampler.
struct Run {
    engine: Engine,
    sink: Sink,
    sampler: Option<Sampler>,
    started: Instant,
}

impl Run {
    /// Err holds the exit code, the reason already printed.
    /// The kernels are the registered ones (`--kernels DIR` made its folder
    /// the primary kernel before the command line was read).
    fn start(timer: Timer, telemetry_hz: f64, record: Option<&Path>) -> Result<Run, i32> {
        let mut engine = Engine::new().map_err(|e| fail(exit::NO_GPU, e))?;
        engine.use_timer(timer);
        if let Some(note) = &engine.timer_note {
            eprintln!("attnscope: {note}");
        }
        if let Some(note) = engine.placement_note() {
            eprintln!("attnscope: {note}");
        }
        let started = Instant::now();
        let (sampler, nvml, telemetry_rx) = start_telemetry(&mut engine, telemetry_hz, started);
        let shared = nvml
            .as_ref()
            .map(telemetry::shared_gpu_warning)
            .or_else(|| {
                telemetry::open()
                    .ok()
                    .map(|n| telemetry::shared_gpu_warning(&n))
            })
            .flatten();
        if let Some(w) = &shared {
            eprintln!("attnscope: warning: {w}");
        }
        let mut sink =
            Sink::new(record, started, telemetry_rx).map_err(|e| fail(exit::USAGE, e))?;
        sink.event(Event::Header(Worker::new_header(
            &mut engine,
            std::env::args().collect(),
            nvml.as_ref(),
        )));
        if let Some(w) = shared {
            sink.event(Event::Error(ErrorReport {
                source: "gpu".into(),
                message: w,
                variant: None,
            }));
        }
        Ok(Run {
            engine,
            sink,
            sampler,
            started,
        })
    }
}

/// Starts NVML telemetry for a headless run; samples go to `record` via a
/// channel drained by the caller.
fn start_telemetry(
    engine: &mut Engine,
    hz: f64,
    started: Instant,
) -> (
    Option<Sampler>,
    Option<nvml_wrapper::Nvml>,
    mpsc::Receiver<Stamped>,
) {
    let (tx, rx) = mpsc::channel();
    if hz <= 0.0 {
        return (None, None, rx);
    }
    match (telemetry::open(), telemetry::open()) {
        (Ok(nvml), Ok(for_header)) => {
            let sampler = Sampler::spawn(
                nvml,
                hz,
                move |t| {
                    tx.send(Stamped::since(started, Event::Telemetry(t)))
                        .is_ok()
                },
                |e| eprintln!("attnscope: telemetry stopped: {e}"),
            );
            engine.telemetry = Some(Arc::clone(&sampler.shared));
            (Some(sampler), Some(for_header), rx)
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("attnscope: no telemetry: {e}");
            (None, None, rx)
        }
    }
}

struct SamplerCost {
    share: f64,
    wall_s: f64,
    samples: u64,
    query_ms: f64,
}

/// The share of one core the sampler used over `wall_s`, with its breakdown.
fn sampler_cost(sampler: &Option<Sampler>, wall_s: f64) -> Option<SamplerCost> {
    let sh = &sampler.as_ref()?.shared;
    let cpu = sh.cpu_ns.load(Ordering::Relaxed) as f64 / 1e9;
    Some(SamplerCost {
        share: cpu / wall_s.max(1e-9),
        wall_s,
        samples: sh.samples.load(Ordering::Relaxed),
        query_ms: sh.query_cpu_ns.load(Ordering::Relaxed) as f64 / 1e6,
    })
}

/// Every variant's kernel runs the shape (its manifest's dtypes, head dims,
/// KV heads and key lengths); said before anything touches the GPU. Err is
/// the exit code.
fn runnable<'a>(
    variants: impl IntoIterator<Item = &'a crate::session::Variant>,
    shape: &crate::session::Shape,
) -> Result<(), i32> {
    let variants: Vec<_> = variants.into_iter().collect();
    for v in &variants {
        if let Err(e) = v.runs(shape) {
            return Err(fail(exit::USAGE, format!("{v} at {shape}: {e}")));
        }
    }
    python_needs_gpu(variants.into_iter().copied())
}

/// A `py:` variant is called in the GPU worker on the engine's buffers:
/// with no GPU it is refused by name, before Python is looked for.
fn python_needs_gpu(
    variants: impl IntoIterator<Item = crate::session::Variant>,
) -> Result<(), i32> {
    let Some(v) = variants.into_iter().find(|v| v.is_python()) else {
        return Ok(());
    };
    crate::gpu::probe().map_err(|e| {
        fail(
            exit::NO_GPU,
            format!("{v}: a Python variant runs next to the GPU, on the GPU worker's own buffers, and there is none here: {e}"),
        )
    })
}

fn fail(code: i32, message: impl std::fmt::Display) -> i32 {
    eprintln!("attnscope: {message}");
    code
}
