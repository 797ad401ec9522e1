//! The dashboard's side of the worker process: spawns `attnscope worker`,
//! forwards commands to its stdin and its events to the screen (restamped on
//! the dashboard's clock), and when it dies (a faulting kernel, a lost
//! context, a signal) says so with the variant that was running, starts a
//! fresh one and goes back to the last variant that passed its check.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command as Process, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::session::command::Command;
use crate::session::event::{ErrorReport, Event, Stamped, VariantSelected};
use crate::session::{Shape, Variant};

/// More deaths than this within `RESTART_WINDOW` and we stop restarting.
const MAX_RESTARTS: usize = 3;
const RESTART_WINDOW: Duration = Duration::from_secs(30);
/// Lines of the worker's stderr kept for the death notice.
const STDERR_KEEP: usize = 8;

/// Where the supervisor delivers: the worker's events, restamped on the
/// dashboard's clock, and one last line when there is no worker any more.
/// The top of the program decides what a delivery is (a screen message, a
/// test's vector), so this room knows nothing above it.
pub trait Feed: Send + Sync + 'static {
    /// False when nobody is listening any more.
    fn event(&self, s: Stamped) -> bool;
    fn ended(&self, why: String);
}

/// What the dashboard learns from the worker's events, to recover with.
#[derive(Default)]
struct Track {
    current: Option<(Variant, Shape)>,
    /// The newest variant whose correctness check passed.
    last_good: Option<(Variant, Shape)>,
    header_seen: bool,
}

impl Track {
    fn see(&mut self, e: &Event) {
        match e {
            Event::VariantSelected(VariantSelected { variant, shape }) => {
                self.current = Some((*variant, *shape));
            }
            Event::Correctness(c) if c.pass => self.last_good = Some((c.variant, c.shape)),
            _ => {}
        }
    }
}

/// Starts the supervisor; returns where commands go. `args` are the worker's
/// own arguments; `first` is the first selection.
pub fn spawn(
    args: Vec<String>,
    first: Command,
    started: Instant,
    ui: Arc<dyn Feed>,
) -> Sender<Command> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || supervise(args, first, started, ui, rx));
    tx
}

fn error(started: Instant, message: String, variant: Option<Variant>) -> Stamped {
    Stamped::since(
        started,
        Event::Error(ErrorReport {
            source: "worker".into(),
            message,
            variant,
        }),
    )
}

fn supervise(
    args: Vec<String>,
    first: Command,
    started: Instant,
    ui: Arc<dyn Feed>,
    commands: Receiver<Command>,
) {
    let track = Arc::new(Mutex::new(Track::default()));
    let mut deaths: VecDeque<Instant> = VecDeque::new();
    let mut next_select = Some(first);
    let mut pending_after_select: Option<Command> = None;
    loop {
        let exe = std::env::current_exe().unwrap_or_else(|_| "attnscope".into());
        let mut child = match Process::new(&exe)
            .arg("worker")
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                ui.event(error(
                    started,
                    format!("cannot start the worker process {}: {e}", exe.display()),
                    None,
                ));
                ui.ended("no GPU worker".into());
                return;
            }
        };
        let offset_us = started.elapsed().as_micros() as u64;
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let readers = start_readers(&mut child, offset_us, &ui, &track, &stderr_tail, done_tx);
        let mut stdin = child.stdin.take();
        if let Some(cmd) = next_select.take() {
            send(&mut stdin, &cmd);
        }
        if let Some(cmd) = pending_after_select.take() {
            send(&mut stdin, &cmd);
        }
        // Forward commands until the worker ends or the dashboard quits.
        let quit = loop {
            match commands.recv_timeout(Duration::from_millis(100)) {
                Ok(Command::Shutdown) => {
                    send(&mut stdin, &Command::Shutdown);
                    break true;
                }
                Ok(cmd) => {
                    if !send(&mut stdin, &cmd) {
                        break false;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break true,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if done_rx.try_recv().is_ok() {
                break false;
            }
        };
        drop(stdin);
        if quit {
            wait_briefly(&mut child);
            for r in readers {
                let _ = r.join();
            }
            return;
        }
        let status = child.wait();
        for r in readers {
            let _ = r.join();
        }
        // `pkill attnscope`, a closed terminal, Ctrl-C to the process group:
        // the dashboard is going too. Give it a moment to say so before
        // calling this a crash.
        let mut held = None;
        if status
            .as_ref()
            .ok()
            .and_then(std::os::unix::process::ExitStatusExt::signal)
            .is_some_and(|sig| [libc::SIGTERM, libc::SIGINT, libc::SIGHUP].contains(&sig))
        {
            match commands.recv_timeout(Duration::from_millis(500)) {
                Ok(Command::Shutdown) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(other) => held = Some(other),
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        let (current, last_good) = {
            let t = track.lock().unwrap_or_else(|e| e.into_inner());
            (t.current, t.last_good)
        };
        let tail: Vec<String> = stderr_tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect();
        let now = Instant::now();
        deaths.push_back(now);
        while deaths
            .front()
            .is_some_and(|t| now.duration_since(*t) > RESTART_WINDOW)
        {
            deaths.pop_front();
        }
        // Back to the last variant that passed its check. If that is what was
        // running: killed from outside (a signal), it goes on; if its own
        // launch failed, the scalar baseline takes over.
        let signalled = status
            .as_ref()
            .is_ok_and(|s| std::os::unix::process::ExitStatusExt::signal(s).is_some());
        let back = match (last_good, current) {
            (Some(good), Some(cur)) if good != cur || signalled => Some(good),
            (_, Some((cur, shape))) if cur.is_cudnn() => Some((Variant::base(), shape)),
            (_, Some((cur, shape))) => Some((Variant::base_of(cur.kernel), shape)),
            (good, None) => good,
        };
        let giving_up = deaths.len() > MAX_RESTARTS;
        let mut message = format!(
            "worker process {} while running {}",
            describe(status.ok()),
            current.map_or("nothing".into(), |(v, s)| format!("{v} at {s}"))
        );
        if !tail.is_empty() {
            message.push_str(&format!("; its last output: {}", tail.join(" | ")));
        }
        if giving_up {
            message.push_str(&format!(
                "; it died {} times in {} s, so it is not restarted (the session file is intact)",
                deaths.len(),
                RESTART_WINDOW.as_secs()
            ));
        } else {
            message.push_str(&match back {
                Some((v, s)) => format!("; restarting it with {v} at {s}"),
                None => "; restarting it".into(),
            });
        }
        ui.event(error(started, message, current.map(|c| c.0)));
        if giving_up {
            ui.ended("the GPU worker keeps dying".into());
            return;
        }
        next_select = back.map(|(variant, shape)| Command::Select { variant, shape });
        if let Some(cmd) = held {
            // Not lost: it goes to the new worker after the selection.
            pending_after_select = Some(cmd);
        }
    }
}

fn start_readers(
    child: &mut Child,
    offset_us: u64,
    ui: &Arc<dyn Feed>,
    track: &Arc<Mutex<Track>>,
    stderr_tail: &Arc<Mutex<VecDeque<String>>>,
    done: Sender<()>,
) -> Vec<std::thread::JoinHandle<()>> {
    let mut handles = Vec::new();
    if let Some(out) = child.stdout.take() {
        let (ui, track) = (Arc::clone(ui), Arc::clone(track));
        handles.push(std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let Ok(mut s) = serde_json::from_str::<Stamped>(&line) else {
                    continue;
                };
                s.t_us += offset_us;
                {
                    let mut t = track.lock().unwrap_or_else(|e| e.into_inner());
                    if let Event::Header(h) = &mut s.event {
                        // One session, one header: a restarted worker's is not news.
                        if std::mem::replace(&mut t.header_seen, true) {
                            continue;
                        }
                        // The session was started by the dashboard's command line.
                        h.command_line = std::env::args().collect();
                    }
                    t.see(&s.event);
                }
                if !ui.event(s) {
                    break;
                }
            }
            let _ = done.send(());
        }));
    }
    if let Some(err) = child.stderr.take() {
        let tail = Arc::clone(stderr_tail);
        handles.push(std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                if t.len() == STDERR_KEEP {
                    t.pop_front();
                }
                t.push_back(line);
            }
        }));
    }
    handles
}

fn send(stdin: &mut Option<ChildStdin>, cmd: &Command) -> bool {
    let Some(w) = stdin.as_mut() else {
        return false;
    };
    let Ok(mut line) = serde_json::to_vec(cmd) else {
        return false;
    };
    line.push(b'\n');
    w.write_all(&line).and_then(|_| w.flush()).is_ok()
}

/// Gives a worker told to shut down two seconds, then kills it.
fn wait_briefly(child: &mut Child) {
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// "exited with code 70 (CUDA context lost)", "was killed by signal 11 (SIGSEGV)".
pub fn describe(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    let Some(status) = status else {
        return "ended (status unknown)".into();
    };
    if let Some(code) = status.code() {
        let why = match code {
            super::worker_process::EXIT_CONTEXT_LOST => " (CUDA context lost)",
            4 => " (no usable GPU)",
            _ => "",
        };
        return format!("exited with code {code}{why}");
    }
    match status.signal() {
        Some(sig) => format!("was killed by signal {sig} ({})", signal_name(sig)),
        None => "ended".into(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn deaths_are_described() {
        assert_eq!(
            describe(Some(ExitStatus::from_raw(70 << 8))),
            "exited with code 70 (CUDA context lost)"
        );
        assert_eq!(
            describe(Some(ExitStatus::from_raw(libc::SIGSEGV))),
            "was killed by signal 11 (SIGSEGV)"
        );
    }

    #[test]
    fn last_good_follows_passing_checks_only() {
        use crate::session::event::CorrectnessReport;
        let mut t = Track::default();
        let full = (Variant::start(), Shape::MISSION);
        t.see(&Event::VariantSelected(VariantSelected {
            variant: full.0,
            shape: full.1,
        }));
        t.see(&Event::Correctness(CorrectnessReport {
            variant: full.0,
            shape: full.1,
            pass: true,
            ..CorrectnessReport::default()
        }));
        let bad: Variant = "wmma+fault".parse().unwrap();
        t.see(&Event::VariantSelected(VariantSelected {
            variant: bad,
            shape: full.1,
        }));
        t.see(&Event::Correctness(CorrectnessReport {
            variant: bad,
            shape: full.1,
            pass: false,
            ..CorrectnessReport::default()
        }));
        assert_eq!(t.last_good, Some(full));
        assert_eq!(t.current, Some((bad, full.1)));
    }
}
