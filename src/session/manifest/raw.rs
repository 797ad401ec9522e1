//! A manifest as TOML says it, before any check: field names, defaults and
//! the spans that let every refusal name its line.

use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    pub(super) kernel: Spanned<RawKernel>,
    #[serde(default)]
    pub(super) toggle: Vec<Spanned<RawToggle>>,
    #[serde(default)]
    pub(super) param: Vec<Spanned<RawParam>>,
    #[serde(default)]
    pub(super) rule: Vec<Spanned<RawRule>>,
    #[serde(default)]
    pub(super) tiles: Vec<Spanned<RawTiles>>,
    #[serde(default)]
    pub(super) supports: Vec<Spanned<super::supports::RawSupports>>,
    pub(super) launch: Spanned<RawLaunch>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawKernel {
    pub(super) name: Spanned<String>,
    #[serde(default)]
    pub(super) about: String,
    pub(super) source: Spanned<String>,
    pub(super) entry: Spanned<String>,
    #[serde(default = "scalar")]
    pub(super) base: Spanned<String>,
    #[serde(default)]
    pub(super) start: Option<Spanned<String>>,
    pub(super) head_dims: Spanned<Vec<u32>>,
    #[serde(default)]
    pub(super) abi: Option<Spanned<u32>>,
}

pub(super) fn no_words() -> Spanned<Vec<String>> {
    Spanned::new(0..0, Vec::new())
}

pub(super) fn scalar() -> Spanned<String> {
    Spanned::new(0..0, "scalar".into())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawToggle {
    pub(super) name: Spanned<String>,
    #[serde(default)]
    pub(super) aliases: Vec<String>,
    pub(super) define: Spanned<String>,
    #[serde(default)]
    pub(super) key: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) label: Option<String>,
    #[serde(default)]
    pub(super) help: String,
    #[serde(default)]
    pub(super) default: bool,
    #[serde(default = "no_words")]
    pub(super) excludes: Spanned<Vec<String>>,
    #[serde(default = "no_words")]
    pub(super) implies: Spanned<Vec<String>>,
    #[serde(default)]
    pub(super) provides: Vec<String>,
    #[serde(default)]
    pub(super) min_arch: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) arch: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) test_only: bool,
    #[serde(default = "no_words")]
    pub(super) mutation: Spanned<Vec<String>>,
    #[serde(default)]
    pub(super) family: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawParam {
    pub(super) name: Spanned<String>,
    pub(super) define: Spanned<String>,
    pub(super) tag: Spanned<String>,
    #[serde(default)]
    pub(super) default: Option<Spanned<u32>>,
    #[serde(default)]
    pub(super) values: Option<Spanned<Vec<u32>>>,
    #[serde(default)]
    pub(super) range: Option<Spanned<[u32; 2]>>,
    #[serde(default)]
    pub(super) multiple_of: Option<Spanned<u32>>,
    #[serde(default)]
    pub(super) optional: bool,
    #[serde(default)]
    pub(super) flag: bool,
    #[serde(default)]
    pub(super) min_arch: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) arch: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) label: Option<String>,
    #[serde(default)]
    pub(super) test_only: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRule {
    pub(super) check: Spanned<String>,
    pub(super) message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTiles {
    #[serde(default)]
    pub(super) when: Option<Spanned<String>>,
    pub(super) cycle: Spanned<Vec<String>>,
    #[serde(default)]
    pub(super) tune: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLaunch {
    #[serde(rename = "let", default = "no_words")]
    pub(super) lets: Spanned<Vec<String>>,
    pub(super) smem_bytes: Spanned<String>,
    pub(super) threads: Spanned<String>,
    pub(super) grid: Spanned<Vec<String>>,
}
