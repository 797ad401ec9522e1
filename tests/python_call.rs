//! The bridge's call path without a GPU: tests/py/fake_torch stands in for
//! torch, so the tensors a function gets (shapes, dtype, the engine's
//! pointers, the engine's stream, `causal`) and the check's copy into O are
//! asserted by the function itself. Its own process: PYTHONPATH is set
//! before the interpreter is asked for its sys.path. Skips like
//! tests/python.rs unless ATTNSCOPE_REQUIRE_PYTHON=1.

use attnscope::gpu::python::{self, Problem};

#[test]
fn a_call_gets_the_engines_buffers_and_stream_and_the_check_copies_into_o() {
    let dir = env!("CARGO_MANIFEST_DIR");
    // SAFETY: the only test in this process; nothing else reads the environment yet.
    unsafe { std::env::set_var("PYTHONPATH", format!("{dir}/tests/py/fake_torch")) };
    let rt = match python::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            assert!(
                std::env::var_os("ATTNSCOPE_REQUIRE_PYTHON").is_none(),
                "Python is required here but unusable: {e}"
            );
            eprintln!("SKIPPED: no usable Python ({e})");
            return;
        }
    };
    assert_eq!(rt.versions().unwrap().torch, "0.0+fake");
    let problem = Problem {
        b: 1,
        hq: 8,
        hkv: 2,
        sq: 16,
        sk: 64,
        d: 64,
        dtype: "bf16",
        causal: true,
    };
    let spec = |f: &str| format!("{dir}/tests/py/fake_attn.py:{f}");
    let ptrs = [0x1000, 0x2000, 0x3000, 0x4000];
    let h = rt.resolve(&spec("checked"), &problem).unwrap().handle;
    rt.call(h, ptrs, 0x77, 0, false).unwrap();
    rt.call(h, ptrs, 0x77, 0, true).unwrap();
    // New buffers are bound again (the assertions see the new pointers).
    let e = rt
        .call(h, [0x5000, 0x2000, 0x3000, 0x4000], 0x77, 0, false)
        .unwrap_err();
    assert!(
        e.contains("AssertionError") && e.contains("fake_attn.py"),
        "{e}"
    );
    let w = rt.resolve(&spec("wrong_shape"), &problem).unwrap().handle;
    rt.call(w, ptrs, 0x77, 0, false).unwrap();
    let e = rt.call(w, ptrs, 0x77, 0, true).unwrap_err();
    assert!(
        e.contains("returned (1, 2, 64, 64) bfloat16; expected (1, 8, 16, 64) bfloat16"),
        "{e}"
    );
}
