//! The rooms' imports point one way (src/lib.rs draws the arrows). A source
//! scan: any `crate::<room>` that a room may not name fails the test with the
//! file and line.

use std::path::{Path, PathBuf};

/// For each room, the rooms it may name besides itself.
const ALLOWED: &[(&str, &[&str])] = &[
    ("session", &["exit"]),
    ("metrics", &["session", "exit"]),
    ("model", &["metrics", "session", "exit"]),
    ("gpu", &["metrics", "session", "exit", "cache_dir"]),
    ("ui", &["model", "metrics", "session", "exit"]),
    ("export", &["model", "metrics", "session", "exit"]),
    (
        "headless",
        &[
            "gpu",
            "model",
            "metrics",
            "session",
            "exit",
            "cli",
            "cache_dir",
        ],
    ),
];

const ROOMS: &[&str] = &[
    "app",
    "cache_dir",
    "cli",
    "exit",
    "export",
    "gpu",
    "headless",
    "metrics",
    "model",
    "session",
    "ui",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::<room>` named in `text`, with its line number.
fn named_rooms(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let tail = &rest[at + "crate::".len()..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if ROOMS.contains(&name.as_str()) {
                found.push((i + 1, name));
            }
            rest = tail;
        }
    }
    found
}

fn violations(src: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    for (room, allowed) in ALLOWED {
        let mut files = Vec::new();
        rust_files(&src.join(room), &mut files);
        assert!(!files.is_empty(), "room {room} has no files");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            for (line, name) in named_rooms(&text) {
                if name != *room && !allowed.contains(&name.as_str()) {
                    bad.push(format!(
                        "{}:{line}: {room}/ imports crate::{name}",
                        file.display()
                    ));
                }
            }
        }
    }
    bad
}

#[test]
fn imports_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src);
    assert!(
        bad.is_empty(),
        "imports against the arrows:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scan_sees_a_wrong_import() {
    // The check itself must be able to fail: a gpu/ file naming the UI.
    let dir = tempfile::tempdir().expect("temp dir");
    for (room, _) in ALLOWED {
        std::fs::create_dir_all(dir.path().join(room)).expect("room dir");
        std::fs::write(dir.path().join(room).join("mod.rs"), "// empty\n").expect("write");
    }
    std::fs::write(
        dir.path().join("gpu/live.rs"),
        "use crate::session::Event;\nuse crate::ui::app::UiMsg; // wrong way\n// crate::cli in a comment is fine\n",
    )
    .expect("write");
    let bad = violations(dir.path());
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].ends_with("gpu/live.rs:2: gpu/ imports crate::ui"),
        "{bad:?}"
    );
}

#[test]
fn no_source_file_is_too_long() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).ok()?.lines().count();
            (n > 750).then(|| format!("{} has {n} lines", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these by what they hold:\n{}",
        long.join("\n")
    );
}
