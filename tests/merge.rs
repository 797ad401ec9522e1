//! Sessions from several GPUs in one file (`attnscope merge`), and the
//! sweep's arguments: what a user can get wrong is named before anything runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use attnscope::model::SessionState;
use attnscope::session::event::Event;
use attnscope::session::reader::{OnCorrupt, read_file};

const BIN: &str = env!("CARGO_BIN_EXE_attnscope");

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sessions")
        .join(name)
}
/// Two H100 sessions of the bundled kernel, both zstd-compressed: the tour
/// and the remote tour (recorded over a worker link).
const TOUR: &str = "20261125-034401_H100_tour.jsonl.zst";
const REMOTE: &str = "20261123-180803_H100_remote-tour.jsonl.zst";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("attnscope-merge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn two_gpus_merge_into_one_session_read_side_by_side() {
    let dir = scratch("ok");
    // Compressed in, compressed out.
    let out = dir.join("both.jsonl.zst");
    let (a, b) = (shipped(TOUR), shipped(REMOTE));
    let (code, stdout, err) = run(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // The same GPU twice: the second is h100-2.
    assert!(stdout.contains("as h100, h100-2"), "{stdout}");
    assert_eq!(
        &std::fs::read(&out).unwrap()[..4],
        &attnscope::session::compress::ZSTD_MAGIC
    );
    // Every event of both, none skipped, each source's variants labelled.
    let mut state = SessionState::default();
    let mut names = std::collections::BTreeSet::new();
    let mut telemetry_sources = std::collections::BTreeSet::new();
    let report = read_file(&out, OnCorrupt::Stop, |s| {
        if let Event::VariantSelected(v) = &s.event {
            names.insert(v.variant.name());
        }
        if let Event::Telemetry(t) = &s.event {
            telemetry_sources.insert(t.source.clone());
        }
        state.apply(&s);
        true
    })
    .unwrap();
    let count = |p: &Path| {
        let mut n = 0;
        read_file(p, OnCorrupt::Stop, |_| {
            n += 1;
            true
        })
        .unwrap();
        n
    };
    assert_eq!(
        report.events,
        count(&a) + count(&b) - 1,
        "both files' events, one header"
    );
    assert!(
        names.contains("h100:wmma+pv+async") && names.contains("h100-2:wmma+pv+async"),
        "{names:?}"
    );
    assert!(
        names.contains("h100:cudnn") && names.contains("h100-2:cudnn"),
        "cuDNN carries its source: {names:?}"
    );
    // Each GPU's telemetry is tagged; the screen follows the first's only,
    // so two GPUs' clocks never make one line.
    assert_eq!(
        telemetry_sources.into_iter().collect::<Vec<_>>(),
        ["h100", "h100-2"]
    );
    assert!(!state.telemetry.is_empty());
    assert!(state.telemetry.iter().all(|t| t.source == "h100"));
    let h = state.header.as_ref().unwrap();
    assert_eq!(
        h.sources
            .iter()
            .map(|s| s.label.as_str())
            .collect::<Vec<_>>(),
        ["h100", "h100-2"]
    );
    // One GPU model named once.
    assert_eq!(h.gpu.as_ref().unwrap().name, "NVIDIA H100 80GB HBM3");
    // The same variant on both GPUs, one row; its ratio is of the two medians.
    let (labels, rows) = attnscope::export::across::rows(&state).unwrap();
    assert_eq!(labels, ["h100", "h100-2"]);
    let row = rows.iter().find(|r| r.variant == "wmma+pv+async").unwrap();
    assert_eq!(row.shape, "B2 H8 S512 D64", "the one shape both measured");
    let (x, y) = (row.median_ns[0].unwrap(), row.median_ns[1].unwrap());
    assert!(
        (15_000.0..16_500.0).contains(&x) && (15_000.0..16_500.0).contains(&y),
        "{x} {y}"
    );
    // ÷ cuDNN divides by the same source's cuDNN (the tour timed cuDNN at
    // another shape only: none there).
    let at_mission = |name: &str| {
        state
            .variants
            .keys()
            .find(|k| k.variant.name() == name && k.shape.s == 512)
            .unwrap()
    };
    let vs = state
        .speedup_vs_cudnn(at_mission("h100-2:wmma+pv+async"))
        .unwrap();
    assert!(vs.value > 0.3 && vs.value < 0.6, "{vs:?}");
    assert!(
        state
            .speedup_vs_cudnn(at_mission("h100:wmma+pv+async"))
            .is_none()
    );
    let (code, text, _) = run(&["replay", out.to_str().unwrap(), "--summary"]);
    assert_eq!(code, 0);
    assert!(
        text.contains("across sources") && text.contains("source h100: NVIDIA H100"),
        "{text}"
    );
    assert!(
        text.contains("the kernel's source differs between sources"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_merges_are_refused_with_one_line() {
    let dir = scratch("bad");
    let (a, b) = (shipped(TOUR), shipped(REMOTE));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = dir.join("m.jsonl");
    let o = out.to_str().unwrap();
    let junk = dir.join("junk.jsonl");
    std::fs::write(&junk, "hello\n").unwrap();
    // zstd's magic, then bytes that are not zstd.
    let corrupt = dir.join("corrupt.jsonl.zst");
    std::fs::write(&corrupt, b"\x28\xb5\x2f\xfdnot zstd at all\n").unwrap();
    let cases: [(Vec<&str>, i32, &str); 7] = [
        (vec!["merge", a, "--out", o], 2, "2 values required"),
        (
            vec!["merge", a, b, "--out", o, "--labels", "x"],
            2,
            "2 files but 1 labels",
        ),
        (
            vec!["merge", a, b, "--out", o, "--labels", "x,x"],
            2,
            "'x' is given twice",
        ),
        (
            vec!["merge", a, b, "--out", o, "--labels", "x,a b"],
            2,
            "'a b' is not usable",
        ),
        (
            vec!["merge", a, "/nonexistent.jsonl", "--out", o],
            3,
            "no such session file",
        ),
        (
            vec!["merge", a, junk.to_str().unwrap(), "--out", o],
            3,
            "not a session file",
        ),
        (
            vec!["merge", corrupt.to_str().unwrap(), b, "--out", o],
            3,
            "corrupt.jsonl.zst: the zstd data cannot be decoded",
        ),
    ];
    for (args, want, says) in cases {
        let (code, _, err) = run(&args);
        assert_eq!(code, want, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}: nothing written");
    }
    std::fs::write(&out, "keep me\n").unwrap();
    let (code, _, err) = run(&["merge", a, b, "--out", o]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cannot write") && err.contains("exists"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "keep me\n",
        "an existing file is kept"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_arguments_are_checked_before_the_gpu() {
    let dir = scratch("sweep");
    let o = dir.join("s.jsonl");
    let o = o.to_str().unwrap();
    for (args, says) in [
        (vec!["sweep", "--out", o], "--shapes"),
        (vec!["sweep", "--shapes", "2,8,512", "--out", o], "B,H,S,D"),
        (
            vec![
                "sweep",
                "--shapes",
                "2,8,512,64",
                "--out",
                o,
                "--slice",
                "2/2",
            ],
            "0 ≤ I < N",
        ),
        (
            vec![
                "sweep",
                "--shapes",
                "2,8,512,64",
                "--out",
                o,
                "--causal",
                "maybe",
            ],
            "maybe",
        ),
        (
            vec![
                "sweep",
                "--shapes",
                "2,8,512,64",
                "--out",
                o,
                "--devices",
                "all",
                "--slice",
                "0/2",
            ],
            "cannot be used with",
        ),
        (
            vec![
                "sweep",
                "--shapes",
                "2,8,512,64;2,8,512,96",
                "--out",
                o,
                "--variants",
                "wmma+pv+async",
            ],
            "not 96",
        ),
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    if attnscope::gpu::probe().is_err() {
        let (code, _, err) = run(&[
            "sweep",
            "--shapes",
            "1,1,64,64",
            "--variants",
            "scalar",
            "--out",
            o,
        ]);
        assert_eq!(code, 4, "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
