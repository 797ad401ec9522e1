//! The kernels this process knows, so a variant can stay a small `Copy` value
//! (a kernel number, toggle bits, tile values) and still print its name.
//!
//! Kernel 0 is the bundled one. The primary kernel (the one `--kernels DIR`
//! names, else the bundled one) has the empty label: its variants print bare
//! (`wmma+pv+async`); every other kernel's print as `label:variant`. Labels
//! are what session files and the worker protocol write, never numbers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, RwLock};

use super::Manifest;

/// A kernel's number in this process's registry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(pub u16);

impl KernelId {
    pub const BUNDLED: KernelId = KernelId(0);
    /// cuDNN's fused attention: no manifest, no toggles, no tile.
    pub const CUDNN: KernelId = KernelId(u16::MAX);
    /// A Python function (`py:…`): no manifest; its toggles number the
    /// function in `python_spec`.
    pub const PYTHON: KernelId = KernelId(u16::MAX - 1);
}

/// Python variants' functions (`sdpa_flash`, `MODULE:FUNCTION`), numbered
/// in order of first use, so a `py:` variant stays a `Copy` value.
static PYTHON: LazyLock<RwLock<Vec<String>>> = LazyLock::new(|| RwLock::new(Vec::new()));

/// The number of a Python function's spec (registered on first use).
pub fn python_index(spec: &str) -> u64 {
    let mut all = PYTHON.write().unwrap_or_else(|e| e.into_inner());
    let i = all.iter().position(|s| s == spec).unwrap_or_else(|| {
        all.push(spec.to_string());
        all.len() - 1
    });
    i as u64
}

/// Every Python function's spec, in order of first use.
pub fn python_specs() -> Vec<String> {
    PYTHON.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The spec numbered `i`.
pub fn python_spec(i: u64) -> Option<String> {
    let all = PYTHON.read().unwrap_or_else(|e| e.into_inner());
    all.get(i as usize).cloned()
}

#[derive(Debug)]
pub struct Kernel {
    /// Unique in the registry; "" for the primary kernel.
    pub label: String,
    pub manifest: Arc<Manifest>,
    /// The folder it was read from; None for the bundled kernel (or one
    /// rebuilt from a session file).
    pub dir: Option<PathBuf>,
    /// The GPU or host it ran on, in a merged session ("" otherwise): the
    /// same kernel measured on two GPUs is two kernels there.
    pub source: String,
}

struct Registry {
    kernels: Vec<Arc<Kernel>>,
    labels: HashMap<String, KernelId>,
    /// The sources of a merged session; [0] is "" (not merged). cuDNN's
    /// variant on source i carries i in its toggles.
    sources: Vec<String>,
}

/// The number of a merged session's source (registered on first use; 0 for "").
pub fn source_index(source: &str) -> u64 {
    if let Some(i) = read().sources.iter().position(|s| s == source) {
        return i as u64;
    }
    let mut r = write();
    if let Some(i) = r.sources.iter().position(|s| s == source) {
        return i as u64;
    }
    r.sources.push(source.to_string());
    (r.sources.len() - 1) as u64
}

/// The source numbered `i`, if there is one.
pub fn source_tag(i: u64) -> Option<String> {
    read().sources.get(i as usize).cloned()
}

/// The number of a known source, without registering it.
pub fn find_source(source: &str) -> Option<u64> {
    read()
        .sources
        .iter()
        .position(|s| s == source)
        .map(|i| i as u64)
}

/// The label that always names the bundled kernel.
pub const BUNDLED_LABEL: &str = "bundled";

static REGISTRY: LazyLock<RwLock<Registry>> = LazyLock::new(|| {
    let bundled = Arc::new(Kernel {
        label: BUNDLED_LABEL.into(),
        manifest: Arc::new(Manifest::bundled()),
        dir: None,
        source: String::new(),
    });
    RwLock::new(Registry {
        kernels: vec![bundled],
        labels: HashMap::from([
            (String::new(), KernelId::BUNDLED),
            (BUNDLED_LABEL.to_string(), KernelId::BUNDLED),
        ]),
        sources: vec![String::new()],
    })
});

fn read() -> std::sync::RwLockReadGuard<'static, Registry> {
    REGISTRY.read().unwrap_or_else(|e| e.into_inner())
}

fn write() -> std::sync::RwLockWriteGuard<'static, Registry> {
    REGISTRY.write().unwrap_or_else(|e| e.into_inner())
}

/// The kernel with this number (the primary one for an unknown number,
/// which only a bug could make).
pub fn get(id: KernelId) -> Arc<Kernel> {
    let r = read();
    r.kernels
        .get(id.0 as usize)
        .unwrap_or_else(|| &r.kernels[0])
        .clone()
}

pub fn manifest(id: KernelId) -> Arc<Manifest> {
    get(id).manifest.clone()
}

/// The primary kernel: what bare variant names mean.
pub fn primary() -> KernelId {
    read().labels.get("").copied().unwrap_or(KernelId::BUNDLED)
}

/// How this kernel's variants are prefixed: "" for the primary one.
pub fn label(id: KernelId) -> String {
    let r = read();
    if r.labels.get("") == Some(&id) {
        return String::new();
    }
    r.kernels
        .get(id.0 as usize)
        .map(|k| k.label.clone())
        .unwrap_or_default()
}

pub fn lookup(label: &str) -> Option<KernelId> {
    read().labels.get(label).copied()
}

/// Every kernel known, with the labels that name it (the primary first).
pub fn all() -> Vec<(KernelId, Arc<Kernel>)> {
    let r = read();
    let primary = r.labels.get("").copied().unwrap_or_default();
    let mut out: Vec<(KernelId, Arc<Kernel>)> = r
        .kernels
        .iter()
        .enumerate()
        .map(|(i, k)| (KernelId(i as u16), k.clone()))
        .collect();
    out.sort_by_key(|(id, _)| (*id != primary, *id));
    out
}

/// Adds a kernel under `label` ("" makes it the primary one), or returns
/// the one already there when it has the same manifest and folder. A label
/// already naming another kernel is moved to the new one (a reloaded
/// manifest, a session's own kernels); variants made before keep theirs.
pub fn register(label: &str, manifest: Manifest, dir: Option<PathBuf>) -> KernelId {
    register_from("", label, manifest, dir)
}

/// `register`, for a kernel that ran on `source` (a merged session's GPU).
pub fn register_from(
    source: &str,
    label: &str,
    manifest: Manifest,
    dir: Option<PathBuf>,
) -> KernelId {
    source_index(source);
    let mut r = write();
    let same = |k: &Kernel| k.manifest.text == manifest.text && k.dir == dir && k.source == source;
    if let Some(&id) = r.labels.get(label)
        && same(&r.kernels[id.0 as usize])
    {
        return id;
    }
    // The same kernel under another label (the bundled one as the primary);
    // an earlier edit's build has its own source, so is never that.
    if let Some(i) = r
        .kernels
        .iter()
        .position(|k| same(k))
        .filter(|_| !is_edit_build(label))
    {
        let id = KernelId(i as u16);
        r.labels.insert(label.to_string(), id);
        return id;
    }
    let id = KernelId(r.kernels.len().min(u16::MAX as usize - 1) as u16);
    // The primary kernel also answers to its manifest's name, when free, so
    // it keeps a label once another kernel becomes the primary one.
    let stored = if label.is_empty() && !r.labels.contains_key(&manifest.name) {
        manifest.name.clone()
    } else if label.is_empty() {
        format!("{}-{}", manifest.name, id.0)
    } else {
        label.to_string()
    };
    r.labels.insert(stored.clone(), id);
    r.kernels.push(Arc::new(Kernel {
        label: stored,
        manifest: Arc::new(manifest),
        dir,
        source: source.to_string(),
    }));
    r.labels.insert(label.to_string(), id);
    id
}

/// What marks the label of an earlier edit's build: `attention~e2`.
pub const EDIT_MARK: &str = "~e";

/// Whether `label` names an earlier edit's build of a watched kernel.
pub fn is_edit_build(label: &str) -> bool {
    label
        .rsplit_once(EDIT_MARK)
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Registers the build of edit `edit` of kernel `of`, which a reload is
/// replacing, as a kernel of its own (`LABEL~eN`, same manifest) so a
/// variant can name it as a race opponent.
pub fn register_edit_build(of: KernelId, edit: u32) -> KernelId {
    let k = get(of);
    let label = format!("{}{EDIT_MARK}{edit}", k.label);
    register_from(&k.source, &label, (*k.manifest).clone(), k.dir.clone())
}

/// Takes a label off its kernel (an edit's build no longer kept): variant
/// names with it no longer parse.
pub fn forget(label: &str) {
    if !label.is_empty() && label != BUNDLED_LABEL {
        write().labels.remove(label);
    }
}

/// The manifest file in a kernel folder: its only `*.toml`.
pub fn manifest_path(dir: &Path) -> Result<PathBuf, String> {
    if !dir.is_dir() {
        return Err(format!(
            "{}: not a folder (give a kernel folder: a .cu and its .toml manifest; `attnscope new DIR` writes one)",
            dir.display()
        ));
    }
    let mut tomls: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: cannot list: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
        .collect();
    tomls.sort();
    match tomls.len() {
        1 => Ok(tomls.remove(0)),
        0 => Err(format!(
            "{}: no manifest (*.toml) beside the kernel: copy kernels/attention.toml or run `attnscope new DIR` (docs/kernel-abi.md)",
            dir.display()
        )),
        _ => Err(format!(
            "{}: {} manifests ({}): keep one *.toml per kernel folder",
            dir.display(),
            tomls.len(),
            tomls
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Reads DIR's manifest; the error names the file, the line and the fault.
pub fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    // A copy of the kernels folder from before manifests: the bundled one's.
    if dir.join("attention.cu").is_file()
        && manifest_path(dir).is_err_and(|e| e.contains("no manifest"))
    {
        return Ok(Manifest::bundled());
    }
    let path = manifest_path(dir)?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let m = Manifest::parse(&text, &path.display().to_string()).map_err(|e| e.to_string())?;
    let source = dir.join(&m.source);
    if !source.is_file() {
        return Err(format!(
            "{}: source = \"{}\", but {} does not exist",
            path.display(),
            m.source,
            source.display()
        ));
    }
    super::sources::read_folder(dir, &m.source)?;
    Ok(m)
}

/// Registers a kernel folder: as the primary kernel, or under the
/// manifest's name (made unique with a number when another kernel has it).
pub fn load_dir(dir: &Path, primary: bool) -> Result<KernelId, String> {
    let m = read_manifest(dir)?;
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    if primary {
        return Ok(register("", m, Some(dir)));
    }
    let same = |id: KernelId| {
        let k = get(id);
        k.manifest.text == m.text && k.dir.as_deref() == Some(dir.as_path())
    };
    let mut label = m.name.clone();
    for n in 2.. {
        match lookup(&label) {
            Some(id) if same(id) => return Ok(id),
            Some(_) if label == m.name || label.starts_with(&format!("{}-", m.name)) => {
                label = format!("{}-{n}", m.name);
            }
            _ => break,
        }
    }
    if label == BUNDLED_LABEL || label == "cudnn" {
        label = format!("{label}-{}", read().kernels.len());
    }
    Ok(register(&label, m, Some(dir)))
}

/// A kernel as a session file records it: enough to read its variants back.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelRecord {
    /// "" for the session's primary kernel.
    pub label: String,
    pub name: String,
    pub manifest: String,
    pub dir: Option<String>,
    pub source_hash: Option<String>,
    /// The GPU or host it ran on, in a merged session. Added after schema
    /// 2, written only in merged sessions.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// One kernel as a session records it, under the label that names it now.
pub fn record(id: KernelId) -> KernelRecord {
    let k = get(id);
    KernelRecord {
        label: label(id),
        name: k.manifest.name.clone(),
        manifest: k.manifest.text.clone(),
        dir: k.dir.as_ref().map(|d| d.display().to_string()),
        source_hash: None,
        source: k.source.clone(),
    }
}

/// Every kernel this process knows, as a session header records them.
pub fn records() -> Vec<KernelRecord> {
    let r = read();
    let primary = r.labels.get("").copied().unwrap_or_default();
    let mut out = Vec::new();
    for (i, k) in r.kernels.iter().enumerate() {
        let id = KernelId(i as u16);
        // Only kernels a label still names (a replaced manifest is history).
        if !r.labels.values().any(|v| *v == id) {
            continue;
        }
        out.push(KernelRecord {
            label: if id == primary {
                String::new()
            } else {
                k.label.clone()
            },
            name: k.manifest.name.clone(),
            manifest: k.manifest.text.clone(),
            dir: k.dir.as_ref().map(|d| d.display().to_string()),
            source_hash: None,
            source: k.source.clone(),
        });
    }
    out.sort_by_key(|r| !r.label.is_empty());
    out
}

/// Kernels one process takes from files at most. A session names a few; a
/// damaged one naming thousands would grow the registry past what a
/// `KernelId` numbers, and variants would read with another's manifest.
pub const MAX_KERNELS: usize = 1024;

/// Err when the registry holds MAX_KERNELS kernels: no more from files.
pub fn room() -> Result<(), String> {
    if read().kernels.len() < MAX_KERNELS {
        Ok(())
    } else {
        Err(format!(
            "this process already knows {MAX_KERNELS} kernels: no more are read from files"
        ))
    }
}

/// Makes a session's kernels current before its events are read: each
/// record's manifest under its label. A record that does not parse is
/// returned as an error naming the label; the others are kept.
pub fn adopt(records: &[KernelRecord]) -> Result<(), String> {
    let mut failed = Vec::new();
    for rec in records {
        if let Err(e) = room() {
            failed.push(e);
            break;
        }
        match Manifest::parse(
            &rec.manifest,
            &format!("the session's manifest of {}", rec.name),
        ) {
            Ok(m) => {
                let dir = rec.dir.as_ref().map(PathBuf::from);
                // A folder that no longer holds this manifest is still its origin.
                register_from(&rec.source, &rec.label, m, dir);
            }
            Err(e) => failed.push(e.to_string()),
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}
