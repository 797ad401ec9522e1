//! Variant flags as clap reads them (text) and as the commands take them,
//! once the kernels they name are registered (resolve.rs).

use crate::session::Variant;

/// A variant as given to `bench`: fixed, or `…@tuned` (the tile comes from
/// the tuning cache, tuned on the spot when missing).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum VariantSpec {
    Fixed(Variant),
    Tuned(Variant),
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct VariantList(pub Vec<VariantSpec>);

pub fn parse_variants(text: &str) -> Result<VariantList, String> {
    if text.trim() == "all" {
        return Ok(VariantList(
            Variant::all_paths()
                .into_iter()
                .map(VariantSpec::Fixed)
                .collect(),
        ));
    }
    let list: Vec<VariantSpec> = text
        .split(',')
        .map(|t| match t.trim().strip_suffix("@tuned") {
            Some(flags) => flags.parse().map(VariantSpec::Tuned),
            None => t.parse().map(VariantSpec::Fixed),
        })
        .collect::<Result<_, _>>()?;
    if list.is_empty() {
        return Err("no variants given".into());
    }
    Ok(VariantList(list))
}

/// Named variants (no `all`, no `@tuned`).
#[derive(Clone, Debug)]
pub struct VariantNames(pub Vec<Variant>);

/// Named variants, comma-separated.
pub fn parse_variant_list(text: &str) -> Result<VariantNames, String> {
    text.split(',')
        .map(|t| match t.trim() {
            "" => Err("an empty name in the variant list".to_string()),
            t if t.ends_with("@tuned") => Err(format!(
                "{t}: selftest checks named tiles; give the tile (attnscope tune prints it)"
            )),
            t => t.parse(),
        })
        .collect::<Result<_, _>>()
        .map(VariantNames)
}
