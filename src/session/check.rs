//! What a correctness check found: one result per input distribution, the
//! bounds they were judged by, and which rows were compared. The rules
//! themselves (the arithmetic) are in `metrics/reference.rs`.

use serde::{Deserialize, Serialize};

use super::event::nan_null;
use super::inputs::Inputs;

pub use super::shape::Dtype;

/// The comparison rules, in units of the output format (u: its unit
/// roundoff, 2⁻¹¹ for fp16; ulp(x): the spacing of its values at x):
/// per element |Δ| ≤ atol_ulps·ulp(max |ref| of the row) + rtol_units·u·|ref|,
/// per row ‖Δ‖₂ ≤ row_units·u·‖ref‖₂.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    pub format: Dtype,
    pub atol_ulps: f64,
    pub rtol_units: f64,
    pub row_units: f64,
}

impl Bounds {
    /// The bounds for a format. Rounding the exact output to the format
    /// alone uses at most a quarter of each (|Δ| ≤ u·|ref|); a row 1% off
    /// is 5× over the row bound at fp16.
    pub const fn of(format: Dtype) -> Bounds {
        Bounds {
            format,
            atol_ulps: 4.0,
            rtol_units: 4.0,
            row_units: 4.0,
        }
    }
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
}

impl DistCheck {
    /// The larger of the worst element's and the worst row's ratio to
    /// their bounds: at most 1 passes; its inverse is the margin.
    pub fn worst_ratio(&self) -> f64 {
        self.worst_element.ratio.max(self.worst_row.ratio)
    }
}
