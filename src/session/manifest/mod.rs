//! A kernel describes itself: its manifest (`kernels/attention.toml` for the
//! bundled one) names the entry point, the -D toggles and tile parameters,
//! the rules a combination must keep and how the launch follows from them.
//! Everything that knows a toggle (keys, names, builds, checks) reads it
//! here; docs/kernel-abi.md is the reference for authors.

pub mod expr;
mod load;
mod names;
mod raw;
pub mod registry;
pub mod sources;
pub mod supports;
mod tile;

use std::collections::BTreeMap;

use super::shape::{Dtype, Shape};

pub use expr::Expr;
pub use load::ManifestError;
pub use tile::Tile;

/// The bundled kernel's manifest.
pub const BUNDLED_TOML: &str = include_str!("../../../kernels/attention.toml");

/// At most this many toggles (a variant keeps them as bits of a u64).
pub const MAX_TOGGLES: usize = 64;
/// At most this many tile parameters (a variant keeps them in an array).
pub const MAX_PARAMS: usize = 16;

/// Keys attnscope itself binds in live mode; a toggle may not take one.
/// (`ui::keymap`'s test keeps this list equal to its table.)
pub const RESERVED_KEYS: &[char] = &[
    'q', '?', 't', 's', 'z', 'o', 'g', 'l', 'R', 'I', 'd', 'K', 'a', 'b', 'x', 'E', 'r', 'm', 'j',
    'k', ' ', '+', '-', 'L', 'P',
];

/// A GPU architecture a toggle or parameter needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchNeed {
    /// This compute capability or newer (`sm_80`).
    AtLeast(u32),
    /// Exactly this one, built for its architecture-specific target (`sm_90a`).
    Exactly(u32),
}

impl ArchNeed {
    pub fn parse(text: &str) -> Result<ArchNeed, String> {
        let bad = || format!("'{text}' is not an architecture like sm_80 or sm_90a");
        let digits = text.strip_prefix("sm_").ok_or_else(bad)?;
        let (digits, exact) = match digits.strip_suffix('a') {
            Some(d) => (d, true),
            None => (digits, false),
        };
        let cc: u32 = digits.parse().map_err(|_| bad())?;
        if !(30..=200).contains(&cc) {
            return Err(bad());
        }
        Ok(if exact {
            ArchNeed::Exactly(cc)
        } else {
            ArchNeed::AtLeast(cc)
        })
    }

    pub fn text(self) -> String {
        match self {
            ArchNeed::AtLeast(cc) => format!("sm_{cc}"),
            ArchNeed::Exactly(cc) => format!("sm_{cc}a"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Toggle {
    /// The word in variant names (`pv` in `wmma+pv+async`).
    pub name: String,
    /// Other spellings accepted when parsing (`wmma_pv`).
    pub aliases: Vec<String>,
    /// The -D define, 0 or 1.
    pub define: String,
    pub key: Option<char>,
    pub label: String,
    pub help: String,
    /// On in the variant live opens with, when `start` is not given.
    pub default: bool,
    /// Toggles that cannot be on with this one (indices; symmetric).
    pub excludes: Vec<usize>,
    /// Toggles this one turns on (indices).
    pub implies: Vec<usize>,
    /// Gate requirements this toggle meets besides its own name.
    pub provides: Vec<String>,
    pub arch: Option<ArchNeed>,
    /// Faults and planted bugs: never in `all`, keys only with ATTNSCOPE_TEST_FAULTS=1.
    pub test_only: bool,
    /// Where `selftest --mutations` plants it (variant texts, parsed at load).
    pub mutation: Vec<String>,
    /// The code path it selects, for charts that colour variants by path
    /// (`WMMA path`); toggles without one refine a path.
    pub family: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Allowed {
    Values(Vec<u32>),
    Range { min: u32, max: u32, step: u32 },
}

impl Allowed {
    pub fn admits(&self, v: u32) -> bool {
        match self {
            Allowed::Values(vs) => vs.contains(&v),
            Allowed::Range { min, max, step } => {
                (*min..=*max).contains(&v) && v.is_multiple_of((*step).max(1))
            }
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Allowed::Values(vs) => {
                let vs: Vec<String> = vs.iter().map(u32::to_string).collect();
                format!("one of {}", vs.join(", "))
            }
            Allowed::Range { min, max, step } if *step > 1 => {
                format!("a multiple of {step} from {min} to {max}")
            }
            Allowed::Range { min, max, .. } => format!("{min} to {max}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub define: String,
    /// What precedes its value in a tile's text (`x` in 64x64); empty for the first.
    pub tag: String,
    pub default: u32,
    pub allowed: Allowed,
    /// Left out of the text at its default (`k1`).
    pub optional: bool,
    /// On or off, written as its tag alone (`g`).
    pub flag: bool,
    pub arch: Option<ArchNeed>,
    pub label: String,
    /// A test knob (a planted delay): left out of the tile's form in help
    /// and of every list of tiles; must be optional.
    pub test_only: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub check: Expr,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TileList {
    /// Which toggles it is for (None: any).
    pub when: Option<Expr>,
    pub cycle: Vec<Tile>,
    pub tune: Vec<Tile>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub lets: Vec<(String, Expr)>,
    pub smem_bytes: Expr,
    pub threads: Expr,
    pub grid: [Expr; 3],
}

/// A parsed, checked manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    pub name: String,
    pub about: String,
    /// The CUDA file beside the manifest.
    pub source: String,
    pub entry: String,
    /// The name of the variant with no toggle on.
    pub base: String,
    /// The toggles of the variant live opens with.
    pub start: (u64, Tile),
    pub head_dims: Vec<u32>,
    /// The kernel ABI its entry point keeps (1 or 2; docs/kernel-abi.md).
    pub abi: u32,
    /// What its variants take beyond the plain case (ABI 2), first match wins.
    pub supports: Vec<supports::Supports>,
    pub toggles: Vec<Toggle>,
    pub params: Vec<Param>,
    pub rules: Vec<Rule>,
    pub tiles: Vec<TileList>,
    pub launch: Launch,
    /// The file it was read from, for messages.
    pub file: String,
    /// The text it was parsed from (sessions record it).
    pub text: String,
}

/// What a launch needs, from the manifest's `[launch]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub smem_bytes: u32,
    pub threads: u32,
    pub grid: (u32, u32, u32),
}

impl Manifest {
    /// The bundled kernel's manifest (tested to load).
    pub fn bundled() -> Manifest {
        Manifest::parse(BUNDLED_TOML, "kernels/attention.toml")
            .expect("kernels/attention.toml is valid (tested)")
    }

    /// Parses and checks a manifest; the error names `file`, the line and
    /// what is wrong.
    pub fn parse(text: &str, file: &str) -> Result<Manifest, ManifestError> {
        load::parse(text, file)
    }

    pub fn toggle_named(&self, word: &str) -> Option<usize> {
        self.toggles
            .iter()
            .position(|t| t.name == word || t.aliases.iter().any(|a| a == word))
    }

    /// The default tile: every parameter at its default.
    pub fn default_tile(&self) -> Tile {
        let mut t = Tile::ZERO;
        for (i, p) in self.params.iter().enumerate() {
            t.0[i] = p.default;
        }
        t
    }

    /// `wmma+pv+async`, `scalar+mutrescale`, with `@tile` when not the default.
    pub fn variant_text(&self, bits: u64, tile: Tile) -> String {
        let on: Vec<&Toggle> = self
            .toggles
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, t)| t)
            .collect();
        let words: Vec<&str> = on.iter().map(|t| t.name.as_str()).collect();
        let mut name = if words.is_empty() {
            self.base.clone()
        } else if on.iter().all(|t| t.test_only) {
            // Test-only toggles ride on a path: `scalar+mutrescale`.
            format!("{}+{}", self.base, words.join("+"))
        } else {
            words.join("+")
        };
        if tile != self.default_tile() {
            name.push('@');
            name.push_str(&self.tile_text(tile));
        }
        name
    }

    /// Parses what `variant_text` prints (toggles in any order, aliases
    /// accepted) and checks the result against the rules.
    pub fn parse_variant(&self, text: &str) -> Result<(u64, Tile), String> {
        let text = text.trim();
        let (words, tile) = match text.split_once('@') {
            Some((w, t)) => (w, Some(t)),
            None => (text, None),
        };
        let mut bits = 0u64;
        if words != self.base {
            for (i, word) in words.split('+').enumerate() {
                if i == 0 && word == self.base && words.contains('+') {
                    continue;
                }
                let idx = self.toggle_named(word).ok_or_else(|| {
                    let known: Vec<&str> = self
                        .toggles
                        .iter()
                        .filter(|t| !t.test_only)
                        .map(|t| t.name.as_str())
                        .collect();
                    format!(
                        "unknown variant '{text}': '{word}' is not a toggle of {} (known: {}, {}, joined by '+'; or cudnn, or a Python function as py:NAME or py:MODULE:FUNCTION)",
                        self.name,
                        self.base,
                        known.join(", ")
                    )
                })?;
                bits |= 1 << idx;
            }
        }
        let tile = match tile {
            Some(t) => self
                .parse_tile(t)
                .map_err(|e| format!("unknown variant '{text}': {e}"))?,
            None => self.default_tile(),
        };
        self.check(bits, tile)
            .map_err(|e| format!("variant '{text}': {e}"))?;
        Ok((bits, tile))
    }

    /// The value each toggle and parameter define has in this variant.
    fn values(&self, bits: u64, tile: Tile) -> BTreeMap<&str, i64> {
        let mut env = BTreeMap::new();
        for (i, t) in self.toggles.iter().enumerate() {
            env.insert(t.define.as_str(), i64::from(bits & (1 << i) != 0));
        }
        for (i, p) in self.params.iter().enumerate() {
            env.insert(p.define.as_str(), i64::from(tile.0[i]));
        }
        env
    }

    /// The value of one toggle or parameter define (`BLOCK_M`, `PERSIST`) in
    /// this variant; None when the kernel has no such define.
    pub fn value(&self, bits: u64, tile: Tile, define: &str) -> Option<i64> {
        self.values(bits, tile).get(define).copied()
    }

    /// Whether the kernel accepts this combination: parameters in range,
    /// every rule kept, no two excluding toggles on, implied toggles on.
    pub fn check(&self, bits: u64, tile: Tile) -> Result<(), String> {
        for (i, p) in self.params.iter().enumerate() {
            let v = tile.0[i];
            if !p.allowed.admits(v) {
                return Err(format!(
                    "{}={v} is not supported: {}",
                    p.label,
                    p.allowed.describe()
                ));
            }
        }
        let env = self.values(bits, tile);
        let lookup = |n: &str| env.get(n).copied();
        for r in &self.rules {
            match r.check.eval(&lookup) {
                Ok(0) => return Err(self.message(&r.message, &env, tile)),
                Ok(_) => {}
                Err(e) => {
                    return Err(format!(
                        "{}: the rule '{}' cannot be evaluated: {e}",
                        self.file, r.check
                    ));
                }
            }
        }
        // The author's rules say it best; the generic exclusions come after.
        let on = |i: usize| bits & (1 << i) != 0;
        for t in self
            .toggles
            .iter()
            .enumerate()
            .filter(|(i, _)| on(*i))
            .map(|(_, t)| t)
        {
            if let Some(&j) = t.excludes.iter().find(|&&j| on(j)) {
                return Err(format!(
                    "{} and {} cannot be on together (the {} kernel's manifest)",
                    t.name, self.toggles[j].name, self.name
                ));
            }
            if let Some(&j) = t.implies.iter().find(|&&j| !on(j)) {
                return Err(format!("{} needs {} on", t.name, self.toggles[j].name));
            }
        }
        Ok(())
    }

    /// A rule's message with each `{expr}` replaced by its value (`{TILE}`: the tile).
    fn message(&self, text: &str, env: &BTreeMap<&str, i64>, tile: Tile) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let inner = &rest[open + 1..open + close];
            if inner.trim() == "TILE" {
                out.push_str(&self.tile_text(tile));
            } else {
                let value = Expr::parse(inner).and_then(|e| e.eval(&|n: &str| env.get(n).copied()));
                match value {
                    Ok(v) => out.push_str(&v.to_string()),
                    Err(_) => out.push_str(&rest[open..=open + close]),
                }
            }
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        out
    }

    /// The -D defines NVRTC builds a variant with for `shape`'s head
    /// dimension; a kernel of ABI 2 also gets its dtype and whether the
    /// shape is multi-head with as many keys as queries (ABI 1 kernels see
    /// what they always saw).
    pub fn defines(&self, bits: u64, tile: Tile, shape: &Shape) -> Vec<String> {
        let mut out = vec![format!("-DHEAD_DIM={}", shape.d)];
        if self.abi >= 2 {
            let bf16 = u8::from(shape.dtype == Dtype::Bf16);
            out.push(format!("-D{}={bf16}", load::DTYPE_DEFINE));
            let plain = u8::from(shape.same_kv());
            out.push(format!("-D{}={plain}", load::PLAIN_DEFINE));
        }
        for (i, t) in self.toggles.iter().enumerate() {
            out.push(format!("-D{}={}", t.define, u8::from(bits & (1 << i) != 0)));
        }
        for (i, p) in self.params.iter().enumerate() {
            out.push(format!("-D{}={}", p.define, tile.0[i]));
        }
        out
    }

    /// Shared memory, threads and grid of a launch at `shape` on a GPU of
    /// `sms` multiprocessors: S is the query length, SK the key length, H
    /// the query heads, HKV the KV heads.
    pub fn launch_shape(
        &self,
        bits: u64,
        tile: Tile,
        shape: &Shape,
        sms: u32,
    ) -> Result<LaunchShape, String> {
        let Shape { b, h, s, d, .. } = *shape;
        let mut env: BTreeMap<String, i64> = self
            .values(bits, tile)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        env.insert("HEAD_DIM".into(), i64::from(d));
        env.insert("B".into(), i64::from(b));
        env.insert("H".into(), i64::from(h));
        env.insert("S".into(), i64::from(s));
        env.insert("HKV".into(), i64::from(shape.kv_heads));
        env.insert("SK".into(), i64::from(shape.kv_len));
        env.insert("SMS".into(), i64::from(sms));
        let what = |part: &str, e: String| format!("{}: [launch] {part}: {e}", self.file);
        for (name, e) in &self.launch.lets {
            let v = e
                .eval(&|n: &str| env.get(n).copied())
                .map_err(|err| what(name, err))?;
            env.insert(name.clone(), v);
        }
        let get = |part: &str, e: &Expr, lo: i64, hi: i64| -> Result<u32, String> {
            let v = e
                .eval(&|n: &str| env.get(n).copied())
                .map_err(|err| what(part, err))?;
            if !(lo..=hi).contains(&v) {
                return Err(what(
                    part,
                    format!("{e} = {v}, outside {lo} to {hi} for this variant"),
                ));
            }
            Ok(v as u32)
        };
        Ok(LaunchShape {
            smem_bytes: get(
                "smem_bytes",
                &self.launch.smem_bytes,
                0,
                i64::from(u32::MAX),
            )?,
            threads: get("threads", &self.launch.threads, 1, 1024)?,
            grid: (
                get("grid x", &self.launch.grid[0], 1, i64::from(u32::MAX >> 1))?,
                get("grid y", &self.launch.grid[1], 1, 65_535)?,
                get("grid z", &self.launch.grid[2], 1, 65_535)?,
            ),
        })
    }

    /// Shared memory per block at head dimension `d`, or None when the
    /// manifest cannot say (its formula failed for this variant).
    pub fn smem_bytes(&self, bits: u64, tile: Tile, d: u32) -> Option<u32> {
        self.launch_shape(bits, tile, &Shape::new(1, 1, 1, d), 1)
            .ok()
            .map(|l| l.smem_bytes)
    }

    /// What a variant needs of the GPU: the newest `AtLeast` and any `Exactly`.
    pub fn arch_needs(&self, bits: u64, tile: Tile) -> Vec<(String, ArchNeed)> {
        let mut out = Vec::new();
        for (i, t) in self.toggles.iter().enumerate() {
            if let (true, Some(a)) = (bits & (1 << i) != 0, t.arch) {
                out.push((t.name.clone(), a));
            }
        }
        // A parameter's need holds away from its default (a flag: when set).
        for (i, p) in self.params.iter().enumerate() {
            if let (true, Some(a)) = (tile.0[i] != p.default, p.arch) {
                out.push((p.label.clone(), a));
            }
        }
        out
    }

    /// The target to build a variant for on `arch` (`sm_90` → `sm_90a` when
    /// a toggle needs Hopper's architecture-specific instructions), or why
    /// it cannot run there.
    pub fn target_arch(&self, bits: u64, tile: Tile, arch: &str) -> Result<String, String> {
        let cc: u32 = arch
            .trim_start_matches("sm_")
            .trim_end_matches('a')
            .parse()
            .map_err(|_| format!("'{arch}' is not an architecture like sm_90"))?;
        let mut target = arch.trim_end_matches('a').to_string();
        for (what, need) in self.arch_needs(bits, tile) {
            match need {
                ArchNeed::AtLeast(min) if cc < min => {
                    return Err(format!(
                        "{what} needs {} or newer; this build targets {arch}",
                        need.text()
                    ));
                }
                ArchNeed::Exactly(want) if cc != want => {
                    return Err(format!(
                        "{what} needs {} ({} only); this build targets {arch}",
                        need.text(),
                        ArchNeed::AtLeast(want).text()
                    ));
                }
                ArchNeed::Exactly(_) => target = need.text(),
                ArchNeed::AtLeast(_) => {}
            }
        }
        Ok(target)
    }

    /// Whether a GPU of compute capability `cc` can run the variant.
    pub fn runs_on(&self, bits: u64, tile: Tile, cc: u32) -> bool {
        self.target_arch(bits, tile, &format!("sm_{cc}")).is_ok()
    }

    /// The tile list for these toggles: the first whose `when` holds.
    fn tile_list(&self, bits: u64) -> Option<&TileList> {
        let env = self.values(bits, self.default_tile());
        self.tiles.iter().find(|l| {
            l.when
                .as_ref()
                .is_none_or(|w| w.eval(&|n: &str| env.get(n).copied()).unwrap_or(0) != 0)
        })
    }

    /// What `t` cycles through for these toggles (the default tile alone
    /// when the manifest lists none); tiles the rules refuse are left out.
    pub fn cycle_tiles(&self, bits: u64) -> Vec<Tile> {
        let list = self
            .tile_list(bits)
            .map_or_else(|| vec![self.default_tile()], |l| l.cycle.clone());
        list.into_iter()
            .filter(|t| self.check(bits, *t).is_ok())
            .collect()
    }

    /// What `attnscope tune` tries for these toggles.
    pub fn tune_tiles(&self, bits: u64) -> Vec<Tile> {
        let list = self
            .tile_list(bits)
            .map_or_else(|| vec![self.default_tile()], |l| l.tune.clone());
        list.into_iter()
            .filter(|t| self.check(bits, *t).is_ok())
            .collect()
    }

    /// Every combination of the non-test toggles the rules accept, at the
    /// default tile, the base first (what `all` means).
    pub fn paths(&self) -> Vec<u64> {
        let real: Vec<usize> = (0..self.toggles.len())
            .filter(|i| !self.toggles[*i].test_only)
            .collect();
        let n = real.len().min(16);
        (0..1u64 << n)
            .map(|combo| {
                real.iter()
                    .take(n)
                    .enumerate()
                    .filter(|(k, _)| combo & (1 << k) != 0)
                    .fold(0u64, |acc, (_, &i)| acc | 1 << i)
            })
            .filter(|&bits| self.check(bits, self.default_tile()).is_ok())
            .collect()
    }

    /// Whether a gate's `requires` holds: a toggle of that name, alias or
    /// `provides` is on, or `not_scalar` and any real toggle is on.
    pub fn satisfies(&self, bits: u64, requirement: &str) -> bool {
        self.toggles
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .any(|(_, t)| {
                if requirement == "not_scalar" {
                    return !t.test_only;
                }
                t.name == requirement
                    || t.aliases.iter().any(|a| a == requirement)
                    || t.provides.iter().any(|p| p == requirement)
            })
    }

    /// Toggles after pressing toggle `i`'s key: it flips; switching it on
    /// turns off what it excludes (or what excludes it) and on what it
    /// implies; switching it off turns off what implies it.
    pub fn press(&self, bits: u64, i: usize) -> u64 {
        let mut bits = bits ^ (1 << i);
        if bits & (1 << i) != 0 {
            for (j, t) in self.toggles.iter().enumerate() {
                if self.toggles[i].excludes.contains(&j) || t.excludes.contains(&i) {
                    bits &= !(1 << j);
                }
            }
            for &j in &self.toggles[i].implies {
                bits |= 1 << j;
            }
        } else {
            for (j, t) in self.toggles.iter().enumerate() {
                if t.implies.contains(&i) {
                    bits &= !(1 << j);
                }
            }
        }
        bits
    }

    /// The code path a variant runs, for colouring: None for the base path,
    /// else the index among the manifest's distinct families and its name.
    pub fn family(&self, bits: u64) -> Option<(usize, String)> {
        let mut names: Vec<&str> = Vec::new();
        for t in &self.toggles {
            if let Some(f) = &t.family
                && !names.contains(&f.as_str())
            {
                names.push(f);
            }
        }
        let f = self
            .toggles
            .iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .find_map(|(_, t)| t.family.as_deref())?;
        Some((names.iter().position(|n| *n == f)?, f.to_string()))
    }

    /// The base path's name for a legend: `scalar path (async or not)`.
    pub fn base_family(&self) -> String {
        let rest: Vec<&str> = self
            .toggles
            .iter()
            .filter(|t| t.family.is_none() && !t.test_only)
            .map(|t| t.name.as_str())
            .collect();
        if rest.is_empty() {
            format!("{} path", self.base)
        } else {
            format!("{} path ({} or not)", self.base, rest.join(", "))
        }
    }

    /// The variants `selftest --mutations` plants toggle `i` in.
    pub fn mutation_sites(&self, i: usize) -> Vec<(u64, Tile)> {
        self.toggles[i]
            .mutation
            .iter()
            .filter_map(|v| self.parse_variant(v).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests;
