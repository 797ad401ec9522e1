//! Live mode: the worker on its own thread feeding the dashboard.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

use std::sync::Arc;

use super::engine::Engine;
use super::nvrtc::KERNEL_SOURCE;
use super::telemetry::Sampler;
use super::worker::Worker;
use crate::cli::LiveArgs;
use crate::metrics::gates::GateSet;
use crate::session::command::Command;
use crate::session::event::{Event, Stamped};
use crate::session::recorder::Recorder;
use crate::session::{Shape, Variant};
use crate::ui::app::{self, Outlets, UiMsg};
use crate::ui::app_state::UiState;

pub fn run(args: LiveArgs, gates: GateSet) -> anyhow::Result<i32> {
    let defs =
        crate::metrics::catalogue::load(args.metrics.as_deref()).map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    let mut engine = Engine::new(KERNEL_SOURCE.to_string())?;
    engine.use_timer(super::engine::Timer::Cupti);
    let mut worker = Worker::new(engine, started);
    worker.ab_seconds = args.ab_seconds;
    worker.metric_names = crate::metrics::catalogue::collect_list(&defs, &gates);
    let nvml = if args.telemetry_hz > 0.0 {
        Some(super::telemetry::open())
    } else {
        None
    };
    let header = Stamped {
        t_us: 0,
        event: Event::Header(worker.header(
            std::env::args().collect(),
            nvml.as_ref().and_then(|n| n.as_ref().ok()),
        )),
    };
    let (tx, rx) = mpsc::channel();
    let (cmd_tx, cmd_rx) = mpsc::channel();
    let recorder = match &args.record {
        Some(p) => Some(
            Recorder::create(p)
                .map_err(|e| anyhow::anyhow!("cannot record to {}: {e}", p.display()))?,
        ),
        None => None,
    };
    tx.send(UiMsg::Stream(Box::new(header.clone())))?;
    let variant = args.variant.unwrap_or(Variant::FULL);
    let shape = args.shape.unwrap_or(Shape::MISSION);
    cmd_tx.send(Command::Select { variant, shape })?;
    let _sampler = match nvml {
        Some(Ok(nvml)) => {
            let (ttx, etx) = (tx.clone(), tx.clone());
            let sampler = Sampler::spawn(
                nvml,
                args.telemetry_hz,
                move |t| {
                    ttx.send(UiMsg::Stream(Box::new(Stamped::since(
                        started,
                        Event::Telemetry(t),
                    ))))
                    .is_ok()
                },
                move |e| {
                    let _ = etx.send(UiMsg::Stream(Box::new(nvml_error(started, e))));
                },
            );
            worker.set_telemetry(Arc::clone(&sampler.shared));
            Some(sampler)
        }
        Some(Err(e)) => {
            tx.send(UiMsg::Stream(Box::new(nvml_error(started, e))))?;
            None
        }
        None => None,
    };
    let stream_tx = tx.clone();
    let worker_thread = std::thread::spawn(move || {
        worker.run(cmd_rx, |s| {
            stream_tx.send(UiMsg::Stream(Box::new(s))).is_ok()
        });
    });
    let mut state = UiState::live(gates);
    if let (Some(p), crate::ui::app_state::Mode::Live { recording, .. }) =
        (&args.record, &mut state.mode)
    {
        *recording = Some(p.display().to_string());
    }
    let make = move |ui: &UiState| -> std::io::Result<Recorder> {
        let path = default_recording_path(ui);
        let mut rec = Recorder::create(&path)?;
        // A recording started mid-session opens with the header and the
        // current variant, so it replays on its own.
        rec.append(&header)?;
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
        recorder,
        new_recording: Some(Box::new(make)),
        started: Some(started),
        ..Outlets::default()
    };
    app::run(state, rx, tx, outlets)?;
    let _ = worker_thread.join();
    Ok(0)
}

fn nvml_error(started: Instant, message: String) -> Stamped {
    Stamped::since(
        started,
        Event::Error(crate::session::event::ErrorReport {
            source: "nvml".into(),
            message,
            variant: None,
        }),
    )
}

/// `sessions/<date>_<gpu>_<shape>.jsonl` under the working directory.
pub fn default_recording_path(ui: &UiState) -> PathBuf {
    let gpu = ui
        .session
        .header
        .as_ref()
        .and_then(|h| h.gpu.as_ref())
        .map_or("gpu".to_string(), |g| {
            g.name.replace("NVIDIA ", "").replace(' ', "-")
        });
    let shape = ui.session.current.map_or("none".to_string(), |k| {
        format!("b{}h{}s{}d{}", k.shape.b, k.shape.h, k.shape.s, k.shape.d)
    });
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    PathBuf::from("sessions").join(format!("{}_{gpu}_{shape}.jsonl", utc_stamp(secs)))
}

/// `YYYYmmdd-HHMMSS` in UTC, from Unix seconds (civil-from-days).
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_stamps() {
        assert_eq!(super::utc_stamp(0), "19700101-000000");
        assert_eq!(super::utc_stamp(1_795_318_245), "20261122-033045");
    }
}
