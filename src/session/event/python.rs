//! What a Python variant ran (`py:…`): recorded with its build, so a
//! session says which code and which library versions its numbers came from.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PythonBuild {
    /// The file the function was defined in.
    pub file: String,
    /// sha256 of the function's source (else of its file).
    pub source_hash: String,
    pub python: String,
    pub torch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triton: Option<String>,
    /// Kernels one call launched when it was counted.
    pub kernels_per_call: usize,
}
