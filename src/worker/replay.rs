//! `attnscope worker --replay FILE [--rate X]`: a worker with no GPU. It
//! speaks the worker's protocol and re-emits a recorded session's events
//! with fresh timestamps, paced as recorded (times `--rate`), looping; asked
//! to run a headless command it sends the session once at once, its summary
//! as the command's output, said to be a recording's, and exit code 0. Its
//! header names the recording (`replayed_from`), so a dashboard shows it as
//! a replay. The remote path, dropped links, gaps and soaks are tested with
//! it on machines without a GPU; it is also a demo.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::model::SessionState;
use crate::session::command::Command;
use crate::session::event::{Event, Stamped};
use crate::session::protocol::{self, FromWorker, Hello, LinkWriter};
use crate::session::reader::{self, OnCorrupt};

pub struct ReplayWorker<'a> {
    pub file: &'a Path,
    /// Multiple of the recorded event rate.
    pub rate: f64,
    /// Every Nth event goes out garbled (0: none), for tests of the link.
    pub garble_every: u64,
}

impl ReplayWorker<'_> {
    pub fn serve(&self) -> i32 {
        let mut events = Vec::new();
        let read = reader::read_file(self.file, OnCorrupt::Skip, |s| {
            events.push(s);
            true
        });
        let read = match read {
            Ok(r) => r,
            Err(e) => {
                // Said before the hello, so the dashboard's connect names it.
                eprintln!("attnscope: replaying worker: {e}");
                return e.exit_code();
            }
        };
        let Some(Stamped {
            event: Event::Header(mut header),
            ..
        }) = events.first().cloned()
        else {
            eprintln!(
                "attnscope: replaying worker: {} has no header",
                self.file.display()
            );
            return crate::exit::USAGE;
        };
        let started = Instant::now();
        let out = Arc::new(LinkWriter::new(std::io::BufWriter::new(std::io::stdout())));
        out.line(&FromWorker::Hello(Hello::new(None)));
        let setup = match protocol::read_hello(&mut std::io::stdin().lock()) {
            Ok(Some(h)) => h.setup,
            Ok(None) => return 0,
            Err(e) => {
                out.event(&error(started, e));
                return crate::exit::USAGE;
            }
        };
        header.command_line = std::env::args().collect();
        let what = recording_label(self.file, &header);
        header.replayed_from = Some(what.clone());
        header.started_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        // Paced in time order: a file need not be (a session merged before
        // merges sorted by time holds one GPU's events, then the other's).
        events[1..].sort_by_key(|s| s.t_us);
        let body = &events[1..];
        out.event(&Stamped {
            t_us: 0,
            event: Event::Header(header),
        });
        if setup.as_ref().is_some_and(|s| s.job.is_some()) {
            // A headless run: the session once, as fast as the link takes it (pacing a
            // recording is a wait with nothing to learn), then what `replay --summary` prints,
            // said to be a recording's before and after, so no one reads it as a run here.
            let note = format!(
                "attnscope: this worker replays a recording, {what}: nothing runs on a GPU; \
                 what follows is the recording's summary, not a result of this command"
            );
            out.line(&FromWorker::Err(note));
            self.pace(body, started, &out, &|| false, false);
            let mut state = SessionState::default();
            for s in &events {
                state.apply(s);
            }
            match crate::metrics::gates::GateSet::load(None) {
                Ok(gates) => {
                    out.line(&FromWorker::Out(format!(
                        "replayed from {what}, not measured now"
                    )));
                    for line in crate::export::summary::to_text(&state, &gates, &read).lines() {
                        out.line(&FromWorker::Out(line.to_string()));
                    }
                    out.line(&FromWorker::Err(format!(
                        "attnscope: above is the summary of a recording, {what}, not a result of this command"
                    )));
                }
                Err(e) => {
                    out.line(&FromWorker::Err(format!("attnscope: {e}")));
                }
            }
            out.line(&FromWorker::Exit(0));
            return 0;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stop_reader = Arc::clone(&stop);
        std::thread::spawn(move || {
            for line in crate::session::protocol::lines(std::io::stdin().lock()) {
                if matches!(
                    crate::worker::process::parse_command(&line),
                    Ok(Command::Shutdown)
                ) {
                    break;
                }
            }
            stop_reader.store(true, Ordering::Relaxed);
        });
        if body.is_empty() {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            return 0;
        }
        let stopped = || stop.load(Ordering::Relaxed);
        let mut loops = 0u64;
        while self.pace(body, started, &out, &stopped, true) {
            loops += 1;
        }
        // For soaks: what was sent, to hold against what was recorded.
        eprintln!(
            "attnscope: replaying worker: sent {} events ({loops} whole loops) in {:.1} s",
            out.sent(),
            started.elapsed().as_secs_f64()
        );
        0
    }

    /// Sends `events` once at the recorded pace over `rate`, stamped on this
    /// process's clock; unpaced, at once, stamped at their recorded offsets.
    /// False when stopped or the link is gone.
    fn pace<W: Write>(
        &self,
        events: &[Stamped],
        started: Instant,
        out: &LinkWriter<W>,
        stopped: &dyn Fn() -> bool,
        paced: bool,
    ) -> bool {
        let Some(first) = events.first() else {
            return true;
        };
        let begin = Instant::now();
        for s in events {
            let due = begin
                + Duration::from_secs_f64(
                    s.t_us.saturating_sub(first.t_us) as f64 / 1e6 / self.rate,
                );
            // Sleep in short steps so a stop is seen within 50 ms.
            loop {
                if stopped() {
                    return false;
                }
                let now = Instant::now();
                if !paced || now >= due {
                    break;
                }
                std::thread::sleep((due - now).min(Duration::from_millis(50)));
            }
            let fresh = Stamped {
                t_us: if paced {
                    started.elapsed().as_micros() as u64
                } else {
                    s.t_us.saturating_sub(first.t_us)
                },
                event: s.event.clone(),
            };
            let garble = self.garble_every;
            let sent = out.event_with(&fresh, |seq, line| {
                if garble > 0 && seq.is_multiple_of(garble) {
                    let mut cut = line.len() / 2;
                    while !line.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    line[..cut].to_string()
                } else {
                    line
                }
            });
            if !sent {
                return false;
            }
        }
        true
    }
}

/// `FILE (recorded 2026-11-23 18:08 UTC on NVIDIA H100 80GB HBM3)`.
fn recording_label(file: &Path, header: &crate::session::event::SessionHeader) -> String {
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    let stamp = crate::metrics::format::utc_stamp(header.started_unix_ms / 1000);
    let when = format!(
        "{}-{}-{} {}:{} UTC",
        &stamp[..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13]
    );
    let gpu = header
        .gpu
        .as_ref()
        .map_or("no GPU named".to_string(), |g| g.name.clone());
    format!("{name} (recorded {when} on {gpu})")
}

fn error(started: Instant, message: String) -> Stamped {
    Stamped::since(started, Event::error("worker", message, None))
}
