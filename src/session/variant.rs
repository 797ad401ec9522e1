//! What is measured: a kernel variant (toggles + tile) on a problem shape.
//! Names are the same in the CLI, the screen, session files and exports.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The three toggles of the seeds, and the mma.sync path of issue 9.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(default)]
pub struct Toggles {
    pub wmma: bool,
    pub wmma_pv: bool,
    pub cp_async: bool,
    /// Q·Kᵀ and P·V by `mma.sync` + `ldmatrix`, S and P kept in registers;
    /// replaces `wmma` and `wmma_pv` (they cannot be on with it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mma: bool,
    /// Test-only: the kernel also stores out of bounds (`+fault`), to prove
    /// a faulting kernel takes down only the worker process.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fault: bool,
    /// Test-only mutation (`+mutrescale`): O is not multiplied by the
    /// rescale factor when a row's running maximum rises. The oracle must
    /// catch it on inputs whose maxima rise (`--inputs rising`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mut_rescale: bool,
    /// Test-only mutation (`+mutmerge`): a split tile's merge forgets to
    /// rescale the first group's O.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mut_merge: bool,
    /// cuDNN's fused attention instead of attnscope's kernel (`cudnn`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cudnn: bool,
}

impl Toggles {
    /// No toggle on: the scalar kernel.
    pub const NONE: Toggles = Toggles {
        wmma: false,
        wmma_pv: false,
        cp_async: false,
        mma: false,
        fault: false,
        mut_rescale: false,
        mut_merge: false,
        cudnn: false,
    };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(default)]
pub struct TileConfig {
    pub block_m: u32,
    pub block_n: u32,
    pub stages: u32,
    pub warps: u32,
    /// Warp groups that share each K/V tile (mma path only), merged at the end.
    pub split: u32,
    /// The mma path's Q·Kᵀ and P·V by Hopper's `wgmma` (sm_90a), suffix `g`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub wgmma: bool,
}

impl TileConfig {
    /// 64×64, 2 stages, 4 warps: the seeds' tile.
    pub const DEFAULT: TileConfig = TileConfig {
        block_m: 64,
        block_n: 64,
        stages: 2,
        warps: 4,
        split: 1,
        wgmma: false,
    };

    /// What `t` cycles through in live mode; the first is the default.
    pub const PRESETS: [TileConfig; 4] = [
        TileConfig::DEFAULT,
        TileConfig {
            block_m: 128,
            warps: 8,
            ..TileConfig::DEFAULT
        },
        TileConfig {
            block_n: 32,
            ..TileConfig::DEFAULT
        },
        TileConfig {
            stages: 1,
            ..TileConfig::DEFAULT
        },
    ];

    /// Tiles the mma path is tuned over (`attnscope tune`): 16 or 32 query
    /// rows per warp, K/V split over 1, 2 or 4 warp groups, 2 stages or 3
    /// (software-pipelined: Q·Kᵀ of the next tile overlaps this softmax),
    /// and on Hopper the wgmma tiles (`g`, see `presets_for`).
    pub const MMA_CANDIDATES: [&'static str; 20] = [
        "64x64s2w4",
        "64x64s3w4",
        "64x128s2w4",
        "64x64s2w8k2",
        "64x64s3w8k2",
        "64x32s3w8k2",
        "64x128s3w8k2",
        "64x32s2w16k4",
        "32x64s2w4k2",
        "128x64s2w4",
        "128x64s2w8",
        "128x64s3w8",
        "128x64s2w8k2",
        "64x64s2w4g",
        "64x64s3w4g",
        "64x128s2w4g",
        "64x64s2w8k2g",
        "64x64s3w8k2g",
        "64x128s2w8k2g",
        "64x64s2w16k4g",
    ];

    /// What `t` cycles through for a path: the presets, or for the mma path
    /// every tuning candidate, the wgmma ones only when the GPU has wgmma.
    pub fn presets_for(toggles: Toggles, wgmma: bool) -> Vec<TileConfig> {
        if toggles.mma {
            Self::MMA_CANDIDATES
                .iter()
                .map(|t| parse_tile(t).expect("candidate tiles parse (tested)"))
                .filter(|t| wgmma || !t.wgmma)
                .collect()
        } else {
            Self::PRESETS.to_vec()
        }
    }

    /// `64x64s2w4` and friends, as in a variant name after `@`.
    pub fn parse(text: &str) -> Result<TileConfig, String> {
        parse_tile(text)
    }

    /// What `parse` reads: `64x64s2w4`, with `kN` when the split is not 1
    /// and `g` for wgmma.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{}x{}s{}w{}",
            self.block_m, self.block_n, self.stages, self.warps
        );
        if self.split != 1 {
            s.push_str(&format!("k{}", self.split));
        }
        if self.wgmma {
            s.push('g');
        }
        s
    }
}

impl Default for TileConfig {
    fn default() -> Self {
        TileConfig::DEFAULT
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
        toggles: Toggles::NONE,
        tile: TileConfig::DEFAULT,
    };
    pub const FULL: Variant = Variant {
        toggles: Toggles {
            wmma: true,
            wmma_pv: true,
            cp_async: true,
            ..Toggles::NONE
        },
        tile: TileConfig::DEFAULT,
    };
    /// cuDNN's fused scaled-dot-product attention, the vendor baseline.
    pub const CUDNN: Variant = Variant {
        toggles: Toggles {
            cudnn: true,
            ..Toggles::NONE
        },
        tile: TileConfig::DEFAULT,
    };

    /// The same name everywhere: `scalar`, `wmma`, `wmma+pv`, `wmma+pv+async`,
    /// with `@64x64s2w4` appended when the tile is not the default.
    pub fn name(&self) -> String {
        let t = self.toggles;
        let parts: Vec<&str> = [
            (t.wmma, "wmma"),
            (t.wmma_pv, "pv"),
            (t.mma, "mma"),
            (t.cp_async, "async"),
            (t.fault, "fault"),
            (t.mut_rescale, "mutrescale"),
            (t.mut_merge, "mutmerge"),
            (t.cudnn, "cudnn"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
        // Test-only toggles ride on a path: `scalar+mutrescale`, not `mutrescale`.
        let path_on = t.wmma || t.wmma_pv || t.mma || t.cp_async || t.cudnn;
        let mut name = match (parts.is_empty(), path_on) {
            (true, _) => "scalar".to_string(),
            (false, true) => parts.join("+"),
            (false, false) => format!("scalar+{}", parts.join("+")),
        };
        if self.tile != TileConfig::default() {
            name.push('@');
            name.push_str(&self.tile.text());
        }
        name
    }

    /// Whether the kernel source accepts this combination (its static_asserts,
    /// said here first so the CLI and the screen can name the rule).
    pub fn check(&self) -> Result<(), String> {
        let t = self.toggles;
        let c = self.tile;
        if t.cudnn {
            if t != Variant::CUDNN.toggles || c != TileConfig::DEFAULT {
                return Err("cudnn is cuDNN's own kernel: it takes no toggles and no tile".into());
            }
            return Ok(());
        }
        if t.mut_merge && c.split == 1 {
            return Err("mutmerge breaks the merge of a split tile: give a tile with kN".into());
        }
        if t.mma && (t.wmma || t.wmma_pv) {
            return Err("mma replaces wmma and pv: use mma or mma+async, not both paths".into());
        }
        if !matches!(c.block_n, 32 | 64 | 96 | 128) {
            return Err(format!(
                "BLOCK_N={} is not supported: 32, 64, 96 or 128",
                c.block_n
            ));
        }
        if !matches!(c.stages, 1..=3) {
            return Err(format!("stages={} is not supported: 1, 2 or 3", c.stages));
        }
        if c.block_m == 0 || !c.block_m.is_multiple_of(16) || c.block_m > 256 {
            return Err(format!(
                "BLOCK_M={} is not supported: a multiple of 16 up to 256",
                c.block_m
            ));
        }
        if c.split == 0 || c.warps == 0 || c.warps * 32 > 1024 {
            return Err(format!(
                "{} warps split {} ways is not a launchable block (1 to 32 warps, split ≥ 1)",
                c.warps, c.split
            ));
        }
        if t.mma {
            let rows = c.block_m * c.split / c.warps;
            if !c.warps.is_multiple_of(c.split)
                || rows * c.warps != c.block_m * c.split
                || !matches!(rows, 16 | 32)
            {
                return Err(format!(
                    "the mma path gives each warp 16 or 32 query rows: BLOCK_M×split÷warps = {}×{}÷{} does not",
                    c.block_m, c.split, c.warps
                ));
            }
            if c.wgmma && c.block_n == 96 {
                return Err("wgmma tiles take BLOCK_N 32, 64 or 128".into());
            }
            if c.wgmma && (rows != 16 || !(c.warps / c.split).is_multiple_of(4)) {
                return Err(format!(
                    "wgmma tiles give each warpgroup (4 warps × 16 rows) 64 query rows: {} needs 16 rows per warp and warps÷split a multiple of 4",
                    c.text()
                ));
            }
        } else if c.wgmma {
            return Err("g (wgmma) is a tile option of the mma path: use mma or mma+async".into());
        } else {
            if c.split != 1 {
                return Err(
                    "only the mma path splits K/V tiles over warps (k1 for the others)".into(),
                );
            }
            if c.warps * 16 != c.block_m {
                return Err(format!(
                    "each warp owns 16 query rows: warps must be BLOCK_M÷16 = {}, not {}",
                    c.block_m / 16,
                    c.warps
                ));
            }
        }
        Ok(())
    }

    /// Dynamic shared memory per block at head dimension `d`, in bytes: the
    /// kernel's SMEM_BYTES, written out here so a tile the GPU cannot launch
    /// is known before it is built (`kernel_builds.rs` checks every variant
    /// against the value compiled into its cubin). 0 for cudnn.
    pub fn smem_bytes(&self, d: u32) -> u32 {
        let t = self.toggles;
        let c = self.tile;
        if t.cudnn {
            return 0;
        }
        let align = |x: u32, a: u32| x.div_ceil(a) * a;
        let ldh = d + 8;
        let kv_rows = c.block_n * c.split;
        let kv_stages = if t.cp_async { c.stages } else { 1 };
        let (sq, skv, slack) = if c.wgmma {
            (
                align(c.block_m * ldh * 2, 1024),
                align(kv_stages * kv_rows * d * 2, 1024),
                1024,
            )
        } else {
            (
                align(c.block_m * ldh * 2, 128),
                align(kv_stages * kv_rows * ldh * 2, 128),
                0,
            )
        };
        if t.mma {
            let rows_per_warp = c.block_m * c.split / c.warps;
            let merge_regs = rows_per_warp / 16 * (d / 8 * 4 + 4);
            let merge = (c.split - 1) * (c.warps / c.split) * 32 * merge_regs * 4;
            return (sq + 2 * skv).max(merge) + slack;
        }
        let ss = align(c.block_m * (c.block_n + 4) * 4, 128);
        let (sp, so) = if t.wmma_pv {
            (
                align(c.block_m * (c.block_n + 8) * 2, 128),
                align(c.block_m * (d + 4) * 4, 128),
            )
        } else {
            (0, 0)
        };
        sq + 2 * skv + ss + sp + so
    }

    /// This variant with another tile (`64x64s2w8k2`); panics on a bad tile,
    /// so only for tiles written in the source.
    pub fn with_tile(self, tile: &str) -> Variant {
        Variant {
            tile: TileConfig::parse(tile).expect("a valid tile literal"),
            ..self
        }
    }

    /// All eight toggle combinations with the default tile, scalar first.
    pub fn all_toggles() -> Vec<Variant> {
        (0..8u8)
            .map(|bits| Variant {
                toggles: Toggles {
                    wmma: bits & 1 != 0,
                    wmma_pv: bits & 2 != 0,
                    cp_async: bits & 4 != 0,
                    ..Toggles::NONE
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

/// CUDA's limit on a grid's y and z dimensions.
pub const MAX_GRID_YZ: u32 = 65_535;

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

    /// The shapes the kernels support: 1 ≤ B, H ≤ 65535 (the launch puts
    /// heads in grid y and batches in grid z, 65535 each); 1 ≤ S ≤ 2²⁰;
    /// D ∈ {64, 128}; Q, K, V and O together under 1 TiB (the GPU's free
    /// memory is checked when inputs are made). The CLI and the worker both
    /// check with this, so a shape one accepts the other launches.
    pub fn validate(&self) -> Result<(), String> {
        let Shape { b, h, s, d, .. } = *self;
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
        if s == 0 || s > 1 << 20 {
            return Err(format!("S={s} is out of range: 1 ≤ S ≤ 1048576"));
        }
        if d != 64 && d != 128 {
            return Err(format!("D={d} is not supported: D must be 64 or 128"));
        }
        let bytes = 4 * self.elements() as u128 * 2;
        if bytes > 1 << 40 {
            return Err(format!(
                "B·H·S·D = {} elements needs {bytes} bytes for Q, K, V, O: too large",
                self.elements()
            ));
        }
        Ok(())
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
                    "scalar" if flags.starts_with("scalar+") => {}
                    "wmma" => v.toggles.wmma = true,
                    "pv" | "wmma_pv" => v.toggles.wmma_pv = true,
                    "async" | "cp_async" => v.toggles.cp_async = true,
                    "mma" => v.toggles.mma = true,
                    "fault" => v.toggles.fault = true,
                    "mutrescale" => v.toggles.mut_rescale = true,
                    "mutmerge" => v.toggles.mut_merge = true,
                    "cudnn" => v.toggles.cudnn = true,
                    other => {
                        return Err(format!(
                            "unknown variant '{text}': '{other}' is not a toggle (known: scalar, wmma, pv, async, mma, joined by '+', e.g. wmma+pv+async or mma+async; or cudnn)"
                        ));
                    }
                }
            }
        }
        if let Some(tile) = tile {
            v.tile = parse_tile(tile).map_err(|e| format!("unknown variant '{text}': {e}"))?;
        }
        v.check().map_err(|e| format!("variant '{text}': {e}"))?;
        Ok(v)
    }
}

/// `64x64s2w4`, `64x64s2w8k2` or `64x64s2w4g`: BLOCK_M x BLOCK_N, STAGES,
/// warps, the K/V split (1 when left out) and `g` for wgmma.
fn parse_tile(text: &str) -> Result<TileConfig, String> {
    let bad = || {
        format!(
            "tile '{text}' is not of the form 64x64s2w4 (BLOCK_M x BLOCK_N, stages, warps; optional kN: K/V split over N warp groups; optional g: wgmma)"
        )
    };
    let (text_no_g, wgmma) = match text.strip_suffix('g') {
        Some(rest) => (rest, true),
        None => (text, false),
    };
    let (m, rest) = text_no_g.split_once('x').ok_or_else(bad)?;
    let (n, rest) = rest.split_once('s').ok_or_else(bad)?;
    let (s, rest) = rest.split_once('w').ok_or_else(bad)?;
    let (w, k) = rest.split_once('k').unwrap_or((rest, "1"));
    let num = |t: &str| t.parse::<u32>().map_err(|_| bad());
    Ok(TileConfig {
        block_m: num(m)?,
        block_n: num(n)?,
        stages: num(s)?,
        warps: num(w)?,
        split: num(k)?,
        wgmma,
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
    fn mma_variants_name_and_check() {
        let v: Variant = "mma+async@64x64s2w8k2".parse().unwrap();
        assert!(v.toggles.mma && v.toggles.cp_async && !v.toggles.wmma);
        assert_eq!(v.tile.split, 2);
        assert_eq!(v.name(), "mma+async@64x64s2w8k2");
        assert_eq!("async+mma".parse::<Variant>().unwrap().name(), "mma+async");
        assert_eq!(
            "mma+async@128x64s2w4"
                .parse::<Variant>()
                .unwrap()
                .tile
                .warps,
            4
        );
        let err = |t: &str| t.parse::<Variant>().unwrap_err();
        assert!(err("mma+wmma").contains("mma replaces wmma and pv"));
        assert!(err("mma@64x64s2w1").contains("16 or 32 query rows"));
        assert!(err("wmma@64x64s2w8k2").contains("only the mma path splits"));
        assert!(err("wmma@64x64s2w8").contains("warps must be BLOCK_M÷16 = 4"));
        assert!(err("scalar@64x48s2w4").contains("BLOCK_N=48"));
        assert!(err("mma@64x64s4w4").contains("stages=4"));
        assert!(err("mma@64x64s2w4k0").contains("split"));
        assert!(err("mma+async@64x64s2w4c2").contains("not of the form"));
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
            split: 1,
            wgmma: false,
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
