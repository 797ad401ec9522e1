//! How much a rerun moves on one GPU: the spread between separate processes
//! measuring the same thing, measured by `bench --runs N` (each variant's
//! median) and `ab --runs N` (a race's speedup), kept per GPU model in the
//! cache directory (`run-spread.json`) and recorded in every session's
//! header. Nothing inside one process can see it (run99: races differed by
//! 0.058% between processes while each knew its ratio to 0.015%), so an
//! interval that is to hold for a rerun takes it from here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The file in the cache directory.
pub const FILE: &str = "run-spread.json";

/// When no race spread was measured on this GPU model: run99's 0.058% on an
/// H100 (5 processes), rounded up. Said as assumed wherever it is used.
pub const ASSUMED_RACE_REL: f64 = 0.001;

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

/// The file: GPU model name → its spreads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSpreads {
    pub version: u32,
    #[serde(default)]
    pub gpus: BTreeMap<String, GpuSpread>,
}

impl RunSpreads {
    /// Reads the file's text; a damaged file is an error naming it.
    pub fn parse(text: &str, file: &str) -> Result<RunSpreads, String> {
        let s: RunSpreads = serde_json::from_str(text).map_err(|e| {
            format!("{file}: not a run-spread file ({e}); delete it and measure again with `attnscope bench --runs 8`")
        })?;
        for (gpu, g) in &s.gpus {
            let bad = g
                .solo
                .values()
                .chain(g.race.as_ref())
                .find(|sp| !(sp.rel.is_finite() && sp.rel >= 0.0 && sp.rel < 0.5));
            if let Some(sp) = bad {
                return Err(format!(
                    "{file}: {gpu}'s spread {} is not a fraction between 0 and 0.5",
                    sp.rel
                ));
            }
        }
        Ok(s)
    }

    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Records a newer measurement for `gpu`: solo under `regime`, or the
    /// race's when `regime` is None.
    pub fn record(&mut self, gpu: &str, regime: Option<&str>, spread: Spread) {
        self.version = 1;
        let g = self.gpus.entry(gpu.to_string()).or_default();
        match regime {
            Some(r) => {
                g.solo.insert(r.to_string(), spread);
            }
            None => g.race = Some(spread),
        }
    }
}

/// The file in `dir` (the cache directory); none there is an empty set.
pub fn load(dir: &std::path::Path) -> Result<RunSpreads, String> {
    let path = dir.join(FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => RunSpreads::parse(&text, &path.display().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RunSpreads::default()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Adds one measurement to the file in `dir`, keeping the others; returns
/// the file's path.
pub fn save(
    dir: &std::path::Path,
    gpu: &str,
    regime: Option<&str>,
    spread: Spread,
) -> Result<std::path::PathBuf, String> {
    let mut all = load(dir)?;
    all.record(gpu, regime, spread);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(FILE);
    let tmp = dir.join(format!("{FILE}.{}", std::process::id()));
    std::fs::write(&tmp, all.to_text())
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Where an interval's between-run term came from, said with it.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// Separate processes on this GPU model (`bench --runs` / `ab --runs`).
    Measured(Spread),
    /// The drift between this run's own batches (solo, nothing measured or
    /// the drift is larger).
    Drift,
    /// Nothing measured on this GPU model: `ASSUMED_RACE_REL`.
    Assumed,
}

impl Source {
    /// "run-to-run on this GPU (8 processes)", for a line on screen.
    pub fn describe(&self) -> String {
        match self {
            Source::Measured(s) => format!("run-to-run on this GPU ({} processes)", s.runs),
            Source::Drift => "the drift between this run's batches".into(),
            Source::Assumed => {
                "an assumed run-to-run spread (not measured on this GPU: `attnscope ab --runs 5`)"
                    .into()
            }
        }
    }
}

/// The between-run σ (relative) for a solo median: the larger of the
/// spread measured across processes on this GPU model and the drift between
/// this run's own batches. Either alone fell short on an H100: a measured
/// σ of 0.09% held 43 of 56 reruns when one run of the eight sat 1% off
/// (run115), and the drift alone 50 of 56; the larger held 51.
pub fn solo_term(gpu: Option<&GpuSpread>, regime: &str, drift_rel: f64) -> (f64, Source) {
    let drift = if drift_rel.is_finite() {
        drift_rel.max(0.0)
    } else {
        0.0
    };
    match gpu.and_then(|g| g.solo.get(regime)) {
        Some(s) if s.rel >= drift => (s.rel, Source::Measured(s.clone())),
        _ => (drift, Source::Drift),
    }
}

/// The between-run σ (relative) for a race's speedup.
pub fn race_term(gpu: Option<&GpuSpread>) -> (f64, Source) {
    match gpu.and_then(|g| g.race.as_ref()) {
        Some(s) => (s.rel, Source::Measured(s.clone())),
        None => (ASSUMED_RACE_REL, Source::Assumed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(rel: f64) -> Spread {
        Spread {
            rel,
            runs: 8,
            measured_unix_ms: 1,
            what: "x".into(),
        }
    }

    #[test]
    fn a_file_round_trips_and_bad_ones_say_why() {
        let mut s = RunSpreads::default();
        s.record("H100", Some("back-to-back"), spread(0.003));
        s.record("H100", None, spread(0.0006));
        let back = RunSpreads::parse(&s.to_text(), "f").unwrap();
        assert_eq!(back, s);
        let e = RunSpreads::parse("{", "f.json").unwrap_err();
        assert!(e.starts_with("f.json: not a run-spread file"), "{e}");
        s.record("H100", None, spread(f64::INFINITY));
        let text = s.to_text().replace("null", "7.0");
        let e = RunSpreads::parse(&text, "f.json").unwrap_err();
        assert!(e.contains("not a fraction"), "{e}");
    }

    #[test]
    fn saving_keeps_other_measurements() {
        let dir = std::env::temp_dir().join(format!("attnscope-spread-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(load(&dir).unwrap(), RunSpreads::default());
        save(&dir, "H100", Some("back-to-back"), spread(0.003)).unwrap();
        save(&dir, "H100", None, spread(0.0006)).unwrap();
        let all = load(&dir).unwrap();
        assert_eq!(all.gpus["H100"].solo["back-to-back"].rel, 0.003);
        assert_eq!(all.gpus["H100"].race.as_ref().unwrap().rel, 0.0006);
        std::fs::write(dir.join(FILE), "garbage").unwrap();
        assert!(load(&dir).unwrap_err().contains("not a run-spread file"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_larger_of_the_measured_spread_and_the_drift_is_used() {
        let mut g = GpuSpread::default();
        g.solo.insert("back-to-back".into(), spread(0.003));
        assert_eq!(solo_term(Some(&g), "back-to-back", 0.001).0, 0.003);
        assert_eq!(
            solo_term(Some(&g), "back-to-back", 0.004),
            (0.004, Source::Drift)
        );
        assert_eq!(solo_term(None, "back-to-back", f64::NAN).0, 0.0);
        assert_eq!(
            solo_term(Some(&g), "isolated", 0.001),
            (0.001, Source::Drift)
        );
        assert_eq!(
            solo_term(None, "back-to-back", 0.002),
            (0.002, Source::Drift)
        );
        assert_eq!(race_term(None), (ASSUMED_RACE_REL, Source::Assumed));
        g.race = Some(spread(0.0005));
        assert_eq!(race_term(Some(&g)).0, 0.0005);
    }
}
