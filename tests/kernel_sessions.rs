//! Sessions of kernels other than the bundled one: the header records each
//! kernel's manifest, and a replay on a machine that never saw the kernel
//! folder names and shows their toggles as recorded; a manifest changed
//! mid-session is recorded where it changed. Its own test binary: one test
//! makes another kernel the primary one, which the whole process sees.

use std::path::Path;

use attnscope::model::SessionState;
use attnscope::session::event::*;
use attnscope::session::reader::{OnCorrupt, read_stream};

const ROWWARP: &str = include_str!("../examples/rowwarp/rowwarp.toml");

fn line(v: serde_json::Value) -> String {
    format!("{v}\n")
}

fn header(kernels: serde_json::Value) -> String {
    line(
        serde_json::json!({"t_us": 0, "event": {"type": "header", "tool": "attnscope",
        "tool_version": "test", "schema_version": SCHEMA_VERSION, "host": "h",
        "command_line": [], "started_unix_ms": 0, "kernels": kernels}}),
    )
}

fn selected(t: u64, variant: &str) -> String {
    line(
        serde_json::json!({"t_us": t, "event": {"type": "variant_selected",
        "variant": variant, "shape": {"b": 2, "h": 8, "s": 512, "d": 64, "causal": false}}}),
    )
}

fn read(text: &str) -> (Vec<Stamped>, attnscope::session::reader::ReadReport) {
    let mut out = Vec::new();
    let report = read_stream(
        text.as_bytes(),
        Path::new("mem.jsonl"),
        OnCorrupt::Skip,
        |s| {
            out.push(s);
            true
        },
    )
    .unwrap();
    (out, report)
}

fn variants(events: &[Stamped]) -> Vec<attnscope::session::Variant> {
    events
        .iter()
        .filter_map(|s| match &s.event {
            Event::VariantSelected(v) => Some(v.variant),
            _ => None,
        })
        .collect()
}

#[test]
fn recorded_kernels_replay_without_their_folders() {
    // A label this process has never seen, with a manifest only the file has.
    let text = header(serde_json::json!([
        {"label": "rw", "name": "rowwarp", "manifest": ROWWARP, "dir": "/elsewhere/rowwarp"}
    ])) + &selected(1, "rw:smem+exp2@4w8k64")
        + &selected(2, "wmma+pv+async");
    let (events, report) = read(&text);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let vs = variants(&events);
    let rw = vs[0];
    let m = rw.manifest().unwrap();
    assert_eq!(m.name, "rowwarp");
    assert!(rw.has("smem") && rw.has("exp2"));
    assert_eq!(rw.name(), "rw:smem+exp2@4w8k64");
    // The bundled kernel is still what bare names mean.
    assert_eq!(vs[1].manifest().unwrap().name, "attention");
    // The fold keeps both apart; the screen's table names them.
    let mut state = SessionState::default();
    for e in &events {
        state.apply(e);
    }
    assert_eq!(state.current.unwrap().variant, vs[1]);

    // Mid-session the manifest changes: exp2 is renamed fastexp. Lines
    // before read with the old manifest, lines after with the new one.
    let renamed = ROWWARP.replace("exp2", "fastexp");
    let text = header(serde_json::json!([
        {"label": "rw2", "name": "rowwarp", "manifest": ROWWARP}
    ])) + &selected(1, "rw2:exp2")
        + &line(
            serde_json::json!({"t_us": 2, "event": {"type": "kernel_loaded",
            "label": "rw2", "name": "rowwarp", "manifest": renamed}}),
        )
        + &selected(3, "rw2:fastexp");
    let (events, report) = read(&text);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let vs = variants(&events);
    assert_eq!(vs.len(), 2);
    assert!(vs[0].has("exp2") && vs[1].has("fastexp"));
    assert_ne!(vs[0].kernel, vs[1].kernel);
    assert!(
        events
            .iter()
            .any(|e| matches!(e.event, Event::KernelLoaded(_)))
    );

    // A manifest this attnscope cannot read is said, and only the lines
    // that need it are lost.
    let text = header(serde_json::json!([
        {"label": "bad", "name": "bad", "manifest": "[kernel]\nname = 3\n"}
    ])) + &selected(1, "bad:smem")
        + &selected(2, "scalar");
    let (events, report) = read(&text);
    assert_eq!(report.skipped.len(), 2, "{:?}", report.skipped);
    assert!(
        report.skipped[0]
            .message
            .contains("a kernel manifest in the header cannot be read")
    );
    assert!(report.skipped[1].message.contains("unknown kernel 'bad'"));
    assert_eq!(variants(&events).len(), 1);

    // Last, a session whose primary kernel was rowwarp (`--kernels`): its
    // bare names are rowwarp's, here too.
    let text = header(serde_json::json!([
        {"label": "", "name": "rowwarp", "manifest": ROWWARP}
    ])) + &selected(1, "smem@4w4");
    let (events, report) = read(&text);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let v = variants(&events)[0];
    assert_eq!(v.manifest().unwrap().name, "rowwarp");
    assert_eq!(v.name(), "smem@4w4");
    let bundled: attnscope::session::Variant = "bundled:wmma".parse().unwrap();
    assert_eq!(bundled.name(), "bundled:wmma");
}
