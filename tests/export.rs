//! `attnscope export` of the fixture: every file there, each decodes as what
//! it claims, with the expected size, columns and events.

use std::path::Path;

use attnscope::export::{HEIGHT, WIDTH, export};
use attnscope::metrics::gates::GateSet;
use attnscope::session::event::Event;
use attnscope::session::reader::{OnCorrupt, read_file};

const FIXTURE: &str = "tests/fixtures/fixture_mission.jsonl";

fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

fn svg_size(path: &Path) -> (u32, u32) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.trim_end().ends_with("</svg>"),
        "{} is cut short",
        path.display()
    );
    let attr = |name: &str| -> u32 {
        let at = text.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        text[at..].split('"').next().unwrap().parse().unwrap()
    };
    (attr("width"), attr("height"))
}

#[test]
fn export_of_the_fixture_writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let written = export(
        Path::new(FIXTURE),
        &out,
        &GateSet::default_set(),
        OnCorrupt::Stop,
    )
    .unwrap();
    let names: Vec<String> = written
        .files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for chart in [
        "latency_histogram",
        "latency_over_time",
        "gates",
        "p50_per_variant",
    ] {
        let png = out.join(format!("{chart}.png"));
        let svg = out.join(format!("{chart}.svg"));
        assert!(names.contains(&format!("{chart}.png")), "{names:?}");
        let (w, h) = png_size(&png);
        assert_eq!(svg_size(&svg), (w, h), "{chart}");
        if chart == "gates" {
            // Taller where its words need more lines.
            assert!(w == WIDTH && h >= HEIGHT, "{chart}: {w}x{h}");
        } else {
            assert_eq!((w, h), (WIDTH, HEIGHT), "{chart}");
        }
        // A blank picture compresses to almost nothing; a drawn one does not.
        assert!(
            std::fs::metadata(&png).unwrap().len() > 10_000,
            "{chart}.png looks empty"
        );
        assert!(
            std::fs::read_to_string(&svg).unwrap().contains("<text"),
            "{chart}.svg has no text"
        );
    }

    // What the fixture holds, counted independently of the exporter.
    let (mut samples, mut batches, mut telemetry, mut counter_rows) =
        (0usize, 0usize, 0usize, 0usize);
    let mut variants = std::collections::BTreeSet::new();
    read_file(Path::new(FIXTURE), OnCorrupt::Stop, |s| {
        match &s.event {
            Event::Latency(b) => {
                samples += b.samples_ns.len();
                batches += 1;
                variants.insert(b.variant.to_string());
            }
            Event::Telemetry(_) => telemetry += 1,
            Event::Counters(c) => counter_rows += c.values.len(),
            _ => {}
        }
        true
    })
    .unwrap();

    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "t_us,variant,shape,regime,l2,timer,sm_clock_mhz,throttled,index,latency_ns"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), samples);
    assert!(
        rows.iter()
            .all(|r| r.len() == 10 && r[9].parse::<u64>().is_ok())
    );
    // Every sample names its regime.
    assert!(
        rows.iter()
            .all(|r| r[3] == "back-to-back" || r[3] == "interleaved")
    );

    let csv = std::fs::read_to_string(out.join("counters.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "\"variant\",\"shape\",\"metric\",\"unit\",\"value\",\"passes\",\"l2\",\"chip\""
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), counter_rows);
    assert!(counter_rows > 0, "the fixture has counters");
    assert!(
        rows.iter().all(|r| r.split("\",\"").count() == 8),
        "{rows:?}"
    );

    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("trace.json")).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!(count("X"), batches, "a slice per latency batch");
    let threads: std::collections::BTreeSet<String> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap().to_string())
        .collect();
    for v in &variants {
        assert!(threads.contains(v), "no track for {v}: {threads:?}");
    }
    let clock = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "SM clock (MHz)")
        .count();
    assert_eq!(
        clock, telemetry,
        "a counter-track point per telemetry sample"
    );
    assert!(
        events
            .iter()
            .all(|e| e["ph"] == "M" || e["ts"].as_f64().is_some())
    );
}

#[test]
fn a_corrupt_session_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "this is not a session\n").unwrap();
    let out = dir.path().join("out");
    let err = export(&bad, &out, &GateSet::default_set(), OnCorrupt::Skip).unwrap_err();
    assert_eq!(err.exit_code(), 3, "{err}");
    assert!(!out.exists(), "no folder for a file that is not a session");
}

/// A compressed session (zstd or gzip, whatever its name) exports to the
/// same files as the plain one; the CLI takes it too.
#[test]
fn export_of_a_compressed_session_matches_the_plain_one() {
    use attnscope::session::recorder::Recorder;
    let dir = tempfile::tempdir().unwrap();
    let mut events = Vec::new();
    read_file(Path::new(FIXTURE), OnCorrupt::Stop, |s| {
        events.push(s);
        true
    })
    .unwrap();
    let plain = dir.path().join("plain");
    let want = export(
        Path::new(FIXTURE),
        &plain,
        &GateSet::default_set(),
        OnCorrupt::Stop,
    )
    .unwrap();
    for name in ["f.jsonl.zst", "f.jsonl.gz"] {
        let file = dir.path().join(name);
        let mut rec = Recorder::create(&file).unwrap();
        for e in &events {
            rec.append(e).unwrap();
        }
        rec.close().unwrap();
        // Named as if plain: the content decides.
        let renamed = dir.path().join(format!("{name}-renamed.jsonl"));
        std::fs::copy(&file, &renamed).unwrap();
        for input in [&file, &renamed] {
            let out = dir
                .path()
                .join(format!("out-{}", input.file_name().unwrap().display()));
            let got = export(input, &out, &GateSet::default_set(), OnCorrupt::Stop).unwrap();
            assert_eq!(got.files.len(), want.files.len(), "{}", input.display());
            assert_eq!(got.read, want.read, "{}", input.display());
            for f in &want.files {
                let name = f.file_name().unwrap();
                if name.to_string_lossy().ends_with(".csv") {
                    assert_eq!(
                        std::fs::read(out.join(name)).unwrap(),
                        std::fs::read(f).unwrap(),
                        "{}",
                        name.display()
                    );
                }
            }
        }
    }
    let cli_out = dir.path().join("cli");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(["export", "--out"])
        .arg(&cli_out)
        .arg(dir.path().join("f.jsonl.zst"))
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(cli_out.join("latency_histogram.png").exists());
}

/// Issue 43: a race between variants with no samples left the histogram no
/// finite axis, and plotters looped on it. The chart says why it is empty;
/// the others draw as usual.
#[test]
fn a_chart_with_no_finite_axis_is_drawn_empty_with_a_note() {
    let mut events = Vec::new();
    read_file(
        Path::new("tests/fixtures/issue43_race_without_samples.jsonl"),
        OnCorrupt::Stop,
        |s| {
            events.push(s);
            true
        },
    )
    .unwrap();
    let out = attnscope::export::export_in_memory(&events, &GateSet::default_set(), false).unwrap();
    assert!(
        out.svgs[0].contains("Nothing to draw: no samples of wmma or wmma+pv in the regime shown"),
        "{}",
        &out.svgs[0][..out.svgs[0].len().min(2000)]
    );
    assert!(
        !out.svgs[1].contains("Nothing to draw"),
        "the time chart has its batch"
    );
}

/// The texts of an SVG, in order.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            Some(
                t.split_once('>')?
                    .1
                    .split_once("</text>")?
                    .0
                    .trim()
                    .to_string(),
            )
        })
        .collect()
}

/// Issue 39: the p50 chart of a merged 2-GPU sweep drew one shape of three
/// and both GPUs' bars in one colour. Every shape with samples has its
/// panel, each source its colour and a legend entry naming its GPU, and
/// the tile that did not fit at D=128 says so where its bars would be.
#[test]
fn the_p50_chart_of_a_merged_sweep_draws_every_shape_and_each_gpu_in_its_colour() {
    let session = Path::new("sessions/20261123-184552_2xH200_sweep-devices-all.jsonl.zst");
    let dir = tempfile::tempdir().unwrap();
    export(
        session,
        dir.path(),
        &GateSet::default_set(),
        OnCorrupt::Stop,
    )
    .unwrap();
    // What the session holds, counted apart from the exporter: the shapes
    // timed, and each source's (variant, shape) pairs with samples.
    let mut shapes = std::collections::BTreeSet::new();
    let mut bars: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    let mut sources = Vec::new();
    read_file(session, OnCorrupt::Stop, |s| {
        match &s.event {
            Event::Header(h) => {
                sources = h
                    .sources
                    .iter()
                    .map(|x| (x.label.clone(), x.gpu.clone().unwrap().name))
                    .collect()
            }
            Event::Latency(b) => {
                shapes.insert(b.shape.to_string());
                let name = b.variant.name();
                let source = name.split(':').next().unwrap().to_string();
                bars.entry(source)
                    .or_default()
                    .insert(format!("{name} {}", b.shape));
            }
            _ => {}
        }
        true
    })
    .unwrap();
    assert_eq!(shapes.len(), 3);
    assert_eq!(sources.len(), 2);

    let svg = std::fs::read_to_string(dir.path().join("p50_per_variant.svg")).unwrap();
    let texts = svg_texts(&svg);
    for shape in &shapes {
        assert!(texts.contains(shape), "no panel for {shape}: {texts:?}");
    }
    for (label, gpu) in &sources {
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with(&format!("{label}: {gpu}"))),
            "no legend entry for {label}: {texts:?}"
        );
    }
    // The bars (drawn at 0.8 opacity; the legend's swatches opaque): one
    // colour per source, as many bars of each as it has timed pairs.
    let mut fills: std::collections::BTreeMap<String, usize> = Default::default();
    for rect in svg.split("<rect").skip(1) {
        let rect = rect.split('>').next().unwrap();
        if rect.contains("opacity=\"0.8\"") {
            let fill = rect
                .split("fill=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            *fills.entry(fill.to_string()).or_default() += 1;
        }
    }
    let mut per_source: Vec<usize> = bars.values().map(|b| b.len()).collect();
    let mut per_colour: Vec<usize> = fills.values().copied().collect();
    per_source.sort();
    per_colour.sort();
    assert_eq!(
        per_colour, per_source,
        "bars by colour {fills:?}, by source {bars:?}"
    );
    let not_run: Vec<&String> = texts
        .iter()
        .filter(|t| t.starts_with("not timed"))
        .collect();
    assert_eq!(not_run.len(), 2, "the D=128 tile on each GPU: {texts:?}");
    assert!(
        not_run
            .iter()
            .all(|t| t.contains("did not fit") && t.contains("D=128")),
        "{not_run:?}"
    );
    let png = dir.path().join("p50_per_variant.png");
    assert_eq!(
        png_size(&png),
        (WIDTH, HEIGHT),
        "three small panels fit the usual size"
    );
}
