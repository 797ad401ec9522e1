//! A session with three edits of the primary kernel: edit 1 raced faster
//! than edit 0, edit 2 did not build, edit 3 failed its check; edit 1's
//! back-to-back samples start a new run. Shared by the fold, render and
//! summary tests.

use attnscope::session::KernelId;
use attnscope::session::event::edit::EditVerdict;
use attnscope::session::event::*;
use attnscope::session::manifest::registry;

pub fn stamp(t_us: u64, event: Event) -> Stamped {
    Stamped { t_us, event }
}

/// Edit 0's build as the kernel a reload keeps (`bundled~e0`).
pub fn edit0() -> Variant {
    Variant {
        kernel: registry::register_edit_build(KernelId::BUNDLED, 0),
        ..Variant::start()
    }
}

fn built(variant: Variant, hash: &str) -> Event {
    Event::BuildFinished(BuildReport {
        variant,
        arch: "sm_90a".into(),
        registers: 128,
        source_hash: hash.into(),
        ..BuildReport::default()
    })
}

pub fn batch(variant: Variant, regime: Regime, l2: L2Mode, base: u64) -> Event {
    Event::Latency(LatencyBatch {
        variant,
        shape: Shape::MISSION,
        l2,
        regime: Some(regime),
        samples_ns: (0..20).map(|i| base + i % 5).collect(),
        timer: "cupti".into(),
        inputs: Some(attnscope::session::Inputs::Uniform),
        ..LatencyBatch::default()
    })
}

fn checked(variant: Variant, pass: bool) -> Event {
    Event::Correctness(CorrectnessReport {
        variant,
        shape: Shape::MISSION,
        pass,
        value_scale: 1.0,
        ..CorrectnessReport::default()
    })
}

fn record(edit: u32, hash: &str, diff: &str, previous: u32, kept: Option<String>) -> Event {
    Event::Edit(EditRecord {
        kernel: String::new(),
        edit,
        source_hash: hash.into(),
        files: [("attention.cu".to_string(), format!("{hash}-file"))].into(),
        diff: diff.into(),
        previous,
        previous_build: kept,
        dropped: Vec::new(),
    })
}

pub fn events() -> Vec<Stamped> {
    let v = Variant::start();
    let e0 = edit0();
    let e1 = Variant {
        kernel: registry::register_edit_build(KernelId::BUNDLED, 1),
        ..v
    };
    let race = AbReport {
        a: e0,
        b: v,
        shape: Shape::MISSION,
        samples_a: 40,
        samples_b: 40,
        p50_a_ns: 6620.0,
        p50_b_ns: 6503.0,
        speedup: 1.018,
        ci_low: 1.012,
        ci_high: 1.024,
        verdict: "B faster by 1.8%".into(),
        done: true,
        regime: Some(Regime::Interleaved),
        timer: "cupti".into(),
        ..AbReport::default()
    };
    let mut k0 = registry::record(e0.kernel);
    k0.source_hash = Some("h0".into());
    let failed = |edit, outcome, detail: &str| {
        Event::EditVerdict(EditVerdict {
            kernel: String::new(),
            edit,
            against: 1,
            outcome,
            detail: detail.into(),
            ..EditVerdict::default()
        })
    };
    let events = vec![
        Event::Header(SessionHeader {
            tool: "attnscope".into(),
            tool_version: "0.1.0".into(),
            schema_version: SCHEMA_VERSION,
            host: "h100-box".into(),
            timer: Some("cupti".into()),
            timer_resolution_ns: Some(32.0),
            ..SessionHeader::default()
        }),
        Event::VariantSelected(VariantSelected {
            variant: v,
            shape: Shape::MISSION,
        }),
        built(v, "h0"),
        checked(v, true),
        batch(v, Regime::BackToBack, L2Mode::Hot, 6600),
        batch(v, Regime::BackToBack, L2Mode::Hot, 6610),
        Event::KernelLoaded(k0),
        built(v, "h1"),
        record(
            1,
            "h1",
            "softmax.cuh +3 −1",
            0,
            Some(registry::label(e0.kernel)),
        ),
        checked(v, true),
        built(e0, "h0"),
        batch(e0, Regime::Interleaved, L2Mode::Hot, 6620),
        batch(v, Regime::Interleaved, L2Mode::Hot, 6500),
        Event::AbResult(race.clone()),
        Event::EditVerdict(EditVerdict::from_race("", 1, 0, &race)),
        batch(v, Regime::BackToBack, L2Mode::Hot, 6500),
        record(2, "h2", "softmax.cuh +1 −0", 1, None),
        failed(
            2,
            EditOutcome::BuildFailed,
            "attention.cu(12): error: expected a \";\"",
        ),
        Event::KernelLoaded(registry::record(e1.kernel)),
        built(v, "h3"),
        record(
            3,
            "h3",
            "attention.cu +2 −2",
            1,
            Some(registry::label(e1.kernel)),
        ),
        checked(v, false),
        failed(
            3,
            EditOutcome::CheckFailed,
            "its output is not the reference's",
        ),
    ];
    events
        .into_iter()
        .enumerate()
        .map(|(i, e)| stamp(1000 * (i as u64 + 1), e))
        .collect()
}
