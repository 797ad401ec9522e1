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
            // A module importing torch at its top says the same.
            let spec = format!(
                "{}/tests/py/needs_torch.py:attention",
                env!("CARGO_MANIFEST_DIR")
            );
            let e = rt.resolve(&spec, &problem(false, 64)).unwrap_err();
            assert!(e.contains("torch is not importable by"), "{e}");
        }
    }
}

fn attnscope(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_py_variant_without_a_gpu_is_refused_by_name() {
    if attnscope::gpu::probe().is_ok() {
        eprintln!("SKIPPED: a GPU is here");
        return;
    }
    let out = "/tmp/attnscope-py-sweep.jsonl";
    for args in [
        &["bench", "--variants", "cudnn,py:sdpa_flash"][..],
        &["ab", "--a", "cudnn", "--b", "py:tests.fake:attention"],
        &[
            "sweep",
            "--shapes",
            "2,8,512,64",
            "--out",
            out,
            "--variants",
            "py:flex",
        ],
    ] {
        let (code, text) = attnscope(args);
        assert_eq!(code, attnscope::exit::NO_GPU, "{args:?}: {text}");
        assert!(
            text.contains(": a Python variant runs next to the GPU"),
            "{text}"
        );
        assert!(text.contains("py:"), "{text}");
        assert_eq!(text.trim().lines().count(), 1, "{text}");
    }
    // A malformed name is a usage error before anything else.
    let (code, text) = attnscope(&["bench", "--variants", "py:not a name"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("py:MODULE:FUNCTION"), "{text}");
}

#[test]
fn a_py_variants_build_round_trips_through_a_session_line() {
    use attnscope::session::Variant;
    use attnscope::session::event::{BuildReport, Event, PythonBuild, Stamped};
    let v: Variant = "py:mymod:attn".parse().unwrap();
    let line = Stamped {
        t_us: 7,
        event: Event::BuildFinished(BuildReport {
            variant: v,
            source_hash: "ab".repeat(32),
            python: Some(PythonBuild {
                file: "/w/mymod.py".into(),
                source_hash: "ab".repeat(32),
                python: "3.11.7".into(),
                torch: "2.11.0".into(),
                triton: Some("3.5.0".into()),
                kernels_per_call: 2,
            }),
            ..BuildReport::default()
        }),
    };
    let text = serde_json::to_string(&line).unwrap();
    assert!(text.contains("\"py:mymod:attn\"") && text.contains("\"torch\":\"2.11.0\""));
    assert_eq!(serde_json::from_str::<Stamped>(&text).unwrap(), line);
    // The event panel says the function was imported, not built with registers of ours.
    let mut state = attnscope::model::SessionState::default();
    let mut imported = line.clone();
    if let Event::BuildFinished(b) = &mut imported.event {
        b.families = vec!["python".into()];
        b.ptxas_log = "python 3.11.7, torch 2.11.0, 2 kernels per call".into();
    }
    state.apply(&imported);
    let said: Vec<&str> = state.log.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        said,
        ["imported py:mymod:attn: python 3.11.7, torch 2.11.0, 2 kernels per call"]
    );
    // A build of attnscope's own kernel writes no python field, so older readers see nothing new.
    let plain = serde_json::to_string(&BuildReport::default()).unwrap();
    assert!(!plain.contains("python"), "{plain}");
}
