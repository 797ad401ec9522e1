//! A race's report: the speedup of B over A with its interval, the call
//! the race made on it, and how the race was run.

use serde::{Deserialize, Serialize};

use super::{Regime, Reruns, Shape, Variant, nan_null};

/// What a race decided about B against A.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// B faster: |log ratio| past the race's boundary.
    Faster,
    Slower,
    /// No difference beyond the race's band (its resolution, or `--by`).
    Same,
    /// Neither yet (or at the time limit: no difference detected).
    Undecided,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AbReport {
    pub a: Variant,
    pub b: Variant,
    pub shape: Shape,
    pub samples_a: u64,
    pub samples_b: u64,
    #[serde(deserialize_with = "nan_null::de")]
    pub p50_a_ns: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub p50_b_ns: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub p90_a_ns: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub p90_b_ns: f64,
    /// p50(A) / p50(B): above 1 means B is faster.
    #[serde(deserialize_with = "nan_null::de")]
    pub speedup: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub ci_high: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub p_value: f64,
    pub test: String,
    pub verdict: String,
    /// False while the race is still running.
    pub done: bool,
    /// Interleaved (the default) or isolated; None: recorded before regimes.
    pub regime: Option<Regime>,
    pub timer: String,
    /// The timer's step, ns.
    pub resolution_ns: Option<f64>,
    /// The interval is as wide as the timer's step allows, not narrower.
    pub limited_by_resolution: bool,
    /// How launches were ordered: "ABBA, opener alternating per round, first
    /// 2 launches of each round discarded".
    pub design: String,
    /// Rounds (independent blocks) the interval resampled.
    pub rounds: u64,
    /// Median over rounds of how much slower each round's first kept
    /// launch was than the round's median (diagnostic for the warm-up rule).
    pub first_launch_excess: Option<f64>,
    /// Robust spread inside a round and between round medians, per side.
    pub within_rel_a: Option<f64>,
    pub between_rel_a: Option<f64>,
    pub within_rel_b: Option<f64>,
    pub between_rel_b: Option<f64>,
    /// What the interval covers beyond this race's rounds (added after schema 2): with
    /// it, `ci_low`/`ci_high` include the run-to-run spread of races.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reruns: Option<Reruns>,
    /// The race's call (added after schema 2; absent in older sessions,
    /// whose `verdict` text says it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The smallest difference (relative) this race would call 9 times in
    /// 10 by its time limit, from its own standard error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_rel: Option<f64>,
    /// Placements the rounds rotated through, and the spread of their
    /// ratios (σ, relative, the rounds' noise included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placements: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement_rel: Option<f64>,
    /// Why the race stopped: `decided`, `time_limit`, `interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl AbReport {
    /// The race's call; sessions from before `decision` read it from the
    /// verdict's words.
    pub fn decided(&self) -> Decision {
        if let Some(d) = self.decision {
            return d;
        }
        let v = self.verdict.as_str();
        if v.starts_with("B faster") || (v.starts_with("B ") && v.ends_with("× faster")) {
            Decision::Faster
        } else if v.starts_with("B slower") || (v.starts_with("B ") && v.ends_with("× slower")) {
            Decision::Slower
        } else {
            Decision::Undecided
        }
    }
}
