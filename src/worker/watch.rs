//! Watched kernel folders (`--kernels DIR`, live): each saved change of the
//! source or the manifest goes to the worker as a Reload command, so
//! editing, compiling and measuring needs no restart.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::{Duration, SystemTime};

use crate::session::command::Command;
use crate::session::manifest::registry;

const POLL: Duration = Duration::from_millis(300);

/// Watches a kernel folder's source and manifest by polling (editors that
/// save by rename are seen too) and sends a Reload whenever either changes;
/// a changed manifest is registered here first, so the events the worker
/// answers with read back. Ends when `to` closes.
pub fn spawn(label: String, dir: PathBuf, to: Sender<Command>) {
    std::thread::spawn(move || {
        let stamp = |p: &Path| {
            std::fs::metadata(p)
                .ok()
                .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
        };
        let files = || watched_files(&dir);
        let mut seen = files().map(|(m, s)| (m.as_deref().and_then(stamp), stamp(&s)));
        let (mut last_source, mut last_manifest) = current(&dir);
        loop {
            std::thread::sleep(POLL);
            let now = files().map(|(m, s)| (m.as_deref().and_then(stamp), stamp(&s)));
            if now == seen {
                continue;
            }
            seen = now;
            let (source, manifest) = current(&dir);
            // A half-written file reads short; the next change re-reads it.
            let (Some(source), Some(manifest)) = (source, manifest) else {
                continue;
            };
            if Some(&source) == last_source.as_ref() && Some(&manifest) == last_manifest.as_ref() {
                continue;
            }
            let changed = Some(&manifest) != last_manifest.as_ref();
            if changed {
                let file = registry::manifest_path(&dir)
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                if let Ok(m) = crate::session::manifest::Manifest::parse(&manifest, &file) {
                    registry::register(&label, m, Some(dir.clone()));
                }
            }
            last_source = Some(source.clone());
            last_manifest = Some(manifest.clone());
            let cmd = Command::Reload {
                kernel: label.clone(),
                source,
                manifest: changed.then_some(manifest),
            };
            if to.send(cmd).is_err() {
                return;
            }
        }
    });
}

/// The files a watch polls: the manifest (none for a folder from before manifests, which holds
/// only attention.cu and takes the bundled manifest, as `registry::read_manifest` does) and the
/// source it names.
fn watched_files(dir: &Path) -> Option<(Option<PathBuf>, PathBuf)> {
    match registry::manifest_path(dir) {
        Ok(manifest) => {
            let text = std::fs::read_to_string(&manifest).ok()?;
            let source = crate::session::manifest::Manifest::parse(&text, "")
                .map(|m| m.source)
                .unwrap_or_default();
            Some((Some(manifest), dir.join(source)))
        }
        Err(_) if dir.join("attention.cu").is_file() => Some((None, dir.join("attention.cu"))),
        Err(_) => None,
    }
}

/// The folder's manifest text and the source it names, as they are now.
fn current(dir: &Path) -> (Option<String>, Option<String>) {
    let Some((manifest, source)) = watched_files(dir) else {
        return (None, None);
    };
    let text = match manifest {
        Some(path) => match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(_) => return (None, None),
        },
        None => crate::session::manifest::BUNDLED_TOML.to_owned(),
    };
    (std::fs::read_to_string(source).ok(), Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernel_source::{program, read_source};

    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let toml = crate::session::manifest::BUNDLED_TOML
            .replace("name = \"attention\"", "name = \"watched\"");
        std::fs::write(dir.path().join("attention.toml"), toml).unwrap();
        std::fs::write(dir.path().join("attention.cu"), "// v1\n").unwrap();
        dir
    }

    #[test]
    fn a_saved_change_becomes_a_reload() {
        let dir = folder();
        let id = registry::load_dir(dir.path(), false).unwrap();
        assert_eq!(program(id).unwrap().text, "// v1\n");
        let (tx, rx) = std::sync::mpsc::channel();
        spawn("watched".into(), dir.path().to_path_buf(), tx);
        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(dir.path().join("attention.cu"), "// v2, longer\n").unwrap();
        match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            Command::Reload {
                kernel,
                source,
                manifest,
            } => {
                assert_eq!(
                    (kernel.as_str(), source.as_str()),
                    ("watched", "// v2, longer\n")
                );
                assert!(manifest.is_none());
            }
            other => panic!("{other:?}"),
        }
        let toml = std::fs::read_to_string(dir.path().join("attention.toml")).unwrap();
        std::fs::write(
            dir.path().join("attention.toml"),
            toml.replace("label = \"cp.async\"", "label = \"cp.async (edited)\""),
        )
        .unwrap();
        match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            Command::Reload { manifest, .. } => {
                assert!(manifest.unwrap().contains("cp.async (edited)"));
            }
            other => panic!("{other:?}"),
        }
        let now = registry::lookup("watched").unwrap();
        assert!(
            registry::manifest(now)
                .toggles
                .iter()
                .any(|t| t.label == "cp.async (edited)")
        );
    }

    /// A copy of kernels/ from before manifests (attention.cu alone) loads with the bundled
    /// manifest; its saved changes must reload too (the `live` campaign's kernels step found
    /// them ignored).
    #[test]
    fn a_folder_without_a_manifest_is_watched_too() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("attention.cu"), "// v1\n").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        spawn("legacy".into(), dir.path().to_path_buf(), tx);
        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(dir.path().join("attention.cu"), "// v2, longer\n").unwrap();
        match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            Command::Reload {
                source, manifest, ..
            } => {
                assert_eq!(source, "// v2, longer\n");
                assert!(manifest.is_none(), "the bundled manifest did not change");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn missing_folder_or_file_is_named() {
        let e = registry::load_dir(Path::new("/nonexistent/k"), false).unwrap_err();
        assert!(e.contains("not a folder"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = registry::load_dir(dir.path(), false).unwrap_err();
        assert!(e.contains("no manifest"), "{e}");
        std::fs::write(
            dir.path().join("k.toml"),
            crate::session::manifest::BUNDLED_TOML,
        )
        .unwrap();
        let e = registry::load_dir(dir.path(), false).unwrap_err();
        assert!(
            e.contains("attention.cu") && e.contains("does not exist"),
            "{e}"
        );
        let e = read_source(dir.path(), "attention.cu").unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
    }
}
