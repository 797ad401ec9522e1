//! What each variant of a kernel of ABI 2 takes beyond the plain case
//! (docs/kernel-abi.md, "ABI 2"): dtypes, head dims, grouped-query heads,
//! key lengths other than the query length. The first `[[supports]]` block
//! whose `when` holds for a variant decides; a variant no block matches, and
//! every variant of an ABI 1 kernel, takes fp16 at the `[kernel]` head dims
//! with as many KV heads and keys as query heads and queries.

use serde::Deserialize;
use toml::Spanned;

use super::expr::Expr;
use super::load::{At, ManifestError};
use super::{Manifest, Tile};
use crate::session::shape::{Dtype, Shape};

/// The newest kernel ABI attnscope speaks.
pub const NEWEST_ABI: u32 = 2;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSupports {
    #[serde(default)]
    pub(super) when: Option<Spanned<String>>,
    pub(super) dtypes: Spanned<Vec<String>>,
    #[serde(default)]
    pub(super) head_dims: Option<Spanned<Vec<u32>>>,
    #[serde(default)]
    pub(super) gqa: bool,
    #[serde(default)]
    pub(super) kv_len: bool,
}

/// One `[[supports]]` block, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Supports {
    pub when: Option<Expr>,
    pub dtypes: Vec<Dtype>,
    /// None: the `[kernel]` head dims.
    pub head_dims: Option<Vec<u32>>,
    pub gqa: bool,
    pub kv_len: bool,
}

impl Supports {
    /// What a variant no block matches takes.
    pub fn plain() -> Supports {
        Supports {
            when: None,
            dtypes: vec![Dtype::F16],
            head_dims: None,
            gqa: false,
            kv_len: false,
        }
    }
}

/// A block's dtypes and head dims, or why not (for the caller to place on
/// the block's line).
pub(super) fn check(raw: &RawSupports) -> Result<(Vec<Dtype>, Option<Vec<u32>>), String> {
    let dtypes: Vec<Dtype> = raw
        .dtypes
        .get_ref()
        .iter()
        .map(|d| d.parse::<Dtype>())
        .collect::<Result<_, _>>()?;
    if dtypes.is_empty() {
        return Err("dtypes lists none: give at least \"fp16\" or \"bf16\"".into());
    }
    let dims = raw.head_dims.as_ref().map(|d| d.get_ref().clone());
    if let Some(d) = &dims
        && (d.is_empty() || d.iter().any(|d| !(8..=256).contains(d) || d % 8 != 0))
    {
        return Err(
            "head_dims must list head dimensions, each a multiple of 8 from 8 to 256".into(),
        );
    }
    Ok((dtypes, dims))
}

/// The `[[supports]]` blocks, each `when` over the defines; only a kernel
/// of ABI 2 states them.
pub(super) fn parse(
    at: &At,
    raw: &[Spanned<RawSupports>],
    abi: u32,
    names: &[String],
    expr: &impl Fn(&Spanned<String>, &[String], &str) -> Result<Expr, ManifestError>,
) -> Result<Vec<Supports>, ManifestError> {
    let mut out = Vec::new();
    for s in raw {
        if abi < 2 {
            return at.err(
                s.span(),
                "[[supports]] states what kernel ABI 2 passes (dtype, KV heads, key length): add abi = 2 to [kernel] and take ABI 2's parameters (docs/kernel-abi.md)",
            );
        }
        let r = s.get_ref();
        let when = match &r.when {
            Some(w) => Some(expr(w, names, "when")?),
            None => None,
        };
        let (dtypes, head_dims) = check(r).or_else(|e| at.err(s.span(), e))?;
        out.push(Supports {
            when,
            dtypes,
            head_dims,
            gqa: r.gqa,
            kv_len: r.kv_len,
        });
    }
    Ok(out)
}

impl Manifest {
    /// What the variant (toggles `bits`, `tile`) takes.
    pub fn supports(&self, bits: u64, tile: Tile) -> Supports {
        let env = self.values(bits, tile);
        self.supports
            .iter()
            .find(|s| {
                s.when
                    .as_ref()
                    .is_none_or(|w| w.eval(&|n: &str| env.get(n).copied()).unwrap_or(0) != 0)
            })
            .cloned()
            .unwrap_or_else(Supports::plain)
    }

    /// Every head dimension some variant runs, ascending.
    pub fn all_head_dims(&self) -> Vec<u32> {
        let mut out = self.head_dims.clone();
        for s in &self.supports {
            out.extend(s.head_dims.iter().flatten());
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether the variant runs `shape`: one line naming what it lacks and
    /// what would take it.
    pub fn runs(&self, bits: u64, tile: Tile, shape: &Shape) -> Result<(), String> {
        let name = self.variant_text(bits, tile);
        let s = self.supports(bits, tile);
        let head_dims = s.head_dims.as_ref().unwrap_or(&self.head_dims);
        let abi = if self.abi < 2 {
            format!(
                " ({} keeps kernel ABI 1: fp16, as many KV heads and keys as query heads and queries; docs/kernel-abi.md, ABI 2)",
                self.name
            )
        } else {
            format!(" (the [[supports]] of {})", self.file)
        };
        let list = |v: &[String]| v.join(", ");
        if !s.dtypes.contains(&shape.dtype) {
            let names: Vec<String> = s.dtypes.iter().map(|d| d.to_string()).collect();
            return Err(format!(
                "{name} takes {}, not {}{abi}",
                list(&names),
                shape.dtype
            ));
        }
        if !head_dims.contains(&shape.d) {
            let dims: Vec<String> = head_dims.iter().map(u32::to_string).collect();
            return Err(format!(
                "{name} runs D = {}, not {}{abi}",
                list(&dims),
                shape.d
            ));
        }
        if shape.is_gqa() && !s.gqa {
            return Err(format!(
                "{name} needs as many KV heads as query heads, not {}/{}{abi}",
                shape.h, shape.kv_heads
            ));
        }
        if shape.kv_len != shape.s && !s.kv_len {
            return Err(format!(
                "{name} needs as many keys as queries, not {} queries over {} keys{abi}",
                shape.s, shape.kv_len
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Dtype;

    const ROWWARP: &str = include_str!("../../../examples/rowwarp/rowwarp.toml");

    /// rowwarp's manifest as ABI 2, with `blocks` after its [kernel] table.
    fn abi2(blocks: &str) -> Result<Manifest, String> {
        let text =
            ROWWARP.replacen("head_dims = [64, 128]", "head_dims = [64, 128]\nabi = 2", 1) + blocks;
        Manifest::parse(&text, "rowwarp.toml").map_err(|e| e.to_string())
    }

    fn runs(m: &Manifest, variant: &str, shape: Shape) -> Result<(), String> {
        let (bits, tile) = m.parse_variant(variant).unwrap();
        m.runs(bits, tile, &shape)
    }

    #[test]
    fn an_abi_1_kernel_takes_the_plain_case_and_says_why_not_the_rest() {
        let m = Manifest::parse(ROWWARP, "rowwarp.toml").unwrap();
        assert_eq!(m.abi, 1);
        let plain = Shape::new(2, 8, 512, 64).with_causal(true);
        assert!(runs(&m, "smem+exp2", plain).is_ok());
        let e = runs(&m, "smem+exp2", plain.with_dtype(Dtype::Bf16)).unwrap_err();
        assert!(
            e.starts_with("smem+exp2 takes fp16, not bf16 (rowwarp keeps kernel ABI 1"),
            "{e}"
        );
        let e = runs(&m, "plain", plain.with_kv(2, 512)).unwrap_err();
        assert!(
            e.contains("as many KV heads as query heads, not 8/2"),
            "{e}"
        );
        let e = runs(&m, "plain", plain.with_kv(8, 4096)).unwrap_err();
        assert!(e.contains("not 512 queries over 4096 keys"), "{e}");
        assert_eq!(e.lines().count(), 1);
    }

    #[test]
    fn the_first_block_whose_when_holds_decides() {
        let m = abi2(
            r#"
[[supports]]
when = "USE_SMEM_KV && ROWS == 4"
dtypes = ["fp16", "bf16"]
head_dims = [64, 128, 256]
gqa = true
kv_len = true

[[supports]]
when = "USE_SMEM_KV"
dtypes = ["bf16"]
"#,
        )
        .unwrap();
        let decode = Shape::new(8, 32, 1, 256)
            .with_kv(8, 32_768)
            .with_dtype(Dtype::Bf16)
            .with_causal(true);
        assert!(runs(&m, "smem@4w4", decode).is_ok());
        let e = runs(&m, "smem", decode).unwrap_err();
        assert!(
            e.contains("runs D = 64, 128, not 256") && e.contains("[[supports]] of rowwarp.toml"),
            "{e}"
        );
        let e = runs(&m, "smem", Shape::MISSION).unwrap_err();
        assert!(e.contains("takes bf16, not fp16"), "{e}");
        // No block matches: the plain case.
        assert!(runs(&m, "exp2", Shape::MISSION).is_ok());
        assert!(runs(&m, "exp2", Shape::MISSION.with_dtype(Dtype::Bf16)).is_err());
        // The dtype and the plain case reach NVRTC (ATTN_BF16, ATTN_PLAIN)
        // only for ABI 2.
        let (bits, tile) = m.parse_variant("smem").unwrap();
        let has = |d: Vec<String>, want: &str| d.iter().any(|x| x == want);
        let bf16 = Shape::new(1, 1, 1, 64).with_dtype(Dtype::Bf16);
        assert!(has(m.defines(bits, tile, &bf16), "-DATTN_BF16=1"));
        assert!(has(m.defines(bits, tile, &bf16), "-DATTN_PLAIN=1"));
        assert!(has(
            m.defines(bits, tile, &bf16.with_kv(1, 9)),
            "-DATTN_PLAIN=0"
        ));
        let v1 = Manifest::parse(ROWWARP, "rowwarp.toml").unwrap();
        let plain = v1.defines(bits, tile, &Shape::new(1, 1, 1, 64));
        assert!(!plain.iter().any(|d| d.contains("ATTN_")), "{plain:?}");
    }

    #[test]
    fn bad_blocks_are_refused_on_their_line() {
        let e = abi2("\n[[supports]]\ndtypes = [\"fp8\"]\n").unwrap_err();
        assert!(e.contains("dtype 'fp8' is not one of fp16, bf16"), "{e}");
        let e = abi2("\n[[supports]]\ndtypes = [\"bf16\"]\nhead_dims = [300]\n").unwrap_err();
        assert!(e.contains("head_dims must list"), "{e}");
        let e = abi2("\n[[supports]]\nwhen = \"NOPE\"\ndtypes = [\"bf16\"]\n").unwrap_err();
        assert!(e.contains("reads NOPE"), "{e}");
        let v1 = format!("{ROWWARP}\n[[supports]]\ndtypes = [\"bf16\"]\n");
        let e = Manifest::parse(&v1, "rowwarp.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("add abi = 2"), "{e}");
        let e = Manifest::parse(
            &ROWWARP.replacen("head_dims", "abi = 3\nhead_dims", 1),
            "r.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("abi = 3: attnscope speaks kernel ABI 1 and 2"),
            "{e}"
        );
    }
}
