//! The problem flags every command that runs one shape shares: the shape,
//! the mask, the dtype, and the KV side (grouped-query heads, a KV cache's
//! length). clap reads each flag; `finish` (after clap, in resolve.rs)
//! folds them into one checked shape, so every command runs what the line
//! says or refuses it with the rule it breaks.

use clap::Args;

use super::parse_shape_text;
use crate::session::{Dtype, Shape};

#[derive(Clone, Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct ProblemArgs {
    /// Problem shape as B,H,S,D: batches, query heads, queries per head, head dim. KV heads and
    /// keys follow a slash: 8,32/8,1/32768,128 is 32 query heads over 8 KV heads, one query over
    /// 32768 cached keys (or use --kv-heads and --kv-len).
    #[arg(long, value_name = "B,H,S,D", default_value = "2,8,512,64", value_parser = parse_shape_text)]
    pub shape: Shape,
    /// Causal mask, aligned to the end: query i sees keys up to i + (keys − S), so with a KV
    /// cache the new queries see the whole cache.
    #[arg(long)]
    pub causal: bool,
    /// Element type of Q, K, V and O: fp16 or bf16.
    #[arg(long, value_name = "TYPE", default_value = "fp16", value_parser = parse_dtype)]
    pub dtype: Dtype,
    /// Key/value heads (grouped-query attention), dividing H; default H.
    #[arg(long, value_name = "N")]
    pub kv_heads: Option<u32>,
    /// Keys per head (a KV cache's length); default S.
    #[arg(long, value_name = "N")]
    pub kv_len: Option<u32>,
}

pub fn parse_dtype(text: &str) -> Result<Dtype, String> {
    text.parse()
}

impl ProblemArgs {
    /// Folds the flags into `shape` and checks it. The flags win over the
    /// shape's slashes; said as one line for clap's report.
    pub fn finish(&mut self) -> Result<(), String> {
        self.shape = self.resolved()?;
        Ok(())
    }

    fn resolved(&self) -> Result<Shape, String> {
        let shape = with_flags(
            self.shape,
            (self.kv_heads, self.kv_len),
            Some(self.dtype),
            self.causal,
        );
        shape.validate()?;
        Ok(shape)
    }
}

/// `shape` with the problem flags given on the line: K/V heads and keys,
/// the dtype, the mask (on when either says so). Unchecked.
pub fn with_flags(
    shape: Shape,
    (kv_heads, kv_len): (Option<u32>, Option<u32>),
    dtype: Option<Dtype>,
    causal: bool,
) -> Shape {
    shape
        .with_kv(
            kv_heads.unwrap_or(shape.kv_heads),
            kv_len.unwrap_or(shape.kv_len),
        )
        .with_dtype(dtype.unwrap_or(shape.dtype))
        .with_causal(causal || shape.causal)
}

impl super::LiveArgs {
    /// The shape live opens at: `--shape`, else the mission shape at the
    /// kernel's first head dimension when it does not run D=64; then
    /// `--dtype`, `--kv-heads`, `--kv-len` and `--causal` (checked in
    /// resolve.rs).
    pub fn start_shape(&self, variant: &crate::session::Variant) -> Shape {
        let shape = self.shape.unwrap_or_else(|| {
            let d = variant
                .manifest()
                .filter(|m| !m.head_dims.contains(&Shape::MISSION.d))
                .map_or(Shape::MISSION.d, |m| m.head_dims[0]);
            Shape::new(2, 8, 512, d)
        });
        with_flags(shape, (self.kv_heads, self.kv_len), self.dtype, self.causal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(shape: &str) -> ProblemArgs {
        ProblemArgs {
            shape: parse_shape_text(shape).unwrap(),
            causal: false,
            dtype: Dtype::F16,
            kv_heads: None,
            kv_len: None,
        }
    }

    #[test]
    fn flags_and_slashes_say_the_same_problem() {
        let mut a = args("8,32/8,1/32768,128");
        a.causal = true;
        a.dtype = Dtype::Bf16;
        a.finish().unwrap();
        let mut b = args("8,32,1,128");
        (b.kv_heads, b.kv_len, b.causal, b.dtype) = (Some(8), Some(32_768), true, Dtype::Bf16);
        b.finish().unwrap();
        assert_eq!(a.shape, b.shape);
        assert_eq!(a.shape.to_string(), "B8 H32/8 S1/32768 D128 bf16 causal");
    }

    #[test]
    fn a_problem_that_breaks_a_rule_says_which() {
        let mut a = args("1,32,64,128");
        a.kv_heads = Some(6);
        assert!(a.finish().unwrap_err().contains("must divide"));
        let mut a = args("1,8,64,128");
        (a.kv_len, a.causal) = (Some(16), true);
        assert!(a.finish().unwrap_err().contains("see no key"));
    }
}
