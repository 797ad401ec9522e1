//! The edit loop as a session records it: the fold's edit history, the
//! summary's edit lines, the new events' round trip, and runs that a source
//! edit or an L2 change starts.

use attnscope::metrics::gates::GateSet;
use attnscope::model::state::{Key, SessionState};
use attnscope::session::event::*;
use attnscope::session::reader::{OnCorrupt, ReadReport, read_file};

#[path = "support/edit_session.rs"]
mod edit_session;

fn fold(events: &[Stamped]) -> SessionState {
    let mut s = SessionState::default();
    for e in events {
        s.apply(e);
    }
    s
}

fn key(variant: Variant) -> Key {
    Key {
        variant,
        shape: Shape::MISSION,
    }
}

#[test]
fn the_fold_keeps_every_edit_with_its_verdict() {
    let s = fold(&edit_session::events());
    let history = &s.edits[""];
    let lines: Vec<String> = history.iter().map(|e| e.line()).collect();
    assert_eq!(
        lines,
        [
            "edit 1 (softmax.cuh +3 −1): edit 1 vs edit 0: 1.8% faster [1.2, 2.4]",
            "edit 2 (softmax.cuh +1 −0): edit 2 does not build: attention.cu(12): error: expected a \";\"",
            "edit 3 (attention.cu +2 −2): edit 3 fails its check: its output is not the reference's",
        ]
    );
    assert_eq!(history[0].verdict.as_ref().unwrap().speedup, Some(1.018));
    // Edit 2 never built: edit 3 is what runs.
    assert_eq!(s.current_edit(""), Some(3));
    let kept: Vec<u32> = s.kept_edits("").into_iter().map(|(e, _)| e).collect();
    assert_eq!(kept, [1, 0]);
    assert_eq!(
        s.edit_of_build("bundled~e0"),
        Some((String::new(), 0)),
        "a kept build names its edit"
    );
    let (outcome, text) = s.edit_line.clone().unwrap();
    assert_eq!(outcome, EditOutcome::CheckFailed);
    assert_eq!(
        text,
        "edit 3 fails its check: its output is not the reference's"
    );
}

#[test]
fn a_race_of_an_earlier_edit_reads_in_edit_words() {
    let mut events = edit_session::events();
    events.truncate(13);
    let mut s = fold(&events);
    assert!(s.edit_line.is_none());
    s.apply(&events_after_race()[0]);
    assert_eq!(
        s.edit_line.unwrap().1,
        "edit 1 vs edit 0: 1.8% faster [1.2, 2.4]"
    );
}

/// The race of the session on its own, with no verdict event after it.
fn events_after_race() -> Vec<Stamped> {
    edit_session::events()
        .into_iter()
        .filter(|e| matches!(e.event, Event::AbResult(_)))
        .collect()
}

#[test]
fn an_edit_starts_a_new_run_and_runs_never_mix() {
    let s = fold(&edit_session::events());
    let v = &s.variants[&key(Variant::start())];
    let now = v.run(Some(Regime::BackToBack)).unwrap();
    // Edit 1's samples only: 20, not the 40 of edit 0 before them.
    assert_eq!(now.latency.count(), 20);
    assert_eq!(now.conditions.source.as_deref(), Some("h1"));
    let (regime, before) = &v.older[0];
    assert_eq!(*regime, Some(Regime::BackToBack));
    assert_eq!(before.latency.count(), 40);
    assert_eq!(before.conditions.source.as_deref(), Some("h0"));
    assert_eq!(
        s.conditions_text(
            &key(Variant::start()),
            Some(Regime::BackToBack),
            &now.conditions
        ),
        "back-to-back · L2 hot · edit 1"
    );
    let e0 = edit_session::edit0();
    let raced = s.variants[&key(e0)].run(Some(Regime::Interleaved)).unwrap();
    assert_eq!(
        s.conditions_text(&key(e0), Some(Regime::Interleaved), &raced.conditions),
        "interleaved · L2 hot · edit 0"
    );
}

#[test]
fn an_l2_change_starts_a_new_run_and_speedups_pair_matching_runs() {
    use edit_session::{batch, stamp};
    let (a, b) = (Variant::base(), Variant::start());
    let mut s = SessionState::default();
    for (i, e) in [
        batch(a, Regime::BackToBack, L2Mode::Hot, 20000),
        batch(b, Regime::BackToBack, L2Mode::Hot, 10000),
        batch(a, Regime::BackToBack, L2Mode::Cold, 40000),
    ]
    .into_iter()
    .enumerate()
    {
        s.apply(&stamp(i as u64, e));
    }
    let va = &s.variants[&key(a)];
    assert_eq!(
        va.run(Some(Regime::BackToBack)).unwrap().conditions.l2,
        L2Mode::Cold
    );
    assert_eq!(va.older.len(), 1);
    // B's hot run against A's hot run, not A's newer cold one.
    let sp = s.speedup(&key(a), &key(b)).unwrap();
    assert!((sp.value - 2.0).abs() < 0.01, "{}", sp.value);
}

#[test]
fn the_summary_lists_the_edits() {
    let s = fold(&edit_session::events());
    let text =
        attnscope::export::summary::to_text(&s, &GateSet::default_set(), &ReadReport::default());
    assert!(text.contains(
        "edits of the kernel (edit 0: the source at the start; each raced against the build before it):\n  edit 1 (softmax.cuh +3 −1): edit 1 vs edit 0: 1.8% faster [1.2, 2.4]\n  edit 2"
    ), "{text}");
    let json =
        attnscope::export::summary::to_json(&s, &GateSet::default_set(), &ReadReport::default());
    assert_eq!(
        json["edits"][0]["edits"][2]["verdict"]["outcome"],
        "check_failed"
    );
    let runs = json["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["variant"] == "wmma+pv+async")
        .unwrap()["runs"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        runs.iter()
            .any(|r| r["current"] == false && r["source_hash"] == "h0")
    );
}

#[test]
fn edit_events_survive_a_session_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edits.jsonl");
    let events = edit_session::events();
    let text: String = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    let mut back = Vec::new();
    read_file(&path, OnCorrupt::Stop, |e| {
        back.push(e);
        true
    })
    .unwrap();
    assert_eq!(back, events);
}

#[test]
fn a_session_without_edits_still_reads() {
    // Written before edits: no edit events, latency without inputs.
    let line = r#"{"t_us":1,"event":{"type":"latency","variant":"scalar","shape":{"b":2,"h":8,"s":512,"d":64,"causal":false},"l2":"hot","regime":"back_to_back","samples_ns":[5,6],"sm_clock_mhz":null,"throttled":null,"timer":"cupti"}}"#;
    let e: Stamped = serde_json::from_str(line).unwrap();
    let Event::Latency(b) = &e.event else {
        panic!("{e:?}")
    };
    assert_eq!(b.inputs, None);
    let s = fold(&[e]);
    assert!(s.edits.is_empty());
    let text =
        attnscope::export::summary::to_text(&s, &GateSet::default_set(), &ReadReport::default());
    assert!(!text.contains("edits of"));
    // An edit verdict a newer tool wrote with an outcome this one lacks.
    let line = r#"{"t_us":2,"event":{"type":"edit_verdict","kernel":"","edit":4,"against":3,"outcome":"slower_on_tuesdays","detail":"?"}}"#;
    let e: Stamped = serde_json::from_str(line).unwrap();
    let Event::EditVerdict(v) = e.event else {
        panic!()
    };
    assert_eq!(v.outcome, EditOutcome::Unknown);
}
