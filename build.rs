//! Decides whether the NVRTC build tests can run here, so that `cargo test`
//! says so in its normal output ("ignored, needs NVRTC: …") instead of
//! reporting a skipped test as passed. With `ATTNSCOPE_REQUIRE_NVRTC` set
//! (CI) the tests always run, and fail loudly without NVRTC.

use std::path::{Path, PathBuf};

fn has_nvrtc(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("libnvrtc.so"))
    })
}

/// The folders the tests' NVRTC loader searches first (gpu/libs.rs).
fn candidates() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            dirs.push(PathBuf::from(&root).join("lib64"));
            dirs.push(PathBuf::from(&root).join("targets/x86_64-linux/lib"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    dirs.push("/usr/lib/x86_64-linux-gnu".into());
    if let Some(site) = std::env::var_os("ATTNSCOPE_PIP_SITE") {
        for s in std::env::split_paths(&site) {
            dirs.push(s.join("nvidia/cu13/lib"));
            dirs.push(s.join("nvidia/cuda_nvrtc/lib"));
        }
    }
    dirs
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(attnscope_no_nvrtc)");
    for var in [
        "ATTNSCOPE_REQUIRE_NVRTC",
        "ATTNSCOPE_PIP_SITE",
        "CUDA_HOME",
        "CUDA_PATH",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    // The same for the link tests that need a real sshd or Slurm: `cargo test` lists them as
    // ignored, with the reason, where they cannot run. Decided when the crate builds: a later
    // install is seen at the next build that a changed variable triggers (CI requires sshd).
    println!("cargo::rustc-check-cfg=cfg(attnscope_no_sshd)");
    println!("cargo::rustc-check-cfg=cfg(attnscope_no_slurm)");
    println!("cargo::rerun-if-env-changed=ATTNSCOPE_REQUIRE_SSHD");
    println!("cargo::rerun-if-env-changed=ATTNSCOPE_SLURM");
    if std::env::var_os("ATTNSCOPE_REQUIRE_SSHD").is_none() && !Path::new("/usr/sbin/sshd").exists()
    {
        println!("cargo::rustc-cfg=attnscope_no_sshd");
    }
    if std::env::var_os("ATTNSCOPE_SLURM").is_none() {
        println!("cargo::rustc-cfg=attnscope_no_slurm");
    }
    let required = std::env::var_os("ATTNSCOPE_REQUIRE_NVRTC").is_some();
    if !required && !candidates().iter().any(|d| has_nvrtc(d)) {
        println!("cargo::rustc-cfg=attnscope_no_nvrtc");
    }
}
