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

/// A function longer than this no longer reads in one screen or two.
const LONGEST_FUNCTION: usize = 120;

/// Whether a trimmed line opens an `fn` item, and its name if so.
fn fn_name(trimmed: &str) -> Option<&str> {
    let mut rest = trimmed;
    loop {
        let before = rest;
        for prefix in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
            "extern \"C\" ",
        ] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        if rest == before {
            break;
        }
    }
    let name = rest.strip_prefix("fn ")?;
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    Some(&name[..end])
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The index of the last line of the item that opens at `start`: the line
/// that is only `}` at the item's indent, or the item's own line when it
/// ends there (`fn f();`, `mod tests;`, a one-line body).
fn item_end(lines: &[&str], start: usize) -> usize {
    let closing = format!("{}}}", indent(lines[start]));
    for (i, line) in lines.iter().enumerate().skip(start) {
        let code = line.split("//").next().unwrap_or("").trim_end();
        if code.contains('{') {
            if code.ends_with('}') && code.matches('{').count() == code.matches('}').count() {
                return i;
            }
            break;
        }
        if code.ends_with(';') {
            return i;
        }
    }
    lines
        .iter()
        .enumerate()
        .skip(start + 1)
        .find(|(_, l)| l.trim_end() == closing)
        .map_or(lines.len() - 1, |(i, _)| i)
}

/// `(line, name, length)` of every function in `text` longer than
/// LONGEST_FUNCTION lines, leaving out items under `#[cfg(test)]`.
fn long_functions_in(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim();
        if trimmed == "#[cfg(test)]" {
            let item = (i + 1..lines.len()).find(|&j| !lines[j].trim().starts_with("#["));
            i = item.map_or(lines.len(), |j| item_end(&lines, j) + 1);
            continue;
        }
        if let Some(name) = fn_name(trimmed) {
            let n = item_end(&lines, i) - i + 1;
            if n > LONGEST_FUNCTION {
                long.push((i + 1, name.to_string(), n));
            }
        }
        i += 1;
    }
    long
}

/// Every function over LONGEST_FUNCTION lines in the .rs files under `root`,
/// as `file:line name (N lines)`; files named tests.rs or under a tests/
/// folder hold tests and are left out.
fn long_functions(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    files.sort();
    let mut long = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).expect("under root");
        if rel.file_name().is_some_and(|n| n == "tests.rs")
            || rel
                .parent()
                .is_some_and(|p| p.components().any(|c| c.as_os_str() == "tests"))
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable");
        for (line, name, n) in long_functions_in(&text) {
            long.push(format!("{}:{line} {name} ({n} lines)", file.display()));
        }
    }
    long
}

#[test]
fn no_function_is_longer_than_120_lines() {
    let long = long_functions(&src());
    assert!(
        long.is_empty(),
        "split these into helpers that each do one thing:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_length_check_sees_a_long_function_and_only_that() {
    fn function(name: &str, lines: usize, indent: &str) -> String {
        let mut text = format!("{indent}fn {name}() {{\n");
        for i in 0..lines - 2 {
            text.push_str(&format!("{indent}    let _x{i} = {i};\n"));
        }
        text.push_str(&format!("{indent}}}\n"));
        text
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let mut text = String::from("trait T {\n    fn declared(&self);\n}\n\n");
    text.push_str(&function("long_one", 130, ""));
    text.push_str("\npub fn one_line() -> u8 { 1 }\n\n");
    text.push_str(&function("short_one", 100, ""));
    text.push_str("\n#[cfg(test)]\nmod tests {\n");
    text.push_str(&function("long_test", 200, "    "));
    text.push_str("}\n");
    std::fs::write(root.join("a.rs"), &text).expect("write a.rs");
    std::fs::create_dir(root.join("tests")).expect("mkdir");
    std::fs::write(
        root.join("tests").join("b.rs"),
        function("in_tests", 200, ""),
    )
    .expect("write b.rs");
    std::fs::write(root.join("tests.rs"), function("in_tests_rs", 200, ""))
        .expect("write tests.rs");

    let long = long_functions(root);
    let a = root.join("a.rs");
    assert_eq!(
        long,
        vec![format!("{}:5 long_one (130 lines)", a.display())],
        "{text}"
    );
}
