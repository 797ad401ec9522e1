//! Builds ahead of use: several variants' cubins compiled at once, one
//! thread each (NVRTC compiles separate programs concurrently; the
//! builder's caches are behind a lock), so `prepare` then only loads them.
//! `tune` builds its finalists this way.

use super::{Engine, EngineError};
use crate::session::{Shape, Variant};

impl Engine {
    /// Compiles `variants` for `shape` in parallel (or finds them cached);
    /// nothing is loaded. One entry per variant: None when it built, else
    /// why not (the same error `prepare` would give, which reports it again).
    pub fn build_ahead(&mut self, variants: &[Variant], shape: &Shape) -> Vec<Option<String>> {
        let mut early: Vec<Option<String>> = vec![None; variants.len()];
        for (i, v) in variants.iter().enumerate() {
            if v.is_library() {
                continue;
            }
            if let Err(e) = self.builder(v.kernel) {
                early[i] = Some(e.to_string());
            }
        }
        let arch = self.arch.clone();
        let builders = &self.builders;
        std::thread::scope(|scope| {
            let handles: Vec<_> = variants
                .iter()
                .zip(&early)
                .map(|(v, e)| {
                    let skip = v.is_library() || e.is_some();
                    let arch = &arch;
                    (!skip).then(|| {
                        scope.spawn(move || {
                            builders.get(&v.kernel).and_then(|b| {
                                b.build(v, shape, arch)
                                    .err()
                                    .map(|e| EngineError::from(e).to_string())
                            })
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .zip(early)
                .map(|(h, e)| match h {
                    Some(h) => h
                        .join()
                        .unwrap_or_else(|_| Some("the build thread panicked".into())),
                    None => e,
                })
                .collect()
        })
    }
}
