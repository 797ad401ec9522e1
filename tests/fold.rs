//! The event fold: what the state holds after a stream of events.

use std::path::Path;

use attnscope::metrics::gates::{GateSet, Status};
use attnscope::model::state::{Key, SessionState};
use attnscope::session::TileConfig;
use attnscope::session::command::Command;
use attnscope::session::event::*;
use attnscope::session::reader::{OnCorrupt, read_file};
use attnscope::ui::app_state::{Effect, UiState};
use attnscope::ui::keymap::Action;

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

fn selected(effects: &[Effect]) -> String {
    match effects {
        [Effect::Worker(Command::Select { variant, .. })] => variant.name(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn mma_and_wmma_exclude_each_other_and_t_walks_the_mma_tiles() {
    let mut ui = UiState::live(GateSet::default_set());
    assert_eq!(selected(&ui.handle(Action::ToggleWmma)), "wmma");
    assert_eq!(selected(&ui.handle(Action::TogglePv)), "wmma+pv");
    assert_eq!(selected(&ui.handle(Action::ToggleAsync)), "wmma+pv+async");
    // M wins over the WMMA toggles, and they win back over M.
    assert_eq!(selected(&ui.handle(Action::ToggleMma)), "mma+async");
    // t cycles every mma tuning candidate, K/V splits included.
    let mut seen = Vec::new();
    // No GPU named in this state: the wgmma tiles (Hopper only) are left out.
    let mma = "mma+async".parse::<attnscope::session::Variant>().unwrap();
    let walk = TileConfig::presets_for(mma.toggles, false);
    assert!(walk.iter().all(|t| !t.wgmma));
    for _ in 0..walk.len() {
        seen.push(selected(&ui.handle(Action::NextTile)));
    }
    assert!(
        seen.contains(&"mma+async@64x64s2w8k2".to_string()),
        "{seen:?}"
    );
    assert_eq!(seen.last().unwrap(), "mma+async");
    assert_eq!(
        selected(&ui.handle(Action::NextTile)),
        "mma+async@64x64s3w4"
    );
    // A split tile the WMMA path cannot run falls back to the default tile.
    ui.handle(Action::NextTile);
    assert_eq!(
        selected(&ui.handle(Action::NextTile)),
        "mma+async@64x64s2w8k2"
    );
    assert_eq!(selected(&ui.handle(Action::ToggleWmma)), "wmma+async");
}

#[test]
fn on_hopper_t_also_walks_the_wgmma_tiles() {
    let mut ui = UiState::live(GateSet::default_set());
    ui.apply(&Stamped {
        t_us: 0,
        event: Event::Header(SessionHeader {
            gpu: Some(GpuInfo {
                name: "NVIDIA H100 80GB HBM3".into(),
                cc_major: 9,
                cc_minor: 0,
                sm_count: 132,
                ..GpuInfo::default()
            }),
            ..SessionHeader::default()
        }),
    });
    assert_eq!(selected(&ui.handle(Action::ToggleMma)), "mma");
    let mut seen = Vec::new();
    for _ in 0..TileConfig::MMA_CANDIDATES.len() {
        seen.push(selected(&ui.handle(Action::NextTile)));
    }
    assert!(seen.contains(&"mma@64x128s2w8k2g".to_string()), "{seen:?}");
    assert_eq!(seen.last().unwrap(), "mma");
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

fn counters_report(values: &[(&str, f64)], refused: &[(&str, &str)]) -> Stamped {
    Stamped {
        t_us: 10,
        event: Event::Counters(CounterReport {
            variant: Variant::FULL,
            shape: Shape::MISSION,
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            passes: 10,
            collection_ms: 400.0,
            l2: L2Mode::Cold,
            chip: "GH100".into(),
            refused: refused
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            setup_ms: 30.0,
            range: "auto".into(),
        }),
    }
}

#[test]
fn counter_gates_say_why_they_have_no_value() {
    let full = Key {
        variant: Variant::FULL,
        shape: Shape::MISSION,
    };
    let set = GateSet::default_set();
    let mut s = SessionState::default();
    s.apply(&Stamped {
        t_us: 1,
        event: Event::VariantSelected(VariantSelected {
            variant: Variant::FULL,
            shape: Shape::MISSION,
        }),
    });
    let reason = |s: &SessionState, id: &str| match &s
        .gates(&set, &full)
        .into_iter()
        .find(|g| g.id == id)
        .unwrap()
        .status
    {
        Status::NotApplicable(w) => w.clone(),
        other => panic!("{id} is {other:?}"),
    };
    assert!(
        reason(&s, "dram").contains("press g"),
        "{}",
        reason(&s, "dram")
    );
    // A failed collection: every counter gate carries the error.
    s.apply(&Stamped {
        t_us: 2,
        event: Event::Error(ErrorReport {
            source: "cupti".into(),
            message: "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES".into(),
            variant: Some(Variant::FULL),
        }),
    });
    assert_eq!(
        reason(&s, "occupancy"),
        "counters failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
    );
    // Then a collection where CUPTI refused one metric: that gate says so,
    // the others are judged, the error is gone.
    s.apply(&counters_report(
        &[
            ("sm__warps_active.avg.pct_of_peak_sustained_active", 30.0),
            ("smsp__sass_inst_executed_op_local_ld.sum", 0.0),
            ("smsp__sass_inst_executed_op_local_st.sum", 0.0),
        ],
        &[(
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "unknown metric",
        )],
    ));
    assert!(s.counter_progress.is_none());
    assert_eq!(
        reason(&s, "dram"),
        "refused: dram__throughput.avg.pct_of_peak_sustained_elapsed: unknown metric"
    );
    assert!(reason(&s, "bank_conflicts").contains("was not in the metric list"));
    let gates = s.gates(&set, &full);
    let status = |id: &str| gates.iter().find(|g| g.id == id).unwrap().status.clone();
    assert_eq!(status("occupancy"), Status::Pass);
    assert_eq!(status("local_memory"), Status::Pass);
}
