//! Which build of an edited kernel each event measured. A session records
//! every event under the name it had then: the kernel's current build is
//! plain (`wmma+pv+async`) whichever edit it is, and an edit's build is
//! renamed `bundled~eN:…` only once the next edit replaces it. Exported as
//! recorded, the samples of edits 0–3 (one a planted slowdown) would be one
//! series beside `bundled~e0`, a build they partly are. Here each event of
//! an edited kernel goes under the name its build ends with, as the
//! dashboard shows it at the session's end: an earlier edit's `~eN`, the
//! newest build's plain name. That name is known only from the edits after
//! the event, so the session is read twice: `observe` every event, then
//! `rename` every event, in the same order.

use std::collections::{HashMap, HashSet};

use crate::session::Variant;
use crate::session::event::{EditOutcome, Event, Stamped};
use crate::session::manifest::registry::{self, EDIT_MARK, KernelId};

/// One edited kernel's edits, from the whole session.
#[derive(Default)]
struct History {
    /// Every edit recorded.
    edits: Vec<u32>,
    /// The label each replaced build was kept under, by its edit.
    kept: HashMap<u32, String>,
    /// Edits that did not build: the build before stays the kernel's.
    failed: HashSet<u32>,
}

impl History {
    /// The edit whose build the kernel ends with: it keeps the plain name.
    fn newest(&self) -> u32 {
        self.edits
            .iter()
            .filter(|e| !self.failed.contains(e))
            .max()
            .copied()
            .unwrap_or(0)
    }

    /// What an earlier edit's kept label starts with (`bundled` of
    /// `bundled~e0`), for naming a build the session kept under none.
    fn base(&self) -> Option<&str> {
        self.kept
            .iter()
            .min_by_key(|(e, _)| **e)
            .and_then(|(_, l)| l.rsplit_once(EDIT_MARK))
            .map(|(base, _)| base)
    }
}

#[derive(Default)]
pub struct EditNames {
    /// By kernel label ("" for the primary kernel).
    kernels: HashMap<String, History>,
    /// Build events (by their place in the session) that belong to the edit
    /// recorded right after them: a reload builds the new source first.
    ahead: HashMap<u64, u32>,
    /// While observing: each kernel's newest build event with nothing of
    /// the kernel after it yet (its place, and the source hash it built).
    pending: HashMap<String, (u64, Option<String>)>,
    observed: u64,
    renamed: u64,
    /// While renaming: the edit whose build each kernel runs.
    current: HashMap<String, u32>,
    /// Kernels registered here for builds the session kept under no label
    /// (a failed edit's, one whose manifest changed), by (label, edit).
    made: HashMap<(String, u32), Option<KernelId>>,
}

/// The label of a variant's kernel when it is a kernel that edits change
/// (not an earlier edit's build, not a library).
fn live_label(v: &Variant) -> Option<String> {
    if v.is_library() {
        return None;
    }
    let label = registry::label(v.kernel);
    (!registry::is_edit_build(&label)).then_some(label)
}

impl EditNames {
    /// The first pass: one event of the session, in order.
    pub fn observe(&mut self, s: &mut Stamped) {
        let place = self.observed;
        self.observed += 1;
        match &mut s.event {
            Event::Edit(r) => {
                let h = self.kernels.entry(r.kernel.clone()).or_default();
                h.edits.push(r.edit);
                if let Some(label) = &r.previous_build {
                    h.kept.insert(r.previous, label.clone());
                }
                // The build just before the record is this edit's when it
                // built this edit's source (a failed build has no hash).
                if let Some((at, hash)) = self.pending.remove(&r.kernel)
                    && hash.is_none_or(|h| h == r.source_hash)
                {
                    self.ahead.insert(at, r.edit);
                }
            }
            Event::EditVerdict(v) if v.outcome == EditOutcome::BuildFailed => {
                let h = self.kernels.entry(v.kernel.clone()).or_default();
                h.failed.insert(v.edit);
            }
            event => {
                let hash = match event {
                    Event::BuildFinished(b) => Some(Some(b.source_hash.clone())),
                    Event::BuildFailed(_) => Some(None),
                    _ => None,
                };
                let selection = matches!(event, Event::VariantSelected(_));
                for v in event.variants_mut() {
                    let Some(label) = live_label(v) else { continue };
                    match &hash {
                        Some(hash) => {
                            self.pending.insert(label, (place, hash.clone()));
                        }
                        // A reload of a changed manifest selects before it builds.
                        None if selection => {}
                        None => {
                            self.pending.remove(&label);
                        }
                    }
                }
            }
        }
    }

    /// The second pass: puts the event's variants of an edited kernel under
    /// the name of the build they ran.
    pub fn rename(&mut self, s: &mut Stamped) {
        let place = self.renamed;
        self.renamed += 1;
        if self.kernels.is_empty() {
            return;
        }
        if let Event::Edit(r) = &s.event
            && self
                .kernels
                .get(&r.kernel)
                .is_some_and(|h| !h.failed.contains(&r.edit))
        {
            self.current.insert(r.kernel.clone(), r.edit);
        }
        let ahead = self.ahead.get(&place).copied();
        for v in s.event.variants_mut() {
            let Some(label) = live_label(v) else { continue };
            if !self.kernels.contains_key(&label) {
                continue;
            }
            let edit = ahead.unwrap_or_else(|| self.current.get(&label).copied().unwrap_or(0));
            if let Some(id) = self.build_kernel(&label, edit, v.kernel) {
                v.kernel = id;
            }
        }
    }

    /// The kernel that names edit `edit`'s build of `label` (`of` its
    /// kernel as recorded); None: the plain name is that build's.
    fn build_kernel(&mut self, label: &str, edit: u32, of: KernelId) -> Option<KernelId> {
        let h = self.kernels.get(label)?;
        if edit == h.newest() && !h.failed.contains(&edit) {
            return None;
        }
        if let Some(id) = h.kept.get(&edit).and_then(|l| registry::lookup(l)) {
            return Some(id);
        }
        let key = (label.to_string(), edit);
        if let Some(id) = self.made.get(&key) {
            return *id;
        }
        // No label of the session names this build: one like the kept
        // ones, so it is never the plain name's other build.
        let k = registry::get(of);
        let base = h.base().map_or_else(
            || {
                if k.label.is_empty() {
                    registry::BUNDLED_LABEL.to_string()
                } else {
                    k.label.clone()
                }
            },
            str::to_string,
        );
        let id = registry::room().ok().map(|()| {
            registry::register_from(
                &k.source,
                &format!("{base}{EDIT_MARK}{edit}"),
                (*k.manifest).clone(),
                k.dir.clone(),
            )
        });
        self.made.insert(key, id);
        id
    }
}
