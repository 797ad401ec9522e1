//! Where each session of a merged one came from.

use serde::{Deserialize, Serialize};

use super::{CopyBandwidth, GpuInfo};

/// One session of a merged one: where it ran, under which label.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    pub label: String,
    /// The file it came from.
    pub file: String,
    pub host: String,
    pub gpu: Option<GpuInfo>,
    pub started_unix_ms: u64,
    pub nvidia_driver: Option<String>,
    pub timer: Option<String>,
    pub timer_resolution_ns: Option<f64>,
    pub command_line: Vec<String>,
    /// The primary kernel's source hash there (the same variant name on
    /// another source may be other code).
    pub kernel_source_hash: Option<String>,
    /// That GPU's copy bandwidth (added after schema 3; may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_bandwidth: Option<CopyBandwidth>,
}
