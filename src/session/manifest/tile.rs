//! A tile: the values of a kernel's tile parameters, written as the manifest's
//! tags spell them (`64x64s2w8k2g` for the bundled kernel).

use super::Manifest;

/// Parameter values in manifest order; unused slots are 0. Ordered
/// parameter by parameter, so tiles sort as their texts read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tile(pub [u32; super::MAX_PARAMS]);

impl Tile {
    pub const ZERO: Tile = Tile([0; super::MAX_PARAMS]);
}

impl Manifest {
    /// The tile as text: each parameter's tag and value in order; optional
    /// ones at their default left out, flags as their tag when set.
    pub fn tile_text(&self, tile: Tile) -> String {
        let mut s = String::new();
        for (i, p) in self.params.iter().enumerate() {
            let v = tile.0[i];
            if p.flag {
                if v != 0 {
                    s.push_str(&p.tag);
                }
            } else if !(p.optional && v == p.default) {
                s.push_str(&p.tag);
                s.push_str(&v.to_string());
            }
        }
        s
    }

    /// What `tile_text` writes, read back (values are checked by `check`).
    pub fn parse_tile(&self, text: &str) -> Result<Tile, String> {
        let bad = || format!("tile '{text}' is not of the form {}", self.tile_form());
        let mut tile = self.default_tile();
        let mut rest = text;
        for (i, p) in self.params.iter().enumerate() {
            if p.flag {
                match rest.strip_prefix(p.tag.as_str()) {
                    Some(r) => {
                        tile.0[i] = 1;
                        rest = r;
                    }
                    None => tile.0[i] = 0,
                }
                continue;
            }
            let after = rest
                .strip_prefix(p.tag.as_str())
                .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()));
            match after {
                Some(r) => {
                    let digits = r.len() - r.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                    tile.0[i] = r[..digits].parse().map_err(|_| bad())?;
                    rest = &r[digits..];
                }
                None if p.optional => tile.0[i] = p.default,
                None => return Err(bad()),
            }
        }
        if !rest.is_empty() {
            return Err(bad());
        }
        Ok(tile)
    }

    /// `64x64s2w4 (BLOCK_M x BLOCK_N s stages w warps; optional: k K/V split, g wgmma, q Q in smem, p producer, t TMA loads, o ping-pong)`.
    pub fn tile_form(&self) -> String {
        let mut required = Vec::new();
        let mut optional = Vec::new();
        for p in self.params.iter().filter(|p| !p.test_only) {
            let part = if p.tag.is_empty() {
                p.label.clone()
            } else {
                format!("{} {}", p.tag, p.label)
            };
            if p.flag || p.optional {
                optional.push(part);
            } else {
                required.push(part);
            }
        }
        let mut s = format!(
            "{} ({}",
            self.tile_text(self.default_tile()),
            required.join(" ")
        );
        if !optional.is_empty() {
            s.push_str(&format!("; optional: {}", optional.join(", ")));
        }
        s.push(')');
        s
    }
}
