//! The event fold: what the state holds after a stream of events.

use std::path::Path;

use attnscope::metrics::gates::{GateSet, Status};
use attnscope::model::state::{Key, SessionState};
use attnscope::session::Regime;
use attnscope::session::command::Command;
use attnscope::session::event::*;
use attnscope::session::reader::{OnCorrupt, read_file};
use attnscope::ui::keymap::Action;
use attnscope::ui::state::{Effect, UiState};

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
    assert_eq!(s.events, 65);
    assert_eq!(s.errors, 1);
    let scalar = Key {
        variant: Variant::base(),
        shape: Shape::MISSION,
    };
    let full = Key {
        variant: Variant::start(),
        shape: Shape::MISSION,
    };
    let v = &s.variants[&full];
    let b2b = v.run(Some(Regime::BackToBack)).unwrap();
    let raced = v.run(Some(Regime::Interleaved)).unwrap();
    // Regimes never mix: 300 solo samples, 200 from the race.
    assert_eq!(b2b.latency.count(), 300);
    assert_eq!(raced.latency.count(), 200);
    assert_eq!(s.regime, Some(Regime::BackToBack));
    assert_eq!(v.throttled_samples, 50);
    assert_eq!(v.clock_tagged_samples, 500);
    assert_eq!(v.build.as_ref().unwrap().registers, 128);
    assert!(v.correctness.as_ref().unwrap().pass);
    assert_eq!(s.inputs, Some(attnscope::session::Inputs::Rising));
    // One speedup: the race of the pair, with its interval and its source.
    let speedup = s.speedup_vs_scalar(&full).unwrap();
    assert_eq!(speedup.value, 3.333);
    assert_eq!(speedup.ci, Some((3.30, 3.36)));
    assert_eq!(speedup.source_label(), "race, interleaved");
    // Seen from the other side, the same race inverted.
    let back = s.speedup(&full, &scalar).unwrap();
    assert!((back.value - 1.0 / 3.333).abs() < 1e-12);
    // Without a race of the pair: solo medians, in one named regime.
    let cudnn = Key {
        variant: Variant::CUDNN,
        shape: Shape::MISSION,
    };
    let vs = s.speedup_vs_cudnn(&full).unwrap();
    assert_eq!(vs.source_label(), "solo medians, back-to-back");
    assert!((vs.value - 9_000.0 / 12_000.0).abs() < 1e-9, "{vs:?}");
    assert!(s.speedup_vs_cudnn(&cudnn).is_none());
    let cg = s.gates(&GateSet::default_set(), &cudnn);
    let reason = |id: &str| match &cg.iter().find(|g| g.id == id).unwrap().status {
        Status::NotApplicable(w) => w.clone(),
        other => format!("{other}"),
    };
    assert!(
        reason("registers").contains("cuDNN"),
        "{}",
        reason("registers")
    );
    assert!(reason("speedup_cudnn").contains("cuDNN baseline"));
    let gates = s.gates(&GateSet::default_set(), &full);
    let get = |id: &str| gates.iter().find(|g| g.id == id).unwrap().status.clone();
    assert_eq!(get("speedup"), Status::Pass);
    assert_eq!(get("speedup_cudnn"), Status::Fail);
    assert_eq!(get("tensor_pipe"), Status::Pass);
    assert_eq!(get("dram"), Status::Fail);
    // The failed wmma build is recorded against wmma only.
    let wmma = Key {
        variant: "wmma".parse().unwrap(),
        shape: Shape::MISSION,
    };
    assert!(s.variants[&wmma].build_failure.is_some());
    assert!(s.variants[&full].build_failure.is_none());
    assert_eq!(s.telemetry.len(), 18);
    assert_eq!(s.throttle_now(), vec!["sw_power_cap".to_string()]);
    assert_eq!(s.bookmarks.len(), 1);
    assert!(s.ab.as_ref().unwrap().done);
}

#[test]
fn a_session_from_before_regimes_folds_into_not_recorded() {
    let mut s = SessionState::default();
    let batch = LatencyBatch {
        variant: Variant::base(),
        shape: Shape::MISSION,
        samples_ns: vec![1000, 1010, 990],
        ..LatencyBatch::default()
    };
    let line = serde_json::to_string(&Stamped {
        t_us: 1,
        event: Event::Latency(batch),
    })
    .unwrap()
    .replace(",\"regime\":null", "");
    assert!(!line.contains("regime"));
    s.apply(&serde_json::from_str(&line).unwrap());
    let key = Key {
        variant: Variant::base(),
        shape: Shape::MISSION,
    };
    let v = &s.variants[&key];
    assert_eq!(v.run(None).unwrap().latency.count(), 3);
    assert!(v.run(Some(Regime::BackToBack)).is_none());
    assert_eq!(regime_name(s.regime), "regime not recorded");
}

#[test]
fn unprobed_batches_carry_busy_but_stay_out_of_the_throttle_count() {
    let mut s = SessionState::default();
    let batch = |clock: Option<u32>, throttled: Option<bool>, busy: Option<f64>| Stamped {
        t_us: 1,
        event: Event::Latency(LatencyBatch {
            variant: Variant::base(),
            shape: Shape::MISSION,
            regime: Some(Regime::BackToBack),
            samples_ns: vec![1000, 1010],
            sm_clock_mhz: clock,
            throttled,
            busy,
            ..LatencyBatch::default()
        }),
    };
    s.apply(&batch(Some(1755), Some(true), Some(0.991)));
    s.apply(&batch(None, None, Some(0.995)));
    s.apply(&batch(None, None, None));
    let v = &s.variants[&Key {
        variant: Variant::base(),
        shape: Shape::MISSION,
    }];
    // Only the probed batch is tagged: 2 of 2 tagged samples throttled, not 2 of 6.
    assert_eq!((v.throttled_samples, v.clock_tagged_samples), (2, 2));
    assert_eq!(s.probe_mhz, Some(1755));
    // The newest batch says how busy the GPU is now; an unknown one says nothing.
    assert_eq!(s.busy, None);
    s.apply(&batch(None, None, Some(0.995)));
    assert_eq!(s.busy, Some(0.995));
    // The field is optional on the wire both ways.
    let line = serde_json::to_string(&batch(None, None, None)).unwrap();
    assert!(!line.contains("busy"), "{line}");
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
    let effects = ui.handle(Action::Toggle(0));
    assert_eq!(
        effects,
        vec![Effect::Worker(Command::Select {
            variant: "wmma".parse().unwrap(),
            shape: Shape::MISSION
        })]
    );
    // A second key before the worker answers builds on the pending variant.
    let effects = ui.handle(Action::Toggle(3));
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
    assert_eq!(selected(&ui.handle(Action::Toggle(0))), "wmma");
    assert_eq!(selected(&ui.handle(Action::Toggle(1))), "wmma+pv");
    assert_eq!(selected(&ui.handle(Action::Toggle(3))), "wmma+pv+async");
    // M wins over the WMMA toggles, and they win back over M.
    assert_eq!(selected(&ui.handle(Action::Toggle(2))), "mma+async");
    // t cycles every mma tuning candidate, K/V splits included.
    let mut seen = Vec::new();
    // No GPU named in this state: the wgmma tiles (Hopper only) are left out.
    let mma = "mma+async".parse::<attnscope::session::Variant>().unwrap();
    let walk = mma.cycle_tiles(None);
    assert!(walk.iter().all(|t| !t.tile_text().ends_with('g')));
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
    assert_eq!(selected(&ui.handle(Action::Toggle(0))), "wmma+async");
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
    assert_eq!(selected(&ui.handle(Action::Toggle(2))), "mma");
    let mut seen = Vec::new();
    let mma = "mma".parse::<attnscope::session::Variant>().unwrap();
    for _ in 0..mma.cycle_tiles(Some(90)).len() {
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
            a: Variant::base(),
            b: Variant::start()
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
            variant: Variant::start(),
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
        variant: Variant::start(),
        shape: Shape::MISSION,
    };
    let set = GateSet::default_set();
    let mut s = SessionState::default();
    s.apply(&Stamped {
        t_us: 1,
        event: Event::VariantSelected(VariantSelected {
            variant: Variant::start(),
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
            variant: Some(Variant::start()),
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

#[test]
fn no_speedup_over_or_of_a_kernel_that_failed_its_check() {
    let mut s = fixture_state();
    let full = Key {
        variant: Variant::start(),
        shape: Shape::MISSION,
    };
    assert!(s.speedup_vs_scalar(&full).is_some());
    // The scalar baseline fails a later check: the speedup over it goes.
    s.apply(&Stamped {
        t_us: 99_000_000,
        event: Event::Correctness(CorrectnessReport {
            variant: Variant::base(),
            shape: Shape::MISSION,
            pass: false,
            ..CorrectnessReport::default()
        }),
    });
    assert!(s.speedup_vs_scalar(&full).is_none());
    let g = s.gates(&GateSet::default_set(), &full);
    let speed = g.iter().find(|g| g.id == "speedup").unwrap();
    assert!(
        matches!(&speed.status, Status::NotApplicable(w) if w.contains("passing their checks")),
        "{:?}",
        speed.status
    );
}

fn at(t_us: u64, event: Event) -> Stamped {
    Stamped { t_us, event }
}

/// A variant with no samples at a shape says why, from what the session
/// records (a fault while it was selected, a failed build) or, when nothing
/// was recorded, from its header (a tile over the GPU's shared memory at
/// that head dimension); a reason nobody gave is not made up.
#[test]
fn a_variant_without_samples_says_why() {
    let big = Shape {
        d: 128,
        ..Shape::MISSION
    };
    let gpu = GpuInfo {
        name: "NVIDIA H200".into(),
        cc_major: 9,
        max_smem_per_block: 232_448,
        ..GpuInfo::default()
    };
    let tile: Variant = "mma+async@64x128s2w8k2g".parse().unwrap();
    assert!(
        tile.smem_bytes(128) > gpu.max_smem_per_block
            && tile.smem_bytes(64) < gpu.max_smem_per_block,
        "the tile fits at D=64, not at D=128"
    );
    let faulty: Variant = "wmma".parse().unwrap();
    let broken: Variant = "wmma+pv".parse().unwrap();
    let idle: Variant = "mma+async".parse().unwrap();
    let select = |variant, shape| Event::VariantSelected(VariantSelected { variant, shape });
    let events = [
        at(
            0,
            Event::Header(SessionHeader {
                gpu: Some(gpu),
                ..SessionHeader::default()
            }),
        ),
        at(1, select(tile, big)),
        at(2, select(faulty, big)),
        at(
            3,
            Event::Error(ErrorReport {
                source: "gpu".into(),
                message: "CUDA: launch failed".into(),
                variant: Some(faulty),
            }),
        ),
        at(4, select(broken, big)),
        at(
            5,
            Event::BuildFailed(BuildFailure {
                variant: broken,
                arch: "sm_90".into(),
                log: "attention.cu(7): error: expected a ;\n1 error".into(),
            }),
        ),
        at(6, select(idle, big)),
    ];
    let mut s = SessionState::default();
    for e in &events {
        s.apply(e);
    }
    let why = |s: &SessionState, variant| {
        s.why_untimed(&Key {
            variant,
            shape: big,
        })
    };
    assert_eq!(
        why(&s, tile).as_deref(),
        Some(
            "did not fit: needs 274 KiB of shared memory per block at D=128, the NVIDIA H200 allows 227 KiB"
        )
    );
    assert_eq!(
        why(&s, faulty).as_deref(),
        Some("failed: CUDA: launch failed")
    );
    assert_eq!(
        why(&s, broken).as_deref(),
        Some("build failed: attention.cu(7): error: expected a ;")
    );
    assert_eq!(why(&s, idle), None, "nothing says why: no reason made up");
    // Samples, and there is nothing to explain.
    s.apply(&at(
        7,
        Event::Latency(LatencyBatch {
            variant: faulty,
            shape: big,
            samples_ns: vec![1000, 1100],
            ..LatencyBatch::default()
        }),
    ));
    assert_eq!(why(&s, faulty), None);
}

/// The log is in time order whatever the file's (a session merged before
/// merges sorted holds one GPU's events, then the other's); a tie keeps the
/// file's order.
#[test]
fn the_log_is_in_time_order() {
    let mut s = SessionState::default();
    for (t, label) in [(10, "a"), (30, "b"), (20, "c"), (30, "d"), (5, "e")] {
        s.apply(&at(
            t,
            Event::Bookmark(Bookmark {
                label: label.into(),
            }),
        ));
    }
    let log: Vec<(u64, String)> = s
        .log
        .iter()
        .map(|l| (l.t_us, l.text.trim_start_matches("bookmark: ").to_string()))
        .collect();
    let want = [(5, "e"), (10, "a"), (20, "c"), (30, "b"), (30, "d")];
    assert_eq!(
        log,
        want.map(|(t, l)| (t, l.to_string())).to_vec(),
        "{log:?}"
    );
}

#[path = "support/edit_session.rs"]
mod edit_session;

/// `E` races the newest earlier edit of the kernel against the current
/// build, then one edit further back each press, then around again.
#[test]
fn e_steps_back_through_earlier_edits() {
    let mut ui = UiState::live(GateSet::default_set());
    assert!(ui.handle(Action::RaceEdit).is_empty());
    assert!(ui.notice.as_deref().unwrap().contains("no earlier edit"));
    for e in edit_session::events() {
        ui.apply(&e);
    }
    let opponent = |effects: Vec<Effect>| match effects.as_slice() {
        [Effect::Worker(Command::Race { a, b })] => {
            assert_eq!(*b, Variant::start());
            a.name()
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(
        opponent(ui.handle(Action::RaceEdit)),
        "bundled~e1:wmma+pv+async"
    );
    assert_eq!(
        ui.notice.as_deref(),
        Some("racing edit 1 (A) against edit 3 (B)")
    );
    assert_eq!(
        opponent(ui.handle(Action::RaceEdit)),
        "bundled~e0:wmma+pv+async"
    );
    assert_eq!(
        opponent(ui.handle(Action::RaceEdit)),
        "bundled~e1:wmma+pv+async"
    );
}

/// A session with `wmma` and its base measured back to back, medians with
/// intervals (ns); the speedup gate is ≥ 1.15 in the default set.
fn measured(base: (f64, f64, f64), variant: (f64, f64, f64)) -> (SessionState, Key) {
    let mut s = SessionState::default();
    let wmma: Variant = "wmma".parse().unwrap();
    for (v, (median, lo, hi)) in [(Variant::base(), base), (wmma, variant)] {
        let mut apply = |event| s.apply(&Stamped { t_us: 1, event });
        apply(Event::Latency(LatencyBatch {
            variant: v,
            shape: Shape::MISSION,
            regime: Some(Regime::BackToBack),
            samples_ns: vec![median as u64; 3],
            ..LatencyBatch::default()
        }));
        apply(Event::MeasurementDone(MeasurementDone {
            variant: v,
            shape: Shape::MISSION,
            samples: 3,
            median_ns: median,
            regime: Some(Regime::BackToBack),
            ci_low_ns: Some(lo),
            ci_high_ns: Some(hi),
            ..MeasurementDone::default()
        }));
    }
    let key = Key {
        variant: wmma,
        shape: Shape::MISSION,
    };
    (s, key)
}

fn gate(s: &SessionState, key: &Key, id: &str) -> attnscope::metrics::gates::GateResult {
    s.gates(&GateSet::default_set(), key)
        .into_iter()
        .find(|g| g.id == id)
        .unwrap()
}

#[test]
fn solo_speedup_gates_read_both_medians_intervals() {
    // 1.20× from two medians each known to about ±1.7–2% (for a rerun): the
    // ratio's interval across runs, √((h₁² + h₂²)/2) on the log scale, is
    // ±1.84%, so [1.178, 1.222] stays above 1.15.
    let (s, key) = measured((1200.0, 1180.0, 1220.0), (1000.0, 990.0, 1020.0));
    let g = gate(&s, &key, "speedup");
    assert_eq!(g.status, Status::Pass, "{g:?}");
    let (lo, hi) = g.interval.unwrap();
    let half = (((1200.0f64 / 1180.0).ln().powi(2) + 1.02f64.ln().powi(2)) / 2.0).sqrt();
    assert!(
        (lo - 1.2 * (-half).exp()).abs() < 1e-9 && (hi - 1.2 * half.exp()).abs() < 1e-9,
        "{lo} {hi}"
    );
    // The same 1.20× from noisier medians could be 1.10×: undecided, not PASS.
    let (s, key) = measured((1200.0, 1150.0, 1250.0), (1000.0, 960.0, 1045.0));
    let g = gate(&s, &key, "speedup");
    assert!(
        matches!(&g.status, Status::Undecided(why) if why.contains("straddles")),
        "{g:?}"
    );
    // Gates on the median itself read its interval too.
    let set = GateSet::from_toml(
        "[[gate]]\nid='fast'\nname='fast'\nvalue=['attnscope:median_us']\nop='<'\nthreshold=1.0",
    )
    .unwrap();
    let r = s.gates(&set, &key);
    assert!(matches!(r[0].status, Status::Undecided(_)), "{r:?}");
    assert_eq!(r[0].interval, Some((0.96, 1.045)));
}

#[test]
fn no_gate_reads_a_race_still_running() {
    let (mut s, key) = measured((1200.0, 1150.0, 1250.0), (1000.0, 960.0, 1045.0));
    let race = |done| AbReport {
        a: Variant::base(),
        b: key.variant,
        shape: Shape::MISSION,
        speedup: 1.3,
        ci_low: 1.25,
        ci_high: 1.35,
        done,
        ..AbReport::default()
    };
    s.apply(&Stamped {
        t_us: 2,
        event: Event::AbResult(race(false)),
    });
    let g = gate(&s, &key, "speedup");
    assert_eq!(g.value, None);
    assert!(
        matches!(&g.status, Status::NotApplicable(why) if why.contains("waits for the race")),
        "{g:?}"
    );
    s.apply(&Stamped {
        t_us: 3,
        event: Event::AbResult(race(true)),
    });
    let g = gate(&s, &key, "speedup");
    assert_eq!((g.value, g.interval), (Some(1.3), Some((1.25, 1.35))));
    assert_eq!(g.status, Status::Pass);
}

fn shown(ui: &mut UiState, name: &str) {
    ui.apply(&Stamped {
        t_us: 1,
        event: Event::VariantSelected(VariantSelected {
            variant: name.parse().unwrap(),
            shape: Shape::MISSION,
        }),
    });
}

#[test]
fn p_cycles_the_python_variants_then_goes_back() {
    let mut ui = UiState::live(GateSet::default_set());
    shown(&mut ui, "wmma");
    // None named yet: nothing to select (a notice says how to name some).
    assert!(ui.handle(Action::NextPython).is_empty());
    for name in ["py:sdpa_flash", "py:mymod:attn"] {
        name.parse::<Variant>().unwrap();
    }
    assert_eq!(selected(&ui.handle(Action::NextPython)), "py:sdpa_flash");
    shown(&mut ui, "py:sdpa_flash");
    assert_eq!(selected(&ui.handle(Action::NextPython)), "py:mymod:attn");
    shown(&mut ui, "py:mymod:attn");
    // After the last, back to the kernel variant left for the first.
    assert_eq!(selected(&ui.handle(Action::NextPython)), "wmma");
}
