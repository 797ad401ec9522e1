//! Pure computation: histograms and percentiles, gates, the metric catalogue,
//! statistics and the reference attention. No I/O, no CUDA.

pub mod abstats;
pub mod across_runs;
pub mod bias;
pub mod bootstrap;
pub mod busy;
pub mod catalogue;
pub mod cycle;
pub mod format;
pub mod gates;
pub mod histogram;
pub mod kernel_ranges;
pub mod qkv;
pub mod reference;
pub mod resolution;
pub mod roofline;
pub mod settings_file;
pub mod throttle;
