//! Mutations shared by the targets: bytes, lines, and JSON values replaced
//! by the values that break arithmetic (zero, negatives, the edges of each
//! integer width, huge and tiny floats, null for NaN).

use serde_json::Value;

use super::harness::Rng;

/// Numbers at the edges of what an event's fields hold.
pub fn number(rng: &mut Rng) -> Value {
    let pool: [Value; 24] = [
        0.into(),
        1.into(),
        2.into(),
        (-1).into(),
        255.into(),
        65_535.into(),
        65_536.into(),
        i32::MAX.into(),
        (i64::from(i32::MAX) + 1).into(),
        u32::MAX.into(),
        (u64::from(u32::MAX) + 1).into(),
        i64::MAX.into(),
        u64::MAX.into(),
        i64::MIN.into(),
        Value::from(1e15),
        Value::from(1e19),
        Value::from(1e300),
        Value::from(-1e300),
        Value::from(f64::MAX),
        Value::from(5e-324),
        Value::from(0.5),
        Value::from(-0.0),
        Value::from(1e-9),
        Value::Null,
    ];
    rng.pick(&pool).clone()
}

/// Strings an event field might hold, and some it never should.
pub fn string(rng: &mut Rng) -> Value {
    let pool = [
        "",
        "x",
        "scalar",
        "wmma+pv+async",
        "mma+async@64x128s2w4",
        "cudnn",
        "bundled:wmma",
        "rowwarp:smem+exp2",
        "no_such_kernel:x",
        "wmma+wmma+wmma",
        "interleaved",
        "isolated",
        "back_to_back",
        "cold",
        "uniform",
        "NaN",
        "inf",
        "\u{0}\n\r\t\"\\,",
        "é漢🙂",
        "-1",
        "idle",
        "sw_power_cap",
    ];
    match rng.below(12) {
        0 => Value::from("a".repeat(1 + rng.below(20_000))),
        1 => Value::from(format!("{},{}", rng.next(), rng.next())),
        _ => Value::from(*rng.pick(&pool)),
    }
}

/// Any value, of any kind.
pub fn any(rng: &mut Rng) -> Value {
    match rng.below(8) {
        0..=3 => number(rng),
        4 | 5 => string(rng),
        6 => Value::Bool(rng.one_in(2)),
        _ => match rng.below(3) {
            0 => Value::Array(vec![]),
            1 => Value::Array((0..rng.below(6)).map(|_| number(rng)).collect()),
            _ => Value::Object(Default::default()),
        },
    }
}

/// A value of the same kind as `old` most of the time.
pub fn like(rng: &mut Rng, old: &Value) -> Value {
    if rng.one_in(5) {
        return any(rng);
    }
    match old {
        Value::Number(_) | Value::Null => number(rng),
        Value::String(_) => string(rng),
        Value::Bool(b) => Value::Bool(!b),
        Value::Array(a) => array_like(rng, a),
        Value::Object(_) => any(rng),
    }
}

/// Arrays (latency samples above all): empty, one extreme, many, long.
fn array_like(rng: &mut Rng, old: &[Value]) -> Value {
    match rng.below(6) {
        0 => Value::Array(vec![]),
        1 => Value::Array(vec![number(rng)]),
        2 => Value::Array((0..1 + rng.below(64)).map(|_| number(rng)).collect()),
        3 => {
            // Long and steady, with a few extremes: the histogram's worst case.
            let n = 1 + rng.below(50_000);
            let base = rng.below(100_000) as u64;
            Value::Array(
                (0..n)
                    .map(|i| {
                        if i % 997 == 0 {
                            number(rng)
                        } else {
                            Value::from(base + (i % 7) as u64)
                        }
                    })
                    .collect(),
            )
        }
        4 => {
            let mut v = old.to_vec();
            let times = 1 + rng.below(20);
            let copy = v.clone();
            for _ in 0..times {
                v.extend(copy.iter().cloned());
            }
            Value::Array(v)
        }
        _ => {
            let mut v = old.to_vec();
            if !v.is_empty() {
                let i = rng.below(v.len());
                v[i] = number(rng);
            }
            Value::Array(v)
        }
    }
}

/// Every path to a value inside `v` (object keys and array indices).
fn paths(v: &Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    if out.len() > 4096 {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                here.push(Step::Key(k.clone()));
                out.push(here.clone());
                paths(child, here, out);
                here.pop();
            }
        }
        // Sample arrays are long: a few of their elements are enough.
        Value::Array(a) => {
            for i in (0..a.len()).step_by(a.len() / 16 + 1) {
                here.push(Step::Index(i));
                out.push(here.clone());
                paths(&a[i], here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut cur = v;
    for step in path {
        cur = match step {
            Step::Key(k) => cur.get_mut(k.as_str())?,
            Step::Index(i) => cur.get_mut(*i)?,
        };
    }
    Some(cur)
}

/// One change somewhere inside `v`: a value replaced, a key removed or added.
pub fn json(rng: &mut Rng, v: &mut Value) {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    if all.is_empty() {
        *v = any(rng);
        return;
    }
    let path = rng.pick(&all).clone();
    match rng.below(10) {
        0 => {
            let (last, parent) = path.split_last().unwrap();
            if let (Step::Key(k), Some(Value::Object(m))) = (last, at(v, parent)) {
                m.remove(k);
            }
        }
        1 => {
            if let Some(Value::Object(m)) = at(v, &path) {
                m.insert(format!("extra{}", rng.below(3)), any(rng));
            }
        }
        _ => {
            if let Some(slot) = at(v, &path) {
                *slot = like(rng, slot);
            }
        }
    }
}

/// One byte-level change: flip, insert, delete, cut, or a range repeated.
pub fn bytes(rng: &mut Rng, b: &mut Vec<u8>) {
    if b.is_empty() {
        b.push(rng.next() as u8);
        return;
    }
    let i = rng.below(b.len());
    match rng.below(6) {
        0 => b[i] ^= 1 << rng.below(8),
        1 => b[i] = rng.next() as u8,
        2 => b.insert(i, *rng.pick(b"{}[]\",:\n\\0-.e\xff\x00")),
        3 => {
            b.remove(i);
        }
        4 => b.truncate(i),
        _ => {
            let end = (i + 1 + rng.below(64)).min(b.len());
            let piece = b[i..end].to_vec();
            b.splice(i..i, piece);
        }
    }
}
