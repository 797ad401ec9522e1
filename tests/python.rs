//! The Python path without a GPU: the interpreter's self-description, the
//! shared libpython loaded into this test process, the bridge importing a
//! fake module (tests/py/) and judging its functions, and one clear line for
//! each way a `py:` variant can be wrong. Needs a python3 with a shared
//! libpython (pyenv with --enable-shared, conda, uv): where there is none
//! the tests print why and pass, unless ATTNSCOPE_REQUIRE_PYTHON=1 (CI).

use attnscope::gpu::python::{self, Problem, Runtime, discover};

fn runtime() -> Option<&'static Runtime> {
    match python::runtime() {
        Ok(rt) => Some(rt),
        Err(e) => {
            assert!(
                std::env::var_os("ATTNSCOPE_REQUIRE_PYTHON").is_none(),
                "Python is required here but unusable: {e}"
            );
            eprintln!("SKIPPED: no usable Python ({e})");
            None
        }
    }
}

fn fake(function: &str) -> String {
    format!(
        "{}/tests/py/fake_attn.py:{function}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn problem(causal: bool, d: u32) -> Problem {
    Problem {
        b: 1,
        hq: 8,
        hkv: 2,
        sq: 16,
        sk: 64,
        d,
        dtype: "bf16",
        causal,
    }
}

#[test]
fn the_interpreters_self_description_reads() {
    let text = r#"{"version": "3.11.7", "executable": "/p/bin/python3", "prefix": "/venv",
        "base_prefix": "/p", "path": ["", "/p/lib/python3.11"], "libdir": "/p/lib",
        "soname": "libpython3.11.so.1.0", "shared": true}"#;
    let i = discover::parse(text).unwrap();
    assert_eq!(i.base_prefix, "/p");
    assert_eq!(i.soname.as_deref(), Some("libpython3.11.so.1.0"));
    // Named but absent: one line that says what to do.
    let e = i.libpython().unwrap_err();
    assert!(
        e.contains("/p/lib/libpython3.11.so.1.0") && e.contains("--enable-shared"),
        "{e}"
    );
    let static_only = discover::parse(&text.replace("true", "false")).unwrap();
    let e = static_only.libpython().unwrap_err();
    assert!(e.contains("built without a shared libpython"), "{e}");
    assert!(discover::parse("Traceback").is_err());
}

#[test]
fn a_missing_interpreter_is_one_line() {
    // Asked in a subprocess, so another interpreter can be tried here.
    let e = std::process::Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(["doctor"])
        .env("ATTNSCOPE_PYTHON", "/nonexistent/python3")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&e.stdout).to_string() + &String::from_utf8_lossy(&e.stderr);
    assert!(
        text.contains("could not run '/nonexistent/python3'"),
        "{text}"
    );
}

#[test]
fn a_fake_modules_functions_are_judged_by_the_bridge() {
    let Some(rt) = runtime() else { return };
    let ok = rt.resolve(&fake("attention"), &problem(true, 64)).unwrap();
    assert_eq!(ok.refused, None);
    assert!(ok.file.ends_with("tests/py/fake_attn.py"), "{}", ok.file);
    assert_eq!(ok.source_hash.len(), 64);
    // **kwargs takes causal too.
    let kw = rt
        .resolve(&fake("with_kwargs"), &problem(true, 64))
        .unwrap();
    assert_eq!(kw.refused, None);
    assert_ne!(kw.handle, ok.handle);
    // No causal parameter: a causal shape is refused, a plain one is not.
    let nc = rt.resolve(&fake("no_causal"), &problem(true, 64)).unwrap();
    assert!(nc.refused.unwrap().contains("no causal parameter"));
    assert_eq!(
        rt.resolve(&fake("no_causal"), &problem(false, 64))
            .unwrap()
            .refused,
        None
    );
    // The function's own supports check, given the problem.
    let r = rt
        .resolve(&fake("refuses_d256"), &problem(false, 256))
        .unwrap();
    assert_eq!(r.refused.as_deref(), Some("D 256 is not tiled"));
    assert_eq!(
        rt.resolve(&fake("refuses_d256"), &problem(false, 128))
            .unwrap()
            .refused,
        None
    );
}

#[test]
fn each_way_to_be_wrong_is_one_clear_line() {
    let Some(rt) = runtime() else { return };
    let p = problem(false, 64);
    let err = |spec: &str| rt.resolve(spec, &p).unwrap_err();
    let cases = [
        (fake("two_args"), "cannot be called as fn(q, k, v)"),
        (fake("NOT_A_FUNCTION"), "is a int, not a function"),
        (fake("missing"), "has no function 'missing'"),
        (
            fake("raising_supports"),
            "ValueError: supports exploded (at ",
        ),
        (
            "no_such_module_xyz:f".into(),
            "no module 'no_such_module_xyz'",
        ),
        ("json:dumps".into(), "cannot be called as fn(q, k, v)"),
        (
            "/nonexistent/file.py:f".into(),
            "no file /nonexistent/file.py",
        ),
        (
            format!("{}/tests/py/broken_import.py:f", env!("CARGO_MANIFEST_DIR")),
            "ImportError: broken on purpose",
        ),
    ];
    for (spec, want) in cases {
        let e = err(&spec);
        assert!(e.contains(want), "{spec}: {e}");
        assert!(!e.contains('\n'), "{spec}: not one line: {e}");
    }
}

#[test]
fn torch_missing_is_one_line_naming_the_interpreter() {
    let Some(rt) = runtime() else { return };
    match rt.versions() {
        Ok(v) => eprintln!("torch {} present: nothing to refuse", v.torch),
        Err(e) => {
            assert!(e.contains("torch is not importable by"), "{e}");
            assert!(e.contains(&rt.interpreter.executable), "{e}");
        }
    }
}
