mod ckps;
pub use ckps::{BindKeyPointMethod, BindKeyPoints, WithKeyPointMethod, WithKeyPoints};

mod group_by;
pub use group_by::{GroupBy, ToGroupByRange};

mod linspace;
pub use linspace::{IntoLinspace, Linspace};

mod logarithmic;
pub use logarithmic::{IntoLogRange, LogCoord, LogScalable};

#[allow(deprecated)]
pub use logarithmic::LogRange;

mod nested;
pub use nested::{BuildNestedCoord, NestedRange, NestedValue};

mod partial_axis;
pub use partial_axis::{make_partial_axis, IntoPartialAxis};
