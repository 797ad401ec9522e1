//! Replay pacing: when each recorded event is due on the wall clock, given a
//! speed, pause and skips. Pure: the replay thread asks it, tests drive it.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::event::Stamped;
use super::reader::{self, OnCorrupt, ReadReport, SessionError};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReplayControl {
    TogglePause,
    Faster,
    Slower,
    /// Emit everything recorded in the next this-many seconds at once.
    SkipSeconds(f64),
    ToEnd,
}

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
        self.anchor_us + (elapsed * self.speed * 1e6) as u64
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
            ReplayControl::SkipSeconds(s) => self.skip_until_us = pos + (s * 1e6) as u64,
            ReplayControl::ToEnd => self.to_end = true,
        }
        self.anchor_us = pos;
        self.anchor_wall = now;
    }

    fn reanchor(&mut self, t_us: u64, now: Instant) {
        self.anchor_us = t_us;
        self.anchor_wall = now;
    }
}

/// Plays `path` into `emit` at its recorded pace, obeying `controls`. Ends at
/// the end of the file, or when `emit` returns false (the screen closed).
pub fn spawn_replay(
    path: PathBuf,
    speed: f64,
    on_corrupt: OnCorrupt,
    controls: Receiver<ReplayControl>,
    mut emit: impl FnMut(Stamped) -> bool + Send + 'static,
) -> JoinHandle<Result<ReadReport, SessionError>> {
    std::thread::spawn(move || {
        let mut clock = ReplayClock::new(speed, Instant::now());
        reader::read_file(&path, on_corrupt, |stamped| {
            loop {
                while let Ok(c) = controls.try_recv() {
                    clock.control(c, Instant::now());
                }
                let wait = clock.wait_for(stamped.t_us, Instant::now());
                if wait == Some(Duration::ZERO) {
                    break;
                }
                // Wake at least every 100 ms so a pause or skip takes effect promptly.
                let nap = wait
                    .unwrap_or(Duration::from_millis(100))
                    .min(Duration::from_millis(100));
                match controls.recv_timeout(nap) {
                    Ok(c) => clock.control(c, Instant::now()),
                    Err(RecvTimeoutError::Timeout) => {}
                    // Nobody can steer any more: play the rest at the current pace.
                    Err(RecvTimeoutError::Disconnected) => std::thread::sleep(nap),
                }
            }
            clock.emitted(stamped.t_us, Instant::now());
            emit(stamped)
        })
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

    #[test]
    fn speed_ladder_saturates() {
        assert_eq!(step_speed(1.0, 1), 2.0);
        assert_eq!(step_speed(1.0, -1), 0.5);
        assert_eq!(step_speed(256.0, 1), 256.0);
        assert_eq!(step_speed(0.25, -1), 0.25);
        assert_eq!(step_speed(3.0, 1), 4.0);
    }
}
