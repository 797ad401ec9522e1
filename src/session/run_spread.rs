//! The run-to-run spreads sessions recorded in their header from issue 38
//! until issue 55: the spread between separate processes measuring the same
//! thing, which `bench --runs` and `ab --runs` saved per GPU model and every
//! later interval added. Nothing is saved or carried now (every run samples
//! placements itself, docs/measurement.md); the types stay so that those
//! sessions' headers read as they were written.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One measured spread: the standard deviation of the runs' medians (or
/// speedups) over their mean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub rel: f64,
    /// Separate processes it was measured over.
    pub runs: u32,
    pub measured_unix_ms: u64,
    /// What ran: the variants and shape, or the race.
    pub what: String,
}

/// One GPU model's spreads: solo medians by regime name, and races.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSpread {
    #[serde(default)]
    pub solo: BTreeMap<String, Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<Spread>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_spread_reads_back() {
        let text =
            r#"{"solo":{"back-to-back":{"rel":0.003,"runs":8,"measured_unix_ms":1,"what":"x"}}}"#;
        let g: GpuSpread = serde_json::from_str(text).unwrap();
        assert_eq!(g.solo["back-to-back"].rel, 0.003);
        assert_eq!(g.race, None);
        assert_eq!(
            serde_json::from_str::<GpuSpread>(&serde_json::to_string(&g).unwrap()).unwrap(),
            g
        );
    }
}
