//! What `doctor` says about Python, asked in a subprocess so that doctor
//! never loads an interpreter into itself: torch and CUDA, triton, and which
//! bundled adapters are usable (the adapters' own `doctor()`, when they
//! have one).

use std::io::Write;
use std::process::{Command, Stdio};

use serde::Deserialize;

/// Runs with the adapters' source on stdin; prints one JSON object.
const SURVEY: &str = r#"import json, sys, types
out = {"torch": None, "cuda": False, "torch_error": None, "triton": None, "adapters": None}
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda"] = bool(torch.cuda.is_available())
except Exception as e:
    out["torch_error"] = f"{type(e).__name__}: {e}"
try:
    import triton
    out["triton"] = triton.__version__
except Exception:
    pass
try:
    m = types.ModuleType("attnscope_adapters")
    sys.modules[m.__name__] = m
    exec(compile(sys.stdin.read(), "<attnscope>/attnscope_adapters.py", "exec"), m.__dict__)
    if callable(getattr(m, "doctor", None)):
        out["adapters"] = [[str(n), bool(u), str(d)] for n, u, d in m.doctor()]
except Exception as e:
    out["adapters_error"] = f"{type(e).__name__}: {e}"
print(json.dumps(out))"#;

/// The survey's answer.
#[derive(Debug, Default, Deserialize)]
pub struct Survey {
    pub torch: Option<String>,
    pub cuda: bool,
    pub torch_error: Option<String>,
    pub triton: Option<String>,
    /// (name, usable, detail) per bundled adapter; None when the adapters
    /// module has no `doctor()`.
    pub adapters: Option<Vec<(String, bool, String)>>,
    #[serde(default)]
    pub adapters_error: Option<String>,
}

/// Asks the interpreter `command` (as `discover::command()` names it).
pub fn survey(command: &str) -> Result<Survey, String> {
    let mut child = Command::new(command)
        .arg("-c")
        .arg(SURVEY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run '{command}' ({e})"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that exits early closes its end: its output says why.
        let _ = stdin.write_all(super::ADAPTERS.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().last().unwrap_or("failed").trim().to_string());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).map_err(|e| format!("unreadable survey ({e})"))
}
