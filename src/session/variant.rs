//! What is measured: a kernel variant (a kernel, its toggles, its tile) on a
//! problem shape. What the toggles and tile parameters are comes from the
//! kernel's manifest (`manifest/`); names are the same in the CLI, the
//! screen, session files and exports.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::manifest::registry::{self, KernelId};
use super::manifest::{LaunchShape, Manifest, Tile};

/// Which toggles are on: bit i is the manifest's toggle i. Ordered toggle
/// by toggle in manifest order, so variants sort as their names read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Toggles(pub u64);

impl Ord for Toggles {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.reverse_bits().cmp(&other.0.reverse_bits())
    }
}

impl PartialOrd for Toggles {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Toggles {
    pub fn is_on(self, i: usize) -> bool {
        self.0 & (1 << i) != 0
    }
}

/// A kernel variant: which kernel, which toggles, which tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Variant {
    pub kernel: KernelId,
    pub toggles: Toggles,
    pub tile: Tile,
}

impl Variant {
    /// cuDNN's fused scaled-dot-product attention, the vendor baseline.
    pub const CUDNN: Variant = Variant {
        kernel: KernelId::CUDNN,
        toggles: Toggles(0),
        tile: Tile::ZERO,
    };

    /// A kernel's variant with no toggle on at its default tile.
    pub fn base_of(kernel: KernelId) -> Variant {
        let m = registry::manifest(kernel);
        Variant {
            kernel,
            toggles: Toggles(0),
            tile: m.default_tile(),
        }
    }

    /// The variant live opens with for a kernel (its manifest's `start`).
    pub fn start_of(kernel: KernelId) -> Variant {
        let m = registry::manifest(kernel);
        Variant {
            kernel,
            toggles: Toggles(m.start.0),
            tile: m.start.1,
        }
    }

    /// The primary kernel's base: the scalar kernel for the bundled one.
    pub fn base() -> Variant {
        Variant::base_of(registry::primary())
    }

    /// The primary kernel's start: wmma+pv+async for the bundled one.
    pub fn start() -> Variant {
        Variant::start_of(registry::primary())
    }

    pub fn is_cudnn(&self) -> bool {
        self.kernel == KernelId::CUDNN
    }

    /// A Python function's variant (`py:sdpa_flash`, `py:mymod:attn`,
    /// `py:/path/file.py:attn`): `spec` is what follows `py:`.
    pub fn python(spec: &str) -> Result<Variant, String> {
        python_spec_ok(spec)?;
        Ok(Variant {
            kernel: KernelId::PYTHON,
            toggles: Toggles(registry::python_index(spec)),
            tile: Tile::ZERO,
        })
    }

    /// Every Python variant named so far (`--py`, the command line, a
    /// session), in that order: what live's P cycles.
    pub fn pythons() -> Vec<Variant> {
        (0..registry::python_specs().len() as u64)
            .map(|i| Variant {
                kernel: KernelId::PYTHON,
                toggles: Toggles(i),
                tile: Tile::ZERO,
            })
            .collect()
    }

    /// A Python function's variant as it ran on one source of a merged
    /// session (`h200:py:sdpa_flash`): the source's number sits above the
    /// function's in the toggles, so two GPUs' runs stay two variants.
    pub fn python_on(source: &str, spec: &str) -> Result<Variant, String> {
        let v = Variant::python(spec)?;
        Ok(Variant {
            toggles: Toggles(v.toggles.0 | registry::source_index(source) << PY_SOURCE_SHIFT),
            ..v
        })
    }

    pub fn is_python(&self) -> bool {
        self.kernel == KernelId::PYTHON
    }

    /// What follows `py:` in a Python variant's name.
    pub fn python_spec(&self) -> Option<String> {
        self.is_python()
            .then(|| registry::python_spec(self.toggles.0 & PY_SPEC_MASK))
            .flatten()
    }

    /// Someone else's kernels, called through a library: cuDNN or a Python
    /// function. No manifest, no build report, any number of kernels a call.
    pub fn is_library(&self) -> bool {
        self.is_cudnn() || self.is_python()
    }

    /// cuDNN on the GPU this variant ran on (in a merged session, its
    /// source's; else plain `cudnn`): what "÷ cuDNN" divides by.
    pub fn cudnn_beside(&self) -> Variant {
        if self.is_cudnn() {
            return *self;
        }
        if self.is_python() {
            return Variant::cudnn_on(&self.source());
        }
        let source = registry::get(self.kernel).source.clone();
        Variant {
            toggles: Toggles(registry::find_source(&source).unwrap_or(0)),
            ..Variant::CUDNN
        }
    }

    /// cuDNN's variant on a merged session's source.
    pub fn cudnn_on(source: &str) -> Variant {
        Variant {
            toggles: Toggles(registry::source_index(source)),
            ..Variant::CUDNN
        }
    }

    /// The merged session's source it ran on (`gpu0`); empty in a session
    /// of one GPU.
    pub fn source(&self) -> String {
        if self.is_python() {
            return registry::source_tag(self.toggles.0 >> PY_SOURCE_SHIFT).unwrap_or_default();
        }
        if self.is_cudnn() {
            return registry::source_tag(self.toggles.0).unwrap_or_default();
        }
        registry::get(self.kernel).source.clone()
    }

    /// Its kernel's manifest; None for cuDNN and Python functions.
    pub fn manifest(&self) -> Option<Arc<Manifest>> {
        (!self.is_library()).then(|| registry::manifest(self.kernel))
    }

    /// `wmma+pv+async@128x64s2w8`; `label:…` for a kernel other than the
    /// primary one; `cudnn`; `py:MODULE:FUNCTION`.
    pub fn name(&self) -> String {
        if self.is_python() {
            let spec = self.python_spec().unwrap_or_default();
            return match self.source() {
                tag if tag.is_empty() => format!("py:{spec}"),
                tag => format!("{tag}:py:{spec}"),
            };
        }
        let Some(m) = self.manifest() else {
            return match registry::source_tag(self.toggles.0) {
                Some(tag) if !tag.is_empty() => format!("{tag}:cudnn"),
                _ => "cudnn".into(),
            };
        };
        let text = m.variant_text(self.toggles.0, self.tile);
        match registry::label(self.kernel) {
            l if l.is_empty() => text,
            l => format!("{l}:{text}"),
        }
    }

    /// The name without the kernel's label.
    pub fn short_name(&self) -> String {
        if self.is_python() {
            return self.name();
        }
        match self.manifest() {
            Some(m) => m.variant_text(self.toggles.0, self.tile),
            None => "cudnn".into(),
        }
    }

    /// Whether the toggle called `word` (or an alias) is on.
    pub fn has(&self, word: &str) -> bool {
        self.manifest()
            .and_then(|m| m.toggle_named(word))
            .is_some_and(|i| self.toggles.is_on(i))
    }

    /// Whether a gate's `requires` holds (cuDNN meets all but `not_cudnn`,
    /// a Python function all).
    pub fn satisfies(&self, requirement: &str) -> bool {
        match self.manifest() {
            None => requirement != "not_cudnn" || self.is_python(),
            Some(_) if requirement == "not_cudnn" => true,
            Some(m) => m.satisfies(self.toggles.0, requirement),
        }
    }

    /// Whether its kernel accepts it (the manifest's ranges and rules, said
    /// before a build so the CLI and the screen can name the rule).
    pub fn check(&self) -> Result<(), String> {
        if self.is_python() {
            return match self.python_spec() {
                Some(_) if self.tile == Tile::ZERO => Ok(()),
                _ => Err(
                    "a py: variant names a Python function: it takes no toggles and no tile".into(),
                ),
            };
        }
        match self.manifest() {
            None if self.tile != Tile::ZERO || registry::source_tag(self.toggles.0).is_none() => {
                Err("cudnn is cuDNN's own kernel: it takes no toggles and no tile".into())
            }
            None => Ok(()),
            Some(m) => m.check(self.toggles.0, self.tile),
        }
    }

    /// The kernel ABI its entry point keeps (cuDNN: none, 0).
    pub fn abi(&self) -> u32 {
        self.manifest().map_or(0, |m| m.abi)
    }

    /// Whether it runs `shape` (its manifest's dtypes, head dims, KV heads
    /// and key lengths; cuDNN takes them all): one line saying why not.
    pub fn runs(&self, shape: &Shape) -> Result<(), String> {
        match self.manifest() {
            Some(m) => m.runs(self.toggles.0, self.tile, shape),
            None => Ok(()),
        }
    }

    /// Shared memory, threads and grid at a shape, from the manifest.
    pub fn launch_shape(&self, shape: &Shape, sms: u32) -> Result<LaunchShape, String> {
        let m = self.manifest().ok_or("cuDNN chooses its own launch")?;
        m.launch_shape(self.toggles.0, self.tile, shape, sms)
    }

    /// Dynamic shared memory per block at head dimension `d`, in bytes, as
    /// the manifest computes it, so a tile the GPU cannot launch is known
    /// before it is built (`kernel_builds.rs` checks the bundled kernel's
    /// formula against every cubin). 0 for cudnn or when it cannot say.
    pub fn smem_bytes(&self, d: u32) -> u32 {
        self.manifest()
            .and_then(|m| m.smem_bytes(self.toggles.0, self.tile, d))
            .unwrap_or(0)
    }

    /// The value its kernel gives a toggle or parameter define (`BLOCK_M`);
    /// None for cuDNN or a kernel without that define.
    pub fn param(&self, define: &str) -> Option<i64> {
        self.manifest()
            .and_then(|m| m.value(self.toggles.0, self.tile, define))
    }

    /// This variant with another tile (`64x64s2w8k2`); panics on a bad tile,
    /// so only for tiles written in the source or tests.
    pub fn with_tile(self, tile: &str) -> Variant {
        let m = self.manifest().expect("a kernel variant");
        Variant {
            tile: m.parse_tile(tile).expect("a valid tile literal"),
            ..self
        }
    }

    /// The tile as its kernel writes it.
    pub fn tile_text(&self) -> String {
        self.manifest()
            .map(|m| m.tile_text(self.tile))
            .unwrap_or_default()
    }

    /// Whether the tile is its kernel's default.
    pub fn default_tile(&self) -> bool {
        self.manifest()
            .is_none_or(|m| m.default_tile() == self.tile)
    }

    /// Every toggle combination of the primary kernel at its default tile,
    /// the base first (`bench --variants all`).
    pub fn all_paths() -> Vec<Variant> {
        Variant::paths_of(registry::primary())
    }

    pub fn paths_of(kernel: KernelId) -> Vec<Variant> {
        let m = registry::manifest(kernel);
        m.paths()
            .into_iter()
            .map(|bits| Variant {
                kernel,
                toggles: Toggles(bits),
                tile: m.default_tile(),
            })
            .collect()
    }

    /// What `t` cycles through: the manifest's tiles for these toggles
    /// that a GPU of compute capability `cc` can run (unknown: those that
    /// need no one exact architecture).
    pub fn cycle_tiles(&self, cc: Option<u32>) -> Vec<Variant> {
        self.tiles_from(|m, bits| m.cycle_tiles(bits), cc)
    }

    /// What `attnscope tune` tries.
    pub fn tune_tiles(&self, cc: Option<u32>) -> Vec<Variant> {
        self.tiles_from(|m, bits| m.tune_tiles(bits), cc)
    }

    fn tiles_from(
        &self,
        list: impl Fn(&Manifest, u64) -> Vec<Tile>,
        cc: Option<u32>,
    ) -> Vec<Variant> {
        let Some(m) = self.manifest() else {
            return vec![*self];
        };
        // An unknown GPU runs what needs no one exact architecture (no wgmma).
        let runs = |t: &Tile| match cc {
            Some(cc) => m.runs_on(self.toggles.0, *t, cc),
            None => !m
                .arch_needs(self.toggles.0, *t)
                .iter()
                .any(|(_, n)| matches!(n, super::manifest::ArchNeed::Exactly(_))),
        };
        list(&m, self.toggles.0)
            .into_iter()
            .filter(runs)
            .map(|tile| Variant { tile, ..*self })
            .collect()
    }

    /// Whether a GPU of compute capability `cc` runs it.
    pub fn runs_on(&self, cc: u32) -> bool {
        self.manifest()
            .is_none_or(|m| m.runs_on(self.toggles.0, self.tile, cc))
    }
}

impl Default for Variant {
    fn default() -> Self {
        Variant::base()
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Variant {
    type Err = String;

    /// Parses what `name()` prints: `cudnn`, a primary-kernel variant, or
    /// `KERNEL:variant` where KERNEL is a loaded kernel's label or a kernel
    /// folder (read and registered on first use).
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text == "cudnn" {
            return Ok(Variant::CUDNN);
        }
        if let Some(spec) = text.strip_prefix("py:") {
            return Variant::python(spec).map_err(|e| format!("variant '{text}': {e}"));
        }
        // A Python function on one source of a merged session: `h200:py:flex`.
        if let Some((tag, spec)) = text.split_once(":py:")
            && registry::find_source(tag).is_some_and(|i| i > 0)
        {
            return Variant::python_on(tag, spec).map_err(|e| format!("variant '{text}': {e}"));
        }
        // cuDNN on one source of a merged session: `h200:cudnn`.
        if let Some((tag, "cudnn")) = text.split_once(':')
            && let Some(i) = registry::find_source(tag).filter(|&i| i > 0)
        {
            return Ok(Variant {
                toggles: Toggles(i),
                ..Variant::CUDNN
            });
        }
        if text.split(['+', '@', ':']).any(|w| w == "cudnn") {
            return Err(format!(
                "variant '{text}': cudnn is cuDNN's own kernel: it takes no toggles and no tile"
            ));
        }
        let (kernel, rest) = match text.rsplit_once(':') {
            Some((k, rest)) => (kernel_named(k)?, rest),
            None => (registry::primary(), text),
        };
        let m = registry::manifest(kernel);
        let (bits, tile) = m.parse_variant(rest)?;
        Ok(Variant {
            kernel,
            toggles: Toggles(bits),
            tile,
        })
    }
}

/// A Python variant's toggles: the function's number below, its merged
/// session's source above.
const PY_SOURCE_SHIFT: u32 = 32;
const PY_SPEC_MASK: u64 = (1 << PY_SOURCE_SHIFT) - 1;

/// Whether `spec` names a function: `NAME` (a bundled adapter),
/// `MODULE:FUNCTION` (dotted module) or `/path/file.py:FUNCTION`.
fn python_spec_ok(spec: &str) -> Result<(), String> {
    let ident = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let (module, function) = match spec.rsplit_once(':') {
        Some((m, f)) => (Some(m), f),
        None => (None, spec),
    };
    let module_ok =
        module.is_none_or(|m| m.ends_with(".py") && !m.contains(',') || m.split('.').all(ident));
    if ident(function) && module_ok {
        return Ok(());
    }
    Err("a Python variant is py:NAME (a bundled adapter: sdpa_flash, sdpa_efficient, sdpa_math, flex, triton_tutorial, fa3, flashinfer), py:MODULE:FUNCTION or py:/path/file.py:FUNCTION".into())
}

/// A kernel by label, or by folder (a path, loaded on first use).
fn kernel_named(k: &str) -> Result<KernelId, String> {
    if let Some(id) = registry::lookup(k) {
        return Ok(id);
    }
    let path = std::path::Path::new(k);
    if k.contains(['/', '\\']) || path.is_dir() {
        return registry::load_dir(path, false);
    }
    let known: Vec<String> = registry::all()
        .into_iter()
        .map(|(id, k)| match registry::label(id) {
            l if l.is_empty() => format!("{} (the primary kernel)", k.manifest.name),
            l => l,
        })
        .collect();
    Err(format!(
        "unknown kernel '{k}': give a kernel folder (a path) or one of {}",
        known.join(", ")
    ))
}

impl Serialize for Variant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// How sessions before kernel manifests (schema 1) wrote a variant: the
/// bundled kernel's toggles and tile as named fields.
#[derive(Deserialize)]
struct Legacy {
    #[serde(default)]
    toggles: std::collections::BTreeMap<String, bool>,
    #[serde(default)]
    tile: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Legacy {
    fn variant(self) -> Result<Variant, String> {
        if self.toggles.get("cudnn") == Some(&true) {
            return Ok(Variant::CUDNN);
        }
        let m = registry::manifest(KernelId::BUNDLED);
        let mut v = Variant::base_of(KernelId::BUNDLED);
        for (word, on) in self.toggles.into_iter().filter(|(_, on)| *on) {
            let i = m
                .toggle_named(&word)
                .ok_or_else(|| format!("toggle '{word}' is not the bundled kernel's"))?;
            v.toggles.0 |= u64::from(on) << i;
        }
        for (name, value) in self.tile {
            let i = m
                .params
                .iter()
                .position(|p| p.name == name)
                .ok_or_else(|| format!("tile parameter '{name}' is not the bundled kernel's"))?;
            v.tile.0[i] = match value {
                serde_json::Value::Bool(b) => u32::from(b),
                serde_json::Value::Number(n) => n
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| format!("tile {name} = {n} is not a count"))?,
                other => return Err(format!("tile {name} = {other} is not a number")),
            };
        }
        // As a name would be: what reads must write and read back.
        v.check().map_err(|e| format!("variant '{v}': {e}"))?;
        Ok(v)
    }
}

impl<'de> Deserialize<'de> for Variant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Variant, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Variant;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a variant name like wmma+pv+async")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Variant, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Variant, A::Error> {
                let legacy =
                    Legacy::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                legacy.variant().map_err(serde::de::Error::custom)
            }
        }
        d.deserialize_any(Visit)
    }
}

pub use super::shape::{Dtype, MAX_GRID_YZ, Shape};

#[cfg(test)]
mod tests;
