//! `tune`'s last step: the two fastest tiles by median race each other
//! (interleaved, like `ab`), because two solo medians taken seconds apart
//! differ by the GPU's drift as much as by the tiles. The race's winner is
//! taken only when its verdict calls a difference; otherwise the lower
//! median stays.

use serde_json::json;

use super::Run;
use crate::gpu::race::{self, RaceEvent, RacePlan};
use crate::session::event::{AbReport, Decision, Event};
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

/// The decision from a race of A (the lower median) against B: a side wins
/// only when the race called it (`AbReport::decided`); an unfinished race,
/// or one that called no difference, keeps the lower median.
pub fn settle(report: &AbReport) -> Pick {
    if !report.done || !report.speedup.is_finite() {
        return Pick::NoDifference;
    }
    match report.decided() {
        Decision::Faster => Pick::Second,
        Decision::Slower => Pick::First,
        Decision::Same | Decision::Undecided => Pick::NoDifference,
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
    let pick = settle(&report);
    Ok(Settled { report, pick })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raced(speedup: f64, decision: Option<Decision>, verdict: &str, done: bool) -> AbReport {
        AbReport {
            speedup,
            decision,
            verdict: verdict.into(),
            done,
            ..AbReport::default()
        }
    }

    #[test]
    fn only_a_difference_the_race_calls_moves_the_choice() {
        let f = Some(Decision::Faster);
        assert_eq!(
            settle(&raced(1.03, f, "B faster by 3.0%", true)),
            Pick::Second
        );
        assert_eq!(Pick::Second.index(), 1);
        let s = Some(Decision::Slower);
        assert_eq!(
            settle(&raced(0.97, s, "B slower by 3.1%", true)),
            Pick::First
        );
        assert_eq!(Pick::First.index(), 0);
        // Not called, or called the same: the lower median stays.
        for d in [Decision::Same, Decision::Undecided] {
            assert_eq!(
                settle(&raced(1.004, Some(d), "no difference detected", true)),
                Pick::NoDifference
            );
        }
        assert_eq!(Pick::NoDifference.index(), 0);
        // An unfinished race or one without a ratio decides nothing.
        assert_eq!(
            settle(&raced(1.03, f, "B faster by 3.0%", false)),
            Pick::NoDifference
        );
        assert_eq!(
            settle(&raced(f64::NAN, f, "B faster", true)),
            Pick::NoDifference
        );
        // A session from before decisions: the verdict's words.
        assert_eq!(
            settle(&raced(1.03, None, "B faster by 3.0%", true)),
            Pick::Second
        );
        assert_eq!(
            settle(&raced(1.03, None, "no difference detected", true)),
            Pick::NoDifference
        );
    }
}
