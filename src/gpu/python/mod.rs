//! Python variants (`py:MODULE:FUNCTION`, `py:NAME`): a PyTorch callable run
//! inside the GPU worker's process on the engine's own buffers and stream,
//! so the same timer sees its kernels. libpython is loaded on first use
//! only (docs/usage.md, "Python variants", says why).

use std::sync::OnceLock;

use serde::Deserialize;

pub mod discover;
mod libpython;
pub mod survey;

use libpython::{Arg, Python};

pub use discover::Interpreter;

/// The bridge, executed from attnscope's own copy.
const BRIDGE: &str = include_str!("../../../python/attnscope_bridge.py");
/// The bundled adapters (`py:sdpa_flash` …), imported from this copy.
pub const ADAPTERS: &str = include_str!("../../../python/attnscope_adapters.py");

/// The problem a function is asked to run, as `attnscope_supports` gets it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Problem {
    pub b: u32,
    pub hq: u32,
    pub hkv: u32,
    pub sq: u32,
    pub sk: u32,
    pub d: u32,
    pub dtype: &'static str,
    pub causal: bool,
}

/// A function found and asked about a problem.
#[derive(Clone, Debug, Deserialize)]
pub struct Resolved {
    pub handle: u64,
    /// Why it does not run the problem (its `attnscope_supports`, or a
    /// causal shape for a function without `causal`).
    pub refused: Option<String>,
    /// The file it was defined in.
    pub file: String,
    /// sha256 of its source (or of its file), "" when unreadable.
    pub source_hash: String,
}

/// The versions a Python variant ran with.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct Versions {
    pub python: String,
    pub torch: String,
    pub triton: Option<String>,
}

/// The interpreter, loaded into this process.
pub struct Runtime {
    python: Python,
    pub interpreter: Interpreter,
}

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The interpreter, loaded on first use; the same answer every time after
/// (an interpreter is initialised once per process).
pub fn runtime() -> Result<&'static Runtime, String> {
    RUNTIME.get_or_init(start).as_ref().map_err(Clone::clone)
}

fn start() -> Result<Runtime, String> {
    let interpreter = discover::interpreter()?;
    let lib = interpreter.libpython()?;
    let python = Python::start(&lib, &interpreter.base_prefix, "attnscope_bridge", BRIDGE)
        .map_err(|e| format!("{}: {e}", interpreter.describe()))?;
    let rt = Runtime {
        python,
        interpreter,
    };
    let info = serde_json::json!({
        "path": rt.interpreter.path,
        "executable": rt.interpreter.executable,
    });
    rt.ask::<String>("setup", &[Arg::Str(&info.to_string())])?;
    rt.ask::<bool>("set_adapters", &[Arg::Str(ADAPTERS)])?;
    Ok(rt)
}

/// The bridge's answer: `{"ok": …}` or `{"error": "one line"}`.
#[derive(Deserialize)]
struct Answer<T> {
    ok: Option<T>,
    error: Option<String>,
}

/// Reads a bridge answer.
pub fn answer<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let a: Answer<T> = serde_json::from_str(text)
        .map_err(|e| format!("unreadable answer from the Python bridge ({e}): {text}"))?;
    match (a.ok, a.error) {
        (_, Some(e)) => Err(e),
        (Some(v), None) => Ok(v),
        (None, None) => Err(format!("empty answer from the Python bridge: {text}")),
    }
}

impl Runtime {
    fn ask<T: serde::de::DeserializeOwned>(&self, f: &str, args: &[Arg]) -> Result<T, String> {
        answer(&self.python.call(f, args)?)
    }

    /// Imports `spec`'s function (`MODULE:FUNCTION`, `/path/file.py:FUNCTION`
    /// or a bundled adapter's `NAME`) and asks whether it runs `problem`.
    /// Needs no torch.
    pub fn resolve(&self, spec: &str, problem: &Problem) -> Result<Resolved, String> {
        let p = serde_json::to_string(problem).map_err(|e| e.to_string())?;
        self.ask("resolve", &[Arg::Str(spec), Arg::Str(&p)])
    }

    /// Python's, torch's and triton's versions; Err when torch is missing.
    pub fn versions(&self) -> Result<Versions, String> {
        self.ask("versions", &[])
    }

    /// One call of a resolved function on the buffers at `ptrs` (Q, K, V,
    /// O) under `stream`; `check` copies its result into O.
    pub fn call(
        &self,
        handle: u64,
        ptrs: [u64; 4],
        stream: u64,
        device: usize,
        check: bool,
    ) -> Result<(), String> {
        let [q, k, v, o] = ptrs.map(Arg::Int);
        let args = [
            Arg::Int(handle),
            q,
            k,
            v,
            o,
            Arg::Int(stream),
            Arg::Int(device as u64),
            Arg::Bool(check),
        ];
        match self.python.call("call", &args)? {
            e if e.is_empty() => Ok(()),
            e => Err(e),
        }
    }
}
