//! Where a kernel's source comes from for its builder: its folder's files,
//! or the bundled text compiled into this binary.

use std::path::Path;

use super::nvrtc::{KERNEL_SOURCE, Program};
use crate::session::manifest::registry::{self, KernelId};

/// The source a kernel builds from: its folder's .cu, or the bundled one.
pub fn program(kernel: KernelId) -> Result<Program, String> {
    let k = registry::get(kernel);
    let m = &k.manifest;
    let text = match &k.dir {
        Some(dir) => read_source(dir, &m.source)?,
        None if m.text == crate::session::manifest::BUNDLED_TOML => KERNEL_SOURCE.to_string(),
        None => {
            return Err(format!(
                "kernel {} was recorded in a session file; its source is not on this machine (run with --kernels DIR)",
                m.name
            ));
        }
    };
    Ok(Program {
        text,
        file: m.source.clone(),
        entry: m.entry.clone(),
    })
}

/// DIR/FILE, read; the error names the path and what is wrong.
pub fn read_source(dir: &Path, file: &str) -> Result<String, String> {
    let path = dir.join(file);
    std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "kernel folder {}: cannot read {}: {e} (the manifest's source names it)",
            dir.display(),
            path.display()
        )
    })
}
