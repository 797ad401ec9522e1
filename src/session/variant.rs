//! What is measured: a kernel variant (toggles + tile) on a problem shape.
//! Names are the same in the CLI, the screen, session files and exports.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The three toggles of the seeds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(default)]
pub struct Toggles {
    pub wmma: bool,
    pub wmma_pv: bool,
    pub cp_async: bool,
    /// Test-only: the kernel also stores out of bounds (`+fault`), to prove
    /// a faulting kernel takes down only the worker process.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fault: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(default)]
pub struct TileConfig {
    pub block_m: u32,
    pub block_n: u32,
    pub stages: u32,
    pub warps: u32,
}

impl TileConfig {
    /// What `t` cycles through in live mode; the first is the default.
    pub const PRESETS: [TileConfig; 4] = [
        TileConfig {
            block_m: 64,
            block_n: 64,
            stages: 2,
            warps: 4,
        },
        TileConfig {
            block_m: 128,
            block_n: 64,
            stages: 2,
            warps: 8,
        },
        TileConfig {
            block_m: 64,
            block_n: 32,
            stages: 2,
            warps: 4,
        },
        TileConfig {
            block_m: 64,
            block_n: 64,
            stages: 1,
            warps: 4,
        },
    ];
}

impl Default for TileConfig {
    fn default() -> Self {
        TileConfig {
            block_m: 64,
            block_n: 64,
            stages: 2,
            warps: 4,
        }
    }
}

/// A kernel variant: the toggles plus the tile configuration.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(default)]
pub struct Variant {
    pub toggles: Toggles,
    pub tile: TileConfig,
}

impl Variant {
    pub const SCALAR: Variant = Variant {
        toggles: Toggles {
            wmma: false,
            wmma_pv: false,
            cp_async: false,
            fault: false,
        },
        tile: TileConfig {
            block_m: 64,
            block_n: 64,
            stages: 2,
            warps: 4,
        },
    };
    pub const FULL: Variant = Variant {
        toggles: Toggles {
            wmma: true,
            wmma_pv: true,
            cp_async: true,
            fault: false,
        },
        tile: TileConfig {
            block_m: 64,
            block_n: 64,
            stages: 2,
            warps: 4,
        },
    };

    /// The same name everywhere: `scalar`, `wmma`, `wmma+pv`, `wmma+pv+async`,
    /// with `@64x64s2w4` appended when the tile is not the default.
    pub fn name(&self) -> String {
        let t = self.toggles;
        let parts: Vec<&str> = [
            (t.wmma, "wmma"),
            (t.wmma_pv, "pv"),
            (t.cp_async, "async"),
            (t.fault, "fault"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
        let mut name = if parts.is_empty() {
            "scalar".to_string()
        } else {
            parts.join("+")
        };
        if self.tile != TileConfig::default() {
            let c = self.tile;
            name.push_str(&format!(
                "@{}x{}s{}w{}",
                c.block_m, c.block_n, c.stages, c.warps
            ));
        }
        name
    }

    /// All eight toggle combinations with the default tile, scalar first.
    pub fn all_toggles() -> Vec<Variant> {
        (0..8u8)
            .map(|bits| Variant {
                toggles: Toggles {
                    wmma: bits & 1 != 0,
                    wmma_pv: bits & 2 != 0,
                    cp_async: bits & 4 != 0,
                    fault: false,
                },
                tile: TileConfig::default(),
            })
            .collect()
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(default)]
pub struct Shape {
    pub b: u32,
    pub h: u32,
    pub s: u32,
    pub d: u32,
    pub causal: bool,
}

impl Shape {
    /// The mission shape of the seeds: B=2, H=8, S=512, D=64, non-causal.
    pub const MISSION: Shape = Shape {
        b: 2,
        h: 8,
        s: 512,
        d: 64,
        causal: false,
    };

    /// What `s` cycles through in live mode.
    pub const PRESETS: [Shape; 5] = [
        Shape::MISSION,
        Shape {
            b: 2,
            h: 8,
            s: 2048,
            d: 64,
            causal: false,
        },
        Shape {
            b: 1,
            h: 8,
            s: 1024,
            d: 128,
            causal: false,
        },
        Shape {
            b: 4,
            h: 16,
            s: 4096,
            d: 64,
            causal: false,
        },
        Shape {
            b: 1,
            h: 2,
            s: 77,
            d: 64,
            causal: false,
        },
    ];

    /// 4·B·H·S²·D, halved when causal (half the score matrix is skipped).
    pub fn flops(&self) -> f64 {
        let full = 4.0 * self.b as f64 * self.h as f64 * (self.s as f64).powi(2) * self.d as f64;
        if self.causal { full / 2.0 } else { full }
    }

    /// Elements in one of Q, K, V or O.
    pub fn elements(&self) -> usize {
        self.b as usize * self.h as usize * self.s as usize * self.d as usize
    }
}

impl Default for Shape {
    fn default() -> Self {
        Shape::MISSION
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "B{} H{} S{} D{}", self.b, self.h, self.s, self.d)?;
        if self.causal {
            f.write_str(" causal")?;
        }
        Ok(())
    }
}

impl FromStr for Variant {
    type Err = String;

    /// Parses what `name()` prints; the toggles may come in any order and
    /// `wmma_pv`/`cp_async` are accepted as spellings of `pv`/`async`.
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (flags, tile) = match text.split_once('@') {
            Some((f, t)) => (f, Some(t)),
            None => (text, None),
        };
        let mut v = Variant::SCALAR;
        if flags != "scalar" {
            for part in flags.split('+') {
                match part {
                    "wmma" => v.toggles.wmma = true,
                    "pv" | "wmma_pv" => v.toggles.wmma_pv = true,
                    "async" | "cp_async" => v.toggles.cp_async = true,
                    "fault" => v.toggles.fault = true,
                    other => {
                        return Err(format!(
                            "unknown variant '{text}': '{other}' is not a toggle (known: scalar, wmma, pv, async, joined by '+', e.g. wmma+pv+async)"
                        ));
                    }
                }
            }
        }
        if let Some(tile) = tile {
            v.tile = parse_tile(tile).map_err(|e| format!("unknown variant '{text}': {e}"))?;
        }
        Ok(v)
    }
}

/// `64x64s2w4`: BLOCK_M x BLOCK_N, STAGES, warps.
fn parse_tile(text: &str) -> Result<TileConfig, String> {
    let bad =
        || format!("tile '{text}' is not of the form 64x64s2w4 (BLOCK_M x BLOCK_N, stages, warps)");
    let (m, rest) = text.split_once('x').ok_or_else(bad)?;
    let (n, rest) = rest.split_once('s').ok_or_else(bad)?;
    let (s, w) = rest.split_once('w').ok_or_else(bad)?;
    let num = |t: &str| t.parse::<u32>().map_err(|_| bad());
    Ok(TileConfig {
        block_m: num(m)?,
        block_n: num(n)?,
        stages: num(s)?,
        warps: num(w)?,
    })
}

impl FromStr for Shape {
    type Err = String;

    /// `B,H,S,D`, e.g. `2,8,512,64`.
    fn from_str(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.len() != 4 {
            return Err(format!(
                "shape '{text}' must be B,H,S,D (four integers, e.g. 2,8,512,64)"
            ));
        }
        let mut dims = [0u32; 4];
        for (slot, (part, name)) in dims.iter_mut().zip(parts.iter().zip(["B", "H", "S", "D"])) {
            *slot = part.parse().map_err(|_| {
                format!("shape '{text}': {name}='{part}' is not a positive integer")
            })?;
        }
        Ok(Shape {
            b: dims[0],
            h: dims[1],
            s: dims[2],
            d: dims[3],
            causal: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_names_are_stable() {
        let names: Vec<String> = Variant::all_toggles().iter().map(Variant::name).collect();
        assert_eq!(
            names,
            [
                "scalar",
                "wmma",
                "pv",
                "wmma+pv",
                "async",
                "wmma+async",
                "pv+async",
                "wmma+pv+async"
            ]
        );
        let mut v = Variant::FULL;
        v.tile.block_m = 128;
        assert_eq!(v.name(), "wmma+pv+async@128x64s2w4");
    }

    #[test]
    fn mission_flops() {
        assert_eq!(
            Shape::MISSION.flops(),
            4.0 * 2.0 * 8.0 * 512.0 * 512.0 * 64.0
        );
    }

    #[test]
    fn names_parse_back() {
        for v in Variant::all_toggles() {
            assert_eq!(v.name().parse::<Variant>().unwrap(), v);
        }
        let mut v = Variant::FULL;
        v.tile = TileConfig {
            block_m: 128,
            block_n: 32,
            stages: 1,
            warps: 8,
        };
        assert_eq!(v.name().parse::<Variant>().unwrap(), v);
        assert_eq!(
            "async+wmma".parse::<Variant>().unwrap().name(),
            "wmma+async"
        );
        assert!(
            "wmma+fast"
                .parse::<Variant>()
                .unwrap_err()
                .contains("'fast' is not a toggle")
        );
        assert!("wmma@64x64".parse::<Variant>().is_err());
    }

    #[test]
    fn shapes_parse() {
        assert_eq!("2,8,512,64".parse::<Shape>().unwrap(), Shape::MISSION);
        assert!("2,8,512".parse::<Shape>().unwrap_err().contains("B,H,S,D"));
        assert!("2,8,x,64".parse::<Shape>().unwrap_err().contains("S='x'"));
    }
}
