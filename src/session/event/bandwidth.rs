//! The memory roof a session records in its header.

use serde::{Deserialize, Serialize};

/// What kernels/copy_bw.cu measured: one buffer many times the L2 copied
/// into another, `launches` times back to back, each timed by CUDA events.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyBandwidth {
    /// Bytes read plus bytes written per second at the median launch.
    pub bytes_per_s: f64,
    /// Bytes one copy reads plus writes.
    pub bytes: u64,
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub launches: u32,
    /// Bytes per second of the same buffer only read (`read_bw`), and its
    /// median launch: reads alone stream faster than a copy's mix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_median_ns: Option<f64>,
}

impl CopyBandwidth {
    /// The memory roof: the faster of the copy and the read-only stream, so
    /// no kernel's bytes per second pass it by reading more than it writes.
    pub fn roof(&self) -> f64 {
        self.read_bytes_per_s
            .map_or(self.bytes_per_s, |r| r.max(self.bytes_per_s))
    }
}
