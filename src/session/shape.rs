//! The attention problem a variant runs: batches, query and key/value heads,
//! query and key lengths, head dimension, element type and the causal mask.
//! Kernel ABI 1 takes only the plain case (fp16, as many KV heads as query
//! heads, as many keys as queries); ABI 2 states the rest (docs/kernel-abi.md).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// CUDA's limit on a grid's y and z dimensions.
pub const MAX_GRID_YZ: u32 = 65_535;

/// The longest query or key sequence: 2²⁰ (a 128k KV cache is 2¹⁷).
pub const MAX_LEN: u32 = 1 << 20;

/// The element type of Q, K, V and O.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub enum Dtype {
    #[default]
    // Bounds of sessions before schema 3 wrote "f16".
    #[serde(rename = "fp16", alias = "f16")]
    F16,
    #[serde(rename = "bf16")]
    Bf16,
}

impl Dtype {
    pub const ALL: [Dtype; 2] = [Dtype::F16, Dtype::Bf16];

    pub fn name(self) -> &'static str {
        match self {
            Dtype::F16 => "fp16",
            Dtype::Bf16 => "bf16",
        }
    }

    /// The largest finite value.
    pub fn max(self) -> f32 {
        match self {
            Dtype::F16 => 65_504.0,
            Dtype::Bf16 => half::bf16::MAX.to_f32(),
        }
    }

    pub fn to_f32(self, bits: u16) -> f32 {
        match self {
            Dtype::F16 => half::f16::from_bits(bits).to_f32(),
            Dtype::Bf16 => half::bf16::from_bits(bits).to_f32(),
        }
    }

    /// `x` rounded to nearest, as bits.
    pub fn from_f32(self, x: f32) -> u16 {
        match self {
            Dtype::F16 => half::f16::from_f32(x).to_bits(),
            Dtype::Bf16 => half::bf16::from_f32(x).to_bits(),
        }
    }

    /// The bits O is filled with before a check: the most negative finite
    /// value, which no softmax-weighted mean of V's columns can be unless V
    /// holds it, so an element the kernel forgets reads as poisoned.
    pub fn poison(self) -> u16 {
        match self {
            Dtype::F16 => 0xFBFF,
            Dtype::Bf16 => 0xFF7F,
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dtype {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "fp16" | "f16" | "half" | "float16" => Ok(Dtype::F16),
            "bf16" | "bfloat16" => Ok(Dtype::Bf16),
            _ => Err(format!("dtype '{text}' is not one of fp16, bf16")),
        }
    }
}

/// One attention problem: Q and O are [B, H, S, D], K and V [B, KV heads,
/// key length, D], all contiguous; query head h reads KV head h / (H / KV
/// heads); causal keeps key j for query i when j ≤ i + (key length − S),
/// the last query aligned with the last key (a KV cache's new tokens).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "ShapeWire", into = "ShapeWire")]
pub struct Shape {
    pub b: u32,
    /// Query heads.
    pub h: u32,
    /// Queries per head.
    pub s: u32,
    pub d: u32,
    pub causal: bool,
    pub dtype: Dtype,
    /// Key/value heads: divides `h`.
    pub kv_heads: u32,
    /// Keys per head.
    pub kv_len: u32,
}

/// A shape as sessions write it: the fields of the plain case only when
/// they differ, so a plain shape reads the same as before schema 3 and an
/// older session's shape reads as the plain case.
#[derive(Serialize, Deserialize)]
struct ShapeWire {
    b: u32,
    h: u32,
    s: u32,
    d: u32,
    causal: bool,
    #[serde(default, skip_serializing_if = "is_f16")]
    dtype: Dtype,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kv_heads: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kv_len: Option<u32>,
}

fn is_f16(d: &Dtype) -> bool {
    *d == Dtype::F16
}

/// A shape read from a file or a link is held to the rules the command line
/// holds it to (`validate`): a session's `B0 H0 S0 D0` is damage, counted
/// and skipped, not a problem the tables and the roofline then misread.
impl TryFrom<ShapeWire> for Shape {
    type Error = String;

    fn try_from(w: ShapeWire) -> Result<Shape, String> {
        let shape = Shape {
            b: w.b,
            h: w.h,
            s: w.s,
            d: w.d,
            causal: w.causal,
            dtype: w.dtype,
            kv_heads: w.kv_heads.unwrap_or(w.h),
            kv_len: w.kv_len.unwrap_or(w.s),
        };
        shape.validate().map(|()| shape)
    }
}

impl From<Shape> for ShapeWire {
    fn from(s: Shape) -> ShapeWire {
        ShapeWire {
            b: s.b,
            h: s.h,
            s: s.s,
            d: s.d,
            causal: s.causal,
            dtype: s.dtype,
            kv_heads: (s.kv_heads != s.h).then_some(s.kv_heads),
            kv_len: (s.kv_len != s.s).then_some(s.kv_len),
        }
    }
}

impl Shape {
    /// The plain case: fp16, non-causal, as many KV heads and keys as query
    /// heads and queries.
    pub const fn new(b: u32, h: u32, s: u32, d: u32) -> Shape {
        Shape {
            b,
            h,
            s,
            d,
            causal: false,
            dtype: Dtype::F16,
            kv_heads: h,
            kv_len: s,
        }
    }

    pub const fn with_causal(self, causal: bool) -> Shape {
        Shape { causal, ..self }
    }

    pub const fn with_dtype(self, dtype: Dtype) -> Shape {
        Shape { dtype, ..self }
    }

    /// `kv_heads` KV heads over `kv_len` keys.
    pub const fn with_kv(self, kv_heads: u32, kv_len: u32) -> Shape {
        Shape {
            kv_heads,
            kv_len,
            ..self
        }
    }

    /// The same problem with `h` query heads and `s` queries, the KV side
    /// following where it equalled them (a preset's GQA ratio is kept).
    pub fn with_queries(self, h: u32, s: u32) -> Shape {
        Shape {
            h,
            s,
            kv_heads: if self.kv_heads == self.h {
                h
            } else {
                self.kv_heads
            },
            kv_len: if self.kv_len == self.s {
                s
            } else {
                self.kv_len
            },
            ..self
        }
    }

    /// The mission shape of the seeds: B=2, H=8, S=512, D=64, non-causal.
    pub const MISSION: Shape = Shape::new(2, 8, 512, 64);

    /// What `s` cycles through in live mode: the seeds' shapes, then
    /// prefill and decode of Llama 3 8B (32 query heads over 8 KV heads)
    /// and 70B (64 over 8), D 128, bf16, causal.
    pub const PRESETS: [Shape; 9] = [
        Shape::MISSION,
        Shape::new(2, 8, 2048, 64),
        Shape::new(1, 8, 1024, 128),
        Shape::new(4, 16, 4096, 64),
        Shape::new(1, 2, 77, 64),
        Shape::new(1, 32, 4096, 128)
            .with_kv(8, 4096)
            .with_dtype(Dtype::Bf16)
            .with_causal(true),
        Shape::new(8, 32, 1, 128)
            .with_kv(8, 32_768)
            .with_dtype(Dtype::Bf16)
            .with_causal(true),
        Shape::new(1, 64, 4096, 128)
            .with_kv(8, 4096)
            .with_dtype(Dtype::Bf16)
            .with_causal(true),
        Shape::new(8, 64, 1, 128)
            .with_kv(8, 32_768)
            .with_dtype(Dtype::Bf16)
            .with_causal(true),
    ];

    /// What the screen calls a preset, when it is one of the LLM ones.
    pub fn preset_name(&self) -> Option<&'static str> {
        const NAMES: [&str; 4] = [
            "Llama 3 8B prefill",
            "Llama 3 8B decode",
            "Llama 3 70B prefill",
            "Llama 3 70B decode",
        ];
        let at = Shape::PRESETS.iter().position(|p| p == self)?;
        at.checked_sub(5).map(|i| NAMES[i])
    }

    /// Whether a kernel of ABI 1 can take it: fp16, KV heads = query heads,
    /// keys = queries.
    pub fn is_plain(&self) -> bool {
        self.dtype == Dtype::F16 && self.same_kv()
    }

    /// As many KV heads and keys as query heads and queries (multi-head
    /// attention without a cache), whatever the dtype.
    pub fn same_kv(&self) -> bool {
        !self.is_gqa() && self.kv_len == self.s
    }

    /// Fewer KV heads than query heads.
    pub fn is_gqa(&self) -> bool {
        self.kv_heads != self.h
    }

    /// Query heads per KV head.
    pub fn group(&self) -> u32 {
        self.h / self.kv_heads.max(1)
    }

    /// The KV head query head `h` reads.
    pub fn kv_head_of(&self, h: u32) -> u32 {
        h / self.group().max(1)
    }

    /// Keys query `i` sees: all of them, or under the causal mask those up
    /// to i + (key length − S).
    pub fn keys_seen(&self, i: u32) -> u32 {
        if !self.causal {
            return self.kv_len;
        }
        let last = i64::from(i) + i64::from(self.kv_len) - i64::from(self.s);
        (last + 1).clamp(0, i64::from(self.kv_len)) as u32
    }

    /// (query, key) pairs one head computes: S·keys, or under the causal
    /// mask the pairs it keeps (S·(keys − S) + S(S+1)/2 when S ≤ keys).
    pub fn pairs(&self) -> f64 {
        let (s, n) = (f64::from(self.s), f64::from(self.kv_len));
        if !self.causal {
            return s * n;
        }
        // Rows i with i + (n − s) + 1 ≤ 0 see nothing; the rest see
        // min(n, i + n − s + 1) keys, which never reaches past n.
        let first = (s - n).max(0.0);
        let count = s - first;
        let seen_first = first + n - s + 1.0;
        count * seen_first + count * (count - 1.0) / 2.0
    }

    /// 4·B·H·D per (query, key) pair: Q·Kᵀ and P·V, a multiply and an add each.
    pub fn flops(&self) -> f64 {
        4.0 * f64::from(self.b) * f64::from(self.h) * f64::from(self.d) * self.pairs()
    }

    /// Elements in Q or in O.
    pub fn q_elements(&self) -> usize {
        self.b as usize * self.h as usize * self.s as usize * self.d as usize
    }

    /// Elements in K or in V.
    pub fn kv_elements(&self) -> usize {
        self.b as usize * self.kv_heads as usize * self.kv_len as usize * self.d as usize
    }

    /// Bytes a kernel must move at least once: Q, K and V read, O written.
    pub fn io_bytes(&self) -> f64 {
        2.0 * (2 * self.q_elements() + 2 * self.kv_elements()) as f64
    }

    /// The shapes attnscope runs: 1 ≤ B, H ≤ 65535 (the launch puts heads
    /// in grid y and batches in grid z); KV heads dividing H; 1 ≤ S, key
    /// length ≤ 2²⁰, S ≤ key length under the causal mask (so every query
    /// sees a key); D a multiple of 8 up to 256 (each kernel's manifest
    /// narrows it); Q, K, V and O together under 1 TiB (the GPU's free
    /// memory is checked when inputs are made). The CLI and the worker both
    /// check with this, so a shape one accepts the other launches.
    pub fn validate(&self) -> Result<(), String> {
        let Shape { b, h, s, d, .. } = *self;
        let (kv_heads, kv_len) = (self.kv_heads, self.kv_len);
        if b == 0 || b > MAX_GRID_YZ {
            return Err(format!(
                "B={b} is out of range: 1 ≤ B ≤ {MAX_GRID_YZ} (batches go in grid z)"
            ));
        }
        if h == 0 || h > MAX_GRID_YZ {
            return Err(format!(
                "H={h} is out of range: 1 ≤ H ≤ {MAX_GRID_YZ} (heads go in grid y)"
            ));
        }
        if kv_heads == 0 || kv_heads > h || h % kv_heads != 0 {
            return Err(format!(
                "{h} query heads over {kv_heads} KV heads: the KV heads must divide the query heads (e.g. 32/8, each KV head serving 4)"
            ));
        }
        if s == 0 || s > MAX_LEN {
            return Err(format!("S={s} is out of range: 1 ≤ S ≤ {MAX_LEN}"));
        }
        if kv_len == 0 || kv_len > MAX_LEN {
            return Err(format!(
                "key length {kv_len} is out of range: 1 ≤ key length ≤ {MAX_LEN}"
            ));
        }
        if self.causal && s > kv_len {
            return Err(format!(
                "causal with {s} queries over {kv_len} keys: the mask aligns the last query with the last key, so the first {} queries would see no key; give at least as many keys as queries, or drop causal",
                s - kv_len
            ));
        }
        if !(8..=256).contains(&d) || d % 8 != 0 {
            return Err(format!(
                "D={d} is not supported: a multiple of 8 from 8 to 256 (each kernel's manifest lists the ones it runs)"
            ));
        }
        let bytes = 2 * (2 * self.q_elements() as u128 + 2 * self.kv_elements() as u128);
        if bytes > 1 << 40 {
            return Err(format!(
                "{self} needs {bytes} bytes for Q, K, V and O: too large"
            ));
        }
        Ok(())
    }
}

impl Shape {
    /// `b2h8s512d64` for file names and CSV fields (no commas, no spaces):
    /// `kv8` and `sk32768` when they differ, the dtype when not fp16, `c`
    /// when causal.
    pub fn compact(&self) -> String {
        let mut out = format!("b{}h{}", self.b, self.h);
        if self.is_gqa() {
            out.push_str(&format!("kv{}", self.kv_heads));
        }
        out.push_str(&format!("s{}", self.s));
        if self.kv_len != self.s {
            out.push_str(&format!("sk{}", self.kv_len));
        }
        out.push_str(&format!("d{}", self.d));
        if self.dtype != Dtype::F16 {
            out.push_str(self.dtype.name());
        }
        if self.causal {
            out.push('c');
        }
        out
    }
}

impl Default for Shape {
    fn default() -> Self {
        Shape::MISSION
    }
}

impl fmt::Display for Shape {
    /// `B2 H8 S512 D64`; KV heads and keys after a slash when they differ
    /// (`B8 H32/8 S1/32768 D128 bf16 causal`), the dtype when not fp16.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "B{} H{}", self.b, self.h)?;
        if self.kv_heads != self.h {
            write!(f, "/{}", self.kv_heads)?;
        }
        write!(f, " S{}", self.s)?;
        if self.kv_len != self.s {
            write!(f, "/{}", self.kv_len)?;
        }
        write!(f, " D{}", self.d)?;
        if self.dtype != Dtype::F16 {
            write!(f, " {}", self.dtype)?;
        }
        if self.causal {
            f.write_str(" causal")?;
        }
        Ok(())
    }
}

impl FromStr for Shape {
    type Err = String;

    /// `B,H,S,D` (`2,8,512,64`), with KV heads and keys after a slash:
    /// `8,32/8,1/32768,128`. The dtype and the mask come from their own flags.
    fn from_str(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let usage = "B,H,S,D: four integers, e.g. 2,8,512,64, with KV heads and keys after a slash, e.g. 8,32/8,1/32768,128";
        if parts.len() != 4 {
            return Err(format!("shape '{text}' must be {usage}"));
        }
        let int = |part: &str, name: &str| -> Result<u32, String> {
            part.trim().parse().map_err(|_| {
                format!("shape '{text}': {name}='{part}' is not a positive integer ({usage})")
            })
        };
        let pair = |part: &str, name: &str, second: &str| -> Result<(u32, u32), String> {
            match part.split_once('/') {
                Some((a, b)) => Ok((int(a, name)?, int(b, second)?)),
                None => int(part, name).map(|x| (x, x)),
            }
        };
        for (part, name) in [(parts[0], "B"), (parts[3], "D")] {
            if part.contains('/') {
                return Err(format!(
                    "shape '{text}': {name}='{part}' takes no slash (only H and S do: {usage})"
                ));
            }
        }
        let (h, kv_heads) = pair(parts[1], "H", "KV heads")?;
        let (s, kv_len) = pair(parts[2], "S", "keys")?;
        Ok(Shape::new(int(parts[0], "B")?, h, s, int(parts[3], "D")?).with_kv(kv_heads, kv_len))
    }
}

#[cfg(test)]
mod tests;
