//! NVRTC builds of the attention kernel: toggles as -D defines, straight to
//! cubin for one arch, with the PTXAS report, a memory cache and a disk cache
//! keyed by source hash + defines + arch + NVRTC version.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use cudarc::nvrtc::{result, sys};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::libs::{self, Lib};
use super::ptxas::{self, Resources};
use crate::session::{Shape, Variant};

pub const KERNEL_SOURCE: &str = include_str!("../../kernels/attention.cu");

macro_rules! bundled_parts {
    ($($name:literal),* $(,)?) => {
        [$(($name, include_str!(concat!("../../kernels/", $name)))),*]
    };
}

/// The bundled kernel's parts, by the names its `#include`s give them (a
/// test holds this list to what kernels/ includes).
pub const KERNEL_HEADERS: &[(&str, &str)] = &bundled_parts!(
    "attention/config.cuh",
    "attention/primitives.cuh",
    "attention/mutations.cuh",
    "attention/loads.cuh",
    "attention/softmax.cuh",
    "attention/tile_gemms.cuh",
    "attention/tile_scheduler.cuh",
    "attention/producer.cuh",
    "attention/mainloop_pingpong.cuh",
    "attention/decode.cuh",
    "attention/mainloop_ws.cuh",
    "attention/mainloop_pipelined.cuh",
    "attention/mainloop_stagger.cuh",
    "attention/mainloop_plain.cuh",
    "attention/epilogue.cuh",
    "attention/seed_path.cuh",
);

/// A CUDA source to build: its text, the file name NVRTC reports, the
/// headers it includes (folder-relative names as written, and texts), and
/// the entry point whose PTXAS report is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub text: String,
    pub file: String,
    pub headers: Vec<(String, String)>,
    pub entry: String,
}

impl Program {
    /// The bundled attention kernel.
    pub fn bundled() -> Program {
        let m = crate::session::manifest::registry::manifest(crate::session::KernelId::BUNDLED);
        Program {
            text: KERNEL_SOURCE.to_string(),
            file: m.source.clone(),
            headers: KERNEL_HEADERS
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
            entry: m.entry.clone(),
        }
    }

    /// A folder's files as `sources::follow` lists them (main first).
    pub fn from_files(mut files: Vec<(String, String)>, entry: &str) -> Program {
        let (file, text) = if files.is_empty() {
            Default::default()
        } else {
            files.remove(0)
        };
        Program {
            text,
            file,
            headers: files,
            entry: entry.to_string(),
        }
    }

    /// Every file's text under its name, the main source's first: what the
    /// source hash and the cache key read. A single-file kernel hashes its
    /// text alone, as before headers, so its recorded hashes still match.
    /// The folder's files as `from_files` took them, main first.
    pub fn files(&self) -> Vec<(String, String)> {
        std::iter::once((self.file.clone(), self.text.clone()))
            .chain(self.headers.iter().cloned())
            .collect()
    }

    /// Each file's own hash (16 hex digits), by name.
    pub fn file_hashes(&self) -> std::collections::BTreeMap<String, String> {
        self.files()
            .into_iter()
            .map(|(name, text)| {
                let hash = hex(&Sha256::digest(text.as_bytes()))[..16].to_string();
                (name, hash)
            })
            .collect()
    }

    fn hash_into(&self, h: &mut Sha256) {
        h.update(self.text.as_bytes());
        for (name, text) in &self.headers {
            h.update([0]);
            h.update(name.as_bytes());
            h.update([0]);
            h.update(text.as_bytes());
        }
    }

    /// A small helper kernel compiled without defines.
    pub fn helper(text: &str, file: &str, entry: &str) -> Program {
        Program {
            text: text.to_string(),
            file: file.to_string(),
            headers: Vec::new(),
            entry: entry.to_string(),
        }
    }
}

/// What one compile produced.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Build {
    pub arch: String,
    pub cubin: Vec<u8>,
    pub log: String,
    pub families: Vec<String>,
    pub registers: u32,
    pub smem_static_bytes: u32,
    pub stack_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    pub compile_ms: f64,
    #[serde(skip)]
    pub cached: bool,
    /// NVRTC printed no PTXAS report; resources come from the driver.
    #[serde(default)]
    pub report_missing: bool,
    /// A Python variant's file and versions (none for a cubin).
    #[serde(default)]
    pub python: Option<crate::session::event::PythonBuild>,
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{0}")]
    Library(#[from] libs::Missing),
    #[error("NVRTC failed to compile {variant} for {arch}:\n{log}")]
    Compile {
        variant: String,
        arch: String,
        log: String,
    },
    #[error("NVRTC error: {0}")]
    Nvrtc(String),
    #[error("{variant} cannot be built here: {why}")]
    NeedsArch { variant: String, why: String },
}

/// The target a variant compiles for on `arch`: what its manifest's
/// architecture needs say (wgmma: sm_90a, Hopper's architecture-specific
/// target, whose cubin loads on sm_90 GPUs only).
pub fn target_arch(variant: &Variant, arch: &str) -> Result<String, BuildError> {
    let m = variant.manifest().ok_or_else(|| BuildError::NeedsArch {
        variant: variant.name(),
        why: "cuDNN is not built by NVRTC".into(),
    })?;
    m.target_arch(variant.toggles.0, variant.tile, arch)
        .map_err(|why| BuildError::NeedsArch {
            variant: variant.name(),
            why,
        })
}

/// The -D defines for a variant at a shape's head dimension and dtype (its
/// manifest's).
pub fn defines(variant: &Variant, shape: &Shape) -> Vec<String> {
    variant
        .manifest()
        .map(|m| m.defines(variant.toggles.0, variant.tile, shape))
        .unwrap_or_default()
}

/// Folders holding `cuda_fp16.h` (NVRTC needs them for half and WMMA).
pub fn include_dirs() -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            candidates.push(PathBuf::from(root).join("include"));
        }
    }
    candidates.push(PathBuf::from("/usr/local/cuda/include"));
    candidates.push(PathBuf::from(
        "/usr/local/cuda/targets/x86_64-linux/include",
    ));
    for dir in libs::search_dirs() {
        if let Some(parent) = dir.parent() {
            candidates.push(parent.join("include"));
        }
    }
    candidates.retain(|d| d.join("cuda_fp16.h").is_file());
    super::libs::unique(candidates)
}

pub fn nvrtc_version() -> Result<(i32, i32), BuildError> {
    libs::ensure(Lib::Nvrtc)?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: libnvrtc was found and preloaded above.
    let rc = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    if rc != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(BuildError::Nvrtc(format!("nvrtcVersion: {rc:?}")));
    }
    Ok((major, minor))
}

/// The architectures this NVRTC builds (`52` for sm_52 …), or None when it
/// cannot say.
pub fn supported_archs() -> Option<Vec<i32>> {
    libs::ensure(Lib::Nvrtc).ok()?;
    let mut n = 0;
    // SAFETY: libnvrtc was found and preloaded above; `n` is written.
    if unsafe { sys::nvrtcGetNumSupportedArchs(&mut n) } != sys::nvrtcResult::NVRTC_SUCCESS {
        return None;
    }
    let mut archs = vec![0; usize::try_from(n).unwrap_or(0)];
    // SAFETY: `archs` holds the `n` entries NVRTC writes.
    if unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) } != sys::nvrtcResult::NVRTC_SUCCESS
    {
        return None;
    }
    Some(archs)
}

pub struct Builder {
    program: Program,
    memory: Mutex<HashMap<String, Build>>,
    disk: Option<PathBuf>,
}

impl Builder {
    pub fn new(program: Program) -> Builder {
        let disk = crate::cache_dir::cache_dir().map(|c| c.join("cubin"));
        Builder {
            program,
            memory: Mutex::new(HashMap::new()),
            disk,
        }
    }

    pub fn without_disk_cache(mut self) -> Builder {
        self.disk = None;
        self
    }

    pub fn entry(&self) -> &str {
        &self.program.entry
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    pub fn source_hash(&self) -> String {
        let mut h = Sha256::new();
        self.program.hash_into(&mut h);
        hex(&h.finalize())[..16].to_string()
    }

    fn key(&self, defines: &[String], arch: &str) -> Result<String, BuildError> {
        let (major, minor) = nvrtc_version()?;
        let mut h = Sha256::new();
        self.program.hash_into(&mut h);
        h.update(self.program.entry.as_bytes());
        for d in defines {
            h.update(d.as_bytes());
            h.update([0]);
        }
        h.update(arch.as_bytes());
        h.update(format!("nvrtc{major}.{minor}"));
        Ok(hex(&h.finalize())[..32].to_string())
    }

    /// Builds `variant` for `shape.d`, `shape.dtype` and `arch` (`sm_90`),
    /// from cache when possible.
    pub fn build(&self, variant: &Variant, shape: &Shape, arch: &str) -> Result<Build, BuildError> {
        let arch = &target_arch(variant, arch)?;
        let defines = defines(variant, shape);
        let key = self.key(&defines, arch)?;
        if let Some(b) = self
            .memory
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(Build {
                cached: true,
                ..b.clone()
            });
        }
        if let Some(b) = self
            .disk
            .as_ref()
            .and_then(|d| read_cached(&d.join(format!("{key}.json"))))
        {
            self.memory
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, b.clone());
            return Ok(Build { cached: true, ..b });
        }
        let build = compile(&self.program, &defines, arch).map_err(|e| match e {
            BuildError::Compile { arch, log, .. } => BuildError::Compile {
                variant: variant.name(),
                arch,
                log,
            },
            other => other,
        })?;
        if let Some(dir) = &self.disk {
            // A cache that cannot be written only costs a rebuild next time.
            let _ = std::fs::create_dir_all(dir).and_then(|_| {
                std::fs::write(
                    dir.join(format!("{key}.json")),
                    serde_json::to_vec(&build).unwrap_or_default(),
                )
            });
        }
        self.memory
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, build.clone());
        Ok(build)
    }
}

fn read_cached(path: &Path) -> Option<Build> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One NVRTC compile to cubin with `-Xptxas -v`.
pub fn compile(program: &Program, defines: &[String], arch: &str) -> Result<Build, BuildError> {
    libs::ensure(Lib::Nvrtc)?;
    let started = Instant::now();
    let mut opts: Vec<String> = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        "--ptxas-options=-v".into(),
        "-default-device".into(),
        "-lineinfo".into(),
    ];
    opts.extend(defines.iter().cloned());
    for dir in include_dirs() {
        opts.push(format!("--include-path={}", dir.display()));
    }
    let prog = create_program(program)?;
    // SAFETY: `prog` is a live program until destroy_program below.
    let outcome = unsafe { result::compile_program(prog, &opts) };
    let log = unsafe { result::get_program_log(prog) }
        .map(|l| c_chars_to_string(&l))
        .unwrap_or_default();
    let built = outcome
        .map_err(|_| BuildError::Compile {
            variant: String::new(),
            arch: arch.into(),
            log: log.clone(),
        })
        .and_then(|_| {
            let ptx = unsafe { result::get_ptx(prog) }
                .map_err(|e| BuildError::Nvrtc(format!("{e:?}")))?;
            let cubin = unsafe { get_cubin(prog) }?;
            Ok((c_chars_to_string(&ptx), cubin))
        });
    // SAFETY: created above and not used after this.
    let _ = unsafe { result::destroy_program(prog) };
    let (ptx, cubin) = built?;
    // A missing report is filled in from the driver's function attributes at
    // load time (see Engine::prepare); spills are then unknown.
    let report = ptxas::parse_report(&log, &program.entry);
    let r: Resources = report.clone().unwrap_or_default();
    Ok(Build {
        arch: arch.into(),
        cubin,
        families: ptxas::families(&ptx),
        log,
        registers: r.registers,
        smem_static_bytes: r.smem_static_bytes,
        stack_bytes: r.stack_bytes,
        spill_store_bytes: r.spill_store_bytes,
        spill_load_bytes: r.spill_load_bytes,
        compile_ms: started.elapsed().as_secs_f64() * 1e3,
        cached: false,
        report_missing: report.is_none(),
        python: None,
    })
}

/// An NVRTC program of the main source, its headers handed over in memory
/// under the names the `#include`s write (a remote worker and the bundled
/// kernel have no folder NVRTC could search).
fn create_program(program: &Program) -> Result<sys::nvrtcProgram, BuildError> {
    let c = |s: &str, what: &str| {
        CString::new(s).map_err(|_| BuildError::Nvrtc(format!("{what} contains a NUL byte")))
    };
    let src = c(&program.text, "kernel source")?;
    let name = c(&program.file, "kernel file name")?;
    let mut texts = Vec::with_capacity(program.headers.len());
    let mut names = Vec::with_capacity(program.headers.len());
    for (n, t) in &program.headers {
        names.push(c(n, "a header's name")?);
        texts.push(c(t, n)?);
    }
    let text_ptrs: Vec<*const std::ffi::c_char> = texts.iter().map(|t| t.as_ptr()).collect();
    let name_ptrs: Vec<*const std::ffi::c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let mut prog = std::mem::MaybeUninit::uninit();
    // SAFETY: libnvrtc is loaded (the caller ensured it); every pointer is a
    // NUL-terminated string alive until NVRTC has copied it, during the call.
    let rc = unsafe {
        sys::nvrtcCreateProgram(
            prog.as_mut_ptr(),
            src.as_ptr(),
            name.as_ptr(),
            text_ptrs.len() as std::ffi::c_int,
            text_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    };
    if rc != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(BuildError::Nvrtc(format!("nvrtcCreateProgram: {rc:?}")));
    }
    // SAFETY: written by the successful call above.
    Ok(unsafe { prog.assume_init() })
}

unsafe fn get_cubin(prog: sys::nvrtcProgram) -> Result<Vec<u8>, BuildError> {
    let mut size = 0usize;
    // SAFETY: the caller passes a compiled program.
    let rc = unsafe { sys::nvrtcGetCUBINSize(prog, &mut size) };
    if rc != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(BuildError::Nvrtc(format!("nvrtcGetCUBINSize: {rc:?}")));
    }
    let mut buf = vec![0u8; size];
    let rc = unsafe { sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr().cast()) };
    if rc != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(BuildError::Nvrtc(format!("nvrtcGetCUBIN: {rc:?}")));
    }
    Ok(buf)
}

fn c_chars_to_string(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
