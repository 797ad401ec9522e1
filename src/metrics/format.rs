//! Number formatting shared by the screen and the text summaries.

/// Nanoseconds as a short human latency: `812 ns`, `12.3 µs`, `4.56 ms`, `1.20 s`.
pub fn duration_ns(ns: f64) -> String {
    if !ns.is_finite() {
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

/// Bytes with a binary unit: `512 B`, `40.0 KiB`, `3.21 GiB`.
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
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

/// Three significant digits, no exponent: 1.23, 12.3, 123.
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
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
        format!("±{:.2}%", rel * 100.0)
    }
}

/// A metric value in its unit, compact.
pub fn metric(value: f64, unit: &str) -> String {
    match unit {
        "%" => format!("{value:.1}%"),
        "byte" | "B" => bytes(value),
        "ns" => duration_ns(value),
        "x" => format!("{value:.2}×"),
        "KiB" => format!("{value:.1} KiB"),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
