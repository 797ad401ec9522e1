//! Which Python a `py:` variant runs on, asked of the interpreter itself in
//! a subprocess (nothing is loaded into attnscope to ask): `$ATTNSCOPE_PYTHON`,
//! else `python3` on PATH.

use std::path::PathBuf;
use std::process::Command;

use serde::Deserialize;

/// What the interpreter says about itself.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Interpreter {
    pub version: String,
    pub executable: String,
    pub prefix: String,
    pub base_prefix: String,
    #[serde(default)]
    pub path: Vec<String>,
    /// sysconfig's LIBDIR: where the shared libpython lives.
    #[serde(default)]
    pub libdir: Option<String>,
    /// INSTSONAME (libpython3.11.so.1.0), else LDLIBRARY.
    #[serde(default)]
    pub soname: Option<String>,
    #[serde(default)]
    pub shared: bool,
}

/// One `python3 -c` call: everything printed as one JSON object.
const ASK: &str = r#"import json, sys, sysconfig
v = sysconfig.get_config_var
print(json.dumps({
    "version": sys.version.split()[0], "executable": sys.executable,
    "prefix": sys.prefix, "base_prefix": sys.base_prefix, "path": sys.path,
    "libdir": v("LIBDIR"), "soname": v("INSTSONAME") or v("LDLIBRARY"),
    "shared": bool(v("Py_ENABLE_SHARED")),
}))"#;

/// What to do when the interpreter has no shared libpython.
pub const SHARED_HINT: &str = "attnscope loads libpython into its GPU worker: use a Python built with --enable-shared (pyenv with PYTHON_CONFIGURE_OPTS=--enable-shared, conda, uv) and point ATTNSCOPE_PYTHON at it";

/// The interpreter's command: `$ATTNSCOPE_PYTHON` or `python3`.
pub fn command() -> String {
    std::env::var("ATTNSCOPE_PYTHON")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// Asks the interpreter; one line on why it cannot be used otherwise.
pub fn interpreter() -> Result<Interpreter, String> {
    let cmd = command();
    let out = Command::new(&cmd)
        .arg("-c")
        .arg(ASK)
        .output()
        .map_err(|e| {
            format!(
                "no Python: could not run '{cmd}' ({e}); install Python 3 or set ATTNSCOPE_PYTHON"
            )
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("").trim();
        return Err(format!("'{cmd}' failed to describe itself: {last}"));
    }
    parse(&String::from_utf8_lossy(&out.stdout)).map_err(|e| format!("'{cmd}': {e}"))
}

/// The interpreter's answer, read.
pub fn parse(text: &str) -> Result<Interpreter, String> {
    serde_json::from_str(text.trim()).map_err(|e| format!("unreadable self-description ({e})"))
}

impl Interpreter {
    /// The shared libpython to load, or why there is none.
    pub fn libpython(&self) -> Result<PathBuf, String> {
        let no = |why: &str| {
            format!(
                "Python {} at {} {why}: {SHARED_HINT}",
                self.version, self.executable
            )
        };
        if !self.shared {
            return Err(no("was built without a shared libpython"));
        }
        let (Some(dir), Some(name)) = (&self.libdir, &self.soname) else {
            return Err(no("does not say where its libpython is"));
        };
        let path = PathBuf::from(dir).join(name);
        if !path.is_file() {
            return Err(no(&format!("names {} but it is not there", path.display())));
        }
        Ok(path)
    }

    /// "python 3.11.7 (/root/.pyenv/versions/3.11.7/bin/python3)".
    pub fn describe(&self) -> String {
        format!("python {} ({})", self.version, self.executable)
    }
}
