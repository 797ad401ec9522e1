//! Variant flags as clap reads them (text) and as the commands take them,
//! once the kernels they name are registered (resolve.rs).

use crate::session::Variant;

/// A variant as given to `bench`: a tile pinned (`…@64x64s2w4`, or `all`'s
/// paths), named without one (`mma+async`: the manifest's default tile,
/// except the tuned one where the command says so, mma+async on Hopper), or
/// `…@tuned` (the tile comes from the tuning cache, tuned on the spot when
/// missing).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum VariantSpec {
    Fixed(Variant),
    Tuned(Variant),
    Bare(Variant),
}

impl VariantSpec {
    /// The variant as named (a bare or tuned one at its default tile).
    pub fn variant(self) -> Variant {
        match self {
            VariantSpec::Fixed(v) | VariantSpec::Tuned(v) | VariantSpec::Bare(v) => v,
        }
    }
}

/// Whether a variant's name on the command line gives no tile (no `@`).
pub fn names_no_tile(text: &str) -> bool {
    !text.contains('@')
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
            None if names_no_tile(t) => t.parse().map(VariantSpec::Bare),
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

/// `--py`: Python variants only, comma-separated.
pub fn parse_python_list(text: &str) -> Result<VariantNames, String> {
    // Said before the name is read as a kernel's toggles, which --py never takes.
    if let Some(t) = text
        .split(',')
        .map(str::trim)
        .find(|t| !t.is_empty() && !t.starts_with("py:"))
    {
        return Err(format!(
            "'{t}' is not a Python variant: --py takes py:NAME (an adapter `attnscope doctor` lists, e.g. py:sdpa_flash) or py:MODULE:FUNCTION, comma-separated"
        ));
    }
    let names = parse_variant_list(text)?;
    match names.0.iter().find(|v| !v.is_python()) {
        Some(v) => Err(format!(
            "{v} is not a Python variant (py:NAME or py:MODULE:FUNCTION)"
        )),
        None => Ok(names),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_without_a_tile_is_bare_a_pinned_tile_is_fixed() {
        let list = parse_variants("mma+async, mma+async@64x64s2w4,mma+async@tuned").unwrap();
        let v: Variant = "mma+async".parse().unwrap();
        assert_eq!(
            list.0,
            [
                VariantSpec::Bare(v),
                VariantSpec::Fixed(v),
                VariantSpec::Tuned(v)
            ]
        );
        assert!(list.0.iter().all(|s| s.variant() == v));
        // `all` names every path at its default tile, as before.
        let all = parse_variants("all").unwrap();
        assert!(all.0.iter().all(|s| matches!(s, VariantSpec::Fixed(_))));
        assert!(names_no_tile("mma+async") && !names_no_tile("mma+async@tuned"));
    }
}
