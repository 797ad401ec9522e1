//! The map in src/lib.rs is the code: its block of arrows is read here and
//! compared with every `crate::<room>` path under src/. An arrow drawn there
//! that no file has fails; an import that is not drawn fails; an arrow that
//! points up the list (a cycle in the making) fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Map = BTreeMap<String, BTreeSet<String>>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

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

/// The drawn map: the rooms in order, top first, each with what it imports.
fn drawn(lib_rs: &str) -> (Vec<String>, Map) {
    let block: Vec<&str> = lib_rs
        .lines()
        .skip_while(|l| l.trim() != "//! ```text")
        .skip(1)
        .take_while(|l| l.trim() != "//! ```")
        .collect();
    assert!(
        !block.is_empty(),
        "src/lib.rs has no ```text block of rooms"
    );
    let mut order = Vec::new();
    let mut map = Map::new();
    for line in block {
        let line = line.trim_start_matches("//!").trim();
        let (room, arrows) = line.split_once("──▶").unwrap_or((line, ""));
        let room = room.trim().to_string();
        let to: BTreeSet<String> = arrows.split_whitespace().map(String::from).collect();
        order.push(room.clone());
        map.insert(room, to);
    }
    (order, map)
}

/// The room a file under `src` belongs to: its first folder, or its stem.
fn room_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// Every `crate::<room>` named in code (not comments), with its line.
fn named_rooms(text: &str, rooms: &BTreeSet<String>) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = line.split("//").next().unwrap_or("");
        while let Some(at) = rest.find("crate::") {
            let tail = &rest[at + "crate::".len()..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if rooms.contains(&name) {
                found.push((i + 1, name));
            }
            rest = tail;
        }
    }
    found
}

/// The imports the code has, room to rooms, with one place each is made.
fn actual(src: &Path, rooms: &BTreeSet<String>) -> BTreeMap<(String, String), String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut out = BTreeMap::new();
    for file in files {
        let room = room_of(src, &file);
        if !rooms.contains(&room) {
            continue; // lib.rs, main.rs
        }
        let text = std::fs::read_to_string(&file).expect("readable source");
        for (line, name) in named_rooms(&text, rooms) {
            if name != room {
                out.entry((room.clone(), name))
                    .or_insert_with(|| format!("{}:{line}", file.display()));
            }
        }
    }
    out
}

/// What disagrees between the map drawn in `lib_rs` and the code in `src`.
fn disagreements(lib_rs: &str, src: &Path) -> Vec<String> {
    let (order, map) = drawn(lib_rs);
    let rooms: BTreeSet<String> = order.iter().cloned().collect();
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(src).expect("src") {
        let path = entry.expect("entry").path();
        let name = room_of(src, &path);
        if path.is_dir() && !rooms.contains(&name) {
            bad.push(format!("room {name}/ is not on the map"));
        }
    }
    let code = actual(src, &rooms);
    for ((from, to), at) in &code {
        if !map[from].contains(to) {
            bad.push(format!(
                "{at}: {from} imports {to}, an arrow the map does not draw"
            ));
        }
    }
    for (from, tos) in &map {
        for to in tos {
            if !rooms.contains(to) {
                bad.push(format!(
                    "the map's {from} points at {to}, which is not a room"
                ));
            } else if !code.contains_key(&(from.clone(), to.clone())) {
                bad.push(format!(
                    "the map draws {from} ──▶ {to}, which no file imports"
                ));
            }
            let pos = |r: &String| order.iter().position(|o| o == r);
            if pos(to) <= pos(from) {
                bad.push(format!("the map's {from} ──▶ {to} points up the list"));
            }
        }
    }
    bad
}

#[test]
fn the_map_in_lib_rs_is_the_code() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let bad = disagreements(&lib, &src());
    assert!(
        bad.is_empty(),
        "src/lib.rs's map and the imports disagree:\n{}",
        bad.join("\n")
    );
}

/// The check itself must be able to fail, each way.
#[test]
fn the_map_check_sees_each_kind_of_disagreement() {
    let dir = tempfile::tempdir().expect("temp dir");
    let room = |name: &str, text: &str| {
        std::fs::create_dir_all(dir.path().join(name)).expect("room dir");
        std::fs::write(dir.path().join(name).join("mod.rs"), text).expect("write");
    };
    room(
        "ui",
        "use crate::gpu::X;\n// crate::cli in a comment is no import\n",
    );
    room("gpu", "use crate::session::Y;\n");
    room("session", "");
    let map = |arrows: &str| format!("//! ```text\n{arrows}//! ```\n");
    let good = map("//! ui ──▶ gpu\n//! gpu ──▶ session\n//! session\n");
    assert_eq!(disagreements(&good, dir.path()), Vec::<String>::new());

    let missing = map("//! ui\n//! gpu ──▶ session\n//! session\n");
    let bad = disagreements(&missing, dir.path());
    assert!(
        bad.len() == 1 && bad[0].contains("ui imports gpu, an arrow the map does not draw"),
        "{bad:?}"
    );

    let extra = map("//! ui ──▶ gpu session\n//! gpu ──▶ session\n//! session\n");
    let bad = disagreements(&extra, dir.path());
    assert!(
        bad.len() == 1 && bad[0].contains("ui ──▶ session, which no file imports"),
        "{bad:?}"
    );

    room("session", "use crate::ui::Z;\n");
    let up = map("//! ui ──▶ gpu\n//! gpu ──▶ session\n//! session ──▶ ui\n");
    let bad = disagreements(&up, dir.path());
    assert!(
        bad.len() == 1 && bad[0].contains("session ──▶ ui points up the list"),
        "{bad:?}"
    );

    room("new_room", "");
    let bad = disagreements(&good, dir.path());
    assert!(
        bad.iter()
            .any(|b| b.contains("new_room/ is not on the map")),
        "{bad:?}"
    );
}

/// model/ is the fold: what it computes depends on the events alone.
#[test]
fn the_fold_touches_no_files_clocks_threads_or_processes() {
    let mut files = Vec::new();
    rust_files(&src().join("model"), &mut files);
    let mut bad = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for what in [
                "std::fs",
                "std::thread",
                "std::process",
                "std::net",
                "Instant",
                "SystemTime",
                "std::env",
            ] {
                if code.contains(what) {
                    bad.push(format!("{}:{}: {what}", file.display(), i + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "model/ must stay a pure fold:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_source_file_is_too_long() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
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
