//! Which states a build belongs to, and which check an earlier edit's build
//! keeps. One compile serves a variant at every shape with the same head
//! dimension, element type and K/V layout: those are what the compiler sees
//! (`Manifest::defines`) and what the engine loads a build by. So a D=64
//! build's registers never show on a D=128 row, and a shape no build served
//! shows none.

use super::{Key, SessionState, VariantState};
use crate::session::event::{BuildFailure, BuildReport, CorrectnessReport};
use crate::session::manifest::Tile;
use crate::session::{Shape, Toggles, Variant};

/// Whether one compile of a variant serves both shapes.
pub fn same_build(a: &Shape, b: &Shape) -> bool {
    a.d == b.d && a.dtype == b.dtype && a.same_kv() == b.same_kv()
}

/// What a check checked, whatever the kernel was called then: the GPU it
/// ran on (a merged session's source), the source hash of the build, the
/// toggles, the tile and the shape. An edit's build is renamed `~eN` when the
/// next edit replaces it; its source, and so its check, stay the same.
pub(super) type CheckKey = (String, String, Toggles, Tile, Shape);

fn check_key(variant: Variant, source_hash: &str, shape: Shape) -> CheckKey {
    (
        variant.source(),
        source_hash.to_string(),
        variant.toggles,
        variant.tile,
        shape,
    )
}

impl SessionState {
    /// The shape a build was made for: as recorded, else (sessions before
    /// builds carried it) the newest selection on the variant's GPU, which
    /// is what a worker builds for: the selection, a race at it, a reload.
    fn build_shape(&self, variant: Variant, recorded: Option<Shape>) -> Shape {
        recorded
            .or_else(|| self.selected_shape.get(&variant.source()).copied())
            .or_else(|| self.current.map(|k| k.shape))
            .unwrap_or(Shape::MISSION)
    }

    /// The variant's states the build at `shape` serves, the one at `shape`
    /// made if missing.
    fn built_states(
        &mut self,
        variant: Variant,
        shape: Shape,
    ) -> impl Iterator<Item = (&Key, &mut VariantState)> {
        self.variants.entry(Key { variant, shape }).or_default();
        self.variants
            .iter_mut()
            .filter(move |(k, _)| k.variant == variant && same_build(&k.shape, &shape))
    }

    /// A build: its resources go to the states it serves; a state with no
    /// check of its own takes the one its source passed or failed under
    /// another name (an earlier edit's build).
    pub(super) fn attach_build(&mut self, b: &BuildReport) {
        let shape = self.build_shape(b.variant, b.shape);
        let checked = std::mem::take(&mut self.checked);
        for (key, s) in self.built_states(b.variant, shape) {
            s.build = Some(b.clone());
            s.build_failure = None;
            if s.correctness.is_none()
                && let Some(c) = checked.get(&check_key(b.variant, &b.source_hash, key.shape))
            {
                s.correctness = Some(CorrectnessReport {
                    variant: b.variant,
                    ..c.clone()
                });
            }
        }
        self.checked = checked;
    }

    pub(super) fn attach_build_failure(&mut self, f: &BuildFailure) {
        let shape = self.build_shape(f.variant, None);
        for (_, s) in self.built_states(f.variant, shape) {
            s.build_failure = Some(f.clone());
        }
    }

    /// A selection: what a later build without its shape was made for.
    pub(super) fn note_selection(&mut self, variant: Variant, shape: Shape) {
        self.selected_shape.insert(variant.source(), shape);
    }

    /// A check, kept by the source it checked (`CheckKey`).
    pub(super) fn note_check(&mut self, c: &CorrectnessReport) {
        let hash = self
            .variants
            .get(&Key {
                variant: c.variant,
                shape: c.shape,
            })
            .and_then(|s| s.build.as_ref())
            .map(|b| b.source_hash.clone())
            .filter(|h| !h.is_empty());
        if let Some(hash) = hash {
            self.checked
                .insert(check_key(c.variant, &hash, c.shape), c.clone());
        }
    }
}
