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

/// `attnscope merge A B --out OUT --labels a,b`, which must succeed.
fn merge_as_a_and_b(a: &Path, b: &Path, out: &Path) {
    let (code, _, err) = run(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--labels",
        "a,b",
    ]);
    assert_eq!(code, 0, "{err}");
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
    // Recorded 33.6 hours apart: the merge says the timeline spans that.
    assert!(
        stdout.contains("note: the sources started 33.6 h apart"),
        "{stdout}"
    );
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
            "session file /nonexistent.jsonl does not exist",
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
    // What a path really is, as replay says it (issue 57: "no such session file" for all three).
    let fifo = dir.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let d = dir.to_str().unwrap();
    let special: [(&str, String); 3] = [
        (
            "/dev/zero",
            "/dev/zero is a character device, not a session file".into(),
        ),
        (d, format!("{d} is a directory, not a session file")),
        (
            fifo.to_str().unwrap(),
            format!(
                "{} is a FIFO (named pipe), not a session file",
                fifo.display()
            ),
        ),
    ];
    for (path, says) in special {
        let (code, _, err) = run(&["merge", path, b, "--out", o]);
        assert_eq!(code, 3, "{path}: {err}");
        assert!(err.contains(&says), "{path}: {err}");
        assert!(!err.contains("no such session file"), "{path}: {err}");
        assert!(!out.exists(), "{path}: nothing written");
    }
    std::fs::write(&out, "keep me\n").unwrap();
    let (code, _, err) = run(&["merge", a, b, "--out", o]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("exists") && err.contains("never overwrites"),
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

/// The 2× H200 sweep, merged before merges sorted by time: gpu0's events,
/// then gpu1's, each on its own clock.
const SWEEP: &str = "20261123-184552_2xH200_sweep-devices-all.jsonl.zst";

/// A session file's lines as JSON, the header first.
fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    use std::io::BufRead;
    attnscope::session::open(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

fn write_lines(path: &Path, lines: &[serde_json::Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// The source label a merged line names (its variant's, or its telemetry
/// sample's); None for an event of no variant (a bookmark).
fn source_of(line: &serde_json::Value, labels: &[&str]) -> Option<usize> {
    let e = &line["event"];
    let named = e["source"]
        .as_str()
        .or(e["variant"].as_str())
        .or(e["a"].as_str())?;
    // Longest first: "h100-2:…" also starts with "h100".
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(labels[i].len()));
    order
        .into_iter()
        .find(|&i| named == labels[i] || named.starts_with(&format!("{}:", labels[i])))
}

/// (stamp, kind) of each line: what must line up between a source and its
/// share of the merged file.
fn stamps(lines: &[&serde_json::Value]) -> Vec<(u64, String)> {
    lines
        .iter()
        .map(|l| {
            (
                l["t_us"].as_u64().unwrap(),
                l["event"]["type"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Two runs that overlap in time merge into one timeline that never goes
/// back: each source's events in its own order where that order is in time
/// (a tie keeps the first source's first), and a source written out of
/// order (a headless run writes telemetry when it drains it) put in time
/// order too.
#[test]
fn a_merge_is_in_time_order_and_keeps_each_sources_order() {
    let dir = scratch("order");
    let tour = json_lines(&shipped(TOUR));
    let a = dir.join("a.jsonl");
    write_lines(&a, &tour);
    // The same run started 1.5 s later, each telemetry sample written three
    // lines after its place, as a headless run drains them.
    let mut late = tour.clone();
    late[0]["event"]["started_unix_ms"] =
        (tour[0]["event"]["started_unix_ms"].as_u64().unwrap() + 1500).into();
    let mut i = 1;
    while i + 3 < late.len() {
        if late[i]["event"]["type"] == "telemetry" {
            let sample = late.remove(i);
            late.insert(i + 3, sample);
            i += 4;
        } else {
            i += 1;
        }
    }
    let b = dir.join("b.jsonl");
    write_lines(&b, &late);
    let out = dir.join("ab.jsonl");
    merge_as_a_and_b(&a, &b, &out);
    let merged = json_lines(&out);
    assert_eq!(merged.len(), tour.len() + late.len() - 1, "one header");
    assert_eq!(merged[0]["event"]["type"], "header");
    let t: Vec<u64> = merged.iter().map(|l| l["t_us"].as_u64().unwrap()).collect();
    let back = t.windows(2).position(|w| w[1] < w[0]);
    assert_eq!(back, None, "time goes back after line {back:?}");
    // The sources really interleave: b's first event lands among a's.
    let labels = ["a", "b"];
    let first_b = merged[1..]
        .iter()
        .position(|l| source_of(l, &labels) == Some(1))
        .unwrap();
    let last_a = merged[1..]
        .iter()
        .rposition(|l| source_of(l, &labels) == Some(0))
        .unwrap();
    assert!(first_b < last_a, "{first_b} {last_a}");
    // Each source's share is its own events, shifted, in time order,
    // stable (b's out-of-place samples moved back, nothing else moved).
    for (src, (lines, shift)) in [(&tour, 0u64), (&late, 1_500_000)].into_iter().enumerate() {
        let mut own: Vec<(u64, String)> = stamps(&lines[1..].iter().collect::<Vec<_>>())
            .into_iter()
            .filter(|(_, kind)| kind != "bookmark")
            .map(|(t, kind)| (t + shift, kind))
            .collect();
        own.sort_by_key(|(t, _)| *t);
        let share: Vec<&serde_json::Value> = merged[1..]
            .iter()
            .filter(|l| source_of(l, &labels) == Some(src))
            .collect();
        assert_eq!(stamps(&share), own, "source {}", labels[src]);
    }
    // A tie between sources keeps the first source's event first.
    for w in merged[1..].windows(2) {
        if let (Some(x), Some(y)) = (source_of(&w[0], &labels), source_of(&w[1], &labels))
            && w[0]["t_us"] == w[1]["t_us"]
        {
            assert!(x <= y, "{} then {}", w[0], w[1]);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The shipped sweep's file is out of order and stays as recorded (its
/// sources are not in the run archive, so it cannot be merged again): the
/// readers put it in order. The fold's log (the screen's event panel, the
/// summary's errors) and a replay never go back in time.
#[test]
fn the_shipped_sweep_merged_source_by_source_reads_in_time_order() {
    use attnscope::session::replay::{ReplayControl, ReplayOut, spawn_replay};
    let path = shipped(SWEEP);
    let mut file_order = Vec::new();
    let mut state = SessionState::default();
    read_file(&path, OnCorrupt::Stop, |s| {
        file_order.push(s.t_us);
        state.apply(&s);
        true
    })
    .unwrap();
    assert!(
        file_order.windows(2).any(|w| w[1] < w[0]),
        "the file is out of order (else this test tests nothing)"
    );
    let logged: Vec<u64> = state.log.iter().map(|l| l.t_us).collect();
    assert!(logged.windows(2).all(|w| w[0] <= w[1]), "{logged:?}");
    assert!(
        logged.len() > 40,
        "gpu0's and gpu1's lines: {}",
        logged.len()
    );

    let (ctl_tx, ctl_rx) = std::sync::mpsc::channel();
    let (out_tx, out_rx) = std::sync::mpsc::channel();
    ctl_tx.send(ReplayControl::ToEnd).unwrap();
    let handle = spawn_replay(path, 256.0, OnCorrupt::Stop, ctl_rx, move |o| {
        out_tx.send(o).is_ok()
    });
    let mut played = Vec::new();
    loop {
        match out_rx.recv().unwrap() {
            ReplayOut::Event(s) => played.push(s.t_us),
            ReplayOut::Reset => panic!("no seek was asked for"),
            ReplayOut::SkippedIdle(_) => {}
            ReplayOut::Ended(r) => {
                assert!(r.is_ok(), "{r:?}");
                break;
            }
        }
    }
    assert_eq!(played.len(), file_order.len(), "every event, once");
    let mut sorted = file_order.clone();
    sorted.sort();
    assert_eq!(played, sorted, "played in time order");
    drop(ctl_tx);
    drop(out_rx);
    handle.join().unwrap();
}

/// Issue 39: a tile the sweep could not run at D=128 (its shared memory is
/// over the H200's limit) was a row of dashes. The session recorded no
/// reason; its header and the tile's manifest give one, in the text and
/// the JSON summaries alike.
#[test]
fn a_tile_that_did_not_run_says_why_in_the_summary() {
    let path = shipped(SWEEP);
    let (code, text, err) = run(&["replay", path.to_str().unwrap(), "--summary"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("gpu") && l.contains("mma+async@64x128s2w8k2g"))
        .collect();
    assert_eq!(rows.len(), 6, "three shapes on two GPUs: {rows:?}");
    let d128: Vec<&&str> = rows.iter().filter(|l| l.contains("D128")).collect();
    assert_eq!(d128.len(), 2, "{rows:?}");
    for row in d128 {
        assert!(
            row.contains("not timed — did not fit: needs 274 KiB of shared memory per block at D=128, the NVIDIA H200 allows 227 KiB"),
            "{row}"
        );
    }
    let (code, json, err) = run(&["replay", path.to_str().unwrap(), "--summary", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let untimed: Vec<(&str, &str)> = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| Some((x["variant"].as_str()?, x["not_timed"].as_str()?)))
        .collect();
    assert_eq!(untimed.len(), 2, "{untimed:?}");
    assert!(
        untimed
            .iter()
            .all(|(_, why)| why.starts_with("did not fit"))
    );
}

/// A Python variant measured on two GPUs stays two variants in the merge
/// (`a:py:flex`, `b:py:flex`), each divided by its own source's cuDNN, as a
/// kernel's and cuDNN's do: one histogram never mixes the two GPUs.
#[test]
fn a_python_variant_of_two_sources_stays_two_variants() {
    let dir = scratch("py");
    // The tour with its scalar variant renamed a Python function's.
    let text: String = json_lines(&shipped(TOUR))
        .iter()
        .map(|l| format!("{l}\n").replace("\"scalar\"", "\"py:flex\""))
        .collect();
    assert!(text.contains("\"py:flex\""));
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&a, &text).unwrap();
    std::fs::write(&b, &text).unwrap();
    let out = dir.join("ab.jsonl");
    merge_as_a_and_b(&a, &b, &out);
    let merged = std::fs::read_to_string(&out).unwrap();
    // Past the header (whose sources keep their command lines as typed).
    let (_, merged) = merged.split_once('\n').unwrap();
    assert!(
        !merged.contains("\"py:flex\""),
        "an unsourced py:flex is left"
    );
    assert!(merged.contains("\"a:py:flex\"") && merged.contains("\"b:py:flex\""));
    let mut state = SessionState::default();
    read_file(&out, OnCorrupt::Stop, |s| {
        state.apply(&s);
        true
    })
    .unwrap();
    let names: Vec<String> = state.variants.keys().map(|k| k.variant.name()).collect();
    for name in ["a:py:flex", "b:py:flex"] {
        let v: attnscope::session::Variant = name.parse().unwrap();
        assert_eq!(v.name(), name);
        assert_eq!(v.python_spec().as_deref(), Some("flex"));
        assert_eq!(v.cudnn_beside().name(), format!("{}:cudnn", &name[..1]));
        assert!(names.contains(&name.to_string()), "{names:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
