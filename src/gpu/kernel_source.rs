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
    // Its source is not the folder's any more: only its own builder has it.
    if registry::is_edit_build(&k.label) {
        return Err(format!(
            "{} is an earlier edit's build that is no longer kept (the newest {} are)",
            k.label,
            crate::session::event::edit::KEPT_EDITS
        ));
    }
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
