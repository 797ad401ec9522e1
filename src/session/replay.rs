//! Replay pacing: when each recorded event is due on the wall clock, given a
//! speed, pause and skips. Pure: the replay thread asks it, tests drive it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::event::{Event, Stamped};
use super::reader::{self, OnCorrupt, ReadReport, SessionError};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReplayControl {
    TogglePause,
    Faster,
    Slower,
    /// Emit everything recorded in the next this-many seconds at once.
    SkipSeconds(f64),
    ToEnd,
    /// Go back this many seconds: the screen's fold starts over and every
    /// event up to the new position is folded again at once.
    SeekBack(f64),
    /// Back to the first event.
    ToStart,
}

/// What the replay thread hands the screen.
#[derive(Debug)]
pub enum ReplayOut {
    Event(Box<Stamped>),
    /// Throw the fold away: the events from the start follow.
    Reset,
    /// Everything recorded has been shown (it may be shown again after a seek).
    Ended(Result<ReadReport, String>),
    /// A stretch with no events this long (µs of session time) was skipped.
    SkippedIdle(u64),
}

/// The longest a replay waits, in wall time, for its next event: a merged session whose sources
/// started a day apart, or a recording left open overnight, would otherwise show a still screen
/// for hours. Longer stretches are skipped, and the screen says so.
pub const MAX_IDLE: Duration = Duration::from_secs(5);

pub const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0];

#[derive(Clone, Debug)]
pub struct ReplayClock {
    speed: f64,
    paused: bool,
    /// Session time and wall time that correspond to each other now.
    anchor_us: u64,
    anchor_wall: Instant,
    /// Events stamped before this are due at once.
    skip_until_us: u64,
    to_end: bool,
}

impl ReplayClock {
    pub fn new(speed: f64, now: Instant) -> ReplayClock {
        ReplayClock {
            speed,
            paused: false,
            anchor_us: 0,
            anchor_wall: now,
            skip_until_us: 0,
            to_end: false,
        }
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }

    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The session time the clock shows at `now`.
    pub fn position_us(&self, now: Instant) -> u64 {
        if self.paused {
            return self.anchor_us;
        }
        let elapsed = now
            .saturating_duration_since(self.anchor_wall)
            .as_secs_f64();
        // Saturating: a damaged file's stamps may sit near u64::MAX.
        self.anchor_us
            .saturating_add((elapsed * self.speed * 1e6) as u64)
    }

    /// How long to wait before an event stamped `t_us` is due; `None` while paused.
    pub fn wait_for(&self, t_us: u64, now: Instant) -> Option<Duration> {
        if self.to_end || t_us <= self.skip_until_us {
            return Some(Duration::ZERO);
        }
        if self.paused {
            return None;
        }
        let ahead_us = t_us.saturating_sub(self.position_us(now));
        Some(Duration::from_secs_f64(ahead_us as f64 / 1e6 / self.speed))
    }

    /// Called when an event stamped `t_us` was emitted, so skips and pauses
    /// resume from the event rather than from a clock that ran ahead.
    pub fn emitted(&mut self, t_us: u64, now: Instant) {
        if t_us > self.position_us(now) || t_us <= self.skip_until_us {
            self.reanchor(t_us, now);
        }
    }

    pub fn control(&mut self, control: ReplayControl, now: Instant) {
        let pos = self.position_us(now);
        match control {
            ReplayControl::TogglePause => self.paused = !self.paused,
            ReplayControl::Faster => self.speed = step_speed(self.speed, 1),
            ReplayControl::Slower => self.speed = step_speed(self.speed, -1),
            ReplayControl::SkipSeconds(s) => {
                self.skip_until_us = pos.saturating_add((s * 1e6) as u64)
            }
            ReplayControl::ToEnd => self.to_end = true,
            // Seeks are carried out by the player, which calls `seek_to`.
            ReplayControl::SeekBack(_) | ReplayControl::ToStart => {}
        }
        self.anchor_us = pos;
        self.anchor_wall = now;
    }

    /// The clock shows `t_us` now; pending skips and the jump to the end are
    /// forgotten (the pause is kept).
    pub fn seek_to(&mut self, t_us: u64, now: Instant) {
        self.to_end = false;
        self.skip_until_us = 0;
        self.reanchor(t_us, now);
    }

    fn reanchor(&mut self, t_us: u64, now: Instant) {
        self.anchor_us = t_us;
        self.anchor_wall = now;
    }
}

/// Paces events already read: the file's in time order, and the history
/// again after a seek backwards. Keeps every event it has read.
struct Player<F> {
    clock: ReplayClock,
    controls: Receiver<ReplayControl>,
    emit: F,
    history: Vec<Stamped>,
    /// (stamp, index into `history`) of each event still to be emitted: the
    /// earliest first, a tie in file order. A file need not be in time
    /// order (a session merged before merges sorted holds one GPU's events,
    /// then the other's), and the clock must not go back.
    queue: BinaryHeap<Reverse<(u64, usize)>>,
    /// The stamp of the newest event emitted, where a seek counts back from.
    shown_us: u64,
    /// Play nothing until the whole file is read: a merged session's
    /// sources may lie far apart in it, and even events due at once (after
    /// `End`) must go out in time order.
    hold: bool,
    /// Nobody steers any more: play on at the current pace.
    orphaned: bool,
}

impl<F: FnMut(ReplayOut) -> bool> Player<F> {
    /// Queues `s` and emits what is due, without waiting: the file is read
    /// ahead of the clock, so a line stamped before the ones above it still
    /// plays in its place if it is read before it is due. False when the
    /// screen closed.
    fn offer(&mut self, s: Stamped) -> bool {
        if let Event::Header(h) = &s.event {
            self.hold |= !h.sources.is_empty();
        }
        self.queue.push(Reverse((s.t_us, self.history.len())));
        self.history.push(s);
        self.hold || self.play(false)
    }

    /// Emits every queued event at its time; false when the screen closed.
    fn drain(&mut self) -> bool {
        self.play(true)
    }

    /// Applies a control; seeks rebuild the queue.
    fn steer(&mut self, c: ReplayControl) -> bool {
        let back = match c {
            ReplayControl::SeekBack(s) => Some((s * 1e6) as u64),
            ReplayControl::ToStart => Some(u64::MAX),
            other => {
                self.clock.control(other, Instant::now());
                None
            }
        };
        match back {
            Some(us) => self.seek(self.shown_us.saturating_sub(us)),
            None => true,
        }
    }

    /// Emits Reset, then every event up to `target` at once, and queues the
    /// rest of the history to be played at pace from `target`.
    fn seek(&mut self, target: u64) -> bool {
        if !(self.emit)(ReplayOut::Reset) {
            return false;
        }
        self.queue.clear();
        self.shown_us = 0;
        // In time order, as played (stable: a tie in file order).
        let mut order: Vec<usize> = (0..self.history.len()).collect();
        order.sort_by_key(|&i| self.history[i].t_us);
        for i in order {
            let e = &self.history[i];
            if e.t_us <= target {
                self.shown_us = e.t_us;
                if !(self.emit)(ReplayOut::Event(Box::new(e.clone()))) {
                    return false;
                }
            } else {
                self.queue.push(Reverse((e.t_us, i)));
            }
        }
        self.clock.seek_to(self.shown_us, Instant::now());
        true
    }

    /// Emits queued events as they fall due. With `wait`, waits for each
    /// until none is left; without, stops at the first not yet due.
    fn play(&mut self, wait: bool) -> bool {
        'next: while let Some(&Reverse((t_us, i))) = self.queue.peek() {
            loop {
                while let Ok(c) = self.controls.try_recv() {
                    if !self.steer(c) {
                        return false;
                    }
                    if matches!(c, ReplayControl::SeekBack(_) | ReplayControl::ToStart) {
                        continue 'next;
                    }
                }
                let due_in = self.clock.wait_for(t_us, Instant::now());
                if due_in == Some(Duration::ZERO) {
                    break;
                }
                if due_in.is_some_and(|d| d > MAX_IDLE) {
                    let now = Instant::now();
                    let gap = t_us.saturating_sub(self.clock.position_us(now));
                    self.clock.seek_to(t_us, now);
                    if !(self.emit)(ReplayOut::SkippedIdle(gap)) {
                        return false;
                    }
                    break;
                }
                if !wait {
                    return true;
                }
                // Wake at least every 100 ms so a pause or skip takes effect promptly.
                let nap = due_in
                    .unwrap_or(Duration::from_millis(100))
                    .min(Duration::from_millis(100));
                if self.orphaned {
                    std::thread::sleep(nap);
                    continue;
                }
                match self.controls.recv_timeout(nap) {
                    Ok(c) => {
                        if !self.steer(c) {
                            return false;
                        }
                        if matches!(c, ReplayControl::SeekBack(_) | ReplayControl::ToStart) {
                            continue 'next;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => self.orphaned = true,
                }
            }
            self.queue.pop();
            self.clock.emitted(t_us, Instant::now());
            self.shown_us = t_us;
            if !(self.emit)(ReplayOut::Event(Box::new(self.history[i].clone()))) {
                return false;
            }
        }
        true
    }
}

/// Plays `path` into `emit` at its recorded pace, obeying `controls`. At the
/// end of the file it says so and waits: a seek backwards plays the history
/// again. Ends when `emit` returns false (the screen closed) or nobody can
/// steer any more after the end.
pub fn spawn_replay(
    path: PathBuf,
    speed: f64,
    on_corrupt: OnCorrupt,
    controls: Receiver<ReplayControl>,
    emit: impl FnMut(ReplayOut) -> bool + Send + 'static,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut player = Player {
            clock: ReplayClock::new(speed, Instant::now()),
            controls,
            emit,
            history: Vec::new(),
            queue: BinaryHeap::new(),
            shown_us: 0,
            hold: false,
            orphaned: false,
        };
        let result: Result<ReadReport, SessionError> =
            reader::read_file(&path, on_corrupt, |stamped| player.offer(stamped));
        let stopped = result.as_ref().is_ok_and(|r| r.stopped_early);
        // What was read ahead plays out before the end is said.
        if stopped
            || !player.drain()
            || !(player.emit)(ReplayOut::Ended(result.map_err(|e| e.to_string())))
        {
            return;
        }
        // After the end: seeks play the history again, then say the end again.
        while let Ok(c) = player.controls.recv() {
            let seeks = matches!(c, ReplayControl::SeekBack(_) | ReplayControl::ToStart);
            if !player.steer(c) || !player.drain() {
                return;
            }
            if seeks && !(player.emit)(ReplayOut::Ended(Ok(ReadReport::default()))) {
                return;
            }
        }
    })
}

/// The next speed up or down the ladder from `speed`.
pub fn step_speed(speed: f64, dir: i32) -> f64 {
    if dir > 0 {
        SPEEDS
            .iter()
            .copied()
            .find(|&s| s > speed * 1.001)
            .unwrap_or(SPEEDS[SPEEDS.len() - 1])
    } else {
        SPEEDS
            .iter()
            .rev()
            .copied()
            .find(|&s| s < speed * 0.999)
            .unwrap_or(SPEEDS[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paces_by_speed() {
        let t0 = Instant::now();
        let clock = ReplayClock::new(2.0, t0);
        assert_eq!(
            clock.wait_for(1_000_000, t0),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            clock.wait_for(1_000_000, t0 + Duration::from_millis(600)),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn pause_holds_and_skip_releases() {
        let t0 = Instant::now();
        let mut clock = ReplayClock::new(1.0, t0);
        clock.control(ReplayControl::TogglePause, t0);
        assert_eq!(clock.wait_for(10, t0 + Duration::from_secs(5)), None);
        assert_eq!(clock.position_us(t0 + Duration::from_secs(5)), 0);
        clock.control(ReplayControl::SkipSeconds(10.0), t0);
        assert_eq!(clock.wait_for(9_000_000, t0), Some(Duration::ZERO));
        assert_eq!(clock.wait_for(11_000_000, t0), None);
        clock.control(ReplayControl::ToEnd, t0);
        assert_eq!(clock.wait_for(u64::MAX, t0), Some(Duration::ZERO));
    }

    /// A session file in `dir`: a header, then a bookmark at each of `seconds`, in that order.
    fn bookmarks(dir: &tempfile::TempDir, seconds: &[u64]) -> PathBuf {
        use super::super::event::{Bookmark, SessionHeader};
        let header = Stamped {
            t_us: 0,
            event: Event::Header(SessionHeader {
                schema_version: super::super::SCHEMA_VERSION,
                ..Default::default()
            }),
        };
        let mut text = serde_json::to_string(&header).unwrap() + "\n";
        for &s in seconds {
            let b = Stamped {
                t_us: s * 1_000_000,
                event: Event::Bookmark(Bookmark {
                    label: format!("b{s}"),
                }),
            };
            text.push_str(&(serde_json::to_string(&b).unwrap() + "\n"));
        }
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn seeking_back_refolds_from_the_start_then_plays_on() {
        use std::sync::mpsc;
        let dir = tempfile::tempdir().unwrap();
        let path = bookmarks(&dir, &[1, 2, 3, 4, 5]);
        let (ctl_tx, ctl_rx) = mpsc::channel();
        let (out_tx, out_rx) = mpsc::channel();
        ctl_tx.send(ReplayControl::ToEnd).unwrap();
        let handle = spawn_replay(path, 256.0, OnCorrupt::Stop, ctl_rx, move |o| {
            out_tx.send(o).is_ok()
        });
        let mut seen = Vec::new();
        let describe = |o: &ReplayOut| match o {
            ReplayOut::Event(s) => format!("{}", s.t_us / 1_000_000),
            ReplayOut::Reset => "reset".into(),
            ReplayOut::Ended(_) => "end".into(),
            ReplayOut::SkippedIdle(_) => "skipped".into(),
        };
        // To the end, then 2.5 s back: a reset, events 0..=2 at once, 3..=5 again, the end.
        loop {
            let o = out_rx.recv().unwrap();
            let end = matches!(o, ReplayOut::Ended(_));
            seen.push(describe(&o));
            if end {
                break;
            }
        }
        assert_eq!(seen, ["0", "1", "2", "3", "4", "5", "end"]);
        ctl_tx.send(ReplayControl::SeekBack(2.5)).unwrap();
        ctl_tx.send(ReplayControl::ToEnd).unwrap();
        let mut again = Vec::new();
        loop {
            let o = out_rx.recv().unwrap();
            let end = matches!(o, ReplayOut::Ended(_));
            again.push(describe(&o));
            if end {
                break;
            }
        }
        assert_eq!(again, ["reset", "0", "1", "2", "3", "4", "5", "end"]);
        ctl_tx.send(ReplayControl::ToStart).unwrap();
        assert_eq!(describe(&out_rx.recv().unwrap()), "reset");
        assert_eq!(describe(&out_rx.recv().unwrap()), "0");
        drop(ctl_tx);
        drop(out_rx);
        handle.join().unwrap();
    }

    /// A line stamped before the one above it (a headless run writes its
    /// telemetry when it drains it) plays in its place when it is read
    /// before it is due.
    #[test]
    fn a_file_out_of_order_plays_in_time_order() {
        use std::sync::mpsc;
        let dir = tempfile::tempdir().unwrap();
        let path = bookmarks(&dir, &[10, 30, 20, 40]);
        let (_ctl_tx, ctl_rx) = mpsc::channel();
        let (out_tx, out_rx) = mpsc::channel();
        // At ×64 the first bookmark is due after 156 ms: the file is read by then.
        let handle = spawn_replay(path, 64.0, OnCorrupt::Stop, ctl_rx, move |o| {
            out_tx.send(o).is_ok()
        });
        let mut seen = Vec::new();
        loop {
            match out_rx.recv().unwrap() {
                ReplayOut::Event(s) => seen.push(s.t_us / 1_000_000),
                ReplayOut::Reset => seen.push(u64::MAX),
                ReplayOut::Ended(_) => break,
                ReplayOut::SkippedIdle(_) => panic!("no stretch here is long"),
            }
        }
        assert_eq!(seen, [0, 10, 20, 30, 40]);
        drop(out_rx);
        drop(_ctl_tx);
        handle.join().unwrap();
    }

    /// Sessions a day apart merged into one: the replay skips the stretch with no events (and
    /// says how long it was) rather than show a still screen for a day.
    #[test]
    fn a_long_stretch_without_events_is_skipped() {
        use std::sync::mpsc;
        let dir = tempfile::tempdir().unwrap();
        let path = bookmarks(&dir, &[1, 86_400]);
        let (ctl_tx, ctl_rx) = mpsc::channel();
        let (out_tx, out_rx) = mpsc::channel();
        let started = Instant::now();
        let handle = spawn_replay(path, 256.0, OnCorrupt::Stop, ctl_rx, move |o| {
            out_tx.send(o).is_ok()
        });
        let mut skipped = Vec::new();
        let mut seen = Vec::new();
        loop {
            match out_rx.recv().unwrap() {
                ReplayOut::Event(s) => seen.push(s.t_us / 1_000_000),
                ReplayOut::SkippedIdle(us) => skipped.push(us / 1_000_000),
                ReplayOut::Reset => {}
                ReplayOut::Ended(_) => break,
            }
        }
        assert_eq!(seen, [0, 1, 86_400]);
        assert_eq!(skipped.len(), 1);
        assert!((86_390..=86_399).contains(&skipped[0]), "{skipped:?}");
        // A day at ×256 is 337 s: waited for, this test would not end.
        assert!(started.elapsed() < MAX_IDLE * 2, "{:?}", started.elapsed());
        drop(out_rx);
        drop(ctl_tx);
        handle.join().unwrap();
    }

    #[test]
    fn speed_ladder_saturates() {
        assert_eq!(step_speed(1.0, 1), 2.0);
        assert_eq!(step_speed(1.0, -1), 0.5);
        assert_eq!(step_speed(256.0, 1), 256.0);
        assert_eq!(step_speed(0.25, -1), 0.25);
        assert_eq!(step_speed(3.0, 1), 4.0);
    }
}
