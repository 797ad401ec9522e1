//! The edit history of watched kernel folders: what each edit changed and
//! what it did against the build before it. Also the words that say under
//! which conditions a run was measured, since "edit 3" is one of them.

use super::{Conditions, Key, Level, SessionState};
use crate::session::Regime;
use crate::session::event::edit::race_words;
use crate::session::event::{AbReport, EditOutcome, EditRecord, EditVerdict, L2Mode, regime_name};
use crate::session::manifest::registry;

/// One edit and, once its build, check and race are over, its verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct EditState {
    pub record: EditRecord,
    pub verdict: Option<EditVerdict>,
}

impl EditState {
    /// One line for summaries: "edit 3 (softmax.cuh +3 −1): edit 3 vs edit
    /// 2: 1.8% faster [1.2, 2.4]".
    pub fn line(&self) -> String {
        let r = &self.record;
        let verdict = self.verdict.as_ref().map_or_else(
            || format!("no verdict recorded (against edit {})", r.previous),
            EditVerdict::text,
        );
        format!("edit {} ({}): {verdict}", r.edit, r.diff)
    }
}

impl SessionState {
    pub(super) fn on_edit(&mut self, t: u64, e: &EditRecord) {
        let who = kernel_words(&e.kernel);
        self.log(
            t,
            Level::Info,
            format!("{who}: edit {} saved ({})", e.edit, e.diff),
        );
        if !e.dropped.is_empty() {
            let list: Vec<String> = e.dropped.iter().map(|d| format!("edit {d}")).collect();
            self.log(
                t,
                Level::Info,
                format!(
                    "{who}: the builds of {} are no longer kept (the newest {} are)",
                    list.join(", "),
                    crate::session::event::edit::KEPT_EDITS
                ),
            );
        }
        let history = self.edits.entry(e.kernel.clone()).or_default();
        history.retain(|s| s.record.edit != e.edit);
        history.push(EditState {
            record: e.clone(),
            verdict: None,
        });
    }

    pub(super) fn on_edit_verdict(&mut self, t: u64, v: &EditVerdict) {
        let level = match v.outcome {
            EditOutcome::BuildFailed | EditOutcome::CheckFailed => Level::Error,
            EditOutcome::Slower => Level::Warn,
            _ => Level::Info,
        };
        let text = v.text();
        self.log(t, level, format!("{}: {text}", kernel_words(&v.kernel)));
        if let Some(s) = self
            .edits
            .get_mut(&v.kernel)
            .and_then(|h| h.iter_mut().rev().find(|s| s.record.edit == v.edit))
        {
            s.verdict = Some(v.clone());
        }
        self.edit_line = Some((v.outcome, text));
    }

    /// A finished race of an earlier edit's build (A) against its kernel
    /// (B) reads in edit words on the screen.
    pub(super) fn race_of_edits(&mut self, ab: &AbReport) {
        let Some((kernel, earlier)) = self.edit_of_build(&registry::label(ab.a.kernel)) else {
            return;
        };
        if registry::label(ab.b.kernel) != kernel {
            return;
        }
        let now = self.current_edit(&kernel).unwrap_or(0);
        let (outcome, words) = race_words(ab);
        self.edit_line = Some((outcome, format!("edit {now} vs edit {earlier}: {words}")));
    }

    /// The kernel and edit number whose build a snapshot label names.
    pub fn edit_of_build(&self, label: &str) -> Option<(String, u32)> {
        self.edits.iter().find_map(|(kernel, history)| {
            history
                .iter()
                .find(|s| s.record.previous_build.as_deref() == Some(label))
                .map(|s| (kernel.clone(), s.record.previous))
        })
    }

    /// The newest edit of `kernel` that built (None: no edits recorded).
    pub fn current_edit(&self, kernel: &str) -> Option<u32> {
        let history = self.edits.get(kernel)?;
        let built = |s: &&super::EditState| {
            s.verdict
                .as_ref()
                .is_none_or(|v| v.outcome != EditOutcome::BuildFailed)
        };
        Some(
            history
                .iter()
                .rev()
                .find(built)
                .map_or(0, |s| s.record.edit),
        )
    }

    /// Earlier edits of `kernel` whose builds are still loaded, newest
    /// first, each with the label that names its build.
    pub fn kept_edits(&self, kernel: &str) -> Vec<(u32, String)> {
        let Some(history) = self.edits.get(kernel) else {
            return Vec::new();
        };
        let dropped: Vec<u32> = history
            .iter()
            .flat_map(|s| s.record.dropped.clone())
            .collect();
        let mut out: Vec<(u32, String)> = history
            .iter()
            .filter_map(|s| Some((s.record.previous, s.record.previous_build.clone()?)))
            .filter(|(e, _)| !dropped.contains(e))
            .collect();
        out.sort_by_key(|(e, _)| std::cmp::Reverse(*e));
        out.dedup_by_key(|(e, _)| *e);
        out
    }

    /// Which edit of its kernel a run's source is: None when the kernel
    /// was never edited this session (or the run's source is not known).
    fn edit_of_run(&self, key: &Key, conditions: &Conditions) -> Option<u32> {
        let hash = conditions.source.as_deref()?;
        let label = registry::label(key.variant.kernel);
        let kernel = match self.edit_of_build(&label) {
            Some((kernel, _)) => kernel,
            None => label,
        };
        let history = self.edits.get(&kernel)?;
        // Edit 0's source is the only one no edit record names.
        Some(
            history
                .iter()
                .find(|s| s.record.source_hash == hash)
                .map_or(0, |s| s.record.edit),
        )
    }

    /// Under which conditions a run was measured: "back-to-back · L2 hot ·
    /// edit 3", with the inputs when they are not the default.
    pub fn conditions_text(&self, key: &Key, regime: Option<Regime>, c: &Conditions) -> String {
        let mut parts = vec![regime_name(regime).to_string()];
        parts.push(match c.l2 {
            L2Mode::Hot => "L2 hot".into(),
            L2Mode::Cold => "L2 cold".into(),
        });
        if let Some(i) = c.inputs.filter(|i| *i != crate::session::Inputs::default()) {
            parts.push(format!("{i} inputs"));
        }
        if let Some(e) = self.edit_of_run(key, c) {
            parts.push(format!("edit {e}"));
        }
        parts.join(" · ")
    }
}

/// "kernel rowwarp" or "the kernel" (the primary one).
fn kernel_words(label: &str) -> String {
    if label.is_empty() {
        "kernel".into()
    } else {
        format!("kernel {label}")
    }
}
