//! `--kernels DIR`: the user's copy of the kernels folder. Its attention.cu is
//! read at start and watched; each saved change goes to the worker as a
//! Reload command, so editing, compiling and measuring needs no restart.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::{Duration, SystemTime};

use crate::session::command::Command;

/// The file inside DIR that holds the kernel.
pub const KERNEL_FILE: &str = "attention.cu";
const POLL: Duration = Duration::from_millis(300);

/// DIR/attention.cu, read; the error names the path and what is wrong.
pub fn read_source(dir: &Path) -> Result<String, String> {
    if !dir.is_dir() {
        return Err(format!(
            "--kernels {}: not a folder (give a copy of the kernels/ folder)",
            dir.display()
        ));
    }
    let file = dir.join(KERNEL_FILE);
    std::fs::read_to_string(&file).map_err(|e| {
        format!(
            "--kernels {}: cannot read {}: {e} (copy kernels/{KERNEL_FILE} there)",
            dir.display(),
            file.display()
        )
    })
}

/// The kernel to build: DIR/attention.cu with `--kernels DIR`, else the
/// bundled one.
pub fn source_or_bundled(dir: Option<&Path>) -> Result<String, String> {
    match dir {
        Some(dir) => read_source(dir),
        None => Ok(super::nvrtc::KERNEL_SOURCE.to_string()),
    }
}

/// Watches DIR/attention.cu by polling (editors that save by rename are seen
/// too) and sends its text whenever it changes; ends when `to` closes.
pub fn spawn(dir: PathBuf, initial: String, to: Sender<Command>) {
    std::thread::spawn(move || {
        let file = dir.join(KERNEL_FILE);
        let stamp = |p: &Path| {
            std::fs::metadata(p)
                .ok()
                .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
        };
        let mut seen = stamp(&file);
        let mut last = initial;
        loop {
            std::thread::sleep(POLL);
            let now = stamp(&file);
            if now == seen {
                continue;
            }
            seen = now;
            // A half-written file reads short; the next change event re-reads it.
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if text == last {
                continue;
            }
            last = text.clone();
            if to.send(Command::Reload { source: text }).is_err() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_change_becomes_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(KERNEL_FILE);
        std::fs::write(&file, "// v1\n").unwrap();
        let initial = read_source(dir.path()).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        spawn(dir.path().to_path_buf(), initial, tx);
        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(&file, "// v2, longer\n").unwrap();
        match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            Command::Reload { source } => assert_eq!(source, "// v2, longer\n"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn missing_folder_or_file_is_named() {
        let e = read_source(Path::new("/nonexistent/k")).unwrap_err();
        assert!(e.contains("not a folder"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = read_source(dir.path()).unwrap_err();
        assert!(e.contains("cannot read") && e.contains(KERNEL_FILE), "{e}");
    }
}
