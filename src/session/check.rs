//! What a correctness check found: one result per input distribution, the
//! bounds they were judged by, and which rows were compared. The rules
//! themselves (the arithmetic) are in `metrics/reference.rs`.

use serde::{Deserialize, Serialize};

use super::event::nan_null;
use super::inputs::Inputs;

pub use super::shape::Dtype;

/// The comparison rules, in units of the output format (u: its unit
/// roundoff, 2⁻¹¹ for fp16; ulp(x): the spacing of its values at x), plus
/// `accumulation` (a: a relative error that rounding in fp32 sums over the
/// problem's keys explains):
/// per element |Δ| ≤ atol_ulps·ulp(m) + a·m + rtol_units·u·|ref| (m: max |ref| of the row),
/// per row ‖Δ‖₂ ≤ (row_units·u + a)·‖ref‖₂,
/// and the pooled means of systematic error at least a (and a tenth of u).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    pub format: Dtype,
    pub atol_ulps: f64,
    pub rtol_units: f64,
    pub row_units: f64,
    /// 0 in sessions from before it.
    #[serde(default)]
    pub accumulation: f64,
}

impl Bounds {
    /// The bounds for a format. Rounding the exact output to the format
    /// alone uses at most a quarter of the element bound (|Δ| ≤ u·|ref|).
    /// The row bound is 2u in both formats, set from the calibration's row
    /// errors (correct implementations' worst rows below 1u, `selftest
    /// --calibrate`, docs/measurement.md): a row 1% off is 10× over it in
    /// fp16 and 1.3× in bf16.
    pub const fn of(format: Dtype) -> Bounds {
        Bounds {
            format,
            atol_ulps: 4.0,
            rtol_units: 4.0,
            row_units: 2.0,
            accumulation: 0.0,
        }
    }

    /// The bounds at a shape: the format's, and what accumulating P·V over
    /// its keys in fp32 explains (`accumulation_allowance`).
    pub fn at(shape: &super::Shape) -> Bounds {
        Bounds {
            accumulation: accumulation_allowance(shape.kv_len),
            ..Bounds::of(shape.dtype)
        }
    }
}

/// The relative error an fp32 accumulation over `keys` keys may carry one
/// way: tensor cores add each instruction's products to the accumulator
/// rounding toward zero (Fasi, Higham, Mikaitis and Pranesh, "Numerical
/// behavior of NVIDIA tensor cores", 2021), so a row that runs its keys
/// through one accumulator k at a time loses up to 2⁻²³ of it keys/k times,
/// all the same way. With k = 8 (the smallest key step of an fp16 or bf16
/// MMA): keys·2⁻²⁶, 0.2% at 135,168 keys. On an H200 (run177) cuDNN, SDPA's
/// efficient backend and our unsplit tiles read 0.03–0.11% low there, every
/// row alike, where split-KV kernels (SDPA flash, the d tiles) and the f64
/// path stay exact; 0.006% at 4,096 keys is below what the pooled test
/// resolves anyway.
pub fn accumulation_allowance(keys: u32) -> f64 {
    f64::from(keys) * (2.0f64).powi(-26)
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds::of(Dtype::F16)
    }
}

/// Where a check came closest to (or went furthest past) a bound: the ratio
/// of the error to the bound there (above 1 fails), the head (b·H + h),
/// row and column (none for a row's L2), and the two values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Worst {
    #[serde(deserialize_with = "nan_null::de")]
    pub ratio: f64,
    pub head: u64,
    pub row: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub col: Option<u64>,
    /// The kernel's value and the reference's (an element), or ‖Δ‖₂ and
    /// ‖ref‖₂ (a row).
    #[serde(deserialize_with = "nan_null::de")]
    pub got: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub want: f64,
}

/// One distribution's check: its inputs and seed, the verdict and the
/// numbers behind it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DistCheck {
    pub inputs: Inputs,
    pub seed: u64,
    pub pass: bool,
    /// max(1, max |V|).
    #[serde(deserialize_with = "nan_null::de")]
    pub value_scale: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub max_abs_err: f64,
    /// ‖Δ‖₂ / ‖ref‖₂ over every compared element (shown, not judged).
    #[serde(deserialize_with = "nan_null::de")]
    pub rel_l2_err: f64,
    pub worst_element: Worst,
    pub worst_row: Worst,
    pub nan_count: u64,
    /// ±Inf anywhere in O.
    pub inf_count: u64,
    pub unwritten: u64,
    /// Elements not compared that lie outside their column's range in V
    /// (an output is a convex combination of V's rows).
    pub out_of_range: u64,
    /// The pooled test for systematic error (`metrics/bias.rs`); none in
    /// sessions from before it, and for inputs whose rows are one unit
    /// (ties).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bias: Option<BiasCheck>,
}

/// Which rows (or elements) a pooled mean runs over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    /// Every compared row.
    #[default]
    All,
    /// One head (b·H + h).
    Head,
    /// Every head of one batch.
    Batch,
    /// One 64-row tile of queries, in every head.
    QueryTile,
    /// The rows that see the same number of 64-key tiles (causal).
    KeyTiles,
    /// One column of O, over every compared row.
    Column,
}

impl Region {
    /// "head 3", "column 0", "every row", as a sentence says it.
    pub fn name(self, index: u64) -> String {
        match self {
            Region::All => "every row".into(),
            Region::Head => format!("head {index}"),
            Region::Batch => format!("batch {index}"),
            Region::QueryTile => format!("query rows {}-{}", index * 64, index * 64 + 63),
            Region::KeyTiles => format!("rows seeing {} key tiles", index + 1),
            Region::Column => format!("column {index}"),
        }
    }
}

/// What a pooled mean measures: a shift (Δ ÷ the row's scale, averaged) or
/// a scale (Δ projected on the reference: O read (1 + x) times too large).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stat {
    #[default]
    Shift,
    Scale,
}

/// The pooled mean furthest from what rounding explains.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BiasWorst {
    pub region: Region,
    pub index: u64,
    pub stat: Stat,
    /// The mean, relative to the rows' scale (0.0005 reads 0.05%).
    #[serde(deserialize_with = "nan_null::de")]
    pub value: f64,
    /// Its standard errors from zero, and the most rounding explains there.
    #[serde(deserialize_with = "nan_null::de")]
    pub t: f64,
    #[serde(deserialize_with = "nan_null::de")]
    pub threshold: f64,
    /// The smallest |mean| that can fail (relative), whatever t says.
    #[serde(deserialize_with = "nan_null::de")]
    pub floor: f64,
    /// Rows (or elements) the mean ran over.
    pub units: u64,
}

impl BiasWorst {
    /// How near the mean is to failing: the smaller of |t| over its
    /// threshold and |mean| over the floor (a mean fails past both, so
    /// above 1 fails).
    pub fn ratio(&self) -> f64 {
        let by_t = self.t.abs() / self.threshold;
        if self.floor > 0.0 {
            by_t.min(self.value.abs() / self.floor)
        } else {
            by_t
        }
    }
}

/// The smallest shift planted into a region's rows that the check caught.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limit {
    pub region: Region,
    /// Relative to each row's scale (its RMS); none when 1% went uncaught.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rel: Option<f64>,
}

/// The pooled test's verdict: every mean of the signed error over rows,
/// heads, batches, tiles and columns within what rounding explains.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BiasCheck {
    pub pass: bool,
    /// Means tested (the Bonferroni family).
    pub tests: u64,
    /// The worst mean, failing or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<BiasWorst>,
    /// Measured detection limits (the first distribution of a check only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<Limit>,
}

impl DistCheck {
    /// The larger of the worst element's and the worst row's ratio to
    /// their bounds: at most 1 passes; its inverse is the margin.
    pub fn worst_ratio(&self) -> f64 {
        self.worst_element.ratio.max(self.worst_row.ratio)
    }
}
