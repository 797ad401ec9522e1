//! `attnscope clocks` (hidden): the in-kernel clock probe against NVML's SM
//! clock, at several probe lengths, with the globaltimer's own step; the data
//! behind the probe's calibration in docs/measurement.md.

use serde_json::json;

use super::fail;
use crate::exit;
use crate::gpu::engine::Engine;
use crate::gpu::telemetry;
use crate::session::event::{L2Mode, Regime};
use crate::session::{Shape, Variant};

pub fn clocks() -> i32 {
    let mut engine = match Engine::new() {
        Ok(e) => e,
        Err(e) => return fail(exit::NO_GPU, e),
    };
    let nvml = telemetry::open().ok();
    let nvml_mhz = || {
        nvml.as_ref()
            .and_then(|n| telemetry::sm_clock_now(n).ok())
            .unwrap_or(0)
    };
    let mut steps = match engine.globaltimer_steps(64) {
        Ok(s) => s,
        Err(e) => return fail(exit::CHECK_FAILED, e),
    };
    steps.sort_unstable();
    let mut rows = Vec::new();
    // Warm the clock up first: a busy loop of long probes.
    for _ in 0..20 {
        let _ = engine.run_clock_probe(2_000_000);
    }
    // Idle, and right after a batch of short kernels, as the latency tags
    // run (the shipped sessions read up to 5% high there).
    let short: Variant = "mma+async@64x128s2w8k2g".parse().expect("valid");
    let batch_first = engine.prepare(&short, &Shape::MISSION).is_ok();
    for after_batch in [false, true] {
        if after_batch && !batch_first {
            continue;
        }
        for cycles in [20_000i64, 200_000, 2_000_000, 20_000_000] {
            for _ in 0..5 {
                if after_batch
                    && let Err(e) = engine.time_batch(
                        &short,
                        &Shape::MISSION,
                        3000,
                        L2Mode::Hot,
                        Regime::BackToBack,
                    )
                {
                    return fail(exit::CHECK_FAILED, e);
                }
                let before = nvml_mhz();
                let host = std::time::Instant::now();
                let (c, ns) = match engine.run_clock_probe(cycles) {
                    Ok(r) => r,
                    Err(e) => return fail(exit::CHECK_FAILED, e),
                };
                let host_ns = host.elapsed().as_nanos() as f64;
                let after = nvml_mhz();
                rows.push(json!({
                    "after_batch": after_batch,
                    "cycles": c, "globaltimer_ns": ns, "host_ns": host_ns,
                    "host_mhz": c as f64 * 1e3 / host_ns,
                    "probe_mhz": c as f64 * 1e3 / ns.max(1) as f64,
                    "nvml_mhz_before": before, "nvml_mhz_after": after,
                }));
            }
        }
    }
    let calibration = engine.calibrate_clock_probe().ok();
    let calibrated = engine.probe_clock().ok();
    engine.use_timer(crate::gpu::engine::Timer::Cupti);
    let durations = engine.timer_step_durations().unwrap_or_default();
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "gpu": engine.info.name,
            "cupti_step_ns": crate::metrics::resolution::step_ns(&durations),
            "globaltimer_vs_host": calibration,
            "calibrated_probe_mhz_now": calibrated,
            "nvml_mhz_now": nvml_mhz(),
            "cupti_probe_durations_ns": durations,
            "expected_mhz": engine.expected_mhz,
            "globaltimer_steps_ns": {
                "min": steps.first(), "median": steps.get(steps.len() / 2), "max": steps.last(),
            },
            "probes": rows,
        }))
        .unwrap_or_default()
    );
    0
}
