//! Screen snapshots through ratatui's TestBackend, colours checked in cells.

use std::path::Path;

use attnscope::metrics::gates::GateSet;
use attnscope::session::Stamped;
use attnscope::session::reader::{OnCorrupt, read_file};
use attnscope::ui::keymap::Action;
use attnscope::ui::state::UiState;
use attnscope::ui::view::render;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

fn fixture_events() -> Vec<Stamped> {
    let mut events = Vec::new();
    read_file(
        Path::new("tests/fixtures/fixture_mission.jsonl"),
        OnCorrupt::Stop,
        |s| {
            events.push(s);
            true
        },
    )
    .unwrap();
    events
}

fn draw(state: &UiState, w: u16, h: u16) -> Buffer {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| render(f, state)).unwrap();
    term.backend().buffer().clone()
}

fn text(buf: &Buffer) -> String {
    let area = buf.area;
    (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where `needle` starts on screen.
fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    let area = buf.area;
    for y in 0..area.height {
        let row: Vec<&str> = (0..area.width).map(|x| buf[(x, y)].symbol()).collect();
        let line: String = row.concat();
        if let Some(byte) = line.find(needle) {
            let col = line[..byte].chars().count() as u16;
            return Some((col, y));
        }
    }
    None
}

fn replay_state(events: &[Stamped]) -> UiState {
    let mut state = UiState::replay(
        GateSet::default_set(),
        "tests/fixtures/fixture_mission.jsonl".into(),
        2.0,
        None,
    );
    for e in events {
        state.apply(e);
    }
    state
}

#[test]
fn empty_live_screen() {
    let state = UiState::live(GateSet::default_set());
    insta::assert_snapshot!("empty_live_120x40", text(&draw(&state, 120, 40)));
}

#[test]
fn golden_replay_final_frame_120x40() {
    let state = replay_state(&fixture_events());
    insta::assert_snapshot!("fixture_final_120x40", text(&draw(&state, 120, 40)));
}

#[test]
fn golden_replay_final_frame_80x24() {
    let state = replay_state(&fixture_events());
    insta::assert_snapshot!("fixture_final_80x24", text(&draw(&state, 80, 24)));
}

#[test]
fn mid_session_before_ab() {
    let events = fixture_events();
    let state = replay_state(&events[..30]);
    insta::assert_snapshot!("fixture_mid_120x40", text(&draw(&state, 120, 40)));
}

/// A gate not collected yet reads "pending" while more events can come; once a replay has
/// ended nothing will, and it reads "not run".
#[test]
fn a_gate_never_collected_is_not_pending_after_the_end() {
    let events = fixture_events();
    let mut state = replay_state(&events[..30]);
    let before = text(&draw(&state, 120, 40));
    assert!(
        before.contains("pending") && !before.contains("not run"),
        "{before}"
    );
    if let attnscope::ui::state::Mode::Replay { ended, .. } = &mut state.mode {
        *ended = true;
    }
    let after = text(&draw(&state, 120, 40));
    assert!(
        after.contains("not run") && !after.contains("pending"),
        "{after}"
    );
}

#[test]
fn help_lists_every_key() {
    let mut state = replay_state(&fixture_events());
    state.handle(Action::ToggleHelp);
    // Taller than 40 rows: at 120×40 the last keys are a scroll away (j).
    let screen = text(&draw(&state, 120, 50));
    for b in state
        .key_table()
        .iter()
        .filter(|b| b.context != attnscope::ui::keymap::Context::Help)
    {
        assert!(
            screen.contains(b.help.as_ref()),
            "help is missing '{}'",
            b.help
        );
    }
    insta::assert_snapshot!("help_120x50", screen);
}

#[test]
fn too_small_says_so() {
    let state = replay_state(&fixture_events());
    let screen = text(&draw(&state, 60, 20));
    assert!(
        screen.contains("terminal is 60×20; needs at least 80×24"),
        "{screen}"
    );
}

#[test]
fn pass_and_fail_are_coloured() {
    let events = fixture_events();
    // Before the race: the gates table of wmma+pv+async, with PASS and FAIL.
    let buf = draw(&replay_state(&events[..51]), 120, 40);
    let (x, y) = find(&buf, "FAIL").expect("a FAIL on screen");
    assert_eq!(buf[(x, y)].fg, Color::Red);
    let (x, y) = find(&buf, "PASS").expect("a PASS on screen");
    assert_eq!(buf[(x, y)].fg, Color::Green);
    // Scalar's gates have N/A rows (tensor pipe does not apply).
    let buf = draw(&replay_state(&events[..34]), 120, 40);
    let (x, y) = find(&buf, "N/A").expect("an N/A on screen");
    assert_eq!(buf[(x, y)].fg, Color::DarkGray);
}

#[test]
fn ab_compare_colours_each_side() {
    let buf = draw(&replay_state(&fixture_events()), 120, 40);
    let screen = text(&buf);
    assert!(screen.contains("A/B A scalar B wmma+pv+async"), "{screen}");
    // DRAM 30% fails on both sides; the speedup gate passes for B only.
    let (x, y) = find(&buf, "30.0%").expect("DRAM value");
    assert_eq!(buf[(x, y)].fg, Color::Red);
    let (x, y) = find(&buf, "3.33×").expect("speedup value");
    assert_eq!(buf[(x, y)].fg, Color::Green);
}

#[test]
fn replay_badge_shows_speed_and_pause() {
    let mut state = replay_state(&fixture_events());
    assert!(
        text(&draw(&state, 120, 40))
            .lines()
            .next()
            .unwrap()
            .contains("REPLAY ×2")
    );
    state.handle(Action::Pause);
    assert!(
        text(&draw(&state, 120, 40))
            .lines()
            .next()
            .unwrap()
            .contains("REPLAY PAUSED")
    );
}

#[test]
fn banner_says_why_not_live() {
    let state = UiState::replay(
        GateSet::default_set(),
        "x".into(),
        1.0,
        Some("no usable GPU (libcuda.so.1 not found)".into()),
    );
    assert!(text(&draw(&state, 120, 40)).contains("no usable GPU (libcuda.so.1 not found)"));
}

#[test]
fn live_keys_in_replay_explain_themselves() {
    let mut state = replay_state(&fixture_events());
    state.unbound_key("w");
    assert!(text(&draw(&state, 120, 40)).contains("'w' works in live mode only"));
}

#[test]
fn telemetry_panel_says_why_it_is_empty() {
    use attnscope::session::event::{ErrorReport, Event};
    let mut state = UiState::live(GateSet::default_set());
    state.apply(&Stamped {
        t_us: 1,
        event: Event::Error(ErrorReport {
            source: "nvml".into(),
            message: "libnvidia-ml.so.1 not found".into(),
            variant: None,
        }),
    });
    let screen = text(&draw(&state, 120, 40));
    assert!(
        screen.contains("no telemetry: libnvidia-ml.so.1 not found"),
        "{screen}"
    );
}

fn live_with_variant() -> UiState {
    live_with(attnscope::session::Variant::start())
}

/// Live mode with `variant` selected at the mission shape.
fn live_with(variant: attnscope::session::Variant) -> UiState {
    use attnscope::session::Shape;
    use attnscope::session::event::{Event, VariantSelected};
    let mut state = UiState::live(GateSet::default_set());
    state.apply(&Stamped {
        t_us: 1,
        event: Event::VariantSelected(VariantSelected {
            variant,
            shape: Shape::MISSION,
        }),
    });
    state
}

#[test]
fn gates_panel_shows_counter_progress_then_why_counters_failed() {
    use attnscope::session::Variant;
    use attnscope::session::event::{CounterProgress, ErrorReport, Event};
    let mut state = live_with_variant();
    state.apply(&Stamped {
        t_us: 2,
        event: Event::CounterProgress(CounterProgress {
            variant: Variant::start(),
            pass: 3,
            passes: 10,
        }),
    });
    let screen = text(&draw(&state, 120, 40));
    assert!(
        screen.contains("counters: pass 3 of 10") || screen.contains("counters 3/10"),
        "{screen}"
    );
    assert!(screen.contains("pending"), "{screen}");
    state.apply(&Stamped {
        t_us: 3,
        event: Event::Error(ErrorReport {
            source: "cupti".into(),
            message: "GPU performance counters need permission".into(),
            variant: Some(Variant::start()),
        }),
    });
    let buf = draw(&state, 120, 40);
    let screen = text(&buf);
    assert!(!screen.contains("counters: pass"), "{screen}");
    // The gates panel points at the reason; the event log shows it whole.
    assert!(screen.contains("counters failed: GPU"), "{screen}");
    assert!(
        screen.contains("cupti [wmma+pv+async]: GPU performance counters need")
            && screen.contains("permission"),
        "{screen}"
    );
    let (x, y) = find(&buf, "error").expect("the counter gates say error");
    assert_eq!(buf[(x, y)].fg, Color::DarkGray, "N/A cells stay dim");
}

#[test]
fn variant_panel_names_the_split_and_the_wgmma_instruction() {
    use attnscope::session::Shape;
    use attnscope::session::event::{Event, VariantSelected};
    let mut state = UiState::live(GateSet::default_set());
    for (t_us, name, instr, tile) in [
        (1, "mma+async@64x64s2w8k2", "mma.sync", "64×64 s2 w8 k2"),
        (
            2,
            "mma+async@64x128s2w8k2g",
            "flags wgmma",
            "64×128 s2 w8 k2",
        ),
    ] {
        state.apply(&Stamped {
            t_us,
            event: Event::VariantSelected(VariantSelected {
                variant: name.parse().unwrap(),
                shape: Shape::MISSION,
            }),
        });
        let buf = draw(&state, 120, 40);
        let screen = text(&buf);
        for needle in [name, instr, tile] {
            assert!(screen.contains(needle), "{needle} missing:\n{screen}");
        }
    }
}

/// Five flags do not fit the Variant panel by name: their tile tags do, at
/// both sizes, instead of names cut in the middle.
#[test]
fn many_flags_show_as_their_tags() {
    let state = live_with("mma+async@128x128s3w8gqpto".parse().unwrap());
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = text(&draw(&state, w, h));
        assert!(screen.contains("flags g q p t o"), "{w}x{h}:\n{screen}");
        assert!(!screen.contains("ping-"), "{w}x{h}:\n{screen}");
    }
}

/// A long shape fits the Variant panel whole (the label goes, then the
/// spaces) instead of losing its head dimension or `causal`.
#[test]
fn long_shapes_fit_the_variant_panel() {
    use attnscope::session::Shape;
    use attnscope::session::event::{Event, VariantSelected};
    for (shape, causal, w, h, want) in [
        ("4,16,4096,64", false, 80, 24, "│ B4 H16 S4096 D64"),
        ("4,16,4096,64", true, 80, 24, "│ B4H16S4096D64 causal"),
        ("4,16,4096,64", false, 120, 40, "│ shape B4 H16 S4096 D64"),
        ("4,16,4096,64", true, 120, 40, "│ B4 H16 S4096 D64 causal"),
        ("16,32,16384,128", false, 80, 24, "│ B16 H32 S16384 D128"),
        (
            "16,32,16384,128",
            true,
            120,
            40,
            "│ B16H32S16384D128 causal",
        ),
        ("2,8,512,64", true, 80, 24, "│ B2 H8 S512 D64 causal│"),
        ("2,8,512,64", false, 80, 24, "│ shape B2 H8 S512 D64"),
    ] {
        let mut state = live_with_variant();
        state.apply(&Stamped {
            t_us: 2,
            event: Event::VariantSelected(VariantSelected {
                variant: "mma+async@192x128s3w12gqpto".parse().unwrap(),
                shape: Shape {
                    causal,
                    ..shape.parse().unwrap()
                },
            }),
        });
        let screen = text(&draw(&state, w, h));
        assert!(screen.contains(want), "{w}x{h} {want}:\n{screen}");
    }
}

/// What a new user sees first on a machine with no GPU: the banner saying
/// why, the last frame after End, and `q` and `?` still in the key bar.
#[test]
fn no_gpu_banner_after_end_at_both_sizes() {
    use attnscope::ui::state::Mode;
    let mut state = UiState::replay(
        GateSet::default_set(),
        "sessions/fixture.jsonl".into(),
        1.0,
        Some(
            "no usable GPU (libcuda.so.1 not found): replaying sessions/fixture.jsonl · `attnscope doctor` says how to go live"
                .into(),
        ),
    );
    for e in &fixture_events() {
        state.apply(e);
    }
    if let Mode::Replay { ended, .. } = &mut state.mode {
        *ended = true;
    }
    state.notice = Some("end of replay: 65 events".into());
    for (w, h, name) in [(120, 40, "no_gpu_end_120x40"), (80, 24, "no_gpu_end_80x24")] {
        let screen = text(&draw(&state, w, h));
        let lines: Vec<&str> = screen.lines().collect();
        assert!(lines[1].contains("no usable GPU"), "{screen}");
        // The banner wraps rather than lose its end, the way to go live.
        let banner: String = lines[1..4].join(" ");
        assert!(
            banner
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains("`attnscope doctor` says how to go live"),
            "{screen}"
        );
        let bar = lines.last().unwrap();
        assert!(bar.contains("q quit") && bar.contains("? help"), "{bar}");
        assert!(bar.contains("end of replay"), "{bar}");
        insta::assert_snapshot!(name, screen);
    }
}

#[test]
fn a_remote_worker_is_named_in_the_title() {
    let mut state = UiState::live(GateSet::default_set());
    if let attnscope::ui::state::Mode::Live { worker, .. } = &mut state.mode {
        *worker = Some("gpu01".into());
    }
    let buf = draw(&state, 80, 24);
    let title = text(&buf).lines().next().unwrap().to_string();
    assert!(
        title.contains("LIVE") && title.contains("via gpu01"),
        "{title}"
    );
    if let attnscope::ui::state::Mode::Live { worker, .. } = &mut state.mode {
        *worker = Some("srun --gres=gpu:1 -p long attnscope worker".into());
    }
    let title = text(&draw(&state, 120, 40))
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(title.contains("via srun --gres=gpu:1 -p lon…"), "{title}");
}

#[test]
fn build_panel_says_what_the_check_compared_and_its_margin() {
    use attnscope::session::check::{Bounds, DistCheck, Worst};
    use attnscope::session::event::{CorrectnessReport, Event};
    use attnscope::session::{Inputs, Shape, Variant};
    let shape = Shape::new(4, 16, 4096, 64);
    let dist = |inputs, ratio: f64| DistCheck {
        inputs,
        seed: 7,
        pass: ratio <= 1.0,
        worst_element: Worst {
            ratio: ratio / 2.0,
            ..Worst::default()
        },
        worst_row: Worst {
            ratio,
            head: 63,
            row: 4095,
            ..Worst::default()
        },
        ..DistCheck::default()
    };
    let report = |rising: f64| CorrectnessReport {
        variant: Variant::start(),
        shape,
        seed: 7,
        inputs: Inputs::Uniform,
        heads_checked: 64,
        heads_total: 64,
        rows_checked: 4096,
        rows_total: 262_144,
        pass: rising <= 1.0,
        bounds: Some(Bounds::default()),
        checks: vec![dist(Inputs::Uniform, 0.2), dist(Inputs::Rising, rising)],
        ..CorrectnessReport::default()
    };
    let mut state = live_with(Variant::start());
    state.apply(&Stamped {
        t_us: 1,
        event: Event::VariantSelected(attnscope::session::event::VariantSelected {
            variant: Variant::start(),
            shape,
        }),
    });
    state.apply(&Stamped {
        t_us: 2,
        event: Event::Correctness(report(0.25)),
    });
    let screen = text(&draw(&state, 160, 40));
    for want in [
        "correct PASS",
        "margin 4.0×",
        "uniform+rising inputs, seed 7",
        "rows 4,096 of 262,144 in all 64 heads (B×H)",
    ] {
        assert!(screen.contains(want), "{want}:\n{screen}");
    }
    // The rising check fails: the verdict is the whole report's.
    state.apply(&Stamped {
        t_us: 3,
        event: Event::Correctness(report(5.0)),
    });
    let screen = text(&draw(&state, 160, 40));
    assert!(
        screen.contains("correct FAIL") && screen.contains("margin 0.2×"),
        "{screen}"
    );
}

/// 80×24 is the stated minimum: the title keeps the shape, the latency panel each side's p50 (with
/// its interval when measured) and the race's verdict, the key bar every replay key, and help
/// leaves the key bar that closes it in view.
#[test]
fn the_essentials_survive_80x24() {
    let events = fixture_events();
    let state = replay_state(&events);
    let screen = text(&draw(&state, 80, 24));
    let rows: Vec<&str> = screen.lines().collect();
    assert!(
        rows[0].contains("wmma+pv+async @ B2 H8 S512 D64"),
        "{}",
        rows[0]
    );
    for needle in [
        "A race p50 40.5 µs",
        "B race p50 12.2 µs",
        "3.333× [3.300, 3.360]",
        "B faster by",
    ] {
        assert!(screen.contains(needle), "{needle} missing:\n{screen}");
    }
    let keys = rows.last().unwrap();
    for key in [
        "space pause",
        "+ faster",
        "- slower",
        "→ +10 s",
        "← -10 s",
        "q quit",
        "? help",
    ] {
        assert!(keys.contains(key), "{key} missing from the key bar: {keys}");
    }

    // Just after scalar's measurement ended: its interval is known.
    let mid = replay_state(&events[..33]);
    let screen = text(&draw(&mid, 80, 24));
    let p50 = screen.lines().find(|l| l.contains("p50")).unwrap();
    assert!(p50.contains("±"), "no interval beside p50: {p50}");

    let mut help = replay_state(&events);
    help.handle(Action::ToggleHelp);
    let screen = text(&draw(&help, 80, 24));
    insta::assert_snapshot!("help_80x24", screen);
    let keys = screen.lines().last().unwrap();
    assert!(keys.contains("Esc") && keys.contains("close"), "{keys}");
}

#[path = "support/edit_session.rs"]
mod edit_session;

/// After a saved edit raced the build before it, the build panel says how
/// it went in edit words, in the verdict's colour, at both sizes.
#[test]
fn an_edit_verdict_shows_in_the_build_panel() {
    let events = edit_session::events();
    let state = replay_state(&events[..16]);
    for (w, h, name) in [
        (120, 40, "edit_verdict_120x40"),
        (80, 24, "edit_verdict_80x24"),
    ] {
        let buf = draw(&state, w, h);
        insta::assert_snapshot!(name, text(&buf));
        let (x, y) = find(&buf, "edit 1 vs edit 0: 1.8% faster")
            .unwrap_or_else(|| panic!("{w}x{h}:\n{}", text(&buf)));
        assert_eq!(buf[(x, y)].fg, Color::Green, "{w}x{h}");
    }
    let state = replay_state(&events);
    let buf = draw(&state, 120, 40);
    let (x, y) = find(&buf, "edit 3 fails its check").expect("check failure shown");
    assert_eq!(buf[(x, y)].fg, Color::Red);
}

#[test]
fn an_undecided_gate_is_a_yellow_question_mark_with_its_interval() {
    use attnscope::session::event::{Event, LatencyBatch, MeasurementDone};
    use attnscope::session::{Regime, Shape, Variant};
    let wmma: Variant = "wmma".parse().unwrap();
    let mut state = live_with(wmma);
    // 1.20× on solo medians whose intervals allow 1.10×: the ≥ 1.15 speedup
    // gate cannot be decided.
    for (v, median, lo, hi) in [
        (Variant::base(), 1200.0, 1150.0, 1250.0),
        (wmma, 1000.0, 960.0, 1045.0),
    ] {
        state.apply(&Stamped {
            t_us: 2,
            event: Event::Latency(LatencyBatch {
                variant: v,
                shape: Shape::MISSION,
                regime: Some(Regime::BackToBack),
                samples_ns: vec![median as u64; 4],
                ..LatencyBatch::default()
            }),
        });
        state.apply(&Stamped {
            t_us: 3,
            event: Event::MeasurementDone(MeasurementDone {
                variant: v,
                shape: Shape::MISSION,
                samples: 4,
                median_ns: median,
                regime: Some(Regime::BackToBack),
                ci_low_ns: Some(lo),
                ci_high_ns: Some(hi),
                ..MeasurementDone::default()
            }),
        });
    }
    let buf = draw(&state, 120, 40);
    let screen = text(&buf);
    assert!(screen.contains("1 ?"), "{screen}");
    insta::assert_snapshot!("undecided_gate_120x40", screen);
    // The interval stands in the value's place, the status a yellow ?.
    let (x, y) = find(&buf, "1.14–1.26").expect("the speedup's interval on screen");
    let status = (x..buf.area.width)
        .find(|&c| buf[(c, y)].symbol() == "?")
        .expect("a ? on the speedup's row");
    assert_eq!(buf[(status, y)].fg, Color::Yellow);
    // With rows to spare (two gates here), the reason is written out.
    let two = GateSet::from_toml(
        "[[gate]]\nid='speedup'\nname='Speedup vs scalar'\nvalue=['attnscope:speedup_vs_scalar']\n\
         op='>='\nthreshold=1.15\n\
         [[gate]]\nid='correctness'\nname='Correctness'\nvalue=['attnscope:correct']\nop='=='\nthreshold=1",
    )
    .unwrap();
    state.gates = two;
    let screen = text(&draw(&state, 120, 40));
    assert!(
        screen.contains("undecided: the 95%") && screen.contains("straddles ≥ 1.15"),
        "{screen}"
    );
}

/// `L` swaps Build for the speed-of-light panel: the roofs, the shape's intensity and every
/// variant timed there with its share of the roof, at both screen sizes.
#[test]
fn speed_of_light_panel_places_every_timed_variant_under_its_roof() {
    use attnscope::session::event::{
        CopyBandwidth, Event, GpuInfo, LatencyBatch, SessionHeader, VariantSelected,
    };
    use attnscope::session::{Dtype, Shape, Variant};
    let shape = Shape::new(8, 32, 1, 128)
        .with_kv(8, 32768)
        .with_dtype(Dtype::Bf16)
        .with_causal(true);
    let tile: Variant = "mma+async@16x32s3w4k4d".parse().unwrap();
    let mut state = UiState::live(GateSet::default_set());
    state.apply(&Stamped {
        t_us: 0,
        event: Event::Header(SessionHeader {
            gpu: Some(GpuInfo {
                name: "NVIDIA H100 80GB HBM3".into(),
                cc_major: 9,
                sm_count: 132,
                max_sm_mhz: Some(1980),
                ..GpuInfo::default()
            }),
            copy_bandwidth: Some(CopyBandwidth {
                bytes_per_s: 2.75e12,
                read_bytes_per_s: Some(2.99e12),
                ..CopyBandwidth::default()
            }),
            ..SessionHeader::default()
        }),
    });
    // run131's medians at this shape: cuDNN 352 µs, the d tile 370 µs.
    for (t, (variant, ns)) in [
        ("cudnn".parse::<Variant>().unwrap(), 352_000u64),
        (tile, 370_000),
    ]
    .into_iter()
    .enumerate()
    {
        state.apply(&Stamped {
            t_us: 10 + t as u64,
            event: Event::VariantSelected(VariantSelected { variant, shape }),
        });
        state.apply(&Stamped {
            t_us: 20 + t as u64,
            event: Event::Latency(LatencyBatch {
                variant,
                shape,
                samples_ns: vec![ns; 64],
                // run131's probe read 2093 MHz on a 1980 MHz part: the roof keeps 1980.
                sm_clock_mhz: Some(2093),
                ..LatencyBatch::default()
            }),
        });
    }
    let before = text(&draw(&state, 120, 40));
    assert!(!before.contains("Speed of light"), "{before}");
    state.handle(Action::ToggleLight);
    for (w, h) in [(120, 40), (80, 24)] {
        let screen = text(&draw(&state, w, h));
        for want in [
            "Speed of light",
            "memory 2.99 TB/s",
            "1071 TFLOP/s",
            "cudnn",
            "M",
        ] {
            assert!(screen.contains(want), "{w}×{h}: {want}:\n{screen}");
        }
        // 1.07 GB over 352 µs is 3.05 TB/s: 102% of the read roof; the tile 97%.
        assert!(
            screen.contains("102% M") && screen.contains("97% M"),
            "{w}×{h}:\n{screen}"
        );
    }
    state.handle(Action::ToggleLight);
    assert!(text(&draw(&state, 120, 40)).contains("Build"));
    // A gate reads the share of the roof: within 5% of it passes cuDNN (102%) and fails the
    // tile (97%) at 98; at 95 both pass.
    for (threshold, tile_passes) in [(98.0, false), (95.0, true)] {
        let gates = GateSet::from_toml(&format!(
            "[[gate]]\nid = \"roof\"\nname = \"Speed of light\"\nvalue = [\"attnscope:roof_pct\"]\nop = \">=\"\nthreshold = {threshold}\nunit = \"%\"\n"
        ))
        .unwrap();
        for (variant, passes) in [("cudnn", true), ("mma+async@16x32s3w4k4d", tile_passes)] {
            let key = attnscope::model::state::Key {
                variant: variant.parse().unwrap(),
                shape,
            };
            let r = &state.session.gates(&gates, &key)[0];
            assert_eq!(
                r.status == attnscope::metrics::gates::Status::Pass,
                passes,
                "{variant} at {threshold}: {r:?}"
            );
        }
    }
}

/// A Python variant is no tile of the bundled kernel and no cuDNN: the
/// Variant panel says its kernels are its own and that P is what picked it.
#[test]
fn variant_panel_of_a_python_function_names_neither_tile_nor_cudnn() {
    let state = live_with(attnscope::session::Variant::python("flex").unwrap());
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = text(&draw(&state, w, h));
        assert!(screen.contains("py:flex"), "{w}x{h}:\n{screen}");
        assert!(screen.contains("its own kernels"), "{w}x{h}:\n{screen}");
        assert!(!screen.contains("cuDNN's own"), "{w}x{h}:\n{screen}");
    }
    let screen = text(&draw(&state, 120, 40));
    assert!(screen.contains("■ Python"), "{screen}");
}

/// A live screen whose worker replays a recording (`worker --replay`, issue 57): the header says
/// so, and the screen then follows the recording (never a selection the worker will not confirm),
/// badges itself as a replay and refuses the keys that would change what runs.
#[test]
fn a_replaying_worker_is_shown_as_a_replay_and_its_keys_do_nothing() {
    use attnscope::session::Event;
    let mut events = fixture_events();
    if let Event::Header(h) = &mut events[0].event {
        h.replayed_from =
            Some("tour.jsonl.zst (recorded 2026-11-23 18:08 UTC on NVIDIA H100)".into());
    }
    let mut state = UiState::live(GateSet::default_set());
    if let attnscope::ui::state::Mode::Live { worker, .. } = &mut state.mode {
        *worker = Some("attnscope worker --replay tour.jsonl.zst".into());
    }
    for e in &events {
        state.apply(e);
    }
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = text(&draw(&state, w, h));
        let title = screen.lines().next().unwrap();
        assert!(
            title.contains("REPLAY (worker)") && !title.contains("LIVE"),
            "{title}"
        );
        assert!(
            screen.contains("the worker replays a recording, tour.jsonl.zst"),
            "{screen}"
        );
        // The recorded race's sides, not live's slots (scalar against the start).
        assert!(
            screen.contains(" A scalar") && screen.contains(" B wmma+pv+async"),
            "{screen}"
        );
    }
    let before = text(&draw(&state, 120, 40))
        .lines()
        .next()
        .unwrap()
        .to_string();
    for action in [
        Action::Toggle(0),
        Action::NextShape,
        Action::Race,
        Action::ToggleRegime,
    ] {
        assert!(
            state.handle(action).is_empty(),
            "{action:?} sent a command to a replaying worker"
        );
        let notice = state.notice.clone().unwrap_or_default();
        assert!(
            notice.contains("does nothing: the worker replays a recording"),
            "{notice}"
        );
    }
    let after = text(&draw(&state, 120, 40))
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(
        before, after,
        "the title follows the recording, not the keys"
    );
}

/// A finished race stays on screen until a variant is selected after it; then the title, the
/// latency panel and the gates all name that variant (a looping replay selected one and the
/// panels kept the old race under the new name, issue 57).
#[test]
fn a_selection_after_a_race_takes_the_screen_back() {
    use attnscope::session::event::{Event, VariantSelected};
    let events = fixture_events();
    let mut state = replay_state(&events);
    let screen = text(&draw(&state, 120, 40));
    assert!(
        screen.contains("A vs B") && screen.contains("time  interleaved"),
        "{screen}"
    );
    let cudnn: attnscope::session::Variant = "cudnn".parse().unwrap();
    state.apply(&Stamped {
        t_us: state.session.last_t_us + 1,
        event: Event::VariantSelected(VariantSelected {
            variant: cudnn,
            shape: state.session.ab.as_ref().unwrap().shape,
        }),
    });
    let screen = text(&draw(&state, 120, 40));
    assert!(
        !screen.contains("A vs B") && !screen.contains("speedup A/B"),
        "{screen}"
    );
    assert!(screen.lines().next().unwrap().contains("cudnn"), "{screen}");
    assert!(screen.contains("┌ Gates"), "{screen}");
}

/// At 80×24 the Gates panel holds fewer rows than gates: the last row counts the rest (issue 57:
/// the title counted 11 and five showed, unsaid), and the counter progress reads as counters, not
/// as a score.
#[test]
fn gates_that_do_not_fit_are_counted() {
    use attnscope::session::event::{Event, VariantSelected};
    let events = fixture_events();
    let mut state = replay_state(&events);
    let shape = state.session.ab.as_ref().unwrap().shape;
    state.apply(&Stamped {
        t_us: state.session.last_t_us + 1,
        event: Event::VariantSelected(VariantSelected {
            variant: "wmma+pv+async".parse().unwrap(),
            shape,
        }),
    });
    let screen = text(&draw(&state, 80, 24));
    let total = state
        .session
        .gates(&state.gates, &state.shown_key().unwrap())
        .len();
    let shown = screen
        .lines()
        .filter(|l| l.contains(" PASS") || l.contains(" FAIL") || l.contains(" N/A"))
        .count();
    assert!(shown < total, "{screen}");
    let more = format!("+{} more: a taller window shows them", total - shown);
    assert!(screen.contains(&more), "{more}\n{screen}");
    let tall = text(&draw(&state, 120, 50));
    assert!(!tall.contains("more gates"), "{tall}");
}

/// Issue 57: the A/B compare panel at 80×24 showed the gates it had room for and dropped the rest
/// unsaid; they are counted on its last line, as the Gates panel counts its own.
#[test]
fn compare_rows_that_do_not_fit_are_counted() {
    let state = replay_state(&fixture_events());
    let screen = text(&draw(&state, 80, 24));
    assert!(screen.contains("A/B"), "{screen}");
    let total = state.gates.gates.len();
    let line = screen
        .lines()
        .find(|l| l.contains(" more"))
        .unwrap_or_else(|| panic!("no count of hidden rows\n{screen}"));
    let hidden: usize = line
        .split('+')
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(hidden > 0 && hidden < total, "{line}");
    let tall = text(&draw(&state, 120, 50));
    assert!(!tall.contains(" more"), "{tall}");
}

/// Issue 57: names were cut mid-word (`mma+async…4x64s3w4g`); a name that does not fit loses
/// whole parts, and every piece on screen is a real piece of the name.
#[test]
fn variant_names_are_cut_between_parts() {
    let tile = "mma+async@128x128s3w8gqptorae";
    let chars: Vec<char> = tile.chars().collect();
    // Where a part starts: `+`, `@`, and digits giving way to letters (not the x of 128x128).
    let boundary = |i: usize| {
        i == 0
            || i == chars.len()
            || matches!(chars[i], '+' | '@')
            || (chars[i - 1].is_ascii_digit() && chars[i].is_alphabetic() && chars[i] != 'x')
    };
    let state = live_with(tile.parse().unwrap());
    let mut cuts = 0;
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = text(&draw(&state, w, h));
        for cut in screen
            .split_whitespace()
            .filter(|t| t.contains('…') && t.starts_with("mma"))
        {
            let (head, tail) = cut.split_once('…').unwrap();
            assert!(
                tile.starts_with(head) && boundary(head.len()),
                "{w}x{h}: {cut}"
            );
            assert!(
                tile.ends_with(tail) && boundary(tile.len() - tail.len()),
                "{w}x{h}: {cut}"
            );
            cuts += 1;
        }
    }
    assert!(
        cuts > 0,
        "the name never had to be cut: the test shows nothing"
    );
}

/// Issue 57, second fresh-clone pass: the Gates panel cut `≤ 227.0 KiB` to `≤ 227.0 Ki` at both
/// sizes, and called gates still waiting for counters `N/A` (and counted them as n/a).
#[test]
fn thresholds_are_whole_and_waiting_gates_say_so() {
    let state = replay_state(&fixture_events()[..34]);
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = text(&draw(&state, w, h));
        let cut = screen
            .lines()
            .find(|l| l.contains(" Ki ") || l.contains(" Ki│") || l.contains(" Mi "));
        assert!(cut.is_none(), "{w}x{h}: a unit cut: {cut:?}\n{screen}");
        for line in screen.lines().filter(|l| l.contains("pending")) {
            assert!(!line.contains("N/A"), "{w}x{h}: {line}");
        }
    }
    let live = live_with_variant();
    let screen = text(&draw(&live, 120, 40));
    let waiting = screen
        .lines()
        .filter(|l| l.contains("pending") && l.contains("wait"))
        .count();
    assert!(waiting > 0, "{screen}");
    assert!(screen.contains(&format!("{waiting} pending")), "{screen}");
}
