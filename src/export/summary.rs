//! `replay --summary`: the final tables of a session as text or JSON, from
//! the same fold the screen uses.

use serde_json::{Value, json};

use crate::metrics::format::{bytes, duration_ns, metric};
use crate::metrics::gates::{GateSet, Status};
use crate::session::reader::ReadReport;

use crate::model::state::{SessionState, active_throttles};

pub fn to_json(s: &SessionState, gates: &GateSet, read: &ReadReport) -> Value {
    let variants: Vec<Value> = s
        .variants
        .iter()
        .map(|(key, v)| {
            let p = v.latency.percentiles();
            json!({
                "variant": key.variant.name(),
                "shape": key.shape,
                "latency_ns": p.map(|p| json!({
                    "count": p.count, "min": p.min_ns, "p50": p.p50_ns, "p90": p.p90_ns,
                    "p99": p.p99_ns, "max": p.max_ns, "mean": p.mean_ns,
                })),
                "samples_throttled": v.throttled_samples,
                "samples_clock_tagged": v.clock_tagged_samples,
                "samples_cold_l2": v.l2_cold_samples,
                "sm_clock_mhz_range": v.sm_clock_seen,
                "measurement": v.measurement,
                "build": v.build,
                "build_failure": v.build_failure,
                "correctness": v.correctness,
                "counters": v.counters,
                "speedup_vs_scalar": s.speedup_vs_scalar(key),
                "gates": s.gates(gates, key),
            })
        })
        .collect();
    json!({
        "header": s.header,
        "events": s.events,
        "errors": s.errors,
        "duration_s": s.last_t_us as f64 / 1e6,
        "skipped_lines": read.skipped.iter().map(|l| json!({"line": l.line, "message": l.message})).collect::<Vec<_>>(),
        "torn_tail": read.torn_tail,
        "variants": variants,
        "telemetry": telemetry_json(s),
        "ab": s.ab,
        "bookmarks": s.bookmarks,
    })
}

fn telemetry_json(s: &SessionState) -> Value {
    let t = &s.telemetry;
    if t.is_empty() {
        return Value::Null;
    }
    let range = |f: fn(&crate::session::event::TelemetrySample) -> f64| {
        let lo = t.iter().map(f).fold(f64::INFINITY, f64::min);
        let hi = t.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
        json!([lo, hi])
    };
    let throttled = t
        .iter()
        .filter(|x| !active_throttles(&x.throttle_reasons).is_empty())
        .count();
    json!({
        "samples_kept": t.len(),
        "sm_clock_mhz": range(|x| x.sm_clock_mhz as f64),
        "mem_clock_mhz": range(|x| x.mem_clock_mhz as f64),
        "power_w": range(|x| x.power_w),
        "temp_c": range(|x| x.temp_c as f64),
        "samples_throttled": throttled,
    })
}

pub fn to_text(s: &SessionState, gates: &GateSet, read: &ReadReport) -> String {
    let mut out = String::new();
    let mut line = |l: String| {
        out.push_str(&l);
        out.push('\n');
    };
    if let Some(h) = &s.header {
        let gpu = h.gpu.as_ref().map_or("no GPU".to_string(), |g| {
            format!(
                "{} (sm_{}{}, {} SMs)",
                g.name, g.cc_major, g.cc_minor, g.sm_count
            )
        });
        line(format!(
            "session: attnscope {} on {} — {gpu}",
            h.tool_version, h.host
        ));
        line(format!(
            "driver {}{} · CUDA {} · {} events over {:.1} s · {} errors",
            h.nvidia_driver.as_deref().unwrap_or("?"),
            h.driver_version
                .as_deref()
                .map_or(String::new(), |v| format!(" (CUDA {v} API)")),
            h.cuda_version.as_deref().unwrap_or("?"),
            s.events,
            s.last_t_us as f64 / 1e6,
            s.errors
        ));
    }
    if !read.skipped.is_empty() || read.torn_tail {
        line(format!(
            "file: {} corrupt lines skipped{}",
            read.skipped.len(),
            if read.torn_tail {
                ", torn last line dropped"
            } else {
                ""
            }
        ));
        for l in read.skipped.iter().take(10) {
            line(format!("  line {}: {}", l.line, l.message));
        }
    }
    line(String::new());
    line(format!(
        "{:<26} {:<18} {:>9} {:>9} {:>9} {:>9} {:>7} {:>5} {:>9} {:>6} {:>8}",
        "variant", "shape", "p50", "p90", "p99", "min", "n", "regs", "smem", "spill", "correct"
    ));
    for (key, v) in &s.variants {
        let p = v.latency.percentiles();
        let d = |f: fn(&crate::metrics::histogram::Percentiles) -> f64| {
            p.as_ref().map_or("—".into(), |p| duration_ns(f(p)))
        };
        let (regs, smem, spill) =
            v.build
                .as_ref()
                .map_or(("—".into(), "—".into(), "—".into()), |b| {
                    (
                        b.registers.to_string(),
                        bytes((b.smem_static_bytes + b.smem_dynamic_bytes) as f64),
                        (b.spill_store_bytes + b.spill_load_bytes).to_string(),
                    )
                });
        let correct = match (&v.correctness, &v.build_failure) {
            (Some(c), _) => if c.pass { "PASS" } else { "FAIL" }.to_string(),
            (None, Some(_)) => "no build".into(),
            (None, None) => "—".into(),
        };
        line(format!(
            "{:<26} {:<18} {:>9} {:>9} {:>9} {:>9} {:>7} {:>5} {:>9} {:>6} {:>8}",
            key.variant.name(),
            key.shape.to_string(),
            d(|p| p.p50_ns),
            d(|p| p.p90_ns),
            d(|p| p.p99_ns),
            d(|p| p.min_ns),
            p.map_or(0, |p| p.count),
            regs,
            smem,
            spill,
            correct
        ));
        if v.clock_tagged_samples > 0 {
            line(format!(
                "{:<26} {} of {} samples throttled or below the expected clock{}",
                "",
                v.throttled_samples,
                v.clock_tagged_samples,
                v.sm_clock_seen
                    .map(|(lo, hi)| format!("; SM clock {lo}–{hi} MHz"))
                    .unwrap_or_default()
            ));
        }
    }
    for (key, v) in &s.variants {
        let results = s.gates(gates, key);
        if v.counters.is_none() && v.build.is_none() {
            continue;
        }
        line(String::new());
        line(format!("gates: {} @ {}", key.variant, key.shape));
        for r in results {
            let value = r
                .value
                .map(|x| metric(x, &r.unit))
                .unwrap_or_else(|| "—".into());
            let why = match &r.status {
                Status::NotApplicable(w) => format!("  ({w})"),
                _ => String::new(),
            };
            line(format!(
                "  {:<22} {:>12} {} {:<10} {}{why}",
                r.name,
                value,
                r.op.symbol(),
                metric(r.threshold, &r.unit),
                r.status
            ));
        }
        if let Some(c) = &v.counters {
            line(format!(
                "  counters ({} passes, {:.0} ms):",
                c.passes, c.collection_ms
            ));
            for (name, value) in &c.values {
                line(format!("    {name:<66} {value}"));
            }
        }
    }
    if let Some(ab) = &s.ab {
        line(String::new());
        line(format!(
            "A/B: A={} B={} @ {}: p50 {} vs {}, speedup {:.3}× [{:.3}, {:.3}] 95% CI, {} ({}, p={:.2e}), n={}/{}",
            ab.a,
            ab.b,
            ab.shape,
            duration_ns(ab.p50_a_ns),
            duration_ns(ab.p50_b_ns),
            ab.speedup,
            ab.ci_low,
            ab.ci_high,
            ab.verdict,
            ab.test,
            ab.p_value,
            ab.samples_a,
            ab.samples_b
        ));
    }
    if let (Value::Null, Some(e)) = (telemetry_json(s), &s.telemetry_error) {
        line(String::new());
        line(format!("telemetry: none ({e})"));
    }
    if let Value::Object(t) = telemetry_json(s) {
        line(String::new());
        line(format!(
            "telemetry: SM clock {} MHz, memory clock {} MHz, power {} W, temperature {} °C, {} of {} samples throttled",
            t["sm_clock_mhz"],
            t["mem_clock_mhz"],
            t["power_w"],
            t["temp_c"],
            t["samples_throttled"],
            t["samples_kept"]
        ));
    }
    let errors: Vec<_> = s
        .log
        .iter()
        .filter(|l| l.level == crate::model::state::Level::Error)
        .collect();
    if !errors.is_empty() {
        line(String::new());
        line(format!("errors ({} in the session):", s.errors));
        for e in errors {
            line(format!("  {:>8.2}s {}", e.t_us as f64 / 1e6, e.text));
        }
    }
    out
}
