//! The terminal loop: wait for the next message or frame deadline, drain,
//! apply, handle keys, draw once. The only part of `ui/` that does I/O.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crossterm::event::{self, Event as TermEvent, KeyEvent, KeyEventKind};

use crate::session::command::Command;
use crate::session::event::{Bookmark, Event, Stamped};
use crate::session::recorder::Recorder;
use crate::session::replay::ReplayControl;
use crate::session::sink::{EventSink, Fold};

use super::keymap;
use super::state::{Effect, Mode, UiState};

/// Everything the loop waits on arrives on one channel.
pub enum UiMsg {
    Stream(Box<Stamped>),
    Key(KeyEvent),
    Resize,
    /// The producer (worker or replay) finished: a line for the key bar, and
    /// what the file's reader warned of (`UiState::source_ended`).
    SourceEnded(String, Option<String>),
    /// Replay went back: the fold starts over (the events follow).
    Reset,
    /// A line for the key bar's notice.
    Notice(String),
}

/// Makes a new recording file when `r` is pressed.
pub type MakeRecorder = Box<dyn FnMut(&UiState) -> std::io::Result<Recorder>>;

/// Where the loop sends what the user asks for.
#[derive(Default)]
pub struct Outlets {
    pub worker: Option<Sender<Command>>,
    pub replay: Option<Sender<ReplayControl>>,
    /// The session file (none until `r` or `--record`); every streamed
    /// event goes through it and into the view state alike.
    pub events: EventSink,
    /// Makes a new recording file when `r` is pressed; returns its path.
    pub new_recording: Option<MakeRecorder>,
    /// Session time origin, for stamping the UI's own events (bookmarks).
    pub started: Option<Instant>,
}

const FRAME: Duration = Duration::from_millis(33);
const IDLE_WAKE: Duration = Duration::from_millis(250);

/// Runs the dashboard until the user quits or a signal arrives.
pub fn run(
    mut state: UiState,
    rx: Receiver<UiMsg>,
    tx: Sender<UiMsg>,
    mut outlets: Outlets,
) -> anyhow::Result<UiState> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    let input_stop = Arc::new(AtomicBool::new(false));
    let input = spawn_input(tx, Arc::clone(&input_stop));
    // ratatui::init installs a panic hook that restores the terminal first.
    let mut terminal = ratatui::init();
    let result = (|| -> anyhow::Result<()> {
        let mut dirty = true;
        let mut last_draw = Instant::now() - FRAME;
        loop {
            let wait = if dirty {
                FRAME.saturating_sub(last_draw.elapsed())
            } else {
                IDLE_WAKE
            };
            let first = match rx.recv_timeout(wait) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            for msg in first
                .into_iter()
                .chain(std::iter::from_fn(|| rx.try_recv().ok()))
            {
                dirty = true;
                match msg {
                    UiMsg::Stream(stamped) => put(&mut outlets.events, &stamped, &mut state),
                    UiMsg::Key(key) => {
                        if handle_key(&mut state, &key, &mut outlets) {
                            return Ok(());
                        }
                    }
                    UiMsg::Resize => {}
                    UiMsg::Reset => state.restart_fold(),
                    UiMsg::Notice(line) => state.notice = Some(line),
                    UiMsg::SourceEnded(line, warning) => state.source_ended(line, warning),
                }
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if dirty && last_draw.elapsed() >= FRAME {
                terminal.draw(|f| super::view::render(f, &state))?;
                last_draw = Instant::now();
                dirty = false;
            }
        }
        Ok(())
    })();
    ratatui::restore();
    input_stop.store(true, Ordering::Relaxed);
    // The input thread sees the stop within its 100 ms poll, unless it is stuck reading a terminal
    // that is gone (a killed tmux, a dropped ssh: crossterm spins on the hung-up tty). That one is
    // left to the process's exit; joining it hung the dashboard at full CPU, deaf to SIGTERM.
    let until = Instant::now() + Duration::from_millis(400);
    while !input.is_finished() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    if input.is_finished() {
        let _ = input.join();
    }
    if let Some(w) = &outlets.worker {
        let _ = w.send(Command::Shutdown);
        // What the worker sent before it heard the shutdown is recorded too:
        // until it goes quiet (it stops within a batch), at most 3 s.
        let until = Instant::now() + Duration::from_secs(3);
        while let Ok(msg) = rx.recv_timeout(
            Duration::from_millis(500).min(until.saturating_duration_since(Instant::now())),
        ) {
            if let UiMsg::Stream(stamped) = msg
                && !outlets.events.put(&stamped, &mut ()).is_empty()
            {
                break;
            }
        }
    }
    // Every event is flushed as it is written; this line lets a script check
    // the file replays to exactly as many.
    if let Some(r) = outlets.events.recorder() {
        match r.why_nothing() {
            Some(why) => eprintln!("attnscope: {why}"),
            None => eprintln!(
                "attnscope: recording {} closed: {} events written",
                r.path().display(),
                r.events_written()
            ),
        }
    }
    result.map(|_| state)
}

/// An event into the session file and the view state; a file that stops
/// taking events says so in the key bar.
fn put(events: &mut EventSink, stamped: &Stamped, state: &mut UiState) {
    if let Some(line) = events.put(stamped, state).pop() {
        state.notice = Some(line);
    }
}

impl Fold for UiState {
    fn apply(&mut self, stamped: &Stamped) {
        UiState::apply(self, stamped);
    }
}

/// Returns true when the user asked to quit.
fn handle_key(state: &mut UiState, key: &KeyEvent, outlets: &mut Outlets) -> bool {
    let Some(action) = keymap::dispatch(key, &state.contexts(), &state.key_table()) else {
        if let crossterm::event::KeyCode::Char(c) = key.code {
            state.unbound_key(&c.to_string());
        }
        return false;
    };
    for effect in state.handle(action) {
        match effect {
            Effect::Quit => return true,
            Effect::Worker(cmd) => {
                if let Some(w) = &outlets.worker
                    && w.send(cmd).is_err()
                {
                    state.notice = Some("the GPU worker has stopped".into());
                }
            }
            Effect::Replay(c) => {
                if let Some(r) = &outlets.replay {
                    let _ = r.send(c);
                }
            }
            Effect::ToggleRecording => toggle_recording(state, outlets),
            Effect::Bookmark => {
                let t_us = outlets
                    .started
                    .map_or(state.session.last_t_us, |s| s.elapsed().as_micros() as u64);
                let n = state.session.bookmarks.len() + 1;
                let stamped = Stamped {
                    t_us,
                    event: Event::Bookmark(Bookmark {
                        label: format!("bookmark {n}"),
                    }),
                };
                put(&mut outlets.events, &stamped, state);
            }
        }
    }
    false
}

fn toggle_recording(state: &mut UiState, outlets: &mut Outlets) {
    let Mode::Live { recording, .. } = &mut state.mode else {
        return;
    };
    if let Some(rec) = outlets.events.take_recorder() {
        state.notice = Some(rec.why_nothing().unwrap_or_else(|| {
            format!(
                "saved {} events to {}",
                rec.events_written(),
                rec.path().display()
            )
        }));
        *recording = None;
        return;
    }
    let Some(make) = outlets.new_recording.as_mut() else {
        return;
    };
    let snapshot = state.clone();
    match make(&snapshot) {
        Ok(rec) => {
            if let Mode::Live { recording, .. } = &mut state.mode {
                *recording = Some(rec.path().display().to_string());
            }
            state.notice = Some(format!("recording to {}", rec.path().display()));
            outlets.events.set_recorder(rec);
        }
        Err(e) => state.notice = Some(format!("cannot record: {e}")),
    }
}

fn spawn_input(tx: Sender<UiMsg>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match event::poll(Duration::from_millis(100)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => break,
            }
            let msg = match event::read() {
                Ok(TermEvent::Key(k)) if k.kind == KeyEventKind::Press => UiMsg::Key(k),
                Ok(TermEvent::Resize(..)) => UiMsg::Resize,
                Ok(_) => continue,
                Err(_) => break,
            };
            if tx.send(msg).is_err() {
                break;
            }
        }
    })
}
