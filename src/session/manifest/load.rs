//! Reading a manifest: TOML into checked types. Every refusal names the
//! file, the line and what is wrong, so a malformed manifest is fixed at
//! load and nothing is launched.

use std::collections::HashSet;
use std::fmt;

use toml::Spanned;

use super::expr::Expr;
use super::names::{self, is_ident, is_word};
use super::raw::{Raw, RawKernel, RawLaunch, RawParam, RawToggle};
use super::{
    Allowed, ArchNeed, Launch, MAX_PARAMS, MAX_TOGGLES, Manifest, Param, RESERVED_KEYS, Rule, Tile,
    TileList, Toggle,
};
use crate::session::shape::Shape;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    pub file: String,
    /// 1-based; None when the problem has no one place.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ManifestError {}

/// Builds errors that point at a place in the text.
pub(super) struct At<'a> {
    text: &'a str,
    file: &'a str,
}

impl At<'_> {
    fn line(&self, span: std::ops::Range<usize>) -> Option<usize> {
        (span != (0..0)).then(|| {
            let end = span.start.min(self.text.len());
            self.text[..end].matches('\n').count() + 1
        })
    }

    pub(super) fn err<T>(
        &self,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
    ) -> Result<T, ManifestError> {
        Err(ManifestError {
            file: self.file.to_string(),
            line: self.line(span),
            message: message.into(),
        })
    }
}

/// The define that tells a kernel of ABI 2 its dtype (1: bf16, 0: fp16).
pub const DTYPE_DEFINE: &str = "ATTN_BF16";
/// The define that tells a kernel of ABI 2 the shape has Hkv = Hq and Sk = Sq.
pub const PLAIN_DEFINE: &str = "ATTN_PLAIN";

/// Names a `[launch]` formula may read besides toggles, parameters and lets:
/// the shape and the GPU's multiprocessor count.
const SHAPE_NAMES: [&str; 7] = ["HEAD_DIM", "B", "H", "S", "SMS", "HKV", "SK"];

pub fn parse(text: &str, file: &str) -> Result<Manifest, ManifestError> {
    let at = At { text, file };
    let raw: Raw = toml::from_str(text).map_err(|e| ManifestError {
        file: file.to_string(),
        line: e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1),
        message: e.message().trim().to_string(),
    })?;
    let k = raw.kernel.get_ref();
    let head_dims = check_kernel(&at, k)?;
    let abi = match &k.abi {
        None => 1,
        Some(a) if (1..=super::supports::NEWEST_ABI).contains(a.get_ref()) => *a.get_ref(),
        Some(a) => {
            return at.err(
                a.span(),
                format!(
                    "abi = {}: attnscope speaks kernel ABI 1 and 2 (docs/kernel-abi.md)",
                    a.get_ref()
                ),
            );
        }
    };
    let name = k.name.get_ref();
    let source = k.source.get_ref();

    let toggles = toggles(&at, &raw, k.base.get_ref())?;
    let params = params(&at, &raw, &toggles)?;
    let mut names: Vec<String> = toggles.iter().map(|t| t.define.clone()).collect();
    names.extend(params.iter().map(|p| p.define.clone()));
    let expr = |s: &Spanned<String>, known: &[String], what: &str| -> Result<Expr, ManifestError> {
        let e = Expr::parse(s.get_ref())
            .or_else(|e| at.err(s.span(), format!("{what} '{}': {e}", s.get_ref())))?;
        if let Some(unknown) = e
            .names()
            .into_iter()
            .find(|n| !known.iter().any(|k| k == n))
        {
            return at.err(
                s.span(),
                format!(
                    "{what} '{}' reads {unknown}, which is not {}",
                    s.get_ref(),
                    if known.len() > names.len() {
                        "a toggle or parameter define, HEAD_DIM, B, H, S, HKV, SK, SMS or an earlier let"
                    } else {
                        "a toggle or parameter define"
                    }
                ),
            );
        }
        Ok(e)
    };

    let mut rules = Vec::new();
    for r in &raw.rule {
        let r = r.get_ref();
        let check = expr(&r.check, &names, "rule")?;
        rules.push(Rule {
            check,
            message: r.message.clone(),
        });
    }

    let launch = launch(&at, raw.launch.get_ref(), &names, &expr)?;

    let mut m = Manifest {
        name: name.clone(),
        about: k.about.clone(),
        source: source.clone(),
        entry: k.entry.get_ref().clone(),
        base: k.base.get_ref().clone(),
        start: (0, Tile::ZERO),
        head_dims,
        abi,
        supports: Vec::new(),
        toggles,
        params,
        rules,
        tiles: Vec::new(),
        launch,
        file: file.to_string(),
        text: text.to_string(),
    };
    for (i, r) in raw.rule.iter().enumerate() {
        check_message(&at, r.span(), &m.rules[i].message, &names)?;
    }

    m.tiles = tile_lists(&at, &raw, &m, &names, &expr)?;
    m.supports = super::supports::parse(&at, &raw.supports, abi, &names, &expr)?;
    m.start = start_variant(&at, &raw, &m)?;
    check_variants(&at, &raw, &m)?;
    Ok(m)
}

/// The `[kernel]` table's names and head dims; the head dims when they pass.
fn check_kernel(at: &At, k: &RawKernel) -> Result<Vec<u32>, ManifestError> {
    let name = k.name.get_ref();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        || name == "cudnn"
    {
        return at.err(
            k.name.span(),
            format!("kernel name '{name}' must be letters, digits, _ or - (and not cudnn)"),
        );
    }
    let source = k.source.get_ref();
    if source.is_empty() || source.contains(['/', '\\']) || !source.ends_with(".cu") {
        return at.err(
            k.source.span(),
            format!("source '{source}' must be a .cu file name in the manifest's folder"),
        );
    }
    if !is_ident(k.entry.get_ref()) {
        return at.err(
            k.entry.span(),
            format!("entry '{}' is not a C identifier", k.entry.get_ref()),
        );
    }
    if !is_word(k.base.get_ref()) {
        return at.err(
            k.base.span(),
            format!(
                "base '{}' must be lowercase letters, digits or _",
                k.base.get_ref()
            ),
        );
    }
    let head_dims = k.head_dims.get_ref().clone();
    if head_dims.is_empty()
        || head_dims
            .iter()
            .any(|d| !(8..=256).contains(d) || d % 8 != 0)
    {
        return at.err(
            k.head_dims.span(),
            "head_dims must list head dimensions, each a multiple of 8 from 8 to 256",
        );
    }
    Ok(head_dims)
}

/// `[launch]`: its lets in order, each over the names before it, then the
/// shared memory, threads and grid formulas over all of them.
fn launch(
    at: &At,
    l: &RawLaunch,
    names: &[String],
    expr: &impl Fn(&Spanned<String>, &[String], &str) -> Result<Expr, ManifestError>,
) -> Result<Launch, ManifestError> {
    let mut known = names.to_vec();
    known.extend(SHAPE_NAMES.iter().map(|s| s.to_string()));
    let mut lets = Vec::new();
    for line in l.lets.get_ref() {
        let Some((name, body)) = line.split_once('=') else {
            return at.err(
                l.lets.span(),
                format!("let '{line}' is not of the form NAME = expression"),
            );
        };
        let name = name.trim();
        if !is_ident(name) || known.iter().any(|k| k == name) {
            return at.err(
                l.lets.span(),
                format!("let '{line}': {name} is not a new name (a C identifier not used above)"),
            );
        }
        let body = Spanned::new(l.lets.span(), body.trim().to_string());
        lets.push((name.to_string(), expr(&body, &known, "let")?));
        known.push(name.to_string());
    }
    let grid: Vec<Expr> = l
        .grid
        .get_ref()
        .iter()
        .map(|g| expr(&Spanned::new(l.grid.span(), g.clone()), &known, "grid"))
        .collect::<Result<_, _>>()?;
    let grid: [Expr; 3] = grid.try_into().or_else(|_| {
        at.err(
            l.grid.span(),
            "grid must list three expressions: x, y, z (e.g. [\"ceil_div(S, BLOCK_M)\", \"H\", \"B\"])",
        )
    })?;
    Ok(Launch {
        lets,
        smem_bytes: expr(&l.smem_bytes, &known, "smem_bytes")?,
        threads: expr(&l.threads, &known, "threads")?,
        grid,
    })
}

/// `[[tiles]]`: each list's tiles, read and checked against the parameters.
fn tile_lists(
    at: &At,
    raw: &Raw,
    m: &Manifest,
    names: &[String],
    expr: &impl Fn(&Spanned<String>, &[String], &str) -> Result<Expr, ManifestError>,
) -> Result<Vec<TileList>, ManifestError> {
    let mut lists = Vec::new();
    for t in &raw.tiles {
        let t = t.get_ref();
        let when = match &t.when {
            Some(w) => Some(expr(w, names, "when")?),
            None => None,
        };
        let tiles = |list: &Spanned<Vec<String>>| -> Result<Vec<Tile>, ManifestError> {
            list.get_ref()
                .iter()
                .map(|s| {
                    let tile = m.parse_tile(s).or_else(|e| at.err(list.span(), e))?;
                    for (i, p) in m.params.iter().enumerate() {
                        if !p.allowed.admits(tile.0[i]) {
                            return at.err(
                                list.span(),
                                format!(
                                    "tile '{s}': {}={} is out of range ({})",
                                    p.label,
                                    tile.0[i],
                                    p.allowed.describe()
                                ),
                            );
                        }
                    }
                    Ok(tile)
                })
                .collect()
        };
        let cycle = tiles(&t.cycle)?;
        if cycle.is_empty() {
            return at.err(t.cycle.span(), "cycle lists no tiles");
        }
        let tune = match &t.tune {
            Some(list) => tiles(list)?,
            None => cycle.clone(),
        };
        lists.push(TileList { when, cycle, tune });
    }
    Ok(lists)
}

/// The start variant: `start`, else the toggles marked default.
fn start_variant(at: &At, raw: &Raw, m: &Manifest) -> Result<(u64, Tile), ManifestError> {
    let k = raw.kernel.get_ref();
    let default_bits = m
        .toggles
        .iter()
        .enumerate()
        .filter(|(_, t)| t.default)
        .fold(0u64, |acc, (i, _)| acc | 1 << i);
    Ok(match &k.start {
        Some(s) => m
            .parse_variant(s.get_ref())
            .or_else(|e| at.err(s.span(), format!("start: {e}")))?,
        None => {
            let tile = m.default_tile();
            m.check(default_bits, tile)
                .or_else(|e| at.err(raw.kernel.span(), format!("the default toggles: {e}")))?;
            (default_bits, tile)
        }
    })
}

/// The base variant and every planted mutation must pass the rules, and
/// every launch formula must work for the base and the start.
fn check_variants(at: &At, raw: &Raw, m: &Manifest) -> Result<(), ManifestError> {
    m.check(0, m.default_tile()).or_else(|e| {
        at.err(
            raw.kernel.span(),
            format!("the base variant ({}) breaks a rule: {e}", m.base),
        )
    })?;
    for (i, t) in raw.toggle.iter().enumerate() {
        for v in t.get_ref().mutation.get_ref() {
            let (bits, tile) = m
                .parse_variant(v)
                .or_else(|e| at.err(t.get_ref().mutation.span(), format!("mutation: {e}")))?;
            let planted = bits | 1 << i;
            m.check(planted, tile).or_else(|e| {
                at.err(
                    t.get_ref().mutation.span(),
                    format!("mutation '{v}' with {}: {e}", m.toggles[i].name),
                )
            })?;
        }
    }
    // Every formula must work for the base and the start at every head dim.
    for &d in &m.head_dims {
        for (bits, tile) in [(0, m.default_tile()), m.start] {
            m.launch_shape(bits, tile, &Shape::new(1, 1, 1, d), 1)
                .or_else(|e| {
                    at.err(
                        raw.launch.span(),
                        format!("{} at HEAD_DIM={d}: {e}", m.variant_text(bits, tile)),
                    )
                })?;
        }
    }
    Ok(())
}

fn arch(
    at: &At,
    s: &Option<Spanned<String>>,
    exact: bool,
) -> Result<Option<ArchNeed>, ManifestError> {
    let Some(s) = s else { return Ok(None) };
    let need = ArchNeed::parse(s.get_ref()).or_else(|e| at.err(s.span(), e))?;
    match (need, exact) {
        (ArchNeed::Exactly(_), false) => at.err(
            s.span(),
            format!("min_arch '{}' takes sm_NN; an architecture-specific target goes in arch", s.get_ref()),
        ),
        (ArchNeed::AtLeast(_), true) => at.err(
            s.span(),
            format!("arch '{}' takes an architecture-specific target like sm_90a; a minimum goes in min_arch", s.get_ref()),
        ),
        _ => Ok(Some(need)),
    }
}

fn either_arch(
    at: &At,
    min: &Option<Spanned<String>>,
    exact: &Option<Spanned<String>>,
    span: std::ops::Range<usize>,
) -> Result<Option<ArchNeed>, ManifestError> {
    match (arch(at, min, false)?, arch(at, exact, true)?) {
        (Some(_), Some(_)) => at.err(span, "give min_arch or arch, not both"),
        (a, b) => Ok(a.or(b)),
    }
}

fn toggles(at: &At, raw: &Raw, base: &str) -> Result<Vec<Toggle>, ManifestError> {
    if raw.toggle.len() > MAX_TOGGLES {
        return at.err(
            raw.toggle[MAX_TOGGLES].span(),
            format!("more than {MAX_TOGGLES} toggles"),
        );
    }
    let mut words: HashSet<String> = HashSet::from([base.to_string()]);
    let mut defines: HashSet<String> = SHAPE_NAMES.iter().map(|s| s.to_string()).collect();
    defines.insert(DTYPE_DEFINE.into());
    defines.insert(PLAIN_DEFINE.into());
    defines.insert("TILE".into());
    let mut keys: Vec<(char, String)> = Vec::new();
    let mut out = Vec::new();
    for t in &raw.toggle {
        let r = t.get_ref();
        let name = r.name.get_ref();
        for w in std::iter::once(name).chain(r.aliases.iter()) {
            if !is_word(w) {
                return at.err(
                    r.name.span(),
                    format!("toggle name '{w}' must be lowercase letters, digits or _"),
                );
            }
            if !words.insert(w.clone()) {
                return at.err(
                    r.name.span(),
                    format!("'{w}' names two toggles (or a toggle and the base)"),
                );
            }
        }
        let define = r.define.get_ref();
        if !is_ident(define) || !defines.insert(define.clone()) {
            return at.err(
                r.define.span(),
                format!("define '{define}' must be a C identifier used once (HEAD_DIM, ATTN_BF16, ATTN_PLAIN, B, H, S, HKV, SK, SMS, TILE are attnscope's)"),
            );
        }
        let key = toggle_key(at, r, &mut keys)?;

        if !r.mutation.get_ref().is_empty() && !r.test_only {
            return at.err(
                r.mutation.span(),
                format!("{name}: mutation sites are for test_only toggles"),
            );
        }
        out.push(Toggle {
            name: name.clone(),
            aliases: r.aliases.clone(),
            define: define.clone(),
            key,
            label: r.label.clone().unwrap_or_else(|| name.clone()),
            help: r.help.clone(),
            default: r.default,
            excludes: Vec::new(),
            implies: Vec::new(),
            provides: r.provides.clone(),
            arch: either_arch(at, &r.min_arch, &r.arch, t.span())?,
            test_only: r.test_only,
            mutation: r.mutation.get_ref().clone(),
            family: r.family.clone(),
        });
    }
    link_toggles(at, raw, &mut out)?;
    Ok(out)
}

/// A toggle's one-character key, checked against attnscope's and the other
/// toggles'.
fn toggle_key(
    at: &At,
    r: &RawToggle,
    keys: &mut Vec<(char, String)>,
) -> Result<Option<char>, ManifestError> {
    let name = r.name.get_ref();
    Ok(match &r.key {
        None => None,
        Some(k) => {
            let mut chars = k.get_ref().chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return at.err(
                    k.span(),
                    format!("key '{}' must be one character", k.get_ref()),
                );
            };
            if RESERVED_KEYS.contains(&c) || c.is_control() {
                return at.err(
                    k.span(),
                    format!("key '{c}' is attnscope's own (see ? in live); pick another"),
                );
            }
            if let Some((_, other)) = keys.iter().find(|(kc, _)| *kc == c) {
                return at.err(
                    k.span(),
                    format!("key '{c}' is bound twice: {other} and {name}"),
                );
            }
            keys.push((c, name.clone()));
            Some(c)
        }
    })
}

/// Excludes and implies name other toggles; excludes hold both ways.
fn link_toggles(at: &At, raw: &Raw, out: &mut [Toggle]) -> Result<(), ManifestError> {
    let words: Vec<(String, Vec<String>)> = out
        .iter()
        .map(|o| (o.name.clone(), o.aliases.clone()))
        .collect();
    for (i, t) in raw.toggle.iter().enumerate() {
        let r = t.get_ref();
        let index = |w: &String, list: &Spanned<Vec<String>>, what: &str| match words
            .iter()
            .position(|(n, a)| n == w || a.contains(w))
        {
            Some(j) if j == i => at.err(
                list.span(),
                format!("toggle '{}' {what} itself", words[i].0),
            ),
            Some(j) => Ok(j),
            None => at.err(list.span(), format!("{what} '{w}': no such toggle")),
        };
        for w in r.excludes.get_ref() {
            let j = index(w, &r.excludes, "excludes")?;
            for (a, b) in [(i, j), (j, i)] {
                if !out[a].excludes.contains(&b) {
                    out[a].excludes.push(b);
                }
            }
        }
        for w in r.implies.get_ref() {
            let j = index(w, &r.implies, "implies")?;
            out[i].implies.push(j);
        }
    }
    for (i, t) in out.iter().enumerate() {
        if let Some(&j) = t.implies.iter().find(|j| t.excludes.contains(j)) {
            return at.err(
                raw.toggle[i].span(),
                format!("{} both implies and excludes {}", t.name, out[j].name),
            );
        }
    }
    Ok(())
}

fn params(at: &At, raw: &Raw, toggles: &[Toggle]) -> Result<Vec<Param>, ManifestError> {
    if raw.param.len() > MAX_PARAMS {
        return at.err(
            raw.param[MAX_PARAMS].span(),
            format!("more than {MAX_PARAMS} tile parameters"),
        );
    }
    let mut defines: HashSet<String> = toggles.iter().map(|t| t.define.clone()).collect();
    defines.extend(SHAPE_NAMES.iter().map(|s| s.to_string()));
    defines.insert(DTYPE_DEFINE.into());
    defines.insert(PLAIN_DEFINE.into());
    defines.insert("TILE".into());
    let mut names = HashSet::new();
    let mut tags: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (i, p) in raw.param.iter().enumerate() {
        let r = p.get_ref();
        let name = r.name.get_ref();
        if !is_word(name) || !names.insert(name.clone()) {
            return at.err(
                r.name.span(),
                format!(
                    "parameter name '{name}' must be lowercase letters, digits or _, used once"
                ),
            );
        }
        let define = r.define.get_ref();
        if !is_ident(define) || !defines.insert(define.clone()) {
            return at.err(
                r.define.span(),
                format!("define '{define}' must be a C identifier used once (HEAD_DIM, ATTN_BF16, ATTN_PLAIN, B, H, S, HKV, SK, SMS, TILE are attnscope's)"),
            );
        }
        let tag = r.tag.get_ref();
        let tag_ok = if i == 0 && !r.flag {
            tag.is_empty()
        } else {
            !tag.is_empty() && tag.chars().all(|c| c.is_ascii_lowercase())
        };
        if !tag_ok {
            return at.err(
                r.tag.span(),
                if i == 0 && !r.flag {
                    "the first parameter's tag is empty: its value starts the tile (64x64…)".to_string()
                } else {
                    format!("tag '{tag}' must be lowercase letters (it precedes the value, as x in 64x64)")
                },
            );
        }
        if let Some(other) = tags
            .iter()
            .find(|t| !t.is_empty() && (t.starts_with(tag.as_str()) || tag.starts_with(t.as_str())))
        {
            return at.err(
                r.tag.span(),
                format!(
                    "tag '{tag}' and tag '{other}' would read alike: one must not begin the other"
                ),
            );
        }
        tags.push(tag.clone());
        let allowed = allowed_values(at, p)?;
        let default = param_default(at, p, &allowed)?;
        if r.test_only && !(r.optional || r.flag) {
            return at.err(r.name.span(), format!("{name}: {}", names::TEST_ONLY));
        }
        out.push(Param {
            name: name.clone(),
            define: define.clone(),
            tag: tag.clone(),
            default,
            allowed,
            optional: r.optional || r.flag,
            flag: r.flag,
            arch: either_arch(at, &r.min_arch, &r.arch, p.span())?,
            label: r.label.clone().unwrap_or_else(|| name.clone()),
            test_only: r.test_only,
        });
    }
    Ok(out)
}

/// The values a parameter admits: a flag's 0 and 1, a list, or a range.
fn allowed_values(at: &At, p: &Spanned<RawParam>) -> Result<Allowed, ManifestError> {
    let r = p.get_ref();
    let name = r.name.get_ref();
    Ok(if r.flag {
        if r.values.is_some() || r.range.is_some() || r.multiple_of.is_some() {
            return at.err(
                p.span(),
                format!("{name} is a flag: no values, range or multiple_of"),
            );
        }
        Allowed::Values(vec![0, 1])
    } else {
        match (&r.values, &r.range) {
            (Some(v), None) if !v.get_ref().is_empty() => {
                if r.multiple_of.is_some() {
                    return at.err(v.span(), "multiple_of goes with range, not values");
                }
                Allowed::Values(v.get_ref().clone())
            }
            (None, Some(range)) => {
                let [min, max] = *range.get_ref();
                let step = r.multiple_of.as_ref().map_or(1, |m| *m.get_ref());
                if min > max || step == 0 {
                    return at.err(
                        range.span(),
                        format!("range [{min}, {max}] with multiple_of {step} admits nothing"),
                    );
                }
                Allowed::Range { min, max, step }
            }
            _ => {
                return at.err(
                    p.span(),
                    format!("{name}: give values = [...] or range = [min, max] (one of them)"),
                );
            }
        }
    })
}

/// A parameter's default, which its allowed values must admit.
fn param_default(at: &At, p: &Spanned<RawParam>, allowed: &Allowed) -> Result<u32, ManifestError> {
    let r = p.get_ref();
    let name = r.name.get_ref();
    let default = match (&r.default, r.flag) {
        (Some(d), true) if *d.get_ref() > 1 => {
            return at.err(d.span(), format!("{name} is a flag: default 0 or 1"));
        }
        (Some(d), _) => *d.get_ref(),
        (None, true) => 0,
        (None, false) => {
            return at.err(p.span(), format!("{name}: give a default value"));
        }
    };
    if !allowed.admits(default) {
        let span = r.default.as_ref().map_or(p.span(), |d| d.span());
        return at.err(
            span,
            format!(
                "{name}: default {default} is out of range ({})",
                allowed.describe()
            ),
        );
    }
    Ok(default)
}

/// A rule's `{…}` parts must be TILE or expressions over the defines.
fn check_message(
    at: &At,
    span: std::ops::Range<usize>,
    message: &str,
    names: &[String],
) -> Result<(), ManifestError> {
    let mut rest = message;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return at.err(span, format!("message '{message}': a '{{' is not closed"));
        };
        let inner = rest[open + 1..open + close].trim();
        if inner != "TILE" {
            let e = Expr::parse(inner)
                .or_else(|e| at.err(span.clone(), format!("message '{{{inner}}}': {e}")))?;
            if let Some(n) = e
                .names()
                .into_iter()
                .find(|n| !names.iter().any(|k| k == n))
            {
                return at.err(
                    span,
                    format!(
                        "message '{{{inner}}}' reads {n}, which is not a toggle or parameter define"
                    ),
                );
            }
        }
        rest = &rest[open + close + 1..];
    }
    Ok(())
}
