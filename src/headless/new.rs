//! `attnscope new DIR`: a starter kernel folder (a small scalar kernel with
//! one toggle and its manifest), and the command that opens it live.

use std::path::Path;

use super::fail;
use crate::cli::{NewArgs, exit};

const STARTER_CU: &str = include_str!("../../assets/starter/kernel.cu");
const STARTER_TOML: &str = include_str!("../../assets/starter/kernel.toml");

/// The kernel's name: `--name`, else the folder's, as letters, digits, _ and -.
fn kernel_name(args: &NewArgs) -> Result<String, String> {
    let raw = match &args.name {
        Some(n) => n.clone(),
        None => args
            .dir
            .canonicalize()
            .ok()
            .or_else(|| Some(std::env::current_dir().ok()?.join(&args.dir)))
            .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
            .unwrap_or_default(),
    };
    let name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name == "cudnn" || name.chars().all(|c| c == '_') {
        return Err(format!(
            "'{raw}' does not make a kernel name: give --name (letters, digits, _ or -)"
        ));
    }
    Ok(name)
}

/// Writes the two files into `dir` (created; it must be new or empty).
pub fn write_starter(dir: &Path, name: &str) -> Result<Vec<std::path::PathBuf>, String> {
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if entries.next().is_some() {
            return Err(format!(
                "{} exists and is not empty: give a new folder (nothing was written)",
                dir.display()
            ));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let toml = STARTER_TOML.replace("{{NAME}}", name);
    // What is written must load: a starter that does not is a bug here.
    crate::session::manifest::Manifest::parse(&toml, "starter manifest")
        .map_err(|e| format!("the starter manifest does not load (a bug): {e}"))?;
    let files = [
        (dir.join(format!("{name}.cu")), STARTER_CU.to_string()),
        (dir.join(format!("{name}.toml")), toml),
    ];
    for (path, text) in &files {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(files.into_iter().map(|(p, _)| p).collect())
}

pub fn new_kernel(args: NewArgs) -> i32 {
    let name = match kernel_name(&args) {
        Ok(n) => n,
        Err(e) => return fail(exit::USAGE, e),
    };
    let files = match write_starter(&args.dir, &name) {
        Ok(f) => f,
        Err(e) => return fail(exit::USAGE, e),
    };
    for f in &files {
        println!("wrote {}", f.display());
    }
    // Pasted as printed: a folder named with spaces or quotes stays one word.
    let dir = crate::cli::argv::shell_word(&args.dir.to_string_lossy());
    println!();
    println!(
        "a scalar kernel, one thread per query row; key e toggles USE_EXP2, t cycles rows/block."
    );
    println!("open it live (saving either file rebuilds it):");
    println!("  attnscope --kernels {dir}");
    println!("headless:");
    println!("  attnscope selftest --kernels {dir} --quick");
    println!("  attnscope bench --kernels {dir} --variants all");
    println!("against the bundled kernel:");
    println!("  attnscope ab --kernels {dir} --a bundled:wmma+pv+async --b exp2");
    println!("no GPU here? compile it with NVRTC and read its PTXAS report:");
    println!("  {}", crate::gpu::libs::PIP_NVRTC);
    println!("  attnscope build --kernels {dir}");
    println!("the kernel ABI and every manifest field: docs/kernel-abi.md");
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_loads_and_refuses_to_overwrite() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("mine");
        let files = write_starter(&dir, "mine").unwrap();
        assert_eq!(files.len(), 2);
        let m = crate::session::manifest::registry::read_manifest(&dir).unwrap();
        assert_eq!((m.name.as_str(), m.source.as_str()), ("mine", "mine.cu"));
        assert_eq!(m.toggles[0].key, Some('e'));
        let e = write_starter(&dir, "mine").unwrap_err();
        assert!(
            e.contains("not empty") && e.contains("nothing was written"),
            "{e}"
        );
        let named = NewArgs {
            dir: tmp.path().join("my kernel!"),
            name: None,
        };
        assert_eq!(kernel_name(&named).unwrap(), "my_kernel_");
        let bad = NewArgs {
            dir: tmp.path().join("x"),
            name: Some("cudnn".into()),
        };
        assert!(kernel_name(&bad).is_err());
    }
}
