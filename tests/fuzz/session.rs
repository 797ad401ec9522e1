//! Session files: pieces of the shipped sessions and the fixtures, damaged
//! (values replaced, fields dropped, kinds renamed, lines repeated, cut,
//! shuffled, spliced, bytes flipped, compressed and cut again), through
//! the reader both ways, the fold, the screen, the text and JSON summaries
//! and everything `export` writes.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::OnceLock;

use attnscope::export::{export_in_memory, summary};
use attnscope::metrics::gates::GateSet;
use attnscope::session::Stamped;
use attnscope::session::reader::{OnCorrupt, read_stream};
use attnscope::ui::state::UiState;
use serde_json::Value;

use super::harness::{self, Rng};
use super::mutate;

/// Each seed: its lines, the header first.
fn seeds() -> &'static Vec<Vec<String>> {
    static SEEDS: OnceLock<Vec<Vec<String>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<_> = ["tests/fixtures", "sessions"]
            .iter()
            .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| attnscope::session::compress::is_session_name(p))
            .collect();
        files.sort();
        let mut seeds: Vec<Vec<String>> = files
            .iter()
            .map(|p| {
                attnscope::session::open(p)
                    .unwrap()
                    .lines()
                    .map(Result::unwrap)
                    .collect()
            })
            .collect();
        seeds.push(extra_kinds(&seeds[0][0]));
        seeds
    })
}

/// Event kinds the recordings lack: errors, failed builds, a reloaded
/// manifest, an unknown kind.
fn extra_kinds(header: &str) -> Vec<String> {
    let rowwarp = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/rowwarp/rowwarp.toml"),
    )
    .unwrap();
    let loaded = serde_json::json!({"t_us": 40, "event": {"type": "kernel_loaded", "label": "rw",
        "name": "rowwarp", "manifest": rowwarp, "dir": null, "source_hash": null}});
    vec![
        header.to_string(),
        r#"{"t_us":10,"event":{"type":"error","source":"cupti","message":"refused","variant":"wmma"}}"#.into(),
        r#"{"t_us":20,"event":{"type":"build_failed","variant":"wmma+pv","arch":"sm_90","log":"x.cu(1): error: no"}}"#.into(),
        r#"{"t_us":30,"event":{"type":"error","source":"nvml","message":"no NVML","variant":null}}"#.into(),
        loaded.to_string(),
        r#"{"t_us":50,"event":{"type":"latency","variant":"rw:smem+exp2","shape":{"b":1,"h":1,"s":64,"d":64,"causal":true},"l2":"cold","regime":"isolated","samples_ns":[5,6,7],"sm_clock_mhz":null,"throttled":true,"timer":"events","gap_us":10}}"#.into(),
        r#"{"t_us":60,"event":{"type":"from_the_future","x":1}}"#.into(),
    ]
}

/// A window of a seed: its header and up to 80 lines from anywhere in it.
fn window(rng: &mut Rng) -> Vec<String> {
    let seed = rng.pick(seeds());
    let start = 1 + rng.below(seed.len().saturating_sub(1));
    let len = 1 + rng.below(80);
    let mut lines = vec![seed[0].clone()];
    lines.extend(
        seed[start.min(seed.len())..(start + len).min(seed.len())]
            .iter()
            .cloned(),
    );
    lines
}

const KINDS: [&str; 15] = [
    "header",
    "variant_selected",
    "build_finished",
    "build_failed",
    "latency",
    "measurement_done",
    "correctness",
    "counter_progress",
    "counters",
    "telemetry",
    "ab_result",
    "error",
    "bookmark",
    "kernel_loaded",
    "nonsense",
];

/// One change to one line, as JSON when it is JSON.
fn change_line(rng: &mut Rng, line: &mut String) {
    let Ok(mut v) = serde_json::from_str::<Value>(line) else {
        let mut b = std::mem::take(line).into_bytes();
        mutate::bytes(rng, &mut b);
        *line = String::from_utf8_lossy(&b).into_owned();
        return;
    };
    match rng.below(8) {
        0 => v["event"]["type"] = Value::from(*rng.pick(&KINDS)),
        1 => v["t_us"] = mutate::number(rng),
        _ => {
            if let Some(event) = v.get_mut("event") {
                mutate::json(rng, event)
            }
        }
    }
    *line = v.to_string();
}

pub fn generate(rng: &mut Rng, _index: u64) -> Vec<u8> {
    let mut lines = window(rng);
    for _ in 0..1 + rng.below(4) {
        let n = lines.len();
        match rng.below(12) {
            // Most changes go to values: that is what reaches the fold.
            0..=4 => {
                let i = if rng.one_in(8) { 0 } else { rng.below(n) };
                change_line(rng, &mut lines[i]);
            }
            5 => {
                let line = lines[rng.below(n)].clone();
                // Many copies of a short line; a few of a long one (an input
                // of tens of MB measures speed, not whether it ends).
                let most = if rng.one_in(4) {
                    (400_000 / line.len().max(1)).clamp(8, 2000)
                } else {
                    8
                };
                let times = 1 + rng.below(most);
                let at = rng.below(n + 1);
                lines.splice(at..at, std::iter::repeat_n(line, times));
            }
            6 => {
                let (i, j) = (rng.below(n), rng.below(n));
                lines.swap(i, j);
            }
            7 => {
                lines.remove(rng.below(n));
            }
            8 => lines.extend(window(rng).into_iter().skip(usize::from(rng.one_in(2)))),
            9 => {
                let i = rng.below(n);
                let mut b = std::mem::take(&mut lines[i]).into_bytes();
                mutate::bytes(rng, &mut b);
                lines[i] = String::from_utf8_lossy(&b).into_owned();
            }
            10 => lines.reverse(),
            _ => lines.truncate(rng.below(n + 1)),
        }
        if lines.is_empty() {
            break;
        }
    }
    finish(rng, lines)
}

/// Lines to a file's bytes: line ends, a BOM, a cut, compression.
fn finish(rng: &mut Rng, lines: Vec<String>) -> Vec<u8> {
    let end = if rng.one_in(10) { "\r\n" } else { "\n" };
    let mut bytes = lines.join(end).into_bytes();
    if !rng.one_in(5) {
        bytes.extend_from_slice(end.as_bytes());
    }
    if rng.one_in(30) {
        bytes.splice(0..0, [0xEF, 0xBB, 0xBF]);
    }
    if rng.one_in(12) {
        mutate::bytes(rng, &mut bytes);
    }
    let mut out = match rng.below(12) {
        0 => zstd::encode_all(&bytes[..], 1).unwrap(),
        1 => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(&bytes).unwrap();
            gz.finish().unwrap()
        }
        _ => bytes,
    };
    if rng.one_in(15) {
        mutate::bytes(rng, &mut out);
    }
    out
}

fn gates() -> &'static GateSet {
    static GATES: OnceLock<GateSet> = OnceLock::new();
    GATES.get_or_init(GateSet::default_set)
}

pub fn run(input: &[u8], index: u64) {
    let path = Path::new("fuzz.jsonl");
    let decode = || attnscope::session::compress::decode(std::io::Cursor::new(input.to_vec()));
    if let Ok(stream) = decode() {
        let _ = read_stream(stream, path, OnCorrupt::Stop, |_| true);
    }
    let Ok(stream) = decode() else { return };
    let mut events: Vec<Stamped> = Vec::new();
    let Ok(read) = read_stream(stream, path, OnCorrupt::Skip, |s| {
        events.push(s);
        true
    }) else {
        return;
    };
    harness::reached(match events.len() {
        1 => "session: header only",
        _ if read.skipped.is_empty() => "session: read, no corrupt line",
        _ => "session: read, corrupt lines skipped",
    });
    let mut ui = UiState::replay(gates().clone(), "fuzz.jsonl".into(), 1.0, None);
    for s in &events {
        ui.apply(s);
    }
    let text = summary::to_text(&ui.session, gates(), &read);
    assert!(!text.is_empty());
    no_endless_number(&text);
    let json = summary::to_json(&ui.session, gates(), &read).to_string();
    serde_json::from_str::<Value>(&json).expect("the JSON summary parses");
    screen(&ui, 120, 40);
    if index.is_multiple_of(4) {
        screen(&ui, 80, 24);
    }
    exported(&events, index);
}

fn screen(ui: &UiState, w: u16, h: u16) {
    let area = ratatui::layout::Rect::new(0, 0, w, h);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    attnscope::ui::view::render_to(area, &mut buf, ui);
    let rows: Vec<String> = buf
        .content()
        .chunks(usize::from(w))
        .map(|row| row.iter().map(|c| c.symbol()).collect())
        .collect();
    no_endless_number(&rows.join("\n"));
}

/// No number printed with dozens of digits: a value from a damaged file
/// (1e300, u64::MAX sums) is shown short or not at all. The fuzz inputs
/// hold no digit strings that long of their own.
fn no_endless_number(text: &str) {
    let mut run = 0;
    for (i, c) in text.char_indices() {
        run = if c.is_ascii_digit() { run + 1 } else { 0 };
        if run >= 40 {
            let from = text[..i].rfind('\n').map_or(0, |n| n + 1);
            let line: String = text[from..].chars().take(300).collect();
            if std::env::var_os("ATTNSCOPE_FUZZ_DUMP").is_some() {
                eprintln!("{text}");
            }
            panic!("a number of 40 digits or more: {line}");
        }
    }
}

/// Everything export writes, checked to be what it claims: the trace is
/// JSON, every samples row has the header's columns.
fn exported(events: &[Stamped], index: u64) {
    let Ok(out) = export_in_memory(events, gates(), index.is_multiple_of(50)) else {
        return;
    };
    harness::reached("session: exported");
    serde_json::from_slice::<Value>(&out.trace).expect("the trace is JSON");
    let csv = String::from_utf8(out.samples_csv).expect("the samples CSV is UTF-8");
    let mut rows = csv.lines();
    let columns = rows.next().unwrap().split(',').count();
    for row in rows {
        assert_eq!(row.split(',').count(), columns, "a samples row: {row}");
    }
    assert_eq!(out.svgs.len(), 5);
    for svg in &out.svgs {
        no_endless_number(svg);
    }
}
