//! The event fold: what the state holds after a stream of events.

use std::path::Path;

use attnscope::metrics::gates::{GateSet, Status};
use attnscope::session::command::Command;
use attnscope::session::event::*;
use attnscope::session::reader::{OnCorrupt, read_file};
use attnscope::ui::app_state::{Effect, UiState};
use attnscope::ui::keymap::Action;
use attnscope::ui::state::{Key, SessionState};

fn fixture_state() -> SessionState {
    let mut s = SessionState::default();
    read_file(
        Path::new("tests/fixtures/fixture_mission.jsonl"),
        OnCorrupt::Stop,
        |e| {
            s.apply(&e);
            true
        },
    )
    .unwrap();
    s
}

#[test]
fn fold_of_the_fixture() {
    let s = fixture_state();
    assert_eq!(s.events, 39);
    assert_eq!(s.errors, 1);
    let scalar = Key {
        variant: Variant::SCALAR,
        shape: Shape::MISSION,
    };
    let full = Key {
        variant: Variant::FULL,
        shape: Shape::MISSION,
    };
    let v = &s.variants[&full];
    assert_eq!(v.latency.count(), 300);
    assert_eq!(v.throttled_samples, 50);
    assert_eq!(v.clock_tagged_samples, 300);
    assert_eq!(v.build.as_ref().unwrap().registers, 128);
    assert!(v.correctness.as_ref().unwrap().pass);
    let speedup = s.speedup_vs_scalar(&full).unwrap();
    let expect = s.variants[&scalar].latency.percentile(0.5) / v.latency.percentile(0.5);
    assert_eq!(speedup, expect);
    assert!(speedup > 3.0);
    let gates = s.gates(&GateSet::default_set(), &full);
    let get = |id: &str| gates.iter().find(|g| g.id == id).unwrap().status.clone();
    assert_eq!(get("speedup"), Status::Pass);
    assert_eq!(get("tensor_pipe"), Status::Pass);
    assert_eq!(get("dram"), Status::Fail);
    // The failed wmma build is recorded against wmma only.
    let wmma = Key {
        variant: "wmma".parse().unwrap(),
        shape: Shape::MISSION,
    };
    assert!(s.variants[&wmma].build_failure.is_some());
    assert!(s.variants[&full].build_failure.is_none());
    assert_eq!(s.telemetry.len(), 12);
    assert_eq!(s.throttle_now(), vec!["sw_power_cap".to_string()]);
    assert_eq!(s.bookmarks.len(), 1);
    assert!(s.ab.as_ref().unwrap().done);
}

#[test]
fn fold_is_deterministic_and_order_of_chunks_does_not_matter() {
    let a = fixture_state();
    let b = fixture_state();
    assert_eq!(
        format!("{:?}", a.variants.keys().collect::<Vec<_>>()),
        format!("{:?}", b.variants.keys().collect::<Vec<_>>())
    );
    assert_eq!(a.log, b.log);
}

#[test]
fn toggles_become_select_commands() {
    let mut ui = UiState::live(GateSet::default_set());
    let effects = ui.handle(Action::ToggleWmma);
    assert_eq!(
        effects,
        vec![Effect::Worker(Command::Select {
            variant: "wmma".parse().unwrap(),
            shape: Shape::MISSION
        })]
    );
    // A second key before the worker answers builds on the pending variant.
    let effects = ui.handle(Action::ToggleAsync);
    assert_eq!(
        effects,
        vec![Effect::Worker(Command::Select {
            variant: "wmma+async".parse().unwrap(),
            shape: Shape::MISSION
        })]
    );
    assert_eq!(ui.shown_key().unwrap().variant.name(), "wmma+async");
    ui.apply(&Stamped {
        t_us: 1,
        event: Event::VariantSelected(VariantSelected {
            variant: "wmma+async".parse().unwrap(),
            shape: Shape::MISSION,
        }),
    });
    assert_eq!(ui.session.current.unwrap().variant.name(), "wmma+async");
    let effects = ui.handle(Action::ToggleCausal);
    let Effect::Worker(Command::Select { shape, .. }) = &effects[0] else {
        panic!("{effects:?}")
    };
    assert!(shape.causal);
}

#[test]
fn race_key_starts_and_stops() {
    let mut ui = UiState::live(GateSet::default_set());
    assert_eq!(
        ui.handle(Action::Race),
        vec![Effect::Worker(Command::Race {
            a: Variant::SCALAR,
            b: Variant::FULL
        })]
    );
    assert_eq!(
        ui.handle(Action::Race),
        vec![Effect::Worker(Command::StopRace)]
    );
    assert_eq!(ui.handle(Action::Quit), vec![Effect::Quit]);
}
