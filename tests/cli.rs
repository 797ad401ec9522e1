//! The binary's error paths: clear messages and documented exit codes.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn missing_session_file_exits_3() {
    let (code, _, err) = run(&["replay", "/nonexistent/x.jsonl", "--summary"]);
    assert_eq!(code, 3);
    assert!(
        err.contains("session file /nonexistent/x.jsonl does not exist"),
        "{err}"
    );
    // The shipped sessions are compressed: a name without the ending points at the file.
    let (code, _, err) = run(&[
        "replay",
        "sessions/20261125-034401_H100_tour.jsonl",
        "--summary",
    ]);
    assert_eq!(code, 3);
    assert!(
        err.contains("did you mean sessions/20261125-034401_H100_tour.jsonl.zst?"),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_a_session_says_so_before_anything_else() {
    // Without --summary and without a terminal: the file is judged first.
    let (code, _, err) = run(&["replay", "/nonexistent/x.jsonl"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("does not exist"), "{err}");
    let (code, _, err) = run(&["replay", "Cargo.toml", "--summary"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("is not an attnscope session (the first line is not a session header"),
        "{err}"
    );
    // Three bytes that are not UTF-8 and end no line: not a session, not "empty".
    let dir = tempfile::tempdir().unwrap();
    let three = dir.path().join("three.jsonl");
    std::fs::write(&three, b"\xff\xfe\xfd").unwrap();
    let (code, _, err) = run(&["replay", three.to_str().unwrap(), "--summary"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("is not an attnscope session") && err.contains("ends inside that line"),
        "{err}"
    );
}

#[test]
fn recording_without_a_gpu_is_refused() {
    if attnscope::gpu::probe().is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    let (code, _, err) = run(&["live", "--record", path.to_str().unwrap()]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("nothing to record"), "{err}");
    assert!(!path.exists());
}

#[test]
fn directory_exits_3() {
    let (code, _, err) = run(&["replay", "tests", "--summary"]);
    assert_eq!(code, 3);
    assert!(err.contains("is a directory"), "{err}");
}

#[test]
fn bad_speed_is_named() {
    let (code, _, err) = run(&["replay", "x.jsonl", "--speed", "1000"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("speed 1000 is out of range: 0.25 ≤ speed ≤ 256"),
        "{err}"
    );
    let (code, _, err) = run(&["replay", "x.jsonl", "--speed", "fast"]);
    assert_eq!(code, 2);
    assert!(err.contains("speed 'fast' is not a number"), "{err}");
}

#[test]
fn kv_flags_that_break_a_rule_are_named() {
    // Before, both blamed --shape.
    let (code, _, err) = run(&["bench", "--shape", "1,32,512,128", "--kv-heads", "7"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invalid value '7' for '--kv-heads <N>': with --shape 1,32,512,128"),
        "{err}"
    );
    let (code, _, err) = run(&["ab", "--shape", "1,8,64,128", "--kv-len", "16", "--causal"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invalid value '16' for '--kv-len <N>'"),
        "{err}"
    );
    let (code, _, err) = run(&["bench", "--shape", "1,32/7,512,128"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("for '--shape <B,H,S,D>'"), "{err}");
}

/// A shape that breaks a rule is quoted as typed, with the flag and the range (issue 57: a zero
/// dimension was echoed as the normalized `B0 H8 S512 D64`).
#[test]
fn a_bad_shape_is_quoted_as_typed() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["bench", "--shape", "0,8,512,64"],
            "invalid value '0,8,512,64' for '--shape <B,H,S,D>': B=0 is out of range: 1 ≤ B ≤ 65535",
        ),
        (
            &["ab", "--shape=2, 0,512,64"],
            "invalid value '2, 0,512,64' for '--shape <B,H,S,D>': H=0 is out of range: 1 ≤ H ≤ 65535",
        ),
        (
            &["gates", "--shape", "2,8,0,64"],
            "invalid value '2,8,0,64' for '--shape <B,H,S,D>': S=0 is out of range: 1 ≤ S ≤",
        ),
        (
            &["bench", "--shape", "2,8,512,0"],
            "invalid value '2,8,512,0' for '--shape <B,H,S,D>': D=0 is not supported: a multiple of 8 from 8 to 256",
        ),
        (
            &["live", "--shape", "2,8/0,512,64"],
            "invalid value '2,8/0,512,64' for '--shape <B,H,S,D>': 8 query heads over 0 KV heads",
        ),
        (
            &["--shape", "2,8,1/0,64"],
            "invalid value '2,8,1/0,64' for '--shape <B,H,S,D>': key length 0 is out of range: 1 ≤ key length ≤",
        ),
    ];
    for (args, says) in cases {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains(" H8 S512 D"), "{args:?}: {err}");
    }
}

/// A negative number reaches its option's parser, which names the option and its range (issue 57:
/// clap called `-1` an unexpected argument); `--py` says what it takes before reading toggles.
#[test]
fn negative_numbers_and_python_lists_name_their_option() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["bench", "--shape", "-1,8,512,64"],
            "invalid value '-1,8,512,64' for '--shape <B,H,S,D>': shape '-1,8,512,64': B='-1' is not a positive integer",
        ),
        (
            &["replay", "x.jsonl", "--speed", "-1"],
            "for '--speed <SPEED>': speed -1 is out of range",
        ),
        (
            &["bench", "--device", "-1"],
            "invalid value '-1' for '--device <N|UUID>'",
        ),
        (
            &["bench", "--max-seconds", "-3"],
            "-3 s is out of range: 0.5 ≤ seconds ≤ 600",
        ),
        (
            &["--py", "notpy"],
            "'notpy' is not a Python variant: --py takes py:NAME",
        ),
    ];
    for (args, says) in cases {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // After `--` a value is a value: nothing is joined.
    let (code, _, err) = run(&["bench", "--variants", "--", "-1"]);
    assert_eq!(code, 2, "{err}");
    let (_, _, err) = run(&["bench", "--variants", "notakernel"]);
    assert!(
        err.contains("or cudnn, or a Python function as py:NAME"),
        "{err}"
    );
}

/// A variant selected and left before its first batch says so (issue 57: 37 rows of the shipped tour
/// read "the session records no reason").
#[test]
fn a_variant_left_before_its_first_batch_says_so() {
    let (code, out, err) = run(&[
        "replay",
        "sessions/20261125-034401_H100_tour.jsonl.zst",
        "--summary",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("records no reason"), "{out}");
    assert!(
        out.contains("not timed — the session moved on before its first batch was timed"),
        "{out}"
    );
}

#[test]
fn json_needs_summary() {
    let (code, _, err) = run(&["replay", "x.jsonl", "--json"]);
    assert_eq!(code, 2);
    assert!(err.contains("--summary"), "{err}");
}

#[test]
fn summary_of_fixture_text_and_json() {
    let (code, out, _) = run(&[
        "replay",
        "tests/fixtures/fixture_mission.jsonl",
        "--summary",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("wmma+pv+async"));
    assert!(out.contains("A/B: A=scalar B=wmma+pv+async"));
    assert!(out.contains("timer: cupti, step 32 ns"), "{out}");
    assert!(out.contains("÷ cuDNN"), "{out}");
    let (code, out, _) = run(&[
        "replay",
        "tests/fixtures/fixture_mission.jsonl",
        "--summary",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["events"], 65);
    assert_eq!(v["variants"].as_array().unwrap().len(), 4);
    // Each variant's latency by regime, and its ratio to cuDNN with the source named.
    let full = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variant"] == "wmma+pv+async")
        .unwrap();
    assert_eq!(full["variant"], "wmma+pv+async");
    assert_eq!(full["runs"].as_array().unwrap().len(), 2);
    assert_eq!(
        full["speedup_vs_cudnn"]["source"],
        "solo medians, back-to-back"
    );
    assert_eq!(full["speedup_vs_scalar"]["source"], "race, interleaved");
}

#[test]
fn replay_tui_without_terminal_says_so() {
    let (code, _, err) = run(&["replay", "tests/fixtures/fixture_mission.jsonl"]);
    assert_eq!(code, 5);
    assert!(err.contains("not a terminal"), "{err}");
}

#[test]
fn bad_gates_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.toml");
    std::fs::write(&g, "[[gate]]\nid='x'").unwrap();
    let (code, _, err) = run(&[
        "replay",
        "tests/fixtures/fixture_mission.jsonl",
        "--summary",
        "--gates",
        g.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("gates file"), "{err}");
}

#[test]
fn unknown_subcommand_is_usage_error() {
    let (code, _, err) = run(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("unrecognized subcommand"), "{err}");
}

/// Every shipped session (at most four, each zstd-compressed) replays with
/// `--strict`: no corrupt line, no torn tail.
#[test]
fn bundled_real_session_replays() {
    let all: Vec<_> = std::fs::read_dir("sessions")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let sessions: Vec<_> = all
        .iter()
        .filter(|p| attnscope::session::compress::is_session_name(p))
        .cloned()
        .collect();
    assert_eq!(
        sessions.len(),
        all.len(),
        "only sessions in sessions/: {all:?}"
    );
    assert!(
        !sessions.is_empty(),
        "sessions/ must ship at least one real recording"
    );
    assert!(
        sessions.len() <= 4,
        "at most four shipped sessions: {sessions:?}"
    );
    for s in &sessions {
        let name = s.file_name().unwrap().to_string_lossy();
        assert!(name.ends_with(".jsonl.zst"), "{name} is not compressed");
        assert_eq!(
            &std::fs::read(s).unwrap()[..4],
            &attnscope::session::compress::ZSTD_MAGIC,
            "{name} is not zstd"
        );
    }
    for s in sessions {
        let (code, out, err) = run(&[
            "replay",
            s.to_str().unwrap(),
            "--summary",
            "--json",
            "--strict",
        ]);
        assert_eq!(code, 0, "{}: {err}", s.display());
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(
            v["header"]["gpu"]["name"]
                .as_str()
                .unwrap()
                .contains("NVIDIA"),
            "{}",
            s.display()
        );
        assert_eq!(v["errors"], 0);
        assert_eq!(v["torn_tail"], false, "{}", s.display());
    }
}

#[test]
fn gpu_commands_validate_before_touching_the_gpu() {
    let cases: [(&[&str], &str); 59] = [
        (
            &["bench", "--regime", "interleaved"],
            "interleaved needs two variants",
        ),
        (
            &["bench", "--regime", "lonely"],
            "is not one of back-to-back",
        ),
        (
            &["ab", "--regime", "back-to-back"],
            "a race alternates its two variants",
        ),
        (&["ab", "--by", "5"], "--expect"),
        (
            &["ab", "--expect", "quicker"],
            "possible values: faster, slower, same",
        ),
        (
            &["ab", "--expect", "faster", "--by", "x"],
            "'x' is not a percentage",
        ),
        (
            &["bench", "--inputs", "gauss"],
            "is not one of uniform, normal:σ",
        ),
        (&["selftest", "--inputs", "normal:abc"], "is not a number"),
        (
            &["ab", "--inputs", "uniform,gauss"],
            "is not one of uniform, normal:σ",
        ),
        (&["sweep", "--inputs", "rising,"], "is not one of uniform"),
        (
            &["selftest", "--variants", "mma+async@tuned"],
            "selftest checks named tiles; give the tile",
        ),
        (
            &["selftest", "--quick", "--variants", "mma"],
            "'--quick' cannot be used with '--variants",
        ),
        (
            &["selftest", "--variants", "mma,"],
            "an empty name in the variant list",
        ),
        (&["tune", "--inputs", "normal:100"], "between 0.001 and 64"),
        (
            &["bench", "--shape", "2,70000,17,64"],
            "H=70000 is out of range: 1 ≤ H ≤ 65535",
        ),
        (
            &["bench", "--variants", "cudnn@64x128s2w4"],
            "cudnn is cuDNN's own kernel",
        ),
        (
            &["bench", "--variants", "mma+wmma"],
            "mma replaces wmma and pv",
        ),
        (
            &["bench", "--variants", "wmma@64x64s2w4g"],
            "g (wgmma) is a tile option of the mma path",
        ),
        (
            &["bench", "--variants", "mma@128x64s2w4g"],
            "wgmma tiles give each warpgroup",
        ),
        (
            &["build", "--variants", "mma+async@tuned"],
            "build has no GPU to tune on",
        ),
        (
            &["bench", "--variants", "wmma@64x64s2w8k2"],
            "only the mma path splits",
        ),
        (
            &["bench", "--variants", "mma@64x64s2w1"],
            "16 or 32 query rows",
        ),
        (
            &["bench", "--variants", "scalar,wmma+pv+async,bogus@tuned"],
            "'bogus' is not a toggle",
        ),
        (
            &["bench", "--kernels", "/nonexistent/k"],
            "--kernels: /nonexistent/k: not a folder",
        ),
        (
            &["tune", "--variant", "mma+async@64x64s2w8k2"],
            "tune picks the tile: give the toggles only",
        ),
        (
            &["tune", "--all", "--variant", "mma+async@64x64s2w8k2"],
            "tune picks the tile: give the toggles only",
        ),
        (
            &["tune", "--all", "--variant", "cudnn"],
            "cudnn has no tiles to tune",
        ),
        (&["tune", "--max-seconds", "0.1"], "0.5"),
        (
            &[
                "sweep",
                "--variants",
                "mma+async@tuned",
                "--shapes",
                "2,8,512,64",
                "--out",
                "/tmp/attnscope-never-written.attnscope",
            ],
            "sweep takes fixed tiles, one tile over every shape",
        ),
        (&["build", "--arch", "sm_70"], "arch sm_70 is too old"),
        (&["build", "--d", "96"], "D=96 is not supported"),
        (
            &["gates", "--variant", "wmma+fast"],
            "'fast' is not a toggle",
        ),
        (&["gates", "--l2", "lukewarm"], "possible values: cold, hot"),
        (
            &["gates", "--gates", "/nonexistent/g.toml"],
            "cannot read gates file /nonexistent/g.toml",
        ),
        (
            &["gates", "--gates", "seed"],
            "(or name a bundled one: default, seeds)",
        ),
        (
            &["gates", "--metrics", "tests/fixtures/fixture_mission.jsonl"],
            "metrics file tests/fixtures/fixture_mission.jsonl",
        ),
        (
            &["bench", "--shape", "2,8,512,96"],
            "scalar runs D = 64, 128, not 96",
        ),
        (
            &["bench", "--shape", "1,32,64,128", "--kv-heads", "6"],
            "32 query heads over 6 KV heads: the KV heads must divide the query heads",
        ),
        (
            &["ab", "--shape", "1,8,64/32,64", "--causal"],
            "causal with 64 queries over 32 keys",
        ),
        (
            &["bench", "--dtype", "fp8"],
            "dtype 'fp8' is not one of fp16, bf16",
        ),
        (
            &["bench", "--variants", "scalar", "--dtype", "bf16"],
            "scalar takes fp16, not bf16 (the [[supports]] of kernels/attention.toml)",
        ),
        (
            &[
                "gates",
                "--variant",
                "mma+async@128x128s3w8gqptor",
                "--shape",
                "1,8,512,256",
            ],
            "runs D = 64, 128, not 256",
        ),
        (
            &["live", "--shape", "2,8/3,512,64"],
            "8 query heads over 3 KV heads",
        ),
        (&["bench", "--shape", "0,8,512,64"], "B=0 is out of range"),
        (&["bench", "--shape", "2,8,512"], "must be B,H,S,D"),
        (
            &["bench", "--variants", "wmma+turbo"],
            "'turbo' is not a toggle",
        ),
        (
            &["ab", "--a", "scalar", "--b", "wmma@64x64"],
            "is not of the form 64x64s2w4",
        ),
        (
            &["live", "--telemetry-hz", "1000"],
            "1000 Hz is out of range",
        ),
        (
            &["bench", "--warm-seconds", "700"],
            "700 s is out of range: 0 ≤ warm seconds ≤ 600",
        ),
        (
            &["bench", "--variants", "mma+async@128x128s3w8q"],
            "q (Q read by wgmma from shared memory) is a tile option of wgmma tiles: add g",
        ),
        (
            &["bench", "--variants", "mma+async@128x128s2w8gqp"],
            "p (a producer warpgroup handing stages over by mbarriers) needs a three-stage gq tile",
        ),
        (
            &["bench", "--variants", "mma+async@192x64s3w12gqpo"],
            "p tiles have one or two consumer warpgroups (w4, w8), or three with TMA loads (w12 with t)",
        ),
        (
            &["bench", "--variants", "mma+async@192x64s3w12gqpt"],
            "three consumer warpgroups fit their 160 registers only in the ping-pong loop: add o",
        ),
        (
            &["bench", "--variants", "mma+async@256x64s3w16gqpto"],
            "p tiles have one or two consumer warpgroups (w4, w8), or three with TMA loads (w12 with t)",
        ),
        (
            &["bench", "--variants", "mma+async@64x64s3w4gqpo"],
            "o (consumer warpgroups taking turns at the tensor cores) needs a p tile with two or three of them (w8, w12)",
        ),
        (
            &["bench", "--variants", "mma+async@128x64s3w8gqt"],
            "t (TMA loads) is issued by the producer warpgroup: add p",
        ),
        (
            &["live", "--kernels", "/nonexistent/k"],
            "--kernels: /nonexistent/k: not a folder",
        ),
        (
            &["live", "--kernels", "tests"],
            "tests: no manifest (*.toml) beside the kernel",
        ),
        (
            &["live", "--metrics", "/nonexistent/m.toml"],
            "cannot read metrics file",
        ),
    ];
    for (args, want) in cases {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn gpu_commands_without_a_gpu_say_what_is_missing() {
    // Only meaningful on a machine without the CUDA driver (CI, this repo's dev machines).
    if attnscope::gpu::probe().is_ok() {
        return;
    }
    for args in [
        &["bench"][..],
        &["selftest"],
        &["ab"],
        &["gates"],
        &["launch"],
        &["tune"],
        &["tune", "--all", "--json"],
        &["bench", "--variants", "mma+async@tuned"],
        &["bench", "--variants", "mma+async"],
        &["ab", "--a", "mma+async", "--b", "mma+async@64x128s2w8k2g"],
        &["gates", "--variant", "mma+async"],
        &["bench", "--variants", "cudnn"],
        &["ab", "--a", "cudnn", "--b", "mma+async@64x128s2w8k2g"],
        &["ab", "--calibrate", "scalar"],
        &["selftest", "--mutations"],
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 4, "{args:?}: {err}");
        assert!(!err.contains("unknown variant"), "{args:?}: {err}");
        assert!(
            err.contains("not found") || err.contains("no GPU"),
            "{args:?}: {err}"
        );
    }
    let (code, out, _) = run(&["doctor"]);
    assert_eq!(code, 4);
    assert!(
        out.contains("MISSING") && out.contains("replay the newest real session"),
        "{out}"
    );
    // Each missing library's advice once; the lines that depend on it refer back.
    assert!(out.contains("FAIL GPU: libcuda.so.1 (see above)"), "{out}");
    assert_eq!(out.matches("install the NVIDIA driver").count(), 2, "{out}");
}

/// `build` needs NVRTC only: every variant named compiles on a machine with no
/// GPU, the cubins are written where asked, and a compile error says which
/// variant and why.
#[test]
fn build_compiles_without_a_gpu() {
    if attnscope::gpu::nvrtc::nvrtc_version().is_err() {
        assert!(
            std::env::var_os("ATTNSCOPE_REQUIRE_NVRTC").is_none(),
            "NVRTC required"
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("attnscope-build-{}", std::process::id()));
    let (code, out, err) = run(&[
        "build",
        "--variants",
        "scalar,mma+async@64x64s2w8k2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("mma+async@64x64s2w8k2") && out.contains("mma ldmatrix cp.async"),
        "{out}"
    );
    assert!(
        std::fs::metadata(dir.join("mma+async@64x64s2w8k2.cubin"))
            .unwrap()
            .len()
            > 1000
    );
    // wgmma tiles build for Hopper (sm_90a) and are refused, by name, elsewhere.
    let (code, out, err) = run(&["build", "--variants", "mma+async@64x64s2w8k2g"]);
    assert_eq!(code, 0, "{err}");
    // No `mma` family: its row sums run on the FMA pipe (docs/perf-log.md, step 29).
    assert!(out.contains("wgmma ldmatrix cp.async"), "{out}");
    let (code, out, err) = run(&[
        "build",
        "--arch",
        "sm_80",
        "--variants",
        "mma+async@64x64s2w8k2g",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("FAILED") && err.contains("wgmma needs sm_90a (sm_90 only)"),
        "{out}{err}"
    );
    // A manifest whose shared-memory formula no longer says what the kernel
    // does (a decode tile's rows padded again in the formula only).
    let edited = dir.join("edited");
    copy_dir(std::path::Path::new("kernels"), &edited);
    let toml = edited.join("attention.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let formula = "\"LDH = HEAD_DIM + (DECODE ? 0 : 8)\"";
    assert!(text.contains(formula), "the manifest's LDH formula moved");
    std::fs::write(&toml, text.replace(formula, "\"LDH = HEAD_DIM + 8\"")).unwrap();
    let (code, out, err) = run(&[
        "build",
        "--variants",
        "mma+async@16x32s3w4k4d,mma+async@64x64s2w8k2",
        "--kernels",
        edited.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "the kernel states attn_smem_bytes = 100352, its manifest's smem_bytes gives 112896"
        ),
        "{out}{err}"
    );
    assert_eq!(out.matches("the kernel states").count(), 1, "{out}");
    let broken = dir.join("k");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("attention.cu"), "this is not C++;").unwrap();
    let (code, out, err) = run(&[
        "build",
        "--variants",
        "wmma",
        "--kernels",
        broken.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("wmma") && out.contains("FAILED") && err.contains("error"),
        "{out}{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn export_errors_are_named() {
    let (code, _, err) = run(&["export", "tests/fixtures/fixture_mission.jsonl"]);
    assert_eq!(code, 2);
    assert!(err.contains("--out"), "{err}");
    let (code, _, err) = run(&["export", "/nonexistent/x.jsonl", "--out", "/tmp/x"]);
    assert_eq!(code, 3);
    assert!(err.contains("does not exist"), "{err}");
    // --out names a file, not a folder.
    let (code, _, err) = run(&[
        "export",
        "tests/fixtures/fixture_mission.jsonl",
        "--out",
        "Cargo.toml",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--out Cargo.toml is a file: --out must be a folder"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pictures");
    let (code, stdout, err) = run(&[
        "export",
        "tests/fixtures/fixture_mission.jsonl",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(stdout.lines().count(), 13, "{stdout}");
    // Every latency line corrupt: the error says lines were skipped, not only "no samples".
    let fixture = std::fs::read_to_string("tests/fixtures/fixture_mission.jsonl").unwrap();
    let mut lines = fixture.lines();
    let mut damaged = format!("{}\n", lines.next().unwrap());
    for l in lines.filter(|l| l.contains("\"latency\"")).take(3) {
        damaged += &format!(
            "{}\n",
            l.replace("\"samples_ns\":[", "\"samples_ns\":[oops")
        );
    }
    let file = dir.path().join("damaged.jsonl");
    std::fs::write(&file, damaged).unwrap();
    let (code, _, err) = run(&[
        "export",
        file.to_str().unwrap(),
        "--out",
        dir.path().join("x").to_str().unwrap(),
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("no latency samples it could read (3 lines were skipped as corrupt"),
        "{err}"
    );
}

#[test]
fn worker_without_a_gpu_says_why_on_its_event_stream() {
    if attnscope::gpu::probe().is_ok() {
        return;
    }
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(["worker", "--telemetry-hz", "0"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let hello =
        attnscope::session::protocol::hello_line(&attnscope::session::protocol::Hello::new(None));
    writeln!(child.stdin.take().unwrap(), "{hello}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let first: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(
        first["hello"]["protocol"],
        attnscope::session::protocol::VERSION
    );
    let line: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(
        (line["seq"].as_u64(), &line["event"]["type"]),
        (Some(1), &serde_json::json!("error"))
    );
    assert!(
        line["event"]["message"]
            .as_str()
            .unwrap()
            .contains("the GPU worker cannot start"),
        "{line}"
    );
    // A dashboard that sends something else first is told so.
    let (code, out, _) = run(&["worker", "--telemetry-hz", "0"]);
    assert_eq!(
        (code, out.lines().count()),
        (0, 1),
        "no input: a probe, hello only"
    );
}

/// `--device` on every command that opens a GPU: a malformed one is a usage
/// error saying what a device is; one that is not here exits 4 with the
/// GPUs there are (or, with no driver, says what is missing as before).
#[test]
fn device_flag_is_checked_on_every_gpu_command() {
    for cmd in [
        &[][..],
        &["live"],
        &["bench"],
        &["ab"],
        &["selftest"],
        &["gates"],
        &["tune"],
        &["launch"],
        &["doctor"],
        &["clocks"],
        &["worker"],
    ] {
        for (bad, want) in [("foo", "is not a device"), ("GPU-xyz", "is not a GPU UUID")] {
            let args: Vec<&str> = cmd.iter().copied().chain(["--device", bad]).collect();
            let (code, _, err) = run(&args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(
                err.contains(want) && err.contains("nvidia-smi -L"),
                "{args:?}: {err}"
            );
        }
    }
    let (code, _, err) = run(&["replay", "--device", "1", "x.jsonl"]);
    assert_eq!(code, 2, "replay opens no GPU: {err}");
    match attnscope::gpu::device::list() {
        Ok(gpus) if !gpus.is_empty() => {
            let (code, _, err) = run(&["bench", "--device", "99"]);
            assert_eq!(code, 4, "{err}");
            assert!(
                err.contains("no CUDA device 99: ") && err.contains(&gpus[0].name),
                "{err}"
            );
            let (code, _, err) = run(&["bench", "--device", "GPU-0000dead0000"]);
            assert_eq!(code, 4, "{err}");
            assert!(
                err.contains("no CUDA device has UUID GPU-0000dead-0000"),
                "{err}"
            );
        }
        _ => {
            for device in ["3", "GPU-3f2a"] {
                let (code, _, err) = run(&["bench", "--device", device]);
                assert_eq!(code, 4, "{err}");
                assert!(err.contains("not found") || err.contains("no GPU"), "{err}");
            }
        }
    }
}

/// Kernel folders: `new` writes a starter and refuses to overwrite; a bad
/// manifest is refused at load with its file and line (nothing launched);
/// variants of another folder parse by path, and their D is checked first.
#[test]
fn kernel_folders_and_their_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mine = dir.path().join("mine");
    let mine_s = mine.to_str().unwrap();
    let (code, out, err) = run(&["new", mine_s]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("attnscope --kernels") && out.contains("mine.toml"),
        "{out}"
    );
    let (code, _, err) = run(&["new", mine_s]);
    assert_eq!(code, 2);
    assert!(err.contains("not empty"), "{err}");

    // A manifest that takes one of attnscope's keys: the file and the line.
    let toml = mine.join("mine.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let broken = text.replace("key = \"e\"", "key = \"q\"");
    std::fs::write(&toml, &broken).unwrap();
    let (code, _, err) = run(&["bench", "--kernels", mine_s]);
    assert_eq!(code, 2, "{err}");
    let line = broken[..broken.find("key = \"q\"").unwrap()]
        .matches('\n')
        .count()
        + 1;
    assert!(
        err.contains(&format!("mine.toml:{line}:")) && err.contains("key 'q' is attnscope's own"),
        "{err}"
    );
    std::fs::write(&toml, text.replace("[launch]", "[launch]\nthreads_x = 1")).unwrap();
    let (code, _, err) = run(&["live", "--kernels", mine_s]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown field `threads_x`"), "{err}");
    std::fs::write(&toml, &text).unwrap();

    // The starter runs D=64 only; the bundled kernel is there as bundled:.
    let (code, _, err) = run(&["bench", "--kernels", mine_s, "--shape", "2,8,512,128"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("scalar runs D = 64, not 128 (mine keeps kernel ABI 1"),
        "{err}"
    );
    // An ABI 1 kernel at grouped-query heads: one line, what it keeps.
    let (code, _, err) = run(&["bench", "--kernels", mine_s, "--shape", "1,8/2,512,64"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("needs as many KV heads as query heads, not 8/2"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let (code, _, err) = run(&["ab", "--kernels", mine_s, "--a", "bundled:wmma+turbo"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'turbo' is not a toggle of attention"),
        "{err}"
    );
    let (code, _, err) = run(&["ab", "--a", "examples/rowwarp:smem+exp3"]);
    assert_eq!(code, 2);
    assert!(err.contains("'exp3' is not a toggle of rowwarp"), "{err}");
    let (code, _, err) = run(&["ab", "--a", "nowhere:scalar"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown kernel 'nowhere'"), "{err}");
    let (code, _, err) = run(&["ab", "--a", "/nonexistent/k:scalar"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/k: not a folder"), "{err}");
}

/// `attnscope replay F --summary --json | head -c 10`: the closed pipe ends
/// the program like `cat` (SIGPIPE), not with a panic (exit 101).
#[test]
fn a_closed_pipe_is_not_a_panic() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let session = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sessions/20261125-034401_H100_tour.jsonl.zst");
    let mut child = Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(["replay", session.to_str().unwrap(), "--summary", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// With no GPU, `attnscope --kernels DIR` replays the bundled tour: it says that DIR is not what
/// is shown, and what compiles DIR here.
#[test]
fn no_gpu_with_a_kernel_folder_names_the_folder_and_build() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mine");
    let (code, _, err) = run(&["new", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, _, err) = run(&["--kernels", dir.to_str().unwrap()]);
    if !err.contains("no usable GPU") {
        eprintln!("a GPU is here: the no-GPU path is not taken ({err})");
        return;
    }
    let expect = format!(
        "{} not opened without a GPU; `attnscope build --kernels {}` compiles it here",
        dir.display(),
        dir.display()
    );
    assert!(err.contains(&expect), "{err}");
}

/// Runs the binary; a run past `limit` is killed and fails the test: a
/// hang is a failure like a panic.
fn run_within(args: &[&std::ffi::OsStr], limit: std::time::Duration) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("attnscope {args:?} did not end within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Issue 43's reduced case, and the chart hang under it. The first file is
/// a header, one `latency` event and a telemetry line renamed `ab_result`:
/// it was read as a race of zeros and `export` never ended. The second
/// names a race between two variants with no samples: the histogram's axis
/// had no finite range and plotters looped. Both end, quickly, every way.
#[test]
fn the_issue_43_sessions_end_every_way() {
    let limit = std::time::Duration::from_secs(20);
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "tests/fixtures/issue43_renamed_telemetry.jsonl",
        "tests/fixtures/issue43_race_without_samples.jsonl",
    ] {
        let renamed = file.contains("renamed");
        let os = |a: &[&str]| -> Vec<std::ffi::OsString> { a.iter().map(Into::into).collect() };
        let runs = [
            os(&["replay", file, "--summary"]),
            os(&["replay", file, "--summary", "--json"]),
            os(&["replay", file, "--summary", "--strict"]),
        ];
        for args in &runs {
            let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
            let (code, out, err) = run_within(&args, limit);
            let strict = args.iter().any(|a| *a == "--strict");
            if renamed && strict {
                assert_eq!(code, 3, "{args:?}: {err}");
                assert!(err.contains(":3: ab_result: missing field `a`"), "{err}");
                continue;
            }
            assert_eq!(code, 0, "{args:?}: {err}");
            if renamed && args.iter().any(|a| *a == "--json") {
                let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                assert_eq!(v["skipped_lines"][0]["line"], 3, "{out}");
                assert_eq!(v["ab"], serde_json::Value::Null, "a race read from nothing");
            } else if renamed {
                assert!(
                    out.contains("line 3: ab_result: missing field `a`"),
                    "{out}"
                );
                assert!(!out.contains("A/B:"), "a race read from nothing: {out}");
            }
        }
        let out_dir = dir.path().join(if renamed { "renamed" } else { "race" });
        let args = os(&["export", file, "--out", out_dir.to_str().unwrap()]);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let (code, _, err) = run_within(&args, limit);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out_dir.join("latency_histogram.svg").exists());
    }
}

/// Issue 39: an argument that is not UTF-8 panicked in std::env::args()
/// (exit 101). Now it is one line naming the argument, exit 2.
#[cfg(unix)]
#[test]
fn an_argument_that_is_not_utf8_is_a_usage_error() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let bad_path = OsStr::from_bytes(b"/tmp/\xff\xfe.jsonl");
    let bad_variant = OsStr::from_bytes(b"\xff\xfe");
    let limit = std::time::Duration::from_secs(20);
    for (args, which) in [
        (
            vec![OsStr::new("replay"), bad_path, OsStr::new("--summary")],
            "argument 2 ('/tmp/\\xFF\\xFE.jsonl')",
        ),
        (
            vec![OsStr::new("live"), OsStr::new("--variant"), bad_variant],
            "argument 3 ('\\xFF\\xFE')",
        ),
    ] {
        let (code, out, err) = run_within(&args, limit);
        assert_eq!(code, 2, "{err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("attnscope: {which} is not valid UTF-8")),
            "{err}"
        );
    }
}

/// `bench --runs N` reruns the bench as N processes of its own: it refuses what it cannot do
/// (one run, recording, a GPU elsewhere) and stops on a run that fails.
#[test]
fn bench_runs_says_what_it_cannot_do() {
    let (code, _, err) = run(&["bench", "--runs", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1 is not in 2..=100"), "{err}");
    let (code, _, err) = run(&["bench", "--runs", "3", "--record", "/tmp/never.jsonl"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with '--record"), "{err}");
    let (code, _, err) = run(&["bench", "--runs", "3", "--remote", "gpu01"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--runs starts processes on this machine"),
        "{err}"
    );
    if attnscope::gpu::probe().is_err() {
        let (code, _, err) = run(&["bench", "--runs", "3", "--variants", "scalar"]);
        assert_eq!(code, 4, "{err}");
        assert!(err.contains("run 1 of 3 ended with exit code 4"), "{err}");
    }
}

/// clap reads the whole line first, then the kernel folders it names are
/// registered, then variant names are read against them: `--kernels` may
/// come after the variants that belong to it.
#[test]
fn kernel_folders_count_wherever_they_stand_on_the_line() {
    let rowwarp = format!("{}/examples/rowwarp", env!("CARGO_MANIFEST_DIR"));
    let (code, _, err) = run(&["bench", "--variants", "smem", "--kernels", &rowwarp]);
    assert_ne!(code, 2, "smem is rowwarp's toggle: {err}");
    let (code, _, err) = run(&["bench", "--variants", "smem"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("invalid value 'smem' for '--variants <VARIANTS>'"),
        "{err}"
    );
    let (code, _, err) = run(&["bench", "--kernels", "/nonexistent/k", "--variants", "smem"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--kernels: ") && err.contains("not a folder"),
        "{err}"
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
