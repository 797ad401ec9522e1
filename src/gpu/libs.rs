//! Finding the CUDA libraries without LD_LIBRARY_PATH. cudarc dlopens by
//! bare name and panics when that fails, so we look first, in the places a
//! stock install or a pip wheel puts them, and preload what we find: a later
//! dlopen of the same soname then resolves to the library already loaded.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lib {
    Cuda,
    Nvrtc,
    Cupti,
    Nvml,
    /// cuDNN, for the `cudnn` variant only: everything else works without it.
    Cudnn,
}

impl Lib {
    /// File names to try, most specific first (sonames first: cudarc asks for those).
    fn file_names(self) -> &'static [&'static str] {
        match self {
            Lib::Cuda => &["libcuda.so.1", "libcuda.so"],
            Lib::Nvrtc => &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"],
            Lib::Cupti => &["libcupti.so.13", "libcupti.so.12", "libcupti.so"],
            Lib::Nvml => &["libnvidia-ml.so.1", "libnvidia-ml.so"],
            Lib::Cudnn => &["libcudnn.so.9", "libcudnn.so"],
        }
    }

    pub fn name(self) -> &'static str {
        self.file_names()[0]
    }

    /// What a user installs to get it.
    pub fn remedy(self) -> &'static str {
        match self {
            Lib::Cuda | Lib::Nvml => {
                "install the NVIDIA driver (libcuda and libnvidia-ml come with it)"
            }
            Lib::Nvrtc => NVRTC_REMEDY,
            Lib::Cupti => {
                "install the CUDA toolkit 13.x (extras/CUPTI), or `pip install nvidia-cuda-cupti==13.0.*`"
            }
            Lib::Cudnn => {
                "`pip install nvidia-cudnn-cu13` (cuDNN 9), or install cuDNN 9 for CUDA 13; only the cudnn variant needs it"
            }
        }
    }
}

/// NVRTC alone compiles nothing: a kernel includes cuda_fp16.h (the runtime wheel) and the CRT
/// headers it pulls in (the crt wheel), so the advice names all three.
macro_rules! pip_nvrtc {
    () => {
        "pip install 'nvidia-cuda-nvrtc==13.0.*' 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-crt==13.0.*'"
    };
}
pub const PIP_NVRTC: &str = pip_nvrtc!();
const NVRTC_REMEDY: &str = concat!(
    "install the CUDA toolkit 13.x, or `",
    pip_nvrtc!(),
    "` (NVRTC and the headers kernels include; with `--target DIR`, set ATTNSCOPE_PIP_SITE=DIR), or set CUDA_HOME"
);

/// Folders searched, in order, before the loader's own path.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            let root = PathBuf::from(root);
            dirs.push(root.join("lib64"));
            dirs.push(root.join("targets/x86_64-linux/lib"));
            dirs.push(root.join("extras/CUPTI/lib64"));
        }
    }
    for fixed in [
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/targets/x86_64-linux/lib",
        "/usr/local/cuda/extras/CUPTI/lib64",
        "/usr/local/nvidia/lib64",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
    ] {
        dirs.push(PathBuf::from(fixed));
    }
    dirs.extend(pip_lib_dirs());
    dirs.retain(|d| d.is_dir());
    unique(dirs)
}

/// Keeps the first of each folder, comparing resolved paths (symlinked
/// CUDA folders otherwise show up twice).
pub fn unique(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    dirs.into_iter()
        .filter(|d| seen.insert(std::fs::canonicalize(d).unwrap_or_else(|_| d.clone())))
        .collect()
}

/// `site-packages/nvidia/cu13/lib` and the per-package `nvidia/*/lib` folders
/// of every Python on PATH-like places we can see without running Python.
fn pip_lib_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(extra) = std::env::var_os("ATTNSCOPE_PIP_SITE") {
        roots.extend(std::env::split_paths(&extra));
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        roots.extend(glob_site(&PathBuf::from(venv).join("lib")));
    }
    if let Some(home) = std::env::var_os("HOME") {
        roots.extend(glob_site(&PathBuf::from(&home).join(".local/lib")));
        let pyenv = PathBuf::from(&home).join(".pyenv/versions");
        if let Ok(rd) = std::fs::read_dir(pyenv) {
            for v in rd.flatten() {
                roots.extend(glob_site(&v.path().join("lib")));
            }
        }
    }
    for base in ["/usr/local/lib", "/usr/lib", "/opt/torch/.venv/lib"] {
        roots.extend(glob_site(Path::new(base)));
    }
    let mut dirs = Vec::new();
    for site in roots {
        let nv = site.join("nvidia");
        dirs.push(nv.join("cu13/lib"));
        if let Ok(rd) = std::fs::read_dir(&nv) {
            for pkg in rd.flatten() {
                dirs.push(pkg.path().join("lib"));
            }
        }
    }
    dirs
}

/// `base/python3.*/{site,dist}-packages`.
fn glob_site(base: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .flat_map(|e| {
            [
                e.path().join("site-packages"),
                e.path().join("dist-packages"),
            ]
        })
        .filter(|p| p.is_dir())
        .collect()
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub lib: Lib,
    /// The file loaded, or `None` when the loader found it on its own path.
    pub path: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{name} not found (searched {searched}, then the loader's path); {remedy}")]
pub struct Missing {
    pub lib: Lib,
    pub name: &'static str,
    pub searched: String,
    pub remedy: &'static str,
    /// The last loader error, e.g. a wrong-architecture file.
    pub detail: Option<String>,
}

/// Finds and preloads `lib` once per process.
pub fn ensure(lib: Lib) -> Result<Found, Missing> {
    static CELLS: [OnceLock<Result<Found, Missing>>; 5] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    CELLS[lib as usize].get_or_init(|| load(lib)).clone()
}

fn load(lib: Lib) -> Result<Found, Missing> {
    // cudarc asks for the bare `libcudnn.so` before the soname: when the
    // loader finds one, that copy is what runs, whatever we preload, so it
    // is the one to report.
    if lib == Lib::Cudnn && open_global(Path::new("libcudnn.so")).is_ok() {
        return Ok(Found { lib, path: None });
    }
    let dirs = search_dirs();
    let mut detail = None;
    for dir in &dirs {
        for name in lib.file_names() {
            let path = dir.join(name);
            if !path.exists() {
                continue;
            }
            match open_global(&path) {
                Ok(()) => {
                    preload_companions(lib, dir);
                    return Ok(Found {
                        lib,
                        path: Some(path),
                    });
                }
                Err(e) => detail = Some(format!("{}: {e}", path.display())),
            }
        }
    }
    for name in lib.file_names() {
        if open_global(Path::new(name)).is_ok() {
            return Ok(Found { lib, path: None });
        }
    }
    let searched = if dirs.is_empty() {
        "CUDA_HOME, /usr/local/cuda, pip nvidia/*/lib (none exist)".to_string()
    } else {
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(Missing {
        lib,
        name: lib.name(),
        searched,
        remedy: lib.remedy(),
        detail,
    })
}

/// NVRTC dlopens its builtins by bare name at compile time: load the ones
/// beside it first so a folder off the loader's path still works.
fn preload_companions(lib: Lib, dir: &Path) {
    let prefixes: &[&str] = match lib {
        Lib::Nvrtc => &["libnvrtc-builtins.so"],
        // The range profiler's host and target halves ship beside libcupti.
        Lib::Cupti => &["libnvperf_host.so", "libnvperf_target.so"],
        _ => return,
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if prefixes.iter().any(|p| name.starts_with(p)) {
            let _ = open_global(&e.path());
        }
    }
}

/// Whether the library `found` exports `symbol` (cudarc panics on a missing one).
pub fn has_symbol(found: &Found, symbol: &str) -> bool {
    use libloading::os::unix::{Library, RTLD_NOW};
    let path = found
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from(found.lib.name()));
    // SAFETY: the library is already loaded (this only bumps its count), and
    // the symbol is looked up, never called.
    unsafe {
        Library::open(Some(&path), RTLD_NOW)
            .and_then(|l| l.get::<*const ()>(symbol.as_bytes()).map(|_| ()))
            .is_ok()
    }
}

/// Loads a library for the life of the process, its symbols visible to
/// libraries loaded later (nvrtc's builtins, cupti's dependencies).
fn open_global(path: &Path) -> Result<(), String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: loading a vendor library runs its initializers; these are the
    // CUDA libraries the program exists to use.
    let lib =
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }.map_err(|e| e.to_string())?;
    std::mem::forget(lib);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_symbol_tells_present_from_missing() {
        // libc stands in for a CUDA library: the lookup is the same dlsym.
        let libc = Found {
            lib: Lib::Cupti,
            path: Some(PathBuf::from("libc.so.6")),
        };
        assert!(has_symbol(&libc, "malloc"));
        assert!(!has_symbol(&libc, "cuptiRangeProfilerEnable"));
        let nowhere = Found {
            lib: Lib::Cupti,
            path: Some(PathBuf::from("/nonexistent/libcupti.so.13")),
        };
        assert!(!has_symbol(&nowhere, "cuptiRangeProfilerEnable"));
    }
}
