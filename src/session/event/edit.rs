//! An edit of a watched kernel folder, and what it did: it did not build,
//! it failed its check, or it raced the build before it. Edits are
//! numbered per kernel from the session's start (edit 0: the source the
//! session loaded), so a verdict reads "edit 3 vs edit 2: 1.8% faster".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::AbReport;

/// Earlier builds of one kernel kept loaded as race opponents; an older
/// one is dropped (and the edit record says which) when a newer is kept.
pub const KEPT_EDITS: usize = 8;

/// A kernel folder's source changed. Added after schema 2.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EditRecord {
    /// The kernel's label ("" for the primary kernel).
    pub kernel: String,
    pub edit: u32,
    /// The hash builds of this source carry (`BuildReport::source_hash`).
    pub source_hash: String,
    /// Each file's own hash, by folder-relative name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Lines added and removed per file: "softmax.cuh +3 −1".
    pub diff: String,
    /// The edit this one replaced (the last one that built).
    pub previous: u32,
    /// The label the previous edit's build stays loaded under (None: it
    /// is not kept, as when this edit does not build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_build: Option<String>,
    /// Earlier edits whose builds were dropped to keep `KEPT_EDITS`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<u32>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditOutcome {
    Faster,
    Slower,
    #[default]
    NoDifference,
    /// The race was stopped before its end: what it had is no verdict.
    Interrupted,
    CheckFailed,
    BuildFailed,
    /// Built, but no race ran: another kernel was selected, or the build
    /// before was not kept (a changed manifest); the detail says which.
    NotRaced,
    /// An outcome written by a newer tool.
    #[serde(other)]
    Unknown,
}

/// What an edit did, once its build, check and race are over. Added
/// after schema 2.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EditVerdict {
    pub kernel: String,
    pub edit: u32,
    /// The edit it was raced against.
    pub against: u32,
    pub outcome: EditOutcome,
    /// time(against) ÷ time(edit) and its 95% interval (races only):
    /// above 1, the edit made the kernel faster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<(f64, f64)>,
    /// "1.8% faster [1.2, 2.4]", "no difference detected", or the first
    /// line of why it failed.
    pub detail: String,
}

impl EditVerdict {
    /// "edit 3 vs edit 2: 1.8% faster [1.2, 2.4]", "edit 3 does not build: …".
    pub fn text(&self) -> String {
        let (e, a) = (self.edit, self.against);
        match self.outcome {
            EditOutcome::BuildFailed => format!("edit {e} does not build: {}", self.detail),
            EditOutcome::CheckFailed => format!("edit {e} fails its check: {}", self.detail),
            EditOutcome::NotRaced => format!("edit {e} not raced: {}", self.detail),
            _ => format!("edit {e} vs edit {a}: {}", self.detail),
        }
    }

    /// A race's report in edit words; `a` of the race is edit `against`,
    /// `b` is edit `edit`.
    pub fn from_race(kernel: &str, edit: u32, against: u32, ab: &AbReport) -> EditVerdict {
        let (outcome, detail) = race_words(ab);
        let finite = ab.speedup.is_finite();
        EditVerdict {
            kernel: kernel.to_string(),
            edit,
            against,
            outcome,
            speedup: finite.then_some(ab.speedup),
            ci: (ab.ci_low.is_finite() && ab.ci_high.is_finite())
                .then_some((ab.ci_low, ab.ci_high)),
            detail,
        }
    }
}

/// A race's verdict with "B" read as the newer edit: "1.8% faster [1.2,
/// 2.4]", "2.10× faster [2.05, 2.16]", "no difference detected".
pub fn race_words(ab: &AbReport) -> (EditOutcome, String) {
    let (lo, hi) = (ab.ci_low, ab.ci_high);
    let pct = |x: f64| format!("{:.1}", x * 100.0);
    let verdict = ab.verdict.as_str();
    let (outcome, words) = if let Some(rest) = verdict.strip_prefix("B faster by ") {
        (
            EditOutcome::Faster,
            format!("{rest} faster [{}, {}]", pct(lo - 1.0), pct(hi - 1.0)),
        )
    } else if let Some(rest) = verdict.strip_prefix("B slower by ") {
        (
            EditOutcome::Slower,
            format!(
                "{rest} slower [{}, {}]",
                pct(1.0 / hi - 1.0),
                pct(1.0 / lo - 1.0)
            ),
        )
    } else if verdict.starts_with("B ") && verdict.ends_with("× faster") {
        let rest = &verdict[2..];
        (EditOutcome::Faster, format!("{rest} [{lo:.2}, {hi:.2}]"))
    } else if verdict.starts_with("B ") && verdict.ends_with("× slower") {
        let rest = &verdict[2..];
        (
            EditOutcome::Slower,
            format!("{rest} [{:.2}, {:.2}]", 1.0 / hi, 1.0 / lo),
        )
    } else {
        (EditOutcome::NoDifference, verdict.to_string())
    };
    if ab.done {
        (outcome, words)
    } else {
        (
            EditOutcome::Interrupted,
            format!("race stopped early ({words} so far)"),
        )
    }
}

/// Lines added and removed per changed file, old files against new:
/// "softmax.cuh +3 −1, attention.cu +1 −0"; "no lines changed".
pub fn diff_summary(old: &[(String, String)], new: &[(String, String)]) -> String {
    let find = |files: &[(String, String)], name: &str| {
        files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
    };
    let mut names: Vec<&String> = new.iter().map(|(n, _)| n).collect();
    names.extend(
        old.iter()
            .map(|(n, _)| n)
            .filter(|n| !new.iter().any(|(m, _)| m == *n)),
    );
    let parts: Vec<String> = names
        .into_iter()
        .filter_map(|name| {
            let (a, b) = (find(old, name), find(new, name));
            let (plus, minus) = line_diff(a.as_deref().unwrap_or(""), b.as_deref().unwrap_or(""));
            let what = match (a.is_some(), b.is_some()) {
                (false, true) => " (new)",
                (true, false) => " (gone)",
                _ => "",
            };
            (plus + minus > 0 || !what.is_empty()).then(|| format!("{name} +{plus} −{minus}{what}"))
        })
        .collect();
    if parts.is_empty() {
        "no lines changed".into()
    } else {
        parts.join(", ")
    }
}

/// Cells of the longest-common-subsequence table beyond which the diff
/// counts lines as a multiset instead (a moved line then counts as kept).
const LCS_CELLS: usize = 4_000_000;

/// (lines added, lines removed) from `old` to `new`: the common head and
/// tail trimmed, then a longest common subsequence of what is left.
pub fn line_diff(old: &str, new: &str) -> (usize, usize) {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[head..], &b[head..]);
    let tail = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (&a[..a.len() - tail], &b[..b.len() - tail]);
    let common = if (a.len() + 1).saturating_mul(b.len() + 1) <= LCS_CELLS {
        lcs(a, b)
    } else {
        let mut left: BTreeMap<&str, usize> = BTreeMap::new();
        for l in a {
            *left.entry(l).or_default() += 1;
        }
        b.iter()
            .filter(|l| match left.get_mut(*l) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            })
            .count()
    };
    (b.len() - common, a.len() - common)
}

fn lcs(a: &[&str], b: &[&str]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diag = 0;
        for (j, y) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = if x == y { diag + 1 } else { up.max(row[j]) };
            diag = up;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, text: &str) -> (String, String) {
        (name.into(), text.into())
    }

    #[test]
    fn diffs_count_lines_per_file() {
        assert_eq!(line_diff("a\nb\nc\n", "a\nB\nc\nd\n"), (2, 1));
        assert_eq!(line_diff("", ""), (0, 0));
        assert_eq!(line_diff("x\ny\n", "y\nx\n"), (1, 1));
        let old = [f("main.cu", "a\nb\n"), f("softmax.cuh", "1\n2\n3\n")];
        let new = [
            f("main.cu", "a\nb\n"),
            f("softmax.cuh", "1\n2x\n3\n4\n5\n6\n"),
        ];
        assert_eq!(diff_summary(&old, &new), "softmax.cuh +4 −1");
        assert_eq!(diff_summary(&old, &old), "no lines changed");
        let new = [f("main.cu", "a\n"), f("tile.cuh", "t\n")];
        assert_eq!(
            diff_summary(&old, &new),
            "main.cu +0 −1, tile.cuh +1 −0 (new), softmax.cuh +0 −3 (gone)"
        );
    }

    fn ab(verdict: &str, speedup: f64, lo: f64, hi: f64, done: bool) -> AbReport {
        AbReport {
            verdict: verdict.into(),
            speedup,
            ci_low: lo,
            ci_high: hi,
            done,
            ..AbReport::default()
        }
    }

    #[test]
    fn a_race_reads_in_edit_words() {
        let v =
            EditVerdict::from_race("", 3, 2, &ab("B faster by 1.8%", 1.018, 1.012, 1.024, true));
        assert_eq!(v.outcome, EditOutcome::Faster);
        assert_eq!(v.text(), "edit 3 vs edit 2: 1.8% faster [1.2, 2.4]");
        let (o, w) = race_words(&ab("B slower by 4.0%", 0.9615, 0.95, 0.97, true));
        assert_eq!(
            (o, w.as_str()),
            (EditOutcome::Slower, "4.0% slower [3.1, 5.3]")
        );
        let (o, w) = race_words(&ab("no difference detected", 1.0, 0.99, 1.01, true));
        assert_eq!(
            (o, w.as_str()),
            (EditOutcome::NoDifference, "no difference detected")
        );
        let (o, _) = race_words(&ab("B faster by 1.8%", 1.018, 1.0, 1.03, false));
        assert_eq!(o, EditOutcome::Interrupted);
        let (o, w) = race_words(&ab("B 2.10× faster", 2.1, 2.05, 2.16, true));
        assert_eq!(
            (o, w.as_str()),
            (EditOutcome::Faster, "2.10× faster [2.05, 2.16]")
        );
        let failed = EditVerdict {
            edit: 4,
            against: 3,
            outcome: EditOutcome::BuildFailed,
            detail: "error: expected ';'".into(),
            ..EditVerdict::default()
        };
        assert_eq!(failed.text(), "edit 4 does not build: error: expected ';'");
    }
}
