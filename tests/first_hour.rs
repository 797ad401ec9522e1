//! Issue 57's first hour, what a fresh clone's review found left: every
//! number a replay shows belongs to what its row or panel names. A build's
//! resources to its own head dim, a race's throttle count to its own
//! rounds, a within-batch spread only where batches have one, a race's p50
//! named as the race's, an earlier edit's build with its check, and the
//! notice of a second session readable at 80 columns.

use std::process::Command;

use attnscope::export::summary;
use attnscope::metrics::gates::GateSet;
use attnscope::model::state::{Key, SessionState};
use attnscope::session::event::*;
use attnscope::session::reader::ReadReport;
use attnscope::ui::state::UiState;
use attnscope::ui::view::render;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

#[path = "support/edit_session.rs"]
mod edit_session;

fn at(t_us: u64, event: Event) -> Stamped {
    Stamped { t_us, event }
}

fn fold(events: &[Stamped]) -> SessionState {
    let mut s = SessionState::default();
    for e in events {
        s.apply(e);
    }
    s
}

fn screen(state: &UiState, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| render(f, state)).unwrap();
    let buf = term.backend().buffer().clone();
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `replay --summary`'s text of what the screen replayed.
fn summary_text(state: &UiState) -> String {
    summary::to_text(
        &state.session,
        &GateSet::default_set(),
        &ReadReport::default(),
    )
}

fn replayed(events: &[Stamped]) -> UiState {
    let mut state = UiState::replay(GateSet::default_set(), "x.jsonl".into(), 1.0, None);
    for e in events {
        state.apply(e);
    }
    state
}

/// `replay --summary` of a shipped session, through the binary: a session
/// read here would make its kernels this process's (the edit loop's is a
/// folder's), under the other tests' feet.
fn shipped_summary(name: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(["replay", &format!("sessions/{name}"), "--summary"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn header() -> Event {
    Event::Header(SessionHeader {
        tool: "attnscope".into(),
        tool_version: "0.1.0".into(),
        schema_version: SCHEMA_VERSION,
        host: "box".into(),
        timer: Some("cupti".into()),
        timer_resolution_ns: Some(32.0),
        ..SessionHeader::default()
    })
}

fn selected(variant: Variant, shape: Shape) -> Event {
    Event::VariantSelected(VariantSelected { variant, shape })
}

fn built(variant: Variant, registers: u32, smem: u32, shape: Option<Shape>) -> Event {
    Event::BuildFinished(BuildReport {
        variant,
        arch: "sm_90".into(),
        registers,
        smem_dynamic_bytes: smem,
        source_hash: "h".into(),
        shape,
        ..BuildReport::default()
    })
}

fn batch(variant: Variant, regime: Regime, n: u64, throttled: bool) -> Event {
    batch_at(variant, regime, n, throttled, 10_000)
}

fn batch_at(variant: Variant, regime: Regime, n: u64, throttled: bool, base: u64) -> Event {
    Event::Latency(LatencyBatch {
        variant,
        shape: Shape::MISSION,
        l2: L2Mode::Hot,
        regime: Some(regime),
        samples_ns: (0..n).map(|i| base + 37 * (i % 7)).collect(),
        throttled: Some(throttled),
        sm_clock_mhz: Some(if throttled { 1500 } else { 1980 }),
        timer: "cupti".into(),
        ..LatencyBatch::default()
    })
}

fn registers(s: &SessionState, variant: Variant, shape: Shape) -> Option<u32> {
    s.variants[&Key { variant, shape }]
        .build
        .as_ref()
        .map(|b| b.registers)
}

/// Item 1: a D=64 build's registers were shown on the D=128 row, the build
/// being kept by variant alone.
#[test]
fn a_build_shows_on_the_rows_of_its_own_head_dim() {
    let v = Variant::start();
    let d64 = Shape::MISSION;
    let d128 = Shape::new(1, 8, 1024, 128);
    let long64 = Shape::new(2, 8, 2048, 64);
    // A session from before builds carried their shape: the selection says it.
    let s = fold(&[
        at(0, header()),
        at(1, selected(v, d64)),
        at(2, built(v, 125, 90_112, None)),
        at(3, selected(v, d128)),
        at(4, built(v, 190, 147_456, None)),
        at(5, selected(v, long64)),
        at(6, built(v, 125, 90_112, None)),
    ]);
    assert_eq!(registers(&s, v, d128), Some(190));
    assert_eq!(registers(&s, v, d64), Some(125));
    assert_eq!(registers(&s, v, long64), Some(125));
    // A build that says its shape (headless `ab` selects nothing) goes there.
    let s = fold(&[at(0, header()), at(1, built(v, 190, 147_456, Some(d128)))]);
    assert_eq!(registers(&s, v, d128), Some(190));
    assert!(!s.variants.contains_key(&Key {
        variant: v,
        shape: d64
    }));
    // A shape no build served shows none.
    let s = fold(&[
        at(0, header()),
        at(1, selected(v, d64)),
        at(2, built(v, 125, 90_112, None)),
        at(3, selected(v, d128)),
    ]);
    assert_eq!(registers(&s, v, d128), None);
    // The shipped H100 tour: wmma+pv+async ran at D=128 with 190 registers.
    let text = shipped_summary("20261125-034401_H100_tour.jsonl.zst");
    let row = text
        .lines()
        .find(|l| l.starts_with("wmma+pv+async ") && l.contains("B1 H8 S1024 D128"))
        .expect("the D=128 row");
    assert!(row.contains(" 190 ") && row.contains("144 KiB"), "{row}");
}

/// Solo runs of both variants, throttled, then their race, unthrottled.
fn race_after_throttled_solo_runs() -> (Vec<Stamped>, AbReport) {
    let (a, b) = (Variant::base(), Variant::start());
    let ab = AbReport {
        a,
        b,
        shape: Shape::MISSION,
        samples_a: 60,
        samples_b: 60,
        p50_a_ns: 41_003.0,
        p50_b_ns: 12_297.0,
        speedup: 3.334,
        ci_low: 3.3,
        ci_high: 3.36,
        verdict: "B faster by 233.4%".into(),
        test: "bootstrap over 6 rounds".into(),
        done: true,
        regime: Some(Regime::Interleaved),
        timer: "cupti".into(),
        ..AbReport::default()
    };
    let mut events = vec![header(), selected(a, Shape::MISSION)];
    events.push(built(a, 96, 16_384, None));
    events.extend((0..5).map(|_| batch(a, Regime::BackToBack, 100, true)));
    events.push(selected(b, Shape::MISSION));
    events.push(built(b, 128, 40_960, None));
    events.extend((0..5).map(|_| batch(b, Regime::BackToBack, 100, true)));
    events.push(built(a, 96, 16_384, None));
    events.push(built(b, 128, 40_960, None));
    for _ in 0..6 {
        events.push(batch_at(a, Regime::Interleaved, 10, false, 40_900));
        events.push(batch_at(b, Regime::Interleaved, 10, false, 12_190));
    }
    events.push(Event::AbResult(ab.clone()));
    let events = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| at(1000 * i as u64, e))
        .collect();
    (events, ab)
}

/// Item 2: the race panel counted every batch of its two variants (their
/// throttled solo runs: "1000 of 1120 samples"), not the race's rounds.
#[test]
fn a_race_counts_the_throttling_of_its_own_rounds() {
    let (events, _) = race_after_throttled_solo_runs();
    let state = replayed(&events);
    let clock = state.session.race_clock.expect("the race's rounds");
    assert_eq!((clock.a.tagged, clock.a.throttled), (60, 0));
    assert_eq!((clock.b.tagged, clock.b.throttled), (60, 0));
    let text = screen(&state, 120, 40);
    assert!(
        text.contains("0 of this race's 120 samples ran in rounds throttled"),
        "{text}"
    );
    let summary = summary_text(&state);
    assert!(
        summary.contains(
            "A 0 of 60, B 0 of 60 samples of this race's own rounds throttled or below the expected clock"
        ),
        "{summary}"
    );
    // The variants' own totals still cover the whole session.
    assert!(
        summary.contains("500 of 560 samples throttled"),
        "{summary}"
    );
}

/// While a race runs, its count follows its rounds as its histograms do; a
/// later race starts from nothing.
#[test]
fn a_running_race_counts_its_rounds_as_they_come() {
    let (mut events, ab) = race_after_throttled_solo_runs();
    let done = events.pop().unwrap();
    let running = AbReport {
        done: false,
        ..ab.clone()
    };
    let t = done.t_us;
    events.push(at(t, Event::AbResult(running)));
    events.push(at(
        t + 1,
        batch_at(ab.a, Regime::Interleaved, 10, true, 40_900),
    ));
    events.push(at(
        t + 2,
        batch_at(ab.b, Regime::Interleaved, 10, true, 12_190),
    ));
    let s = fold(&events);
    let total = s.race_clock.unwrap().total();
    assert_eq!((total.tagged, total.throttled), (140, 20));
    // The race ends; the next one counts only its own.
    events.push(at(t + 3, Event::AbResult(ab.clone())));
    events.push(at(t + 4, built(ab.a, 96, 16_384, None)));
    events.push(at(t + 5, built(ab.b, 128, 40_960, None)));
    events.push(at(
        t + 6,
        batch_at(ab.a, Regime::Interleaved, 10, false, 40_900),
    ));
    events.push(at(
        t + 7,
        batch_at(ab.b, Regime::Interleaved, 10, false, 12_190),
    ));
    events.push(at(t + 8, Event::AbResult(ab)));
    let total = fold(&events).race_clock.unwrap().total();
    assert_eq!((total.tagged, total.throttled), (20, 0));
}

/// Item 3: a run of batches under 8 samples showed a within-batch spread of
/// ±0.00% (each such batch counted as 0).
#[test]
fn batches_too_small_for_quartiles_have_no_within_batch_spread() {
    let v = Variant::start();
    let mut events = vec![header(), selected(v, Shape::MISSION)];
    events.extend((0..6).map(|i| batch_at(v, Regime::BackToBack, 7, false, 10_000 + 90 * i)));
    let events: Vec<Stamped> = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| at(1000 * i as u64, e))
        .collect();
    let state = replayed(&events);
    let run = state.session.variants[&Key {
        variant: v,
        shape: Shape::MISSION,
    }]
        .run(Some(Regime::BackToBack))
        .unwrap();
    assert_eq!(run.within_batch_rel(), None);
    assert!(run.between_batch_rel().is_some());
    let text = screen(&state, 120, 40);
    assert!(!text.contains("±0.00%"), "{text}");
    assert!(
        text.contains("spread within / between batches: n/a /")
            && text.contains("(6 batches; n/a: under 8 samples a batch)"),
        "{text}"
    );
    // One batch large enough gives the spread of the batches that have one.
    let mut more = events.clone();
    more.push(at(99_000, batch(v, Regime::BackToBack, 20, false)));
    let state = replayed(&more);
    let run = state.session.variants[&Key {
        variant: v,
        shape: Shape::MISSION,
    }]
        .run(Some(Regime::BackToBack))
        .unwrap();
    assert!(run.within_batch_rel().is_some_and(|w| w > 0.0));
}

/// Item 4: the race's p50s (its grouped medians, what its speedup divides)
/// differed from the table's and the panel's (the run's histogram, to 0.1%)
/// with nothing saying which was which.
#[test]
fn a_race_p50_is_named_as_the_races_own() {
    let (events, ab) = race_after_throttled_solo_runs();
    let state = replayed(&events);
    let text = screen(&state, 120, 40);
    assert!(text.contains("A race p50 41.0 µs"), "{text}");
    assert!(text.contains("B race p50 12.3 µs"), "{text}");
    assert!(
        text.contains("interleaved · L2 hot · cupti 32 ns"),
        "{text}"
    );
    let summary = summary_text(&state);
    assert!(
        summary.contains(&format!(
            "interleaved: race p50 41.0 µs vs 12.3 µs (each side's grouped median over this race's kept launches, {} timer)",
            ab.timer
        )),
        "{summary}"
    );
    assert!(
        summary.contains("p50: each row's run in its regime"),
        "{summary}"
    );
    let text = shipped_summary("20261125-034401_H100_tour.jsonl.zst");
    assert!(
        text.contains("interleaved: race p50 608 µs vs 590 µs (each side's grouped median over this race's kept launches, cupti timer)"),
        "{text}"
    );
}

/// Item 5: an earlier edit's build, renamed `~eN` when the next edit
/// replaced it, read "no correctness check yet" (on screen: "not run")
/// though its source had passed its check under the kernel's own name.
#[test]
fn an_earlier_edits_build_keeps_the_check_its_source_passed() {
    let s = fold(&edit_session::events());
    let e0 = Key {
        variant: edit_session::edit0(),
        shape: Shape::MISSION,
    };
    let check = s.variants[&e0]
        .correctness
        .as_ref()
        .expect("edit 0's check");
    assert!(check.pass);
    let gate = s
        .gates(&GateSet::default_set(), &e0)
        .into_iter()
        .find(|g| g.id == "correctness")
        .unwrap();
    assert_eq!(gate.value, Some(1.0), "{gate:?}");
    let text = shipped_summary("20261129-014507_H200_edit-loop.jsonl.zst");
    for e in 0..3 {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("bundled~e{e}:wmma+pv+async ")))
            .expect("the earlier edit's row");
        assert!(row.trim_end().ends_with("PASS"), "{row}");
    }
    assert!(!text.contains("no correctness check yet"), "{text}");
}

/// Item 10: at 80×24 the notice of a second session in the file was cut to
/// "line… file there to read the other" in the key bar.
#[test]
fn a_second_session_in_the_file_is_said_in_full_at_80_columns() {
    let (events, _) = race_after_throttled_solo_runs();
    let mut state = replayed(&events);
    let report = ReadReport {
        events: events.len() as u64,
        second_session: Some(747),
        ..ReadReport::default()
    };
    let warning = report.second_session_text().unwrap();
    state.source_ended(
        format!(
            "end of replay: {} events; a second session: see above",
            events.len()
        ),
        Some(warning.clone()),
    );
    for (w, h) in [(80, 24), (120, 40)] {
        let text = screen(&state, w, h);
        let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let top: String = text.lines().skip(1).take(4).collect::<Vec<_>>().join(" ");
        assert!(words(&top).contains(&warning), "{text}");
        let bar = text.lines().last().unwrap();
        assert!(bar.contains("a second session: see above"), "{bar}");
        assert!(bar.contains("q quit") && bar.contains("? help"), "{bar}");
    }
}
