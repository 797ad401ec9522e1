//! Issue 57 §4, the exported pictures of every shipped session: the
//! roofline's and the time chart's tick labels never collide, the latency
//! axis turns logarithmic where the batch medians span more than ten times,
//! and the gates chart draws every reason whole.
//!
//! Reading a session registers its kernels' labels in a process-wide
//! registry, and variant names follow it: every export and replay here runs
//! under one lock, and in a test binary of its own, so that no other test's
//! names change under it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use attnscope::export::{Gathered, HEIGHT, WIDTH, export};
use attnscope::metrics::gates::{GateSet, Status};
use attnscope::session::event::Event;
use attnscope::session::reader::{OnCorrupt, read_file};

static REGISTRY: Mutex<()> = Mutex::new(());

fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[12..16], b"IHDR", "{} is not a PNG", path.display());
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

fn sessions() -> Vec<PathBuf> {
    let mut sessions: Vec<PathBuf> = std::fs::read_dir("sessions")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.zst"))
        .collect();
    sessions.sort();
    assert!(sessions.len() >= 4, "{sessions:?}");
    sessions
}

/// The registry to this test alone while it lives.
fn hold() -> std::sync::MutexGuard<'static, ()> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// `session` exported into a fresh folder, and its state replayed apart
/// from the exporter (call with the registry held).
fn exported(session: &Path) -> (tempfile::TempDir, Gathered) {
    let dir = tempfile::tempdir().unwrap();
    export(
        session,
        dir.path(),
        &GateSet::default_set(),
        OnCorrupt::Stop,
    )
    .unwrap();
    let mut g = Gathered::default();
    read_file(session, OnCorrupt::Stop, |s| {
        g.state.apply(&s);
        true
    })
    .unwrap();
    (dir, g)
}

/// A text of an SVG where plotters drew it: its anchor point, font size
/// (SVG units), horizontal anchor and words (entities decoded).
#[derive(Debug)]
struct Placed {
    x: f64,
    y: f64,
    size: f64,
    anchor: String,
    rotated: bool,
    text: String,
}

fn svg_placed(svg: &str) -> Vec<Placed> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let (attrs, rest) = t.split_once('>')?;
            let attr = |name: &str| -> Option<String> {
                let at = attrs.find(&format!(" {name}=\""))? + name.len() + 3;
                Some(attrs[at..].split('"').next()?.to_string())
            };
            let text = rest.split_once("</text>")?.0.trim();
            Some(Placed {
                x: attr("x")?.parse().ok()?,
                y: attr("y")?.parse().ok()?,
                size: attr("font-size")?.parse().ok()?,
                anchor: attr("text-anchor").unwrap_or_else(|| "start".into()),
                rotated: attr("transform").is_some(),
                text: text
                    .replace("&apos;", "'")
                    .replace("&quot;", "\"")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&amp;", "&"),
            })
        })
        .collect()
}

/// A tick label: pixels along its axis, its text, its font size.
type Label = (f64, String, f64);

/// The tick labels of a chart's axes: numbers in a row under the plot
/// (centred, one y: "x"), or in a column beside it (right-aligned left of
/// the plot: "y"; left-aligned right of it: "y2"; one x). Each axis's
/// labels as (pixels along it, label, font size), in order along it.
fn axes(svg: &str) -> Vec<(&'static str, Vec<Label>)> {
    let numbers: Vec<Placed> = svg_placed(svg)
        .into_iter()
        .filter(|p| !p.rotated && p.text.parse::<f64>().is_ok())
        .collect();
    let mut out = Vec::new();
    let mut group = |kind: &'static str, anchor: &str, key: fn(&Placed) -> f64| {
        let mut by: std::collections::BTreeMap<i64, Vec<Label>> = Default::default();
        for p in numbers.iter().filter(|p| p.anchor == anchor) {
            let along = if kind == "x" { p.x } else { p.y };
            by.entry(key(p).round() as i64)
                .or_default()
                .push((along, p.text.clone(), p.size));
        }
        for (_, mut labels) in by {
            if labels.len() >= 2 {
                labels.sort_by(|a, b| a.0.total_cmp(&b.0));
                out.push((kind, labels));
            }
        }
    };
    group("x", "middle", |p| p.y);
    group("y", "end", |p| p.x);
    group("y2", "start", |p| p.x);
    out
}

/// Issue 57: the roofline's x axis read `700.0800.0 900.01000.0`, with
/// 1000.0 twice, and its y axis had 1000.0 twice too. On every shipped
/// session, every axis of the roofline and the time chart has distinct
/// labels, each clear of the next by more than their width (x; the bundled
/// monospace font is 0.65 of the SVG's font size a character at most) or
/// their height (y).
#[test]
fn no_two_tick_labels_collide_on_any_shipped_session() {
    let _held = hold();
    for session in sessions() {
        let (dir, _) = exported(&session);
        for chart in ["roofline", "latency_over_time"] {
            let svg = std::fs::read_to_string(dir.path().join(format!("{chart}.svg"))).unwrap();
            let found = axes(&svg);
            let what = format!("{} {chart}", session.display());
            let kinds: Vec<&str> = found.iter().map(|a| a.0).collect();
            assert!(
                kinds.contains(&"x") && kinds.contains(&"y"),
                "{what}: {found:?}"
            );
            for (kind, labels) in &found {
                let mut seen = std::collections::BTreeSet::new();
                for (_, l, _) in labels {
                    assert!(seen.insert(l), "{what}: {l} twice on {kind}: {labels:?}");
                }
                for w in labels.windows(2) {
                    let ((a, la, size), (b, lb, _)) = (&w[0], &w[1]);
                    let need = match *kind {
                        "x" => (la.len() + lb.len()) as f64 / 2.0 * size * 0.65 + 2.0,
                        _ => size * 1.24,
                    };
                    assert!(
                        b - a >= need,
                        "{what}: {la} at {a} and {lb} at {b} on {kind} overlap ({need} px needed)"
                    );
                }
            }
        }
    }
}

/// Issue 57: 15 µs and 1.8 ms shared one linear axis. Where a session's
/// batch medians span more than ten times, the latency axis is logarithmic
/// (its labels sit at equal steps of log value), else linear.
#[test]
fn the_latency_axis_is_logarithmic_where_the_medians_span_ten_times() {
    let _held = hold();
    let mut logs = 0;
    for session in sessions() {
        let (dir, _) = exported(&session);
        // The medians, found apart from the exporter.
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        read_file(&session, OnCorrupt::Stop, |s| {
            if let Event::Latency(b) = &s.event
                && !b.samples_ns.is_empty()
            {
                let mut v = b.samples_ns.clone();
                v.sort();
                let m = v[v.len() / 2] as f64 / 1e3;
                (lo, hi) = (lo.min(m), hi.max(m));
            }
            true
        })
        .unwrap();
        let svg = std::fs::read_to_string(dir.path().join("latency_over_time.svg")).unwrap();
        // The left axis: right-aligned numbers left of the plot.
        let (_, labels) = axes(&svg)
            .into_iter()
            .find(|(kind, _)| *kind == "y")
            .unwrap();
        assert!(labels.len() >= 3, "{}: {labels:?}", session.display());
        let log = hi / lo > 10.0;
        logs += usize::from(log);
        let f = |v: f64| if log { v.log10() } else { v };
        // Pixels per unit of f(value) between the first and last labels;
        // every other label where that line puts it, within 1.5 px.
        let pts: Vec<(f64, f64)> = labels
            .iter()
            .map(|(y, l, _)| (f(l.parse::<f64>().unwrap()), *y))
            .collect();
        let last = pts[pts.len() - 1];
        let slope = (last.1 - pts[0].1) / (last.0 - pts[0].0);
        for (v, y) in &pts {
            let want = pts[0].1 + slope * (v - pts[0].0);
            assert!(
                (want - y).abs() <= 1.5,
                "{}: medians {lo}..{hi} µs want a {} axis: {labels:?}",
                session.display(),
                if log { "log" } else { "linear" }
            );
        }
    }
    assert!(logs >= 1, "the H100 tour spans 15 µs to 1.8 ms");
}

/// Issue 57: the gates chart cut its reasons at 48 characters. On every
/// shipped session each n/a reason is drawn whole, each FAIL with what it
/// puts at risk, and each threshold with where it came from.
#[test]
fn the_gates_chart_draws_every_reason_whole() {
    let _held = hold();
    let set = GateSet::default_set();
    let (mut reasons, mut risks, mut bases) = (0, 0, 0);
    for session in sessions() {
        let (dir, g) = exported(&session);
        let (a, b) = g.pair().unwrap();
        let svg = std::fs::read_to_string(dir.path().join("gates.svg")).unwrap();
        // Lines wrap anywhere: compare without white space.
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        let texts: Vec<String> = svg_placed(&svg).into_iter().map(|p| p.text).collect();
        let drawn = squeeze(&texts.join(" "));
        for key in std::iter::once(a).chain(b) {
            for r in g.state.gates(&set, &key) {
                let mut want = Vec::new();
                if let Status::NotApplicable(why) = &r.status {
                    // As a file says it: no "press g" to a picture.
                    want.push(attnscope::export::reason_in_a_file(why));
                    reasons += 1;
                }
                if let (Status::Fail, Some(risk)) = (&r.status, &r.protects) {
                    want.push(risk.clone());
                    risks += 1;
                }
                if let Some(basis) = &r.basis {
                    want.push(basis.clone());
                    bases += 1;
                }
                for w in want {
                    assert!(
                        drawn.contains(&squeeze(&w)),
                        "{}: {} {}: `{w}` not drawn whole",
                        session.display(),
                        key.variant,
                        r.name
                    );
                }
            }
        }
        let png = dir.path().join("gates.png");
        let (w, h) = png_size(&png);
        assert_eq!(w, WIDTH);
        assert!(h >= HEIGHT, "{h}");
    }
    assert!(
        reasons > 0 && risks > 0 && bases > 0,
        "{reasons} {risks} {bases}"
    );
}
