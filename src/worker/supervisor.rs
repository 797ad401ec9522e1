//! The dashboard's side of the worker: starts it (here, or wherever a
//! worker command starts it: worker/link.rs), forwards commands to its stdin
//! and its events to the screen (restamped on the dashboard's clock, gaps
//! in their numbers reported), and when it dies (a faulting kernel, a lost
//! context, a signal) says so with the variant that was running, starts a
//! fresh one and goes back to the last variant that passed its check. A
//! remote link that drops is not a death: it reconnects with backoff and
//! goes on with what was running, the recording never stopping.

use std::collections::VecDeque;
use std::process::ExitStatus;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::link::{self, Incoming, Place};
use crate::session::command::Command;
use crate::session::event::{Event, Stamped, VariantSelected};
use crate::session::protocol::{self, FromWorker, SeqCheck, Setup};
use crate::session::{Shape, Variant};

/// More deaths than this within `RESTART_WINDOW` and we stop restarting.
const MAX_RESTARTS: usize = 3;
const RESTART_WINDOW: Duration = Duration::from_secs(30);
/// Connection attempts in a row, each with no hello, before giving up.
const MAX_RECONNECTS: u32 = 8;
/// Stray lines reported one by one per connection (then every hundredth).
const GARBAGE_SHOWN: u64 = 5;

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

/// Where the worker runs and what each connection's hello carries. `setup`
/// is asked again at every (re)connection, so kernel folders are sent as
/// they are on disk then.
pub struct WorkerLink {
    pub place: Place,
    pub setup: Box<dyn Fn() -> Setup + Send>,
}

/// Starts the supervisor; returns where commands go. `first` is the first
/// selection.
pub fn spawn(
    link: WorkerLink,
    first: Command,
    started: Instant,
    ui: Arc<dyn Feed>,
) -> Sender<Command> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || supervise(link, first, started, ui, rx));
    tx
}

fn error(started: Instant, message: String, variant: Option<Variant>) -> Stamped {
    error_from(started, "worker", message, variant)
}

fn error_from(
    started: Instant,
    source: &str,
    message: String,
    variant: Option<Variant>,
) -> Stamped {
    Stamped::since(started, Event::error(source, message, variant))
}

/// Counts a death (or a dropped link) at `now`, forgetting those older
/// than the window.
fn note_death(deaths: &mut VecDeque<Instant>, now: Instant) {
    deaths.push_back(now);
    while deaths
        .front()
        .is_some_and(|t| now.duration_since(*t) > RESTART_WINDOW)
    {
        deaths.pop_front();
    }
}

/// Waits before reconnecting: 1, 2, 4, 8, 16, then 30 s.
fn backoff(attempt: u32) -> Duration {
    Duration::from_secs((1u64 << attempt.min(5)).min(30))
}

fn supervise(
    link: WorkerLink,
    first: Command,
    started: Instant,
    ui: Arc<dyn Feed>,
    commands: Receiver<Command>,
) {
    let mut s = Supervision {
        link: &link,
        started,
        ui: &ui,
        commands: &commands,
        track: Arc::new(Mutex::new(Track::default())),
        deaths: VecDeque::new(),
        next_select: Some(first),
        queued: Vec::new(),
        failed_attempts: 0,
        dropped_at: None,
        ever_connected: false,
    };
    loop {
        let offset_us = started.elapsed().as_micros() as u64;
        let mut conn = match s.connect() {
            Ok(c) => c,
            Err(Next::Again) => continue,
            Err(Next::Stop) => return,
        };
        s.announce(&conn);
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let incoming = std::mem::replace(&mut conn.incoming, mpsc::channel().1);
        let reader = deliver(incoming, offset_us, started, &ui, &s.track, done_tx);
        if let Some(cmd) = s.next_select.take() {
            send(&mut conn, &cmd);
        }
        for cmd in s.queued.drain(..) {
            send(&mut conn, &cmd);
        }
        let quit = s.forward(&mut conn, &done_rx);
        conn.stdin = None;
        if quit {
            link::end(&mut conn.child);
            let _ = reader.join();
            return;
        }
        let status = conn.child.wait();
        // What its command started and left running.
        super::group::kill(&conn.child);
        let _ = reader.join();
        if let Next::Stop = s.after_exit(&conn, status) {
            return;
        }
    }
}

/// A variant at a shape, as the supervisor tracks what runs.
type Running = (Variant, Shape);

/// What the supervision loop does next.
enum Next {
    Again,
    Stop,
}

/// The supervisor's memory across workers: what ran, what died when, what
/// waits to be sent to the next one.
struct Supervision<'a> {
    link: &'a WorkerLink,
    started: Instant,
    ui: &'a Arc<dyn Feed>,
    commands: &'a Receiver<Command>,
    track: Arc<Mutex<Track>>,
    deaths: VecDeque<Instant>,
    next_select: Option<Command>,
    queued: Vec<Command>,
    /// Connection attempts in a row that got no hello, and when the link
    /// last dropped (for the "back after" line).
    failed_attempts: u32,
    dropped_at: Option<Instant>,
    ever_connected: bool,
}

impl Supervision<'_> {
    fn say(&self, source: &str, message: String, variant: Option<Variant>) {
        self.ui
            .event(error_from(self.started, source, message, variant));
    }

    /// A worker with its hello, or what to do instead (wait and try again,
    /// or give up with the reason on screen).
    fn connect(&mut self) -> Result<link::Connection, Next> {
        let r = match link::connect(
            &self.link.place,
            Some((self.link.setup)()),
            self.link.place.hello_wait(),
            &|w| self.say("link", w.to_string(), None),
        ) {
            Ok(c) => {
                self.failed_attempts = 0;
                self.ever_connected = true;
                return Ok(c);
            }
            Err(r) => r,
        };
        self.ui.event(error(self.started, r.message.clone(), None));
        self.failed_attempts += 1;
        let n = self.failed_attempts;
        if !self.ever_connected || !r.transient || n >= MAX_RECONNECTS {
            let why = if self.ever_connected {
                format!(
                    "the worker could not be reached again after {n} tries (the session file is intact)"
                )
            } else {
                "no GPU worker".into()
            };
            self.ui.ended(why);
            return Err(Next::Stop);
        }
        let wait = backoff(n);
        self.say(
            "link",
            format!(
                "reconnecting to {} in {} s (try {} of {MAX_RECONNECTS})",
                self.link.place.describe(),
                wait.as_secs(),
                n + 1
            ),
            None,
        );
        Err(self.hold(wait))
    }

    fn hold(&mut self, wait: Duration) -> Next {
        match hold(self.commands, wait, &mut self.queued) {
            true => Next::Again,
            false => Next::Stop,
        }
    }

    /// What the new connection says before its events: lines printed before
    /// the hello, and how long the link was gone.
    fn announce(&mut self, conn: &link::Connection) {
        let place = self.link.place.describe();
        if let Some(first) = conn.before_hello.first() {
            self.say(
                "link",
                format!(
                    "{place} printed {} line(s) before attnscope's hello, ignored: {}",
                    conn.before_hello.len(),
                    protocol::excerpt(first)
                ),
                None,
            );
        }
        if let Some(t) = self.dropped_at.take() {
            self.say(
                "link",
                format!(
                    "link to {place} back after {:.1} s; what the old worker sent after its last event above was lost with the link",
                    t.elapsed().as_secs_f64()
                ),
                None,
            );
        }
    }

    /// Forwards commands until the worker ends (false) or the dashboard
    /// quits (true).
    fn forward(&mut self, conn: &mut link::Connection, done: &Receiver<()>) -> bool {
        loop {
            match self.commands.recv_timeout(Duration::from_millis(100)) {
                Ok(Command::Shutdown) => {
                    send(conn, &Command::Shutdown);
                    return true;
                }
                Ok(cmd) => {
                    if !send(conn, &cmd) {
                        self.queued.push(cmd);
                        return false;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return true,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if done.try_recv().is_ok() {
                return false;
            }
        }
    }

    /// The worker is gone: a link that dropped, a death, or the dashboard
    /// going down with it.
    fn after_exit(&mut self, conn: &link::Connection, status: std::io::Result<ExitStatus>) -> Next {
        // `pkill attnscope`, a closed terminal, Ctrl-C to the process group:
        // the dashboard is going too. Give it a moment to say so before
        // calling this a crash.
        let signal = status
            .as_ref()
            .ok()
            .and_then(std::os::unix::process::ExitStatusExt::signal);
        if signal.is_some_and(|sig| [libc::SIGTERM, libc::SIGINT, libc::SIGHUP].contains(&sig)) {
            match self.commands.recv_timeout(Duration::from_millis(500)) {
                Ok(Command::Shutdown) | Err(RecvTimeoutError::Disconnected) => return Next::Stop,
                Ok(other) => self.queued.push(other),
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        let tail = conn.stderr_lines();
        // A link that dropped (ssh's own exit code, a hung-up pipe) is not
        // the worker's fault: reconnect and go on with what was running.
        let code = status.as_ref().ok().and_then(ExitStatus::code);
        note_death(&mut self.deaths, Instant::now());
        if self.link.place.is_remote()
            && (code == Some(255)
                || signal.is_some_and(|s| [libc::SIGHUP, libc::SIGPIPE].contains(&s)))
        {
            return self.after_drop(status.ok(), tail);
        }
        self.after_death(status.ok(), signal.is_some(), tail)
    }

    /// What was running, and the last variant that passed its check.
    fn running(&self) -> (Option<Running>, Option<Running>) {
        let t = self.track.lock().unwrap_or_else(|e| e.into_inner());
        (t.current, t.last_good)
    }

    /// A remote link dropped. A worker killed by a signal over ssh looks the
    /// same: drops come into the death count, and the second in the window
    /// goes back to the last variant that passed its check.
    fn after_drop(&mut self, status: Option<ExitStatus>, tail: Vec<String>) -> Next {
        let (current, last_good) = self.running();
        let place = self.link.place.describe();
        let variant = current.map(|c| c.0);
        if self.deaths.len() > MAX_RESTARTS {
            self.say(
                "link",
                format!(
                    "link to {place} lost {} times in {} s, so not again (the session file is intact)",
                    self.deaths.len(),
                    RESTART_WINDOW.as_secs()
                ),
                variant,
            );
            self.ui
                .ended("the link to the worker keeps dropping".into());
            return Next::Stop;
        }
        let wait = backoff(0);
        let mut message = format!(
            "link to {place} lost ({}) while running {}",
            describe(status),
            current.map_or("nothing".into(), |(v, s)| format!("{v} at {s}"))
        );
        if !tail.is_empty() {
            let tail: Vec<String> = tail.iter().map(|l| super::link::quoted(l)).collect();
            message.push_str(&format!("; it said: {}", tail.join(" | ")));
        }
        message.push_str(&format!(
            "; recording goes on, reconnecting in {} s",
            wait.as_secs()
        ));
        self.say("link", message, variant);
        self.dropped_at = Some(Instant::now());
        self.next_select = if self.deaths.len() > 1 {
            last_good.or(current)
        } else {
            current
        }
        .map(|(variant, shape)| Command::Select { variant, shape });
        self.hold(wait)
    }

    /// The worker died. Back to the last variant that passed its check. If
    /// that is what was running: killed from outside (a signal), it goes
    /// on; if its own launch failed, the scalar baseline takes over.
    fn after_death(
        &mut self,
        status: Option<ExitStatus>,
        signalled: bool,
        tail: Vec<String>,
    ) -> Next {
        let (current, last_good) = self.running();
        let back = match (last_good, current) {
            (Some(good), Some(cur)) if good != cur || signalled => Some(good),
            (_, Some((cur, shape))) if cur.is_library() => Some((Variant::base(), shape)),
            (_, Some((cur, shape))) => Some((Variant::base_of(cur.kernel), shape)),
            (good, None) => good,
        };
        let giving_up = self.deaths.len() > MAX_RESTARTS;
        let mut message = format!(
            "worker process {} while running {}",
            describe(status),
            current.map_or("nothing".into(), |(v, s)| format!("{v} at {s}"))
        );
        if !tail.is_empty() {
            message.push_str(&format!("; its last output: {}", tail.join(" | ")));
        }
        if giving_up {
            message.push_str(&format!(
                "; it died {} times in {} s, so it is not restarted (the session file is intact)",
                self.deaths.len(),
                RESTART_WINDOW.as_secs()
            ));
        } else {
            message.push_str(&match back {
                Some((v, s)) => format!("; restarting it with {v} at {s}"),
                None => "; restarting it".into(),
            });
        }
        self.ui
            .event(error(self.started, message, current.map(|c| c.0)));
        if giving_up {
            self.ui.ended("the GPU worker keeps dying".into());
            return Next::Stop;
        }
        self.next_select = back.map(|(variant, shape)| Command::Select { variant, shape });
        Next::Again
    }
}

/// Waits `wait` while no worker is there; commands sent meanwhile are kept
/// for the next one. False when the dashboard quit.
fn hold(commands: &Receiver<Command>, wait: Duration, queued: &mut Vec<Command>) -> bool {
    let until = Instant::now() + wait;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        match commands.recv_timeout(left) {
            Ok(Command::Shutdown) | Err(RecvTimeoutError::Disconnected) => return false,
            Ok(cmd) => queued.push(cmd),
            Err(RecvTimeoutError::Timeout) => return true,
        }
    }
}

/// Hands the worker's events to the screen, restamped on the dashboard's
/// clock, numbered-event gaps and stray lines reported as they happen.
fn deliver(
    incoming: Receiver<Incoming>,
    offset_us: u64,
    started: Instant,
    ui: &Arc<dyn Feed>,
    track: &Arc<Mutex<Track>>,
    done: Sender<()>,
) -> std::thread::JoinHandle<()> {
    let (ui, track) = (Arc::clone(ui), Arc::clone(track));
    std::thread::spawn(move || {
        let mut seq = SeqCheck::default();
        let mut garbage = 0u64;
        for item in incoming {
            let mut s = match item {
                Incoming::Line(FromWorker::Event(n, s)) => {
                    if let Err(gap) = seq.see(n) {
                        ui.event(error_from(started, "link", gap, None));
                    }
                    *s
                }
                Incoming::Garbage(line) => {
                    garbage += 1;
                    // The first few verbatim; a stream of them once per hundred.
                    if garbage <= GARBAGE_SHOWN || garbage.is_multiple_of(100) {
                        let e = FromWorker::parse(&line).err().unwrap_or_default();
                        ui.event(error_from(
                            started,
                            "link",
                            format!("the worker sent a line that is not an event ({garbage} so far): {e}"),
                            None,
                        ));
                    }
                    continue;
                }
                Incoming::Line(_) => continue,
            };
            s.t_us = s.t_us.saturating_add(offset_us);
            {
                let mut t = track.lock().unwrap_or_else(|e| e.into_inner());
                if let Event::Header(h) = &mut s.event {
                    // One session, one header: a restarted worker's is not news.
                    if std::mem::replace(&mut t.header_seen, true) {
                        continue;
                    }
                    // The session was started by the dashboard's command line.
                    protocol::localize_header(h);
                }
                t.see(&s.event);
            }
            if !ui.event(s) {
                break;
            }
        }
        let _ = done.send(());
    })
}

fn send(conn: &mut link::Connection, cmd: &Command) -> bool {
    match serde_json::to_string(cmd) {
        Ok(line) => conn.send(&line),
        Err(_) => false,
    }
}

/// "exited with code 70 (CUDA context lost)", "was killed by signal 11 (SIGSEGV)".
pub fn describe(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    let Some(status) = status else {
        return "ended (status unknown)".into();
    };
    if let Some(code) = status.code() {
        let why = match code {
            super::process::EXIT_CONTEXT_LOST => " (CUDA context lost)",
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
