//! A kernel folder's sources: the main source its manifest names and every
//! header it reaches by `#include "…"`. Here, below gpu/ and worker/, because
//! the hello to a remote worker carries them as well as the builder.
//!
//! A quoted include names a file by its path from the kernel folder (not from
//! the including file), so one name means one file wherever it is written and
//! NVRTC can take the headers in memory under the names as written: the
//! bundled kernel and a remote worker have no folder to search. Angle-bracket
//! includes are the toolkit's. Every quoted include is followed, whatever
//! `#if` it sits in: a folder is read without knowing the defines.

use std::path::{Component, Path};

/// A source file: its folder-relative name and its text.
pub type SourceFile = (String, String);

/// The quoted includes of a text, each with its 1-based line.
pub fn quoted_includes(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        if let Some((name, _)) = rest.split_once('"') {
            out.push((i + 1, name.to_string()));
        }
    }
    out
}

/// An include that could not be followed.
#[derive(Clone, Debug, PartialEq)]
pub struct Unreached {
    /// The including file and the include's line.
    pub from: String,
    pub line: usize,
    pub name: String,
    /// Why: outside the folder, or the read's error.
    pub outside: bool,
    pub error: String,
}

/// The main source and every header it reaches that `read` gives, main
/// first, then each header in the order its first include is met; and the
/// includes that could not be followed. A main source `read` refuses
/// leaves the list empty and is the first unreached (line 0).
pub fn reach(
    main: &str,
    read: impl Fn(&str) -> Result<String, String>,
) -> (Vec<SourceFile>, Vec<Unreached>) {
    let mut unreached = Vec::new();
    let mut files: Vec<SourceFile> = Vec::new();
    match read(main) {
        Ok(text) => files.push((main.to_string(), text)),
        Err(error) => unreached.push(Unreached {
            from: String::new(),
            line: 0,
            name: main.to_string(),
            outside: false,
            error,
        }),
    }
    // Breadth first: NVRTC takes headers by name, so the order only has to
    // be the same every time (it feeds the source hash).
    let mut next = 0;
    while next < files.len() {
        let from = files[next].0.clone();
        let includes = quoted_includes(&files[next].1);
        next += 1;
        for (line, name) in includes {
            let seen = files.iter().any(|(n, _)| *n == name)
                || unreached.iter().any(|u: &Unreached| u.name == name);
            if seen {
                continue;
            }
            let outside = !inside_folder(&name);
            match if outside {
                Err(String::new())
            } else {
                read(&name)
            } {
                Ok(text) => files.push((name, text)),
                Err(error) => unreached.push(Unreached {
                    from: from.clone(),
                    line,
                    name,
                    outside,
                    error,
                }),
            }
        }
    }
    (files, unreached)
}

/// The main source and every header it reaches (as `reach` lists them), or
/// the first include that cannot be followed: its file, line and `folder`
/// (how the caller names the folder).
pub fn follow(
    main: &str,
    folder: &str,
    read: impl Fn(&str) -> Result<String, String>,
) -> Result<Vec<SourceFile>, String> {
    let (files, unreached) = reach(main, read);
    let Some(u) = unreached.first() else {
        return Ok(files);
    };
    let (from, line, name) = (&u.from, u.line, &u.name);
    Err(if u.line == 0 {
        format!("kernel folder {folder}: {}", u.error)
    } else if u.outside {
        format!(
            "{from}:{line}: #include \"{name}\" is outside the kernel folder {folder} (quoted includes name a file by its path from the folder)"
        )
    } else {
        format!(
            "{from}:{line}: #include \"{name}\": no such file in the kernel folder {folder} ({}; quoted includes name a file by its path from the folder; a toolkit header goes in angle brackets, #include <{name}>)",
            u.error
        )
    })
}

/// DIR's main source and the headers it reaches.
pub fn read_folder(dir: &Path, main: &str) -> Result<Vec<SourceFile>, String> {
    follow(main, &dir.display().to_string(), |name| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    })
}

/// A relative path of plain components: it stays in the folder.
pub fn inside_folder(name: &str) -> bool {
    let p = Path::new(name);
    !name.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_includes_only() {
        let text = "#include <cuda_fp16.h>\n  #  include \"parts/a.cuh\" // why\n// #include \"no.cuh\"\n#include\"b.cuh\"\n";
        assert_eq!(
            quoted_includes(text),
            vec![(2, "parts/a.cuh".to_string()), (4, "b.cuh".to_string())]
        );
    }

    #[test]
    fn a_folder_is_followed_once_per_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("parts")).unwrap();
        std::fs::write(
            dir.path().join("k.cu"),
            "#include \"parts/a.cuh\"\n#include \"b.cuh\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("parts/a.cuh"), "#include \"b.cuh\"\n").unwrap();
        std::fs::write(dir.path().join("b.cuh"), "#include \"parts/a.cuh\"\n").unwrap();
        let files = read_folder(dir.path(), "k.cu").unwrap();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["k.cu", "parts/a.cuh", "b.cuh"]);
    }

    #[test]
    fn a_missing_or_outside_include_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.cu"), "// x\n#include \"gone.cuh\"\n").unwrap();
        let e = read_folder(dir.path(), "k.cu").unwrap_err();
        assert!(
            e.starts_with("k.cu:2: #include \"gone.cuh\": no such file in the kernel folder")
                && e.contains(&dir.path().display().to_string()),
            "{e}"
        );
        std::fs::write(dir.path().join("k.cu"), "#include \"../up.cuh\"\n").unwrap();
        let e = read_folder(dir.path(), "k.cu").unwrap_err();
        assert!(
            e.contains("k.cu:1") && e.contains("outside the kernel folder"),
            "{e}"
        );
    }
}
