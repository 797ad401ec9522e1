//! doctor's Python lines: which interpreter `py:` variants would load, its
//! shared libpython, torch, triton and the bundled adapters. Everything is
//! asked in subprocesses; nothing is loaded into doctor.

use crate::gpu::python::{discover, survey};

/// Prints the Python section; Python is optional, so nothing here is a
/// problem for live mode.
pub fn report() {
    let interp = match discover::interpreter() {
        Ok(i) => i,
        Err(e) => {
            println!("  --   {e}; py: variants are unavailable, everything else works");
            return;
        }
    };
    match interp.libpython() {
        Ok(lib) => println!("  ok   {}, libpython {}", interp.describe(), lib.display()),
        Err(e) => println!("  --   {e}; py: variants are unavailable"),
    }
    let s = match survey::survey(&interp.executable) {
        Ok(s) => s,
        Err(e) => {
            println!("  --   Python survey failed: {e}");
            return;
        }
    };
    match (&s.torch, &s.torch_error) {
        (Some(t), _) => println!(
            "  {}   torch {t}, CUDA {}; triton {}",
            if s.cuda { "ok" } else { "--" },
            if s.cuda { "available" } else { "not available" },
            s.triton.as_deref().unwrap_or("not installed")
        ),
        (None, e) => println!(
            "  --   torch is not importable ({}): py: variants need it",
            e.as_deref().unwrap_or("?")
        ),
    }
    for (name, usable, detail) in s.adapters.iter().flatten() {
        let mark = if *usable { "ok  " } else { "--  " };
        println!("  {mark} py:{name}: {detail}");
    }
    if let Some(e) = &s.adapters_error {
        println!("  --   bundled adapters failed to load: {e}");
    }
}
