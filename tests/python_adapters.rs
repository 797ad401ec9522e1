//! The bundled adapters module (python/attnscope_adapters.py) as far as it
//! goes without torch: it imports with the standard library alone, doctor()
//! names every adapter and why it is unusable, and the Triton adapter's
//! memory of its autotuned tiles (attnscope's cache folder) round-trips,
//! survives a corrupt file and is skipped with no cache folder. Runs the
//! machine's python3; where there is none it prints why and passes, unless
//! ATTNSCOPE_REQUIRE_PYTHON=1 (CI).

use std::process::Command;

fn python(script: &str, env: &[(&str, &str)], clear_home: bool) -> Option<(bool, String)> {
    let mut cmd = Command::new("python3");
    cmd.arg("-c")
        .arg(script)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if clear_home {
        cmd.env_remove("HOME").env_remove("XDG_CACHE_HOME");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    match cmd.output() {
        Ok(out) => Some((
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )),
        Err(e) => {
            assert!(
                std::env::var_os("ATTNSCOPE_REQUIRE_PYTHON").is_none(),
                "python3 is required here: {e}"
            );
            eprintln!("SKIPPED: no python3 ({e})");
            None
        }
    }
}

const IMPORT: &str = "import sys; sys.path.insert(0, 'python'); import attnscope_adapters as a\n";

#[test]
fn doctor_names_every_adapter_without_torch() {
    let script = format!(
        "{IMPORT}import importlib.util\n\
         if importlib.util.find_spec('torch'): print('torch present'); sys.exit(0)\n\
         rows = a.doctor()\n\
         assert sorted(r[0] for r in rows) == sorted(a.ADAPTERS), rows\n\
         assert all(not ok and 'torch' in why for _, ok, why in rows), rows\n\
         print('ok', len(rows))"
    );
    let Some((ok, out)) = python(&script, &[], false) else {
        return;
    };
    assert!(ok, "{out}");
    assert!(
        out.contains("ok 8") || out.contains("torch present"),
        "{out}"
    );
}

#[test]
fn the_triton_adapters_picks_are_kept_per_gpu_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().to_str().unwrap();
    let script = format!(
        "{IMPORT}import json, os\n\
         p = a._triton_choices_path()\n\
         assert p == os.path.join(os.environ['XDG_CACHE_HOME'], 'attnscope', 'triton_tutorial.json'), p\n\
         assert a._triton_choices() == {{}}\n\
         a._triton_remember('H200|bfloat16|sq512|sk512|d64|g1|plain', [64, 64, 4, 4])\n\
         a._triton_remember('H200|float16|sq1|sk4096|d128|g4|causal', [32, 64, 3, 4])\n\
         got = a._triton_choices()\n\
         assert got['H200|bfloat16|sq512|sk512|d64|g1|plain'] == [64, 64, 4, 4], got\n\
         assert len(got) == 2, got\n\
         open(p, 'w').write('{{not json')\n\
         assert a._triton_choices() == {{}}\n\
         a._triton_remember('k', [128, 64, 3, 4])\n\
         assert a._triton_choices() == {{'k': [128, 64, 3, 4]}}\n\
         print('ok')"
    );
    let Some((ok, out)) = python(&script, &[("XDG_CACHE_HOME", cache)], false) else {
        return;
    };
    assert!(ok && out.contains("ok"), "{out}");
    // No cache folder at all: nothing is kept, nothing fails.
    let script = format!(
        "{IMPORT}assert a._triton_choices_path() is None\n\
         a._triton_remember('k', [64, 64, 4, 4])\n\
         assert a._triton_choices() == {{}}\n\
         print('ok')"
    );
    let Some((ok, out)) = python(&script, &[], true) else {
        return;
    };
    assert!(ok && out.contains("ok"), "{out}");
}

#[test]
fn flex_masks_short_grouped_queries_in_one_block_flex_decoding_can_tile() {
    // 100 and 77 queries of 4-head groups (selftest's 1,4/1,100/1000 and 2,8/2,77/4097) leave
    // torch 2.11's flex decoding no tile with the default 128-row block; long prompts keep 128.
    let script = format!(
        "{IMPORT}\
         cases = [((100, 4), 512), ((77, 4), 512), ((17, 1), 128), ((16, 8), 128), ((3, 8), 128), ((333, 4), 128)]\n\
         for (sq, g), want in cases:\n\
         \x20   got = a._flex_q_block(sq, g)\n\
         \x20   assert got == want and got >= 16, (sq, g, got, want)\n\
         print('ok')"
    );
    let Some((ok, out)) = python(&script, &[], false) else {
        return;
    };
    assert!(ok && out.contains("ok"), "{out}");
}
