//! `attnscope worker`: the GPU worker as a process of its own, here or on
//! another machine. Commands arrive as JSON lines on stdin, numbered events
//! leave as JSON lines on stdout (session/protocol.rs). A kernel that
//! faults kills this process, never the dashboard; see supervisor.rs for
//! the other side.

use std::sync::{Arc, mpsc};
use std::time::Instant;

use crate::gpu::engine::{Engine, Timer};
use crate::gpu::executor::Worker;
use crate::gpu::telemetry::{self, Sampler};
use crate::session::command::Command;
use crate::session::event::{Event, Stamped};
use crate::session::manifest::registry::KernelId;
use crate::session::manifest::{Manifest, registry};
use crate::session::protocol::{self, FromWorker, Hello, KernelFiles, LinkWriter, Setup};

/// Exit code after the CUDA context died (the supervisor restarts on any exit).
pub const EXIT_CONTEXT_LOST: i32 = 70;

/// How the worker process runs: from its command line when the
/// dashboard's hello brings no setup, else from the hello.
#[derive(Clone, Debug, Default)]
pub struct WorkerConfig {
    /// NVML telemetry samples per second; 0 is off.
    pub telemetry_hz: f64,
    /// Longest A/B race, seconds.
    pub ab_seconds: f64,
    /// Metric names for `g` (None: the catalogue and the default gates').
    pub metric_names: Option<Vec<String>>,
    /// Kernel folders by label ("" replaces the bundled kernel as the
    /// primary one), as the dashboard registered them.
    pub kernels: Vec<KernelFiles>,
    /// The GPU (`--device`: an ordinal or a UUID); None: device 0.
    pub device: Option<String>,
}

impl WorkerConfig {
    /// The dashboard's setup, its numbers held to the command line's ranges:
    /// a rate or a race length no dashboard of ours sends (NaN, infinite,
    /// negative) is refused in one line, never run as a busy loop or an
    /// endless race. No race length (0) is the command line's default.
    pub fn from_setup(s: Setup) -> Result<WorkerConfig, String> {
        if !(0.0..=100.0).contains(&s.telemetry_hz) {
            return Err(format!(
                "the dashboard asks for telemetry at {} Hz: 0 (off) to 100 expected",
                s.telemetry_hz
            ));
        }
        let ab_seconds = match s.ab_seconds {
            0.0 => 10.0,
            v if (0.5..=600.0).contains(&v) => v,
            v => {
                return Err(format!(
                    "the dashboard asks for races of up to {v} s: 0.5 to 600 expected"
                ));
            }
        };
        Ok(WorkerConfig {
            telemetry_hz: s.telemetry_hz,
            ab_seconds,
            metric_names: s.metric_names,
            kernels: s.kernels,
            device: s.device,
        })
    }
}

/// Parses one command line; the error names the line and what was wrong.
pub fn parse_command(line: &str) -> Result<Command, String> {
    serde_json::from_str(line).map_err(|e| format!("not a command: {e}"))
}

type Link = LinkWriter<std::io::BufWriter<std::io::Stdout>>;

/// The worker: says hello, reads the dashboard's, then runs the headless
/// command the hello names or serves commands until told to stop.
pub fn serve(args: WorkerConfig) -> i32 {
    let started = Instant::now();
    let out: Arc<Link> = Arc::new(LinkWriter::new(std::io::BufWriter::new(std::io::stdout())));
    out.line(&FromWorker::Hello(Hello::new(None)));
    let setup = match protocol::read_hello(&mut std::io::stdin().lock()) {
        Ok(Some(h)) => h.setup,
        Ok(None) => return 0,
        Err(e) => {
            out.event(&error(started, "protocol", e));
            return crate::exit::USAGE;
        }
    };
    if let Some(Setup {
        job: Some(job),
        kernels,
        ..
    }) = &setup
    {
        return super::far_command::run(job, kernels, &out);
    }
    let args = match setup.map(WorkerConfig::from_setup) {
        None => args,
        Some(Ok(a)) => a,
        Some(Err(e)) => {
            out.event(&error(started, "protocol", e));
            return crate::exit::USAGE;
        }
    };
    serve_commands(args, started, out)
}

/// The device the dashboard asked for, and the kernels it sent registered
/// under their labels. Err: a usage error, said on the link.
fn prepare(args: &WorkerConfig) -> Result<Vec<(KernelId, &KernelFiles)>, String> {
    if let Some(d) = &args.device {
        let spec = d
            .parse::<crate::gpu::device::DeviceSpec>()
            .map_err(|e| format!("--device {d}: {e}"))?;
        crate::gpu::device::select(spec);
    }
    args.kernels
        .iter()
        .map(|k| {
            Manifest::parse(&k.manifest, &format!("{}/{}", k.folder, k.manifest_file))
                .map(|m| (registry::register(&k.label, m, None), k))
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn serve_commands(args: WorkerConfig, started: Instant, out: Arc<Link>) -> i32 {
    let registered = match prepare(&args) {
        Ok(r) => r,
        Err(e) => {
            out.event(&error(started, "worker", e));
            return crate::exit::USAGE;
        }
    };
    let mut engine = match Engine::new() {
        Ok(e) => e,
        Err(e) => {
            out.event(&error(
                started,
                "worker",
                format!("the GPU worker cannot start: {e}"),
            ));
            return crate::exit::NO_GPU;
        }
    };
    // The kernels build from the text the dashboard sent, not from a folder
    // this machine may not have.
    for (id, k) in registered {
        let m = registry::manifest(id);
        let program = crate::gpu::nvrtc::Program {
            text: k.source.clone(),
            file: m.source.clone(),
            headers: k.headers.clone(),
            entry: m.entry.clone(),
        };
        crate::gpu::cupti_timer::register_entry(&program.entry);
        engine.swap_source(id, program);
    }
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
    out.event(&header);
    if let Some(note) = engine.placement_note() {
        out.event(&error(started, "placements", note.to_string()));
    }
    if let Some(Ok(n)) = &nvml
        && let Some(w) = telemetry::shared_gpu_warning(n)
    {
        out.event(&error(started, "gpu", w));
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
                move |t| o1.event(&Stamped::since(started, Event::Telemetry(t))),
                move |e| {
                    o2.event(&error(started, "nvml", e));
                },
            );
            worker.set_telemetry(Arc::clone(&sampler.shared));
            Some(sampler)
        }
        Some(Err(e)) => {
            out.event(&error(started, "nvml", e));
            None
        }
        None => None,
    };
    let (tx, rx) = mpsc::channel();
    let commands_out = Arc::clone(&out);
    std::thread::spawn(move || {
        // The hello was line 1.
        for (i, line) in protocol::lines(std::io::stdin().lock()).enumerate() {
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
                    let message = format!("command line {}: {e}", i + 2);
                    commands_out.event(&error(started, "protocol", message));
                }
            }
        }
        // The dashboard went away: stop.
        let _ = tx.send(Command::Shutdown);
    });
    let run_out = Arc::clone(&out);
    worker.run(rx, move |s| run_out.event(&s));
    // For soaks: what was sent, to hold against what the dashboard recorded.
    eprintln!(
        "attnscope: worker: sent {} events in {:.1} s",
        out.sent(),
        started.elapsed().as_secs_f64()
    );
    if worker.poisoned {
        EXIT_CONTEXT_LOST
    } else {
        0
    }
}

/// An error event from `source` (worker, gpu, nvml, protocol), not tied to a variant.
fn error(started: Instant, source: &str, message: String) -> Stamped {
    Stamped::since(started, Event::error(source, message, None))
}
