//! Live mode: the dashboard in this process, the GPU worker in a child
//! process (`worker/supervisor.rs`), so a faulting kernel never takes the screen down.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::time::Instant;

use crate::cli::LiveArgs;
use crate::metrics::gates::GateSet;
use crate::session::command::Command;
use crate::session::event::{Event, Stamped};
use crate::session::protocol::{KernelFiles, Setup};
use crate::session::recorder::Recorder;
use crate::session::{Shape, Variant};
use crate::ui::state::UiState;
use crate::ui::terminal::{self, Outlets, UiMsg};
use crate::worker::{supervisor, watch};

/// The supervisor's deliveries become screen messages.
struct ScreenFeed(Sender<UiMsg>);

impl supervisor::Feed for ScreenFeed {
    fn event(&self, s: Stamped) -> bool {
        self.0.send(UiMsg::Stream(Box::new(s))).is_ok()
    }
    fn ended(&self, why: String) {
        let _ = self.0.send(UiMsg::SourceEnded(why, None));
    }
}

/// What live opens with: `--variant`, else the primary kernel's start; at
/// `--shape`, else the mission shape at the kernel's first head dimension
/// when it does not run D=64; then `--dtype`, `--kv-heads`, `--kv-len` and
/// `--causal` (checked by `start_shape` when the command line is read).
pub fn start_point(args: &LiveArgs) -> (Variant, Shape) {
    let variant = args.variant.unwrap_or_else(Variant::start);
    (variant, args.start_shape(&variant))
}

pub fn run(args: LiveArgs, gates: GateSet) -> anyhow::Result<i32> {
    let defs =
        crate::metrics::catalogue::load(args.metrics.as_deref()).map_err(anyhow::Error::msg)?;
    let names = crate::metrics::catalogue::collect_list(&defs, &gates);
    // The kernel folders were registered before the command line was read
    // (`--kernels`, `--also`); the worker gets them under the same labels.
    let kernels: Vec<(String, PathBuf)> = crate::session::manifest::registry::all()
        .into_iter()
        .filter_map(|(id, k)| {
            let dir = k.dir.clone()?;
            Some((crate::session::manifest::registry::label(id), dir))
        })
        .collect();
    let started = Instant::now();
    let (tx, rx) = mpsc::channel();
    let recorder = match &args.record {
        Some(p) => Some(
            Recorder::create(p)
                .map_err(|e| anyhow::anyhow!("cannot record to {}: {e}", p.display()))?,
        ),
        None => None,
    };
    let (variant, shape) = start_point(&args);
    let place = args.remote.place();
    let telemetry_hz = args.telemetry_hz;
    let ab_seconds = args.ab_seconds;
    let setup_kernels = kernels.clone();
    let device = args.gpu.device.to_string();
    let link = supervisor::WorkerLink {
        place: place.clone(),
        setup: Box::new(move || Setup {
            telemetry_hz,
            ab_seconds,
            metric_names: Some(names.clone()),
            // Read now, so a reconnected worker builds what is on disk now;
            // a folder that cannot be read keeps its worker-side defaults
            // and the watcher reports it.
            kernels: setup_kernels
                .iter()
                .filter_map(|(label, dir)| KernelFiles::read(label, dir).ok())
                .collect(),
            device: Some(device.clone()),
            ..Setup::default()
        }),
    };
    let cmd_tx = supervisor::spawn(
        link,
        Command::Select { variant, shape },
        started,
        Arc::new(ScreenFeed(tx.clone())),
    );
    for (label, dir) in kernels {
        watch::spawn(label, dir, cmd_tx.clone());
    }
    let mut state = UiState::live(gates);
    if let crate::ui::state::Mode::Live { regime, inputs, .. } = &mut state.mode {
        if let Some(r) = args.regime {
            *regime = r;
            let _ = cmd_tx.send(Command::SetRegime { regime: r });
        }
        if let Some(i) = args.inputs {
            *inputs = i;
            let _ = cmd_tx.send(Command::SetInputs { inputs: i });
        }
    }
    if let (Some(p), crate::ui::state::Mode::Live { recording, .. }) =
        (&args.record, &mut state.mode)
    {
        *recording = Some(p.display().to_string());
    }
    if let crate::ui::state::Mode::Live { worker, .. } = &mut state.mode {
        *worker = args
            .remote
            .remote
            .clone()
            .or_else(|| args.remote.worker_cmd.clone());
    }
    let make = move |ui: &UiState| -> std::io::Result<Recorder> {
        // A recording started mid-session opens with the header and the
        // current variant, so it replays on its own; no header, no file.
        let Some(h) = &ui.session.header else {
            return Err(std::io::Error::other(
                "the GPU worker has not said hello yet: press r again in a moment",
            ));
        };
        let path = default_recording_path(ui);
        let mut rec = Recorder::create(&path)?;
        rec.append(&Stamped {
            t_us: 0,
            event: Event::Header(h.clone()),
        })?;
        if let Some(key) = ui.session.current {
            let event = Event::VariantSelected(crate::session::event::VariantSelected {
                variant: key.variant,
                shape: key.shape,
            });
            rec.append(&Stamped {
                t_us: ui.session.last_t_us,
                event,
            })?;
        }
        Ok(rec)
    };
    let outlets = Outlets {
        worker: Some(cmd_tx),
        events: crate::session::sink::EventSink::new(recorder, None),
        new_recording: Some(Box::new(make)),
        started: Some(started),
        ..Outlets::default()
    };
    terminal::run(state, rx, tx, outlets)?;
    Ok(0)
}

/// `sessions/<date>_<gpu>_<shape>.jsonl` under the working directory;
/// `…_replay.jsonl` for a recording of a replaying worker, which is a copy of
/// another session and must not pass for one of its own beside it (its header
/// says which it copies: `replayed_from`).
pub fn default_recording_path(ui: &UiState) -> PathBuf {
    let gpu = ui
        .session
        .header
        .as_ref()
        .and_then(|h| h.gpu.as_ref())
        .map_or("gpu".to_string(), |g| {
            g.name.replace("NVIDIA ", "").replace(' ', "-")
        });
    let shape = ui
        .session
        .current
        .map_or("none".to_string(), |k| k.shape.with_causal(false).compact());
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let replay = if ui.worker_replays().is_some() {
        "_replay"
    } else {
        ""
    };
    PathBuf::from("sessions").join(format!(
        "{}_{gpu}_{shape}{replay}.jsonl",
        crate::metrics::format::utc_stamp(secs)
    ))
}
