//! Where a kernel's source comes from for its builder: its folder's files
//! (the main source and the headers it includes), or the bundled ones
//! compiled into this binary.

use super::nvrtc::Program;
use crate::session::manifest::registry::{self, KernelId};
use crate::session::manifest::sources;

/// The sources a kernel builds from: its folder's, or the bundled ones.
pub fn program(kernel: KernelId) -> Result<Program, String> {
    let k = registry::get(kernel);
    let m = &k.manifest;
    match &k.dir {
        Some(dir) => Ok(Program::from_files(
            sources::read_folder(dir, &m.source)?,
            &m.entry,
        )),
        None if m.text == crate::session::manifest::BUNDLED_TOML => Ok(Program::bundled()),
        None => Err(format!(
            "kernel {} was recorded in a session file; its source is not on this machine (run with --kernels DIR)",
            m.name
        )),
    }
}
