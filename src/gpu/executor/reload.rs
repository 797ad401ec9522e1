//! The edit loop: a watched kernel folder changed. Its new source is built
//! and checked; the build it replaces stays loaded as a kernel of its own
//! (`LABEL~eN`), and the two race, so every edit ends in a verdict: faster,
//! slower, no difference, fails its check, or does not build.

use std::collections::{HashMap, VecDeque};

use super::Worker;
use crate::session::KernelId;
use crate::session::event::edit::{KEPT_EDITS, diff_summary};
use crate::session::event::*;
use crate::session::manifest::{Manifest, registry};

/// Edits per watched kernel (by label), and the earlier builds kept.
#[derive(Debug, Default)]
pub struct EditBook {
    kernels: HashMap<String, KernelEdits>,
}

#[derive(Debug, Default)]
struct KernelEdits {
    /// The newest edit's number (0: the source loaded at start).
    last: u32,
    /// The edit whose source builds now (the newest that built).
    loaded: u32,
    /// Earlier edits' builds kept loaded, oldest first.
    kept: VecDeque<(u32, KernelId)>,
}

impl EditBook {
    /// Numbers a new edit of `kernel`: (this edit, the edit it replaces).
    pub fn begin(&mut self, kernel: &str) -> (u32, u32) {
        let k = self.kernels.entry(kernel.to_string()).or_default();
        k.last += 1;
        (k.last, k.loaded)
    }

    /// `edit` built: it is what the kernel's variants run from now.
    pub fn built(&mut self, kernel: &str, edit: u32) {
        self.kernels.entry(kernel.to_string()).or_default().loaded = edit;
    }

    /// Keeps edit `edit`'s build under `id`; returns the builds dropped to
    /// keep the newest `KEPT_EDITS`.
    pub fn keep(&mut self, kernel: &str, edit: u32, id: KernelId) -> Vec<(u32, KernelId)> {
        let k = self.kernels.entry(kernel.to_string()).or_default();
        k.kept.push_back((edit, id));
        let over = k.kept.len().saturating_sub(KEPT_EDITS);
        k.kept.drain(..over).collect()
    }
}

impl Worker {
    /// A kernel folder changed: its new manifest (if it changed) is
    /// registered, its source replaces the old one, and the current variant
    /// is rebuilt, checked and raced against the build before; a bad
    /// manifest or a failed build keeps what was there.
    pub(super) fn reload(
        &mut self,
        label: &str,
        sources: Vec<(String, String)>,
        manifest: Option<String>,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> bool {
        let Some(old) = registry::lookup(label) else {
            self.fault_message(format!("reload of an unknown kernel '{label}'"), emit);
            return false;
        };
        let Some(kernel) = self.reload_manifest(label, old, manifest, emit) else {
            return false;
        };
        let m = registry::manifest(kernel);
        let old_files = self.engine.source_files(old);
        let program = crate::gpu::nvrtc::Program::from_files(sources, &m.entry);
        crate::gpu::cupti_timer::register_entry(&program.entry);
        let (edit, previous_edit) = self.edits.begin(label);
        let mut record = EditRecord {
            kernel: label.to_string(),
            edit,
            source_hash: String::new(),
            files: program.file_hashes(),
            diff: diff_summary(&old_files, &program.files()),
            previous: previous_edit,
            previous_build: None,
            dropped: Vec::new(),
        };
        let previous = self.engine.swap_source(kernel, program);
        record.source_hash = self.engine.source_hash(kernel);
        let verdict = |outcome, detail: &str| EditVerdict {
            kernel: label.to_string(),
            edit,
            against: previous_edit,
            outcome,
            detail: detail.to_string(),
            ..EditVerdict::default()
        };
        let Some((current, shape)) = self.current.filter(|(v, _)| v.kernel == old) else {
            // Nothing of this kernel runs: the next selection builds it.
            self.edits.built(label, edit);
            emit(self.stamp(Event::Edit(record)));
            let why = "another kernel is selected; its next selection builds this edit";
            emit(self.stamp(Event::EditVerdict(verdict(EditOutcome::NotRaced, why))));
            return self.current.is_some();
        };
        // The same toggles and tile by name under the new manifest, else its start.
        let variant = m
            .parse_variant(&current.short_name())
            .map(|(bits, tile)| Variant {
                kernel,
                toggles: crate::session::Toggles(bits),
                tile,
            })
            .unwrap_or_else(|_| Variant::start_of(kernel));
        if kernel != old {
            emit(self.stamp(Event::VariantSelected(VariantSelected { variant, shape })));
        }
        if !self.build(variant, shape, emit) {
            self.engine.restore_source(previous);
            emit(self.stamp(Event::Edit(record)));
            let why = self
                .build_error
                .take()
                .unwrap_or_else(|| "see the log".into());
            emit(self.stamp(Event::EditVerdict(verdict(EditOutcome::BuildFailed, &why))));
            return true;
        }
        self.edits.built(label, edit);
        let opponent = self.keep_previous(label, old, previous_edit, previous, &mut record, emit);
        emit(self.stamp(Event::Edit(record)));
        self.current = Some((variant, shape));
        if !self.check(variant, shape, emit) {
            let why = "its output is not the reference's (see the correctness line)";
            emit(self.stamp(Event::EditVerdict(verdict(EditOutcome::CheckFailed, why))));
            return true;
        }
        self.last_good = Some((variant, shape));
        let Some(opponent) = opponent else {
            let why = "the build before was not kept (its manifest changed)";
            emit(self.stamp(Event::EditVerdict(verdict(EditOutcome::NotRaced, why))));
            return true;
        };
        // A is the build before, B the edit: above 1, the edit is faster.
        let a = Variant {
            kernel: opponent,
            ..current
        };
        let v = match self.race(a, variant, shape, emit) {
            Some(report) => EditVerdict::from_race(label, edit, previous_edit, &report),
            None => verdict(EditOutcome::Interrupted, "the race failed (see the log)"),
        };
        emit(self.stamp(Event::EditVerdict(v)));
        true
    }

    /// The kernel a reload builds: `old`, or the one a changed manifest
    /// registers (said with KernelLoaded). None after a bad manifest.
    fn reload_manifest(
        &mut self,
        label: &str,
        old: KernelId,
        manifest: Option<String>,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> Option<KernelId> {
        let Some(text) = manifest else {
            return Some(old);
        };
        let before = registry::get(old);
        let file =
            registry::manifest_path(before.dir.as_deref().unwrap_or(std::path::Path::new(".")))
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| format!("{}'s manifest", before.manifest.name));
        match Manifest::parse(&text, &file) {
            Ok(m) => {
                let id = registry::register(label, m, before.dir.clone());
                emit(self.stamp(Event::KernelLoaded(registry::record(id))));
                Some(id)
            }
            Err(e) => {
                self.fault_message(
                    format!("manifest not reloaded, the kernel keeps the last good one: {e}"),
                    emit,
                );
                None
            }
        }
    }

    /// Keeps the replaced source's builds as edit `edit`'s kernel, said
    /// with KernelLoaded (so a session's variants of it read back), and
    /// drops the oldest kept beyond `KEPT_EDITS`. The kept kernel, if any.
    fn keep_previous(
        &mut self,
        label: &str,
        old: KernelId,
        edit: u32,
        previous: crate::gpu::engine::PreviousSource,
        record: &mut EditRecord,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> Option<KernelId> {
        let id = registry::register_edit_build(old, edit);
        if !self.engine.keep_previous(previous, id) {
            registry::forget(&registry::label(id));
            return None;
        }
        let mut loaded = registry::record(id);
        loaded.source_hash = Some(self.engine.source_hash(id));
        emit(self.stamp(Event::KernelLoaded(loaded)));
        record.previous_build = Some(registry::label(id));
        for (dropped, gone) in self.edits.keep(label, edit, id) {
            registry::forget(&registry::label(gone));
            self.engine.forget_kernel(gone);
            record.dropped.push(dropped);
        }
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_count_per_kernel_and_keep_the_newest_builds() {
        let mut book = EditBook::default();
        assert_eq!(book.begin(""), (1, 0));
        book.built("", 1);
        assert_eq!(book.begin("rowwarp"), (1, 0));
        // Edit 2 does not build: edit 3 replaces edit 1.
        assert_eq!(book.begin(""), (2, 1));
        assert_eq!(book.begin(""), (3, 1));
        let mut dropped = Vec::new();
        for e in 0..(KEPT_EDITS as u32 + 2) {
            dropped.extend(book.keep("", e, KernelId(100 + e as u16)));
        }
        assert_eq!(dropped, vec![(0, KernelId(100)), (1, KernelId(101))]);
    }
}
