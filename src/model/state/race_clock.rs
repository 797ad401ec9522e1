//! The race's own clock tags: how many of the samples its rounds took ran
//! throttled or below the expected clock. A variant's totals cover every
//! batch it ran in the session (solo runs, earlier races); a race's verdict
//! is about its rounds alone, and so is the count beside it.
//!
//! A race's rounds arrive as batches before its first report, so they are
//! tallied as they come, by variant, shape and regime, and what came before
//! the race is forgotten at the points a worker starts one: a selection, a
//! build (a race builds its two sides first), the end of a solo run (its
//! measurement). Back-to-back batches are never a race's.

use super::SessionState;
use crate::session::event::{AbReport, LatencyBatch, MeasurementDone};
use crate::session::{Regime, Variant};

/// Samples of some batches, and how many of them carried clock tags and
/// were throttled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockTally {
    pub samples: u64,
    /// Samples of batches that carried clock information at all.
    pub tagged: u64,
    /// Samples of batches throttled or below the expected clock.
    pub throttled: u64,
}

impl ClockTally {
    fn add(&mut self, n: u64, throttled: Option<bool>) {
        self.samples += n;
        if let Some(t) = throttled {
            self.tagged += n;
            if t {
                self.throttled += n;
            }
        }
    }

    fn plus(self, other: ClockTally) -> ClockTally {
        ClockTally {
            samples: self.samples + other.samples,
            tagged: self.tagged + other.tagged,
            throttled: self.throttled + other.throttled,
        }
    }
}

/// The newest race's rounds, A's and B's. An A/A race's two sides are one
/// variant: all its rounds are in `a`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaceClock {
    pub a: ClockTally,
    pub b: ClockTally,
}

impl RaceClock {
    pub fn total(&self) -> ClockTally {
        self.a.plus(self.b)
    }
}

impl SessionState {
    pub(super) fn tally_round(&mut self, batch: &LatencyBatch) {
        if batch.regime == Some(Regime::BackToBack) {
            return;
        }
        self.race_open
            .entry((batch.variant, batch.shape, batch.regime))
            .or_default()
            .add(batch.samples_ns.len() as u64, batch.throttled);
        // A race still running counts its rounds as they come, as its
        // histograms do, not only at its next report.
        let running = self.ab.as_ref().filter(|ab| {
            !ab.done
                && (ab.shape, ab.regime) == (batch.shape, batch.regime)
                && (ab.a == batch.variant || ab.b == batch.variant)
        });
        if let Some(ab) = running {
            self.race_clock = Some(self.rounds_of(ab));
        }
    }

    /// A selection or a build of `variant`: what it ran before is no race's.
    pub(super) fn forget_rounds_of(&mut self, variant: Variant) {
        self.race_open.retain(|(v, ..), _| *v != variant);
    }

    /// A solo run ended: its batches are no race's.
    pub(super) fn forget_solo_run(&mut self, m: &MeasurementDone) {
        self.race_open.remove(&(m.variant, m.shape, m.regime));
    }

    /// The rounds tallied so far of the race `ab` reports.
    fn rounds_of(&self, ab: &AbReport) -> RaceClock {
        let of = |v: Variant| {
            self.race_open
                .get(&(v, ab.shape, ab.regime))
                .copied()
                .unwrap_or_default()
        };
        RaceClock {
            a: of(ab.a),
            b: if ab.a == ab.b {
                ClockTally::default()
            } else {
                of(ab.b)
            },
        }
    }

    /// A race's report: its rounds so far; a finished race's are closed.
    pub(super) fn race_report(&mut self, ab: &AbReport) {
        self.race_clock = Some(self.rounds_of(ab));
        if ab.done {
            self.race_open.remove(&(ab.a, ab.shape, ab.regime));
            self.race_open.remove(&(ab.b, ab.shape, ab.regime));
        }
    }
}
