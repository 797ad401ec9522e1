//! Performance: `replay --summary` of a 100,000-event session, the re-fold a
//! replay seek backwards does for every shipped session, and one frame of the
//! main screen. Run: cargo bench --bench foundation

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Instant;

use attnscope::export::summary;
use attnscope::metrics::gates::GateSet;
use attnscope::model::state::SessionState;
use attnscope::session::compress::is_session_name;
use attnscope::session::reader::{OnCorrupt, read_file};
use attnscope::ui::state::UiState;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

fn main() {
    let session = std::fs::read_dir("sessions")
        .expect("run from the repository root")
        .map(|e| e.unwrap().path())
        .find(|p| is_session_name(p))
        .expect("a session in sessions/");
    // Shipped sessions are compressed: the lines as the reader sees them.
    let lines: Vec<String> = attnscope::session::open(&session)
        .unwrap()
        .lines()
        .collect::<Result<_, _>>()
        .unwrap();
    // A 100,000-event file: the real session's header, then its events repeated.
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
    writeln!(f, "{}", lines[0]).unwrap();
    let mut n = 1;
    while n < 100_000 {
        for l in &lines[1..] {
            if n == 100_000 {
                break;
            }
            writeln!(f, "{l}").unwrap();
            n += 1;
        }
    }
    drop(f);
    let bytes = std::fs::metadata(&big).unwrap().len();
    let gates = GateSet::default_set();
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let mut state = SessionState::default();
        let report = read_file(&big, OnCorrupt::Skip, |s| {
            state.apply(&s);
            true
        })
        .unwrap();
        let text = summary::to_text(&state, &gates, &report);
        assert!(text.len() > 100 && report.events == 100_000);
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "replay --summary, 100,000 events ({:.1} MB): median {:.3} s, min {:.3} s over 5 runs",
        bytes as f64 / 1e6,
        times[2],
        times[0]
    );

    // A seek backwards re-folds every event already shown (Left, Home in replay).
    let mut shipped: Vec<_> = std::fs::read_dir("sessions")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| is_session_name(p))
        .collect();
    shipped.sort();
    for path in &shipped {
        let mut events = Vec::new();
        read_file(path, OnCorrupt::Skip, |s| {
            events.push(s);
            true
        })
        .unwrap();
        let mut ms: Vec<f64> = (0..5)
            .map(|_| {
                let t = Instant::now();
                let mut ui = UiState::replay(gates.clone(), String::new(), 1.0, None);
                for e in &events {
                    ui.apply(e);
                }
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        println!(
            "re-fold of {} ({} events): median {:.1} ms over 5",
            path.display(),
            events.len(),
            ms[2]
        );
    }

    let mut ui = UiState::replay(gates, session.display().to_string(), 1.0, None);
    read_file(Path::new(&session), OnCorrupt::Skip, |s| {
        ui.apply(&s);
        true
    })
    .unwrap();
    for (w, h) in [(120, 40), (80, 24), (200, 60)] {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        let mut frame_us: Vec<f64> = (0..2000)
            .map(|_| {
                buf.reset();
                let t = Instant::now();
                attnscope::ui::view::render_to(area, &mut buf, &ui);
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        frame_us.sort_by(f64::total_cmp);
        println!(
            "render {w}x{h} of the real session's final state: median {:.0} µs, p99 {:.0} µs over 2000 frames",
            frame_us[1000], frame_us[1980]
        );
    }
}
