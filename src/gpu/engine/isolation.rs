//! The isolated regime's settings: an idle gap and an emptied L2 before
//! every launch, unless the environment takes them apart for an experiment.

use crate::session::event::{L2Mode, Regime};

/// The idle gap before each launch in the isolated regime: long against
/// launch latency, short enough for hundreds of samples a second.
const ISOLATION_GAP_US: u32 = 1000;

/// How the isolated regime isolates. The defaults are the regime; the
/// environment can take it apart for the experiments in
/// docs/measurement.md (ATTNSCOPE_ISOLATION_GAP_US, ATTNSCOPE_ISOLATION_L2=hot,
/// ATTNSCOPE_SCRUB_CARVEOUT=0..100), and every batch records what was used.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Isolation {
    pub gap_us: u32,
    pub l2: L2Mode,
    /// The L2 scrub's preferred shared-memory carveout (percent), if set.
    pub scrub_carveout: Option<i32>,
}

impl Isolation {
    /// The L2 a launch in `regime` meets when the plan asks for `l2`: the
    /// isolated regime sets its own.
    pub fn l2_in(&self, regime: Regime, l2: L2Mode) -> L2Mode {
        if regime == Regime::Isolated {
            self.l2
        } else {
            l2
        }
    }

    pub(super) fn from_env() -> Isolation {
        let var = |k: &str| std::env::var(k).ok();
        Isolation {
            gap_us: var("ATTNSCOPE_ISOLATION_GAP_US")
                .and_then(|v| v.parse().ok())
                .unwrap_or(ISOLATION_GAP_US),
            l2: if var("ATTNSCOPE_ISOLATION_L2").as_deref() == Some("hot") {
                L2Mode::Hot
            } else {
                L2Mode::Cold
            },
            scrub_carveout: var("ATTNSCOPE_SCRUB_CARVEOUT")
                .and_then(|v| v.parse().ok())
                .filter(|p| (0..=100).contains(p)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_isolated_regime_reports_its_own_l2_not_the_plans() {
        // bench --json once said "hot" for an isolated run whose L2 was emptied before every launch.
        let iso = Isolation {
            gap_us: 50,
            l2: L2Mode::Cold,
            scrub_carveout: None,
        };
        assert_eq!(iso.l2_in(Regime::Isolated, L2Mode::Hot), L2Mode::Cold);
        assert_eq!(iso.l2_in(Regime::BackToBack, L2Mode::Hot), L2Mode::Hot);
        assert_eq!(iso.l2_in(Regime::Interleaved, L2Mode::Cold), L2Mode::Cold);
        let hot = Isolation {
            l2: L2Mode::Hot,
            ..iso
        };
        assert_eq!(hot.l2_in(Regime::Isolated, L2Mode::Cold), L2Mode::Hot);
    }
}
