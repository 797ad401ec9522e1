//! Number formatting shared by the screen and the text summaries.

/// Nanoseconds as a short human latency: `812 ns`, `12.3 µs`, `4.56 ms`, `1.20 s`.
pub fn duration_ns(ns: f64) -> String {
    // A negative time is no measurement either.
    if !ns.is_finite() || ns < 0.0 {
        return "—".into();
    }
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{} µs", sig3(ns / 1e3))
    } else if ns < 1e9 {
        format!("{} ms", sig3(ns / 1e6))
    } else {
        format!("{} s", sig3(ns / 1e9))
    }
}

/// A stretch of session time in the unit a person reads it in: `42 s`, `12.5 min`, `33.6 h`.
pub fn span_us(us: u64) -> String {
    let s = us as f64 / 1e6;
    if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// A number with `digits` decimals; `—` when it is not a number, and an
/// exponent past a million (a damaged file's 1e300 is not 301 digits).
pub fn fixed(v: f64, digits: usize) -> String {
    if !v.is_finite() {
        "—".into()
    } else if v.abs() >= 1e6 {
        format!("{v:.digits$e}")
    } else {
        format!("{v:.digits$}")
    }
}

/// A value at full precision, as recorded (a counter), in exponent form
/// outside 1e-6..1e15 where plain digits would run to hundreds.
pub fn exact(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "—".into()
    } else if a == 0.0 || (1e-6..1e15).contains(&a) {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

/// Bytes with a binary unit: `512 B`, `40.0 KiB`, `3.21 GiB`.
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    if !b.is_finite() || b < 0.0 {
        return "—".into();
    }
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else {
        format!("{} {}", sig3(v), UNITS[i])
    }
}

/// Three significant digits, no exponent: 1.23, 12.3, 123 (an exponent
/// past 10^15, `—` for what is not a number).
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "—".into()
    } else if a >= 1e15 {
        format!("{v:.2e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A relative noise as a percentage, `±0.42%`, or `±<0.01%` when smaller.
pub fn noise(rel: f64) -> String {
    if !rel.is_finite() {
        "±?".into()
    } else if rel < 1e-4 {
        "±<0.01%".into()
    } else {
        format!("±{}%", fixed(rel * 100.0, 2))
    }
}

/// The median's 95% interval as `±0.42%`, said honestly: when the data are
/// steadier than the timer resolves, `±0.25% (below the timer's 32 ns step,
/// 0.49%)`; `±? (one batch)` when there is no interval; sessions recorded
/// before batch intervals keep their old per-launch figure, marked.
pub fn median_interval(m: &crate::session::event::MeasurementDone) -> String {
    if m.batches == 0 && m.regime.is_none() {
        return format!("{} (per launch, old session)", noise(m.rel_noise));
    }
    if let Some(more) = m.needs_more_s.filter(|s| s.is_finite()) {
        return format!(
            "±? (needs about {} s more for an interval under ±5%)",
            fixed(more, if more < 10.0 { 1 } else { 0 })
        );
    }
    if !m.rel_noise.is_finite() {
        return if m.batches < 5 {
            format!(
                "±? ({} batch{}: no interval)",
                m.batches,
                if m.batches == 1 { "" } else { "es" }
            )
        } else {
            "±?".into()
        };
    }
    let pct = format!("±{}%", fixed(m.rel_noise * 100.0, 2));
    if let Some(r) = &m.reruns {
        // The interval is for a rerun; this run's own is said beside it.
        let own = (r.run_high - r.run_low) / 2.0 / m.median_ns;
        let at_step = if m.limited_by_resolution {
            ", the timer's step"
        } else {
            ""
        };
        return format!(
            "{pct} for a rerun (this run ±{}%{at_step})",
            fixed(own * 100.0, 2)
        );
    }
    match m.resolution_ns {
        // A step is a share of a median only when both are positive numbers.
        Some(step) if m.limited_by_resolution && m.median_ns > 0.0 && step.is_finite() => format!(
            "{pct} (below the timer's {} ns step, {}%)",
            step_text(step),
            fixed(step / m.median_ns * 100.0, 2)
        ),
        _ => pct,
    }
}

/// A timer step in ns: `32`, or `1.5` when it is not whole.
pub fn step_text(step: f64) -> String {
    if !(step.is_finite() && step > 0.0) {
        "—".into()
    } else if step >= 1e6 {
        sig3(step)
    } else if (step - step.round()).abs() < 0.05 {
        format!("{step:.0}")
    } else {
        sig3(step)
    }
}

/// `text` in at most `width` characters, cut in the middle with `…` so
/// both ends survive: `mma+async@64x128s2w8k2g` → `mma+async@…s2w8k2g`.
pub fn fit_middle(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    if width < 2 {
        return text.chars().take(width).collect();
    }
    let head = (width - 1) / 2;
    let tail = width - 1 - head;
    let chars: Vec<char> = text.chars().collect();
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[n - tail..]);
    out
}

/// The parts a name is cut between: before `+`, `@`, `/`, `,` and a space,
/// and where digits give way to letters (except an `x` between numbers):
/// `mma+async@128x128s3w8gqptor` is mma, +async, @128x128, s3, w8, gqptor.
fn parts(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<String> = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let times = c == 'x' && next.is_some_and(|n| n.is_ascii_digit());
        let boundary = i > 0
            && (matches!(c, '+' | '@' | '/' | ',' | ' ' | '~' | ':')
                || (prev.is_some_and(|p| p.is_ascii_digit()) && c.is_alphabetic() && !times));
        match out.last_mut() {
            Some(last) if !boundary => last.push(c),
            _ => out.push(c.to_string()),
        }
    }
    out
}

/// `text` in at most `width` characters, whole parts (`parts`) kept from
/// both ends, the first one first, and `…` where parts are left out:
/// `mma+async@64x64s3w4g` in 19 → `mma+async@64x64…w4g`, never a part cut in
/// half. When not even the first part fits beside `…`, `fit_middle`.
pub fn fit_parts(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let p = parts(text);
    let len = |s: &str| s.chars().count();
    let (mut head, mut tail) = (0, 0);
    let mut used = 1; // the `…`
    // Alternate: a part from the front, then one from the back, while they fit.
    let mut from_front = true;
    let mut stuck = [false, false];
    while head + tail < p.len() && !(stuck[0] && stuck[1]) {
        let i = if from_front { head } else { p.len() - 1 - tail };
        let side = usize::from(!from_front);
        if !stuck[side] && used + len(&p[i]) <= width {
            used += len(&p[i]);
            if from_front {
                head += 1;
            } else {
                tail += 1;
            }
        } else {
            stuck[side] = true;
        }
        from_front = !from_front;
    }
    if head == 0 {
        return fit_middle(text, width);
    }
    let mut out: String = p[..head].concat();
    out.push('…');
    out.push_str(&p[p.len() - tail..].concat());
    out
}

/// `text` in at most `width` characters, cut at the end with `…`: what
/// comes first matters most (`uniform +rising,offset` → `uniform +risi…`).
pub fn fit_end(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    if width > 0 {
        out.push('…');
    }
    out
}

/// A metric value in its unit, compact.
pub fn metric(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return "—".into();
    }
    match unit {
        "%" => format!("{}%", fixed(value, 1)),
        "byte" | "B" => bytes(value),
        "ns" => duration_ns(value),
        "x" => format!("{}×", fixed(value, 2)),
        "KiB" => format!("{} KiB", fixed(value, 1)),
        _ if value.fract() == 0.0 && value.abs() < 1e15 => count(value as i64),
        _ => sig3(value),
    }
}

/// An integer with thin grouping: 1234567 → 1,234,567.
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// `YYYYmmdd-HHMMSS` in UTC, from Unix seconds (civil-from-days).
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_in_their_unit() {
        assert_eq!(span_us(42_000_000), "42 s");
        assert_eq!(span_us(750_000_000), "12.5 min");
        assert_eq!(span_us(120_958_830_199), "33.6 h");
    }

    /// A damaged file's values print as a dash or with an exponent, never
    /// as "NaN", "inf" or hundreds of digits.
    #[test]
    fn values_that_are_no_measurement_stay_short() {
        assert_eq!(fixed(1.23456, 3), "1.235");
        assert_eq!(fixed(f64::NAN, 3), "—");
        assert_eq!(fixed(f64::INFINITY, 0), "—");
        assert_eq!(fixed(1e300, 3), "1.000e300");
        for v in [1e300, -1e300, f64::MAX, f64::NAN, f64::NEG_INFINITY] {
            for text in [
                sig3(v),
                duration_ns(v),
                step_text(v),
                exact(v),
                exact(5e-324),
                bytes(v),
                metric(v, "%"),
                metric(v, "x"),
                metric(v, "KiB"),
                metric(v, ""),
                noise(v),
            ] {
                assert!(text.chars().count() <= 24, "{v:e}: {text}");
                assert!(
                    !text.contains("NaN") && !text.contains("inf"),
                    "{v}: {text}"
                );
            }
        }
    }

    #[test]
    fn formats() {
        assert_eq!(duration_ns(812.0), "812 ns");
        assert_eq!(duration_ns(12_345.0), "12.3 µs");
        assert_eq!(duration_ns(4_560_000.0), "4.56 ms");
        assert_eq!(duration_ns(f64::NAN), "—");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(40.0 * 1024.0), "40.0 KiB");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(-1000), "-1,000");
        assert_eq!(metric(42.345, "%"), "42.3%");
        assert_eq!(metric(1.5, "x"), "1.50×");
        assert_eq!(noise(0.0042), "±0.42%");
        assert_eq!(noise(0.00001), "±<0.01%");
        assert_eq!(noise(f64::NAN), "±?");
    }

    #[test]
    fn names_are_cut_in_the_middle() {
        assert_eq!(fit_middle("short", 18), "short");
        let cut = fit_middle("mma+async@64x128s2w8k2g", 18);
        assert_eq!(cut.chars().count(), 18);
        assert!(
            cut.ends_with("s2w8k2g") && cut.starts_with("mma+") && cut.contains('…'),
            "{cut}"
        );
        assert_eq!(fit_middle("abc", 1), "a");
        assert_eq!(fit_end("uniform +rising,offset", 14), "uniform +risi…");
    }

    /// Issue 57: `mma+async…4x64s3w4g` and `mma+asy…2gqptor` cut a name mid-word; a cut keeps whole
    /// parts (the path first, then the tile's end), so what shows is always a real piece of the name.
    #[test]
    fn names_are_cut_between_their_parts() {
        assert_eq!(
            parts("mma+async@128x128s3w8gqptor"),
            ["mma", "+async", "@128x128", "s3", "w8", "gqptor"]
        );
        assert_eq!(
            fit_parts("mma+async@64x64s3w4g", 20),
            "mma+async@64x64s3w4g"
        );
        assert_eq!(fit_parts("mma+async@64x64s3w4g", 19), "mma+async@64x64…w4g");
        // An edit's build: its edit tag and the variant are parts too.
        assert_eq!(fit_parts("bundled~e2:wmma+pv+async", 15), "bundled…+async");
        assert_eq!(
            fit_parts("mma+async@128x128s3w8gqptorae", 22),
            "mma+async…s3w8gqptorae"
        );
        assert_eq!(
            fit_parts("mma+async@128x128s3w8gqptorae", 12),
            "mma…gqptorae"
        );
        assert_eq!(fit_parts("cudnn", 5), "cudnn");
        // Nothing whole fits beside the mark: cut in the middle as before.
        assert_eq!(
            fit_parts("wmma+pv+async", 4),
            fit_middle("wmma+pv+async", 4)
        );
        for w in 1..40 {
            let cut = fit_parts("mma+async@128x128s3w8gqptorae", w);
            assert!(cut.chars().count() <= w, "{w}: {cut}");
        }
        assert_eq!(fit_end("short", 14), "short");
        assert_eq!(fit_end("abc", 0), "");
    }

    #[test]
    fn median_intervals_respect_the_timer() {
        use crate::session::event::{MeasurementDone, Regime};
        let m = MeasurementDone {
            median_ns: 6528.0,
            rel_noise: 16.0 / 6528.0,
            batches: 40,
            regime: Some(Regime::BackToBack),
            resolution_ns: Some(32.0),
            limited_by_resolution: true,
            ..MeasurementDone::default()
        };
        assert_eq!(
            median_interval(&m),
            "±0.25% (below the timer's 32 ns step, 0.49%)"
        );
        let loose = MeasurementDone {
            rel_noise: 0.0123,
            limited_by_resolution: false,
            ..m.clone()
        };
        assert_eq!(median_interval(&loose), "±1.23%");
        let rerun = MeasurementDone {
            rel_noise: 0.0085,
            reruns: Some(crate::session::event::Reruns {
                run_low: 6528.0 - 6.528,
                run_high: 6528.0 + 6.528,
                between_run_rel: 0.003,
                source: "x".into(),
                unpadded: None,
            }),
            ..loose.clone()
        };
        assert_eq!(
            median_interval(&rerun),
            "±0.85% for a rerun (this run ±0.10%)"
        );
        let one = MeasurementDone {
            rel_noise: f64::NAN,
            batches: 1,
            ..m.clone()
        };
        assert_eq!(median_interval(&one), "±? (1 batch: no interval)");
        let old = MeasurementDone {
            rel_noise: 0.0,
            ..MeasurementDone::default()
        };
        assert_eq!(median_interval(&old), "±<0.01% (per launch, old session)");
    }

    #[test]
    fn utc_stamps() {
        assert_eq!(super::utc_stamp(0), "19700101-000000");
        assert_eq!(super::utc_stamp(1_795_318_245), "20261122-033045");
    }
}
