//! `tune`'s last step: the two fastest tiles by median race each other
//! (interleaved, like `ab`), because two solo medians taken seconds apart
//! differ by the GPU's drift as much as by the tiles. The race's winner is
//! taken only when its verdict calls a difference; otherwise the lower
//! median stays.

use serde_json::json;

use super::Run;
use crate::gpu::race::{self, RaceEvent, RacePlan};
use crate::metrics::abstats::MIN_EFFECT;
use crate::session::event::{AbReport, Event};
use crate::session::{Shape, Variant};

/// Which of the top two a race settles on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The lower median (A), the race saying it is faster.
    First,
    /// The runner-up (B), the race saying it is faster.
    Second,
    /// The lower median (A), the race calling no difference.
    NoDifference,
}

impl Pick {
    pub fn index(self) -> usize {
        usize::from(self == Pick::Second)
    }

    pub fn why(self) -> &'static str {
        match self {
            Pick::First => "the race confirms the lower median",
            Pick::Second => "the race found the runner-up faster",
            Pick::NoDifference => "the race called no difference; kept the lower median",
        }
    }
}

/// The decision from a race of A (the lower median) against B: `speedup`
/// is p50(A) ÷ p50(B), above 1 when B is faster. A side wins only when the
/// whole interval says so by more than the race's smallest effect, as the
/// race's verdict reads it; an unfinished or empty race decides nothing.
pub fn settle(speedup: f64, ci: (f64, f64), done: bool) -> Pick {
    let (lo, hi) = (ci.0.min(ci.1), ci.0.max(ci.1));
    if !done || !speedup.is_finite() || !lo.is_finite() || !hi.is_finite() {
        return Pick::NoDifference;
    }
    if lo > 1.0 + MIN_EFFECT {
        Pick::Second
    } else if hi < 1.0 / (1.0 + MIN_EFFECT) {
        Pick::First
    } else {
        Pick::NoDifference
    }
}

/// What the race decided, for the output.
pub struct Settled {
    pub report: AbReport,
    pub pick: Pick,
}

impl Settled {
    pub fn json(&self) -> serde_json::Value {
        let r = &self.report;
        let picked = [r.a, r.b][self.pick.index()].name();
        json!({
            "a": r.a.name(), "b": r.b.name(),
            "speedup": r.speedup, "ci": [r.ci_low, r.ci_high],
            "verdict": r.verdict, "rounds": r.rounds,
            "picked": picked,
            "why": self.pick.why(),
        })
    }

    pub fn text(&self) -> String {
        let r = &self.report;
        format!(
            "race of the top two, {} (A) against {} (B), interleaved: p50(A)/p50(B) = {:.3} \
             [{:.3}, {:.3}] over {} rounds, {}; {} → {}",
            r.a.name(),
            r.b.name(),
            r.speedup,
            r.ci_low,
            r.ci_high,
            r.rounds,
            r.verdict,
            self.pick.why(),
            [r.a, r.b][self.pick.index()].name()
        )
    }
}

/// Why there was no race, for the output.
pub fn no_race_json(why: &str) -> serde_json::Value {
    json!({"skipped": why})
}

/// Races `a` (the lower median) against `b`; Err is the race's failure in
/// words (the tune then keeps the lower median).
pub fn race_top_two(
    run: &mut Run,
    a: &Variant,
    b: &Variant,
    shape: &Shape,
    max_s: f64,
) -> Result<Settled, String> {
    let defaults = RacePlan::default();
    let plan = RacePlan {
        max_s: max_s.max(defaults.min_s),
        ..defaults
    };
    let sink = &mut run.sink;
    let report = race::race(
        &mut run.engine,
        a,
        b,
        shape,
        &plan,
        |e| match e {
            RaceEvent::Batch(b) => sink.event(Event::Latency(b)),
            RaceEvent::Report(r) => sink.event(Event::AbResult(*r)),
        },
        || true,
    )
    .map_err(|e| e.to_string())?;
    run.sink.event(Event::AbResult(report.clone()));
    let pick = settle(report.speedup, (report.ci_low, report.ci_high), report.done);
    Ok(Settled { report, pick })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_difference_the_race_calls_moves_the_choice() {
        // B faster by 3%, the whole interval above the 0.5% threshold.
        assert_eq!(settle(1.03, (1.02, 1.04), true), Pick::Second);
        assert_eq!(Pick::Second.index(), 1);
        // A faster.
        assert_eq!(settle(0.97, (0.96, 0.98), true), Pick::First);
        assert_eq!(Pick::First.index(), 0);
        // Across 1.0, or off 1.0 by less than the race's smallest effect.
        assert_eq!(settle(1.01, (0.99, 1.03), true), Pick::NoDifference);
        assert_eq!(settle(1.004, (1.002, 1.006), true), Pick::NoDifference);
        assert_eq!(settle(0.996, (0.994, 0.998), true), Pick::NoDifference);
        assert_eq!(Pick::NoDifference.index(), 0);
        // At the threshold exactly is not past it.
        assert_eq!(
            settle(1.01, (1.0 + MIN_EFFECT, 1.02), true),
            Pick::NoDifference
        );
        // An unfinished race or one without an interval decides nothing.
        assert_eq!(settle(1.03, (1.02, 1.04), false), Pick::NoDifference);
        assert_eq!(
            settle(f64::NAN, (f64::NAN, f64::NAN), true),
            Pick::NoDifference
        );
        // Bounds upside down read the same.
        assert_eq!(settle(1.03, (1.04, 1.02), true), Pick::Second);
    }
}
