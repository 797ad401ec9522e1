//! Watched kernel folders (`--kernels DIR`, live): each saved change of the
//! manifest, the source or a header it includes goes to the worker as a
//! Reload command, so editing, compiling and measuring needs no restart.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::{Duration, SystemTime};

use crate::session::command::Command;
use crate::session::manifest::{registry, sources};

const POLL: Duration = Duration::from_millis(300);

/// Watches a kernel folder's manifest, source and included headers by
/// polling (editors that save by rename are seen too) and sends a Reload
/// whenever one changes; the includes are read again after each change, so
/// a header included since is watched from then on. A changed manifest is
/// registered here first, so the events the worker answers with read back.
/// Ends when `to` closes.
pub fn spawn(label: String, dir: PathBuf, to: Sender<Command>) {
    std::thread::spawn(move || {
        let stamp = |p: &PathBuf| {
            std::fs::metadata(p)
                .ok()
                .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
        };
        let mut last = Folder::read(&dir);
        let mut watched = last.paths(&dir);
        let mut seen: Vec<_> = watched.iter().map(stamp).collect();
        loop {
            std::thread::sleep(POLL);
            let now: Vec<_> = watched.iter().map(stamp).collect();
            if now == seen {
                continue;
            }
            let folder = Folder::read(&dir);
            let paths = folder.paths(&dir);
            // Stamped before the read, so a change made during it is seen
            // next time; files newly included are stamped as they are now.
            seen = if paths == watched {
                now
            } else {
                paths.iter().map(stamp).collect()
            };
            watched = paths;
            // A half-written file reads short; the next change re-reads it.
            let Some(manifest) = &folder.manifest_text else {
                continue;
            };
            if folder.sources.is_empty() {
                continue;
            }
            if folder.sources == last.sources && folder.manifest_text == last.manifest_text {
                continue;
            }
            let changed = folder.manifest_text != last.manifest_text;
            if changed {
                let file = registry::manifest_path(&dir)
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                if let Ok(m) = crate::session::manifest::Manifest::parse(manifest, &file) {
                    registry::register(&label, m, Some(dir.clone()));
                }
            }
            let cmd = Command::Reload {
                kernel: label.clone(),
                sources: folder.sources.clone(),
                manifest: changed.then(|| manifest.clone()),
            };
            last = folder;
            if to.send(cmd).is_err() {
                return;
            }
        }
    });
}

/// A kernel folder as it reads now.
#[derive(Default)]
struct Folder {
    /// None for a folder from before manifests, which holds only attention.cu
    /// and takes the bundled manifest (as `registry::read_manifest` does).
    manifest_path: Option<PathBuf>,
    manifest_text: Option<String>,
    /// The main source, then every header it includes that exists: one that
    /// does not is left to NVRTC's error, which names the include's line.
    sources: Vec<sources::SourceFile>,
    /// Files (the main source or included ones) that could not be read.
    missing: Vec<String>,
}

impl Folder {
    fn read(dir: &Path) -> Folder {
        let (manifest_path, manifest_text, main) = match registry::manifest_path(dir) {
            Ok(path) => {
                let text = std::fs::read_to_string(&path).ok();
                let main = text
                    .as_deref()
                    .and_then(|t| crate::session::manifest::Manifest::parse(t, "").ok())
                    .map(|m| m.source)
                    .unwrap_or_default();
                (Some(path), text, main)
            }
            Err(_) if dir.join("attention.cu").is_file() => (
                None,
                Some(crate::session::manifest::BUNDLED_TOML.to_owned()),
                "attention.cu".to_owned(),
            ),
            Err(_) => return Folder::default(),
        };
        // Leniently: what cannot be read is watched until it can.
        let (sources, unreached) = sources::reach(&main, |name| {
            std::fs::read_to_string(dir.join(name)).map_err(|e| e.to_string())
        });
        let missing = unreached
            .into_iter()
            .filter(|u| !u.outside)
            .map(|u| u.name)
            .collect();
        Folder {
            manifest_path,
            manifest_text,
            sources,
            missing,
        }
    }

    /// What the next poll stamps.
    fn paths(&self, dir: &Path) -> Vec<PathBuf> {
        let files = self.sources.iter().map(|(n, _)| n).chain(&self.missing);
        self.manifest_path
            .iter()
            .cloned()
            .chain(files.map(|n| dir.join(n)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernel_source::program;

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
                sources,
                manifest,
            } => {
                assert_eq!(kernel, "watched");
                assert_eq!(sources, [("attention.cu".into(), "// v2, longer\n".into())]);
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
                sources, manifest, ..
            } => {
                assert_eq!(sources[0].1, "// v2, longer\n");
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
        let e = sources::read_folder(dir.path(), "attention.cu").unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
    }

    /// A header the source includes is watched like the source: editing it
    /// alone reloads, with every file, and changes the source hash; a header
    /// included since the last change is watched from then on.
    #[test]
    fn an_edited_header_becomes_a_reload() {
        use crate::gpu::nvrtc::Builder;
        let dir = folder();
        std::fs::create_dir(dir.path().join("parts")).unwrap();
        std::fs::write(
            dir.path().join("attention.cu"),
            "#include \"parts/a.cuh\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("parts/a.cuh"), "// a1\n").unwrap();
        let id = registry::load_dir(dir.path(), false).unwrap();
        let label = registry::label(id);
        let before = program(id).unwrap();
        assert_eq!(before.headers, [("parts/a.cuh".into(), "// a1\n".into())]);
        let (tx, rx) = std::sync::mpsc::channel();
        spawn(label, dir.path().to_path_buf(), tx);
        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(
            dir.path().join("parts/a.cuh"),
            "// a2, longer\n#include \"b.cuh\"\n",
        )
        .unwrap();
        let sent = match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            Command::Reload {
                sources, manifest, ..
            } => {
                assert!(manifest.is_none());
                sources
            }
            other => panic!("{other:?}"),
        };
        let names: Vec<&str> = sent.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["attention.cu", "parts/a.cuh"],
            "b.cuh does not exist yet"
        );
        let after = crate::gpu::nvrtc::Program::from_files(sent, &before.entry);
        assert_eq!(after.text, before.text);
        assert_ne!(
            Builder::new(after).source_hash(),
            Builder::new(before).source_hash()
        );
        // The new include, written later, is watched.
        std::fs::write(dir.path().join("b.cuh"), "// b\n").unwrap();
        match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            Command::Reload { sources, .. } => {
                assert_eq!(sources.last().unwrap(), &("b.cuh".into(), "// b\n".into()));
            }
            other => panic!("{other:?}"),
        }
    }
}
