//! Which inputs a correctness check (and a timing run) draws: the name of a
//! distribution, recorded with the seed in every correctness event. The
//! generators are in `metrics/qkv.rs`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An input distribution for Q, K and V.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Inputs {
    /// Q, K, V uniform in [-1, 1]: scores spread about 2.5 log2 units.
    #[default]
    Uniform,
    /// Q, K, V normal with σ (in thousandths): σ = 4 gives a peaked softmax.
    Normal { sigma_milli: u32 },
    /// Scores climb along the keys in steps of 12 log2 units (40 in bf16), so
    /// every row's running maximum rises mid-sequence several times (the
    /// rescale paths run) and a P kept against a stale maximum overflows.
    Rising,
    /// Uniform, but about 1% of the keys 40× larger: a few keys dominate.
    Outliers,
    /// Every key of a head the same vector: all scores in a row tie, and O
    /// is the mean of V.
    Ties,
    /// Q, K uniform in ±16 (scores of hundreds of nats), V uniform in
    /// ±60000, near fp16's largest finite value; outputs stay finite.
    Large,
    /// Q, K uniform in [-1, 1], V uniform in [0, 60000]: O's mean is far
    /// from 0, so a key weighted wrong in P·V moves it (the pooled test
    /// sees the shift), and an fp16 intermediate of O before 1/l overflows.
    Offset,
}

impl Inputs {
    /// What `selftest` sweeps and `I` cycles through in live mode.
    pub const ALL: [Inputs; 8] = [
        Inputs::Uniform,
        Inputs::Normal { sigma_milli: 1000 },
        Inputs::Normal { sigma_milli: 4000 },
        Inputs::Rising,
        Inputs::Outliers,
        Inputs::Ties,
        Inputs::Large,
        Inputs::Offset,
    ];

    /// One line each, for `--help` and the docs.
    pub fn describe(self) -> &'static str {
        match self {
            Inputs::Uniform => "Q, K, V uniform in [-1, 1] (the seeds' inputs)",
            Inputs::Normal { .. } => "Q, K, V normal with σ: σ=4 makes the softmax peaked",
            Inputs::Rising => {
                "scores climb along the keys in steps of 12 log2 (bf16: 40): every row's running max rises mid-sequence, so the rescale paths run and a P kept against a stale max overflows"
            }
            Inputs::Outliers => "uniform, with about 1% of keys 40× larger",
            Inputs::Ties => "all keys of a head equal: every score in a row ties, O = mean of V",
            Inputs::Large => "Q, K in ±16 and V in ±60000, near fp16's range without overflow",
            Inputs::Offset => {
                "Q, K uniform, V in [0, 60000]: O's mean far from 0 (a misweighted key shifts it), an unnormalized fp16 O overflows"
            }
        }
    }

    /// The help text listing every distribution.
    pub fn help() -> String {
        let mut out = String::new();
        for i in Inputs::ALL {
            if matches!(i, Inputs::Normal { sigma_milli } if sigma_milli != 1000) {
                continue;
            }
            let name = match i {
                Inputs::Normal { .. } => "normal:σ".to_string(),
                other => other.to_string(),
            };
            out.push_str(&format!("  {name:<10} {}\n", i.describe()));
        }
        out
    }
}

/// A seed no earlier check used: the wall clock's nanoseconds mixed with a
/// process-wide counter. Printed with every check, so `--seed` reproduces it.
pub fn fresh_seed() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    // splitmix64 of the two, so consecutive seeds share no bits.
    let mut z = now ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(std::process::id()) << 32;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) % 1_000_000_000_000
}

impl fmt::Display for Inputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Inputs::Uniform => f.write_str("uniform"),
            Inputs::Normal { sigma_milli } => {
                let s = *sigma_milli as f64 / 1000.0;
                write!(f, "normal:{}", format_sigma(s))
            }
            Inputs::Rising => f.write_str("rising"),
            Inputs::Outliers => f.write_str("outliers"),
            Inputs::Ties => f.write_str("ties"),
            Inputs::Large => f.write_str("large"),
            Inputs::Offset => f.write_str("offset"),
        }
    }
}

fn format_sigma(s: f64) -> String {
    let t = format!("{s:.3}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl FromStr for Inputs {
    type Err = String;
    fn from_str(text: &str) -> Result<Inputs, String> {
        let text = text.trim();
        let known = "uniform, normal:σ (e.g. normal:4), rising, outliers, ties, large, offset";
        match text {
            "uniform" => return Ok(Inputs::Uniform),
            "rising" => return Ok(Inputs::Rising),
            "outliers" => return Ok(Inputs::Outliers),
            "ties" => return Ok(Inputs::Ties),
            "large" => return Ok(Inputs::Large),
            "offset" => return Ok(Inputs::Offset),
            _ => {}
        }
        let Some(sigma) = text.strip_prefix("normal:") else {
            return Err(format!("inputs '{text}' is not one of {known}"));
        };
        let s: f64 = sigma
            .parse()
            .map_err(|_| format!("inputs '{text}': σ '{sigma}' is not a number"))?;
        if !(0.001..=64.0).contains(&s) {
            return Err(format!(
                "inputs '{text}': σ must be between 0.001 and 64 (larger overflows fp16)"
            ));
        }
        Ok(Inputs::Normal {
            sigma_milli: (s * 1000.0).round() as u32,
        })
    }
}

/// The distributions one correctness check runs, in order, each on the
/// same seed. The first is the one a command that times on its check's
/// inputs (`ab`) times on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSet(pub Vec<Inputs>);

impl InputSet {
    /// Every command's check unless told otherwise: uniform; rising, which
    /// makes the running maximum rise mid-row so the online softmax's
    /// rescale runs (uniform inputs never trigger the lazy rescale of the
    /// WMMA P·V, mma and wgmma paths: docs/measurement.md); and offset,
    /// whose V has a mean far from 0 (a key weighted wrong shifts O) and
    /// whose unnormalized O overflows fp16.
    pub fn default_check() -> InputSet {
        InputSet(vec![Inputs::Uniform, Inputs::Rising, Inputs::Offset])
    }

    /// `i` and the rest of the default check (live's `I` picks `i`): a
    /// distribution that drives the rescale, and offset.
    pub fn with_rescale(i: Inputs) -> InputSet {
        let mut out = vec![i];
        for other in [Inputs::Rising, Inputs::Offset] {
            if !out.contains(&other) {
                out.push(other);
            }
        }
        if out.len() < 3 {
            out.insert(1, Inputs::Uniform);
        }
        InputSet(out)
    }

    pub fn all() -> InputSet {
        InputSet(Inputs::ALL.to_vec())
    }

    pub fn first(&self) -> Inputs {
        self.0.first().copied().unwrap_or_default()
    }
}

impl Default for InputSet {
    fn default() -> Self {
        InputSet::default_check()
    }
}

impl fmt::Display for InputSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.0.iter().map(Inputs::to_string).collect();
        f.write_str(&names.join(","))
    }
}

impl FromStr for InputSet {
    type Err = String;
    /// `all`, or distributions separated by commas (each once).
    fn from_str(text: &str) -> Result<InputSet, String> {
        if text.trim() == "all" {
            return Ok(InputSet::all());
        }
        let mut out: Vec<Inputs> = Vec::new();
        for part in text.split(',') {
            let i: Inputs = part.parse()?;
            if !out.contains(&i) {
                out.push(i);
            }
        }
        Ok(InputSet(out))
    }
}

impl Serialize for Inputs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Inputs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Inputs, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for i in Inputs::ALL {
            assert_eq!(i.to_string().parse::<Inputs>(), Ok(i), "{i}");
            let json = serde_json::to_string(&i).unwrap();
            assert_eq!(serde_json::from_str::<Inputs>(&json).unwrap(), i);
        }
        assert_eq!(
            "normal:0.5".parse::<Inputs>(),
            Ok(Inputs::Normal { sigma_milli: 500 })
        );
        assert_eq!(Inputs::Normal { sigma_milli: 4000 }.to_string(), "normal:4");
    }

    #[test]
    fn input_sets_parse_and_default_to_a_rescale() {
        let d = InputSet::default();
        assert_eq!(d.to_string(), "uniform,rising,offset");
        assert_eq!("uniform,rising,offset".parse::<InputSet>(), Ok(d));
        assert_eq!(
            "all".parse::<InputSet>().unwrap().0.len(),
            Inputs::ALL.len()
        );
        assert_eq!(
            "rising,rising".parse::<InputSet>().unwrap().0,
            vec![Inputs::Rising]
        );
        assert!("uniform,gauss".parse::<InputSet>().is_err());
        assert!("".parse::<InputSet>().is_err());
        assert_eq!(
            InputSet::with_rescale(Inputs::Rising).0,
            vec![Inputs::Rising, Inputs::Uniform, Inputs::Offset]
        );
        assert_eq!(
            InputSet::with_rescale(Inputs::Ties).0,
            vec![Inputs::Ties, Inputs::Rising, Inputs::Offset]
        );
        assert_eq!(InputSet::with_rescale(Inputs::Ties).first(), Inputs::Ties);
    }

    #[test]
    fn bad_names_say_what_is_known() {
        let e = "gauss".parse::<Inputs>().unwrap_err();
        assert!(e.contains("rising") && e.contains("normal:σ"), "{e}");
        assert!(
            "normal:x"
                .parse::<Inputs>()
                .unwrap_err()
                .contains("not a number")
        );
        assert!(
            "normal:100"
                .parse::<Inputs>()
                .unwrap_err()
                .contains("between")
        );
        assert!(Inputs::help().contains("rising"));
    }
}
