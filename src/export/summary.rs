//! `replay --summary`: the final tables of a session as text or JSON, from
//! the same fold the screen uses.

use serde_json::{Value, json};

use crate::metrics::format::{bytes, duration_ns, exact, fixed, median_interval, metric};
use crate::metrics::gates::GateSet;
use crate::model::state::{
    ClockTally, Key, RaceClock, SessionState, Speedup, VariantState, active_throttles,
};
use crate::session::event::regime_name;
use crate::session::event::{AbReport, SessionHeader};
use crate::session::reader::ReadReport;

fn speedup_json(sp: Option<Speedup>) -> Value {
    sp.map_or(
        Value::Null,
        |sp| json!({"value": sp.value, "ci": sp.ci, "source": sp.source_label()}),
    )
}

/// time(variant) ÷ time(cuDNN) at the same shape and regime, when cuDNN ran.
fn vs_cudnn(s: &SessionState, key: &Key) -> Option<Speedup> {
    s.speedup_vs_cudnn(key)
}

/// Why a variant has no times at a shape (a sweep's tile that did not fit
/// there, a failed build), for a row that would otherwise be dashes only;
/// None when it has times.
fn not_timed(s: &SessionState, key: &Key) -> Option<String> {
    let v = s.variants.get(key)?;
    (v.samples() == 0).then(|| {
        // No fault, no failed build, nothing that did not fit: it was selected and left
        // before a batch was timed (a key press, the next tile), or the session ended first.
        s.why_untimed(key).unwrap_or_else(|| {
            if s.current == Some(*key) {
                "the session ended before its first batch was timed".into()
            } else {
                "the session moved on before its first batch was timed".into()
            }
        })
    })
}

pub fn to_json(s: &SessionState, gates: &GateSet, read: &ReadReport) -> Value {
    let across =
        super::across::rows(s).map(|(labels, rows)| json!({"labels": labels, "rows": rows}));
    let variants: Vec<Value> = s
        .variants
        .iter()
        .map(|(key, v)| {
            // The current run of each regime, then the runs a change of
            // conditions ended (never mixed into the current ones).
            let runs: Vec<Value> = v
                .runs
                .iter()
                .map(|(regime, r)| (regime, r, true))
                .chain(v.older.iter().map(|(regime, r)| (regime, r, false)))
                .map(|(regime, r, current)| {
                    let p = r.latency.percentiles();
                    json!({
                        "regime": regime_name(*regime),
                        "conditions": s.conditions_text(key, *regime, &r.conditions),
                        "source_hash": r.conditions.source,
                        "current": current,
                        "latency_ns": p.map(|p| json!({
                            "count": p.count, "min": p.min_ns, "p50": p.p50_ns, "p90": p.p90_ns,
                            "p99": p.p99_ns, "max": p.max_ns, "mean": p.mean_ns,
                        })),
                        "batches": r.batches,
                        "between_batch_rel": r.between_batch_rel(),
                        "measurement": r.measurement,
                    })
                })
                .collect();
            json!({
                "variant": key.variant.name(),
                "shape": key.shape,
                "runs": runs,
                "samples_throttled": v.throttled_samples,
                "samples_clock_tagged": v.clock_tagged_samples,
                "samples_cold_l2": v.l2_cold_samples,
                "sm_clock_mhz_range": v.sm_clock_seen,
                "build": v.build,
                "build_failure": v.build_failure,
                "correctness": v.correctness,
                "counters": v.counters,
                "speedup_vs_scalar": speedup_json(s.speedup_vs_scalar(key)),
                "speedup_vs_cudnn": speedup_json(vs_cudnn(s, key)),
                "not_timed": not_timed(s, key),
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
        "across_sources": across,
        "telemetry": telemetry_json(s),
        "ab": s.ab,
        "ab_clock": s.race_clock.map(|c| json!({
            "a": {"samples": c.a.samples, "clock_tagged": c.a.tagged, "throttled": c.a.throttled},
            "b": {"samples": c.b.samples, "clock_tagged": c.b.tagged, "throttled": c.b.throttled},
        })),
        "bookmarks": s.bookmarks,
        "edits": s.edits.iter().map(|(kernel, history)| json!({
            "kernel": kernel,
            "edits": history.iter().map(|e| json!({
                "record": e.record, "verdict": e.verdict, "line": e.line(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
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

/// Corrupt lines shown with their message; the rest by number only.
const SKIPPED_SHOWN: usize = 10;

/// `3, 7, 12–40, 52`: ascending line numbers with runs joined, cut short
/// (with how many more) past about 200 characters.
fn line_numbers(lines: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &n in lines {
        match runs.last_mut() {
            Some((_, hi)) if n == *hi + 1 => *hi = n,
            _ => runs.push((n, n)),
        }
    }
    let mut out = String::new();
    for (i, (lo, hi)) in runs.iter().enumerate() {
        if out.len() > 200 {
            let more: u64 = runs[i..].iter().map(|(lo, hi)| hi - lo + 1).sum();
            out.push_str(&format!(" … ({more} more)"));
            break;
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}–{hi}")
        });
    }
    out
}

pub fn to_text(s: &SessionState, gates: &GateSet, read: &ReadReport) -> String {
    let mut out = String::new();
    let mut line = |l: String| {
        out.push_str(&l);
        out.push('\n');
    };
    if let Some(h) = &s.header {
        header_text(s, h, &mut line);
    }
    skipped_text(read, &mut line);
    line(String::new());
    variant_table_text(s, &mut line);
    if let Some(t) = super::across::text(s) {
        for l in t.lines() {
            line(l.to_string());
        }
    }
    gates_text(s, gates, &mut line);
    if let Some(ab) = &s.ab {
        ab_text(ab, s.race_clock.as_ref(), &mut line);
    }
    edits_text(s, &mut line);
    telemetry_text(s, &mut line);
    errors_text(s, &mut line);
    out
}

/// Each watched kernel's edits, one line each with its verdict.
fn edits_text(s: &SessionState, line: &mut impl FnMut(String)) {
    for (kernel, history) in &s.edits {
        let who = if kernel.is_empty() {
            "the kernel".to_string()
        } else {
            format!("kernel {kernel}")
        };
        line(String::new());
        line(format!(
            "edits of {who} (edit 0: the source at the start; each raced against the build before it):"
        ));
        for e in history {
            line(format!("  {}", e.line()));
        }
    }
}

/// Which session this was: tool, host, GPU, sources, driver, timer.
fn header_text(s: &SessionState, h: &SessionHeader, line: &mut impl FnMut(String)) {
    let gpu = h.gpu.as_ref().map_or("no GPU".to_string(), |g| {
        // Which of a host's GPUs it was (older sessions did not say).
        let bus = g
            .pci_bus_id
            .as_ref()
            .map_or(String::new(), |b| format!(", bus {b}"));
        format!(
            "{} (sm_{}{}, {} SMs{bus})",
            g.name, g.cc_major, g.cc_minor, g.sm_count
        )
    });
    line(format!(
        "session: attnscope {} on {} — {gpu}",
        h.tool_version, h.host
    ));
    for src in &h.sources {
        line(format!(
            "  source {}: {} on {}, timer {}, from {}",
            src.label,
            src.gpu.as_ref().map_or("no GPU", |g| g.name.as_str()),
            src.host,
            src.timer.as_deref().unwrap_or("not recorded"),
            src.file
        ));
    }
    line(format!(
        "driver {}{} · CUDA {} · {} event{} over {:.1} s · {} error{}",
        h.nvidia_driver.as_deref().unwrap_or("not recorded"),
        h.driver_version
            .as_deref()
            .map_or(String::new(), |v| format!(" (CUDA {v} API)")),
        h.cuda_version.as_deref().unwrap_or("not recorded"),
        s.events,
        if s.events == 1 { "" } else { "s" },
        s.last_t_us as f64 / 1e6,
        s.errors,
        if s.errors == 1 { "" } else { "s" }
    ));
    line(format!(
        "timer: {}",
        match (&h.timer, h.timer_resolution_ns) {
            (Some(t), Some(step)) => format!(
                "{t}, step {} ns (no interval here is narrower)",
                crate::metrics::format::step_text(step)
            ),
            (Some(t), None) => format!("{t}, step not measured"),
            _ => "not recorded (a session from before timer steps were measured)".into(),
        }
    ));
}

/// The lines the reader could not use, when there were any.
fn skipped_text(read: &ReadReport, line: &mut impl FnMut(String)) {
    if let Some(t) = read.second_session_text() {
        line(format!("file: {t}"));
    }
    if !read.skipped.is_empty() || read.torn_tail {
        line(format!(
            "file: {} corrupt line{} skipped{}",
            read.skipped.len(),
            if read.skipped.len() == 1 { "" } else { "s" },
            if read.torn_tail {
                ", torn last line dropped"
            } else {
                ""
            }
        ));
        for l in read.skipped.iter().take(SKIPPED_SHOWN) {
            line(format!("  line {}: {}", l.line, l.message));
        }
        if read.skipped.len() > SKIPPED_SHOWN {
            let rest: Vec<u64> = read.skipped[SKIPPED_SHOWN..]
                .iter()
                .map(|l| l.line)
                .collect();
            line(format!("  and lines {}", line_numbers(&rest)));
        }
    }
}

/// One row per variant, shape and regime, with the cuDNN ratio column when
/// cuDNN ran.
fn variant_table_text(s: &SessionState, line: &mut impl FnMut(String)) {
    let cudnn_seen = s.variants.keys().any(|k| k.variant.is_cudnn());
    // Wide enough for the longest shape (`B8 H32/8 S1/32768 D128 bf16 causal`).
    let sw = s
        .variants
        .keys()
        .map(|k| k.shape.to_string().chars().count())
        .fold(22, usize::max);
    line(format!(
        "{:<28} {:<sw$} {:<13} {:>9} {:>8} {:>9} {:>9} {:>8} {:>5} {:>9} {:>6} {:>7}{}",
        "variant",
        "shape",
        "regime",
        "p50",
        "±95%",
        "p90",
        "p99",
        "n",
        "regs",
        "smem",
        "spill",
        "correct",
        if cudnn_seen { "  ÷ cuDNN" } else { "" }
    ));
    for (key, v) in &s.variants {
        variant_rows(s, (key, v), (cudnn_seen, sw), line);
    }
    if s.ab.is_some() {
        line(
            "p50: each row's run in its regime (with ±95%: its measurement's median, grouped over batches; without: its histogram's, within 0.1%); the A/B race's p50s below are its own grouped medians of its kept launches, interpolated within the timer's step"
                .into(),
        );
    }
    if cudnn_seen {
        line(
            "÷ cuDNN: this variant's time over cuDNN's at the same shape and regime (below 1: faster)"
                .into(),
        );
    }
}

/// A variant's rows at one shape: one per timed regime, or why it was not
/// timed, then its clock note.
fn variant_rows(
    s: &SessionState,
    (key, v): (&Key, &VariantState),
    (cudnn_seen, sw): (bool, usize),
    line: &mut impl FnMut(String),
) {
    if let Some(why) = not_timed(s, key) {
        line(format!(
            "{:<28} {:<sw$} not timed — {why}",
            key.variant.name(),
            key.shape.to_string()
        ));
        return;
    }
    let (regs, smem, spill) = match v.build.as_ref() {
        Some(_) if key.variant.is_library() => ("—".into(), "—".into(), "—".into()),
        Some(b) => (
            b.registers.to_string(),
            bytes(f64::from(b.smem_static_bytes) + f64::from(b.smem_dynamic_bytes)),
            (u64::from(b.spill_store_bytes) + u64::from(b.spill_load_bytes)).to_string(),
        ),
        None => ("—".into(), "—".into(), "—".into()),
    };
    let correct = match (&v.correctness, &v.build_failure) {
        (Some(c), _) => if c.pass { "PASS" } else { "FAIL" }.to_string(),
        (None, Some(_)) => "no build".into(),
        (None, None) => "—".into(),
    };
    let cudnn_key = Key {
        variant: key.variant.cudnn_beside(),
        shape: key.shape,
    };
    // A variant with no samples had its row above, with why.
    for (regime, r) in v.runs.iter().filter(|(_, r)| r.latency.count() > 0) {
        let p = r.latency.percentiles();
        let d = |f: fn(&crate::metrics::histogram::Percentiles) -> f64| {
            p.as_ref().map_or("—".into(), |p| duration_ns(f(p)))
        };
        let median = v.median_ns(*regime);
        let ci = r.measurement.as_ref().map_or("—".to_string(), |m| {
            median_interval(m)
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string()
        });
        let ratio = match (
            median,
            s.variants
                .get(&cudnn_key)
                .and_then(|c| c.run_like(*regime, &r.conditions))
                .and_then(|c| c.median_ns()),
        ) {
            (Some(m), Some(c)) if cudnn_seen => format!("  {}", fixed(m / c, 3)),
            _ if cudnn_seen => "  —".into(),
            _ => String::new(),
        };
        line(format!(
            "{:<28} {:<sw$} {:<13} {:>9} {:>8} {:>9} {:>9} {:>8} {:>5} {:>9} {:>6} {:>7}{ratio}",
            key.variant.name(),
            key.shape.to_string(),
            regime_name(*regime).trim_start_matches("regime "),
            median.map_or("—".into(), duration_ns),
            ci,
            d(|p| p.p90_ns),
            d(|p| p.p99_ns),
            p.map_or(0, |p| p.count),
            regs,
            smem,
            spill,
            correct
        ));
    }
    if v.clock_tagged_samples > 0 {
        // The counts are the variant's over every run; the rows above are
        // only its current runs. Earlier runs (an edit's build before the
        // next, another L2 mode) are said, or the count reads as the rows'.
        let earlier = v
            .older
            .iter()
            .filter(|(_, r)| r.latency.count() > 0)
            .count();
        let counted = match earlier {
            0 => String::new(),
            1 => ", counting 1 earlier run the rows above leave out (another build, L2 mode or inputs)".into(),
            n => format!(
                ", counting {n} earlier runs the rows above leave out (another build, L2 mode or inputs)"
            ),
        };
        line(format!(
            "{:<28} {} of {} samples throttled or below the expected clock{counted}{}",
            "",
            v.throttled_samples,
            v.clock_tagged_samples,
            v.sm_clock_seen
                .map(|(lo, hi)| format!("; SM clock {lo}–{hi} MHz (probe, per batch)"))
                .unwrap_or_default()
        ));
    }
}

/// Each variant's gate results and counters.
fn gates_text(s: &SessionState, gates: &GateSet, line: &mut impl FnMut(String)) {
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
            let why = match r.note().replace(super::PRESS_G, "") {
                n if n.is_empty() => n,
                n => format!("  ({n})"),
            };
            let source = match r.id.as_str() {
                "speedup" if r.value.is_some() => s.speedup_vs_scalar(key),
                "speedup_cudnn" if r.value.is_some() => s.speedup_vs_cudnn(key),
                _ => None,
            }
            .map_or(String::new(), |sp| format!("  ({})", sp.source_label()));
            line(format!(
                "  {:<22} {:>12} {} {:<10} {}{why}{source}",
                r.name,
                value,
                r.op.symbol(),
                metric(r.threshold, &r.unit),
                r.status
            ));
        }
        if let Some(c) = &v.counters {
            line(format!(
                "  counters ({} passes, {} ms):",
                c.passes,
                fixed(c.collection_ms, 0)
            ));
            for (name, value) in &c.values {
                line(format!("    {name:<66} {}", exact(*value)));
            }
        }
    }
}

/// The A/B race's verdict, its design and its own rounds' clocks. Its p50s
/// are its own medians (what the speedup divides), said to be, beside the
/// table's rows of the same variants.
fn ab_text(ab: &AbReport, clock: Option<&RaceClock>, line: &mut impl FnMut(String)) {
    line(String::new());
    let timer = if ab.timer.is_empty() {
        String::new()
    } else {
        format!(", {} timer", ab.timer)
    };
    line(format!(
        "A/B: A={} B={} @ {}, {}: race p50 {} vs {} (each side's grouped median over this race's kept launches{timer}), speedup {}× [{}, {}] 95% CI, {} ({}), n={}/{}",
        ab.a,
        ab.b,
        ab.shape,
        regime_name(ab.regime),
        duration_ns(ab.p50_a_ns),
        duration_ns(ab.p50_b_ns),
        fixed(ab.speedup, 3),
        fixed(ab.ci_low, 3),
        fixed(ab.ci_high, 3),
        ab.verdict,
        ab.test,
        ab.samples_a,
        ab.samples_b
    ));
    if !ab.design.is_empty() {
        line(format!("     {}", ab.design));
    }
    if let Some(c) = clock.filter(|c| c.total().tagged > 0) {
        let side = |t: &ClockTally| format!("{} of {}", t.throttled, t.tagged);
        let sides = if ab.a == ab.b {
            side(&c.a)
        } else {
            format!("A {}, B {}", side(&c.a), side(&c.b))
        };
        line(format!(
            "     {sides} samples of this race's own rounds throttled or below the expected clock"
        ));
    }
}

/// The telemetry spans, or why there were none.
fn telemetry_text(s: &SessionState, line: &mut impl FnMut(String)) {
    if let (Value::Null, Some(e)) = (telemetry_json(s), &s.telemetry_error) {
        line(String::new());
        line(format!("telemetry: none ({e})"));
    }
    if let Value::Object(t) = telemetry_json(s) {
        line(String::new());
        let span = |v: &Value| {
            let lo = v[0].as_f64().unwrap_or(f64::NAN);
            let hi = v[1].as_f64().unwrap_or(f64::NAN);
            if (hi - lo).abs() < 0.5 {
                fixed(lo, 0)
            } else {
                format!("{}–{}", fixed(lo, 0), fixed(hi, 0))
            }
        };
        line(format!(
            "telemetry (the last {} samples): SM clock {} MHz, memory clock {} MHz, power {} W, temperature {} °C, {} throttled",
            t["samples_kept"],
            span(&t["sm_clock_mhz"]),
            span(&t["mem_clock_mhz"]),
            span(&t["power_w"]),
            span(&t["temp_c"]),
            t["samples_throttled"],
        ));
    }
}

/// The session's error lines.
fn errors_text(s: &SessionState, line: &mut impl FnMut(String)) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::event::{Event, GpuInfo, SessionHeader, Stamped};

    fn first_line(gpu: GpuInfo) -> String {
        let mut s = SessionState::default();
        s.apply(&Stamped {
            t_us: 0,
            event: Event::Header(SessionHeader {
                host: "h".into(),
                tool_version: "0.1.0".into(),
                gpu: Some(gpu),
                ..SessionHeader::default()
            }),
        });
        let text = to_text(&s, &GateSet::default_set(), &ReadReport::default());
        text.lines().next().unwrap_or_default().to_string()
    }

    #[test]
    fn corrupt_lines_are_numbered_compactly() {
        assert_eq!(line_numbers(&[3, 7, 12, 13, 14, 40]), "3, 7, 12–14, 40");
        let many: Vec<u64> = (1..=1000).map(|i| i * 2).collect();
        let text = line_numbers(&many);
        assert!(text.len() < 260 && text.ends_with("more)"), "{text}");
    }

    #[test]
    fn the_header_line_names_the_bus_when_recorded() {
        let gpu = GpuInfo {
            name: "NVIDIA H100 80GB HBM3".into(),
            cc_major: 9,
            sm_count: 132,
            ..GpuInfo::default()
        };
        assert_eq!(
            first_line(gpu.clone()),
            "session: attnscope 0.1.0 on h — NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"
        );
        let on_bus = GpuInfo {
            pci_bus_id: Some("0000:65:00.0".into()),
            ..gpu
        };
        assert_eq!(
            first_line(on_bus),
            "session: attnscope 0.1.0 on h — NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, bus 0000:65:00.0)"
        );
    }
}
